"""Suggestions for errors that no pattern knows: the final lines of tracebacks, C++
terminate messages and exception-shaped lines that no pattern matched are masked (numbers,
hex, paths), grouped by template, and looked up in the knowledge base. The nearest
incident becomes a finding of kind `suggestion`: low confidence, worded as a similarity,
ranked after every pattern finding."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from analyzer.choices import Confidence, Severity
from analyzer.events import EXCEPTION
from analyzer.models import Event, EventKind, Evidence, Finding, Related

MAX_TEMPLATES = 200  # memory bound on a huge log full of unknown errors
SEARCHED = 3  # templates looked up, most frequent first
MIN_SIMILARITY = 0.5  # cosine similarity of the best passage; below it nothing is suggested

_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+"), "<path>"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)*"), "<n>"),
)


def mask(text: str) -> str:
    for rx, token in _MASKS:
        text = rx.sub(token, text)
    return " ".join(text.split())


def error_line(event: Event) -> str | None:
    """The line that names an unknown error, if the event has one."""
    if event.kind in (EventKind.traceback, EventKind.cpp_terminate) and event.exc_type:
        return f"{event.exc_type}: {event.exc_message or ''}".strip()
    if event.kind is EventKind.line:
        first = event.text.split("\n")[0].strip()
        if EXCEPTION.match(first) and ": " in first:
            return first
    return None


@dataclass
class Unexplained:
    template: str
    text: str
    evidence: Evidence
    count: int = 1


@dataclass
class Collector:
    items: dict[str, Unexplained] = field(default_factory=dict)

    def add(self, events: Iterable[Event], matched_lines: set[tuple[str, int]]) -> None:
        for event in events:
            if any((r.path, r.line) in matched_lines for r in event.records):
                continue
            line = error_line(event)
            if line is None:
                continue
            template = mask(line)
            if template in self.items:
                self.items[template].count += 1
            elif len(self.items) < MAX_TEMPLATES:
                last = event.records[-1]
                self.items[template] = Unexplained(template, line, Evidence(path=last.path, line=last.line,
                                                                             text=line[:300]))

    def merge(self, other: Collector) -> None:
        """Fold in the collector of another input read elsewhere (a `--jobs` worker)."""
        for template, item in other.items.items():
            if template in self.items:
                self.items[template].count += item.count
            elif len(self.items) < MAX_TEMPLATES:
                self.items[template] = item

    def top(self) -> list[Unexplained]:
        return sorted(self.items.values(), key=lambda u: -u.count)[:SEARCHED]


def suggestions(unexplained: Sequence[Unexplained], search: object, known: set[str]) -> list[Finding]:
    """Look each unexplained error up; `search(text) -> hits` is the knowledge-base search."""
    out: list[Finding] = []
    seen: set[str] = set()
    for u in unexplained:
        hits = search(u.text)  # type: ignore[operator]
        hit = next((h for h in hits if h.id not in known and h.id not in seen), None)
        if hit is None or hit.similarity < MIN_SIMILARITY:
            continue
        seen.add(hit.id)
        severity = Severity(hit.severity) if hit.severity in Severity.__members__ else Severity.medium
        out.append(Finding(
            id=f"suggestion-{hit.id}", kind="suggestion",
            title=f"Suggested by similarity ({hit.similarity:.2f}) to a past {hit.kind}: {hit.title}",
            severity=min(severity, Severity.medium, key=lambda s: s.rank), confidence=Confidence.low,
            cause=f"No pattern recognises this error; the nearest known incident says: {hit.cause}",
            fix=list(hit.fix), evidence=[u.evidence], count=u.count, first_line=u.evidence.line,
            last_line=u.evidence.line, score=round(hit.similarity, 4),
            reasons=[f"similarity {hit.similarity:.2f} between the unknown error and {hit.kind} {hit.id}",
                     f"error template seen {u.count} times: {u.template[:120]}"],
            related=[Related(id=hit.id, title=hit.title, score=hit.similarity)]))
    return out
