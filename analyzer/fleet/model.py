"""The fleet report: the JSON contract of `triage fleet --format json` (like the single-node
report's, fields may be added, none renamed)."""

from __future__ import annotations

from pydantic import Field

from analyzer.choices import Confidence, FindingKind, Severity
from analyzer.models import Model


class NodeSummary(Model):
    name: str  # the host name its journal lines give, else the file or folder name
    inputs: list[str]
    lines: int
    findings: int
    first_failure: str | None = None  # ISO time of its earliest finding
    from_report: bool = False  # read from a node's own `triage --format json` report


class NodeEvidence(Model):
    node: str
    path: str
    line: int
    text: str


class NodeCount(Model):
    node: str
    count: int
    runs: int = 1
    processes: int = 1
    first_time: str | None = None


class FleetSymptom(Model):
    """A consequence folded under the root cause: one finding id across the nodes that logged it."""

    id: str
    title: str
    nodes: list[str]
    processes: int
    count: int
    first_time: str | None = None


class FleetFinding(Model):
    rank: int = 0
    id: str
    kind: FindingKind
    title: str
    severity: Severity
    confidence: Confidence
    cause: str
    fix: list[str] = Field(default_factory=list)
    avoid: list[str] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    nodes: list[NodeCount]  # where it was seen, earliest first
    first_node: str
    first_time: str | None = None
    last_time: str | None = None
    count: int
    processes: int
    consequence: bool = False  # one node's echo of another's failure (fleet.yaml)
    root: bool = False  # the earliest failure that is not an echo: the fleet's root cause
    symptoms: list[FleetSymptom] = Field(default_factory=list)
    evidence: list[NodeEvidence] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)


class FleetReport(Model):
    version: int = 1
    tool: str = "triage fleet"
    nodes: list[NodeSummary]
    findings: list[FleetFinding]
    root_node: str | None = None
    alignment: str = ""  # how node clocks were treated, and whether the order is certain
    straggler: str | None = None  # a node the others waited for that logged no failure of its own
    warnings: list[str] = Field(default_factory=list)
