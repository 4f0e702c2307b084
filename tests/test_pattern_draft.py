"""`triage patterns new ID --from FILE:LINE`: where the draft is written (the checkout it is run
in, or --out, never an installed package), and the regex it drafts: the message's stable core
without the logger's prefix, numbers as named groups, still matching the line it came from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import regex
import yaml

from analyzer.authoring.pattern_draft import draft_pattern, draft_regex, message_core
from analyzer.authoring.pattern_lint import lint_library
from tests.conftest import ROOT

# (the line as the log has it, pieces of its prefix that the regex must not hold, the named groups)
LINES: list[tuple[str, list[str], dict[str, str]]] = [
    # vLLM V1's engine core (patterns/runtime/triton-no-c-compiler.log)
    ("(EngineCore pid=8654) ERROR 08-22 20:13:29 [core.py:1349] torch._inductor.exc.InductorError: RuntimeError: "
     "Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.",
     ["EngineCore", "pid", "08-22", "20:13:29", "core.py", "1349", "ERROR"], {}),
    # vLLM (patterns/toolchain/cuda-no-kernel-image-for-device.log)
    ("ERROR 07-28 15:07:22 [core.py:632] RuntimeError: CUDA error: no kernel image is available for execution on "
     "the device", ["ERROR 07", "07-28", "15:07:22", "core.py"], {}),
    # older vLLM workers: file:line] without the bracket (patterns/ fixtures of multiproc workers)
    ("(VllmWorkerProcess pid=13359) ERROR 08-02 18:15:15 multiproc_worker_utils.py:226] RuntimeError: Cannot "
     "re-initialize CUDA in forked subprocess", ["VllmWorkerProcess", "08-02", "multiproc_worker_utils"], {}),
    # SGLang (patterns/serving/sglang-scheduler-watchdog-timeout.log)
    ("[2025-06-26 07:25:31 DP4 TP4] Pyspy failed to dump PID 113688. Error: /bin/bash: line 1: py-spy: command not "
     "found", ["2025-06-26", "07:25:31", "DP4", "TP4"], {"pid": "113688", "line": "1"}),
    ("[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)", ["2025-03-09", "TP4"],
     {"watchdog_timeout": "300"}),
    # glog (patterns/serving/tensorrt-engine-version-mismatch.log)
    ("E0530 23:11:46.299486 1 logging.cc:43] The engine plan file is not compatible with this version of TensorRT, "
     "expecting library version 5.1.2 got 5.1.5, please rebuild.", ["E0530", "23:11:46", "logging.cc", "299486"],
     {"version": "5.1.2", "got": "5.1.5"}),
    # a journal line of SGLang (examples/founding-incident.log)
    ("2026-05-03T09:58:51+0000 ct200 python3[51010]: [2026-05-03 09:58:51 TP0] Load weight begin. avail mem=93.12 GB",
     ["ct200", "python3", "51010", "09:58:51", "TP0"], {"mem": "93.12"}),
    # a journal line of vLLM, short form
    ("May 14 10:00:01 gpu-node-7 vllm[4321]: (EngineCore_DP0 pid=4400) ERROR 05-14 10:00:01 [core.py:711] "
     "EngineCore failed to start: rank 3 of 8 timed out after 600 seconds",
     ["gpu-node-7", "4321", "EngineCore_DP0", "4400", "05-14", "core.py"], {"rank": "3", "n1": "8", "after": "600"}),
    # Ollama's logfmt in the journal (patterns/serving/ollama-runner-load-timeout.log)
    ('Feb 19 06:00:01 echdxtv1kig0001 ollama[881]: time=2025-02-19T06:00:01.417Z level=ERROR source=sched.go:455 '
     'msg="error loading llama server" error="timed out waiting for llama runner to start - progress 0.00 - "',
     ["echdxtv1kig0001", "time=", "level=", "sched.go"], {"progress": "0.00"}),
    # Python logging's default formats, loguru, bracketed levels
    ("2025-01-02 10:00:00,123 - vllm.engine.async_llm_engine - ERROR - Engine background task failed, exit code 7",
     ["2025-01-02", "async_llm_engine", "ERROR"], {"code": "7"}),
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 2211) of binary: "
     "/usr/bin/python3", ["ERROR", "multiprocessing.api"], {"exitcode": "1", "local_rank": "0", "pid": "2211"}),
    ("2025-01-02 10:00:00.123 | ERROR    | sglang.srt.server:launch:42 - Rank 2 of 4 hit an illegal memory access",
     ["2025-01-02", "ERROR", "launch:42"], {"rank": "2", "n1": "4"}),
    ("[2024-05-12 10:01:02,123] [WARNING] [loss_scaler.py:190:update_scale] OVERFLOW! Rank 0 Skipping step.",
     ["2024-05-12", "WARNING", "loss_scaler"], {"rank": "0"}),
    # NCCL's own prefix (patterns/ fixtures of NCCL WARN lines)
    ("[2025-06-20 02:14:03] ubuntu:33207:33207 [0] allocator.cc:79 NCCL WARN Cuda failure 711 'peer mapping "
     "resources exhausted'", ["2025-06-20", "ubuntu", "33207", "allocator.cc"], {"failure": "711"}),
]


@pytest.mark.parametrize(("line", "prefix", "groups"), LINES, ids=[line[:40] for line, _, _ in LINES])
def test_the_drafted_regex_is_the_core_of_the_line(tmp_path: Path, line: str, prefix: list[str],
                                                   groups: dict[str, str]) -> None:
    log = tmp_path / "svc.log"
    log.write_text(line + "\n")
    draft = draft_pattern("team-failure", "team", f"{log}:1", tmp_path / "lib")
    rx = yaml.safe_load(draft.yaml_text)["match"]["any"][0]["regex"]
    m = regex.search(rx, line)
    assert m is not None, rx  # the regex still finds the line it was drafted from
    assert m.groupdict() == groups, rx
    assert [p for p in prefix if p in rx] == [], rx  # the logger's prefix is gone
    values = "".join(f" {k}={v}" for k, v in groups.items())
    assert f"# match{values}\n" in draft.log_text  # the fixture checks what the groups capture


def test_numbers_become_named_groups() -> None:
    rx, captures = draft_regex("rank 3 of 8: GPU 0 had 12 errors, rank 5 saw 0x1f at /opt/k.cu:120 in bf16 on sm_90")
    assert rx == (r"rank (?P<rank>\d+) of (?P<n1>\d+): GPU (?P<gpu>\d+) had (?P<had>\d+) errors, rank (?P<rank_2>\d+) "
                  r"saw (?P<saw>0x[0-9a-fA-F]+) at \S+:(?P<n2>\d+) in bf16 on sm_90")
    assert captures == {"rank": "3", "n1": "8", "gpu": "0", "had": "12", "rank_2": "5", "saw": "0x1f", "n2": "120"}
    assert draft_regex("failed at core.py:12 and self.retries=4")[1] == {"n1": "12", "retries": "4"}
    assert message_core("INFO 05-14 10:00:01 [core.py:1] ") == "[core.py:1]"  # nothing else: what is left


def test_a_redacted_secret_becomes_a_token_that_matches_any_secret(tmp_path: Path) -> None:
    line = "May 03 10:00:00 h python3[12]: 401 Client Error for url with token hf_abcdefghijklmnopqrstuvwxyzABCDEF12"
    log = tmp_path / "svc.log"
    log.write_text(line + "\n")
    draft = draft_pattern("team-auth", "team", f"{log}:1", tmp_path / "lib")
    rx = yaml.safe_load(draft.yaml_text)["match"]["any"][0]["regex"]
    assert "hf_abc" not in draft.yaml_text + draft.log_text and "REDACTED" not in rx
    assert regex.search(rx, line) and regex.search(rx, line.replace("hf_abcdef", "hf_zyxwvu"))


def triage_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "analyzer", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def _log(tmp_path: Path) -> Path:
    log = tmp_path / "svc.log"
    log.write_text(f"{LINES[3][0]}\n")
    return log


def test_new_writes_into_the_checkout_it_is_run_in(tmp_path: Path) -> None:
    checkout = tmp_path / "clone"
    (checkout / "patterns").mkdir(parents=True)
    shutil.copy(ROOT / "patterns" / "schema.json", checkout / "patterns")
    (checkout / "docs").mkdir()
    res = triage_in(checkout / "docs", "patterns", "new", "team-pyspy", "--from", f"{_log(tmp_path)}:1",
                    "--area", "serving")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (checkout / "patterns" / "serving").iterdir()) == ["team-pyspy.log",
                                                                                     "team-pyspy.yaml"]
    assert not list((ROOT / "patterns").rglob("team-pyspy.*"))
    assert f"cd {checkout} && python -m analyzer patterns test team-pyspy" in res.stdout
    # a pyproject.toml naming the project marks a checkout too
    other = tmp_path / "fresh"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "triage"\nversion = "0.1.0"\n')
    assert triage_in(other, "patterns", "new", "team-pyspy", "--from", f"{_log(tmp_path)}:1").returncode == 0
    assert (other / "patterns" / "runtime" / "team-pyspy.yaml").is_file()


def test_new_outside_a_checkout_refuses_and_writes_nothing(tmp_path: Path) -> None:
    log = _log(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text('[project]\nname = "another-project"\n')
    before = sorted(tmp_path.rglob("*"))
    res = triage_in(elsewhere, "patterns", "new", "team-pyspy", "--from", f"{log}:1")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "--out DIR" in res.stderr and "Traceback" not in res.stderr
    assert sorted(tmp_path.rglob("*")) == before
    assert not list((ROOT / "patterns").rglob("team-pyspy.*"))


def test_new_with_out_and_the_draft_passes_test_and_lint_once_finished(tmp_path: Path) -> None:
    lib = tmp_path / "team-patterns"
    res = triage_in(tmp_path, "patterns", "new", "team-pyspy", "--from", f"{_log(tmp_path)}:1", "--out", str(lib))
    assert res.returncode == 0, res.stderr
    pattern, fixture = lib / "runtime" / "team-pyspy.yaml", lib / "runtime" / "team-pyspy.log"
    assert f"triage patterns test --patterns {lib} team-pyspy && triage patterns lint --patterns {lib}" in res.stdout
    text = pattern.read_text()
    assert r"(?P<pid>\d+)" in text and "TP4" not in text
    pattern.write_text(text.replace("TODO one line naming the failure, not the detector", "py-spy is missing")
                       .replace("TODO what failed and why, in the words an engineer searches for.",
                                "SGLang's watchdog could not dump the stacks of process {pid}: py-spy is missing.")
                       .replace("TODO what the failure does to the service.", "No stacks for the hang.")
                       .replace("TODO a concrete step, with its command", "pip install py-spy")
                       .replace("TODO the upstream file that prints this, or the issue thread", "sglang watchdog"))
    fixture.write_text(fixture.read_text().replace("REPLACE WITH A REAL NEAR MISS: the same words in a harmless "
                                                   "context", "[2025-06-26 07:25:31 DP4 TP4] Pyspy dumped PID 113688"))
    tested = triage_in(tmp_path, "patterns", "test", "--patterns", str(lib), "team-pyspy")
    assert tested.returncode == 0 and "1 passed, 0 failed" in tested.stdout, tested.stdout
    assert [str(p) for p in lint_library([lib])] == []  # both engines compile the named groups
