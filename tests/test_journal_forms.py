"""Every journal form, rendered by the real journalctl from one real .journal file, gives
the same findings with evidence that points at the right input lines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analyzer.choices import InputForm
from analyzer.library.compile import CompiledLibrary
from analyzer.readers.detect import detect
from analyzer.readers.source import open_source
from analyzer.triage import JournalQuery, Run, analyze
from tests.conftest import CHAIN, GATE, ROOT, analyze_bytes, render, root_id

FOUNDING = [CHAIN, "cuda-home-has-no-nvcc"]  # the chain (root: the FlashInfer gate), then the anti-fix

MODES = {
    "short": InputForm.journal_short,
    "short-iso": InputForm.journal_short,
    "short-precise": InputForm.journal_short,
    "short-monotonic": InputForm.journal_short,
    "short-unix": InputForm.journal_short,
    "with-unit": InputForm.journal_short,
    "cat": InputForm.console,
    "verbose": InputForm.journal_verbose,
    "json": InputForm.journal_json,
    "export": InputForm.journal_export,
}


def _ids(report) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.id for f in report.findings]


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_is_detected_and_gives_the_founding_findings(
        mode: str, journal_file: Path, library: CompiledLibrary) -> None:
    data = render(journal_file, mode)
    assert detect(data[:65536]) is MODES[mode]
    report = analyze_bytes(data, library, f"incident.{mode}")
    assert _ids(report)[:2] == FOUNDING
    chain = report.findings[0]
    assert root_id(chain) == GATE and "host-oom-killed-service" in chain.members
    gate = next(s for s in chain.symptoms if s.id == GATE)
    assert gate.count == 2  # the probe's two warnings
    assert next(s for s in chain.symptoms if s.id == "flashinfer-no-eligible-cuda-arch").count == 1
    nvcc = report.findings[1]
    assert nvcc.captures["nvcc_path"] == "/dev/null/bin/nvcc"
    assert nvcc.cause.startswith("Anti-fix: this is the workaround that finding #1 (After an OOM kill")
    assert report.facts["nvcc_version"].value == "12.8" and report.facts["gpu_sm"].value == "12.0"


@pytest.mark.parametrize("mode", [m for m in MODES if m not in ("json", "export", "verbose")])
def test_evidence_lines_point_at_the_rendered_line(mode: str, journal_file: Path,
                                                   library: CompiledLibrary) -> None:
    data = render(journal_file, mode)
    lines = data.decode().split("\n")
    report = analyze_bytes(data, library)
    for finding in report.findings:
        for ev in finding.evidence:
            assert ev.text.split("\n")[0][:60] in lines[ev.line - 1], (mode, ev)


def test_multi_line_messages_are_one_record(journal_file: Path) -> None:
    """journalctl indents the continuation of a multi-line message to the prefix width."""
    from analyzer.readers import parse_lines

    tb = "Traceback (most recent call last):\n  File \"/x.py\", line 3, in <module>\n    f()\nValueError: boom"
    export = (b"__CURSOR=s=0;i=1\n__REALTIME_TIMESTAMP=1714730400000000\n_HOSTNAME=h\nSYSLOG_IDENTIFIER=app\n"
              b"_PID=7\nMESSAGE\n" + len(tb).to_bytes(8, "little") + tb.encode() + b"\n\n")
    folder = journal_file.parent
    (folder / "multi.export").write_bytes(export)
    out = folder / "multi.journal"
    if not out.exists():
        subprocess.run(["/lib/systemd/systemd-journal-remote", "-o", str(out), str(folder / "multi.export")],
                       check=True, capture_output=True)
    for mode in ("short", "short-iso", "short-monotonic", "with-unit", "verbose", "json", "export"):
        raw = render(out, mode)
        records = parse_lines(raw.rstrip(b"\n").split(b"\n"), detect(raw))
        assert [r.message for r in records] == [tb], mode


def test_binary_journal_file_and_directory(journal_file: Path, library: CompiledLibrary) -> None:
    report = analyze([str(journal_file)], library)
    assert report.inputs[0].format == "journal-json"
    assert _ids(report)[:2] == FOUNDING
    report = analyze([], library, journal=JournalQuery(directories=(str(journal_file.parent),)))
    assert FOUNDING[0] in _ids(report)


def test_binary_journal_without_journalctl_is_a_clear_error(journal_file: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.errors import InputError

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError, match="needs journalctl"):
        open_source(str(journal_file))


def test_the_bundled_example_is_the_short_iso_rendering(journal_file: Path) -> None:
    bundled = (ROOT / "examples" / "founding-incident.log").read_bytes()
    assert bundled == render(journal_file, "short-iso")


def test_region_lines_match_a_full_parse(journal_file: Path, library: CompiledLibrary) -> None:
    """Phase 2 parses only regions; their records equal those of a parse of everything."""
    from analyzer.readers import parse_lines

    data = render(journal_file, "short-iso")
    source = open_source(str(ROOT / "examples" / "founding-incident.log"))
    run = Run(library)
    run.read(source)
    full = {r.line: r for r in parse_lines(data.rstrip(b"\n").split(b"\n"), InputForm.journal_short)}
    for m in run.matches:
        for r in m.records:
            assert full[r.line].message == r.message
