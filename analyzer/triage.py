"""The library API: analyse log inputs and journal folders into one ranked `Report`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analyzer.choices import InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Report
from analyzer.readers.journal_query import JournalQuery, open_query
from analyzer.readers.source import open_source
from analyzer.run import Progress, Run, load

__all__ = ["JournalQuery", "Progress", "Run", "analyze", "load"]


def analyze(inputs: Sequence[str], library: CompiledLibrary | None = None,
            form: InputForm = InputForm.auto, journal: JournalQuery | None = None, knowledge: bool = True,
            index: Path | None = None, progress: Progress | None = None, jobs: int = 1) -> Report:
    """Analyse log inputs (paths, "-" for stdin) and a journal query (this machine's journal,
    or journal files and folders, filtered as journalctl filters); return the ranked report,
    with related postmortems and suggestions from the knowledge base unless `knowledge` is off.
    With `jobs` > 1, several files, or the shares of one large file, are read in parallel
    worker processes."""
    run = Run(library or load(), knowledge=knowledge, index=index, progress=progress)
    if jobs > 1 and len(inputs) > 1 and "-" not in inputs:
        from analyzer.workers import read_in_parallel

        for part in read_in_parallel(run.library, inputs, form, jobs, progress):
            run.absorb(part)
    else:
        for name in inputs:
            source = open_source(name, form)
            if jobs > 1:
                from analyzer.workers import can_split, read_file_in_parallel

                if can_split(source, jobs):
                    source.close()
                    run.absorb(read_file_in_parallel(run.library, name, source.form, jobs, progress))
                    continue
            run.read(source)
    if journal is not None:
        read = open_query(journal)
        run.warnings.extend(read.warnings)
        for source in read.sources:
            run.read(source)
    return run.report()
