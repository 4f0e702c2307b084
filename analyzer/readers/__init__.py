"""Readers: turn the raw lines of a region into typed records, one parser per input form."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from analyzer.choices import InputForm
from analyzer.models import Record
from analyzer.readers.console import parse_console, parse_docker
from analyzer.readers.journal_json import parse_export, parse_json
from analyzer.readers.journal_text import parse_short, parse_verbose
from analyzer.readers.kernel import parse_kernel
from analyzer.readers.paste import ANSI

Parser = Callable[[Sequence[str], int, str], Iterator[Record]]

PARSERS: dict[InputForm, Parser] = {
    InputForm.journal_short: parse_short,
    InputForm.journal_monotonic: parse_short,
    InputForm.syslog: parse_short,
    InputForm.journal_verbose: parse_verbose,
    InputForm.journal_json: parse_json,
    InputForm.journal_export: parse_export,
    InputForm.kernel: parse_kernel,
    InputForm.docker: parse_docker,
    InputForm.console: parse_console,
}


_ANSI = re.compile(ANSI.pattern.decode())  # colour codes (analyzer/readers/paste.py), in text


def decode_lines(raw: Sequence[bytes], form: InputForm) -> list[str]:
    """Export binary fields must survive a round trip to bytes; other forms replace bad bytes
    and lose their terminal colour codes and stray NUL bytes."""
    if form is InputForm.journal_export:  # binary fields may hold any byte, \r included
        return [line.decode("utf-8", "surrogateescape") for line in raw]
    lines = [line.decode("utf-8", "replace").removesuffix("\r") for line in raw]  # CRLF logs
    lines = [line.replace("\x00", "") if "\x00" in line else line for line in lines]  # stray NULs (detect.py)
    return [_ANSI.sub("", line) if "\x1b" in line or "#033[" in line else line for line in lines]


def parse_lines(raw: Sequence[bytes], form: InputForm, first_line: int = 1, path: str = "-") -> list[Record]:
    """Parse raw input lines (without their newlines) of one form into records."""
    parser = PARSERS[form if form is not InputForm.auto else InputForm.console]
    return list(parser(decode_lines(raw, form), first_line, path))
