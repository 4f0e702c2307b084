"""`--follow`: findings from a live log, each announced once when complete, repeats counted,
--fail-on ending the follow, memory bounded on an endless stream."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer.follow import CONTEXT, Follower
from analyzer.library.compile import CompiledLibrary
from tests.conftest import ROOT

EXAMPLE = (ROOT / "examples" / "founding-incident.log").read_bytes().split(b"\n")
FAILURE = b'2026-05-03T10:14:38+0000 ct200 python3[53120]: /bin/sh: 1: /dev/null/bin/nvcc: not found'


def _benign_lines() -> list[bytes]:
    lines = [raw for path in sorted((ROOT / "tests" / "data" / "benign").rglob("*.log"))
             for raw in path.read_bytes().split(b"\n") if raw.strip()]
    assert len(lines) > 1000
    return lines


_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _no_follower_left() -> Iterator[None]:
    """A follow never ends by itself: whatever a test leaves running (a failed assertion) is killed."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Triage:
    """`triage --follow` in a subprocess whose stdin the test writes as the log goes on."""

    def __init__(self, *args: str, stdin: int | None = subprocess.PIPE) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "analyzer", "--follow", "--no-kb", *args], cwd=ROOT,
                                     stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _STARTED.append(self.proc)

    def write(self, lines: list[bytes]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"\n".join(lines) + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = 30) -> str:
        """The next line of output, or '' when none came within `timeout` seconds."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline().decode() if ready else ""

    def close(self) -> tuple[str, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        out = self.proc.stdout.read()
        return out.decode(), self.proc.wait(timeout=60)


def test_each_finding_is_announced_once_as_it_completes() -> None:
    t = Triage("--format", "json")
    t.write(EXAMPLE[:30])  # the OOM kill, the restart and FlashInfer's refusal
    first = json.loads(t.read_line())
    assert first["rank"] == 1 and first["id"] == "oom-restart-surfaces-toolchain-mismatch"
    assert t.read_line(timeout=2) == ""  # nothing more until more arrives
    t.write(EXAMPLE[30:])
    second = json.loads(t.read_line())
    assert second["rank"] == 2 and second["id"] == "cuda-home-has-no-nvcc"
    t.write([FAILURE] * 3)  # the same failure again: counted, not announced
    rest, code = t.close()
    assert code == 0 and rest == ""


def test_a_traceback_being_written_waits_for_its_exception_line() -> None:
    head = [b"Traceback (most recent call last):",
            b'  File "/usr/lib/python3/dist-packages/flashinfer/jit/core.py", line 120, in build',
            b"    raise RuntimeError(msg)"]
    t = Triage("--format", "json")
    t.write(head)
    assert t.read_line(timeout=1.5) == ""  # past the usual pause: the traceback is still open
    t.write([b"RuntimeError: FlashInfer requires GPUs with sm75 or higher"])
    finding = json.loads(t.read_line())
    assert finding["evidence"] and any("sm75" in e["text"] for e in finding["evidence"])
    assert any(e["line"] == 4 for e in finding["evidence"])
    t.close()


def test_repeats_update_the_count_instead_of_a_new_card() -> None:
    t = Triage("--color", "never")
    t.write(EXAMPLE)
    while "cuda-home-has-no-nvcc" not in (line := t.read_line()):
        assert line, "the finding was not printed"
    time.sleep(1.2)
    t.write([FAILURE, FAILURE])
    out, code = t.close()
    assert code == 0
    assert out.count("new finding") == 0  # both cards came before; the repeats were only counted
    assert "JIT compilation cannot find nvcc" in out and "seen 5 times" in out  # 3 in the log, 2 more


def test_fail_on_ends_the_follow_at_the_first_such_finding_while_the_input_is_open() -> None:
    t = Triage("--format", "json", "--fail-on", "critical")
    t.write(EXAMPLE)
    code = t.proc.wait(timeout=60)  # stdin is still open: the follow ended by itself
    assert code == 1
    assert t.proc.stdout is not None
    lines = t.proc.stdout.read().decode().strip().split("\n")
    assert len(lines) == 1 and json.loads(lines[0])["severity"] == "critical"


def test_a_growing_file_is_followed_and_ctrl_c_ends_it(tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    log.write_bytes(b"\n".join(EXAMPLE[:5]) + b"\n")
    t = Triage("--format", "json", str(log), stdin=subprocess.DEVNULL)
    assert json.loads(t.read_line())["id"] == "host-oom-killed-service"  # the kernel's OOM kill, so far
    assert t.read_line(timeout=2) == ""
    with log.open("ab") as f:
        f.write(b"\n".join(EXAMPLE[5:]) + b"\n")
    chain = json.loads(t.read_line())  # the restart and the failure that followed: a chain, newly formed
    assert chain["id"] == "oom-restart-surfaces-toolchain-mismatch" and chain["rank"] == 2
    t.proc.send_signal(signal.SIGINT)
    assert t.proc.wait(timeout=30) == 130


def test_follow_refuses_what_it_cannot_do() -> None:
    for args, words in ((["--format", "markdown", "-"], "terminal or as JSON lines"),
                        (["a.log", "b.log"], "reads one input"),
                        (["--out", "x.json", "-"], "instead of --out")):
        done = subprocess.run([sys.executable, "-m", "analyzer", "--follow", *args], cwd=ROOT, capture_output=True,
                              text=True, input="")
        assert done.returncode == 2 and words in done.stderr and done.stderr.count("\n") == 1


def test_an_endless_stream_keeps_bounded_state_and_counts_every_repeat(library: CompiledLibrary) -> None:
    """Forty batches of benign lines with the failure in each: the context, the matches kept to
    tell repeats apart, and the findings stay bounded; the count is exact."""
    benign = _benign_lines()
    follower = Follower(library)
    for n in range(40):
        start = (n * 3000) % (len(benign) - 3000)
        batch = [*benign[start:start + 3000], FAILURE]
        update = follower.feed(batch)
        if n == 0:
            assert [f.id for f in update.new] == ["cuda-home-has-no-nvcc"]
        else:
            assert not update.new and update.grown == {"cuda-home-has-no-nvcc": n + 1}
        assert len(follower.context) <= CONTEXT
        # only the repeats still inside the context: at most two lines, each counted once for
        # cuda-home-has-no-nvcc and once for nvcc-missing-at-shell-path, the general pattern it refines
        assert len({line for _pid, line in follower.counted}) <= 2
        assert {pid for pid, _line in follower.counted} == {"cuda-home-has-no-nvcc", "nvcc-missing-at-shell-path"}
    assert follower.lines == 40 * 3001 and follower.count("cuda-home-has-no-nvcc") == 40
    assert len(follower.known) < 10


def test_idle_status_line_on_a_terminal() -> None:
    from tests.conftest import in_pty

    code, out = in_pty(["--follow", "--no-kb", str(ROOT / "examples" / "founding-incident.log")],
                       interrupt_after=6)
    assert code == 130 and out.count("new finding") == 2
    assert "63 lines, 2 finding(s)" in out and "\x1b[2K" in out  # the status line, rewritten in place
