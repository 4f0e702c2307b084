"""`triage patterns lint`: each check finds what it is for, with file:line and help."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import regex

from analyzer.authoring.pattern_lint import adversarial_inputs, is_slow, lint_library, nested_quantifiers
from tests.conftest import BENIGN, ROOT
from tests.test_cli import triage

EVIL = [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)*$", r"(.*a){12}", r"^(\d+)*$", r"(x+x+)+y", r"(\S+\s*)+=", r"([a-z0-9]+)*@"]
SAFE = [r"Out of memory: Killed process (?P<pid>\d+) \((?P<process>[^)]+)\)", r"\d+(?:\.\d+)+",
        r"Model architectures \['(?P<a>[^']+)'(?:, '[^']+')*\] are not supported"]


@pytest.mark.parametrize("expr", EVIL)
def test_known_evil_regexes_are_rejected(expr: str) -> None:
    """Slow on adversarial input, or nesting quantifiers over overlapping classes."""
    assert is_slow(regex.compile(expr), adversarial_inputs(expr)) or nested_quantifiers(expr), expr


@pytest.mark.parametrize("expr", SAFE)
def test_safe_regexes_pass(expr: str) -> None:
    assert not is_slow(regex.compile(expr), adversarial_inputs(expr))
    assert not nested_quantifiers(expr)


def _library_copy(tmp_path: Path, ids: list[str]) -> Path:
    root = tmp_path / "patterns"
    for pid in ids:
        (src,) = (ROOT / "patterns").rglob(f"{pid}.yaml")
        dest = root / src.parent.name
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
        shutil.copy(src.with_suffix(".log"), dest)
    return root


def test_lint_reports_every_problem_with_location_and_help(tmp_path: Path) -> None:
    root = _library_copy(tmp_path, ["host-oom-killed-service", "cuda-home-has-no-nvcc"])
    oom = root / "host" / "host-oom-killed-service.yaml"
    evil = "    - regex: '(\\w+\\s?)*oom-kill:constraint=(?P<constraint>CONSTRAINT_\\w+)'"
    text = oom.read_text().replace("    - regex: 'oom-kill:constraint=(?P<constraint>CONSTRAINT_\\w+)'", evil)
    oom.write_text(text)
    # a second host pattern that claims the OOM fixture's lines: an overlap
    (root / "host" / "host-memory-pressure.yaml").write_text(
        oom.read_text().replace("id: host-oom-killed-service", "id: host-memory-pressure")
        .replace("(\\w+\\s?)*", ""))
    shutil.copy(oom.with_suffix(".log"), root / "host" / "host-memory-pressure.log")
    (root / "toolchain" / "cuda-home-has-no-nvcc.log").unlink()
    (root / "toolchain" / "broken.yaml").write_text("title: [unclosed\n")
    problems = lint_library([root], [])
    kinds = {(p.check, p.path.name) for p in problems}
    assert ("schema", "broken.yaml") in kinds
    assert ("fixtures", "cuda-home-has-no-nvcc.yaml") in kinds
    assert ("schema", "cuda-home-has-no-nvcc.yaml") in kinds  # refines a pattern the copy lacks
    assert ("backtracking", "host-oom-killed-service.yaml") in kinds
    assert ("overlap", "host-oom-killed-service.log") in kinds
    back = next(p for p in problems if p.check == "backtracking")
    assert back.line == text.split("\n").index(evil) + 1
    assert all(p.help for p in problems)


def test_overlap_can_be_declared(tmp_path: Path) -> None:
    root = _library_copy(tmp_path, ["host-oom-killed-service"])
    oom = root / "host" / "host-oom-killed-service.yaml"
    twin = oom.read_text().replace("id: host-oom-killed-service", "id: host-memory-pressure")
    (root / "host" / "host-memory-pressure.yaml").write_text(twin + "overlaps: [host-oom-killed-service]\n")
    shutil.copy(oom.with_suffix(".log"), root / "host" / "host-memory-pressure.log")
    assert [p for p in lint_library([root], []) if p.check == "overlap"] == []


def test_benign_hits_fail_unless_known(tmp_path: Path) -> None:
    root = _library_copy(tmp_path, ["host-oom-killed-service"])
    benign = tmp_path / "quiet.log"
    benign.write_text("Jun 14 15:16:01 combo kernel: Out of memory: Killed process 1 (x)\n")
    problems = [p for p in lint_library([root], [benign]) if p.check == "benign"]
    assert len(problems) == 1 and "quiet.log:1" in problems[0].message
    (root / "known-false-positives.yaml").write_text(
        "host-oom-killed-service:\n  - file: quiet.log\n    reason: a test host that really ran out of memory\n")
    assert [p for p in lint_library([root], [benign]) if p.check == "benign"] == []


def test_a_trigger_broader_than_its_regex_on_benign_logs_is_reported(tmp_path: Path) -> None:
    """A `trigger:` cut down to a fragment common in healthy logs (a sweep once shipped
    `\\) failed: `, which slowed whole-file runs by a third) makes phase 2 read lines for nothing."""
    pid = "flashinfer-moe-ep-backend-not-built"
    root = _library_copy(tmp_path, [pid])
    path = root / "distributed" / f"{pid}.yaml"
    narrow = "      trigger: 'dlopen\\([^)\\n]*lib(?:nccl|nixl)[^)\\n]*\\) failed: '"
    text = path.read_text()
    assert narrow in text
    benign = [BENIGN / "BGL_2k.log"]
    assert [p for p in lint_library([root], benign) if p.check == "trigger"] == []
    path.write_text(text.replace(narrow, "      trigger: '\\) failed: '"))
    (problem,) = [p for p in lint_library([root], benign) if p.check == "trigger"]
    assert problem.path == path and "BGL_2k.log:" in problem.message and problem.help
    lines = path.read_text().split("\n")
    assert "dlopen" in lines[problem.line - 1] and lines[problem.line].strip() == "trigger: '\\) failed: '"


def test_the_library_lints_clean_including_benign_logs() -> None:
    problems = lint_library([ROOT / "patterns"], sorted(BENIGN.glob("*.log")))
    assert [str(p) for p in problems] == []


def test_patterns_new_drafts_a_pattern_and_fixture(tmp_path: Path) -> None:
    log = tmp_path / "svc.log"
    log.write_text("May 03 10:00:00 h python3[12]: RuntimeError: CUDA error 0x1f at /opt/x/kernel.cu:120 "
                   "token hf_abcdefghijklmnopqrstuvwxyzABCDEF12\n")
    lib = tmp_path / "lib"
    res = triage("patterns", "new", "team-cuda-error-x", "--from", f"{log}:1", "--area", "team", "--patterns", str(lib))
    assert res.returncode == 0, res.stderr
    fixture_path, pattern_path = lib / "team" / "team-cuda-error-x.log", lib / "team" / "team-cuda-error-x.yaml"
    fixture = fixture_path.read_text()
    assert "hf_abc" not in fixture and "[REDACTED]" in fixture
    drafted = pattern_path.read_text()
    assert r"0x[0-9a-fA-F]+" in drafted and r"\S+" in drafted
    # the next step it prints, run as printed, refuses the unfinished draft: TODOs, the `# ok` placeholder
    step = next(line for line in res.stdout.decode().splitlines() if "triage patterns test" in line)
    test_cmd, lint_cmd = step.split(". ", 1)[1].split(" && ")
    assert test_cmd == f"triage patterns test --patterns {lib} team-cuda-error-x"
    unfinished = triage(*test_cmd.split()[1:])
    assert unfinished.returncode == 1 and b"TODO placeholder" in unfinished.stdout
    assert b"placeholder line is left in the fixture" in unfinished.stdout
    linted = triage(*lint_cmd.split()[1:])
    assert linted.returncode == 1 and b"[unfinished]" in linted.stdout
    # finished: real text, a real near miss; the same commands pass
    pattern_path.write_text(drafted.replace("TODO one line naming the failure, not the detector",
                                            "Our kernel reported CUDA error 0x1f")
                            .replace("TODO what failed and why, in the words an engineer searches for.",
                                     "The team's kernel failed with a CUDA error code.")
                            .replace("TODO what the failure does to the service.", "The request fails.")
                            .replace("TODO a concrete step, with its command", "Read the kernel's log.")
                            .replace("TODO the upstream file that prints this, or the issue thread", "team kernel.cu"))
    fixture_path.write_text(fixture.replace("REPLACE WITH A REAL NEAR MISS: the same words in a harmless context",
                                            "RuntimeError: CUDA graphs disabled by the operator"))
    finished = triage(*test_cmd.split()[1:])
    assert finished.returncode == 0, finished.stdout


def test_patterns_stats_json() -> None:
    rows = json.loads(triage("patterns", "stats", "--format", "json").stdout)
    gate = next(r for r in rows if r["id"] == "flashinfer-sm12x-needs-cuda-12-9")
    assert gate["fixture_matched"] == gate["fixture_lines"] > 0
    assert sum(r["corpus_top"] for r in rows) == 20
    assert sum(r["benign_hits"] for r in rows) == 0


def test_an_all_pattern_claims_lines_only_where_its_other_lines_are(tmp_path: Path) -> None:
    """comfyui-cuda-malloc-async-unsupported needs CUDA 801 *and* a ComfyUI frame: its frame
    regex alone on another ComfyUI fixture is no overlap; once the 801 line is there, it is."""
    ids = ["comfyui-cuda-malloc-async-unsupported", "comfyui-model-type-not-detected"]
    root = _library_copy(tmp_path, ids)
    assert [p for p in lint_library([root], []) if p.check == "overlap"] == []
    fixture = root / "serving" / "comfyui-model-type-not-detected.log"
    fixture.write_text(fixture.read_text()
                       + "# match comfyui-model-type-not-detected\nRuntimeError: CUDA error: operation not supported\n")
    problems = [p for p in lint_library([root], []) if p.check == "overlap"]
    assert problems and all("comfyui-cuda-malloc-async-unsupported" in p.message for p in problems)
