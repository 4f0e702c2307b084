"""Failures captured by running real programs: on a GPU machine (tests/data/device) and, for
CPU-side ranks and loader workers, on a machine without one (tests/data/cpu-captures); each
folder's captures.yaml gives the machine, the versions and the command behind each log. The top
finding is the pattern that explains each one (`unrecognised` where no pattern should: the
error line itself leads), and the healthy runs give nothing of severity medium or above."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzer.choices import FindingKind, Severity
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Report
from analyzer.triage import analyze
from tests.conftest import ROOT

FOLDERS = [ROOT / "tests" / "data" / name for name in ("device", "cpu-captures")]
CAPTURES = [{**c, "path": folder / c["log"]} for folder in FOLDERS
            for c in yaml.safe_load((folder / "captures.yaml").read_text())]
FAILURES = [c for c in CAPTURES if not c.get("silent")]
HEALTHY = [c for c in CAPTURES if c.get("silent")]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_every_capture_is_listed(folder: Path) -> None:
    listed = [c["log"] for c in CAPTURES if c["path"].parent == folder]
    assert sorted(listed) == sorted(p.name for p in folder.glob("*.log"))


def _top(report: Report) -> list[str]:
    return ["unrecognised" if f.kind is FindingKind.unrecognised else f.id for f in report.findings[:1]]


@pytest.mark.parametrize("case", FAILURES, ids=lambda c: c["log"])
def test_capture_top_finding(case: dict[str, Any], library: CompiledLibrary) -> None:
    report = analyze([str(case["path"])], library, knowledge=False)
    assert _top(report) == [case["expect"]]


@pytest.mark.parametrize("case", HEALTHY, ids=lambda c: c["log"])
def test_healthy_capture_is_quiet(case: dict[str, Any], library: CompiledLibrary) -> None:
    report = analyze([str(case["path"])], library, knowledge=False)
    loud = [f.id for f in report.findings if f.severity.rank >= Severity.medium.rank]
    assert loud == []
