"""Phase 2, third step: run the full patterns on events.

Only the patterns whose trigger fired on an event's lines are tried, so the cost follows
the number of hits, not the size of the input. A match's evidence is the records its
text spans; its captures are the named groups.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import regex

from analyzer.library.compile import MATCH_TIMEOUT_S, CompiledPattern
from analyzer.library.schema import Scope
from analyzer.models import Event, Match
from analyzer.scan import Structural


def candidates(event: Event, hits: Mapping[int, set[str]], every: Iterable[str]) -> set[str]:
    keys: set[str] = set()
    for line in range(event.first_line, event.last_line + 1):
        keys |= hits.get(line, set())
    if Structural.bytes_message in keys:  # phase 1 cannot read a message stored as byte values
        return set(every)
    return keys


def match_events(events: Iterable[Event], hits: Mapping[int, set[str]],
                 patterns: Mapping[str, CompiledPattern], warnings: list[str]) -> Iterator[Match]:
    for event in events:
        for key in sorted(candidates(event, hits, patterns)):
            cp = patterns.get(key)
            if cp is None:
                continue
            try:
                yield from match_event(cp, event)
            except TimeoutError:
                warnings.append(f"pattern {cp.id} took over {MATCH_TIMEOUT_S}s on the event at "
                                f"{event.path}:{event.first_line}; skipped there")


def match_event(cp: CompiledPattern, event: Event) -> Iterator[Match]:
    """At most one match per event: a line pattern that fires on several lines of one
    traceback is one occurrence. Source-code lines quoted in a traceback are skipped
    (`raise RuntimeError("...")` repeats the message it raises), except the raise statement of a
    traceback cut before its exception, the one line that holds the message."""
    if cp.head.in_container and not event.records[0].in_container:
        return
    if cp.head.scope == Scope.event.value:
        texts = [(event.text, 0)]
    else:
        texts = []
        offset = 0
        for i, text in enumerate(event.text.split("\n")):
            if i not in event.code_lines or i == event.raise_line:
                texts.append((text, offset))
            offset += len(text) + 1
    captures: dict[str, str] = {}
    owners: set[int] = set()
    for text, base in texts:
        for m in _match_text(cp, text) or ():
            for name, value in m.groupdict().items():
                if value is not None:
                    captures.setdefault(name, value)
            first = event.text.count("\n", 0, base + m.start())
            last = event.text.count("\n", 0, base + max(m.end() - 1, m.start()))
            owners.update(event.line_owner[first:last + 1])
    if owners:
        yield Match(cp.id, event, tuple(event.records[i] for i in sorted(owners)), captures)


def _match_text(cp: CompiledPattern, text: str) -> list[regex.Match[str]] | None:
    """All expressions for `all`, the first that matches for `any`; None when it does not fire."""
    found = []
    require_all = cp.head.require_all
    for rx in cp.regexes:
        m = rx.search(text, timeout=MATCH_TIMEOUT_S)
        if m is None and require_all:
            return None
        if m is not None:
            found.append(m)
            if not require_all:
                break
    return found or None
