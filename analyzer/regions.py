"""From phase-1 hits to regions: the few windows of input lines that phase 2 will parse.

Each hit opens a window of BEFORE lines before it and AFTER lines after it, widened
backwards over indented continuation lines so that a multi-line entry is never cut at the
top, and forwards over a few (WRAPPED) at the bottom. Only the start of a multi-line block
(a traceback, a C++ terminate) looks far ahead (LONG_AFTER lines, for the body that
follows); a line that matched looks a few lines on.
Windows are merged, also across chunk boundaries, so every input line is parsed at most
once and in order. Memory holds one chunk and the regions in flight.

BEFORE is small because the starts of long blocks are triggers of their own (a traceback's
header opens its window with LONG_AFTER) and indented continuations are followed back
whatever their length; the dozen lines cover short blocks with no trigger at their top (an
NVRM report, a run of NCCL WARN lines). Phase 2 costs tens of microseconds per line, so on a
noisy log the window size, not the scan, sets the speed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from analyzer.scan import Engine, Reach, Trigger

BEFORE = 12
AFTER = 8
LONG_AFTER = 400
# An error line that no pattern knows (most hits in a noisy log) only feeds the unrecognised
# findings, which read the line itself: a narrow window. A pattern's hit on the same lines
# widens it again.
NARROW = 2
MAX_CONTINUATION = 2000
# A window also runs on over the indented lines after its end, up to this many: the rest of an
# entry that a paste wrapped (a chain of errors ending in a colon, continued on the next lines)
WRAPPED = 20
_AFTER = {Reach.long: LONG_AFTER, Reach.narrow: NARROW}


@dataclass(slots=True)
class Region:
    first_line: int  # global 1-based number of lines[0]
    lines: list[bytes]
    hits: dict[int, set[str]] = field(default_factory=dict)  # global line → trigger keys

    @property
    def last_line(self) -> int:
        return self.first_line + len(self.lines) - 1

    def absorb(self, other: Region) -> None:
        """Append the part of `other` that lies past this region's end."""
        skip = self.last_line + 1 - other.first_line
        if skip < len(other.lines):
            self.lines.extend(other.lines[max(skip, 0):])
        for line, keys in other.hits.items():
            self.hits.setdefault(line, set()).update(keys)


def _line_start(buf: bytes, pos: int) -> int:
    return buf.rfind(b"\n", 0, pos) + 1


def _back(buf: bytes, start: int, count: int) -> tuple[int, int]:
    """Move `start` back by up to `count` lines, then over continuation lines."""
    moved = 0
    while moved < count and start > 0:
        start = _line_start(buf, start - 1)
        moved += 1
    extra = 0
    while start > 0 and _indented(buf, start) and extra < MAX_CONTINUATION:
        start = _line_start(buf, start - 1)
        moved += 1
        extra += 1
    return start, moved


def _indented(buf: bytes, at: int) -> bool:
    """Whether the line starting at `at` is a continuation line (it starts with a blank)."""
    return buf[at:at + 1] in (b" ", b"\t")


def _on(buf: bytes, end: int) -> int:
    """Move `end` past up to WRAPPED indented continuation lines that follow it."""
    extra = 0
    while end < len(buf) and _indented(buf, end) and extra < WRAPPED:
        end = _forward(buf, end, 1)[0]
        extra += 1
    return end


def _forward(buf: bytes, end: int, count: int) -> tuple[int, int]:
    """Return the offset just past `count` more lines after `end`, and how many were found."""
    found = 0
    while found < count and end < len(buf):
        nl = buf.find(b"\n", end)
        end = len(buf) if nl < 0 else nl + 1
        found += 1
    return end, found


class RegionBuilder:
    def __init__(self, engine: Engine, triggers: tuple[Trigger, ...],
                 before: int = BEFORE, after: int = AFTER) -> None:
        self.engine = engine
        self.keys = [t.key for t in triggers]
        self.before = before
        self.reach = [_AFTER[t.reach] if t.reach is not Reach.usual else after
                      for t in triggers]
        self.back = [NARROW if t.reach is Reach.narrow else before for t in triggers]
        self.lines = 0  # input lines seen so far (the regions' line numbers come from this count)

    def regions(self, chunks: Iterable[bytes], first_line: int = 1) -> Iterator[Region]:
        """Chunks must end at a line boundary (the source guarantees it); the first chunk
        starts at input line `first_line` (a slice of a file read by a worker)."""
        pending: Region | None = None
        owed = 0  # lines the pending region still wants from the next chunk
        tail: list[bytes] = []  # the last lines of the previous chunk, for look-back
        base = first_line
        for chunk in chunks:
            if not chunk:
                continue
            counted = _Counted()
            for region, want in self._chunk_regions(chunk, base, tail, owed, pending, counted):
                if pending is not None and region.first_line <= pending.last_line + 1:
                    pending.absorb(region)
                else:
                    if pending is not None:
                        yield pending
                    pending = region
                owed = want
            tail = self._tail(chunk)
            nlines = counted.lines + chunk.count(b"\n", counted.upto) + (0 if chunk.endswith(b"\n") else 1)
            base += nlines
            self.lines += nlines
        if pending is not None:
            yield pending

    def _tail(self, chunk: bytes) -> list[bytes]:
        end = len(chunk)
        while end and chunk[end - 1] == 0x0A:  # not chunk.rstrip(): that copies the whole chunk
            end -= 1
        start, _ = _back(chunk, end + 1 if end < len(chunk) else end, self.before)
        return chunk[start:end].split(b"\n") if start < len(chunk) else []

    def _chunk_regions(self, chunk: bytes, base: int, tail: list[bytes], owed: int, pending: Region | None,
                       counted: _Counted) -> Iterator[tuple[Region, int]]:
        if owed and pending is not None:
            end, found = _forward(chunk, 0, owed)
            yield Region(base, chunk[:end].rstrip(b"\n").split(b"\n")), owed - found
        hits = self.engine.scan(chunk)
        if not hits:
            return
        hits.sort()
        line = base
        windows: list[_Window] = []
        for offset, idx in hits:
            pos = max(offset - 1, 0)
            line += chunk.count(b"\n", counted.upto, pos)
            counted.upto, counted.lines = pos, line - base
            begin = _line_start(chunk, pos)
            end = _on(chunk, _forward(chunk, begin, self.reach[idx] + 1)[0])
            if windows and begin < windows[-1].end:
                w = windows[-1]
                w.add(line, self.keys[idx], end)
                if line - self.back[idx] < w.first_line:  # looks further back than the window's first line
                    start, back = _back(chunk, begin, self.back[idx])
                    if start < w.start:
                        w.start, w.first_line = start, line - back
                continue
            start, back = _back(chunk, begin, self.back[idx])
            windows.append(_Window(start, end, line - back, {line: {self.keys[idx]}}))
        for w in windows:
            lines = chunk[w.start:w.end].rstrip(b"\n").split(b"\n")
            first = w.first_line
            if w.start == 0 and tail:
                lines = tail + lines
                first -= len(tail)
            yield Region(first, lines, w.hits), (LONG_AFTER if w.end >= len(chunk) else 0)


@dataclass(slots=True)
class _Counted:
    """How far into a chunk the newlines were counted while locating hits, so that the rest
    of the chunk is counted once, not the whole chunk again."""

    upto: int = 0
    lines: int = 0


@dataclass(slots=True)
class _Window:
    start: int  # byte offsets in the chunk
    end: int
    first_line: int
    hits: dict[int, set[str]]

    def add(self, line: int, key: str, end: int) -> None:
        self.hits.setdefault(line, set()).add(key)
        self.end = max(self.end, end)
