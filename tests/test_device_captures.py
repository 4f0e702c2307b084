"""Failures captured on a real GPU (tests/data/device, see captures.yaml for the machine, the
versions and the command behind each log): the top finding is the pattern that explains each
one, and the healthy runs of the same machine give nothing of severity medium or above."""

from __future__ import annotations

import pytest
import yaml

from analyzer.choices import Severity
from analyzer.library.compile import CompiledLibrary
from analyzer.triage import analyze
from tests.conftest import ROOT

DEVICE = ROOT / "tests" / "data" / "device"
CAPTURES = yaml.safe_load((DEVICE / "captures.yaml").read_text())
FAILURES = [c for c in CAPTURES if not c.get("silent")]
HEALTHY = [c for c in CAPTURES if c.get("silent")]


def test_every_capture_is_listed() -> None:
    assert sorted(c["log"] for c in CAPTURES) == sorted(p.name for p in DEVICE.glob("*.log"))


@pytest.mark.parametrize("case", FAILURES, ids=lambda c: c["log"])
def test_capture_top_finding(case: dict[str, str], library: CompiledLibrary) -> None:
    report = analyze([str(DEVICE / case["log"])], library, knowledge=False)
    assert [f.id for f in report.findings[:1]] == [case["expect"]]


@pytest.mark.parametrize("case", HEALTHY, ids=lambda c: c["log"])
def test_healthy_capture_is_quiet(case: dict[str, str], library: CompiledLibrary) -> None:
    report = analyze([str(DEVICE / case["log"])], library, knowledge=False)
    loud = [f.id for f in report.findings if f.severity.rank >= Severity.medium.rank]
    assert loud == []
