"""One error base carrying a source location, and the exit codes of the CLI."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Documented in the README: every way `triage` ends."""

    OK = 0  # analysed; nothing at or above --fail-on
    FINDINGS = 1  # a finding at or above --fail-on
    USAGE = 2  # bad invocation, unreadable or invalid input, invalid pattern file
    INTERNAL = 3  # a bug in triage: reported in one line, never as a traceback
    INTERRUPTED = 130  # Ctrl-C


class TriageError(Exception):
    """An error the user can act on. Rendered as one line: `path:line: message`."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None,
                 help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.help = help

    def __reduce__(self) -> tuple[type, tuple[str, str | None, int | None, str | None]]:
        """Keep the location across a process boundary (a `--jobs` worker's error)."""
        return type(self), (self.message, self.path, self.line, self.help)

    def location(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        where = self.location()
        text = f"{where}: {self.message}" if where else self.message
        return f"{text} (help: {self.help})" if self.help else text


class InputError(TriageError):
    """A log input that cannot be opened, decompressed or parsed."""


class PatternError(TriageError):
    """A pattern or fixture file that does not satisfy the contract."""


class PatternErrors(TriageError):
    """Every problem found while loading a library, reported at once."""

    def __init__(self, errors: list[PatternError]) -> None:
        self.errors = errors
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first.message + more, first.path, first.line, first.help)
