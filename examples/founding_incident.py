"""Write the founding incident as a journal export stream (a reconstruction).

The incident (see kb/ and the project README): an SGLang service on 8x RTX PRO 6000
Blackwell GPUs (SM 12.0) was killed by the host OOM killer; systemd restarted it; in the new
process FlashInfer (0.6.8.post1, a release with the SM 12.x gate) found the system nvcc 12.8,
refused the GPUs because it builds the 12.0f target, which needs nvcc 12.9, and the first JIT
module failed. The workaround CUDA_HOME=/dev/null then broke every JIT build (seen here through
torch's ninja build, as dash reports it). The log lines follow the formats these programs print;
the host, pids, times, paths and package versions are chosen for the reconstruction (sglang
0.5.11 pins flashinfer_python 0.6.8.post1), and the unit is given an ExecStartPre that logs
`nvcc --version` and `torch.utils.collect_env` lines.

    python examples/founding_incident.py > incident.export
    /lib/systemd/systemd-journal-remote -o incident.journal incident.export
    journalctl --file incident.journal -o short-iso > examples/founding-incident.log
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator

HOST = "ct200"
UNIT = "sglang-k26.service"
BOOT = "5d3c1f0e9a8b47c6b2a1d0e9f8c7b6a5"
START_US = 1_777_802_290_000_000  # 2026-05-03 09:58:10 UTC
SITE = "/root/venv_sglang211/lib/python3.12/site-packages"


def _field(key: str, value: str) -> bytes:
    data = value.encode()
    if b"\n" in data:
        return key.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n"
    return f"{key}={value}\n".encode()


def _kernel(msg: str, prio: int = 3) -> dict[str, str]:
    return {"SYSLOG_IDENTIFIER": "kernel", "_TRANSPORT": "kernel", "PRIORITY": str(prio), "MESSAGE": msg}


def _systemd(msg: str, prio: int = 6) -> dict[str, str]:
    return {"SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "_TRANSPORT": "journal", "UNIT": UNIT,
            "PRIORITY": str(prio), "MESSAGE": msg}


def _svc(pid: int, msg: str, prio: int = 6) -> dict[str, str]:
    return {"SYSLOG_IDENTIFIER": "python3", "_PID": str(pid), "_SYSTEMD_UNIT": UNIT,
            "_TRANSPORT": "stdout", "PRIORITY": str(prio), "MESSAGE": msg}


def _env(msg: str) -> dict[str, str]:
    """ExecStartPre=/opt/sglang/env-report.sh: nvcc --version and torch.utils.collect_env lines."""
    return {"SYSLOG_IDENTIFIER": "env-report", "_PID": "51001", "_SYSTEMD_UNIT": UNIT, "_TRANSPORT": "stdout",
            "PRIORITY": "6", "MESSAGE": msg}


def _traceback(pid: int, frames: list[tuple[str, int, str, str]], last: str, head: str) -> list[dict[str, str]]:
    lines = [head + "Traceback (most recent call last):"]
    for file, line, func, code in frames:
        lines += [f'  File "{file}", line {line}, in {func}', f"    {code}"]
    lines.append(last)
    return [_svc(pid, text, 3) for text in lines]


def entries() -> Iterator[tuple[int, dict[str, str]]]:
    """(seconds after START, fields) in journal order."""
    yield 0, _kernel("python3 invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), "
                     "order=0, oom_score_adj=0", 4)
    yield 0, _kernel("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,"
                     f"task_memcg=/system.slice/{UNIT},task=python3,pid=48213,uid=0", 6)
    yield 0, _kernel("Out of memory: Killed process 48213 (python3) total-vm:412331204kB, anon-rss:198765432kB, "
                     "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:402112kB oom_score_adj:0")
    yield 1, _systemd(f"{UNIT}: A process of this unit has been killed by the OOM killer.", 4)
    yield 1, _systemd(f"{UNIT}: Main process exited, code=killed, status=9/KILL", 5)
    yield 1, _systemd(f"{UNIT}: Failed with result 'oom-kill'.", 4)
    yield 1, _systemd(f"{UNIT}: Consumed 2h 41min 7.214s CPU time.")
    yield 21, _systemd(f"{UNIT}: Scheduled restart job, restart counter is at 1.")
    yield 21, _systemd(f"Started {UNIT} - SGLang Kimi K2.6 (TP8).")
    yield 22, _env("Cuda compilation tools, release 12.8, V12.8.93")
    yield 22, _env("PyTorch version: 2.9.1+cu130")
    yield 22, _env("CUDA used to build PyTorch: 13.0")
    yield 22, _env("GPU 0: NVIDIA RTX PRO 6000 Blackwell Server Edition")
    yield 22, _env("Nvidia driver version: 595.71.05")
    yield 22, _env("[pip3] flashinfer-python==0.6.8.post1")
    yield 22, _env("[pip3] sglang==0.5.11")
    yield 26, _svc(51002, "[2026-05-03 09:58:36] server_args=ServerArgs(model_path='/models/Kimi-K2.6', "
                          "tp_size=8, trust_remote_code=True, sampling_backend='flashinfer', port=30000)")
    yield 29, _svc(51002, "Failed to get device capability: SM 12.x requires CUDA >= 12.9.", 4)
    yield 29, _svc(51002, "Failed to get device capability: SM 12.x requires CUDA >= 12.9.", 4)
    yield 41, _svc(51010, "[2026-05-03 09:58:51 TP0] Load weight begin. avail mem=93.12 GB")
    yield 41, _svc(51013, "[2026-05-03 09:58:51 TP3] Load weight begin. avail mem=93.12 GB")
    yield 402, _svc(51010, "[2026-05-03 10:04:52 TP0] Load weight end. type=DeepseekV3ForCausalLM, "
                           "dtype=torch.bfloat16, avail mem=20.47 GB, mem usage=72.65 GB.")
    tb = _traceback(51010, [
        (f"{SITE}/sglang/srt/managers/scheduler.py", 2871, "run_scheduler_process",
         "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)"),
        (f"{SITE}/sglang/srt/model_executor/model_runner.py", 1904, "init_device_graphs",
         "self.graph_runner = CudaGraphRunner(self)"),
        (f"{SITE}/sglang/srt/layers/sampler.py", 112, "forward",
         "batch_next_token_ids = top_k_top_p_sampling_from_probs("),
        (f"{SITE}/flashinfer/sampling.py", 68, "get_sampling_module",
         "module = gen_sampling_module().build_and_load()"),
        (f"{SITE}/flashinfer/jit/sampling.py", 22, "gen_sampling_module", "return gen_jit_spec("),
        (f"{SITE}/flashinfer/jit/core.py", 413, "gen_jit_spec", "check_cuda_arch()"),
        (f"{SITE}/flashinfer/jit/core.py", 108, "check_cuda_arch",
         'raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")'),
    ], "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
        "[2026-05-03 10:06:40 TP0] Scheduler hit an exception: ")
    other = _svc(51013, "[2026-05-03 10:06:40 TP3] Capture cuda graph begin. This can take up to several minutes.")
    for i, fields in enumerate(tb):
        yield 510, fields
        if i == 3:
            yield 510, other
    yield 511, _svc(51002, "[2026-05-03 10:06:41] Received sigquit from a child process. It usually means the "
                           "child failed.", 3)
    yield 512, _systemd(f"{UNIT}: Main process exited, code=exited, status=1/FAILURE", 5)
    yield 512, _systemd(f"{UNIT}: Failed with result 'exit-code'.", 4)
    yield 1800, _systemd("Reloading.")
    yield 1801, _systemd(f"Started {UNIT} - SGLang Kimi K2.6 (TP8).")
    # FlashInfer's probe runs nvcc under CUDA_HOME: /dev/null/bin/nvcc is "Not a directory", which
    # get_cuda_version does not catch, so it never reaches torch.version.cuda either
    yield 1805, _svc(53102, "Failed to get device capability: [Errno 20] Not a directory: '/dev/null/bin/nvcc'.", 4)
    yield 1846, _svc(53120, "[2026-05-03 10:28:56 TP0] Load weight begin. avail mem=93.12 GB")
    yield 2230, _svc(53120, "[2026-05-03 10:35:20 TP0] Scheduler hit an exception: "
                            "Traceback (most recent call last):", 3)
    for file, line, func, code in [
        (f"{SITE}/sglang/jit_kernel/utils.py", 87, "load_jit", "return load_inline("),
        (f"{SITE}/torch/utils/cpp_extension.py", 2046, "load_inline", "return _jit_compile("),
        (f"{SITE}/torch/utils/cpp_extension.py", 2126, "_jit_compile", "_write_ninja_file_and_build_library("),
        (f"{SITE}/torch/utils/cpp_extension.py", 2269, "_write_ninja_file_and_build_library",
         "_run_ninja_build("),
        (f"{SITE}/torch/utils/cpp_extension.py", 2581, "_run_ninja_build", "raise RuntimeError(message) from e"),
    ]:
        yield 2230, _svc(53120, f'  File "{file}", line {line}, in {func}', 3)
        yield 2230, _svc(53120, f"    {code}", 3)
    for text in [
        "RuntimeError: Error building extension 'sgl_kernel_jit_topk': [1/2] /dev/null/bin/nvcc "
        "--generate-dependencies-with-compile --dependency-output cuda.cuda.o.d "
        "-DTORCH_EXTENSION_NAME=sgl_kernel_jit_topk -c /root/.cache/torch_extensions/py312_cu130/"
        "sgl_kernel_jit_topk/cuda.cu -o cuda.cuda.o",
        "FAILED: cuda.cuda.o ",
        "/bin/sh: 1: /dev/null/bin/nvcc: not found",
        "ninja: build stopped: subcommand failed.",
    ]:
        yield 2230, _svc(53120, text, 3)
    yield 2232, _systemd(f"{UNIT}: Main process exited, code=exited, status=1/FAILURE", 5)
    yield 2232, _systemd(f"{UNIT}: Failed with result 'exit-code'.", 4)


def export_stream() -> bytes:
    out = bytearray()
    for seq, (offset_s, fields) in enumerate(entries()):
        usec = START_US + offset_s * 1_000_000 + seq
        head = {"__CURSOR": f"s=0;i={seq + 1:x}", "__REALTIME_TIMESTAMP": str(usec),
                "__MONOTONIC_TIMESTAMP": str(9_000_000_000 + offset_s * 1_000_000 + seq), "_BOOT_ID": BOOT,
                "_HOSTNAME": HOST}
        for key, value in {**head, **fields}.items():
            out += _field(key, value)
        out += b"\n"
    return bytes(out)


if __name__ == "__main__":
    sys.stdout.buffer.write(export_stream())
