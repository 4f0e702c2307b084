"""Logs as people paste them into tickets and threads: worker prefixes with blank lines
between the lines (GitHub renders a pasted log that way), a quoted reply, ANSI colours and a
Markdown fence, Windows paths, and errors that no pattern knows (reported, never dropped)."""

from __future__ import annotations

from analyzer.choices import FindingKind
from analyzer.library.compile import CompiledLibrary
from tests.conftest import ROOT, analyze_bytes

PASTES = ROOT / "tests" / "data" / "pastes"

# flashinfer-ai/flashinfer#3674 (RTX 5090, CUDA 12.8), as pasted: a vLLM-Omni worker prefix on
# every line, an empty line after each, the last line cut
ISSUE_3674 = (PASTES / "flashinfer-3674-worker-prefix-blank-lines.log").read_text()


def ids(data: str, library: CompiledLibrary) -> list[str]:
    return [f.id for f in analyze_bytes(data.encode(), library).findings]


def test_worker_prefixes_with_blank_lines_and_a_cut_last_line(library: CompiledLibrary) -> None:
    assert ids(ISSUE_3674, library)[0] == "flashinfer-no-eligible-cuda-arch"


def test_a_quoted_reply_is_read_like_the_log(library: CompiledLibrary) -> None:
    quoted = "".join(f"> {line}\n" for line in [
        "Traceback (most recent call last):",
        '  File "/venv/lib/python3.12/site-packages/flashinfer/jit/core.py", line 108, in check_cuda_arch',
        '    raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")',
        "RuntimeError: FlashInfer requires GPUs with sm75 or higher"])
    report = analyze_bytes(quoted.encode(), library)
    assert report.findings[0].id == "flashinfer-no-eligible-cuda-arch"
    assert not any(e.text.startswith(">") for f in report.findings for e in f.evidence)


def test_ansi_colours_and_a_markdown_fence(library: CompiledLibrary) -> None:
    paste = ("```\n\x1b[1;31mFailed to get device capability: SM 12.x requires CUDA >= 12.9.\x1b[0m\n```\n")
    report = analyze_bytes(paste.encode(), library)
    top = report.findings[0]
    assert top.id == "flashinfer-sm12x-needs-cuda-12-9" and "\x1b" not in top.evidence[0].text


def test_an_unknown_error_is_reported_with_the_project_that_raised_it(library: CompiledLibrary) -> None:
    paste = ("(RayWorkerWrapper pid=2231) Traceback (most recent call last):\n"
             '(RayWorkerWrapper pid=2231)   File "C:\\Users\\me\\venv\\Lib\\site-packages\\vllm\\worker\\worker.py", '
             "line 120, in init_device\n"
             "(RayWorkerWrapper pid=2231)     self.model_runner.load()\n"
             "(RayWorkerWrapper pid=2231) KeyError: 'model.layers.0.mlp.experts.w13_weight'\n")
    report = analyze_bytes(paste.encode(), library)
    [top] = report.findings
    assert top.kind is FindingKind.unrecognised
    assert top.title == "Not recognised: KeyError: 'model.layers.0.mlp.experts.w13_weight'"
    assert "raised in vllm\\worker\\worker.py, line 120, in init_device (vLLM)" in top.cause
    assert "the cause is not known to triage" in top.cause and top.captures == {"program": "vllm"}
    assert any("https://github.com/vllm-project/vllm/issues?q=KeyError+model+layers" in s for s in top.fix)


def test_an_unknown_error_ranks_above_the_consequences_and_below_causes(library: CompiledLibrary) -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.12/site-packages/sglang/srt/server.py", line 10, in launch\n'
           "    raise ValueError(msg)\n"
           "ValueError: unsupported value for --attention-backend: fa9\n"
           "sglang.service: Main process exited, code=killed, status=9/KILL\n")
    kinds = [(f.kind, f.id) for f in analyze_bytes(log.encode(), library).findings]
    assert kinds[0][0] == FindingKind.unrecognised and kinds[1] == ("pattern", "service-killed-by-sigkill")
    cause_first = analyze_bytes(("Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n" + log).encode(),
                                library).findings
    assert [f.kind for f in cause_first][:2] == ["pattern", FindingKind.unrecognised]


def test_warnings_are_not_errors(library: CompiledLibrary) -> None:
    log = ("UserWarning: TypedStorage is deprecated. It will be removed in the future.\n"
           "FutureWarning: `resume_download` is deprecated and will be removed in version 1.0.0.\n")
    assert analyze_bytes(log.encode(), library).findings == []


def test_error_lines_of_compilers_tools_glog_and_nccl_are_reported(library: CompiledLibrary) -> None:
    lines = {  # real lines from public threads (tests/data/training: b3-11, b4-03, b4-09, b4-13, b1-19)
        "/opt/conda/lib/python3.8/site-packages/deepspeed/ops/csrc/includes/custom_cuda_layers.h:12:10: "
        "fatal error: curand_kernel.h: No such file or directory": "cuda-headers-missing-for-build",
        "Error: stat nvidia.com/gpu=all: no such file or directory": "cdi-device-name-not-resolved",
        # cobra's format ("Error: unknown flag: %s"), as docker, podman and ollama print it
        "Error: unknown flag: --gpuss": "Not recognised: Error: unknown flag: --gpuss",
        "E0105 19:55:43.488469 1 nvc_ldcache.c:384] could not start /sbin/ldconfig: process execution failed: "
        "no such file or directory": "nvidia-container-cli-ldconfig-failed",  # glog's format, now a pattern's
        "ERROR  : Failed to create user namespace: Permission denied": "user-namespace-creation-denied",
        # apptainer's logger format ("FATAL:   %s")
        "FATAL:   could not open image /data/model.sif: failed to retrieve path for /data/model.sif":
            "Not recognised: FATAL:   could not open image /data/model.sif",
        "::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.":
            "Not recognised: NCCL WARN XML Import Channel : dev 1 not found.",
    }
    for line, expected in lines.items():
        top = analyze_bytes((line + "\n").encode(), library).findings[0]
        assert (top.id if top.kind == "pattern" else top.title).startswith(expected), (line, top.title)


def test_ordinary_error_words_in_healthy_logs_stay_silent(library: CompiledLibrary) -> None:
    healthy = ("Dec 10 07:51:15 LabSZ sshd[24324]: error: Received disconnect from 195.154.37.122: 3: "
               "com.jcraft.jsch.JSchException: Auth fail [preauth]\n"
               "2570021 node-5 action error 1074121927 1 risBoot (command 1903) Error: Timed out while waiting\n")
    assert analyze_bytes(healthy.encode(), library).findings == []
