"""One run of the engine over its inputs: sources → regions (phase 1) → records → events →
matches, facts and unknown errors, then the diagnosed `Report`. Below the library API
(`triage.analyze`), the `--jobs` workers and the authoring tools, which all read through it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.cut import cut_match
from analyzer.data import builtin_patterns
from analyzer.diagnose import diagnose, number
from analyzer.events import build_events
from analyzer.facts import extract_facts
from analyzer.library.compile import CompiledLibrary, compile_library
from analyzer.library.load import load_library
from analyzer.library.rules import check_references, load_rulebook
from analyzer.match import match_events
from analyzer.models import Event, Fact, InputSummary, Match, Report
from analyzer.readers import parse_lines
from analyzer.readers.source import Source
from analyzer.regions import RegionBuilder
from analyzer.scan import EngineFactory
from analyzer.unrecognised import Collector, error_line, names_a_cause, place, unrecognised


def load(extra_dirs: Sequence[Path] = (), engine_factory: EngineFactory | None = None,
         builtin: bool = True) -> CompiledLibrary:
    roots = ([builtin_patterns()] if builtin else []) + list(extra_dirs)
    rulebook = load_rulebook(builtin_patterns()) if builtin else None
    library = load_library(roots)
    if rulebook is not None:
        check_references(rulebook, {pf.head.id: pf.head.conditions for pf in library.files},
                         builtin_patterns())
    return compile_library(library, engine_factory, rulebook)


CUT_TAIL = 2  # lines after the last event that may still end a paste (a blank line, a closing fence)

# (input name, bytes read, bytes in all or None when unknown, patterns found so far)
Progress = Callable[[str, int, int | None, int], None]


@dataclass
class Run:
    library: CompiledLibrary
    knowledge: bool = False  # consult the knowledge base: related postmortems, suggestions
    index: Path | None = None
    collector: Collector = field(default_factory=Collector)
    matches: list[Match] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    inputs: list[InputSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    progress: Progress | None = None
    own: range | None = None  # keep only what starts on these lines (a worker's share of a file)
    plain: int = 0  # records near matches that did not parse in their input's form
    found: set[str] = field(default_factory=set)  # failure patterns matched so far, for progress
    ends: bool = True  # the source ends the input, so its last line may be a paste cut short (analyzer.cut)

    def read(self, source: Source, summarise: bool = True) -> None:
        builder = RegionBuilder(self.library.engine(source.form), self.library.triggers)
        plain = 0
        last: Event | None = None  # the input's last event, and whether a pattern took it
        last_taken = False
        for region in builder.regions(self._chunks(source), source.first_line):
            records = parse_lines(region.lines, source.form, region.first_line, source.name)
            events = build_events(records)
            if self.own is not None:  # the slice's margins are read for context, reported by a neighbour
                records = [r for r in records if r.line in self.own]
                events = [e for e in events if e.first_line in self.own]
            plain += sum(r.plain for r in records)
            matched = list(match_events(events, region.hits, self.library.patterns, self.warnings))
            self.matches.extend(matched)
            self.found.update(m.pattern_id for m in matched if not self.library.is_signal(m.pattern_id))
            taken = {(r.path, r.line) for m in matched if not self.library.patterns[m.pattern_id].head.keeps_message
                     for r in m.records}
            self.collector.add(events, taken)
            if events:
                last = events[-1]
                last_taken = any((r.path, r.line) in taken for r in last.records)
            book = self.library.rulebook
            self.facts.extend(extract_facts(events, region.hits, book.facts, self.library.fact_regexes))
        self._tick(source)  # the last region is read after the last chunk
        if self.ends and last is not None and not last_taken \
                and last.last_line >= source.first_line + builder.lines - 1 - CUT_TAIL:
            self._cut(last)
        self.plain += plain
        if summarise:
            summary = InputSummary(path=source.name, format=source.form, lines=builder.lines,
                                   bytes=source.bytes_read, undecodable=source.undecodable, plain=plain)
            self.inputs.append(summary)
            self.note_unreadable(summary)

    def _cut(self, event: Event) -> None:
        """The input ends in an error no pattern took: a paste cut mid-line (analyzer.cut)?"""
        if error_line(event) is None or (m := cut_match(event, self.library.patterns)) is None:
            return
        self.matches.append(m)
        if not self.library.is_signal(m.pattern_id):
            self.found.add(m.pattern_id)
        self.collector.forget(event)

    def note_unreadable(self, s: InputSummary) -> None:
        if s.undecodable:
            self.warnings.append(f"{s.path}: {s.undecodable} line(s) are not valid UTF-8; "
                                 "they were read with replacement characters")
        if s.plain:
            self.warnings.append(f"{s.path}: {s.plain} line(s) near matches are not {s.format} "
                                 "entries (cut or mixed in); they were read as plain text")

    def _chunks(self, source: Source) -> Iterator[bytes]:
        for chunk in source.chunks():
            yield chunk  # the consumer asks for the next chunk once this one's regions are read
            self._tick(source)

    def _tick(self, source: Source) -> None:
        if self.progress is not None:  # per chunk: a count kept as matches come, not recomputed from all
            self.progress(source.name, source.bytes_read, source.size, len(self.found))

    def absorb(self, other: Run) -> None:
        """Take in what another run read (one input, in a `--jobs` worker)."""
        self.matches.extend(other.matches)
        self.found.update(m.pattern_id for m in other.matches if not self.library.is_signal(m.pattern_id))
        self.facts.extend(other.facts)
        self.inputs.extend(other.inputs)
        self.warnings.extend(other.warnings)
        self.collector.merge(other.collector)

    def report(self) -> Report:
        d = diagnose(self.matches, self.facts, self.library)
        explained = any(names_a_cause(f) for f in d.findings)
        findings = number(place(d.findings, unrecognised(self.collector, self.library.rulebook.emitters, explained)))
        if self.knowledge:
            from analyzer.kb.enrich import enrich

            findings = enrich(findings, self.index, self.warnings)
        return Report(inputs=self.inputs, findings=findings, facts=d.facts, timeline=d.timeline,
                      warnings=self.warnings)


def read_one(library: CompiledLibrary, source: Source) -> Run:
    """The run of `library` over one source: its matches and facts, its report on demand (the
    fixture runner, the linters and the statistics each read one log at a time)."""
    run = Run(library)
    run.read(source)
    return run
