"""Readers of the non-journal forms, compressed inputs, and form detection."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from pathlib import Path

import pytest
import zstandard

from analyzer.choices import InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.readers import parse_lines
from analyzer.readers.detect import detect, looks_binary
from analyzer.readers.worker import split_worker
from analyzer.triage import analyze
from tests.conftest import CORPUS, GATE, ROOT, root_id


def parse(text: str, form: InputForm | None = None) -> list:  # type: ignore[type-arg]
    raw = text.encode()
    return parse_lines(raw.rstrip(b"\n").split(b"\n"), form or detect(raw))


def test_dmesg_joins_nvrm_continuation_lines() -> None:
    records = parse((CORPUS / "606-xid79-fallenoffbus-nvsentinel-155.log").read_text())
    assert records[0].message.split("\n") == [
        "NVRM: The NVIDIA GPU 0000:b3:00.0",
        "NVRM: (PCI ID: 10de:26b5) installed in this system has",
        "NVRM: fallen off the bus and is not responding to commands.",
    ]
    assert (records[0].line, records[0].end_line, records[0].time) == (1, 3, "1843.308145")
    assert records[1].line == 4


def test_dmesg_human_and_level_forms() -> None:
    records = parse("[Sun May  3 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
                    "kern  :err   : [  12.345678] nvidia: module verification failed\n")
    assert [r.time for r in records] == ["Sun May  3 10:00:00 2026", "12.345678"]
    assert records[1].priority == 3
    assert records[0].message.startswith("NVRM: Xid")


def test_syslog_hash012_becomes_newlines() -> None:
    records = parse((CORPUS / "501-nvrm-api-mismatch-after-driver-update-syslog.log").read_text())
    nvrm = records[-1]
    assert nvrm.host == "gpu-0" and nvrm.unit == "kernel"
    assert nvrm.message.split("\n")[1] == "NVRM: this kernel module has the version 530.30.02.  Please"


def test_journal_lines_pasted_without_their_host() -> None:
    # systemd#20464: a maintainer's journal lines pasted without the host name; a kernel line
    # of the same form. `systemd[1]:` is the ident, never the host.
    records = parse("Aug 18 16:28:57 systemd[1]: Started /usr/bin/sleep 5.\n"
                    "Aug 18 16:28:58 systemd[1]: run-u386.service: Service reached runtime time limit. Stopping.\n"
                    "Aug 18 16:28:58 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
                    "Jun 02 10:00:01 gpu-node-03 systemd[1]: vllm.service: Deactivated successfully.\n")
    assert [(r.host, r.unit, r.pid) for r in records] == [
        (None, "systemd", 1), (None, "systemd", 1), (None, "kernel", None), ("gpu-node-03", "systemd", 1)]
    assert records[1].message.startswith("run-u386.service: Service reached")
    assert records[2].message.startswith("NVRM: Xid")


def test_docker_json_file_lines() -> None:
    lines = [json.dumps({"log": "Traceback (most recent call last):\n", "stream": "stderr",
                         "time": "2026-05-03T10:00:00.1Z"}),
             json.dumps({"log": "ValueError: boom\n", "stream": "stderr", "time": "2026-05-03T10:00:00.2Z"})]
    text = "\n".join(lines) + "\n"
    assert detect(text.encode()) is InputForm.docker
    records = parse(text)
    assert [r.message for r in records] == ["Traceback (most recent call last):", "ValueError: boom"]
    assert records[1].time == "2026-05-03T10:00:00.2Z"


def test_docker_timestamps_are_stripped_from_console_lines() -> None:
    records = parse((CORPUS / "502-docker-triton-jit-python-h-missing.log").read_text())
    assert records[0].time == "2025-10-30T21:54:45.622419515Z"
    assert records[0].message.startswith("/tmp/tmpbe9ryx74/cuda_utils.c:5:10: fatal error: Python.h")


@pytest.mark.parametrize(("line", "worker", "rest"), [
    ("(VllmWorker rank=3 pid=1234) ERROR 05-03 oops", "VllmWorker rank=3 pid=1234", "ERROR 05-03 oops"),
    ("(VllmWorkerProcess pid=221) ERROR x", "VllmWorkerProcess pid=221", "ERROR x"),
    ("(StageEngineCoreProc pid=8146) INFO y", "StageEngineCoreProc pid=8146", "INFO y"),
    # Ray's driver shows its workers' output (ray/_private/worker.py, print_worker_logs): a task's
    # bare pid, an actor's name (colons in Serve's), the node's address when it is another node's
    ("(pid=45601) task", "pid=45601", "task"),
    ("(RayWorkerWrapper pid=243, ip=10.99.48.141) ERROR x", "RayWorkerWrapper pid=243, ip=10.99.48.141", "ERROR x"),
    ("(ServeReplica:default:LLMServer:qwen pid=9) INFO y", "ServeReplica:default:LLMServer:qwen pid=9", "INFO y"),
    ("(raylet, ip=10.0.0.2) [2026-05-03] x", "raylet, ip=10.0.0.2", "[2026-05-03] x"),
    ("(autoscaler +15m30s) Adding 1 node(s)", "autoscaler +15m30s", "Adding 1 node(s)"),
    ("(see below) text", None, "(see below) text"),
    ("[2026-05-03 10:00:00 TP3] Load weight begin.", "TP3", "Load weight begin."),
    ("[2026-05-03 10:00:00 DP1 TP3 EP3] x", "DP1 TP3 EP3", "x"),
    ("[rank0]: Traceback (most recent call last):", "rank0", "Traceback (most recent call last):"),
    ("[notaworker] text", None, "[notaworker] text"),
    # container logs: Compose's service column (v2, v1), `kubectl logs --prefix`
    ("fauxpilot-triton-1         | terminate called", "container fauxpilot-triton-1", "terminate called"),
    ("qna-transformers_1  | RuntimeError: x", "container qna-transformers_1", "RuntimeError: x"),
    ("[pod/vllm-0/vllm] INFO x", "container pod/vllm-0/vllm", "INFO x"),
    ("vllm-1  | (VllmWorker rank=1 pid=7) ERROR x", "container vllm-1 VllmWorker rank=1 pid=7", "ERROR x"),
    ("GPU-0 | 45C | P0", None, "GPU-0 | 45C | P0"),  # a table row: Compose pads with two spaces at least
    ("| 0  NVIDIA A100 | Off |", None, "| 0  NVIDIA A100 | Off |"),
])
def test_worker_prefixes(line: str, worker: str | None, rest: str) -> None:
    assert split_worker(line)[0] == worker
    assert split_worker(line)[2] == rest


def test_interleaved_worker_tracebacks_are_rebuilt_apart(library: CompiledLibrary) -> None:
    from analyzer.events import build_events

    text = "\n".join([
        "(VllmWorker rank=0 pid=10) Traceback (most recent call last):",
        "(VllmWorker rank=1 pid=11) Traceback (most recent call last):",
        '(VllmWorker rank=0 pid=10)   File "/a.py", line 1, in f',
        '(VllmWorker rank=1 pid=11)   File "/b.py", line 2, in g',
        "(VllmWorker rank=0 pid=10) RuntimeError: first",
        "(VllmWorker rank=1 pid=11) ValueError: second",
    ])
    events = [e for e in build_events(parse(text)) if e.kind.value == "traceback"]
    assert [(e.exc_type, e.exc_message, e.frames[0].file) for e in events] == [
        ("RuntimeError", "first", "/a.py"), ("ValueError", "second", "/b.py")]


def test_every_corpus_log_is_read_in_its_form() -> None:
    expected = {"501": InputForm.journal_short, "606": InputForm.kernel}
    for log in sorted(CORPUS.glob("*.log")):
        form = detect(log.read_bytes()[:65536])
        assert form is expected.get(log.name[:3], InputForm.console), log.name
        assert parse(log.read_text(), form), log.name


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_inputs(tmp_path: Path, suffix: str, library: CompiledLibrary) -> None:
    data = (ROOT / "examples" / "founding-incident.log").read_bytes()
    path = tmp_path / f"incident.log{suffix}"
    path.write_bytes(gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data))
    report = analyze([str(path)], library)
    assert report.inputs[0].lines == 63
    assert root_id(report.findings[0]) == GATE
    assert [e.line for e in report.findings[0].evidence] == [2, 8, 18]


def test_several_files_keep_their_own_paths_and_lines(tmp_path: Path, library: CompiledLibrary) -> None:
    a = CORPUS / "602-shm-nccl-docker-342.log"
    b = ROOT / "examples" / "founding-incident.log"
    report = analyze([str(a), str(b)], library)
    assert [i.path for i in report.inputs] == [str(a), str(b)]
    chain = next(f for f in report.findings if root_id(f) == GATE)
    assert {e.path for e in chain.evidence} == {str(b)}


def test_input_form_override(library: CompiledLibrary) -> None:
    path = ROOT / "examples" / "founding-incident.log"
    report = analyze([str(path)], library, form=InputForm.console)
    assert report.inputs[0].format == "console"
    assert root_id(report.findings[0]) == GATE


@pytest.mark.parametrize(("data", "binary"), [
    (b"\x7fELF\x02\x01\x01\x00" + bytes(56) + b"\x00\x02\x3e\x00" * 50, True),  # an executable
    (random.Random(0).randbytes(4096), True),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + zlib.compress(random.Random(1).randbytes(3000)), True),
    (b"ok\n" * 10, False),
    # PyTorch's DataLoader writes a NUL after its worker-crash message (a real capture)
    ((ROOT / "tests/data/cpu-captures/loader-segv.log").read_bytes(), False),
    # a crash left a run of NULs in a syslog file; a Windows shell's redirect writes UTF-16
    (b"Jan 1 00:00:01 host kernel: ok\n" + bytes(3000) + b"Jan 1 00:00:02 host systemd[1]: a.service: Failed\n", False),
    ("RuntimeError: CUDA error: out of memory\r\n".encode("utf-16"), False),
])
def test_stray_nul_bytes_do_not_make_a_log_binary(data: bytes, binary: bool) -> None:
    assert looks_binary(data) is binary


def test_a_log_with_a_nul_byte_is_read_without_it(library: CompiledLibrary) -> None:
    path = ROOT / "tests/data/cpu-captures/loader-segv.log"
    assert b"\x00" in path.read_bytes()
    report = analyze([str(path)], library, knowledge=False)
    assert report.findings[0].id == "torch-dataloader-worker-died"
    assert all("\x00" not in e.text for f in report.findings for e in f.evidence)
    records = parse(path.read_bytes().decode(), InputForm.console)
    assert any(r.message == "Traceback (most recent call last):" for r in records)


def test_a_utf16_log_is_read_as_text(tmp_path: Path, library: CompiledLibrary) -> None:
    path = tmp_path / "powershell.log"
    path.write_bytes("Loading...\r\nRuntimeError: CUDA error: out of memory\r\n".encode("utf-16"))
    report = analyze([str(path)], library, knowledge=False)
    assert [f.id for f in report.findings[:1]] == ["cuda-out-of-memory"]
