"""Plain console output of a serving process (also `journalctl -o cat`, `docker logs`,
`kubectl logs`), and docker's json-file lines (`{"log": "...", "stream": ..., "time": ...}`).

Each line is a record; tracebacks are rebuilt later from records, per worker. A leading
RFC 3339 timestamp (`docker logs -t`, `kubectl logs --timestamps`), or a time column set off
by two spaces, becomes the time; the `> ` of a quoted paste is dropped, and so are the
Markdown `**` a reporter puts around the one line that matters (a traceback's last line, made
bold in an issue) and the backticks of a line pasted as inline code. Docker Compose's column
for a container named in the compose file is read when nearly every line carries it, and so is
Slurm's `srun --label` task number.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from analyzer.models import CONTAINER, Record
from analyzer.readers.worker import joined_workers, split_worker

# or a date and time with a space and no zone, set off from the line by two spaces (a log shipper's or
# an init system's time column, as Frigate's s6 services print it); a logger's own time field is
# followed by one space and its next field, and stays part of the message
_STAMP = re.compile(r"(?P<t>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) "
                    r"|(?P<t2>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)  ")
_QUOTE = re.compile(r"(?:> ?)+")  # a log pasted into a chat or an e-mail reply: "> Traceback ..."
_BOLD = re.compile(r"\*\*(?P<text>[^\s*](?:.*[^\s*])?)\*\*")  # the whole message, not a banner of stars
# a line pasted as Markdown inline code, its closing backtick lost when the paste was cut short;
# not a fence (```), and not a line that only starts with a quoted word ("`foo` is deprecated")
_CODE = re.compile(r"`(?P<text>[^`\s][^`]*?)`?\s*")
# a traceback's frame line with its quotes escaped, pasted from a JSON string or a repr
# (`  File \"/x/y.py\", line 3, in f`): read with plain quotes, as Python printed it
_ESCAPED_FRAME = re.compile(r'\s*File \\"[^"]+\\", line \d+')


# Docker Compose's column for a container named in the compose file (`container_name: ollama`):
# the name alone, without the replica number the worker reader knows it by, padded like every
# other service's to one width, then " | " (readers/worker.py reads the numbered form on its own)
_NAMED_COLUMN = re.compile(r"(?P<w>[A-Za-z0-9][\w.-]{0,80}?) {2,}\| ")
# Slurm's `srun --label` (src/common/write_labelled_message.c): the task id right-aligned to the width
# of the largest ("%*d: "), a heterogeneous job's component before it ("P%u %*d: "); a number and a
# colon start many other lines, so it is a column only where nearly every line has it at one width
_SRUN_LABEL = re.compile(r"(?P<het>P\d+ )? *(?P<task>\d{1,6}): ")
COLUMN_SAMPLE = 200  # lines looked at to find the column


Columns = tuple[int, ...]  # the widths of the columns (Compose's, srun's), outermost first


def _column(line: str) -> re.Match[str] | None:
    return (_NAMED_COLUMN.match(line) if "| " in line else None) or _SRUN_LABEL.match(line)


def named_columns(lines: Sequence[str]) -> Columns:
    """The widths of the columns that nearly every line of `lines` starts with (four in five of
    the non-blank lines: one such line among others is a table's row, not a column), outermost
    first (a container's log copied from another container's, srun's label in a container: two)."""
    sample = [_prefixes(line)[3] for line in lines[:COLUMN_SAMPLE] if line.strip()]
    found: list[int] = []
    for _ in range(2):
        widths = Counter(m.end() for line in sample if (m := _column(line)))
        if not widths:
            break
        width, n = widths.most_common(1)[0]
        if 5 * n < 4 * len(sample):
            break
        found.append(width)
        sample = [split_worker(line[width:])[2] for line in sample if (m := _column(line)) and m.end() == width]
    return tuple(found)


def _column_worker(c: re.Match[str]) -> str:
    """A column's worker: a container's name, or srun's task ("task 9", "P1 task 3")."""
    if "task" in c.groupdict():
        return f"{c['het'] or ''}task {c['task']}"
    return CONTAINER + c["w"]


def _prefixes(text: str) -> tuple[str | None, str | None, str | None, str]:
    """The prefixes read before a named column: a quote's `> ` (dropped), a time stamp, a worker
    (with the time its prefix may carry); returns (time, worker, worker's time, the rest)."""
    time = None
    if m := _QUOTE.match(text):
        text = text[m.end():]
    if m := _STAMP.match(text):
        time, text = m["t"] or m["t2"], text[m.end():]
    return (time, *split_worker(text))


def console_record(path: str, n: int, text: str, time: str | None = None,
                   previous: Record | None = None, plain: bool = False, columns: Columns = ()) -> Record:
    """A line without a worker prefix continues the previous line's worker: SGLang and
    Python logging print a multi-line message (a traceback) with one prefix. `columns`: the
    widths of the named Compose columns the lines around carry (`named_columns`)."""
    stamp, worker, wtime, message = _prefixes(text)
    time = stamp or time
    for width in columns:
        if not ((c := _column(message)) and c.end() == width):
            break
        inner, itime, message = split_worker(message[width:])
        worker = joined_workers(worker, _column_worker(c), inner)
        wtime = wtime or itime
    if (b := _BOLD.fullmatch(message)) or (message[:1] == "`" and (b := _CODE.fullmatch(message))):
        message = b["text"]
    if 'File \\"' in message and _ESCAPED_FRAME.match(message):
        message = message.replace('\\"', '"')
    if worker is None and previous is not None:
        worker = previous.worker
    return Record(path=path, line=n, end_line=n, message=message, time=time or wtime, worker=worker, plain=plain)


def parse_console(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    previous: Record | None = None
    columns = named_columns(lines)
    for i, text in enumerate(lines):
        if text.strip():
            previous = console_record(path, first_line + i, text.rstrip("\r"), previous=previous, columns=columns)
            yield previous


def parse_docker(lines: Sequence[str], first_line: int, path: str) -> Iterator[Record]:
    for i, text in enumerate(lines):
        n = first_line + i
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("log"), str):
            if text.strip():
                yield console_record(path, n, text, plain=True)
            continue
        body = obj["log"].rstrip("\n")
        time = obj.get("time") if isinstance(obj.get("time"), str) else None
        for part in body.split("\n"):
            yield console_record(path, n, part, time)
