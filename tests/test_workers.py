"""`--jobs`: whole files, and the line-aligned shares of one large file, read in worker
processes give the report of a single read."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import workers
from analyzer.library.compile import CompiledLibrary
from analyzer.triage import analyze
from tests.conftest import CORPUS, ROOT, summary

EXAMPLE = ROOT / "examples" / "founding-incident.log"
LOGS = [*sorted(CORPUS.glob("*.log")), EXAMPLE]


def test_a_large_file_split_between_workers_gives_the_same_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    library: CompiledLibrary) -> None:
    """Every corpus log and the example, each repeated into a file of a few hundred kB, read
    whole and split at line starts into 2 and 3 shares: the same findings, facts and counts."""
    monkeypatch.setattr(workers, "SPLIT_FROM", 0)
    monkeypatch.setattr(workers, "MARGIN", 32 * 1024)
    splits: list[int] = []
    cuts = workers.share_cuts
    monkeypatch.setattr(workers, "share_cuts", lambda name, jobs: splits.append(jobs) or cuts(name, jobs))
    for log in LOGS:
        path = tmp_path / log.name
        data = log.read_bytes()
        path.write_bytes(data * max(1, 300_000 // max(len(data), 1)))
        whole = analyze([str(path)], library, knowledge=False)
        for jobs in (2, 3):
            split = analyze([str(path)], library, knowledge=False, jobs=jobs)
            assert summary(split) == summary(whole), (log.name, jobs)
            assert split.facts == whole.facts and split.inputs == whole.inputs, (log.name, jobs)
    assert splits.count(3) == len(LOGS)  # every file was split, not read whole

    cut = tmp_path / "no-final-newline.log"  # the finding on a last line without its newline
    cut.write_bytes(b"May 03 10:00:00 h app[1]: request ok\n" * 20_000
                    + b"May 03 10:00:01 h kernel: Out of memory: Killed process 7 (python3) total-vm:1kB")
    whole = analyze([str(cut)], library, knowledge=False)
    assert whole.findings and summary(analyze([str(cut)], library, knowledge=False, jobs=2)) == summary(whole)


def test_the_workers_progress_reaches_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 library: CompiledLibrary) -> None:
    monkeypatch.setattr(workers, "SPLIT_FROM", 0)
    seen: list[tuple[int, int | None, int]] = []
    example = tmp_path / "founding-incident.log"
    example.write_bytes(EXAMPLE.read_bytes())
    analyze([str(example)], library, knowledge=False, jobs=2, progress=lambda _n, d, t, f: seen.append((d, t, f)))
    assert seen[-1][0] == seen[-1][1] == example.stat().st_size and seen[-1][2] >= 1
