"""The hyperscan path and the pure-Python path give the same findings, and findings do
not depend on where chunk boundaries fall."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.data import builtin_patterns
from analyzer.library.compile import CompiledLibrary
from analyzer.library.fixture_file import parse_fixture
from analyzer.models import Report
from analyzer.readers.source import open_bytes
from analyzer.scan import HyperscanEngine, PythonEngine, hyperscan_available, hyperscan_source
from analyzer.triage import Run, load
from tests.conftest import CORPUS, ROOT, summary

INPUTS: list[tuple[str, bytes]] = [(p.name, parse_fixture(p).log) for p in sorted(builtin_patterns().rglob("*.log"))]
INPUTS += [(p.name, p.read_bytes()) for p in sorted(CORPUS.glob("*.log"))]
INPUTS.append(("founding-incident.log", (ROOT / "examples" / "founding-incident.log").read_bytes()))


def run(library: CompiledLibrary, data: bytes, chunk: int | None = None) -> Report:
    r = Run(library)
    source = open_bytes("x.log", data)
    if chunk is not None:
        original = source.chunks
        source.chunks = lambda size=chunk: original(size)  # type: ignore[method-assign]
    r.read(source)
    return r.report()


@pytest.fixture(scope="module")
def python_library() -> CompiledLibrary:
    return load(engine_factory=PythonEngine)


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed on this machine")
@pytest.mark.parametrize(("name", "data"), INPUTS, ids=[n for n, _ in INPUTS])
def test_engines_agree(name: str, data: bytes, python_library: CompiledLibrary) -> None:
    hs = load(engine_factory=HyperscanEngine)
    assert summary(run(hs, data)) == summary(run(python_library, data))


@pytest.mark.parametrize("chunk", [64, 1000, 4096])
def test_chunk_boundaries_do_not_change_findings(chunk: int, library: CompiledLibrary) -> None:
    data = (ROOT / "examples" / "founding-incident.log").read_bytes()
    # repeat the incident so windows cross many boundaries
    data = data * 5
    assert summary(run(library, data, chunk)) == summary(run(library, data))


def test_findings_far_apart_in_a_long_log(library: CompiledLibrary) -> None:
    """Regions are windows: a hit after 100k quiet lines is still found with its line number."""
    quiet = b"".join(b"May 03 10:00:%02d h app[1]: request %d ok\n" % (i % 60, i) for i in range(100_000))
    data = quiet + b"May 03 10:01:00 h kernel: Out of memory: Killed process 7 (python3) total-vm:1kB\n" + quiet
    report = run(library, data, 1 << 20)
    oom = report.findings[0]
    assert (oom.id, oom.evidence[0].line) == ("host-oom-killed-service", 100_001)


def test_python_engine_reports_line_hits_like_hyperscan(tmp_path: Path) -> None:
    from analyzer.scan import Trigger

    triggers = [Trigger("a", r"requires CUDA >= 12\.9"), Trigger("b", r"sm(?P<v>\d+)")]
    buf = b"x sm75 y sm80\nSM 12.x requires CUDA >= 12.9\n"
    lines = {(buf.count(b"\n", 0, end - 1), idx) for end, idx in PythonEngine(triggers, "console").scan(buf)}  # type: ignore[arg-type]
    assert lines == {(0, 1), (1, 0)}


def test_compiled_library_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first load proves every expression and writes the hyperscan database; the next
    compiles nothing up front, loads the database, and finds exactly the same."""
    import hyperscan

    from analyzer.choices import InputForm

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    example = (ROOT / "examples" / "founding-incident.log").read_bytes()
    first = load()
    assert all(cp.compiled for cp in first.patterns.values())  # proven now
    expected = summary(run(first, example))
    (db,) = (tmp_path / "triage" / "hyperscan").iterdir()
    assert len(list((tmp_path / "triage" / "validated").iterdir())) == 1

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a hyperscan database was compiled again")

    with monkeypatch.context() as m:
        m.setattr(hyperscan, "Database", refuse)
        second = load()
        assert not any(cp.compiled for cp in second.patterns.values())  # compiled when a trigger fires
        assert summary(run(second, example)) == expected
    assert sum(cp.compiled for cp in second.patterns.values()) < len(second.patterns) // 4

    db.write_bytes(b"damaged")  # compiled again, and the cache repaired
    third = load()
    assert summary(run(third, example)) == expected and db.read_bytes() != b"damaged"
    assert isinstance(third.engine(InputForm.journal_short), HyperscanEngine)


def test_trailing_blanks_keep_a_hit_on_its_own_line(python_library: CompiledLibrary) -> None:
    """A catalogue regex ending in `\\s*$` becomes a trigger whose greedy Python match would run
    across the newline into the next line's indent; the hit stays on the line that matched."""
    assert hyperscan_source(r"^Killed\s*$") == "Killed"
    assert hyperscan_source(r"^a\\s*") == r"a\\s*"  # an escaped backslash, then `s*`: kept
    data = b"./checkpoints/mapping.pth.tar\nKilled\n  0%|    | 0/1 [00:00<?, ?it/s]\n"
    finding = run(python_library, data).findings[0]
    assert (finding.id, [e.line for e in finding.evidence]) == ("process-killed-sigkill", [2])
