"""scripts/mine_messages.py on a small real git repository: templates per release, the first
and last release that prints each, and whether the library recognises it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import mine_messages


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def release(tmp_path: Path, files: dict[str, str]) -> Path:
    """A repository holding `files`, committed and tagged v1.0."""
    repo = tmp_path / "proj"
    repo.mkdir()
    git(tmp_path, "init", "-q", str(repo))
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1.0")
    return repo


def test_templates_releases_and_coverage(tmp_path: Path) -> None:
    repo = release(tmp_path, {
        "pkg/gate.py": 'def gate(v):\n    raise RuntimeError(\n        "SM 12.x requires CUDA >= 12.9")\n'})
    code = repo / "pkg" / "gate.py"
    other = 'def other(n):\n    raise ValueError(f"the widget count {n} is not supported")\n'
    code.write_text(code.read_text() + other)
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "tag", "v1.1")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    tags = mine_messages.release_tags(bare, r"^v\d", 5)
    assert tags == ["v1.0", "v1.1"]
    rows = {r.template: r for r in mine_messages.mine(bare, tags, ["pkg"])}
    assert (rows["SM 12.x requires CUDA >= 12.9"].first, rows["SM 12.x requires CUDA >= 12.9"].last) == ("v1.0", "v1.1")
    assert rows["the widget count {} is not supported"].first == "v1.1"
    mine_messages.cover(rows.values(), mine_messages.expressions())
    assert rows["SM 12.x requires CUDA >= 12.9"].covered_by == "flashinfer-sm12x-needs-cuda-12-9"
    assert rows["the widget count {} is not supported"].covered_by is None


def test_a_message_split_over_adjacent_literals_is_read_whole() -> None:
    """Python and C join adjacent string literals; a message written over several lines is one
    template (SGLang's "...not supported." "Please try with PP." keeps its missing space)."""
    code = '\n        "Prequant BitsAndBytes models with TP is not supported."\n        "Please try with PP."\n    )'
    assert mine_messages.message(code) == "Prequant BitsAndBytes models with TP is not supported.Please try with PP."
    assert mine_messages.message('"a message of its own", "an argument")') == "a message of its own"
    assert mine_messages.message('"first part " \\\n "second part")') == "first part second part"
    assert mine_messages.message("no literal here") is None


def test_logging_calls_asserts_and_macros_of_each_language(tmp_path: Path) -> None:
    """Messages a program logs or asserts, not only those it raises: Python loggers, warnings and
    asserts (and messages joined with `+`), C/C++ logging macros (glog, the NVIDIA driver's
    NV_PRINTF, systemd's log_unit_*, Slurm's error()/fatal(), the ROCm runtime's LogError/
    LogPrintfError/ClPrint, rocBLAS's error stream, amdgpu's DRM_ERROR/DRM_DEV_ERROR; not a method or
    member called error(), nor a function that only ends in "error("), Go loggers with `%v` and
    slog's key-value calls, and Rust's panic!/bail!, expect() and thiserror's #[error] attributes."""
    repo = release(tmp_path, {
        "a.py": 'logging.error("the engine core died unexpectedly: %s", e)\n'
                'warnings.warn(f"flash attention is disabled on {arch}")\n'
                'assert world_size % tp == 0, "world size must be divisible by tensor parallel size"\n'
                'x = [e for e in y]\n',
        "b.cc": 'LOG(ERROR) << "cudaMalloc failed to allocate the arena";\n'
                'NV_PRINTF(LEVEL_ERROR, "GSP RPC timed out after %d ms\\n", t);\n'
                'log_unit_error_errno(u, r, "Failed to set up mount namespacing: %s: %m", p);\n'
                'printf("progress %d of %d\\n", i, n);\n',
        "c.go": 'klog.Errorf("failed to allocate device %q for pod %v: %w", id, pod, err)\n'
                'slog.Error("failed to load the model runner", "error", err)\n'
                'slog.WarnContext(ctx, "GPU discovery timed out, falling back", "gpus", n)\n',
        "d.rs": 'panic!("Shard {rank} failed to start: {err:?}");\n'
                'let c = cfg.expect("could not read the model configuration file");\n'
                '    #[error("Could not start backend: {0}")]\n    StartupError(String),\n',
        "e.py": 'raise ValueError("unsupported dtype " + str(dtype) + " for this kernel")\n'
                'raise RuntimeError(name + " is not a registered attention backend")\n',
        "gres_nvml.c": '\t\terror("Failed to get device handle for GPU %d: %s", i, nvmlErrorString(r));\n'
                       '\tfatal("cgroup namespace \'%s\' not mounted. aborting", ns);\n'
                       '\tset_last_error("an error about %d things", n);\n'
                       '\tstatus.error("a method\'s own error text here");\n'
                       '\tp->error("a member function\'s error text here");\n',
        "device.cpp": '    LogError("Unable to allocate aligned memory");\n'
                      '    LogPrintfError("Failed to load code object for device %s", name);\n'
                      '    ClPrint(amd::LOG_ERROR, amd::LOG_CODE, "Cannot find symbol %s in the module", sym);\n'
                      '    rocblas_cerr << "rocBLAS error: Cannot read " << path << std::endl;\n',
        "amdgpu_device.c": '\tDRM_ERROR("sw_init of IP block <%s> failed %d\\n", name, r);\n'
                           '\tDRM_DEV_ERROR(adev->dev, "ring %s test failed (%d)\\n", ring->name, r);\n',
    })
    got = set(mine_messages.templates_at(repo, "v1.0", []))
    assert got == {
        "the engine core died unexpectedly: {}",
        "flash attention is disabled on {}",
        "world size must be divisible by tensor parallel size",
        "cudaMalloc failed to allocate the arena",
        "GSP RPC timed out after {} ms",
        "Failed to set up mount namespacing: {}: {}",
        "failed to allocate device {} for pod {}: {}",
        "failed to load the model runner",
        "GPU discovery timed out, falling back",
        "Shard {} failed to start: {}",
        "could not read the model configuration file",
        "Could not start backend: {}",
        "unsupported dtype {} for this kernel",
        "{} is not a registered attention backend",
        "Failed to get device handle for GPU {}: {}",
        "cgroup namespace '{}' not mounted. aborting",
        "Unable to allocate aligned memory",
        "Failed to load code object for device {}",
        "Cannot find symbol {} in the module",
        "rocBLAS error: Cannot read {}",
        "sw_init of IP block <{}> failed {}",
        "ring {} test failed ({})",
    }, got
    assert set(mine_messages.templates_at(repo, "v1.0", ["e.py", "d.rs"])) == {  # files, not only folders
        "unsupported dtype {} for this kernel", "{} is not a registered attention backend",
        "Shard {} failed to start: {}", "could not read the model configuration file", "Could not start backend: {}"}


def test_calls_commented_out_print_nothing(tmp_path: Path) -> None:
    """NCCL's cudawrap.cc keeps `// WARN("CUDA Driver version found is %d. ...")` as a comment:
    a template no release prints must not count against the library's coverage. A C `#define`
    is code, not a comment: only Python reads `#` as one."""
    repo = release(tmp_path, {
        "w.cc": '    // WARN("CUDA Driver version found is %d. Minimum requirement is %d", v, m);\n'
                '    /* WARN("an old wording kept in a block comment %d", v); */\n'
                '    WARN("NET/IB : Unable to query device %d", d);\n'
                '#define CHECK_FD(fd) WARN("invalid socket descriptor %d", fd)\n',
        "w.py": '# raise RuntimeError("this check was removed long ago")\n'
                'raise RuntimeError("the model needs a newer release of the library")  # why\n',
    })
    assert set(mine_messages.templates_at(repo, "v1.0", [])) == {
        "NET/IB : Unable to query device {}", "invalid socket descriptor {}",
        "the model needs a newer release of the library"}


def test_triton_status_objects_and_messages_built_with_plus_or_stream(tmp_path: Path) -> None:
    """Triton builds its errors as C++ Status objects and TRITONSERVER_ErrorNew with `+` on
    std::string and logs with `LOG_ERROR <<`: each expression between the literals is a `{}`,
    `std::endl` ends the line, and RETURN_IF_ERROR(f(x, "a")) passes on f's error ("a" is no
    message). Triton's core has release branches (r26.06), not tags."""
    repo = release(tmp_path, {
        "backend_model.cc":
            '    return Status(\n'
            '        Status::Code::INVALID_ARG, "unable to find backend library \'" +\n'
            '                                       cpp_backend_libname + "\' for model \'" +\n'
            '                                       model_config->name() + "\', searched: " + paths);\n'
            '  RETURN_IF_ERROR(BackendConfiguration(itr->second, "min-compute-capability", &s));\n'
            '  return Status(Status::Code::INTERNAL, msg);\n'
            '  LOG_INFO << "loading the repository agent";\n',
        "stub.cc":
            '    return TRITONSERVER_ErrorNew(\n'
            '        TRITONSERVER_ERROR_INVALID_ARG,\n'
            '        (std::string("invalid value type for \'") + key +\n'
            '         std::string("\' parameter, expected bool_param.")).c_str());\n'
            '  LOG_ERROR << "Stub process is unhealthy and it will be restarted " << std::endl;\n'
            '  LOG_ERROR << model_name << " failed to load version " << std::to_string(v + 1);\n'
            '  LOG_MESSAGE(TRITONSERVER_LOG_ERROR, (std::string("Failed to finalize ") + e.what()).c_str());\n',
    })
    git(repo, "branch", "r26.06")
    assert mine_messages.release_tags(repo, r"^r\d+\.\d+$", 5) == ["r26.06"]
    assert set(mine_messages.templates_at(repo, "r26.06", [])) == {
        "unable to find backend library '{}' for model '{}', searched: {}",
        "invalid value type for '{}' parameter, expected bool_param.",
        "Stub process is unhealthy and it will be restarted",
        "{} failed to load version {}",
        "Failed to finalize {}",
    }

