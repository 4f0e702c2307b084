"""Everything the pages need, gathered once: the patterns with their fixture examples and
stats, the postmortems, the links between them, areas, tags and severities."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.authoring.pattern_stats import PatternStats, pattern_stats
from analyzer.choices import Severity
from analyzer.kb.postmortems import Postmortem, load_kb
from analyzer.library.compile import compile_library
from analyzer.library.fixture_file import fixture_of
from analyzer.library.load import Library, PatternFile, load_library
from analyzer.library.schema import Pattern
from analyzer.site.html import slug
from analyzer.site.related import RelatedLinks

SEVERITIES = [Severity.critical, Severity.high, Severity.medium, Severity.low, Severity.info]


@dataclass(frozen=True, slots=True)
class Example:
    """An annotated fixture line: `expect` is match, ok, todo-match or todo-ok."""

    expect: str
    text: str
    line: int  # in the fixture file
    captures: dict[str, str]
    spans: tuple[tuple[int, int], ...]  # what the pattern's expressions match, to highlight


@dataclass(frozen=True, slots=True)
class PatternEntry:
    file: PatternFile
    source: str  # the pattern file, as a reader of the repository names it
    examples: tuple[Example, ...]
    stats: PatternStats | None

    @property
    def pattern(self) -> Pattern:
        return self.file.pattern

    @property
    def fixture_source(self) -> str:
        return self.source.removesuffix(".yaml") + ".log"


@dataclass(frozen=True, slots=True)
class Tag:
    slug: str
    name: str
    patterns: tuple[str, ...]
    postmortems: tuple[str, ...]


@dataclass(frozen=True)
class Content:
    patterns: tuple[PatternEntry, ...]
    postmortems: tuple[Postmortem, ...]  # newest first
    related: RelatedLinks
    kb_root: Path
    _by_pattern: dict[str, PatternEntry] = field(default_factory=dict, repr=False)
    _by_postmortem: dict[str, Postmortem] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_pattern.update({e.pattern.id: e for e in self.patterns})
        self._by_postmortem.update({p.id: p for p in self.postmortems})

    def pattern(self, pattern_id: str) -> PatternEntry | None:
        return self._by_pattern.get(pattern_id)

    def postmortem(self, postmortem_id: str) -> Postmortem | None:
        return self._by_postmortem.get(postmortem_id)

    def postmortem_source(self, pm: Postmortem) -> str:
        return _display(pm.path, self.kb_root)

    def linked_postmortems(self, pattern_id: str) -> list[Postmortem]:
        """Postmortems linked either way: the pattern names them, or they name the pattern."""
        entry = self.pattern(pattern_id)
        named = set(entry.pattern.postmortems) if entry else set()
        return [pm for pm in self.postmortems if pm.id in named or pattern_id in pm.front.patterns]

    def linked_patterns(self, pm: Postmortem) -> list[PatternEntry]:
        found = [e for e in (self.pattern(p) for p in pm.front.patterns) if e is not None]
        found += [e for e in self.patterns if pm.id in e.pattern.postmortems and e not in found]
        return found

    def areas(self) -> dict[str, list[PatternEntry]]:
        out: dict[str, list[PatternEntry]] = {}
        for e in sorted(self.patterns, key=lambda e: (e.pattern.area, -e.pattern.severity.rank, e.pattern.id)):
            out.setdefault(e.pattern.area, []).append(e)
        return out

    def tags(self) -> list[Tag]:
        names: dict[str, str] = {}
        pats: dict[str, list[str]] = {}
        pms: dict[str, list[str]] = {}
        for e in self.patterns:
            for t in dict.fromkeys(e.pattern.tags):
                names.setdefault(slug(t), t)
                pats.setdefault(slug(t), []).append(e.pattern.id)
        for pm in self.postmortems:
            for t in dict.fromkeys(pm.front.tags):
                names.setdefault(slug(t), t)
                pms.setdefault(slug(t), []).append(pm.id)
        return [Tag(s, names[s], tuple(dict.fromkeys(pats.get(s, []))), tuple(dict.fromkeys(pms.get(s, []))))
                for s in sorted(names)]


def _display(path: Path, root: Path) -> str:
    """`patterns/toolchain/x.yaml`: the path from the data folder's parent, as the repo names it."""
    try:
        return path.resolve().relative_to(root.resolve().parent).as_posix()
    except ValueError:
        return path.name


def _spans(pattern: Pattern, text: str) -> tuple[tuple[int, int], ...]:
    import regex

    flags = regex.IGNORECASE if pattern.match.ignorecase else 0
    spans: list[tuple[int, int]] = []
    for expr in pattern.match.expressions:
        try:
            m = regex.search(expr.regex, text, flags, timeout=0.2)
        except (regex.error, TimeoutError):
            continue
        if m is not None and m.end() > m.start():
            spans.append((m.start(), m.end()))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


def examples(pf: PatternFile) -> tuple[Example, ...]:
    if not pf.fixture.exists():
        return ()
    fixture = fixture_of(pf)
    return tuple(Example(a.expect.value, a.text, a.fixture_line, dict(a.captures),
                         _spans(pf.pattern, a.text) if a.expect.value in ("match", "todo-match") else ())
                 for a in fixture.annotations)


def gather(pattern_roots: Sequence[Path], kb_root: Path, related: RelatedLinks, corpus: Sequence[Path] = (),
           benign: Sequence[Path] = ()) -> Content:
    """Load and check everything once; pattern stats run the library over `corpus` and `benign`."""
    library: Library = load_library(pattern_roots)
    stats = {s.id: s for s in pattern_stats(library, compile_library(library), corpus, benign)}
    roots = [r.resolve() for r in pattern_roots]
    entries = []
    for pf in library.files:
        root = next((r for r in roots if pf.path.resolve().is_relative_to(r)), pf.path.parent)
        entries.append(PatternEntry(pf, _display(pf.path, root), examples(pf), stats.get(pf.pattern.id)))
    entries.sort(key=lambda e: (e.pattern.area, e.pattern.id))
    pms = sorted(load_kb(kb_root), key=lambda p: (p.front.date, p.id), reverse=True)
    return Content(tuple(entries), tuple(pms), related, kb_root)
