"""Kernel ring buffer lines: `dmesg` (`[12345.678901] msg`), `dmesg -T`
(`[Mon May  3 10:00:00 2026] msg`) and `dmesg -x` (`kern  :err   : [  1.2] msg`).

The NVIDIA driver continues a message on lines indented to the message column
(`               NVRM: fallen off the bus ...`); they are joined to their record.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from analyzer.models import Record

KERNEL_LINE = re.compile(
    r"(?:(?P<fac>[a-z]+) *:(?P<lvl>[a-z]+) *: )?"
    r"\[(?P<time> *\d+\.\d+|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] ?(?P<msg>.*)",
    re.S,
)
_LEVELS = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warn": 4, "notice": 5, "info": 6, "debug": 7}


def parse_kernel(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    current: Record | None = None
    for i, text in enumerate(lines):
        n = first_line + i
        m = KERNEL_LINE.match(text)
        if m:
            if current is not None:
                yield current
            level = _LEVELS.get(m["lvl"] or "")
            current = Record(path=path, line=n, end_line=n, message=m["msg"], time=m["time"].strip(),
                             unit="kernel", priority=level)
        elif current is not None and text[:1] in (" ", "\t") and text.strip():
            current = Record(path=path, line=current.line, end_line=n,
                             message=current.message + "\n" + text.strip(), time=current.time,
                             unit="kernel", priority=current.priority)
        else:
            if current is not None:
                yield current
                current = None
            if text.strip():
                yield Record(path=path, line=n, end_line=n, message=text)
    if current is not None:
        yield current
