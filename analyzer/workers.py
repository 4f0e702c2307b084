"""`--jobs N`: read several input files in parallel worker processes.

Each worker reads whole files (phase 1 and 2) with the library the parent already loaded:
the workers are forked, so the compiled library, hyperscan databases included, is shared
rather than rebuilt. Runs come back in input order; the parent diagnoses them together.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from analyzer.choices import InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Fact, InputSummary, Match
from analyzer.readers.source import open_source
from analyzer.suggest import Collector
from analyzer.triage import Progress, Run

_library: CompiledLibrary | None = None  # set in each worker by the pool's initializer


def _start(library: CompiledLibrary) -> None:
    global _library
    _library = library


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
