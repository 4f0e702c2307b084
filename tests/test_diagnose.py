"""The diagnosis engine: facts, version rules, causal chains, ranking with reasons,
folding of symptoms, dedupe across ranks and restarts, timelines."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.clock import to_seconds
from analyzer.library.compile import CompiledLibrary
from analyzer.library.rules import Table, holds
from tests.conftest import analyze_bytes

TABLES = {"min_driver_for_cuda": Table(description="d", source="release notes", rows={"12": "525.60.13"})}


def test_conditions() -> None:
    facts = {"nvcc_version": "12.8", "gpu_sm": "12.0", "driver_version": "470.82.01", "torch_cuda": "12.4"}
    assert holds("nvcc_version < 12.9", facts, {}) is True
    assert holds("gpu_sm >= 12.0", facts, {}) is True
    assert holds("driver_version < min_driver_for_cuda[torch_cuda]", facts, TABLES) is True
    assert holds("python_version >= 3.10", facts, {}) is None  # unknown fact: neither true nor false


def test_clock_reads_every_form() -> None:
    iso = to_seconds("2026-05-03T09:58:10+0000")
    assert iso == to_seconds("2026-05-03T09:58:10Z") == to_seconds("1777802290000000") == 1777802290.0
    assert to_seconds("2026-05-03T11:58:10+02:00") == iso
    assert to_seconds("Fri 2026-05-03 09:58:10 UTC") == iso
    assert to_seconds("May 03 10:00:01") - to_seconds("May 03 10:00:00") == 1  # type: ignore[operator]
    assert to_seconds("not a time") is None


COLLECT_ENV = b"""PyTorch version: 2.5.1+cu124
CUDA used to build PyTorch: 12.4
GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version: 470.82.01
"""


def test_rule_fires_on_facts_alone(library: CompiledLibrary) -> None:
    report = analyze_bytes(COLLECT_ENV, library)
    (finding,) = report.findings
    assert (finding.id, finding.kind) == ("driver-older-than-torch-cuda", "rule")
    assert "12.4" in finding.cause and "470.82.01" in finding.cause and "525.60.13" in finding.cause
    assert [e.line for e in finding.evidence] == [4, 2]
    assert report.facts["gpu_sm"].value == "9.0" and report.facts["gpu_sm"].derived


# two nodes of one torchrun job, as NVIDIA/nccl prints them at NCCL_DEBUG=INFO (the banner bare)
MIXED_NCCL = b"""\
node-a:5257:5257 [0] NCCL INFO cudaDriverVersion 12000
NCCL version 2.14.3+cuda11.7
node-a:5257:5259 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 30 - Init START
node-b:1017:1017 [0] NCCL INFO cudaDriverVersion 12000
NCCL version 2.19.3+cuda12.3
node-b:1017:1018 [0] NCCL INFO comm 0x56 rank 1 nranks 2 cudaDev 0 busId 30 - Init START
"""


def test_a_rule_on_a_fact_seen_with_two_values(library: CompiledLibrary) -> None:
    finding = analyze_bytes(MIXED_NCCL, library).findings[0]
    assert (finding.id, finding.kind) == ("nccl-versions-differ-across-ranks", "rule")
    assert "2.14.3 and 2.19.3" in finding.title
    assert [e.line for e in finding.evidence] == [2, 5]
    # one release seen twice (another build suffix, a torch error naming it) is not a mix
    same = MIXED_NCCL.replace(b"2.14.3+cuda11.7", b"2.19.3+cuda12.1")
    assert all(f.id != "nccl-versions-differ-across-ranks" for f in analyze_bytes(same, library).findings)
    # NCCL's own check (2.23+) fired too: it is the finding, and the banners are its support
    checked = MIXED_NCCL + b"node-b:1017:1018 [0] init.cc:1047 NCCL WARN Mismatched NCCL version detected : rank 0 version 21403 rank 1 version 21903\n"
    top = analyze_bytes(checked, library).findings[0]
    assert top.id == "nccl-version-mismatch-between-ranks"
    assert any("rule nccl-versions-differ-across-ranks confirms it" in r and "2.14.3 and 2.19.3" in r for r in top.reasons)


# PaddlePaddle's device banner (paddle/fluid/platform/device_context.cc, 2.x), then Thrust's error
PADDLE_CU102_ON_SM86 = b"""\
W0214 14:20:51.479054 24961 device_context.cc:447] Please NOTE: device: 0, GPU Compute Capability: 8.6, Driver API Version: 11.4, Runtime API Version: 10.2
W0214 14:20:51.479620 24961 device_context.cc:465] device: 0, cuDNN Version: 8.3.
RuntimeError: parallel_for failed: cudaErrorNoKernelImageForDevice: no kernel image is available for execution on the device
"""


def test_a_paddle_build_older_than_the_gpu_is_named_from_its_banner(library: CompiledLibrary) -> None:
    top = analyze_bytes(PADDLE_CU102_ON_SM86, library).findings[0]
    assert (top.id, top.kind) == ("paddle-cuda-build-older-than-gpu", "rule")
    assert "CUDA 10.2" in top.title and "8.6" in top.title and "11.0" in top.title
    # a CUDA 11.2 build holds sm_86 code; a CUDA 9.0 build of Paddle 1.x holds sm_70 code, which runs on 7.0
    for banner in (b"GPU Compute Capability: 8.6, Driver API Version: 11.4, Runtime API Version: 11.2",
                   b"CUDA Capability: 70, Driver API Version: 9.2, Runtime API Version: 9.0"):
        log = PADDLE_CU102_ON_SM86.replace(
            b"GPU Compute Capability: 8.6, Driver API Version: 11.4, Runtime API Version: 10.2", banner)
        assert all(f.id != "paddle-cuda-build-older-than-gpu" for f in analyze_bytes(log, library).findings)


TOP_SNAPSHOT = b"""top - 09:12:01 up  2:14,  1 user,  load average: 44.10, 30.02, 15.33
Tasks: 610 total,   4 running, 606 sleeping,   0 stopped,   0 zombie
MiB Mem :  64215.3 total,    402.8 free,  63611.0 used,    201.5 buff/cache
MiB Swap:      0.0 total,      0.0 free,      0.0 used.    310.2 avail Mem
"""


def test_a_top_snapshot_of_a_host_out_of_memory_is_named_from_its_avail_figure(library: CompiledLibrary) -> None:
    """top's 'avail Mem' under 1 GiB on a host of 16 GiB or more is a host out of RAM; a small
    'free' with plenty available (page cache) is a healthy host, and a small machine is not judged."""
    top = analyze_bytes(TOP_SNAPSHOT, library).findings[0]
    assert (top.id, top.kind) == ("host-memory-exhausted-in-top-snapshot", "rule")
    assert "310.2 MiB available of 64215.3 MiB" in top.title
    healthy = TOP_SNAPSHOT.replace(b"    310.2 avail Mem", b"  52110.4 avail Mem")
    small = TOP_SNAPSHOT.replace(b"64215.3 total", b" 7821.0 total")
    for log in (healthy, small):
        assert all(f.id != "host-memory-exhausted-in-top-snapshot" for f in analyze_bytes(log, library).findings)


def test_facts_contradicting_a_pattern_lower_its_confidence(library: CompiledLibrary) -> None:
    gate = b"Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n"
    plain = analyze_bytes(gate, library).findings[0]
    newer = analyze_bytes(b"Cuda compilation tools, release 13.0, V13.0.48\n" + gate, library).findings[0]
    assert (plain.confidence.value, newer.confidence.value) == ("high", "medium")
    assert newer.score < plain.score
    assert any("contradict" in r and "13.0 >= 12.9" in r for r in newer.reasons)


def test_root_cause_ranks_above_its_symptoms(library: CompiledLibrary) -> None:
    log = b"""include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device
include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 (size 9637888)
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
"""
    report = analyze_bytes(log, library)
    assert report.findings[0].id == "nccl-shm-dev-shm-too-small"
    assert "nccl-unhandled-system-error" in [s.id for s in report.findings[0].symptoms]
    assert "nccl-unhandled-system-error" not in [f.id for f in report.findings]


def test_chain_xid_then_illegal_memory_access(library: CompiledLibrary) -> None:
    log = b"""2026-05-03T10:00:00+0000 gpu-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.
2026-05-03T10:00:02+0000 gpu-3 python3[4242]: RuntimeError: CUDA error: an illegal memory access was encountered
"""
    top = analyze_bytes(log, library).findings[0]
    assert top.kind == "chain" and top.id == "xid-then-cuda-or-nccl-failure"
    assert top.members[0] == "gpu-fell-off-bus-xid-79"
    assert [e.line for e in top.evidence] == [1, 2]


def test_chain_driver_upgrade_then_mismatch(library: CompiledLibrary) -> None:
    log = b"""2023-08-10 06:25:13 upgrade nvidia-driver-535:amd64 535.54.03-0ubuntu1 535.86.05-0ubuntu1
Failed to initialize NVML: Driver/library version mismatch
"""
    top = analyze_bytes(log, library).findings[0]
    assert (top.id, top.members[0]) == ("driver-upgrade-then-version-mismatch", "nvidia-driver-kernel-module-mismatch")


def test_chain_needs_order_and_window(library: CompiledLibrary) -> None:
    """The Xid after the failure, or a day before it, is not its cause."""
    after = b"""2026-05-03T10:00:02+0000 gpu-3 python3[4242]: RuntimeError: CUDA error: an illegal memory access was encountered
2026-05-03T10:00:09+0000 gpu-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.
"""
    stale = b"""2026-05-02T10:00:00+0000 gpu-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.
2026-05-03T10:00:02+0000 gpu-3 python3[4242]: RuntimeError: CUDA error: an illegal memory access was encountered
"""
    for log in (after, stale):
        assert all(f.kind != "chain" for f in analyze_bytes(log, library).findings)


def test_dedupe_across_ranks_and_restarts(library: CompiledLibrary) -> None:
    lines = []
    for run in range(3):
        lines.append(f"May 03 10:0{run}:00 h systemd[1]: Started vllm.service - vLLM.")
        for rank in range(8):
            lines.append(f"May 03 10:0{run}:01 h python3[{100 * run + rank}]: (VllmWorker rank={rank} pid="
                         f"{100 * run + rank}) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                         "2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.00 GiB is free.")
    report = analyze_bytes(("\n".join(lines) + "\n").encode(), library)
    oom = next(f for f in report.findings if f.id == "cuda-out-of-memory")
    assert (oom.count, oom.processes, oom.runs) == (24, 24, 3)
    assert oom.evidence[0].line == 2  # the first occurrence is kept as evidence


def test_timeline_with_restarts(library: CompiledLibrary) -> None:
    log = b"""2026-05-03T09:58:10+0000 h kernel: Out of memory: Killed process 48213 (python3) total-vm:1kB
2026-05-03T09:58:11+0000 h systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL
2026-05-03T09:58:31+0000 h systemd[1]: sglang.service: Scheduled restart job, restart counter is at 1.
2026-05-03T09:58:31+0000 h systemd[1]: Started sglang.service - SGLang.
2026-05-03T10:08:31+0000 h python3[9]: [2026-05-03 10:08:31] The server is fired up and ready to roll!
"""
    timeline = analyze_bytes(log, library).timeline
    assert [(t.kind, t.line, t.unit) for t in timeline] == [
        ("host-oom-killed-service", 1, "kernel"), ("exit", 2, "sglang.service"), ("restart", 3, "sglang.service"),
        ("start", 4, "sglang.service"), ("ready", 5, "python3")]
    assert timeline[0].time == "2026-05-03T09:58:10Z"


def test_chain_disk_full_then_failures(library: CompiledLibrary) -> None:
    log = b"""2026-05-03T10:00:00+0000 h ollama[7]: Error: write /usr/share/ollama/.ollama/models/blobs/sha256-b8dab3-partial: no space left on device
2026-05-03T10:05:00+0000 h python3[9]: safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer
"""
    top = analyze_bytes(log, library).findings[0]
    assert (top.id, top.members[0]) == ("disk-full-then-failures", "disk-full-no-space-left-on-device")
    assert "checkpoint-file-corrupted" in top.members


BOOT = b"""Mar 02 08:00:03 gpu-7 systemd[1]: Started ollama.service - Ollama Service.
Mar 02 08:00:04 gpu-7 ollama[812]: ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected
Mar 02 08:00:09 gpu-7 kernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024
"""


def test_chain_a_gpu_program_ran_before_the_driver_loaded(library: CompiledLibrary) -> None:
    top = analyze_bytes(BOOT, library).findings[0]
    assert (top.id, top.members) == ("gpu-looked-for-before-driver-loaded", ["ggml-cuda-init-failed"])
    assert [e.line for e in top.evidence] == [2, 3]
    assert top.fix[0].startswith("Order the service after the driver") and "Restart=on-failure" in top.fix[1]
    # the chain's own steps come first, then the error's
    assert len(top.fix) > 2
    # the driver loaded first: the usual order, no chain
    lines = BOOT.split(b"\n")
    driver_first = b"\n".join([lines[2], lines[0], lines[1]]) + b"\n"
    assert all(f.id != top.id for f in analyze_bytes(driver_first, library).findings)


def test_chain_crash_loop_hits_start_limit(library: CompiledLibrary) -> None:
    crash = "2026-05-03T10:00:0{i}+0000 h python3[{pid}]: ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"
    lines = [crash.format(i=i, pid=100 + i) for i in range(3)]
    lines.append("2026-05-03T10:00:09+0000 h systemd[1]: vllm.service: Start request repeated too quickly.")
    report = analyze_bytes(("\n".join(lines) + "\n").encode(), library)
    top = report.findings[0]
    assert (top.id, top.members[0]) == ("crash-loop-hits-start-limit", "cuda-runtime-library-not-found")
    assert top.evidence[-1].line == 4 and "systemd-start-limit-hit" in top.members


TEAM_START = """title: Our launcher printed its start banner
id: team-launcher-began
status: stable
role: signal
marks: start
severity: info
confidence: high
area: lifecycle
description: The team's launcher started a new serving process.
why: Starts split a log into runs.
match:
  any:
    - regex: '^TEAM LAUNCHER BEGIN$'
fix: ["Nothing to fix: a lifecycle marker."]
source: our launcher's banner
"""


def test_a_lifecycle_signal_declares_its_timeline_mark_in_its_file(tmp_path: Path) -> None:
    """A team's start banner counts runs and shows on the timeline from its `marks:` alone."""
    from analyzer.triage import load

    folder = tmp_path / "lifecycle"
    folder.mkdir()
    (folder / "team-launcher-began.yaml").write_text(TEAM_START)
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    log = "\n".join(["TEAM LAUNCHER BEGIN", oom, "TEAM LAUNCHER BEGIN", oom, ""]).encode()
    with_mark = analyze_bytes(log, load([tmp_path]))
    found = next(f for f in with_mark.findings if f.id == "cuda-out-of-memory")
    assert found.runs == 2 and [t.kind for t in with_mark.timeline][:2] == ["start", "cuda-out-of-memory"]
    (folder / "team-launcher-began.yaml").write_text(TEAM_START.replace("marks: start\n", ""))
    without = analyze_bytes(log, load([tmp_path]))
    assert next(f for f in without.findings if f.id == "cuda-out-of-memory").runs == 1
    assert "start" not in [t.kind for t in without.timeline]


def test_only_a_signal_may_mark_the_timeline(tmp_path: Path) -> None:
    from analyzer.errors import PatternError
    from analyzer.library.load import load_pattern

    path = tmp_path / "lifecycle" / "team-launcher-began.yaml"
    path.parent.mkdir()
    path.write_text(TEAM_START.replace("role: signal\n", ""))
    with pytest.raises(PatternError, match="`marks` is for lifecycle signals"):
        load_pattern(path)


TEAM_OOM = """title: Our loader ran out of GPU memory while placing the adapters
id: team-loader-adapters-oom
status: stable
severity: medium
confidence: medium
area: runtime
description: The team's loader places every adapter on the GPU at start; too many adapters do not fit.
why: The service never becomes ready.
match:
  any:
    - regex: 'adapter placement failed: out of GPU memory'
fix: ["Lower MAX_ADAPTERS in the loader's config."]
source: our loader's message
refines: [cuda-out-of-memory]
"""


def test_a_specific_pattern_outranks_the_general_one_it_refines(tmp_path: Path) -> None:
    """Found together, the pattern that refines a more general one ranks first, whatever their
    severities, and the general one folds under it; without `refines:` the general one leads."""
    from analyzer.triage import load

    folder = tmp_path / "runtime"
    folder.mkdir()
    (folder / "team-loader-adapters-oom.yaml").write_text(TEAM_OOM)
    log = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
           b"adapter placement failed: out of GPU memory\n")
    refined = analyze_bytes(log, load([tmp_path])).findings
    assert refined[0].id == "team-loader-adapters-oom"
    assert [s.id for s in refined[0].symptoms] == ["cuda-out-of-memory"]
    assert "cuda-out-of-memory" not in [f.id for f in refined]
    (folder / "team-loader-adapters-oom.yaml").write_text(TEAM_OOM.replace("refines: [cuda-out-of-memory]\n", ""))
    assert [f.id for f in analyze_bytes(log, load([tmp_path])).findings][:2] == [
        "cuda-out-of-memory", "team-loader-adapters-oom"]



def test_a_chain_of_refinements_ranks_the_most_specific_first(library: CompiledLibrary) -> None:
    """jax-ml/jax#20722 (training b8-11): jaxlib 0.4.26's compute-capability check refines JAX's
    backend failure, which refines the CUDA driver's NOT_INITIALIZED; the general one's own rise
    above the driver error must not leave it above the pattern that refines it, and both general
    findings fold under the specific one."""
    from tests.conftest import ROOT

    log = (ROOT / "tests/data/training/b8-11-jax-cuda12-extra-missing-falls-back-cpu-jax-20722.log").read_bytes()
    findings = analyze_bytes(log, library).findings
    assert findings[0].id == "jaxlib-0-4-26-compute-capability-check-before-cuinit"
    assert [s.id for s in findings[0].symptoms] == ["jax-cuda-backend-failed-to-initialize",
                                                     "cuda-driver-error-not-initialized"]
    assert not {"jax-cuda-backend-failed-to-initialize", "cuda-driver-error-not-initialized"} & {f.id for f in findings}

TEAM_CACHE = """title: Our adapter cache is disabled, so every adapter is placed on the GPU
id: team-adapter-cache-disabled
status: stable
severity: medium
confidence: medium
area: runtime
description: Without the host-side cache, the team's loader keeps every adapter in GPU memory.
why: Large adapter sets then run the GPU out of memory.
match:
  any:
    - regex: 'adapter cache disabled'
fix: ["Set ADAPTER_CACHE=host in the loader's config."]
source: our loader's message
explains: [cuda-out-of-memory]
"""


def test_a_cause_outranks_the_consequence_it_explains(tmp_path: Path) -> None:
    """Found together, a pattern that `explains:` another's lines as its consequence ranks first
    although the consequence is more severe, and the consequence folds under it; without
    `explains:` the louder consequence leads."""
    from analyzer.triage import load

    folder = tmp_path / "runtime"
    folder.mkdir()
    (folder / "team-adapter-cache-disabled.yaml").write_text(TEAM_CACHE)
    log = (b"adapter cache disabled: placing 64 adapters on cuda:0\n"
           b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    explained = analyze_bytes(log, load([tmp_path])).findings
    assert explained[0].id == "team-adapter-cache-disabled"
    assert any("explains cuda-out-of-memory, found too" in r for r in explained[0].reasons)
    assert [s.id for s in explained[0].symptoms] == ["cuda-out-of-memory"]
    (folder / "team-adapter-cache-disabled.yaml").write_text(TEAM_CACHE.replace("explains: [cuda-out-of-memory]\n", ""))
    assert [f.id for f in analyze_bytes(log, load([tmp_path])).findings][:2] == [
        "cuda-out-of-memory", "team-adapter-cache-disabled"]


@pytest.mark.parametrize(("team", "said"), [
    (TEAM_OOM.replace("[cuda-out-of-memory]", "[no-such-one]"), "refines names an unknown pattern 'no-such-one'"),
    (TEAM_OOM.replace("[cuda-out-of-memory]", "[team-loader-adapters-oom]"), "refines names the pattern itself"),
    (TEAM_CACHE.replace("[cuda-out-of-memory]", "[no-such-one]"), "explains names an unknown pattern 'no-such-one'"),
    (TEAM_CACHE.replace("[cuda-out-of-memory]", "[team-adapter-cache-disabled]"), "explains names the pattern itself"),
])
def test_relations_name_another_pattern_with_file_and_line(tmp_path: Path, team: str, said: str) -> None:
    from analyzer.errors import PatternErrors
    from analyzer.triage import load

    folder = tmp_path / "runtime"
    folder.mkdir()
    own = team.split("id: ", 1)[1].split("\n", 1)[0]
    (folder / f"{own}.yaml").write_text(team)
    with pytest.raises(PatternErrors) as caught:
        load([tmp_path])
    assert caught.value.line == 14 and said in caught.value.message




def test_a_probe_whose_output_names_a_network_errno_is_led_by_that_errno(library: CompiledLibrary) -> None:
    """A probe that failed because the address family or the route is missing was not killing a
    server that was still loading: the errno explains it and leads, the probe folds under it.
    'connection refused' is the loading case itself, so the probe pattern leads there."""
    for errno_id, output in [
        ("errno-eafnosupport", "dial tcp [fd00::5]:8000: connect: address family not supported by protocol"),
        ("errno-ehostunreach", "dial tcp 10.4.0.7:8000: connect: no route to host"),
    ]:
        log = f'Liveness probe failed: Get "http://pod:8000/health": {output}\n'.encode()
        findings = analyze_bytes(log, library).findings
        assert findings[0].id == errno_id
        assert "k8s-probe-killed-model-server-while-loading" in [s.id for s in findings[0].symptoms]
    refused = b'Startup probe failed: Get "http://10.4.0.7:8000/health": dial tcp 10.4.0.7:8000: connect: connection refused\n'
    assert analyze_bytes(refused, library).findings[0].id == "k8s-probe-killed-model-server-while-loading"


def test_a_required_compute_capability_is_not_read_as_the_gpus(library: CompiledLibrary) -> None:
    """'compute capability 8.9 or higher required' states a requirement, not the GPU in the machine."""
    need = b"AssertionError: Device compute capability 8.9 or higher required for FP8 execution.\n"
    assert "gpu_sm" not in analyze_bytes(need, library).facts
    seen = b"  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes\n"
    assert analyze_bytes(seen, library).facts["gpu_sm"].value == "8.9"


def test_a_shell_probe_for_nvcc_does_not_outrank_the_exception_that_stopped_the_program(
        library: CompiledLibrary) -> None:
    """Environment reports (mmengine's collect_env, SGLang's check_env) run `$CUDA_HOME/bin/nvcc -V`
    through the shell and carry on: the shell's 'not found' ranks below the recognised exception
    after it. In a ninja build the same line explains the build failure and leads it, and a
    CUDA_HOME that cannot be a toolkit's (/dev/null) is still the critical finding."""
    probe = (b"/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found\n"
             b"RuntimeError: nms_impl: implementation for device cuda:0 not found.\n")
    ids = [f.id for f in analyze_bytes(probe, library).findings]
    assert ids[0] == "mmcv-ops-built-without-cuda"
    assert "nvcc-missing-at-shell-path" in ids
    build = (b"[1/2] /usr/local/cuda/bin/nvcc -c kernel.cu -o kernel.cuda.o\n"
             b"FAILED: kernel.cuda.o\n"
             b"/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found\n"
             b"ninja: build stopped: subcommand failed.\n"
             b"RuntimeError: Error building extension 'fused_kernel'\n")
    found = analyze_bytes(build, library).findings
    assert found[0].id == "nvcc-missing-at-shell-path"
    assert "torch-cpp-extension-build-failed" in [s.id for s in found[0].symptoms]
    fake = b"/bin/sh: 1: /dev/null/bin/nvcc: not found\n"
    found = analyze_bytes(fake, library).findings
    assert found[0].id == "cuda-home-has-no-nvcc"
    assert found[0].captures["cuda_home"] == "/dev/null"
