"""journalctl `-o json` (one object per line) and `-o export` (KEY=value blocks).

In JSON, MESSAGE is a string, null, or an array of byte values when the message is not
valid UTF-8; in export, such fields are binary: the name, a newline, a little-endian
64-bit length, the raw bytes.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Sequence

from analyzer.models import Record
from analyzer.readers.console import console_record
from analyzer.readers.journal_text import _from_fields


def _text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, int) and 0 <= v < 256 for v in value):
            return bytes(value).decode("utf-8", "replace")
        if value:  # a field repeated in one entry: journalctl gives a list of values
            return _text(value[0])
    if isinstance(value, int | float):
        return str(value)
    return None


def parse_json(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    """A line that is not a JSON object (cut by a full disk, or text mixed into the stream)
    is kept as a plain-text record: its words may still be the error that matters."""
    for i, text in enumerate(lines):
        try:
            obj = json.loads(text) if text.startswith("{") else None
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            if text.strip():
                yield console_record(path, first_line + i, text, plain=True)
            continue
        fields = {k: t for k, v in obj.items() if (t := _text(v)) is not None}
        if "__REALTIME_TIMESTAMP" in fields:
            fields["_TIME"] = fields["__REALTIME_TIMESTAMP"]
        yield _from_fields(fields, path, first_line + i, first_line + i)


def parse_export(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    """Export entries are separated by an empty line. Binary fields were split into
    lines by the scanner; they are put back together with their length prefix."""
    fields: dict[str, str] = {}
    start = first_line
    i = 0
    while i < len(lines):
        text = lines[i]
        n = first_line + i
        if not text:
            if fields:
                yield _from_fields(_with_time(fields), path, start, n - 1)
            fields, start = {}, n + 1
            i += 1
            continue
        if "=" in text:
            key, value = text.split("=", 1)
            fields[key] = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            i += 1
            continue
        i = _binary_field(lines, i, fields)
    if fields:
        yield _from_fields(_with_time(fields), path, start, first_line + len(lines) - 1)


def _binary_field(lines: Sequence[str], i: int, fields: dict[str, str]) -> int:
    """Read `KEY\\n<le64 size><data>\\n` starting at lines[i]; return the next index."""
    key = lines[i]
    rest = "\n".join(lines[i + 1:])
    raw = rest.encode("utf-8", "surrogateescape")
    if len(raw) < 8:
        return len(lines)
    (size,) = struct.unpack("<Q", raw[:8])
    data = raw[8:8 + size]
    fields[key] = data.decode("utf-8", "replace")
    consumed = raw[:8 + size].decode("utf-8", "surrogateescape")
    return i + 1 + consumed.count("\n") + 1


def _with_time(fields: dict[str, str]) -> dict[str, str]:
    if "__REALTIME_TIMESTAMP" in fields:
        fields["_TIME"] = fields["__REALTIME_TIMESTAMP"]
    return fields
