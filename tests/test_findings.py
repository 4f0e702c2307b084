"""Findings: placeholders filled from captures, collapsing, ranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import PatternError
from analyzer.findings import fill
from analyzer.library.compile import CompiledLibrary
from analyzer.library.load import load_pattern
from analyzer.scan import HyperscanEngine, Trigger, hyperscan_available
from tests.conftest import ROOT, analyze_bytes
from tests.test_loader import GOOD, write


def test_fill_leaves_other_braces_alone() -> None:
    caps = {"pid": "42"}
    assert fill("killed {pid}", caps) == "killed 42"
    assert fill("docker ps --format '{{.Names}}' {pid}", caps) == "docker ps --format '{{.Names}}' 42"
    assert fill("awk '{print $1}' {missing|a default}", caps) == "awk '{print $1}' a default"
    assert fill("unclosed { brace", caps) == "unclosed { brace"
    # a shell variable and a Go template action name no capture: left as written
    assert fill("backend: \"${triton_backend}\" {pid}", caps) == "backend: \"${triton_backend}\" 42"
    assert fill("{{range .Mounts}}{{end}} {{pid}}", caps) == "{{range .Mounts}}{{end}} {{pid}}"


def test_placeholder_must_name_a_capture(tmp_path: Path) -> None:
    text = GOOD.replace("free memory.", "free memory ({typo}).")
    with pytest.raises(PatternError, match=r"\{typo\} is not a named group"):
        load_pattern(write(tmp_path, text))


def test_template_text_is_not_a_placeholder(tmp_path: Path) -> None:
    text = GOOD.replace("free memory.", "free memory (config.pbtxt still says ${triton_backend}; {{end}}).")
    assert "${triton_backend}" in load_pattern(write(tmp_path, text)).description


def test_placeholder_captured_by_some_expressions_needs_a_default(tmp_path: Path) -> None:
    text = GOOD.replace("free memory.", "free memory ({constraint}).")
    with pytest.raises(PatternError, match=r"give a default") as err:
        load_pattern(write(tmp_path, text))
    assert err.value.line == GOOD.split("\n").index("description: >-") + 1
    load_pattern(write(tmp_path, text.replace("{constraint}", "{constraint|no constraint shown}")))


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
def test_hyperscan_refusal_names_the_pattern() -> None:
    good = Trigger("fine-pattern", r"Out of memory")
    bad = Trigger("lookbehind-pattern", r"(?<=x)y")
    with pytest.raises(PatternError, match="pattern lookbehind-pattern: hyperscan cannot compile"):
        HyperscanEngine([good, bad], "console")  # type: ignore[arg-type]


def test_identical_findings_collapse_with_count_and_range(library: CompiledLibrary) -> None:
    line = b"[%d.000000] Out of memory: Killed process %d (python3) total-vm:1kB\n"
    data = b"".join(line % (i, 100 + i) for i in range(5))
    (finding,) = analyze_bytes(data, library).findings
    assert (finding.count, finding.first_line, finding.last_line) == (5, 1, 5)
    assert finding.captures == {"pid": "100", "process": "python3"}
    assert [e.line for e in finding.evidence] == [1, 2, 5]  # the first two and the last, not all five


def test_cause_before_symptom_at_equal_severity(library: CompiledLibrary) -> None:
    """The founding incident: the FlashInfer gate (earlier) ranks above the nvcc anti-fix."""
    report = analyze_bytes((ROOT / "examples" / "founding-incident.log").read_bytes(), library)
    assert [f.severity.value for f in report.findings[:2]] == ["critical", "critical"]
    assert report.findings[0].first_line < report.findings[1].first_line


def test_an_anti_fix_is_a_setting_the_avoid_text_names_not_a_plain_word() -> None:
    """A captured value marks an anti-fix only when it is code-like and named whole: a path or a
    setting, not a word such as 'Triton' that any advice may mention."""
    from analyzer.choices import Confidence, Severity
    from analyzer.diagnose import number
    from analyzer.models import Finding

    def finding(fid: str, captures: dict[str, str], avoid: list[str]) -> Finding:
        return Finding(id=fid, title=fid, severity=Severity.high, confidence=Confidence.medium,
                       cause="c", captures=captures, avoid=avoid)

    gate = finding("gate", {}, ["Do not set `CUDA_HOME=/dev/null` to skip the check, and do not pin Triton."])
    ranked = number([gate, finding("word", {"backend": "Triton"}, []),
                     finding("path", {"cuda_home": "/dev/null"}, []),
                     finding("longer", {"cuda_home": "/dev/nullx"}, [])])
    assert [f.cause.startswith("Anti-fix") for f in ranked] == [False, False, True, False]
