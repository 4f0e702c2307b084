"""`--follow`: findings from a live log as they become complete, in bounded memory.

New lines are read as they come and analysed in batches: when the input pauses (`SETTLE`
seconds) or a batch is full. A busy stream keeps its last `HOLD` lines for the next batch, so
that a traceback still being written is not read half; a paused one is read whole. Each batch
is read together with up to `CONTEXT` lines before it, so a chain whose cause came earlier
(an OOM kill, then a restart, then the failure) still forms. A finding is announced once, when
first complete; later occurrences only raise its count (matches are told apart by the line
they start on, so the context read again is not counted again). Everything kept is bounded:
the context, the matches already counted (those still in the context), the findings known.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import regex

from analyzer.choices import InputForm
from analyzer.errors import InputError
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Finding, Match
from analyzer.readers import parse_lines
from analyzer.readers.detect import detect
from analyzer.readers.journal_query import JournalQuery, access_warning, follow_args, journal_folders
from analyzer.readers.source import open_bytes
from analyzer.run import Run
from analyzer.scan import TRACEBACK

SETTLE = 0.5  # seconds of quiet after which everything read is complete
BATCH = 20_000  # lines: a busy stream is analysed at least this often
HOLD = 200  # lines a busy stream's batch keeps back for the next (a traceback being written)
CONTEXT = 5_000  # lines before a batch read with it (causes that came earlier)
CONTEXT_BYTES = 8 << 20
KNOWN = 10_000  # findings remembered (their counts); the oldest are forgotten past this
PATIENCE = 10  # a pause this many times SETTLE ends a traceback left open
# the last line of a traceback not yet finished: its header, a frame, or the code line under one
_OPEN_TRACEBACK = regex.compile(r"(?:.*\b" + TRACEBACK + r":|\s*File \".*\", line \d+.*|\s{4,}\S.*)\s*$")


@dataclass
class Update:
    """What one batch changed: findings seen for the first time, and counts that grew."""

    new: list[Finding] = field(default_factory=list)
    grown: dict[str, int] = field(default_factory=dict)  # finding id → its count now


@dataclass
class Follower:
    """The state of a follow: the context lines, what was counted, the findings known."""

    library: CompiledLibrary
    name: str = "-"
    form: InputForm = InputForm.auto
    context: deque[bytes] = field(default_factory=deque)
    context_bytes: int = 0
    next_line: int = 1  # the input line number of the next line to analyse
    counted: set[tuple[str, int]] = field(default_factory=set)  # (pattern id, first line) of counted matches
    known: OrderedDict[str, int] = field(default_factory=OrderedDict)  # finding id → count
    numbers: dict[str, int] = field(default_factory=dict)  # finding id → the number it was announced with
    titles: dict[str, str] = field(default_factory=dict)  # finding id → its title, for count updates
    announced: int = 0
    lines: int = 0
    knowledge: bool = False  # past incidents under each new finding, from the knowledge base
    index: Path | None = None
    warnings: list[str] = field(default_factory=list)

    def feed(self, lines: list[bytes]) -> Update:
        """Analyse a batch of complete lines (each without its newline)."""
        if not lines:
            return Update()
        self.form = self._form_of(lines)  # sniffed once, from the first batch
        start = self.next_line - len(self.context)
        data = b"\n".join([*self.context, *lines]) + b"\n"
        source = open_bytes(self.name, data, self.form)
        source.first_line = start
        run = Run(self.library, ends=False)  # a live log's lines arrive whole
        run.read(source, summarise=False)
        fresh = [m for m in run.matches if (m.pattern_id, m.records[0].line) not in self.counted]
        report = run.report()
        update = self._update(report.findings, fresh)
        if self.knowledge and update.new:
            from analyzer.kb.enrich import enrich

            update.new = enrich(update.new, self.index, self.warnings)
            self.warnings[:] = list(dict.fromkeys(self.warnings))[:20]  # said once each, bounded
        self.counted.update((m.pattern_id, m.records[0].line) for m in fresh)
        self.next_line += len(lines)
        self.lines += len(lines)
        self._keep(lines)
        return update

    def _update(self, findings: list[Finding], fresh: list[Match]) -> Update:
        new_by_pattern: dict[str, int] = {}
        for m in fresh:
            new_by_pattern[m.pattern_id] = new_by_pattern.get(m.pattern_id, 0) + 1
        update = Update()
        for f in findings:
            ids = [f.id, *f.members, *(s.id for s in f.symptoms)]
            counted_as = f.members[0] if f.kind == "chain" and f.members else f.id  # a chain counts its cause
            if f.id not in self.known:
                if f.kind in ("pattern", "chain") and not any(new_by_pattern.get(i) for i in ids):
                    continue  # only old matches, read again in the context: already told
                self.announced += 1
                self.titles[f.id] = f.title
                for i in ids:  # a link or a symptom seen later on its own is this finding again
                    self.numbers.setdefault(i, self.announced)
                    self._remember(i, f.count if i == f.id else self.known.get(i, 0))
                number = self.announced
                update.new.append(f.model_copy(update={"rank": number}))
                continue
            grown = new_by_pattern.get(counted_as, 0) if f.kind != "unrecognised" else 0
            if grown:
                self.known[f.id] += grown
                self.known.move_to_end(f.id)
                update.grown[f.id] = self.known[f.id]
        return update

    def _remember(self, finding_id: str, count: int) -> None:
        self.known[finding_id] = count
        self.known.move_to_end(finding_id)
        while len(self.known) > KNOWN:
            old, _ = self.known.popitem(last=False)
            self.numbers.pop(old, None)
            self.titles.pop(old, None)

    def _keep(self, lines: list[bytes]) -> None:
        for line in lines:
            self.context.append(line)
            self.context_bytes += len(line) + 1
        while self.context and (len(self.context) > CONTEXT or self.context_bytes > CONTEXT_BYTES):
            self.context_bytes -= len(self.context.popleft()) + 1
        oldest = self.next_line - len(self.context)
        self.counted = {key for key in self.counted if key[1] >= oldest}  # the rest cannot be read again

    def _form_of(self, lines: list[bytes]) -> InputForm:
        """The input's form: known, or sniffed from these lines."""
        return self.form if self.form is not InputForm.auto else detect(b"\n".join(lines[:200]))

    def count(self, finding_id: str) -> int:
        return self.known.get(finding_id, 0)

    def unfinished(self, lines: list[bytes]) -> bool:
        """Whether the last lines are a Python traceback still being written: its header or a
        frame came last, its exception line has not."""
        records = parse_lines(lines[-4:], self._form_of(lines))
        return bool(records) and _OPEN_TRACEBACK.match(records[-1].message.rsplit("\n", 1)[-1]) is not None


class LineFeed:
    """Complete lines from a file descriptor as they arrive, with a timeout for pauses."""

    def __init__(self, stream: IO[bytes], keep_open_at_end: bool = False) -> None:
        self.fd = stream.fileno()
        self.stream = stream
        self.partial = b""
        self.ended = False
        self.tail = keep_open_at_end  # a growing file: its end is a pause, not the end

    def read(self, timeout: float) -> list[bytes] | None:
        """Lines that arrived within `timeout` seconds ([] after a pause); None at the end."""
        if self.ended:
            return None
        if not self.tail:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return []
        data = os.read(self.fd, 1 << 20)
        if not data:
            if self.tail:
                time.sleep(timeout)
                return []
            self.ended = True
            rest, self.partial = self.partial, b""
            return [rest] if rest else None
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        return lines


def batches(feed: LineFeed, settle: float = SETTLE, batch: int = BATCH, hold: int = HOLD,
            unfinished: Callable[[list[bytes]], bool] | None = None) -> Iterator[list[bytes]]:
    """Batches of complete lines: at each pause (a longer one when `unfinished` says the last
    lines are an event still being written), or every `batch` lines of a busy stream (keeping
    its last `hold` lines back), and the rest at the end."""
    pending: list[bytes] = []
    quiet_since = time.monotonic()
    while True:
        got = feed.read(settle / 5)
        if got is None:
            if pending:
                yield pending
            return
        if got:
            pending.extend(got)
            quiet_since = time.monotonic()
            if len(pending) >= batch:
                cut = len(pending) - hold
                yield pending[:cut]
                pending = pending[cut:]
        elif pending and time.monotonic() - quiet_since >= settle:
            if (unfinished is not None and time.monotonic() - quiet_since < settle * PATIENCE
                    and unfinished(pending[-hold:])):
                continue
            yield pending
            pending = []
        elif not pending:
            yield []  # idle: a chance to show the status


def follow(feed: LineFeed, follower: Follower, on_update: Callable[[Update], bool],
           on_idle: Callable[[], None] | None = None) -> None:
    """Run until the input ends or `on_update` returns False (a --fail-on threshold met)."""
    for lines in batches(feed, unfinished=follower.unfinished):
        if not lines:
            if on_idle is not None:
                on_idle()
            continue
        if not on_update(follower.feed(lines)):
            return


def open_feed(name: str) -> LineFeed:
    """`-` (a pipe or a terminal) or a file, followed from its start as it grows."""
    if name == "-":
        return LineFeed(sys.stdin.buffer)
    try:
        stream = Path(name).open("rb")  # noqa: SIM115 (kept open while followed)
    except OSError as exc:
        raise InputError(f"cannot open: {(exc.strerror or str(exc)).lower()}", name) from exc
    with contextlib.suppress(OSError):
        os.posix_fadvise(stream.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
    return LineFeed(stream, keep_open_at_end=True)


def open_journal_feed(query: JournalQuery) -> tuple[LineFeed, subprocess.Popen[bytes], list[str]]:
    """`journalctl -f -o json` with the query's filters (see `journal_query.follow_args`), and
    the warning when this user may read only part of the journal."""
    proc = subprocess.Popen(follow_args(query), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    warning = access_warning(journal_folders(query))
    return LineFeed(proc.stdout), proc, [warning] if warning else []
