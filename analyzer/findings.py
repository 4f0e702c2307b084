"""Matches → findings: identical findings (the same pattern on every rank, worker and
restart) collapse into one with a count, its first occurrences as evidence, and the
captured values. Ranking and explanation happen in analyzer.diagnose."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.library.compile import CompiledPattern
from analyzer.library.schema import PLACEHOLDER
from analyzer.models import Evidence, Finding, Match, whole_line

MAX_EVIDENCE = 6
CUT_NOTE = ("The log's last line is cut short; as far as it goes it reads as this message, so the "
            "rest of the line may say otherwise.")

if TYPE_CHECKING:
    from analyzer.library.rules import Phase


@dataclass
class _Group:
    pattern: CompiledPattern
    matches: list[Match] = field(default_factory=list)


def fill(template: str, captures: Mapping[str, str], drop: bool = False) -> str:
    """Put captured values into `{name}` or `{name|default}` slots; other text, braces
    included, stays as written (the loader checks every slot names a capture). With `drop`,
    a slot with neither a value nor a default is removed, for text shown without a match
    (search results, suggestions, site pages): a reader never sees a template."""

    def value(m: re.Match[str]) -> str:
        got = captures.get(m["name"])
        if got is not None:
            return got
        if m["default"] is not None:
            return m["default"]
        return "" if drop else m[0]

    out = PLACEHOLDER.sub(value, template)
    return re.sub(r" +(?=[,.;:)])", "", re.sub(r" {2,}", " ", out)) if drop else out


def _evidence(matches: list[Match]) -> list[Evidence]:
    seen: set[tuple[str, int]] = set()
    evidence: list[Evidence] = []
    picks = matches[:2] + matches[-1:] if len(matches) > 3 else matches
    for m in picks:
        for r in m.records:
            if (r.path, r.line) in seen or len(evidence) >= MAX_EVIDENCE:
                continue
            seen.add((r.path, r.line))
            evidence.append(Evidence(path=r.path, line=r.line, text=whole_line(r.message.split("\n")[0])
                                     if len(m.records) > 1 else _matched_line(m, r.message)))
    return evidence


def _matched_line(m: Match, message: str) -> str:
    """For a one-record match, the message line that fired (a multi-line entry has several)."""
    lines = message.split("\n")
    if len(lines) == 1:
        return whole_line(message)
    for line in lines:
        if any(v and v in line for v in m.captures.values()):
            return whole_line(line)
    return whole_line(lines[-1])


PhaseOf = Callable[[Sequence[tuple[str, str]]], "Phase | None"]


def build_findings(matches: Iterable[Match], patterns: Mapping[str, CompiledPattern],
                   phase_of: PhaseOf | None = None) -> dict[str, Finding]:
    """One finding per pattern, in order of first occurrence (unranked). With `phase_of`, a
    finding raised in a traceback says the engine phase its frames show (graph capture, ...)."""
    groups: dict[str, _Group] = {}
    for m in matches:
        groups.setdefault(m.pattern_id, _Group(patterns[m.pattern_id])).matches.append(m)
    return {pid: _finding(g, phase_of) for pid, g in groups.items()}


def _finding(group: _Group, phase_of: PhaseOf | None) -> Finding:
    p = group.pattern.pattern
    # the values of one occurrence, never mixed: the earliest of those that captured the most
    ordered = sorted(group.matches, key=lambda m: (m.records[0].path, m.records[0].line))
    captures = dict(max(ordered, key=lambda m: len(m.captures)).captures)
    title = fill(p.title, captures, drop=True)
    frames = next(([(fr.file, fr.function) for fr in m.event.frames] for m in ordered if m.event.frames), [])
    phase = phase_of(frames) if phase_of is not None and frames else None
    if phase is not None:
        captures["failure_phase"] = phase.id
        title = f"{title} — during {phase.label}"
    cause = fill(p.description.strip(), captures)
    cut = all(m.cut for m in group.matches)  # only a line cut short at the end of a paste (analyzer.cut)
    if cut:
        cause = f"{CUT_NOTE} {cause}"
    return Finding(
        id=p.id, title=title, severity=p.severity, confidence=p.confidence.lowered if cut else p.confidence,
        phase=phase.label if phase else None, cause=cause, why=p.why.strip(),
        fix=[fill(s, captures) for s in p.fix_texts], avoid=list(p.avoid), references=list(p.references),
        evidence=_evidence(group.matches), count=len(group.matches),
        first_line=min(r.line for m in group.matches for r in m.records),
        last_line=max(r.line for m in group.matches for r in m.records),
        captures=captures, processes=len({r.process for m in group.matches for r in m.records}),
    )
