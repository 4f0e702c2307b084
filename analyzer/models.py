"""The typed models passed between stages: records → events → matches → findings → report.

Records, events and matches are created in the hot path and are never validated from
outside input, so they are frozen slotted dataclasses (a pydantic model costs several
microseconds each). Findings and the report are the public JSON contract, so they are
pydantic models with `extra="forbid"`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from analyzer.choices import Confidence, FindingKind, InputForm, Severity

CONTAINER = "container "  # how a worker name marks a container's log prefix (analyzer/readers/worker.py)


@dataclass(frozen=True, slots=True)
class Record:
    """One log entry: a journal entry, a syslog line, a console line (with its continuations)."""

    path: str
    line: int  # 1-based input line where the record starts
    end_line: int  # last input line of the record
    message: str
    time: str | None = None
    host: str | None = None
    unit: str | None = None  # systemd unit or syslog identifier
    pid: int | None = None
    priority: int | None = None
    worker: str | None = None  # per-worker prefix: "VllmWorker rank=3 pid=1234", "TP3", "rank0", CONTAINER + "vllm-1"
    plain: bool = False  # the line did not parse in its input's form (a cut JSON line) and was read as text

    @property
    def in_container(self) -> bool:
        """The line carried a container log's prefix (a Compose service, `kubectl logs --prefix`)."""
        return (self.worker or "").startswith(CONTAINER)

    @property
    def process(self) -> str:
        """Identity used to keep interleaved processes apart: the pid where the log has one
        (a worker prefix is printed only on the first line of a multi-line message), else
        the worker prefix."""
        who = self.pid if self.pid is not None else self.worker or ""
        return f"{self.host or ''}|{self.unit or ''}|{who}"


class EventKind(StrEnum):
    line = "line"
    traceback = "traceback"
    cpp_terminate = "cpp-terminate"
    kernel_block = "kernel-block"
    nccl_block = "nccl-block"


@dataclass(frozen=True, slots=True)
class Frame:
    file: str
    line: int
    function: str


@dataclass(frozen=True, slots=True)
class Event:
    """A unit of meaning: one record, or a multi-line block rebuilt from several."""

    kind: EventKind
    records: tuple[Record, ...]
    exc_type: str | None = None
    exc_message: str | None = None
    frames: tuple[Frame, ...] = ()
    text: str = ""  # messages joined with "\n"; line i of text belongs to line_owner[i]
    line_owner: tuple[int, ...] = ()  # index into records for each line of text
    code_lines: frozenset[int] = frozenset()  # lines of text that quote source code (traceback)
    # a traceback cut before its exception whose innermost source line raises it with its message
    # (`raise X("...")`): that line, the only place the message is; match.py reads it
    raise_line: int | None = None

    @property
    def path(self) -> str:
        return self.records[0].path

    @property
    def first_line(self) -> int:
        if len(self.records) == 1:
            return self.records[0].line
        return min(r.line for r in self.records)

    @property
    def last_line(self) -> int:
        if len(self.records) == 1:
            return self.records[0].end_line
        return max(r.end_line for r in self.records)

    @property
    def process(self) -> str:
        return self.records[0].process


@dataclass(frozen=True, slots=True)
class Match:
    """A pattern's full regex matched an event."""

    pattern_id: str
    event: Event
    records: tuple[Record, ...]  # the records the match spans (the evidence)
    captures: dict[str, str] = field(default_factory=dict)
    cut: bool = False  # matched only as far as a line cut short at the end of a paste goes (analyzer.cut)


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


LINE_MAX = 65536  # a log line kept whole up to this; only a pathological line (a JSON blob) is cut, and says so


def whole_line(text: str) -> str:
    """A log line as evidence: whole, so that the end of an allocator message (private pools,
    fragmentation) is never lost; a line past LINE_MAX characters keeps its start and end."""
    if len(text) <= LINE_MAX:
        return text
    half = LINE_MAX // 2
    return f"{text[:half]} … [{len(text) - 2 * half} characters cut] … {text[-half:]}"


class Evidence(Model):
    path: str
    line: int
    text: str


class InputSummary(Model):
    path: str
    format: InputForm
    lines: int
    bytes: int = 0
    undecodable: int = 0  # lines that were not valid UTF-8, read with replacement characters
    plain: int = 0  # lines near matches that did not parse in the input's form, read as plain text


class Fact(Model):
    """An environment fact read from the log, with the line that shows it."""

    name: str
    label: str
    value: str
    evidence: Evidence
    derived: bool = False  # inferred (e.g. compute capability from the GPU name), not printed


class Symptom(Model):
    """A finding folded under a higher one that explains it."""

    id: str
    title: str
    count: int
    evidence: list[Evidence] = Field(default_factory=list)


class TimelineEntry(Model):
    time: str | None
    path: str
    line: int
    host: str | None = None
    unit: str | None = None
    kind: str  # start, ready, exit, restart, upgrade, or a finding id
    text: str


class Related(Model):
    """A past incident related to a finding: linked by the postmortem, or by similarity."""

    id: str
    title: str
    score: float  # 1.0 for a postmortem that names the pattern; cosine similarity otherwise
    kind: str = "postmortem"  # or "pattern": the nearest known failures of an unrecognised error


class Hypothesis(Model):
    """A candidate explanation a chain offers, and whether lines of this log support it."""

    claim: str
    supported: bool
    evidence: list[Evidence] = Field(default_factory=list)


class Finding(Model):
    rank: int = 0
    id: str
    kind: FindingKind = FindingKind.pattern
    title: str
    phase: str | None = None  # the engine phase a traceback's frames show: "CUDA graph capture", ...
    severity: Severity
    confidence: Confidence
    cause: str
    why: str = ""
    fix: list[str] = Field(default_factory=list)
    avoid: list[str] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    count: int = 1
    first_line: int = 0
    last_line: int = 0
    first_time: str | None = None  # ISO 8601 UTC of the first occurrence whose time the log shows
    last_time: str | None = None
    captures: dict[str, str] = Field(default_factory=dict)
    related: list[Related] = Field(default_factory=list)
    score: float = 0.0
    reasons: list[str] = Field(default_factory=list)
    members: list[str] = Field(default_factory=list)  # a chain's findings, root cause first
    symptoms: list[Symptom] = Field(default_factory=list)  # folded findings this one explains
    hypotheses: list[Hypothesis] = Field(default_factory=list)  # a chain's candidate explanations
    processes: int = 1  # distinct processes (ranks, workers, pids) where it occurred
    runs: int = 1  # distinct runs of the service (between restarts) where it occurred


class Report(Model):
    version: int = 1
    tool: str = "triage"
    inputs: list[InputSummary]
    findings: list[Finding]
    facts: dict[str, Fact] = Field(default_factory=dict)
    timeline: list[TimelineEntry] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
