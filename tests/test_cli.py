"""The CLI as a user meets it: exit codes, one-line errors, the JSON contract, Markdown,
and a `--help` that loads none of the heavy packages."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CHAIN, GATE, ROOT, in_pty, root_id

EXAMPLE = ROOT / "examples" / "founding-incident.log"


# a guard against a hung run, not a speed target (bench/ measures speed): a whole-library lint
# takes about 45 s on an idle 2-core machine and several times that beside other jobs
RUN_TIMEOUT_S = 600


def triage(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "analyzer", *args], input=stdin, capture_output=True,
                          env=env, cwd=cwd or ROOT, timeout=RUN_TIMEOUT_S)


def test_json_contract() -> None:
    res = triage("--format", "json", str(EXAMPLE))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["version"] == 1
    assert doc["inputs"] == [{"path": str(EXAMPLE), "format": "journal-short", "lines": 63,
                              "bytes": EXAMPLE.stat().st_size, "undecodable": 0, "plain": 0}]
    required = {"rank", "id", "kind", "title", "severity", "confidence", "cause", "fix", "avoid", "evidence",
                "count", "captures", "related"}
    for i, f in enumerate(doc["findings"], 1):
        assert required <= f.keys()
        assert f["rank"] == i and f["kind"] in {"pattern", "rule", "chain", "unrecognised"}
        assert isinstance(f["reasons"], list) and f["reasons"] and isinstance(f["score"], float)
        assert f["severity"] in {"info", "low", "medium", "high", "critical"}
        assert f["confidence"] in {"low", "medium", "high"}
        assert all(set(e) == {"path", "line", "text"} for e in f["evidence"])
        assert isinstance(f["fix"], list) and f["fix"] and isinstance(f["avoid"], list)
    top = doc["findings"][0]
    assert (top["id"], top["kind"], root_id(top)) == (CHAIN, "chain", GATE)
    assert top["evidence"][2] == {"path": str(EXAMPLE), "line": 18,
                                  "text": "Failed to get device capability: SM 12.x requires CUDA >= 12.9."}
    assert any("CUDA_HOME=/dev/null" in a for a in top["avoid"])
    assert "host-oom-killed-service" in top["members"]
    assert {s["id"] for s in top["symptoms"]} >= {GATE, "host-oom-killed-service", "flashinfer-no-eligible-cuda-arch"}
    assert [h["supported"] for h in top["hypotheses"]] == [False, False, False]
    assert doc["facts"]["nvcc_version"] == {"name": "nvcc_version", "label": "nvcc (CUDA toolkit compiler)",
                                            "value": "12.8", "derived": False,
                                            "evidence": {"path": str(EXAMPLE), "line": 10,
                                                         "text": "Cuda compilation tools, release 12.8, V12.8.93"}}
    assert [t["kind"] for t in doc["timeline"]][:4] == ["host-oom-killed-service", "exit", "restart", "start"]


def test_terminal_output_shows_cause_evidence_fix_and_avoid() -> None:
    res = triage(str(EXAMPLE))
    out = res.stdout.decode()
    assert res.returncode == 0
    assert out.index("#1 chain · oom-restart-surfaces-toolchain-mismatch") < out.index("#2 cuda-home-has-no-nvcc")
    for text in ("Evidence", "Fix", "Do NOT", "CUDA_HOME=/dev/null", "line 18 ", "founding-incident.log",
                 "Facts from the log", "Timeline", "Anti-fix"):
        assert text in out
    assert "\x1b[" not in out  # NO_COLOR


def test_markdown_output() -> None:
    out = triage("--format", "markdown", str(EXAMPLE)).stdout.decode()
    assert out.startswith("# triage report\n")
    assert "## 1. After an OOM kill and a restart, the new process failed on a toolchain problem: FlashInfer" in out
    assert "**Why the earlier step could lead to the failure** (candidates, checked against this log)" in out
    assert "- not shown: A package changed after the old process started" in out
    assert "## Facts from the log" in out and "## Timeline" in out
    assert "**Do not**" in out and "```\n" in out


def test_stdin() -> None:
    res = triage("--format", "json", "-", stdin=EXAMPLE.read_bytes())
    doc = json.loads(res.stdout)
    assert doc["inputs"][0]["path"] == "-"
    assert root_id(doc["findings"][0]) == GATE


def test_fail_on() -> None:
    assert triage("--fail-on", "critical", str(EXAMPLE)).returncode == 1
    quiet = ROOT / "tests" / "data" / "benign" / "loghub" / "Zookeeper_2k.log"
    assert triage("--fail-on", "info", str(quiet)).returncode == 0


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: d / "missing.log", "cannot open: no such file or directory"),
    (lambda d: d, "is a directory"),
    (lambda d: _write(d / "empty.log", b""), "empty input"),
    (lambda d: _write(d / "bin.log", b"\x7fELF\x00\x00\x01"), "binary data"),
    (lambda d: _write(d / "bad.gz", gzip.compress(b"hello\n" * 1000)[:40]), "corrupt or truncated"),
    (lambda d: _write(d / "bad.zst", b"\x28\xb5\x2f\xfd" + b"\xff" * 64), "corrupt zstd"),
])
def test_bad_inputs_give_one_line_and_exit_2(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    path = make(tmp_path)
    res = triage(str(path))
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message in err and str(path) in err


def test_permission_denied(tmp_path: Path) -> None:
    """As root (CI), without the capabilities that let root read any file (util-linux setpriv)."""
    import shutil

    path = _write(tmp_path / "secret.log", b"x\n")
    path.chmod(0)
    cmd = [sys.executable, "-m", "analyzer", str(path)]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root reads every file, and setpriv is missing")
        cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *cmd]
    res = subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.decode().strip() == f"triage: error: {path}: cannot open: permission denied"


def test_usage_errors_exit_2() -> None:
    for args in (["--input-format", "nonsense", str(EXAMPLE)], ["--format", "xml", str(EXAMPLE)],
                 ["--no-such-option", str(EXAMPLE)], ["analyze"]):
        res = triage(*args)
        assert res.returncode == 2, args
        assert res.stderr.decode().count("\n") == 1 and b"Traceback" not in res.stderr


def test_invalid_extra_pattern_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "broken.yaml").write_text("title: [unclosed\n")
    res = triage("--patterns", str(tmp_path), str(EXAMPLE))
    assert res.returncode == 2
    assert f"{tmp_path / 'gpu' / 'broken.yaml'}:2: invalid YAML" in res.stderr.decode()


TEAM_PATTERN = """\
title: Our service reloaded its unit files in the middle of an incident
id: team-reload-seen
severity: low
area: team
description: systemd reloaded unit files; someone changed the service while it was failing.
why: A change made during an incident is a likely cause of what follows.
match:
  any:
    - regex: '^Reloading\\.$'
fix: ["Ask in the incident channel who changed the unit."]
source: systemd (daemon-reload)
"""


def test_extra_pattern_folder_is_used(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "team-reload-seen.yaml").write_text(TEAM_PATTERN)
    res = triage("--format", "json", "--patterns", str(tmp_path), str(EXAMPLE))
    assert res.returncode == 0, res.stderr
    found = {f["id"]: f for f in json.loads(res.stdout)["findings"]}
    reload_line = EXAMPLE.read_text().split("\n").index(next(x for x in EXAMPLE.read_text().split("\n")
                                                             if x.endswith("systemd[1]: Reloading.")))
    assert found["team-reload-seen"]["evidence"][0]["line"] == reload_line + 1


def test_version_and_help() -> None:
    assert triage("--version").stdout.decode().startswith("triage ")
    res = triage("--help")
    assert res.returncode == 0 and b"analyze" in res.stdout and b"Example:" in res.stdout


def test_every_command_shows_an_example_in_its_help() -> None:
    import typer.main
    from typer.testing import CliRunner

    from analyzer.cli import app

    def commands(cmd: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        subs = getattr(cmd, "commands", None)  # a group (typer vendors its own click)
        if subs:
            return [p for name, sub in subs.items() for p in commands(sub, (*path, name))]
        return [path]

    found = commands(typer.main.get_command(app))
    assert len(found) >= 15 and ("patterns", "test") in found and ("site", "serve") in found
    runner = CliRunner()
    for path in found:
        res = runner.invoke(app, [*path, "--help"])
        assert res.exit_code == 0 and "Example: triage" in res.output, path


def test_help_imports_no_heavy_package() -> None:
    code = ("import sys\nfrom analyzer.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'duckdb', 'hyperscan', 'transformers', "
            "'pydantic', 'rich', 'yaml') "
            "if m in sys.modules]\nprint('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    assert "HEAVY []" in out


def test_patterns_subcommands() -> None:
    listed = json.loads(triage("patterns", "list", "--format", "json").stdout)
    assert "flashinfer-sm12x-needs-cuda-12-9" in [p["id"] for p in listed]
    res = triage("patterns", "test", "flashinfer-sm12x-needs-cuda-12-9")
    assert res.returncode == 0 and b"1 passed, 0 failed" in res.stdout
    assert triage("patterns", "test", "no-such-pattern").returncode == 2


def test_broken_pipe_is_quiet() -> None:
    proc = subprocess.Popen(f"{sys.executable} -m analyzer {EXAMPLE} | head -1", shell=True, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _out, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_closed_stdin_is_a_clear_error() -> None:
    res = subprocess.run([sys.executable, "-m", "analyzer", "-"], stdin=subprocess.DEVNULL, capture_output=True,
                         cwd=ROOT)
    assert res.returncode == 2 and b"empty input" in res.stderr
    code = "import sys; sys.stdin.close(); sys.argv = ['triage', '-']\nfrom analyzer.cli import main\nmain()"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT)
    assert res.returncode == 2 and b"standard input is closed" in res.stderr


def test_ctrl_c_exits_130_without_traceback() -> None:
    """The run waits on a pipe that stays open, so the signal lands inside triage whatever the
    machine's speed: during start-up (imports) or while reading, never after a finished scan."""
    import signal
    import time

    for delay in (0.3, 0.6, 1.0, 3.0):  # in imports (pydantic builds schemas in native code), reading
        proc = subprocess.Popen([sys.executable, "-m", "analyzer", "--no-kb", "-"], cwd=ROOT, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write(b"May 03 10:00:00 h app[1]: request ok, nothing to see here\n" * 1000)
        proc.stdin.flush()
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, (delay, err.decode())
        assert err.decode().strip() == "triage: error: interrupted", (delay, err.decode())


def test_redact_option(tmp_path: Path) -> None:
    log = tmp_path / "svc.log"
    log.write_text("2026-05-03T10:00:00+0000 gpu-7.cluster.internal python3[9]: "
                   "HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 Access to model meta-llama/Llama-3.1-8B "
                   "is restricted. You must be authenticated to access it.\n")
    plain = triage("--format", "json", "--no-kb", str(log)).stdout.decode()
    secrets = triage("--format", "json", "--no-kb", "--redact", "secrets", str(log)).stdout.decode()
    hosts = triage("--format", "json", "--no-kb", "--redact", "hosts", str(log)).stdout.decode()
    assert "hf_aBcDeF" in plain and "hf_aBcDeF" not in secrets and "cluster.internal" in secrets
    assert "cluster.internal" not in hosts and "hf-gated-repo-needs-token" in hosts
    assert triage("--redact", "everything", str(log)).returncode == 2


def test_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    """Over a few MB with stderr on a terminal: bytes, rate and findings on stderr; piped: nothing."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    big = tmp_path / "big.log"
    filler = b"2026-05-03T10:00:00+0000 h app[1]: request ok, nothing to see here\n" * 200_000
    big.write_bytes(filler + b"2026-05-03T10:00:01+0000 h kernel: Out of memory: Killed process 7 (python3) "
                    b"total-vm:1kB\n" + filler)
    cmd = [sys.executable, "-m", "analyzer", "--no-kb", "-f", "json", str(big)]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # a 160-column terminal
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not data:
                break
            shown += data
        elif proc.poll() is not None:
            break
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0 and json.loads(out)["findings"][0]["id"] == "host-oom-killed-service"
    text = shown.decode("utf-8", "replace")
    assert "big.log" in text and "MB/s" in text and "26.8/26.8 MB" in text and "1 finding(s)" in text
    piped = triage("--no-kb", "-f", "json", str(big))
    assert piped.returncode == 0 and piped.stderr == b""


def test_jobs_reads_files_in_parallel_with_the_same_report(tmp_path: Path) -> None:
    corpus = sorted((ROOT / "tests" / "data" / "corpus").glob("*.log"))[:3]
    files = [str(EXAMPLE), *map(str, corpus)]
    one = triage("--no-kb", "-f", "json", *files)
    many = triage("--no-kb", "-f", "json", "--jobs", "2", *files)
    assert one.returncode == many.returncode == 0, many.stderr
    a, b = json.loads(one.stdout), json.loads(many.stdout)
    assert [i["path"] for i in b["inputs"]] == files  # input order is kept
    assert a["findings"] and a["findings"] == b["findings"] and a["facts"] == b["facts"]
    missing = triage("--no-kb", "--jobs", "2", str(EXAMPLE), str(tmp_path / "gone.log"))
    assert missing.returncode == 2 and missing.stderr.decode().strip().endswith("gone.log: cannot open: "
                                                                               "no such file or directory")


def test_journalctl_habits_on_the_command_line(tmp_path: Path) -> None:
    """-h is --help; a pipe is read without '-'; --redact alone, with secrets|hosts, never
    swallowing the file after it, and a bad value names the choices; --color for less -R."""
    assert triage("-h").stdout == triage("--help").stdout and b"Usage" in triage("-h").stdout
    piped = triage("--no-kb", "-f", "json", stdin=EXAMPLE.read_bytes())
    assert piped.returncode == 0 and json.loads(piped.stdout)["findings"], piped.stderr
    log = tmp_path / "svc.log"
    log.write_text("May 03 10:00:00 gpu-node-7 python3[12]: RuntimeError: CUDA error: out of memory "
                   "token hf_abcdefghijklmnopqrstuvwxyzABCDEF12\n")
    alone = triage("--no-kb", "-f", "json", "--redact", str(log))  # the file is not taken as the value
    assert alone.returncode == 0 and b"hf_abc" not in alone.stdout and b"gpu-node-7" in alone.stdout
    hosts = triage("--no-kb", "-f", "json", "--redact", "hosts", str(log))
    assert hosts.returncode == 0 and b"gpu-node-7" not in hosts.stdout and b"hf_abc" not in hosts.stdout
    bad = triage("--no-kb", "--redact=everything", str(log))
    assert bad.returncode == 2 and b"'secrets' or 'hosts'" in bad.stderr
    colour = triage("--no-kb", "--color", "always", str(log)).stdout
    plain = triage("--no-kb", "--color", "never", str(log)).stdout
    assert b"\x1b[" in colour and b"\x1b[" not in plain


def test_triage_alone_on_a_terminal_prints_a_short_usage() -> None:
    code, text = in_pty([], stdin_tty=True)
    assert code == 0
    examples = [ln for ln in text.splitlines() if ln.startswith("  ") and "triage" in ln]
    assert "Usage: triage" in text and len(examples) == 3 and "Traceback" not in text
