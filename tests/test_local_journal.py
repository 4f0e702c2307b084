"""Reading a journal the way journalctl reads it (`triage -u UNIT --since … -b -k`), against a
real binary journal written by systemd-journal-remote: the founding incident plus a boot
before it, kernel lines hours before the unit ran, and another unit failing meanwhile."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from analyzer.errors import InputError
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Report
from analyzer.readers.journal_query import JournalQuery, access_warning, unit_name
from analyzer.triage import analyze
from tests.conftest import JOURNAL_REMOTE, ROOT

sys.path.insert(0, str(ROOT / "examples"))
import founding_incident as fi

EARLIER_BOOT = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"
XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1203, name=python3, GPU has fallen off the bus."
OTHER = "backup.service"


def _entries() -> Iterator[tuple[int, str, dict[str, str]]]:
    """(realtime µs, boot id, fields): the founding incident and what else the machine logged."""
    day, hour = 86_400_000_000, 3_600_000_000
    yield fi.START_US - day, EARLIER_BOOT, {"SYSLOG_IDENTIFIER": "kernel", "_TRANSPORT": "kernel",
                                            "PRIORITY": "3", "MESSAGE": XID}
    yield fi.START_US - 5 * hour, fi.BOOT, {"SYSLOG_IDENTIFIER": "kernel", "_TRANSPORT": "kernel",
                                            "PRIORITY": "3", "MESSAGE": XID}
    for seq, (offset_s, fields) in enumerate(fi.entries()):
        yield fi.START_US + offset_s * 1_000_000 + seq, fi.BOOT, fields
    for text in ("Traceback (most recent call last):", '  File "/opt/backup/run.py", line 9, in <module>',
                 "    main()", "PermissionError: [Errno 13] Permission denied: '/mnt/backup/db.tar'"):
        yield fi.START_US + 100_000_000, fi.BOOT, {"SYSLOG_IDENTIFIER": "backup", "_PID": "7001",
                                                   "_SYSTEMD_UNIT": OTHER, "_TRANSPORT": "stdout",
                                                   "PRIORITY": "3", "MESSAGE": text}
    yield fi.START_US + 101_000_000, fi.BOOT, {"SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "UNIT": OTHER,
                                               "_TRANSPORT": "journal", "PRIORITY": "4",
                                               "MESSAGE": f"{OTHER}: Failed with result 'exit-code'."}


def _export() -> bytes:
    out = bytearray()
    for seq, (usec, boot, fields) in enumerate(sorted(_entries(), key=lambda e: e[0])):
        head = {"__CURSOR": f"s=0;i={seq + 1:x}", "__REALTIME_TIMESTAMP": str(usec),
                "__MONOTONIC_TIMESTAMP": str(1_000_000 + seq), "_BOOT_ID": boot, "_HOSTNAME": fi.HOST}
        for key, value in {**head, **fields}.items():
            out += fi._field(key, value)
        out += b"\n"
    return bytes(out)


@pytest.fixture(scope="module")
def journal_dir() -> Iterator[Path]:
    """A journal folder that other users may enter (the permission test reads it as nobody)."""
    if not JOURNAL_REMOTE.exists() or shutil.which("journalctl") is None:
        pytest.fail("systemd-journal-remote and journalctl are required: apt-get install systemd-journal-remote")
    folder = Path(tempfile.mkdtemp(prefix="triage-journal-"))
    folder.chmod(0o755)
    (folder / "machine.export").write_bytes(_export())
    subprocess.run([str(JOURNAL_REMOTE), "-o", str(folder / "system.journal"), str(folder / "machine.export")],
                   check=True, capture_output=True)
    (folder / "machine.export").unlink()
    (folder / "system.journal").chmod(0o644)
    yield folder
    shutil.rmtree(folder)


def _read(library: CompiledLibrary, folder: Path, **filters: Any) -> Report:
    return analyze([], library, journal=JournalQuery(directories=(str(folder),), **filters), knowledge=False)


def _ids(report: Report) -> set[str]:
    return {i for f in report.findings for i in (f.id, *f.members, *(s.id for s in f.symptoms))}


def _texts(report: Report) -> str:
    return "\n".join(e.text for f in report.findings for e in f.evidence) + "\n".join(
        t.text for t in report.timeline)


def test_unit_reads_its_lines_systemds_and_the_kernels_of_its_window(library: CompiledLibrary,
                                                                     journal_dir: Path) -> None:
    report = _read(library, journal_dir, units=("sglang-k26",))
    total = sum(1 for _ in fi.entries())
    assert report.inputs[0].lines == total  # the unit's, systemd's about it, the kernel's OOM lines: nothing else
    name = report.inputs[0].path
    assert name.startswith("sglang-k26.service and kernel, 2026-05-03 ") and str(journal_dir) in name
    assert report.findings[0].kind == "chain" and report.findings[0].id == "oom-restart-surfaces-toolchain-mismatch"
    assert "Out of memory: Killed process 48213" in _texts(report) or "oom-kill:" in _texts(report)
    assert "fallen off the bus" not in _texts(report)  # the kernel's lines outside the unit's window
    assert "PermissionError" not in _texts(report) and OTHER not in _texts(report)  # another unit


def test_the_kernels_lines_are_the_evidence_journalctl_u_leaves_out(library: CompiledLibrary,
                                                                    journal_dir: Path) -> None:
    """`journalctl -u svc | triage -` sees systemd's word that the OOM killer struck; `-u` also
    reads the kernel's lines, which say which process, how large, in which cgroup."""
    piped = subprocess.run(["journalctl", "-D", str(journal_dir), "-u", "sglang-k26.service", "-o", "json",
                            "--no-pager"], capture_output=True, check=True).stdout
    from tests.conftest import analyze_bytes

    alone = analyze_bytes(piped, library)
    assert "Out of memory: Killed process" not in _texts(alone) and b"oom-kill:" not in piped
    joined = _read(library, journal_dir, units=("sglang-k26",))
    assert "oom-kill:constraint=CONSTRAINT_NONE" in _texts(joined)


def test_unit_glob_and_service_suffix(library: CompiledLibrary, journal_dir: Path) -> None:
    assert unit_name("sglang") == "sglang.service" and unit_name("vllm.socket") == "vllm.socket"
    by_glob = _read(library, journal_dir, units=("sglang-*",))
    assert by_glob.inputs[0].lines == _read(library, journal_dir, units=("sglang-k26.service",)).inputs[0].lines
    both = _read(library, journal_dir, units=("sglang-k26", "backup"))
    assert "PermissionError" in _texts(both) and "oom-restart-surfaces-toolchain-mismatch" in _ids(both)


def test_since_and_until_narrow_the_window(library: CompiledLibrary, journal_dir: Path) -> None:
    # the reconstruction's times are UTC; journalctl reads --since in the local zone
    late = _read(library, journal_dir, units=("sglang-k26",), since="@1777804300")  # after the first failure
    assert 0 < late.inputs[0].lines < sum(1 for _ in fi.entries())
    assert "oom-kill" not in _texts(late) and "/dev/null/bin/nvcc" in _texts(late)
    early = _read(library, journal_dir, since="@1777802290", until="@1777802291")  # the OOM second, any source
    assert "oom-kill" in _texts(early) and "SM 12.x requires CUDA" not in _texts(early)


def test_kernel_only_and_boots(library: CompiledLibrary, journal_dir: Path) -> None:
    kernel = _read(library, journal_dir, kernel=True)  # this boot: the Xid five hours before, the OOM kill
    assert kernel.inputs[0].path.startswith("kernel lines (this boot")
    assert kernel.inputs[0].lines == 4 and "fallen off the bus" in _texts(kernel)
    earlier = _read(library, journal_dir, kernel=True, boot="-1")
    assert earlier.inputs[0].lines == 1 and "boot -1" in earlier.inputs[0].path
    by_id = _read(library, journal_dir, boot=EARLIER_BOOT)
    assert by_id.inputs[0].lines == 1


def test_a_unit_without_entries_is_an_error(library: CompiledLibrary, journal_dir: Path) -> None:
    with pytest.raises(InputError, match=r"no entries of nothere\.service"):
        _read(library, journal_dir, units=("nothere",))
    with pytest.raises(InputError, match=r"no unit in the journal matches 'vllm-\*'"):
        _read(library, journal_dir, units=("vllm-*",))


def _as_nobody(fn: Callable[[], Any]) -> Any:
    """`fn()` in a forked child whose effective user is nobody (or this user, when not root)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, run, send the result or the error back
        os.close(read)
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setegid(65534)
                os.seteuid(65534)
            result: Any = ("ok", fn())
        except Exception as exc:  # sent back to the test, which asserts on it
            result = ("error", f"{type(exc).__name__}: {exc}")
        with os.fdopen(write, "wb") as out:
            pickle.dump(result, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


def test_a_partly_readable_journal_is_said_with_the_group_to_join(library: CompiledLibrary,
                                                                  journal_dir: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="triage-perm-"))
    folder.chmod(0o755)
    try:
        shutil.copy(journal_dir / "system.journal", folder / "system.journal")
        shutil.copy(journal_dir / "system.journal", folder / "user-1000.journal")
        (folder / "system.journal").chmod(0o644 if os.geteuid() == 0 else 0o000)
        (folder / "user-1000.journal").chmod(0o644)
        assert access_warning([folder]) is None or os.geteuid() != 0
        if os.geteuid() == 0:
            (folder / "system.journal").chmod(0o600)  # root's alone, as the system journal is
        kind, value = _as_nobody(lambda: _read(library, folder, units=("sglang-k26",)).warnings)
        assert kind == "ok", value
        assert any("1 of 2 journal files" in w and "systemd-journal" in w and "usermod -aG" in w for w in value)
        (folder / "user-1000.journal").chmod(0o600 if os.geteuid() == 0 else 0o000)
        kind, value = _as_nobody(lambda: _read(library, folder, units=("sglang-k26",)))
        assert kind == "error" and "2 of 2 journal files" in value and "InputError" in value
    finally:
        shutil.rmtree(folder)


def test_cli_forms(journal_dir: Path, tmp_path: Path) -> None:
    def triage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "analyzer", *args], capture_output=True, text=True,
                              cwd=ROOT, env={**os.environ, "HOME": str(tmp_path)}, stdin=subprocess.DEVNULL)

    unit = triage("-D", str(journal_dir), "-u", "sglang-k26", "--no-kb", "--format", "json")
    assert unit.returncode == 0, unit.stderr
    assert '"path": "sglang-k26.service and kernel, 2026-05-03' in unit.stdout
    one_file = triage("--file", str(journal_dir / "system.journal"), "-u", "sglang-k26", "--no-kb", "--format", "json")
    assert one_file.returncode == 0 and "sglang-k26.service and kernel" in one_file.stdout, one_file.stderr
    assert "oom-restart-surfaces-toolchain-mismatch" in one_file.stdout
    boot = triage("-D", str(journal_dir), "-b", "--no-kb", "--format", "json")  # -b alone: this boot
    assert boot.returncode == 0 and "journal (this boot" in boot.stdout
    before = triage("-D", str(journal_dir), "-b", "-1", "-k", "--no-kb", "--format", "json")
    assert before.returncode == 0 and "kernel lines (boot -1" in before.stdout, before.stderr
    since = triage("-D", str(journal_dir), "-u", "sglang-k26", "--since", "-2h", "--no-kb")  # '-2h' is a value
    assert since.returncode == 2 and since.stderr.count("\n") == 1 and "no entries" in since.stderr
    both = triage(str(ROOT / "examples" / "founding-incident.log"), "-u", "sglang")
    assert both.returncode == 2 and "not both" in both.stderr and "Traceback" not in both.stderr


def test_follow_a_unit_in_the_journal(journal_dir: Path) -> None:
    """`triage -u UNIT --follow`: journalctl -f with the unit's, systemd's and the kernel's lines."""
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "-D", str(journal_dir), "-u", "sglang-k26", "--follow",
                             "--no-kb", "--format", "json", "--fail-on", "critical"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out, err = proc.communicate(timeout=60)  # journalctl -f never ends; --fail-on does
    assert proc.returncode == 1, err
    finding = json.loads(out.decode().strip().split("\n")[0])
    assert finding["id"] == "oom-restart-surfaces-toolchain-mismatch"
    assert any("oom-kill:" in e["text"] for e in finding["evidence"])  # the kernel's line is there
