"""Running pattern fixtures through the engine: each annotated line checked against the
matches of the whole library on the fixture (`triage patterns test`, lint, statistics)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer.library.compile import CompiledLibrary
from analyzer.library.fixture_file import Annotation, Expect, Fixture
from analyzer.library.load import PatternFile
from analyzer.models import Match
from analyzer.readers.source import open_bytes
from analyzer.run import read_one


@dataclass(frozen=True, slots=True)
class Outcome:
    annotation: Annotation
    passed: bool
    detail: str = ""


def run_fixture(pf: PatternFile, fixture: Fixture, library: CompiledLibrary) -> list[Outcome]:
    mine = [m for m in _matches(fixture, library) if m.pattern_id == pf.pattern.id]
    return [_check(a, mine) for a in fixture.annotations if a.target in (None, pf.pattern.id)]


_LAST: list[tuple[tuple[Path, bytes, int], list[Match]]] = []  # a catalogue's fixture serves all its patterns


def _matches(fixture: Fixture, library: CompiledLibrary) -> list[Match]:
    key = (fixture.path, fixture.log, id(library))
    if _LAST and _LAST[0][0] == key:
        return _LAST[0][1]
    matches = read_one(library, open_bytes(str(fixture.path), fixture.log)).matches
    _LAST[:] = [(key, matches)]
    return matches


def _covering(matches: Sequence[Match], line: int) -> list[Match]:
    return [m for m in matches if any(r.line <= line <= r.end_line for r in m.records)]


def _check(a: Annotation, mine: Sequence[Match]) -> Outcome:
    hits = _covering(mine, a.log_line)
    if a.expect is Expect.match:
        if not hits:
            return Outcome(a, False, "expected a match, got none")
        for key, want in a.captures.items():
            got = [m.captures.get(key) for m in hits]
            if want not in got:
                return Outcome(a, False, f"capture {key}: expected {want!r}, got {got[0]!r}")
        return Outcome(a, True)
    if a.expect is Expect.ok:
        return Outcome(a, not hits, "matched a line marked ok" if hits else "")
    fixed = bool(hits) if a.expect is Expect.todo_match else not hits
    return Outcome(a, True, "todo now passes: promote it" if fixed else "")
