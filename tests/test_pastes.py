"""Logs as people paste them into tickets and threads: worker prefixes with blank lines
between the lines (GitHub renders a pasted log that way), a quoted reply, ANSI colours and a
Markdown fence, Windows paths, and errors that no pattern knows (reported, never dropped)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from analyzer.choices import FindingKind, InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.readers import parse_lines
from analyzer.readers.console import console_record
from analyzer.readers.paste import tidy
from tests.conftest import ROOT, analyze_bytes

PASTES = ROOT / "tests" / "data" / "pastes"

# flashinfer-ai/flashinfer#3674 (RTX 5090, CUDA 12.8), as pasted: a vLLM-Omni worker prefix on
# every line, an empty line after each, the last line cut
ISSUE_3674 = (PASTES / "flashinfer-3674-worker-prefix-blank-lines.log").read_text()


def ids(data: str, library: CompiledLibrary) -> list[str]:
    return [f.id for f in analyze_bytes(data.encode(), library).findings]


def prefixed(prefix: str, lines: list[str]) -> str:
    return "".join(f"{prefix}{line}\n" for line in lines)


def test_worker_prefixes_with_blank_lines_and_a_cut_last_line(library: CompiledLibrary) -> None:
    assert ids(ISSUE_3674, library)[0] == "flashinfer-no-eligible-cuda-arch"


def test_a_line_cut_inside_its_quoted_error_string_still_matches(library: CompiledLibrary) -> None:
    # NVIDIA/nccl-tests#276 as pasted: the WARN line ends inside NCCL's quoted CUDA error string
    cut = "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error\n"
    top = analyze_bytes(cut.encode(), library).findings[0]
    assert top.id == "nccl-nvls-multicast-bind-failed"
    assert top.captures == {"cuda_error": "999", "cuda_error_string": "unknown error"}
    other = "node:1:2 [0] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle\n"
    assert ids(other, library)[0] == "nccl-warn-cuda-failure"


def test_a_quoted_reply_is_read_like_the_log(library: CompiledLibrary) -> None:
    quoted = prefixed("> ", [
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


def test_an_unknown_error_goes_below_every_cause_even_one_a_consequence_outscores(library: CompiledLibrary) -> None:
    """Ranking is by severity first, so a consequence can rank above a cause; an unknown error
    still goes below every finding that names a cause and above every consequence."""
    from analyzer.unrecognised import Leads, names_a_cause, place

    log = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.12/site-packages/sglang/srt/server.py", line 10, in launch\n'
           "    raise ValueError(msg)\n"
           "ValueError: unsupported value for --attention-backend: fa9\n"
           "sglang.service: Main process exited, code=killed, status=9/KILL\n")
    unknown, consequence = analyze_bytes(log.encode(), library).findings
    [cause] = analyze_bytes(b"Failed to get device capability: SM 12.x requires CUDA >= 12.9.\n", library).findings
    assert names_a_cause(cause) and not names_a_cause(consequence) and unknown.kind is FindingKind.unrecognised
    assert place([consequence, cause], Leads([unknown], [])) == [cause, unknown, consequence]
    assert place([consequence, cause], Leads([], [])) == [consequence, cause]
    assert place([consequence, cause], Leads([], [unknown])) == [consequence, cause, unknown]  # a cut traceback


def test_an_unknown_error_ranks_above_findings_that_only_inform(library: CompiledLibrary) -> None:
    """XLA's start-up lines about plugins registered twice are understood (an info finding),
    but they are not why the run failed: the unknown error after them is the lead."""
    log = ("E0000 00:00:1751448150.986970   10148 cuda_dnn.cc:8579] Unable to register cuDNN factory: "
           "Attempting to register factory for plugin cuDNN when one has already been registered\n"
           "Traceback (most recent call last):\n"
           '  File "/app/x.py", line 3, in <module>\n'
           "    run()\n"
           "RuntimeError: frobnicator exploded on device 0\n")
    found = analyze_bytes(log.encode(), library).findings
    assert [(f.kind, f.severity) for f in found] == [(FindingKind.unrecognised, "low"), ("pattern", "info")]


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
            "nccl-graph-file-does-not-match",  # now a pattern's
        # a Go error chain printed bare (the container toolkit's fmt.Errorf("error generating CDI
        # specification: %v", err), filled in)
        "error generating CDI specification: frobnicated the quux":
            "Not recognised: error generating CDI specification: frobnicated the quux",
        "error reading the frobnicator state: quux exploded":  # no pattern's words: found by its shape
            "Not recognised: error reading the frobnicator state: quux exploded",
    }
    for line, expected in lines.items():
        top = analyze_bytes((line + "\n").encode(), library).findings[0]
        assert (top.id if top.kind == "pattern" else top.title).startswith(expected), (line, top.title)


def test_error_lines_of_the_newer_shapes_are_found_deep_in_a_long_log(library: CompiledLibrary) -> None:
    """Phase 1 must hit them too: in a long log only the regions around its hits are read."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    for line in ("❌ Error: Target SM ARCH unknown is not compatible", "*** An error occurred in MPI_Comm_split",
                 # an NCCL WARN line pasted without NCCL's "host:pid:tid [dev] file:line" head
                 "NCCL WARN Frobnicator quux : no widget left"):
        log = "\n".join([*filler[:1500], line, *filler[1500:]]) + "\n"
        titles = [f.title for f in analyze_bytes(log.encode(), library).findings]
        assert titles == [f"Not recognised: {line}"], (line, titles)
    # a logger's error level (weak): UCX's line, with the frobnicated message no pattern knows
    ucx = "[1588956223.719348] [vinci115:55453:0]       ib_iface.c:623  UCX  ERROR frobnicator quux lost"
    log = "\n".join([*filler[:1500], ucx, *filler[1500:]]) + "\n"
    titles = [f.title for f in analyze_bytes(log.encode(), library).findings]
    assert titles == ["Not recognised: frobnicator quux lost"], titles


def test_apts_error_lines_are_reported_and_its_warnings_are_not(library: CompiledLibrary) -> None:
    """APT prints its errors after "E: " (apt-pkg's "Unable to locate package %s" when a repository
    is not configured), warnings after "W: "; also deep in a long log (phase 1)."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    line = "E: Unable to locate package nvidia-container-toolkit"
    warning = "W: Some index files failed to download. They have been ignored, or old ones used instead."
    for log in (f"{line}\n", "\n".join([*filler[:1500], line, *filler[1500:]]) + "\n"):
        titles = [f.title for f in analyze_bytes(log.encode(), library).findings]
        assert titles == ["Not recognised: apt: Unable to locate package nvidia-container-toolkit"]
    assert analyze_bytes(f"{warning}\n".encode(), library).findings == []


def test_a_bare_error_line_takes_its_message_from_the_next_line(library: CompiledLibrary) -> None:
    """dnf prints "Error: " alone and the problem on the next line (NVIDIA/yum-packaging-precompiled-kmod#33,
    training b27-05; the trailing space lost in the paste), also deep in a long log."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    error = ["Error:", " Problem: package kernel-modules-4.18.0-348.23.1.el8_5.x86_64 requires kernel-uname-r = "
             "4.18.0-348.23.1.el8_5.x86_64, but none of the providers can be installed"]
    for lines in (error, [*filler[:1500], *error, *filler[1500:]]):
        titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
        assert titles == ["Not recognised: Error: Problem: package kernel-modules-4.18.0-348.23.1.el8_5.x86_64 "
                          "requires … but none of the providers can be installed"], titles
    # "Error:" as a table's heading with nothing after it says nothing
    assert analyze_bytes(b"Error:\n", library).findings == []


def test_a_failed_assert_is_reported_by_its_expression(library: CompiledLibrary) -> None:
    """glibc's assert() line with a long C++ signature (the shape of Triton's, vllm-project/vllm#5533,
    training b28-01, filled with MLIR's assert in mlir/lib/IR/Types.cpp, which no pattern knows)
    and with the program's name before it; also deep in a long log (phase 1)."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    mlir = ("python3: /source/llvm-project/mlir/lib/IR/Types.cpp:126: unsigned int mlir::Type::getIntOrFloatBitWidth() "
            "const: Assertion `isIntOrFloat() && \"only integers and floats have a bitwidth\"' failed.")
    glibc = "python3: ../src/frob.c:12: frob_init: Assertion `n > 0' failed."
    for line, title in ((mlir, "Not recognised: Assertion `isIntOrFloat() && \"only integers and floats have a "
                               "bitwidth\"' failed at /source/llvm-project/mlir/lib/IR/Types.cpp:126"),
                        (glibc, "Not recognised: Assertion `n > 0' failed at ../src/frob.c:12")):
        for lines in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
            assert titles == [title], titles


def test_error_lines_with_the_line_number_in_parentheses_are_reported(library: CompiledLibrary) -> None:
    """nvcc's front end (cudafe) and MSVC write "file(line): error...": a CUDA kernel that does not
    compile, MSVC's #error of Thrust's CUB check (NVIDIA/cub#273, training b29-09, with MSBuild's
    "1>" before it and the path's spaces), MSVC's linker; also deep in a long log (phase 1)."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    cub = ("1>C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.2/include\\thrust/system/cuda/config.h(78): "
           "fatal error C1189: #error:  frobnicated CUB")
    for line, title in (('/tmp/x/kernel.cu(12): error: identifier "__frobz" is undefined',
                         'Not recognised: /tmp/x/kernel.cu(12): error: identifier "__frobz" is undefined'),
                        (cub, "Not recognised: " + cub[2:]),
                        ("LINK : fatal error LNK1181: cannot open input file 'frob.lib'",
                         "Not recognised: LINK : fatal error LNK1181: cannot open input file 'frob.lib'")):
        for lines in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
            assert titles == [title], titles
    assert analyze_bytes(b"kernel.cu(12): warning #177-D: variable \"x\" was declared but never referenced\n",
                         library).findings == []


def test_a_rejected_command_line_is_reported(library: CompiledLibrary) -> None:
    """A program whose parser rejected its command line exits with its usage: a start script's
    "Unknown option: <arg>" (the NVIDIA fabric manager's start script after its arguments changed,
    gpu-operator#1595, validation b27-12, which was silent), GNU getopt's three shapes (also with the
    quotes of a UTF-8 locale), Go's flag package, Rust clap's; also deep in a long log (phase 1).
    EINVAL's "Invalid argument" and other lines with these words are no usage error."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    for line in ("Unknown option: /usr/share/nvidia/nvswitch/fabricmanager.cfg",
                 "getopt: unrecognized option '--fm-config'", "grep: unrecognized option \u2018--frob\u2019",
                 "ls: invalid option -- 'z'", "tar: option requires an argument -- 'f'",
                 "nv-fabricmanager: option '--config' requires an argument",
                 "flag provided but not defined: -frob", "error: unexpected argument '--frob' found"):
        for lines in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
            assert titles == ["Not recognised: " + line], titles
    for quiet in ("write error: Invalid argument", 'Unknown kernel command line parameters "frob", will be passed',
                  "unknown option value in the config, using the default"):
        assert analyze_bytes((quiet + "\n").encode(), library).findings == [], quiet


def test_a_shells_missing_command_a_failed_call_and_a_bracketed_error_level_are_reported_deep_in_a_log(
        library: CompiledLibrary) -> None:
    """Phase 1 finds a shell's "command not found" (also its exec builtin's "exec: <cmd>: not found",
    an image's entrypoint that cannot start its server, prompted by validation b38-06), a tool's
    failed operation as glibc's error() prints it ("<prog>: cannot ...: <strerror>": validation b37-02,
    silent) and a line whose bracketed level marks it an error (Fabric Manager's "[time] [ERROR] [tid N] ",
    also with the time cut from the paste: validation b37-08, silent), in a long log as well."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    fm = "Some failure no pattern knows on NVSwitch pci bus id 00000000:86:00.0"
    for line, title in (("/usr/local/bin/start.sh: line 12: exec: vllm: not found",) * 2,
                        ("/bin/sh: 1: ninja: not found",) * 2,
                        ("bash: line 3: trtllm-serve: command not found",) * 2,
                        ("mkdir: cannot create directory '/models/cache': Permission denied",) * 2,
                        ("/usr/bin/ln: failed to create symbolic link '/usr/lib/libcuda.so': File exists",) * 2,
                        (f"[Sep 17 2024 06:01:46] [ERROR] [tid 1230079] {fm}", fm),
                        (f"[ERROR] [tid 1230079] {fm}", fm)):
        for lines in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
            assert titles == ["Not recognised: " + title], titles
    for quiet in ("[Sep 17 2024 06:01:46] [INFO] [tid 1230079] Fabric Manager version 535.183.01 is running",
                  "[ERROR] counters:", "echo 'bash: x: command not found' is what users see",
                  # loghub's Linux sample: a warning, and a peer that went away is no failed operation
                  "Jul 25 23:23:13 combo xinetd[26482]: warning: can't get client address: Connection reset by peer",
                  "notice: could not create the cache folder '/x': Permission denied"):
        assert analyze_bytes((quiet + "\n").encode(), library).findings == [], quiet


def test_the_go_runtimes_crash_on_a_fatal_signal_is_reported(library: CompiledLibrary) -> None:
    """The Go runtime's crash outside Go code, as its signal handler prints it (runtime/signal_unix.go:
    the signal table's name, then PC, m and sigcode, then the cgo note); also deep in a long log.
    A Go program that logs the word SIGSEGV in passing says nothing."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    crash = ["SIGSEGV: segmentation violation", "PC=0x7f5bb75066aa m=11 sigcode=1 addr=0x4",
             "signal arrived during cgo execution", "", "goroutine 1 gp=0xc0000061c0 m=11 [syscall]:"]
    for lines in (crash, [*filler[:1500], *crash, *filler[1500:]]):
        titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
        assert titles == ["Not recognised: Go runtime: SIGSEGV: segmentation violation"], titles
    assert analyze_bytes(b"level=info msg=\"handler installed for SIGSEGV: segmentation violation reports\"\n",
                         library).findings == []


def test_ffmpeg_failures_behind_its_component_prefix_are_reported_and_its_routine_lines_are_not(
        library: CompiledLibrary) -> None:
    """FFmpeg prints no level: "[h264_nvenc @ 0x55...] " then the message. A line saying something
    failed is an error, found by phase 1 deep in a long log; a decoder's routine complaints are not."""
    filler = [f"[libx264 @ 0x55d0c2a1b2c0] frame I:{i} Avg QP:20.{i % 10} size: 1234" for i in range(3000)]
    for line, title in (  # FFmpeg's forms, filled in (nvenc.c's "%s failed: %s", dynlink_loader.h's)
            ("[hevc_nvenc @ 0x55bd94c6bb40] nvEncFrobnicate failed: quux exploded (42)",
             "Not recognised: FFmpeg hevc_nvenc: nvEncFrobnicate failed: quux exploded (42)"),
            ("[h264_cuvid @ 000001af5eaca480] Could not frobnicate the quux widget",
             "Not recognised: FFmpeg h264_cuvid: Could not frobnicate the quux widget"),
            ("Conversion failed!", "Not recognised: Conversion failed!")):
        log = "\n".join([*filler[:1500], line, *filler[1500:]]) + "\n"
        assert [f.title for f in analyze_bytes(log.encode(), library).findings] == [title], line
    known = "[h264_nvenc @ 0x55688b625f40] Cannot load libnvidia-encode.so.1\n"  # jellyfin#7570, a pattern's
    assert analyze_bytes(known.encode(), library).findings[0].id == "nvenc-library-not-loadable"
    routine = ("[h264 @ 0x5581e4c3c940] error while decoding MB 4 22, bytestream -5\n"
               "[swscaler @ 0x55ab3ad0c000] deprecated pixel format used, make sure you did set range correctly\n"
               "[libx264 @ 0x55d0c2a1b2c0] using cpu capabilities: MMX2 SSE2Fast SSSE3 SSE4.2 AVX FMA3 BMI2 AVX2\n"
               "[mp4 @ 0x55d0c2a3c5c0] Starting second pass: moving the moov atom to the beginning of the file\n")
    assert analyze_bytes((routine + "\n".join(filler[:50]) + "\n").encode(), library).findings == []


def test_kubernetes_failed_events_and_kubelet_sandbox_failures_are_reported(library: CompiledLibrary) -> None:
    """A Warning event whose reason says something failed, in kubectl describe's Events table and in
    `kubectl get events`, and kubelet's sandbox message pasted alone, found by phase 1 deep in a long
    log; the reason and message are the error. Normal events and a Warning that is no failure stay
    silent. The forms are NVIDIA/gpu-operator#549's table and #2168's events listing, with messages
    no pattern knows."""
    filler = [f"  Normal   Pulled  {i}s  kubelet  Container image \"busybox:1.{i}\" already present on machine"
              for i in range(3000)]
    for line, title in (
            ("  Warning  FailedCreatePodSandBox  4m43s (x93 over 24m)  kubelet            Failed to create pod "
             "sandbox: rpc error: code = Unknown desc = failed to frobnicate the quux",
             "Not recognised: FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown "
             "desc = failed to frobnicate the quux"),
            ("3m45s       Warning   FailedMount   pod/nvidia-operator-validator-l4754            "
             "MountVolume.SetUp failed for volume \"quux\" : widget not frobnicated",
             "Not recognised: FailedMount: MountVolume.SetUp failed for volume \"quux\" : widget not frobnicated"),
            ("  Warning  UnexpectedAdmissionError  2m  kubelet, gpu-node-3  Allocate failed: quux exploded",
             "Not recognised: UnexpectedAdmissionError: Allocate failed: quux exploded"),
            # the admission's OutOf<resource> names a failure without Fail or Err in it
            ("  Warning  OutOfexample.com/widget  12s  kubelet  Node didn't have enough resource: quux",
             "Not recognised: OutOfexample.com/widget: Node didn't have enough resource: quux"),
            ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to frobnicate the quux: unknown",
             "Not recognised: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to frobnicate "
             "the quux: unknown")):
        log = "\n".join([*filler[:1500], line, *filler[1500:]]) + "\n"
        found = analyze_bytes(log.encode(), library).findings
        # the reason's own finding (kubernetes-pod-reasons, keeps_message) comes after the message
        assert [f.title for f in found][:1] == [title], line
        assert all(f.id.startswith("k8s-reason-") for f in found[1:]), [f.id for f in found]
    # the reason's finding keeps the message as an error of its own: both are reported, message first
    sandbox = ("  Warning  FailedCreatePodSandBox  4m43s (x93 over 24m)  kubelet            Failed to create pod "
               "sandbox: rpc error: code = Unknown desc = failed to frobnicate the quux\n")
    assert ids(sandbox, library)[1:] == ["k8s-reason-failed-create-pod-sandbox"]
    # the message wrapped by the paste after a colon: the indented lines are the rest of the error;
    # a line at the margin is not
    wrapped = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox "9f1c":\n'
               "  failed to create shim task: OCI runtime create failed:\n"
               "  creating container: cannot frobnicate the sandbox:\n"
               "  cannot read the widget file:\n"
               "  waiting for the quux to start: EOF\n"
               "unrelated line at the margin\n")
    found = [f for f in analyze_bytes(wrapped.encode(), library).findings if f.kind == FindingKind.unrecognised]
    assert len(found) == 1 and (
        'failed to start sandbox "9f1c": failed to create shim task: OCI runtime create failed: creating '
        "container: cannot frobnicate the sandbox: cannot read the widget file: waiting for the quux to start: "
        "EOF. It is reported") in found[0].cause, found[0].cause
    assert (found[0].evidence[0].line, "unrelated" in found[0].cause) == (1, False)
    routine = ("  Normal   Scheduled  24m  default-scheduler  Successfully assigned gpu-operator/x to node-1\n"
               "  Warning  Unhealthy  3m (x2 over 3m)  kubelet  Readiness probe failed: Get \"http://10.0.0.7:8080/\"\n"
               "  Warning  NodeSysctlChange  5m  sysctl-monitor  widget changed\n")
    assert analyze_bytes(routine.encode(), library).findings == []


def test_a_tensorrt_error_codes_detail_stays_the_lead(library: CompiledLibrary) -> None:
    """TensorRT's "Error Code N: <kind> (<detail>)": the code's catalogue entry (keeps_message) names
    the kind of failure, the detail says what failed and is reported first, as an error of its own."""
    line = ("[TRT] [E] 9: [standardEngineBuilder.cpp::buildEngine::2266] Error Code 9: Internal Error "
            "(Frobnicated widgets need quux support.)\n")
    found = analyze_bytes(line.encode(), library).findings
    assert [f.kind for f in found] == [FindingKind.unrecognised, FindingKind.pattern]
    assert "Frobnicated widgets need quux support." in found[0].title
    assert found[1].id == "tensorrt-error-code-invalid-state"


def test_git_apply_refusing_a_patch_is_an_error_line(library: CompiledLibrary) -> None:
    """A build script that patches a pinned source stops at git apply's refusal (apply.c's "patch
    failed: %s:%ld" and "%s: patch does not apply", through git's error()): reported, found by
    phase 1 deep in a long log; git's other lines are not errors."""
    filler = [f"Applying: widget change {i}" for i in range(3000)]
    refusal = ["error: patch failed: csrc/quux_kernel.cu:214", "error: csrc/quux_kernel.cu: patch does not apply"]
    log = "\n".join([*filler[:1500], *refusal, *filler[1500:]]) + "\n"
    titles = [f.title for f in analyze_bytes(log.encode(), library).findings]
    assert titles == ["Not recognised: error: patch failed: csrc/quux_kernel.cu:214",
                      "Not recognised: error: csrc/quux_kernel.cu: patch does not apply"], titles
    routine = "Checking patch csrc/quux_kernel.cu...\nApplied patch csrc/quux_kernel.cu cleanly.\n"
    assert analyze_bytes(routine.encode(), library).findings == []


def test_a_modules_lowercase_error_class_ends_a_traceback(library: CompiledLibrary) -> None:
    """OpenCV raises cv2.error (its cv::Exception, "OpenCV(%s) %s:%d: error: (%d:%s) %s in function
    '%s'" in modules/core/src/system.cpp), the standard library re.error, zlib.error, struct.error:
    a traceback ending in one is read whole (before: cut before its exception), and the line alone,
    deep in a long log, is an error line."""
    opencv = ("cv2.error: OpenCV(4.9.0) /io/opencv/modules/dnn/src/quux.cpp:42: error: (-217:Gpu API call) "
              "frobnicate failed in function 'widget'")
    traceback = ('Traceback (most recent call last):\n  File "/app/detect.py", line 12, in <module>\n'
                 f"    out = net.forward()\n{opencv}\n")
    [found] = analyze_bytes(traceback.encode(), library).findings
    assert found.title.startswith("Not recognised: cv2.error: OpenCV(4.9.0)") and "/app/detect.py" in found.cause
    filler = [f"INFO step {i} ok" for i in range(3000)]
    log = "\n".join([*filler[:1500], "re.error: unterminated quux set at position 0", *filler[1500:]]) + "\n"
    assert [f.title for f in analyze_bytes(log.encode(), library).findings] == [
        "Not recognised: re.error: unterminated quux set at position 0"]


def test_ordinary_error_words_in_healthy_logs_stay_silent(library: CompiledLibrary) -> None:
    healthy = ("Dec 10 07:51:15 LabSZ sshd[24324]: error: Received disconnect from 195.154.37.122: 3: "
               "com.jcraft.jsch.JSchException: Auth fail [preauth]\n"
               "2570021 node-5 action error 1074121927 1 risBoot (command 1903) Error: Timed out while waiting\n"
               "RAS APP FATAL ciod: Error loading /bgl/apps/hpl: program image too big\n"  # BGL's, not Go's form
               "no error reading the config: all good\n"
               "*** An error occurred? No: all good\n"  # Open MPI's banner names where the error occurred
               "✅ No Error: all good\n")
    assert analyze_bytes(healthy.encode(), library).findings == []


def _error_lines(line: str) -> tuple[str | None, str | None]:
    from analyzer.events import build_events
    from analyzer.readers.console import parse_console
    from analyzer.unrecognised import error_line, logged_error_line

    event = build_events(list(parse_console([line], 1, "-")))[0]
    return error_line(event), logged_error_line(event)


def test_prefixed_error_lines_are_quoted_without_their_prefix() -> None:
    # real lines from the threads the patterns' fixtures cite (and one format string each for
    # ptxas and a Go panic): the error as the program raised it, named after the tool
    strong = {
        "  what():  [TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture "
        "(/src/tensorrt_llm/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp:87)":
            "TensorRT-LLM: Assertion failed: Unsupported architecture",
        "[12/05/2023-23:50:35] [TRT-LLM] [E] The following expected tensors are not found: {'past_key_value_16'}":
            "TRT-LLM: The following expected tensors are not found",
        # NVIDIA/TensorRT-LLM#5389 (the Python logger names the MPI rank in multi-rank runs)
        "[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: boom":
            "TRT-LLM: Failed to initialize executor on rank 0",
        "[03/27/2024-11:09:02] [TRT] [E] 6: The engine plan file is generated on an incompatible device, "
        "expecting compute 8.0 got compute 8.9, please rebuild.": "TRT: 6: The engine plan file is generated",
        "ptxas /tmp/compile-ptx-src-1, line 52; error   : Feature '.bf16' requires .target sm_80 or higher":
            "ptxas: Feature '.bf16' requires .target sm_80",
        "ptxas fatal   : Ptx assembly aborted due to errors": "ptxas: Ptx assembly aborted due to errors",
        "thread 'main' panicked at '`max_input_length` must be < `max_total_tokens`', router/src/validation.rs:34:13":
            "'`max_input_length` must be < `max_total_tokens`'",
        "panic: runtime error: invalid memory address or nil pointer dereference": "runtime error: invalid memory",
        "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: container start failed with error code: 1":
            "pyxis: container start failed",
        "nvidia-persistenced[2812]: ERROR: Failed to find user ID of user 'nvidia-persistenced': "
        "No such file or directory": "nvidia-persistenced: Failed to find user ID",
        # the JVM's uncaught exception; PostgreSQL's FATAL after its default log_line_prefix (formats)
        'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space':
            "java.lang.OutOfMemoryError: Java heap space",
        '2024-05-01 10:00:00.123 UTC [1] FATAL:  data directory "/var/lib/postgresql/data" has wrong ownership':
            'PostgreSQL FATAL: data directory "/var/lib/postgresql/data" has wrong ownership',
        # ROCm's HIP runtime with AMD_LOG_LEVEL: level 1 is its error level (clr's LogPrintfError)
        ":1:hip_fatbin.cpp           :704 : 2203119870 us: [pid:4411 tid:0x7f5a3c1ff740]  "
        "Some failure no pattern knows": "HIP runtime: Some failure no pattern knows",
        # a shell that cannot find the command (nvidia-docker#341, LocalAI#2117, the device capture
        # of torch's extension build with CUDA_HOME=/dev/null)
        "bash: nvidia-smi: command not found": "bash: nvidia-smi: command not found",
        "/aio/entrypoint.sh: line 52: nvidia-smi: command not found": "/aio/entrypoint.sh: line 52: nvidia-smi",
        "/bin/sh: 1: /dev/null/bin/nvcc: not found": "/bin/sh: 1: /dev/null/bin/nvcc: not found",
        # Go's standard logger: the prefix nvidia-docker 1.x sets, then the date (nvidia-docker#396,
        # #431), and the date alone
        "nvidia-docker | 2017/06/06 16:44:49 Error: Could not load UVM kernel module. Is nvidia-modprobe installed?":
            "Error: Could not load UVM kernel module.",
        "nvidia-docker | 2017/07/16 17:46:15 Error: Error response from daemon: repository nvidia-smi not found":
            "Error: Error response from daemon: repository nvidia-smi not found",
        "2024/03/01 10:00:01.123456 error creating device plugin server: listen unix: bind: address already in use":
            "error creating device plugin server",
        # Open MPI's MPI_ERRORS_ARE_FATAL banner and CuTe DSL's emoji before "Error: " (training b25-09, b25-01)
        "*** An error occurred in MPI_Init_thread": "*** An error occurred in MPI_Init_thread",
        "❌ Error: Target SM ARCH unknown is not compatible": "❌ Error: Target SM ARCH unknown",
    }
    for line, expected in strong.items():
        found, _ = _error_lines(line)
        assert found is not None and found.startswith(expected), (line, found)
    weak = {
        "ERROR 09-01 02:20:44 [engine.py:458] Timed out after 601 seconds waiting for clients. 1/8 clients joined.":
            "Timed out after 601 seconds",
        "CRITICAL 05-07 05:58:46 core_client.py:191] Got fatal signal from worker processes, shutting down.":
            "Got fatal signal from worker processes",
        "2024-05-03 18:48:26,722\tERROR process_watcher.py:116 -- Raylet is terminated.": "Raylet is terminated.",
        "2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start": "Shard 0 failed",
        "ERROR:systemctl:Unit ollama.service could not be found.": "Unit ollama.service could not be found.",
        'time="2026-01-25T00:45:43+11:00" level=error msg="failed to generate CDI spec: failed to create device '
        'CDI specs"': "failed to generate CDI spec",
        # gunicorn's default format ("[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s")
        "[2024-05-01 10:00:01 +0000] [123] [ERROR] Worker (pid:456) was sent SIGKILL! Perhaps out of memory?":
            "Worker (pid:456) was sent SIGKILL!",
        # UCX's logger with its time and host:pid:thread, and without them (openucx/ucx#5148, #4556)
        "[1588956223.719348] [vinci115:55453:0]       ib_iface.c:623  UCX  ERROR iface=0x2535490: failed to "
        "create UD QP TX wr:256 sge:2 inl:64 RX wr:4096 sge:1 inl 0: Invalid argument": "iface=0x2535490: failed",
        "ib_iface.c:618  UCX  ERROR ibv_create_cq(cqe=4096) failed: Invalid argument": "ibv_create_cq(cqe=4096)",
    }
    for line, expected in weak.items():
        strong_found, found = _error_lines(line)
        assert strong_found is None and found is not None and found.startswith(expected), (line, found)
    # a traceback logged line by line (indented after the prefix), an introduction, routine errors
    for line in ["ERROR 08-02 18:15:15 [multiproc_worker_utils.py:226]     raise RuntimeError(",
                 ":3:rocdevice.cpp        :468 : 1893174281 us: [pid:217 tid: 0x7f3b2c5ff740] Initializing HSA stack.",
                 "(VllmWorker rank=3 pid=15164) ERROR 06-19 07:06:13 [multiproc_executor.py:527] Last error:",
                 "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: printing enroot log file:",
                 "sshd[24324]: error: Received disconnect from 195.154.37.122: 3: Auth fail [preauth]",
                 "2024-05-01 10:00:00.123 UTC [77] ERROR:  relation \"users\" does not exist",  # one query's error
                 "[2024-05-01 10:00:01 +0000] [123] [INFO] Booting worker with pid: 456",
                 "nvidia-docker-plugin | 2022/04/01 13:29:27 Loading NVIDIA unified memory",  # a Go log line, no error
                 # UCX at its debug level (openucx/ucx#9736)
                 "[1710151844.440518] [m201:4904 :0]    ib_mlx5dv_md.c:916  UCX  DEBUG "
                 "mlx5dv_devx_general_cmd(QUERY_HCA_CAP) failed: Remote I/O error",
                 "2015-07-29 19:03:35,413 - ERROR [LearnerHandler-/10.10.34.11:52225:LearnerHandler@562] - "
                 "Unexpected exception causing shutdown while sock still open"]:
        assert _error_lines(line) == (None, None), line


def test_a_rust_panic_with_its_message_on_the_next_line_is_an_error(library: CompiledLibrary) -> None:
    """Rust 1.73+ ends the panic's first line with its location and prints the message on the
    next (TGI's router and launcher, mistral.rs, candle): one error, not an introduction."""
    log = ("thread 'main' panicked at router/src/main.rs:412:10:\n"
           "called `Result::unwrap()` on an `Err` value: ParseError { kind: InvalidDigit }\n"
           "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    (finding,) = analyze_bytes(log.encode(), library).findings
    assert finding.title.startswith("Not recognised: panicked at router/src/main.rs:412:10: called `Result::unwrap()`")
    # an io::Error's Debug form in the message names its errno
    os_error = log.replace("ParseError { kind: InvalidDigit }",
                           'Os { code: 13, kind: PermissionDenied, message: "Permission denied" }')
    assert ids(os_error, library)[0] == "errno-eacces"
    # the location line alone, cut from its message, stays an introduction
    assert analyze_bytes(b"thread 'main' panicked at src/main.rs:3:5:\n", library).findings == []


def test_logger_marked_errors_lead_only_when_nothing_explains_a_cause(library: CompiledLibrary) -> None:
    logged = "ERROR 07-28 15:07:22 [core.py:632] For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    alone = analyze_bytes(logged.encode(), library).findings
    assert [f.title for f in alone] == ["Not recognised: For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
    # with a line that names a cause (vllm-project/vllm#14452, as the cuda-no-kernel-image fixture quotes it)
    cause = ("ERROR 07-28 15:07:22 [core.py:632] RuntimeError: CUDA error: no kernel image is available for "
             "execution on the device\n")
    findings = analyze_bytes((cause + logged).encode(), library).findings
    assert findings[0].id == "cuda-no-kernel-image-for-device"
    assert [f for f in findings if f.kind == FindingKind.unrecognised] == []


# ray-project/ray#51595 (training b28-03), as pasted: the selection starts inside the first
# line's worker prefix, and the traceback is cut before its exception line
RAY = "(RayWorkerWrapper pid=243, ip=10.99.48.141) "
RAY_DAG = "/usr/local/lib/python3.12/dist-packages/ray/dag/compiled_dag_node.py"
RAY_CUT = RAY[1:] + "ERROR:root:Compiled DAG task exited with exception\n" + prefixed(RAY, [
    "Traceback (most recent call last):", f'  File "{RAY_DAG}", line 745, in exec_operation',
    "    with _device_context_manager():", f'  File "{RAY_DAG}", line 345, in _device_context_manager',
    "    device = ChannelContext.get_current().torch_device"])


def test_a_first_line_cut_inside_its_worker_prefix_gets_it_back(library: CompiledLibrary) -> None:
    report = analyze_bytes(RAY_CUT.encode(), library)
    assert report.findings[0].title == "Not recognised: Compiled DAG task exited with exception"
    assert report.findings[0].evidence[0].line == 1
    quoted = "".join("> " + line + "\n" for line in RAY_CUT.splitlines())  # behind a quote too
    assert analyze_bytes(quoted.encode(), library).findings[0].title == report.findings[0].title
    # a first line that shares no piece of the next line's prefix is left as it is
    other = "some other text) here\n" + RAY_CUT.split("\n", 1)[1]
    assert "Compiled DAG" not in " ".join(f.title for f in analyze_bytes(other.encode(), library).findings)


def test_a_traceback_cut_before_its_exception_is_the_last_lead(library: CompiledLibrary) -> None:
    """Its innermost frame and the source line it quotes are reported, after every other lead
    and only when nothing explains a cause; a traceback that has its exception is not cut."""
    frames = RAY_CUT.split("\n", 1)[1]
    [cut] = analyze_bytes(frames.encode(), library).findings
    assert cut.title == ("Not recognised: a traceback cut before its exception, last in "
                         "ray/dag/compiled_dag_node.py, line 345, in _device_context_manager")
    assert cut.evidence[0].line == 5 and "ChannelContext.get_current().torch_device" in cut.evidence[0].text
    assert "(Ray)" in cut.cause and "not in the log" in cut.cause
    titles = [f.title for f in analyze_bytes(RAY_CUT.encode(), library).findings]
    assert titles[0] == "Not recognised: Compiled DAG task exited with exception" and "cut before" in titles[1]
    whole = frames + RAY + "ModuleNotFoundError: No module named 'frobnicate'\n"
    titles = [f.title for f in analyze_bytes(whole.encode(), library).findings]
    assert not any("cut before" in t for t in titles), titles
    killed = frames + "vllm.service: Main process exited, code=killed, status=9/KILL\n"
    kinds = [f.kind for f in analyze_bytes(killed.encode(), library).findings]
    assert kinds == [FindingKind.pattern, FindingKind.unrecognised], kinds  # below a mere consequence too
    explained = frames + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert [f.id for f in analyze_bytes(explained.encode(), library).findings] == ["cuda-no-kernel-image-for-device"]


# sgl-project/sglang#2431 (corpus 609), as pasted: without the traceback's first line; cut here
# before its exception as well, so only frames and their source lines are left
SGLANG_2431 = (ROOT / "tests" / "data" / "corpus" / "609-chattemplate-base-sglang-2431.log").read_text()
HEADLESS_CUT = "".join(SGLANG_2431.splitlines(keepends=True)[:6])
# thu-ml/SageAttention#7, as pasted (Windows paths): a frame whose source line raises the exception
SAGE_7 = ('  File "D:\\CogVideoX\\CogVideo\\venv\\lib\\site-packages\\triton\\runtime\\build.py", line 52, in _build\n'
          '    raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")\n')


def test_a_traceback_without_its_first_line_and_cut_before_its_exception_is_read(library: CompiledLibrary) -> None:
    """Frames pasted without "Traceback (most recent call last):" that stop before the exception
    are still a traceback cut short (before: no finding); a frame in the middle of a log is not."""
    assert not HEADLESS_CUT.startswith("Traceback") and "ValueError:" not in HEADLESS_CUT
    [cut] = analyze_bytes(HEADLESS_CUT.encode(), library).findings
    assert cut.kind == FindingKind.unrecognised
    assert cut.title == ("Not recognised: a traceback cut before its exception, last in "
                         "transformers/tokenization_utils_base.py, line 1785, in get_chat_template")
    # the same frames with their exception after them are the whole traceback, which a pattern knows
    assert ids(SGLANG_2431, library)[0] == "chat-template-missing-base-model"
    # frames followed by a line of another kind are no traceback of their own
    assert analyze_bytes((HEADLESS_CUT + "INFO: shutting down\n").encode(), library).findings == []


def test_a_cut_tracebacks_raise_statement_stands_for_its_exception(library: CompiledLibrary) -> None:
    """A traceback cut right after a `raise X("message")` source line: patterns read the message
    there, and an unknown one is reported as the exception it raises, not as a cut traceback."""
    assert ids(SAGE_7, library) == ["triton-no-c-compiler"]
    unknown = SAGE_7.replace("Failed to find C compiler. Please specify via CC environment variable.",
                             "Frobnicator has no widget")
    [lead] = analyze_bytes(unknown.encode(), library).findings
    assert lead.title == "Not recognised: RuntimeError: Frobnicator has no widget"
    assert "raise statement" in lead.cause and "triton\\runtime\\build.py, line 52" in lead.cause
    # in a whole traceback the source line repeats the exception and is not read again
    whole = SAGE_7 + "RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n"
    report = analyze_bytes(whole.encode(), library)
    assert [f.id for f in report.findings] == ["triton-no-c-compiler"]
    assert report.findings[0].evidence[0].line == 3
    # a raise that builds its message from a variable names no exception: the traceback is cut
    variable = SAGE_7.replace('"Failed to find C compiler. Please specify via CC environment variable."', "message")
    [cut] = analyze_bytes(variable.encode(), library).findings
    assert cut.title.startswith("Not recognised: a traceback cut before its exception")


# theroyallab/tabbyAPI#217 (training b30-11), as pasted: a Compose column, uvicorn's level prefix
# ("ERROR:" padded to ten, uvicorn/logging.py) on each line of the traceback, a frame cut after its file
TABBY = (ROOT / "tests" / "data" / "training" / "b30-11-prebuilt-image-exllamav2-too-old-for-qwen2-tabbyapi-217.log")


def test_a_traceback_under_uvicorns_level_prefix_is_rebuilt(library: CompiledLibrary) -> None:
    paste = TABBY.read_text().replace("Could not find", "Could not frobnicate")  # an error no pattern knows
    [top] = analyze_bytes(paste.encode(), library).findings
    assert top.title == "Not recognised: ValueError:  ## Could not frobnicate model.embed_tokens.* in model"
    assert "exllamav2/config.py, line 378, in prepare" in top.cause and top.evidence[0].line == 4
    # the prefix comes off a traceback's lines only: two logged errors stay two lines of their own
    two = "ERROR:    Exception in frob handler\nERROR:    Failed to frobnicate the quux\n"
    titles = [f.title for f in analyze_bytes(two.encode(), library).findings]
    assert [t.split()[-1] for t in titles] == ["handler", "quux"], titles


# SystemPanic/vllm-windows#72, as pasted: vLLM's formatter repeats its header on every line of a
# logged traceback; the paste starts inside it (headless) and PyTorch's hint lines follow the error
HEADER_EVERY_LINE = (PASTES / "vllm-windows-72-logger-header-every-line.log").read_text()


def test_a_traceback_logged_with_the_header_on_every_line_is_one_event(library: CompiledLibrary) -> None:
    report = analyze_bytes(HEADER_EVERY_LINE.encode(), library)
    assert [f.id for f in report.findings] == ["cuda-illegal-memory-access"]  # the hints are not errors
    unknown = HEADER_EVERY_LINE.replace("'CUDA error: an illegal memory access was encountered",
                                        "'frobnicated the quux").replace("`cudaErrorIllegalAddress'", "`frobQuux'")
    [top] = analyze_bytes(unknown.encode(), library).findings
    assert top.title == "Not recognised: RuntimeError: Worker failed with error 'frobnicated the quux"
    assert "multiproc_executor.py, line 394, in get_response (vLLM)" in top.cause  # its frame, read


def test_a_logged_message_that_opens_a_traceback_is_not_a_lead_of_its_own(library: CompiledLibrary) -> None:
    head = "(VllmWorker rank=3 pid=226) ERROR 06-26 23:10:17 [multiproc_executor.py:527] "
    log = "".join(head + line + "\n" for line in [  # the form of vllm-project/vllm#20170
        "WorkerProc hit an exception.", "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 293, in execute_model',
        "    output = self.model_runner.execute_model(scheduler_output,",
        "ValueError: frobnicated the quux"])
    [top] = analyze_bytes(log.encode(), library).findings
    assert top.title == "Not recognised: ValueError: frobnicated the quux" and top.evidence[0].line == 5


# A daemon that gives up says one plain sentence, then systemd reports the exit (the lines after
# the daemon's are systemd's formats, src/core/service.c and unit.c)
DAEMON_GIVES_UP = """\
Nov 04 10:00:01 gpu-7 systemd[1]: Starting gpu-telemetry.service - GPU telemetry agent...
Nov 04 10:00:01 gpu-7 gpu-telemetryd[4242]: config file item: COLLECT_INTERVAL has an invalid value
Nov 04 10:00:01 gpu-7 systemd[1]: gpu-telemetry.service: Main process exited, code=exited, status=1/FAILURE
Nov 04 10:00:01 gpu-7 systemd[1]: gpu-telemetry.service: Failed with result 'exit-code'.
Nov 04 10:00:01 gpu-7 systemd[1]: Failed to start gpu-telemetry.service - GPU telemetry agent.
"""


def test_a_failed_units_last_words_lead_over_its_exit(library: CompiledLibrary) -> None:
    findings = analyze_bytes(DAEMON_GIVES_UP.encode(), library).findings
    top = findings[0]
    assert top.kind == FindingKind.unrecognised
    assert top.title == "Not recognised: gpu-telemetryd: config file item: COLLECT_INTERVAL has an invalid value"
    assert "last line gpu-telemetryd logged before gpu-telemetry.service exited with status 1/FAILURE (line 3)" \
        in top.cause
    assert top.evidence[0].line == 2 and findings[1].kind == "pattern"


def test_last_words_only_from_the_failed_units_program_and_not_routine(library: CompiledLibrary) -> None:
    def unknown(log: str) -> list[str]:
        return [f.title for f in analyze_bytes(log.encode(), library).findings if f.kind == FindingKind.unrecognised]

    routine = DAEMON_GIVES_UP.replace("config file item", "INFO config file item")
    assert unknown(routine) == []  # a level that says all is well is not a reason
    other = DAEMON_GIVES_UP.replace("gpu-telemetryd[4242]", "sshd[4242]").replace(
        "gpu-7 systemd[1]: Starting", "gpu-7 cron[77]: Starting")  # two other programs, neither the unit's
    assert unknown(other) == []
    succeeded = DAEMON_GIVES_UP.replace("status=1/FAILURE", "status=0/SUCCESS")
    assert unknown(succeeded) == []


# nvidia-container-runtime#41 (an image that ships nvidia-smi), the line as its fixture quotes it
DRIVER_FILE = ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/aufs/mnt/e5827a97552f6cd98"
               "25b4b3e68fc565e3ae791addeb680394c12de943a5c64d4/usr/bin/nvidia-smi: file exists")


def test_a_hard_wrapped_paste_is_rejoined(library: CompiledLibrary) -> None:
    """Copied from a terminal 64 columns wide: the line cut into pieces of exactly that width,
    mid-word, after a shorter first line."""
    pieces = [DRIVER_FILE[i:i + 64] for i in range(0, len(DRIVER_FILE), 64)]
    paste = "docker: Error response from daemon: OCI runtime create failed.\n" + "\n".join(pieces) + "\n"
    assert len(pieces) == 3 and not any("creation failed" in p and "file exists" in p for p in pieces)
    report = analyze_bytes(paste.encode(), library)
    top = report.findings[0]
    assert top.id == "nvidia-container-cli-driver-file-in-image"
    assert (top.evidence[0].line, top.evidence[0].text) == (2, DRIVER_FILE)  # the input's own line numbers


# blakeblackshear/frigate#9566: Frigate's services print a time column, two spaces, then the line
FRIGATE_TRACEBACK = """\
2024-02-01 02:32:42.112610280  Process camera_processor:back_grass:
2024-02-01 02:32:42.115291436  Traceback (most recent call last):
2024-02-01 02:32:42.115354014    File "/usr/lib/python3.9/multiprocessing/process.py", line 315, in _bootstrap
2024-02-01 02:32:42.115357149      self.run()
2024-02-01 02:32:42.115432436    File "/opt/frigate/frigate/object_detection.py", line 225, in detect
2024-02-01 02:32:42.115435295      (self.labels[int(d[0])], float(d[1]), (d[2], d[3], d[4], d[5]))
2024-02-01 02:32:42.115437405  KeyError: -12
"""


def test_a_time_column_set_off_by_two_spaces_is_read_as_the_time(library: CompiledLibrary) -> None:
    """The traceback behind the column is rebuilt, and so is its tail when the paste starts mid-way
    (the exception line read with the frames above it); the column's time is the finding's time."""
    lines = FRIGATE_TRACEBACK.splitlines(keepends=True)
    for paste, line in (("".join(lines), 7), ("".join(lines[4:]), 3)):
        [found] = analyze_bytes(paste.encode(), library).findings
        assert (found.title, found.evidence[0].line, found.first_time) == (
            "Not recognised: KeyError: -12", line, "2024-02-01T02:32:42Z"), paste
        assert "frigate/object_detection.py" in found.cause, found.cause
    # a logger's own time field, one space before its next field, stays part of the message
    record = console_record("-", 1, "2024-05-01 10:00:00.123 UTC [1] FATAL:  data directory is wrong")
    assert (record.time, record.message) == (None, "2024-05-01 10:00:00.123 UTC [1] FATAL:  data directory is wrong")


def test_a_soft_wrapped_line_and_rsyslog_colour_escapes(library: CompiledLibrary) -> None:
    # flwrlabs/flower#2157 (the ray-memory-monitor fixture's line), as rsyslog stores Ray's colours
    # and as a web page wraps it at a space
    line = ("#033[2m#033[36m(raylet)#033[0m node_manager.cc:3084: 4 Workers (tasks / actors) killed due to "
            "memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: b287aac2de42bef55d1)")
    cut = line.index("due to memory") + len("due to ")
    report = analyze_bytes(f"{line[:cut]}\n{line[cut:]}\n".encode(), library)
    top = report.findings[0]
    assert top.id == "ray-memory-monitor-killed-worker"
    # "(raylet) " is Ray's prefix for its raylet's lines (readers/worker.py): the worker, not the text
    assert "#033" not in top.evidence[0].text and top.evidence[0].text.startswith("node_manager.cc:3084: 4 Workers")


def test_a_line_wrapped_before_its_space_is_rejoined(library: CompiledLibrary) -> None:
    """Dao-AILab/flash-attention#950 (training b24-03), as pasted: the box wrapped the import
    error before the space, so the second piece starts with it, inside Markdown backticks."""
    paste = ("ERROR\n`flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined\n"
             " symbol: _ZN3c104impl3cow11cow_deleterEPv`\n")
    top = analyze_bytes(paste.encode(), library).findings[0]
    assert top.id == "flash-attn-built-for-other-torch"
    assert top.evidence[0].line == 2 and "undefined symbol: _ZN3c10" in top.evidence[0].text


def test_indented_items_after_a_line_are_not_joined() -> None:
    from analyzer.readers.paste import rejoin

    # a kernel call trace and apt's list of unmet dependencies under a long line, a traceback's
    # frame and a short line before a one-space piece: records of their own
    runs = [
        b"task:python3          state:D stack:0     pid:41133 ppid:1      flags:0x00004002 cpu\n"
        b" __schedule+0x2e7/0x8e0\n schedule+0x46/0xb0\n",
        b"The following packages have unmet dependencies and cannot be installed right now:\n"
        b" libnvidia-compute-550 : Depends: libnvidia-gl-550 but it is not going to be installed\n",
        b"RuntimeError: the engine process exited while the model was being loaded, see above\n"
        b"  File \"/usr/lib/python3/dist-packages/vllm/engine.py\", line 10, in run\n",
        b"short line: undefined\n symbol: foo\n",
        # dpkg's indented second line, twice in a row (nvidia-driver-package-configure-failed's fixture)
        b" installed nvidia-kernel-dkms package post-installation script subprocess returned error exit status 10\n"
        b" installed nvidia-dkms-470 package post-installation script subprocess returned error exit status 1\n",
    ]
    for data in runs:
        assert rejoin(data) == data
    # read after a quote, across a blank line, with CR line ends; the count of lines is kept
    quoted = "> " + "x" * 60 + " undefined\r\n\r\n>  symbol: foo\r\n> next\r\n"
    assert rejoin(quoted.encode()).decode() == "> " + "x" * 60 + " undefined symbol: foo\r\n\r\n\n> next\r\n"


def test_equal_length_records_are_not_joined() -> None:
    from analyzer.readers.paste import rejoin

    # a compiler's run of error lines of one length (ptxas prints one per PTX line), glog lines,
    # traceback frames that happen to be as long as each other: records, not pieces
    runs = [
        b"ptxas /tmp/compile-ptx-src-ac38de, line 521; error   : Feature '.bf16' requires .target sm_80 or higher\n"
        b"ptxas /tmp/compile-ptx-src-ac38de, line 523; error   : Feature '.bf16' requires .target sm_80 or higher\n"
        b"ptxas fatal   : Ptx assembly aborted due to errors\n",
        (PASTES / "flashinfer-3674-worker-prefix-blank-lines.log").read_bytes(),
        b"  File \"/usr/lib/python3.13/site-packages/jax/_src/xla_bridge.py\", line 610, in discover_pjrt_plugins\n"
        b"    plugin_module.initialize()\n"
        b"  File \"/usr/lib/python3.13/site-packages/jax_plugins/xla_cuda12/__init__.py\", line 96, in initializ\n"
        b"    xla_client.register_custom_type_id_handler(\n",
        # llama.cpp's own prefix of 2026 builds (as in vtuber-plan/olah#85) on two lines of one length
        # and a shorter one after them (messages from llama-context.cpp's format strings): once
        # joined as a wrapped line, which read the head size 80 as 800
        b"0.01.310.221 E llama_init_from_model: K cache type q4_0 with block size 32 does not divide n_embd_head_k=80\n"
        b"0.01.310.223 E llama_init_from_model: V cache type q8_0 with block size 32 does not divide n_embd_head_v=80\n"
        b"llama_init_from_model: V cache type q4_0 with block size 32 does not divide n_embd_head_k=80\n",
    ]
    for data in runs:
        assert rejoin(data) == data


def test_lines_that_only_share_the_longest_length_are_not_joined() -> None:
    from analyzer.readers.paste import rejoin

    # two log lines that happen to be the input's longest, each followed by a plain line: no cut
    # falls inside a word, so nothing was wrapped (a terminal cuts at its width, mostly mid-word)
    data = (b"nvidia-container-cli: mount error: file creation failed: /var/lib/docker/xyz: file exists (a)\n"
            b"see the hook's log for more\n"
            b"nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/gpus/0000:3b: no such (b)\n"
            b"retrying with the legacy mode\n")
    assert len(data.split(b"\n")[0]) == len(data.split(b"\n")[2])
    assert rejoin(data) == data
    wrapped = data.replace(b"exists (a)", b"exists (ab").replace(b"see the", b"cdsee the").replace(
        b"such (b)", b"such (bc").replace(b"retrying", b"dretrying")
    assert rejoin(wrapped) != wrapped  # the same lines cut inside words are joined


def test_no_last_words_when_the_service_ended_with_a_traceback(library: CompiledLibrary) -> None:
    lines = DAEMON_GIVES_UP.splitlines(keepends=True)
    traceback = ("Nov 04 10:00:01 gpu-7 gpu-telemetryd[4242]: Traceback (most recent call last):\n"
                 'Nov 04 10:00:01 gpu-7 gpu-telemetryd[4242]:   File "/opt/agent/main.py", line 9, in <module>\n'
                 "Nov 04 10:00:01 gpu-7 gpu-telemetryd[4242]: KeyError: 'COLLECT_INTERVAL'\n")
    log = "".join([*lines[:2], traceback, *lines[2:]])
    titles = [f.title for f in analyze_bytes(log.encode(), library).findings if f.kind == FindingKind.unrecognised]
    assert titles == ["Not recognised: KeyError: 'COLLECT_INTERVAL'"]


def test_compose_service_prefixes_are_read_as_the_container_they_come_from(library: CompiledLibrary) -> None:
    """weaviate/weaviate#1736, as pasted from `docker compose up`: every line behind its service
    column. The traceback is rebuilt behind the prefix, and the container-only reading of
    "Found no NVIDIA driver" (the container's GPU request, not the host's driver) ranks first."""
    paste = (PASTES / "weaviate-1736-compose-service-prefix.log").read_text()
    report = analyze_bytes(paste.encode(), library)
    top = report.findings[0]
    assert top.id == "container-torch-found-no-nvidia-driver"
    assert all(not e.text.startswith("qna-transformers_1") for e in top.evidence)
    # the same line on a host keeps the host's reading
    host = "\n".join(line.split("| ", 1)[1] for line in paste.splitlines())
    assert ids(host, library)[0] == "nvidia-driver-not-loaded"


def test_a_named_containers_compose_column_is_read_when_nearly_every_line_has_it(library: CompiledLibrary) -> None:
    """`container_name:` in a compose file: Compose prints the name without a replica number,
    padded like the other services' (two of them here); a traceback under it is rebuilt."""
    paste = "".join(f"{name}  | {line}\n" for name, line in [
        ("ollama    ", "time=2025-01-01T00:00:00Z level=INFO msg=starting"),
        ("open-webui", "Traceback (most recent call last):"),
        ("open-webui", '  File "/usr/lib/python3/site-packages/foo/x.py", line 3, in f'),
        ("open-webui", "    g()"),
        ("open-webui", "ValueError: frobnicated quux")])
    [top] = analyze_bytes(paste.encode(), library).findings
    assert top.title == "Not recognised: ValueError: frobnicated quux" and "foo/x.py, line 3, in f" in top.cause
    # one or two such lines among others are a table's rows, not a column: left as they are
    table = "model  | llama\n" + "".join(f"routine line {i}\n" for i in range(8))
    records = parse_lines([line.encode() for line in table.splitlines()], InputForm.console)
    assert records[0].message == "model  | llama" and records[0].worker is None


def test_srun_labels_are_read_as_the_task_a_line_comes_from(library: CompiledLibrary) -> None:
    """`srun --label` puts the task id before every line, right-aligned to one width ("%*d: ",
    src/common/write_labelled_message.c), torch's `[rankN]: ` often after it (validation b36-02 was
    silent so). Two tasks' tracebacks interleaved are rebuilt apart; a few lines that start with a
    number and a colon among others are no column."""
    lines = [(" 9", "[rank75]: Traceback (most recent call last):"), ("10", "Traceback (most recent call last):"),
             (" 9", '[rank75]:   File "/x/frob/hooks.py", line 173, in add_hooks'),
             ("10", '  File "/x/quux/io.py", line 8, in read'),
             (" 9", "[rank75]:     offload._frob_recursively(offload.module)"),
             ("10", "    open(path)"),
             (" 9", "[rank75]: AttributeError: 'Offload' object has no attribute '_frob_recursively'"),
             ("10", "PermissionError: [Errno 13] Permission denied: '/data/quux.bin'")]
    text = "".join(f"{t}: {line}\n" for t, line in lines)
    report = analyze_bytes(text.encode(), library)
    unknown = [f for f in report.findings if f.title.startswith("Not recognised: AttributeError")]
    assert len(unknown) == 1 and "frob/hooks.py, line 173" in unknown[0].cause, [f.title for f in report.findings]
    records = parse_lines([line.encode() for line in text.splitlines()], InputForm.console)
    assert [r.worker for r in records[:2]] == ["task 9 rank75", "task 10"]
    het = parse_lines([b"P1 3: ValueError: frobnicated quux", b"P1 3: done"], InputForm.console)
    assert (het[0].worker, het[0].message) == ("P1 task 3", "ValueError: frobnicated quux")
    table = "404: Not Found\n" + "".join(f"routine line {i}\n" for i in range(8))
    records = parse_lines([line.encode() for line in table.splitlines()], InputForm.console)
    assert records[0].message == "404: Not Found" and records[0].worker is None


def test_ffmpegs_assert_and_asserts_written_after_it_are_reported(library: CompiledLibrary) -> None:
    """FFmpeg's av_assert0 (libavutil/avassert.h: "Assertion %s failed at %s:%d") and a test macro
    that quotes the expression (GDRCopy's sanity test); also deep in a long log (phase 1)."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    for line, title in (("Assertion s->buf_ptr < s->buf_end failed at libavcodec/put_bits.h:107",
                         "Not recognised: Assertion `s->buf_ptr < s->buf_end' failed at libavcodec/put_bits.h:107"),
                        ('Assertion "(frob_pin(g, ptr, size)) == (0)" failed at sanity.cpp:188',
                         "Not recognised: Assertion `(frob_pin(g, ptr, size)) == (0)' failed at sanity.cpp:188")):
        for ls in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(ls) + "\n").encode(), library).findings]
            assert titles == [title], titles


def test_a_compose_traceback_no_pattern_knows_is_reported(library: CompiledLibrary) -> None:
    paste = prefixed("api-1  | ", [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/site-packages/foo/loader.py", line 20, in load',
        '    raise ValueError("weights file is missing a tensor named lm_head.weight")',
        "ValueError: weights file is missing a tensor named lm_head.weight"]) + "api-1 exited with code 1\n"
    report = analyze_bytes(paste.encode(), library)
    assert report.findings[0].kind is FindingKind.unrecognised
    assert "foo/loader.py" in report.findings[0].cause


def test_a_traceback_whose_quotes_were_escaped_is_read_as_python_printed_it(library: CompiledLibrary) -> None:
    """A traceback pasted from a JSON string or a repr has `File \\"/x.py\\", line 3` frames (training
    b40-03, torchx#540 as pasted, was read as a bare exception line); its frames read as Python printed
    them, and other lines keep their escaped quotes."""
    from analyzer.readers.console import console_record

    raw = (ROOT / "tests" / "data" / "training" / "b40-03-ray-random-rdzv-port-not-exposed-torchx-540.log").read_text()
    assert 'File \\"' in raw
    expected = ["torch-elastic-c10d-store-connection-lost"]
    assert ids(raw, library)[:1] == ids(raw.replace('\\"', '"'), library)[:1] == expected
    assert console_record("-", 1, '  File \\"/a/b.py\\", line 3, in f').message == '  File "/a/b.py", line 3, in f'
    assert console_record("-", 1, 'level=error msg=\\"x\\"').message == 'level=error msg=\\"x\\"'


# How people paste a log into a thread or a ticket, each applied to every line of a real log
PASTE_FORMS: dict[str, Callable[[list[str]], list[str]]] = {
    "quoted reply": lambda ls: ["> " + line for line in ls],
    "CRLF": lambda ls: [line + "\r" for line in ls],
    "blank line after each": lambda ls: [x for line in ls for x in (line, "")],
    "Compose service column": lambda ls: ["vllm-1  | " + line for line in ls],
    "Compose column of a named container": lambda ls: ["ollama  | " + line for line in ls],
    "kubectl logs --prefix": lambda ls: ["[pod/vllm-0/vllm] " + line for line in ls],
    "docker logs -t": lambda ls: ["2024-05-01T10:00:00.123456789Z " + line for line in ls],
    "colour codes": lambda ls: ["\x1b[36m" + line + "\x1b[0m" for line in ls],
    "Markdown fence": lambda ls: ["```", *ls, "```"],
    "Markdown code block (4 spaces)": lambda ls: ["    " + line for line in ls],
    "tab-indented": lambda ls: ["\t" + line for line in ls],
    "vLLM worker prefix": lambda ls: ["(VllmWorker rank=0 pid=1) " + line for line in ls],
    "srun --label": lambda ls: [" 3: " + line for line in ls],
}


@pytest.mark.parametrize("form", PASTE_FORMS)
def test_a_paste_form_does_not_change_the_diagnosis(form: str, library: CompiledLibrary) -> None:
    """Every development, holdout and training log, pasted in this form, gets the top finding it
    gets as written (an `unrecognised` finding included: it must not turn silent behind a prefix)."""
    changed = []
    data = ROOT / "tests" / "data"
    for path in sorted(p for half in ("corpus", "holdout", "training") for p in (data / half).glob("*.log")):
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        base = ids("\n".join(lines), library)[:1]
        pasted = ids("\n".join(PASTE_FORMS[form](lines)), library)[:1]
        if pasted != base and not _container_refinement(form, base, pasted, library):
            changed.append((path.name, base, pasted))
    assert not changed


# prefixes that say "a container's line"
CONTAINER_FORMS = {"Compose service column", "Compose column of a named container", "kubectl logs --prefix"}


def _container_refinement(form: str, base: list[str], pasted: list[str], library: CompiledLibrary) -> bool:
    """Behind a container's log prefix a pattern kept for containers (`in_container: true`) may
    rank above the general pattern it refines: the prefix itself is evidence (the Kubernetes or
    Compose variant of "no driver")."""
    if form not in CONTAINER_FORMS or not base or not pasted or pasted[0] not in library.patterns:
        return False
    cp = library.patterns[pasted[0]]
    return cp.head.in_container and base[0] in cp.pattern.refines


def test_a_logfmt_value_wrapped_onto_indented_lines_is_read_as_one_line(library: CompiledLibrary) -> None:
    # Azure/AgentBaker#9150 as quoted: nvidia-ctk's msg="..." wrapped by hand, its rest indented
    wrapped = (
        'nvidia-ctk: level=error msg="failed to write spec: invalid CDI Spec:\n'
        '            failed add device \\"all\\": invalid device, empty device edits"\n'
        "systemd[1]: nvidia-cdi-refresh.service: Main process exited, code=exited, status=1/FAILURE\n"
    )
    top = analyze_bytes(wrapped.encode(), library).findings[0]
    assert top.id == "cdi-spec-device-with-empty-edits"
    assert top.evidence[0].line == 1


def test_an_open_quote_without_an_indented_closing_piece_is_left_alone() -> None:
    from analyzer.readers.paste import rejoin

    for data in (b'a=1 msg="open\nnext line" b=2\n', b'msg="open\n  indented but never closed\n'):
        assert rejoin(data) == data
    assert rejoin(b'msg="a\n  b"\n') == b'msg="a b"\n\n'


def test_a_logfmt_values_escapes_read_as_words(library: CompiledLibrary) -> None:
    """logrus quotes a value with Go's %q: a captured command output's line breaks and quotes come
    escaped (the GPU Operator's MIG manager logs nvidia-smi's reply so)."""
    line = 'time="2025-08-19T11:17:47Z" level=error msg="\\nResetting GPU 0000:00:04.0 is \\"frobnicated\\".\\n"\n'
    [top] = analyze_bytes(line.encode(), library).findings
    assert top.title == 'Not recognised: Resetting GPU 0000:00:04.0 is "frobnicated".'


def test_structured_loggers_error_lines_are_weak_leads(library: CompiledLibrary) -> None:
    """zap's console encoder (controller-runtime: the GPU Operator's clusterpolicy controller,
    training b33-03, was silent; a pattern now names its error) with an epoch or ISO time, with and
    without the logger's name and
    caller; zap's, logrus's and slog's JSON lines. The message and the fields' error are the lead,
    found in phase 1 too; the same loggers' info lines and a JSON line that is no log say nothing."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    err = 'frobnicating \\"cluster-policy\\": quux \\"node.example.io/v9\\" refused'
    want = 'Not recognised: Reconciler error: frobnicating "cluster-policy": quux "node.example.io/v9" refused'
    for line in (f'1.6654307708338156e+09\tERROR\tcontroller.clusterpolicy-controller\tReconciler error\t'
                 f'{{"name": "cluster-policy", "namespace": "", "error": "{err}"}}',
                 f'2022-10-10T19:39:30.833Z\tERROR\tcontroller\tcontroller/controller.go:326\tReconciler error\t'
                 f'{{"error": "{err}"}}',
                 f'{{"level":"error","ts":1665430770.83,"logger":"controller","msg":"Reconciler error",'
                 f'"error":"{err}"}}',
                 f'{{"time":"2025-01-02T03:04:05Z","level":"ERROR","msg":"Reconciler error","err":"{err}"}}'):
        for lines in ([line], [*filler[:1500], line, *filler[1500:]]):
            titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
            assert titles == [want], titles
    [top] = analyze_bytes(b"2024-01-02T03:04:05Z\tFATAL\tsetup\tunable to start manager\n", library).findings
    assert top.title == "Not recognised: unable to start manager"
    for quiet in ('1.6654307708338156e+09\tINFO\tcontroller\tStarting workers\t{"worker count": 1}',
                  '{"level":"info","msg":"Reconciler error count reset","error":"none"}',
                  '{"name": "error", "kind": "level"}'):
        assert analyze_bytes((quiet + "\n").encode(), library).findings == [], quiet


def test_a_failed_make_recipe_is_one_weak_lead_below_the_compilers_error(library: CompiledLibrary) -> None:
    """GNU make's "*** [<makefile>:<line>: <target>] Error <n>" (src/job.c), repeated by each make
    above the failed one: one lead, the innermost target, found in phase 1 too; the compiler's own
    error line leads over it, and a failure make was told to ignore is none."""
    filler = [f"Dec 10 07:51:{i % 60:02d} host app[1]: routine line {i} ok" for i in range(3000)]
    cascade = ["make[2]: *** [scripts/Makefile.build:252: /build/frob/frob-drv.o] Error 1",
               "make[1]: *** [Makefile:2024: /build/frob] Error 2", "make: *** [Makefile:82: modules] Error 2"]
    for lines in (cascade, [*filler[:1500], *cascade, *filler[1500:]]):
        titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
        assert titles == ["Not recognised: make: [scripts/Makefile.build:252: /build/frob/frob-drv.o] Error 1"], titles
    compiler = "/build/frob/frob-drv.c:1439:18: error: 'struct frob' has no member named 'quux'"
    titles = [f.title for f in analyze_bytes(("\n".join([compiler, *cascade]) + "\n").encode(), library).findings]
    assert titles[0] == "Not recognised: " + compiler and titles[1].startswith("Not recognised: make: ["), titles
    assert analyze_bytes(b"make: *** [Makefile:9: docs] Error 1 (ignored)\n", library).findings == []


def test_a_logrus_info_line_whose_message_is_an_error_is_a_weak_lead(library: CompiledLibrary) -> None:
    """logrus' Printf logs at level info; the device plugin's config-manager ends with
    `log.Printf("Error: %v", err)` (NVIDIA/k8s-device-plugin cmd/config-manager/main.go), so its
    fatal error reads level=info msg="Error: ..." (here one of its own error chains, built from its
    format strings: signalProcess's "error finding pid: %v" around "no process found"); its routine
    info lines stay quiet."""
    head = 'time="2024-02-09T16:25:33Z" level=info msg='
    lines = [head + '"Waiting for change to \'nvidia.com/device-plugin.config\' label"',
             head + '"Label change detected: nvidia.com/device-plugin.config=gpu-1"',
             head + '"Error: error finding pid: no process found"']
    filler = [f'time="2024-02-09T16:25:{i % 60:02d}Z" level=info msg="Already configured. Skipping update..."'
              for i in range(2000)]
    for log in (lines, [*filler, *lines]):
        titles = [f.title for f in analyze_bytes(("\n".join(log) + "\n").encode(), library).findings]
        assert titles == ["Not recognised: Error: error finding pid: no process found"], titles
    assert analyze_bytes(("\n".join([*lines[:2], *filler]) + "\n").encode(), library).findings == []


def test_tensorpipes_failed_check_pasted_alone_is_an_error_line(library: CompiledLibrary) -> None:
    """TensorPipe's TP_THROW prefix ("In <function> at <file>:<line> \\"...", tensorpipe/common/defs.h),
    the message of pytorch/pytorch#65022 pasted without the RuntimeError torch wraps it in."""
    line = 'In operator() at tensorpipe/common/ibv.h:172 "": Operation not supported'
    filler = [f"[I tensorpipe_agent.cpp:{i}] routine line {i}" for i in range(2000)]
    for log in ([line], [*filler, line]):
        titles = [f.title for f in analyze_bytes(("\n".join(log) + "\n").encode(), library).findings]
        assert titles == ["Not recognised: " + line], titles
    assert analyze_bytes(b"In total at least 3 GPUs: see tensorpipe.h:12 \"x\"\n", library).findings == []


def test_nixs_failed_build_is_an_error_line(library: CompiledLibrary) -> None:
    """chaotic-cx/nyx#963: Nix's line for a derivation whose builder failed, its last log lines behind
    "> " (routine compiler progress here); and the wording of later Nix releases, built from it."""
    drv = "/nix/store/5phpxzraciqshqqysnzxafg46pk4802q-nvidia-x11-565.77-6.13.0.drv"
    lines = [f"error: builder for '{drv}' failed with exit code 2;", "       last 25 log lines:",
             "       >   CC [M]  nvidia-drm/nvidia-drm-gem.o", "       >   CC [M]  nvidia-drm/nvidia-drm-fb.o"]
    titles = [f.title for f in analyze_bytes(("\n".join(lines) + "\n").encode(), library).findings]
    assert len(titles) == 1 and titles[0].startswith("Not recognised: error: builder for '/nix/store/"), titles
    for line in (f"error: build of '{drv}' on 'ssh-ng://builder' failed: builder for '{drv}' failed with exit code 1;",
                 f"error: Cannot build '{drv}'."):
        titles = [f.title for f in analyze_bytes((line + "\n").encode(), library).findings]
        assert len(titles) == 1 and titles[0].startswith("Not recognised: error: "), titles
    assert analyze_bytes(f"building '{drv}'...\n".encode(), library).findings == []


def test_an_ipython_traceback_cut_before_its_exception_names_its_arrow_row(library: CompiledLibrary) -> None:
    """IPython's rows (a cell, a `File <path>:<line>, in <func>` location, arrowed source rows) from
    state-spaces/mamba#85, cut before the exception: the innermost location and its arrow row are the lead."""
    paste = ("RuntimeError                              Traceback (most recent call last)\n"
             "Cell In[2], line 14\n"
             "---> 14 y = model(x)\n"
             "     15 assert y.shape == x.shape\n"
             "\n"
             "File ~/miniconda3/envs/textgen/lib/python3.11/site-packages/torch/nn/modules/module.py:1518, "
             "in Module._wrapped_call_impl(self, *args, **kwargs)\n"
             "   1517 else:\n"
             "-> 1518     return self._call_impl(*args, **kwargs)\n")
    [cut] = analyze_bytes(paste.encode(), library).findings
    assert cut.title == ("Not recognised: a traceback cut before its exception, last in "
                         "torch/nn/modules/module.py, line 1518, in Module._wrapped_call_impl")
    assert "return self._call_impl" in cut.evidence[0].text


def test_an_error_chain_wrapped_after_its_colons_is_rejoined(library: CompiledLibrary) -> None:
    """A Go error chain as kubectl describe shows it, broken by the paste after its colons with
    the rest indented deeper: the pieces join the row, so a pattern written for the whole message
    matches; a Python exception's own indented lines stay lines of their own."""
    paste = ("  Warning  FailedCreatePodSandBox  12s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown "
             "desc = failed to create containerd task: failed to create shim task:\n"
             "      creating container: cannot create sandbox: cannot read client sync file:\n"
             "      waiting for sandbox to start: EOF\n")
    top = analyze_bytes(paste.encode(), library).findings[0]
    assert top.id == "gvisor-sandbox-start-failed-eof"
    assert top.evidence[0].line == 1 and top.evidence[0].text.endswith("waiting for sandbox to start: EOF")
    state_dict = ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM: model failed:\n"
                  "\tsize mismatch for lm_head.weight: copying a param with shape torch.Size([32000, 4096]).\n")
    assert tidy(state_dict.encode()) == state_dict.encode()


def test_a_cuda_check_line_whose_string_no_catalogue_knows_is_reported_deep_in_a_log(
        library: CompiledLibrary) -> None:
    """A CUDA program's check macro ("CUDA error: <string>", the copied CUDA_CHECK's "CUDA error <n> at
    <file>:<line>: <string>", llama.cpp's in 2023) is an error line even when no catalogue knows its
    string; a known string in the same form is the catalogue's or a pattern's finding."""
    filler = [f"llama_model_loader: - tensor {i}: blk.{i % 32}.attn_q.weight q4_0 [4096, 4096]" for i in range(3000)]
    for line in ("CUDA error: the frobnicator is on fire",
                 "CUDA error 999 at /build/llama.cpp/ggml-cuda.cu:7641: the frobnicator is on fire"):
        log = "\n".join([*filler[:1500], "tabby_1  | " + line, *filler[1500:]]) + "\n"
        assert [f.title for f in analyze_bytes(log.encode(), library).findings] == [f"Not recognised: {line}"]
    oom = "\n".join([*filler[:1500], "CUDA error 2 at /build/llama.cpp/ggml-cuda.cu:7641: out of memory"]) + "\n"
    assert analyze_bytes(oom.encode(), library).findings[0].id == "cuda-out-of-memory"
    assert analyze_bytes("\n".join(filler[:100]).encode() + b"\n", library).findings == []


def test_the_cuda_samples_error_idiom_is_an_error_line(library: CompiledLibrary) -> None:
    """vectorAdd's "Failed to <step> (error code <cudaGetErrorString>)!" is copied by many CUDA
    programs: a wording no pattern knows is still reported, not left silent."""
    line = "Failed to allocate vector Q on the frobnicator (error code initialization error)!"
    titles = [f.title for f in analyze_bytes((line + "\n").encode(), library).findings]
    assert titles == [f"Not recognised: {line}"]
    known = b"Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n"
    assert analyze_bytes(known, library).findings[0].id == "gpu-operator-cuda-validator-vectoradd-failed"
