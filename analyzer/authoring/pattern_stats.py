"""`triage patterns stats`: how each pattern fares on its fixture, on the real failure
corpus and on benign logs, and how often it was the top finding: a precision signal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer.authoring.fixture_runs import run_fixture
from analyzer.library.compile import CompiledLibrary
from analyzer.library.fixture_file import Expect, fixture_of
from analyzer.library.load import Library
from analyzer.readers.source import open_source
from analyzer.run import Run, read_one


@dataclass(frozen=True, slots=True)
class PatternStats:
    id: str
    area: str
    fixture_matched: int  # must-match lines that match
    fixture_lines: int  # must-match lines
    corpus_logs: int  # corpus logs where it fired
    corpus_top: int  # corpus logs where it was the top finding
    corpus_total: int  # logs in the development corpus (the figures above are out of these)
    benign_hits: int  # matches on benign logs (should be 0)


def _runs(compiled: CompiledLibrary, logs: Sequence[Path]) -> list[Run]:
    return [read_one(compiled, open_source(str(log))) for log in logs]


def pattern_stats(library: Library, compiled: CompiledLibrary, corpus: Sequence[Path],
                  benign: Sequence[Path]) -> list[PatternStats]:
    fired: Counter[str] = Counter()
    top: Counter[str] = Counter()
    for run in _runs(compiled, corpus):
        fired.update({m.pattern_id for m in run.matches})
        findings = run.report().findings
        if findings:
            top[findings[0].id] += 1
    noisy: Counter[str] = Counter(m.pattern_id for run in _runs(compiled, benign) for m in run.matches)
    out = []
    for pf in library.files:
        matched = total = 0
        if pf.fixture.exists():
            outcomes = run_fixture(pf, fixture_of(pf), compiled)
            musts = [o for o in outcomes if o.annotation.expect is Expect.match]
            total, matched = len(musts), sum(o.passed for o in musts)
        pid = pf.pattern.id
        out.append(PatternStats(pid, pf.pattern.area, matched, total, fired[pid], top[pid], len(corpus), noisy[pid]))
    return out
