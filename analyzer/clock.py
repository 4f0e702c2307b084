"""Record times as seconds, for time windows and timelines. Every journal and log form
writes time differently; a time that cannot be read is None (order by line instead)."""

from __future__ import annotations

import datetime as dt
import re

_ISO = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d+))?\s*(Z|[+-]\d\d:?\d\d|[A-Z]{2,5})?")
_SYSLOG = re.compile(r"(?:[A-Z][a-z]{2} )?([A-Z][a-z]{2}) +(\d{1,2}) (\d\d:\d\d:\d\d)(?:\.(\d+))?")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}


def to_seconds(text: str | None) -> float | None:
    if not text:
        return None
    text = text.strip()
    if text.isdigit() and len(text) >= 15:  # journal __REALTIME_TIMESTAMP, microseconds
        return int(text) / 1e6
    if re.fullmatch(r"\d+\.\d+", text):  # short-unix, or monotonic seconds
        return float(text)
    if m := _ISO.search(text):
        return _iso(m)
    if m := _SYSLOG.match(text):
        month = _MONTHS.get(m[1])
        if month is None:
            return None
        day = dt.datetime.strptime(f"2000-{month:02d}-{int(m[2]):02d} {m[3]}", "%Y-%m-%d %H:%M:%S")
        return day.replace(tzinfo=dt.UTC).timestamp() + float(f"0.{m[4] or 0}")
    return None


def _iso(m: re.Match[str]) -> float | None:
    try:
        base = dt.datetime.strptime(f"{m[1]} {m[2]}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    zone = m[4] or "Z"
    offset = 0
    if zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        offset = (int(digits[:2]) * 3600 + int(digits[2:4]) * 60) * (1 if zone[0] == "+" else -1)
    return base.replace(tzinfo=dt.UTC).timestamp() - offset + float(f"0.{(m[3] or '0')[:6]}")


def iso(seconds: float | None) -> str | None:
    """Seconds as ISO 8601 UTC (`2026-05-03T09:58:10Z`), as reports write times."""
    if seconds is None:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
