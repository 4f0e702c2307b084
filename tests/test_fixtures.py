"""Every pattern's fixture, discovered by name: must-match lines match, must-not-match
lines do not, and no fixture or pattern stands alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.authoring.fixture_runs import run_fixture
from analyzer.data import builtin_patterns
from analyzer.errors import PatternError
from analyzer.library.compile import CompiledLibrary
from analyzer.library.fixture_file import Expect, fixture_of, parse_fixture
from analyzer.library.load import load_library

LIBRARY = load_library([builtin_patterns()])


@pytest.mark.parametrize("pf", LIBRARY.files, ids=lambda pf: pf.pattern.id)
def test_fixture(pf, library: CompiledLibrary) -> None:  # type: ignore[no-untyped-def]
    assert pf.fixture.exists(), f"{pf.path}: add {pf.fixture.name} with real log lines marked `# match`"
    fixture = fixture_of(pf)
    assert any(a.expect is Expect.match for a in fixture.annotations), f"{pf.fixture}: no `# match` line for it"
    failures = [f"{pf.fixture}:{o.annotation.fixture_line}: {o.annotation.expect.value}: {o.detail}"
                for o in run_fixture(pf, fixture, library) if not o.passed]
    assert not failures, "\n".join(failures)
    assert any(a.expect is Expect.ok for a in fixture.annotations), f"{pf.fixture}: add a `# ok` near miss"


def test_no_orphan_fixtures() -> None:
    from analyzer.commands.patterns import orphan_fixtures

    assert orphan_fixtures(LIBRARY, [builtin_patterns()]) == []


def test_fixture_parser_reports_problems(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("# match\n")
    with pytest.raises(PatternError, match="annotates nothing"):
        parse_fixture(path)
    path.write_text("# source: https://example.org\nline\n")
    with pytest.raises(PatternError, match="no `# match` line"):
        parse_fixture(path)
    path.write_text("# match\nline\n")
    with pytest.raises(PatternError, match="names no source"):
        parse_fixture(path)


def test_a_failing_fixture_is_reported(tmp_path: Path, library: CompiledLibrary) -> None:
    pf = LIBRARY.get("host-oom-killed-service")
    path = tmp_path / "x.log"
    path.write_text("# source: test\n# match\nnothing to see here\n# ok\nOut of memory: Killed process 1 (x)\n"
                    "# todo-match\nstill nothing\n")
    outcomes = run_fixture(pf, parse_fixture(path), library)
    assert [o.passed for o in outcomes] == [False, False, True]
    assert outcomes[0].annotation.fixture_line == 3


def test_a_log_line_that_starts_with_a_hash_is_written_escaped(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("# source: https://example.org (a pasted report)\n\\# ComfyUI Error Report\n# match\nboom\n")
    fixture = parse_fixture(path)
    assert fixture.log.split(b"\n")[0] == b"# ComfyUI Error Report" and fixture.line_map[0] == 2
