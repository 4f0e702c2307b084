"""The region builder: the windows of lines phase 2 parses around phase-1 hits, their merges,
chunk boundaries and the look-back over continuation lines. Built on the pure-Python engine
with hand-made triggers, so each rule is seen alone."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

from analyzer.choices import InputForm
from analyzer.regions import AFTER, BEFORE, LONG_AFTER, NARROW, WRAPPED, Region, RegionBuilder
from analyzer.scan import PythonEngine, Reach, Trigger

TRIGGERS = (Trigger("boom", r"BOOM"), Trigger("@traceback", r"Traceback", reach=Reach.long),
            Trigger("@exception", r"Oops", reach=Reach.narrow))


def lines(n: int, marks: dict[int, str] | None = None) -> list[bytes]:
    """n numbered lines, line k (1-based) replaced by marks[k] when given."""
    marks = marks or {}
    return [marks.get(k, f"line {k} quiet").encode() for k in range(1, n + 1)]


def build(data: Sequence[bytes], chunk_lines: int | None = None, first_line: int = 1) -> list[Region]:
    builder = RegionBuilder(PythonEngine(TRIGGERS, InputForm.console), TRIGGERS)
    return list(builder.regions(_chunks(data, chunk_lines), first_line))


def _chunks(data: Sequence[bytes], per: int | None) -> Iterable[bytes]:
    per = per or len(data)
    for i in range(0, len(data), per):
        yield b"".join(x + b"\n" for x in data[i:i + per])


def span(r: Region) -> tuple[int, int]:
    return r.first_line, r.last_line


def test_a_hit_opens_a_window_before_and_after_it() -> None:
    [r] = build(lines(100, {50: "BOOM"}))
    assert span(r) == (50 - BEFORE, 50 + AFTER)
    assert r.hits == {50: {"boom"}}
    assert r.lines[BEFORE] == b"BOOM"  # lines are the input's, in order


def test_no_hit_no_region() -> None:
    assert build(lines(500)) == []


def test_windows_that_touch_are_merged_and_far_ones_are_not() -> None:
    near = build(lines(200, {50: "BOOM", 50 + AFTER + BEFORE: "BOOM"}))
    assert [span(r) for r in near] == [(50 - BEFORE, 50 + 2 * AFTER + BEFORE)]
    assert near[0].hits.keys() == {50, 50 + AFTER + BEFORE}
    far = build(lines(200, {30: "BOOM", 150: "BOOM"}))
    assert [span(r) for r in far] == [(30 - BEFORE, 30 + AFTER), (150 - BEFORE, 150 + AFTER)]


def test_the_start_of_a_traceback_reads_far_ahead() -> None:
    [r] = build(lines(1000, {10: "Traceback"}))
    assert span(r) == (1, 10 + LONG_AFTER)


def test_an_unknown_error_line_gets_a_narrow_window_that_a_pattern_hit_widens() -> None:
    [r] = build(lines(100, {50: "Oops"}))
    assert span(r) == (50 - NARROW, 50 + NARROW)
    [both] = build(lines(100, {50: "Oops", 51: "BOOM"}))
    assert span(both) == (51 - BEFORE, 51 + AFTER) and both.hits == {50: {"@exception"}, 51: {"boom"}}


def test_look_back_follows_indented_continuation_lines_to_the_entry_start() -> None:
    data = lines(60)
    data[19] = b"entry head"
    for k in range(20, 49):  # lines 21..49 are continuations of line 20
        data[k] = b"    continued"
    data[49] = b"    BOOM"
    [r] = build(data)
    assert r.first_line == 20 and r.lines[0] == b"entry head"  # past BEFORE, up to the entry's head


def test_a_window_runs_on_over_the_indented_lines_after_its_end_up_to_a_bound() -> None:
    """The rest of an entry a paste wrapped onto indented lines is read with it, a few lines only."""
    data = lines(200, {50: "Oops: failed to start:"})
    for k in range(50, 50 + NARROW + 3):  # lines 51..55 go on with line 50's message
        data[k] = b"  continued:"
    [r] = build(data)
    assert span(r) == (50 - NARROW, 55)
    for k in range(50, 150):  # a hundred indented lines: only WRAPPED more than the window
        data[k] = b"  continued:"
    [r] = build(data)
    assert span(r) == (50 - NARROW, 50 + NARROW + WRAPPED)


def covered(regions: Sequence[Region]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for r in regions:
        for i, text in enumerate(r.lines):
            assert r.first_line + i not in out, "a line was given to phase 2 twice"
            out[r.first_line + i] = text
    return out


@pytest.mark.parametrize("per", [3, 7, 50])
def test_chunk_boundaries_keep_every_line_and_hit_of_the_whole_read(per: int) -> None:
    """A window that reaches the end of a chunk reads on into the next (conservatively: as far
    as a traceback would), so regions may grow across boundaries, but never lose a line or a
    hit, never give a line twice, and keep every line's number and text. Look-back reaches
    into the previous chunk only (sources cut 8 MiB chunks), so chunks here hold at least the
    few lines a window looks back."""
    data = lines(1200, {5: "BOOM", 40: "Traceback", 41: "BOOM", 700: "Oops", 1100: "BOOM"})
    whole, cut = build(data), build(data, per)
    assert [r.hits for r in whole] and {k: v for r in cut for k, v in r.hits.items()} == \
        {k: v for r in whole for k, v in r.hits.items()}
    have, want = covered(cut), covered(whole)
    assert want.items() <= have.items()
    assert all(have[n] == data[n - 1] for n in have)


def test_a_hit_at_the_top_of_a_chunk_looks_back_into_the_previous_one() -> None:
    [r] = build(lines(40, {21: "BOOM"}), chunk_lines=20)
    assert span(r) == (21 - BEFORE, 21 + AFTER)
    assert r.lines[0] == f"line {21 - BEFORE} quiet".encode()


def test_line_numbers_start_where_a_workers_share_starts() -> None:
    [r] = build(lines(30, {15: "BOOM"}), first_line=1001)
    assert r.hits == {1015: {"boom"}} and span(r) == (1015 - BEFORE, 1015 + AFTER)
