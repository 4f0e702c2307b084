"""journalctl text output (short, short-iso, short-precise, short-unix, short-monotonic,
with-unit, verbose) and classic syslog files, which share the short layout.

journalctl indents the rest of a multi-line message to the width of the entry's prefix;
those continuation lines are joined to their entry. rsyslog escapes newlines as `#012`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from analyzer.models import Record
from analyzer.readers.worker import split_worker

_TIME = (
    r"(?:[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [A-Z]{2,5}"  # with-unit
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?"  # short, short-precise, syslog
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"  # short-iso, rsyslog
    r"|\d{9,11}\.\d+"  # short-unix
    r"|\[ *\d+\.\d+\])"  # short-monotonic
)
# A host name holds no `[`; a line pasted without its host (`Aug 18 16:28:58 systemd[1]: ...`) is
# read when its ident carries a pid, or is the kernel's, so that `systemd[1]:` is never a host;
# not with a monotonic time, where a line without a host is dmesg's (`[    5.44] systemd[1]: ...`).
_SHORT_LINE = re.compile(
    rf"(?P<time>{_TIME}) (?:(?P<host>[^\s\d\[][^\s\[:]*|\d+\.\d+\.\d+\.\d+) "
    r"|(?<!\] )(?=[A-Za-z_(.][^\s:\[]*\[\d+\]: |kernel: ))"
    r"(?P<ident>[A-Za-z_(.][^\s:]*?)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)",
    re.S,
)
_META = re.compile(r"-- (?:Boot [0-9a-f]+|No entries|Logs begin at|Journal begins at|Reboot) ")


def _record(path: str, line: int, m: re.Match[str], body: str) -> Record:
    worker, _t, message = split_worker(body)
    ident = m["ident"] or None
    unit = ident if ident and "." in ident and ident.rsplit(".", 1)[1] in _UNIT_SUFFIXES else None
    return Record(path=path, line=line, end_line=line, message=message, time=m["time"].strip("[] "),
                  host=m["host"], unit=unit or ident, pid=int(m["pid"]) if m["pid"] else None,
                  worker=worker)


_UNIT_SUFFIXES = {"service", "scope", "slice", "socket", "mount", "timer", "target", "device", "swap"}


def parse_short(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    """Short family and syslog: one entry per prefixed line, indented lines continue it."""
    current: Record | None = None
    indent = 0
    for i, text in enumerate(lines):
        n = first_line + i
        m = _SHORT_LINE.match(text)
        if m:
            if current is not None:
                yield current
            body = m["msg"].replace("#012", "\n").replace("#011", "\t")
            current = _record(path, n, m, body)
            indent = m.start("msg")
            continue
        if current is not None and text[:1] in (" ", "\t") and text.strip():
            cont = text[indent:] if text[:indent].strip() == "" else text.lstrip()
            current = _extend(current, cont, n)
            continue
        if current is not None:
            yield current
            current = None
        if text.strip() and not _META.match(text):
            yield Record(path=path, line=n, end_line=n, message=text)
    if current is not None:
        yield current


def _extend(record: Record, text: str, line: int) -> Record:
    return Record(path=record.path, line=record.line, end_line=line, message=record.message + "\n" + text,
                  time=record.time, host=record.host, unit=record.unit, pid=record.pid,
                  priority=record.priority, worker=record.worker)


_VERBOSE_HEAD = re.compile(r"[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[s=")
_VERBOSE_FIELD = re.compile(r"    (?P<key>[A-Z0-9_]+)=(?P<value>.*)", re.S)


def parse_verbose(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    """`journalctl -o verbose`: a header line, then indented KEY=value fields."""
    fields: dict[str, str] = {}
    start = first_line
    last = first_line
    key = ""
    for i, text in enumerate(lines):
        n = first_line + i
        if _VERBOSE_HEAD.match(text):
            if fields:
                yield _from_fields(fields, path, start, last)
            fields, start, key = {"_TIME": text.split(" [s=", 1)[0]}, n, ""
        elif m := _VERBOSE_FIELD.match(text):
            key = m["key"]
            fields[key] = m["value"]
        elif key and text.startswith(" " * (5 + len(key))):
            fields[key] += "\n" + text[5 + len(key):]
        else:
            continue
        last = n
    if fields:
        yield _from_fields(fields, path, start, last)


def _from_fields(fields: dict[str, str], path: str, start: int, end: int) -> Record:
    worker, _t, message = split_worker(fields.get("MESSAGE", ""))
    pid = fields.get("_PID") or fields.get("SYSLOG_PID")
    prio = fields.get("PRIORITY")
    return Record(path=path, line=start, end_line=end, message=message,
                  time=fields.get("_TIME"), host=fields.get("_HOSTNAME"),
                  unit=fields.get("_SYSTEMD_UNIT") or fields.get("SYSLOG_IDENTIFIER"),
                  pid=int(pid) if pid and pid.isdigit() else None,
                  priority=int(prio) if prio and prio.isdigit() else None, worker=worker)
