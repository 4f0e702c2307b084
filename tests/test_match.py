"""Phase 2's matcher on its own: `any` and `all`, line and event scope, captures, quoted
source lines, and which patterns a phase-1 hit lets it try."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.events import build_events
from analyzer.library.compile import CompiledPattern
from analyzer.library.load import PatternFile
from analyzer.library.schema import Pattern
from analyzer.match import candidates, match_event, match_events
from analyzer.models import Event, Record
from analyzer.scan import Structural


def pattern(match: dict[str, Any], pid: str = "demo-failure") -> CompiledPattern:
    return CompiledPattern(PatternFile(Pattern.model_validate({
        "title": "A demo failure for the matcher", "id": pid, "severity": "high", "area": "runtime",
        "description": "A demo failure, described for the tests.", "why": "It shows how matching works.",
        "match": match, "fix": ["Nothing."], "source": "tests/test_match.py"}), Path("patterns/runtime/demo.yaml")))


def event(*messages: str) -> Event:
    [ev] = build_events([Record("x.log", i + 1, i + 1, m) for i, m in enumerate(messages)])
    return ev


TRACEBACK = ("Traceback (most recent call last):",
             '  File "/srv/app.py", line 3, in <module>',
             '    raise RuntimeError("device 7 is gone")',
             "RuntimeError: device 7 is gone")


def test_any_fires_on_the_first_expression_that_matches_and_captures_its_groups() -> None:
    cp = pattern({"any": [{"regex": r"device (?P<dev>\d+) is gone"}, {"regex": r"never"}]})
    [m] = match_event(cp, event("RuntimeError: device 7 is gone"))
    assert m.pattern_id == "demo-failure" and m.captures == {"dev": "7"}
    assert list(match_event(cp, event("device seven is gone"))) == []


def test_all_needs_every_expression_on_one_text() -> None:
    cp = pattern({"all": [{"regex": r"device \d+"}, {"regex": r"is gone"}], "scope": "event"})
    assert len(list(match_event(cp, event(*TRACEBACK)))) == 1
    half = pattern({"all": [{"regex": r"device \d+"}, {"regex": r"was unplugged"}], "scope": "event"})
    assert list(match_event(half, event(*TRACEBACK))) == []


def test_line_scope_reads_lines_apart_and_event_scope_reads_across_them() -> None:
    across = {"all": [{"regex": r"Traceback \(most"}, {"regex": r"RuntimeError: device"}]}
    assert list(match_event(pattern({**across, "scope": "line"}), event(*TRACEBACK))) == []
    [m] = match_event(pattern({**across, "scope": "event"}), event(*TRACEBACK))
    assert [r.line for r in m.records] == [1, 4]  # the lines each expression matched on


def test_a_quoted_source_line_is_not_evidence_of_the_message_it_raises() -> None:
    cp = pattern({"any": [{"regex": r"device \d+ is gone"}]})
    [m] = match_event(cp, event(*TRACEBACK))
    assert [r.line for r in m.records] == [4]  # the exception line, not the `raise` line above it


def test_one_match_per_event_even_when_several_lines_fire() -> None:
    cp = pattern({"any": [{"regex": r"device \d+ is gone"}], "scope": "event"})
    [m] = match_event(cp, event(*TRACEBACK))
    assert m.records and m.captures == {}


def test_only_patterns_whose_trigger_fired_in_the_event_are_tried() -> None:
    ev = event(*TRACEBACK)
    hits = {4: {"demo-failure"}}
    assert candidates(ev, hits, ["demo-failure", "other"]) == {"demo-failure"}
    assert candidates(ev, {9: {"demo-failure"}}, ["demo-failure"]) == set()  # a hit outside the event
    assert candidates(ev, {2: {Structural.bytes_message}}, ["a", "b"]) == {"a", "b"}  # bytes: try all
    patterns = {"demo-failure": pattern({"any": [{"regex": r"is gone"}]}),
                "other": pattern({"any": [{"regex": r"is gone"}]}, pid="other")}
    warnings: list[str] = []
    assert [m.pattern_id for m in match_events([ev], hits, patterns, warnings)] == ["demo-failure"]
    assert warnings == []
