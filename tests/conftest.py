"""Shared test fixtures: the library (loaded once), real journalctl renderings, a headless
Chromium (Debian's, driven by Playwright) for the site and the HTML report."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest

from analyzer.library.compile import CompiledLibrary
from analyzer.models import Report
from analyzer.readers.source import open_bytes
from analyzer.triage import Run, load

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "corpus"  # copied from the workspace's shared/ (see its README)
BENIGN = ROOT / "tests" / "data" / "benign" / "loghub"
JOURNAL_REMOTE = Path("/lib/systemd/systemd-journal-remote")
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]

sys.path.insert(0, str(ROOT / "examples"))


@pytest.fixture(scope="session")
def library() -> CompiledLibrary:
    return load()


GATE = "flashinfer-sm12x-needs-cuda-12-9"
CHAIN = "oom-restart-surfaces-toolchain-mismatch"


def root_id(finding) -> str:  # type: ignore[no-untyped-def]
    """A chain finding's root cause, or the finding's own pattern (works on dicts from JSON too)."""
    get = finding.get if isinstance(finding, dict) else lambda k: getattr(finding, k)
    return str(get("members")[0]) if get("kind") == "chain" else str(get("id"))


def analyze_bytes(data: bytes, library: CompiledLibrary, name: str = "test.log") -> Report:
    run = Run(library)
    run.read(open_bytes(name, data))
    return run.report()


def summary(report: Report) -> list[tuple[str, int, tuple[int, ...], tuple[tuple[str, str], ...]]]:
    """What two ways of reading the same input must agree on: each finding's id, count,
    evidence lines and captures, in order."""
    return [(f.id, f.count, tuple(e.line for e in f.evidence), tuple(sorted(f.captures.items())))
            for f in report.findings]


@pytest.fixture(scope="session")
def export_stream() -> bytes:
    from founding_incident import export_stream as make

    return make()


@pytest.fixture(scope="session")
def journal_file(tmp_path_factory: pytest.TempPathFactory, export_stream: bytes) -> Path:
    """A real binary journal written by systemd-journal-remote from the export stream."""
    if not JOURNAL_REMOTE.exists() or shutil.which("journalctl") is None:
        pytest.fail("systemd-journal-remote and journalctl are required: apt-get install systemd-journal-remote")
    folder = tmp_path_factory.mktemp("journal")
    src = folder / "incident.export"
    src.write_bytes(export_stream)
    out = folder / "incident.journal"  # a fresh name: the converter appends to an existing file
    subprocess.run([str(JOURNAL_REMOTE), "-o", str(out), str(src)], check=True, capture_output=True)
    return out


def in_pty(args: list[str], env: dict[str, str] | None = None, stdin_tty: bool = False,
           interrupt_after: float | None = None) -> tuple[int, str]:
    """Run `python -m analyzer ARGS` on a pseudo-terminal (stdout, stderr, and stdin when
    `stdin_tty`): its exit status and everything it wrote, as a person's terminal shows it.
    With `interrupt_after`, Ctrl-C is pressed after that many seconds (a follow never ends)."""
    import os
    import pty
    import select
    import signal
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", *args], stdout=slave, stderr=slave,
                            stdin=slave if stdin_tty else subprocess.DEVNULL, env=env, cwd=ROOT)
    os.close(slave)
    chunks = []
    deadline = None if interrupt_after is None else time.monotonic() + interrupt_after
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            proc.send_signal(signal.SIGINT)
            deadline = None
        if not select.select([master], [], [], 0.2)[0]:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    code = proc.wait(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode()


def render(journal: Path, mode: str) -> bytes:
    return subprocess.run(["journalctl", "--file", str(journal), "-o", mode, "--no-pager"],
                          check=True, capture_output=True).stdout


@pytest.fixture(scope="session")
def kb_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The real search index, built once per run with the real model (the slow part). Under
    pytest-xdist the workers share one index: the first to need it builds it under a lock in the
    folder all workers' temporary folders live in, the others wait and find it fresh (readers
    open it read-only)."""
    from analyzer.kb.index import ensure, plan

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # pytest-of-<user>/pytest-<n>/, holding every worker's folder
    folder = shared / "kb-index"
    folder.mkdir(exist_ok=True)
    with open(shared / "kb-index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = plan(folder / "kb.duckdb")
        stats = ensure(p)  # None when another worker built it already
        assert stats is None or 0 < stats.embedded <= stats.chunks  # identical passages are embedded once
    return p


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the session (scripts/install-system-packages installs it)."""
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is required: apt-get install chromium (scripts/install-system-packages)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is required: pip install -e '.[dev]'")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


class BrowserTab:
    """A page that records console errors, page errors and failed requests."""

    def __init__(self, browser: Any, width: int = 1280, height: int = 900) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))
        self.page.on("response", lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.page.close()
