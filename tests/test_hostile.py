"""Hostile and broken input: invalid UTF-8 is counted and reported, huge lines and
pathological patterns cannot hang a run, and the index survives a killed indexer and
concurrent readers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from analyzer.library.compile import CompiledLibrary
from analyzer.readers.source import open_bytes
from analyzer.triage import Run
from tests.conftest import ROOT, analyze_bytes


def test_undecodable_lines_are_counted_and_reported(library: CompiledLibrary) -> None:
    data = b"ok line\n\xff\xfe broken \xc3\x28 bytes\nOut of memory: Killed process 9 (python3) total-vm:1kB\n"
    report = analyze_bytes(data, library)
    assert report.inputs[0].undecodable == 1
    assert any("not valid UTF-8" in w for w in report.warnings)
    assert report.findings[0].id == "host-oom-killed-service"


def test_a_ten_megabyte_line_is_handled(library: CompiledLibrary) -> None:
    line = b"x" * (10 * 1024 * 1024)
    data = line + b"\nRuntimeError: FlashInfer requires GPUs with sm75 or higher\n" + line + b"\n"
    start = time.perf_counter()
    report = analyze_bytes(data, library)
    assert time.perf_counter() - start < 60
    assert report.findings[0].id == "flashinfer-no-eligible-cuda-arch"
    assert report.findings[0].evidence[0].line == 2


def test_a_slow_pattern_is_bounded_and_named(tmp_path: Path) -> None:
    """A pattern that backtracks catastrophically times out on the event; the run completes."""
    from analyzer.triage import load

    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "team-slow.yaml").write_text("""\
title: A pattern that backtracks for ever on long runs of a
id: team-slow
severity: low
area: team
description: A deliberately slow pattern used to show that one bad regex cannot hang a run.
why: Patterns arrive from strangers by pull request.
match:
  any:
    - regex: '(a|aa)+$'
      trigger: 'aaaaaaaaaa'
fix: ["Nothing."]
source: tests
""")
    library = load([tmp_path])
    run = Run(library)
    run.read(open_bytes("x.log", b"a" * 5000 + b"!\nOut of memory: Killed process 9 (python3) total-vm:1kB\n"))
    report = run.report()
    assert any("team-slow" in w and "skipped there" in w for w in report.warnings)
    assert report.findings[0].id == "host-oom-killed-service"


_BUILD = """
import sys, time
from pathlib import Path
from analyzer.kb import store
from analyzer.kb.documents import Document

path, delay, stamp, phase = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]

def pause(where):
    if where == phase:
        print(where, flush=True)
        time.sleep(delay)

class Slow:
    name = "slow"
    def embed(self, texts):
        pause("embedding")
        return [[0.1] * 384 for _ in texts]

write = store._write
def slow_write(*args):
    write(*args)
    pause("written")  # the new index is complete in its temporary file, not yet renamed
store._write = slow_write

docs = [Document(id=f"d{i}", kind="postmortem", title=f"doc {i}", path="x", fix=["f"],
                 chunks=[f"{stamp} {i}"]) for i in range(3)]
store.build_index(path, docs, Slow, "slow", stamp)
"""


def _build(path: Path, delay: float, stamp: str, phase: str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _BUILD, str(path), str(delay), stamp, phase], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _titles(path: Path) -> list[str]:
    from analyzer.kb.store import connect

    con = connect(path)
    try:
        return sorted(r[0] for r in con.execute("SELECT text FROM chunks").fetchall())
    finally:
        con.close()


def test_index_survives_a_killed_indexer(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    assert _build(path, 0, "first").wait(timeout=120) == 0
    before = _titles(path)
    for phase in ("embedding", "written"):  # killed while embedding, and with the new file written aside
        proc = _build(path, 60, "second", phase)
        assert proc.stdout is not None and proc.stdout.readline().decode().strip() == phase
        if phase == "written":
            assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert _titles(path) == before == ["first 0", "first 1", "first 2"]
    assert _build(path, 0, "third").wait(timeout=120) == 0  # a leftover temporary file does not block a rebuild
    assert _titles(path) == ["third 0", "third 1", "third 2"]
    # the killed builds left nothing behind
    assert sorted(os.listdir(tmp_path)) == ["index.duckdb", "index.duckdb.related.json"]


def test_readers_see_no_lock_error_while_reindexing(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    assert _build(path, 0, "v0").wait(timeout=120) == 0
    reader = ("import sys, time\nfrom pathlib import Path\nfrom analyzer.kb.store import connect\n"
              "end = time.time() + 6\nn = 0\nwhile time.time() < end:\n"
              "    con = connect(Path(sys.argv[1])); con.execute('SELECT count(*) FROM chunks').fetchall()\n"
              "    con.close(); n += 1\nprint(n)")
    readers = [subprocess.Popen([sys.executable, "-c", reader, str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for _ in range(2)]
    for i in range(1, 4):
        assert _build(path, 0, f"v{i}").wait(timeout=120) == 0
    for r in readers:
        out, err = r.communicate(timeout=60)
        assert r.returncode == 0, err.decode()[-500:]
        assert int(out) > 0
    assert _titles(path)[0] == "v3 0"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
