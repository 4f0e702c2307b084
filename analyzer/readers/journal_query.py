"""The journal read the way journalctl reads it: units, a time window, a boot, kernel lines.

`triage -u sglang --since -2h` runs the real `journalctl -o json` with the same filters. A
unit's failures are explained by the kernel's lines (OOM kills, Xids, AER), which
`journalctl -u` leaves out, so a unit query reads the unit's entries, systemd's entries about
the unit (its starts, exits and restarts) and the kernel's entries, in the window where the
unit logged (from a few minutes before its first entry, where an OOM kill or an Xid comes
before the unit's own line, to just after its last).

A user outside the journal's groups sees only part of it; that is said, with the group to
join, instead of reporting that nothing failed.
"""

from __future__ import annotations

import fnmatch
import grp
import json
import os
import pwd
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import InputError
from analyzer.readers.source import Source, journalctl, journalctl_failed, open_journal

BEFORE_S = 600  # kernel lines this long before the unit's first entry are read too
AFTER_S = 60
READ_GROUPS = ("systemd-journal", "adm", "wheel")  # the groups that may read the whole journal
LOCAL_DIRS = (Path("/var/log/journal"), Path("/run/log/journal"))
_UNIT_SUFFIXES = (".service", ".socket", ".target", ".mount", ".timer", ".path", ".slice", ".scope",
                  ".device", ".swap", ".automount")


@dataclass(frozen=True)
class JournalQuery:
    """What to read from a journal. No location reads this machine's journal."""

    units: tuple[str, ...] = ()
    since: str | None = None  # journalctl's own syntax: "-2h", "2026-05-14 10:00", "yesterday"
    until: str | None = None
    boot: str | None = None  # "0" this boot, "-1" the one before, or a boot id
    kernel: bool = False  # kernel lines only (journalctl -k, which implies this boot)
    files: tuple[str, ...] = ()  # journal files (journalctl --file)
    directories: tuple[str, ...] = ()  # journal folders (journalctl --directory)

    @property
    def filtered(self) -> bool:
        """Whether anything narrows the journal (else a folder is read whole)."""
        return bool(self.units or self.since or self.until or self.boot is not None or self.kernel)


@dataclass
class JournalRead:
    sources: list[Source]
    warnings: list[str]


def open_query(query: JournalQuery) -> JournalRead:
    """The sources (one per journal location) and the warnings of a query."""
    journalctl("journal")
    warnings: list[str] = []
    sources: list[Source] = []
    for place, label, folders in _locations(query):
        warning = access_warning(folders)
        if warning:
            warnings.append(warning)
        try:
            sources.append(_open_one(query, place, label))
        except InputError as exc:
            if warning:  # nothing (of this) in the journal, or nothing readable: say why
                raise InputError(f"{exc.message} ({warning})", exc.path) from exc
            raise
    return JournalRead(sources, warnings)


def _locations(query: JournalQuery) -> Iterator[tuple[list[str], str, list[Path]]]:
    """Each place to read: journalctl's arguments for it, its name, its folders."""
    if query.files:
        yield [f"--file={f}" for f in query.files], ", ".join(query.files), []
    for directory in query.directories:
        yield ["--directory", directory], directory, [Path(directory)]
    if not query.files and not query.directories:
        yield [], "this machine's journal", list(LOCAL_DIRS)


def _open_one(query: JournalQuery, place: list[str], label: str) -> Source:
    window = [*_boot(query), *(["--since", query.since] if query.since else []),
              *(["--until", query.until] if query.until else [])]
    if not query.filtered:
        return open_journal(place, label)
    if not query.units:
        what = "kernel lines" if query.kernel else "journal"
        return open_journal(place + window + (["_TRANSPORT=kernel"] if query.kernel else []),
                            f"{what} ({_where(query, label)})")
    units = resolve_units(query.units, place + window)
    first, last = _unit_span(place + window, units)
    if first is None or last is None:
        raise InputError(f"the journal holds no entries of {', '.join(units)}{_in_window(query)}", label)
    since = query.since or f"@{first - BEFORE_S}"
    until = query.until or f"@{last + AFTER_S}"
    args = [*place, *_boot(query), "--since", since, "--until", until, *_matches(units, kernel=True)]
    span = _span(first - (0 if query.since else BEFORE_S), last + (0 if query.until else AFTER_S))
    name = f"{', '.join(units)} and kernel, {span}"
    return open_journal(args, name if label == "this machine's journal" else f"{name} ({label})")


FOLLOW_BACK = 1000  # entries before now that a follow starts with (journalctl -f shows 10)


def follow_args(query: JournalQuery) -> list[str]:
    """The journalctl command that follows the query live: the units' lines, systemd's about
    them and the kernel's (no window: they are read as they come), from --since or the last
    `FOLLOW_BACK` entries."""
    places = list(_locations(query))
    if len(places) > 1:
        raise InputError("--follow reads one journal: give one --journal-dir or the --file options alone", "journal")
    place, _, _ = places[0]
    units = resolve_units(query.units, place) if query.units else []
    matches = _matches(units, kernel=True) if units else (["_TRANSPORT=kernel"] if query.kernel else [])
    start = ["--since", query.since] if query.since else ["--lines", str(FOLLOW_BACK)]
    until = ["--until", query.until] if query.until else []
    return [journalctl("journal"), *place, *_boot(query), *start, *until, "--follow", "-o", "json", "--no-pager",
            *matches]


def _boot(query: JournalQuery) -> list[str]:
    if query.boot is not None:
        return ["--boot", query.boot]
    return ["--boot", "0"] if query.kernel else []  # journalctl -k implies this boot


def _where(query: JournalQuery, label: str) -> str:
    """`this boot since -2h, /var/log/remote`: what the filters and the location are."""
    if query.boot is None:
        boot = "this boot" if query.kernel else ""
    else:
        boot = "this boot" if query.boot == "0" else f"boot {query.boot}"
    parts = [f"{boot}{_in_window(query)}".strip(), label]
    return ", ".join(p for p in parts if p)


def _in_window(query: JournalQuery) -> str:
    parts = ([f"since {query.since}"] if query.since else []) + ([f"until {query.until}"] if query.until else [])
    return f" {' '.join(parts)}" if parts else ""


def unit_name(name: str) -> str:
    """`sglang` means `sglang.service`, as journalctl -u takes it."""
    return name if name.endswith(_UNIT_SUFFIXES) or _is_glob(name) else f"{name}.service"


def _is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


def resolve_units(names: Sequence[str], selector: list[str]) -> list[str]:
    """Unit names; a glob (`vllm-*`) is expanded over the units the journal holds."""
    wanted = [unit_name(n) for n in names]
    if not any(_is_glob(n) for n in wanted):
        return wanted
    known = sorted(set(_journalctl([*selector, "--field", "_SYSTEMD_UNIT"]).split()))
    out: list[str] = []
    for name in wanted:
        found = [u for u in known if fnmatch.fnmatchcase(u, name)] if _is_glob(name) else [name]
        if not found:
            raise InputError(f"no unit in the journal matches {name!r}", "journal")
        out += [u for u in found if u not in out]
    return out


def _matches(units: Sequence[str], kernel: bool) -> list[str]:
    """journalctl matches for a unit's own lines, systemd's lines about it, and the kernel's;
    `+` between groups means or."""
    groups = [f"{field}={unit}" for unit in units
              for field in ("_SYSTEMD_UNIT", "UNIT", "OBJECT_SYSTEMD_UNIT", "COREDUMP_UNIT")]
    if kernel:
        groups.append("_TRANSPORT=kernel")
    out: list[str] = []
    for group in groups:
        out += [group, "+"]
    return out[:-1]


def _unit_span(selector: list[str], units: Sequence[str]) -> tuple[int | None, int | None]:
    """Seconds since the epoch of the units' first and last entries."""
    matches = _matches(units, kernel=False)
    fields = ["-o", "json", "--output-fields=__REALTIME_TIMESTAMP", "-n", "1"]
    last = _first_time([*selector, *fields, "--reverse", *matches])
    first = _first_time([*selector, *fields[:3], *matches], stream=True)
    return first, last


def _first_time(args: list[str], stream: bool = False) -> int | None:
    """The realtime stamp of the first entry journalctl prints, in whole seconds."""
    line = _first_line(args) if stream else _journalctl(args).split("\n", 1)[0]
    if not line.strip():
        return None
    return int(json.loads(line)["__REALTIME_TIMESTAMP"]) // 1_000_000


def _first_line(args: list[str]) -> str:
    """The first line of journalctl's output, without waiting for the rest."""
    proc = subprocess.Popen([journalctl("journal"), *args, "--no-pager"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode("utf-8", "replace")
    proc.kill()
    _, err = proc.communicate()
    if not line and proc.returncode not in (0, -9):
        raise journalctl_failed(err, "journal")
    return line


def _journalctl(args: list[str]) -> str:
    done = subprocess.run([journalctl("journal"), *args, "--no-pager"], capture_output=True, stdin=subprocess.DEVNULL,
                          check=False)
    if done.returncode != 0:
        raise journalctl_failed(done.stderr, "journal")
    return done.stdout.decode("utf-8", "replace")


def _span(start: int, end: int) -> str:
    """`2026-05-03 09:48 to 10:35` in local time; the end's date only when it differs."""
    a, b = time.localtime(start), time.localtime(end)
    same_day = a[:3] == b[:3]
    return f"{time.strftime('%Y-%m-%d %H:%M', a)} to {time.strftime('%H:%M' if same_day else '%Y-%m-%d %H:%M', b)}"


def journal_folders(query: JournalQuery) -> list[Path]:
    """The folders whose journal files the query reads (none for named files)."""
    return [folder for _, _, folders in _locations(query) for folder in folders]


def access_warning(folders: Sequence[Path]) -> str | None:
    """A warning when some journal files under `folders` cannot be read by this user (the
    journal then shows only part of what happened), with the group that may read them."""
    files = [p for folder in folders if folder.is_dir() for p in _journal_files(folder)]
    hidden = [p for p in files if not _readable(p)]
    if not hidden:
        return None
    user = _user()
    where = ", ".join(sorted({str(f) for f in folders if f.is_dir()}))
    return (f"{len(hidden)} of {len(files)} journal files in {where} cannot be read by user {user}, so this "
            f"is only part of the journal: join a group that may read it ({_group_hint()}: "
            f"sudo usermod -aG systemd-journal {user}, then log in again) or run triage with sudo")


def _readable(path: Path) -> bool:
    """Readable by the effective user, as journalctl will open it."""
    if os.access in os.supports_effective_ids:
        return os.access(path, os.R_OK, effective_ids=True)
    return os.access(path, os.R_OK)


def _journal_files(folder: Path) -> Iterator[Path]:
    for pattern in ("*.journal", "*.journal~", "*/*.journal", "*/*.journal~"):
        yield from folder.glob(pattern)


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _group_hint() -> str:
    present = []
    for name in READ_GROUPS:
        try:
            grp.getgrnam(name)
        except KeyError:
            continue
        present.append(f"'{name}'")
    return " or ".join(present) or "'systemd-journal'"
