"""The closed sets of names that the CLI's options, the models and the pattern files share:
severity, confidence, finding kind, input form and output format. Plain enums, so that `triage --help`
imports neither pydantic nor rich."""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    info = "info"
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_ORDER.index(self)


_SEVERITY_ORDER = [Severity.info, Severity.low, Severity.medium, Severity.high, Severity.critical]


class Confidence(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"

    @property
    def rank(self) -> int:
        return ["low", "medium", "high"].index(self.value)

    @property
    def lowered(self) -> Confidence:
        """One level less sure (low stays low)."""
        return Confidence.low if self is Confidence.low else [Confidence.low, Confidence.medium][self.rank - 1]


class FindingKind(StrEnum):
    """What a finding is: one pattern's matches, a causal chain of them, a version rule
    over the log's facts, or an error that no pattern knows."""

    pattern = "pattern"
    chain = "chain"
    rule = "rule"
    unrecognised = "unrecognised"


class InputForm(StrEnum):
    """The forms a reader understands; `auto` asks the detector."""

    auto = "auto"
    journal_short = "journal-short"  # short, short-iso, short-precise, short-unix, with-unit
    journal_monotonic = "journal-monotonic"  # short-monotonic
    journal_verbose = "journal-verbose"
    journal_json = "journal-json"
    journal_export = "journal-export"
    kernel = "kernel"  # dmesg, with or without human timestamps
    syslog = "syslog"
    docker = "docker"  # docker json-file lines
    console = "console"  # plain output of a process (also journalctl -o cat)


class Format(StrEnum):
    terminal = "terminal"
    json = "json"
    markdown = "markdown"
    html = "html"  # one self-contained page: a report to share or print


class ExportFormat(StrEnum):
    """`triage patterns export --format`: the rule languages the library is written out in."""

    sigma = "sigma"


class Color(StrEnum):
    """--color: `auto` colours a terminal only (and honours NO_COLOR); `always` for `less -R`."""

    auto = "auto"
    always = "always"
    never = "never"
