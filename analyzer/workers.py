"""`--jobs N`: read several input files in parallel worker processes.

Each worker reads whole files (phase 1 and 2) with the library the parent already loaded:
the workers are forked, so the compiled library, hyperscan databases included, is shared
rather than rebuilt. Runs come back in input order; the parent diagnoses them together.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from typing import Any

from analyzer.choices import InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Fact, InputSummary, Match
from analyzer.readers.source import Source, count_undecodable, open_slice, open_source
from analyzer.run import Progress, Run
from analyzer.unrecognised import Collector

_library: CompiledLibrary | None = None  # set in each worker by the pool's initializer
_counters: tuple[Any, Any] | None = None  # shared arrays: bytes read and patterns found, per share


def _start(library: CompiledLibrary, counters: tuple[Any, Any] | None = None) -> None:
    global _library, _counters
    _library = library
    _counters = counters


Parts = tuple[list[Match], list[Fact], list[InputSummary], list[str], Collector]


def _read(name: str, form: InputForm) -> Parts:
    """What one input gave, without the library (the parent has it)."""
    assert _library is not None
    run = Run(_library)
    run.read(open_source(name, form))
    return run.matches, run.facts, run.inputs, run.warnings, run.collector


def read_in_parallel(library: CompiledLibrary, inputs: Sequence[str], form: InputForm, jobs: int,
                     progress: Progress | None = None) -> Iterator[Run]:
    """One Run per input, in input order. An input error (missing file, corrupt data) is raised
    here, in the parent, as it would be when reading one file after another."""
    context = multiprocessing.get_context("fork")
    sizes = {name: _size(name) for name in inputs}
    done = 0
    with ProcessPoolExecutor(max_workers=min(jobs, len(inputs)), mp_context=context,
                             initializer=_start, initargs=(library,)) as pool:
        futures = [pool.submit(_read, name, form) for name in inputs]
        for name, future in zip(inputs, futures, strict=True):
            matches, facts, summaries, warnings, collector = future.result()
            run = Run(library, matches=matches, facts=facts, inputs=summaries, warnings=warnings, collector=collector)
            done += sizes[name] or 0
            if progress is not None:
                progress(f"{len(inputs)} files", done, sum(s or 0 for s in sizes.values()) or None, 0)
            yield run


def _size(name: str) -> int | None:
    try:
        return os.stat(name).st_size
    except OSError:
        return None


SPLIT_FROM = 64 * 1024 * 1024  # a smaller file is read by one process: forking would cost more
MARGIN = 1024 * 1024  # bytes of context each worker reads beyond its share, on both sides
_BLOCK = 8 * 1024 * 1024


def can_split(source: Source, jobs: int) -> bool:
    """A large plain file, in a form whose entries can be cut at any line (an export stream's
    binary fields cannot)."""
    return (jobs > 1 and source.size is not None and source.size >= SPLIT_FROM
            and source.form is not InputForm.journal_export)


def read_file_in_parallel(library: CompiledLibrary, name: str, form: InputForm, jobs: int,
                          progress: Progress | None = None) -> Run:
    """One large file, split at line starts into `jobs` shares read by forked workers, each
    with a megabyte of context on both sides so that no event is cut. A worker keeps only
    what starts on its own lines; line numbers are those of the whole file."""
    cuts = share_cuts(name, jobs)
    shares = list(itertools.pairwise(cuts))
    context = multiprocessing.get_context("fork")
    done, found = context.Array("q", len(shares)), context.Array("q", len(shares))
    with ProcessPoolExecutor(max_workers=len(shares), mp_context=context,
                             initializer=_start, initargs=(library, (done, found))) as pool:
        counts = list(pool.map(_count_lines, [name] * len(shares), *zip(*shares, strict=True)))
        firsts = [1 + sum(counts[:k]) for k in range(len(shares))]
        futures = [pool.submit(_read_share, name, form, k, share, firsts[k], counts[k], cuts[-1])
                   for k, share in enumerate(shares)]
        while True:
            pending = wait(futures, timeout=0.25).not_done
            if progress is not None:  # patterns found: the largest share's count, a lower bound
                progress(name, min(sum(done[:]), cuts[-1]), cuts[-1], max(found[:]))
            if not pending:
                break
        parts = [f.result() for f in futures]
    run = Run(library)
    for matches, facts, _summaries, warnings, collector in parts:
        run.absorb(Run(library, matches=matches, facts=facts, collector=collector,
                       warnings=[w for w in warnings if w not in run.warnings]))
    lines = sum(counts) + (0 if _ends_with_newline(name) else 1)
    undecodable = sum(s.undecodable for _m, _f, summaries, _w, _c in parts for s in summaries)
    plain = sum(s.plain for _m, _f, summaries, _w, _c in parts for s in summaries)
    run.inputs.append(InputSummary(path=name, format=form, lines=lines, bytes=cuts[-1],
                                   undecodable=undecodable, plain=plain))
    run.note_unreadable(run.inputs[-1])
    return run


def _read_share(name: str, form: InputForm, k: int, share: tuple[int, int], first: int, count: int,
                size: int) -> Parts:
    """Share k of a file of `size` bytes (as it was when cut: a log that grows meanwhile is read
    up to there, as one reader would have)."""
    assert _library is not None and _counters is not None
    start, end = share
    lo = _line_start_after(name, max(start - MARGIN, 0)) if start else 0
    lo = min(lo, start)
    hi = _line_start_after(name, min(end + MARGIN, size)) if end < size else size
    before = _count_lines(name, lo, start)
    done, found = _counters

    def tell(_name: str, read: int, _size: int | None, patterns: int) -> None:
        done[k], found[k] = read, patterns

    last = first + count + (1 if end == size else 0)  # the file's last line may lack its newline
    run = Run(_library, own=range(first, last), progress=tell, ends=end == size)
    source = open_slice(name, form, lo, hi, first - before)
    run.read(source, summarise=False)
    margins = _undecodable(name, lo, start) + _undecodable(name, end, hi)
    summary = InputSummary(path=name, format=form, lines=count, bytes=end - start,
                           undecodable=max(source.undecodable - margins, 0), plain=run.plain)
    return run.matches, run.facts, [summary], run.warnings, run.collector


def share_cuts(name: str, jobs: int) -> list[int]:
    """Byte offsets that cut a file into `jobs` shares at line starts, first 0 and last its size."""
    size = os.stat(name).st_size
    cuts = [0]
    for k in range(1, jobs):
        at = _line_start_after(name, size * k // jobs)
        if cuts[-1] < at < size:
            cuts.append(at)
    return [*cuts, size]


def _line_start_after(name: str, offset: int) -> int:
    """The first line start at or after `offset` (offset itself when a line starts there)."""
    with open(name, "rb") as f:
        if offset == 0:
            return 0
        f.seek(offset - 1)
        return offset - 1 + len(f.readline())


def _count_lines(name: str, start: int, end: int) -> int:
    n = 0
    with open(name, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            block = f.read(min(_BLOCK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


def _undecodable(name: str, start: int, end: int) -> int:
    with open(name, "rb") as f:
        f.seek(start)
        return count_undecodable(f.read(end - start))


def _ends_with_newline(name: str) -> bool:
    with open(name, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
