"""`triage patterns new ID --from FILE:LINE`: where the draft is written (the checkout it is run
in, or --out, never an installed package), and the regex it drafts: the message's stable core
without the logger's prefix, numbers as named groups, still matching the line it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
import yaml

from analyzer.authoring.pattern_draft import draft_pattern, draft_regex, message_core

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
