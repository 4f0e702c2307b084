"""The real failure logs of tests/data/corpus: each one's established cause is the top finding,
and the benign loghub samples give no finding at all."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer.library.compile import CompiledLibrary
from analyzer.triage import analyze
from tests.conftest import BENIGN, CORPUS

HOLDOUT = CORPUS.parent / "holdout"  # 20 more real cases (see its cases file for the threads)
CASES = [c | {"_dir": p.parent} for p in [*sorted(CORPUS.glob("cases-*.yaml")), *sorted(HOLDOUT.glob("cases-*.yaml"))]
         for c in yaml.safe_load(p.read_text())]
MIN_TOP1 = 1.0  # every case of the development set; similar unseen cases judge the product


def _hit(finding, words: list[str]) -> bool:  # type: ignore[no-untyped-def]
    text = f"{finding.title} {finding.cause}".lower()
    return any(w.lower() in text for w in words)


def test_corpus_top_finding_names_the_cause(library: CompiledLibrary) -> None:
    misses = []
    for case in CASES:
        report = analyze([str(case["_dir"] / f"{case['id']}.log")], library, knowledge=False)
        if not report.findings or not _hit(report.findings[0], case["keywords_any"]):
            top = report.findings[0].id if report.findings else "(none)"
            misses.append(f"{case['id']}: top finding {top}")
    assert len(misses) <= (1 - MIN_TOP1) * len(CASES), "\n".join(misses)


@pytest.mark.parametrize("log", sorted(BENIGN.glob("*.log")), ids=lambda p: p.name)
def test_benign_logs_stay_silent(log: Path, library: CompiledLibrary) -> None:
    report = analyze([str(log)], library)
    assert [f"{f.id} at line {f.evidence[0].line}" for f in report.findings] == []
