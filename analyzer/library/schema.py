"""The pattern file format (`patterns/<area>/<id>.yaml`), as a pydantic model.

`patterns/schema.json` is generated from `Pattern` (`triage patterns schema`) and every
pattern file names it, so editors can validate and complete fields as they are typed.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from analyzer.choices import Confidence, Severity
from analyzer.scan import NAMED_GROUP

KebabId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=80)]
Area = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=40)]


# `{name}` or `{name|default}`; a shell's `${name}` and a Go template's `{{name}}` are text
PLACEHOLDER = re.compile(r"(?<![{$])\{(?P<name>[A-Za-z_]\w*)(?:\|(?P<default>[^{}]*))?\}(?!\})")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Status(StrEnum):
    experimental = "experimental"
    stable = "stable"
    deprecated = "deprecated"


class Role(StrEnum):
    failure = "failure"  # reported as a finding
    signal = "signal"  # a lifecycle line (start, restart, exit, ready, upgrade): feeds chains and timelines


class Mark(StrEnum):
    """What a lifecycle signal marks on the timeline; `start` also splits a log into runs."""

    start = "start"
    restart = "restart"
    exit = "exit"
    ready = "ready"
    upgrade = "upgrade"


FACT_CONDITION = r"^[a-z_]+ (?:<|<=|>|>=|==|!=) [\w.+-]+$"
Condition = Annotated[str, StringConstraints(pattern=FACT_CONDITION)]


class Scope(StrEnum):
    line = "line"  # each record's message on its own
    event = "event"  # the text of a rebuilt event (a whole traceback, an NVRM block)


class Expression(Strict):
    """One regular expression (the `regex` module's syntax) with named groups for captures.

    `trigger` is the fast prefilter run by the multi-pattern engine over raw bytes. It
    defaults to `regex` itself; give one when `regex` needs what hyperscan lacks
    (lookarounds, backreferences) or contains a double quote or backslash escape that the
    JSON journal form escapes. A trigger must fit on one line of the raw input.
    """

    regex: Annotated[str, StringConstraints(min_length=3, max_length=2000)]
    trigger: Annotated[str, StringConstraints(min_length=3, max_length=500)] | None = None


class FixStep(Strict):
    """A fix step that holds only in some environments: `when` lists fact conditions
    (`flashinfer_version < 0.6.9`, `gpu_sm == 12.0`). A step whose condition the log's facts
    contradict is left out of the report; one whose facts are unknown is shown with its
    condition spelled out."""

    step: Annotated[str, StringConstraints(min_length=5)]
    when: list[Condition] = Field(min_length=1)


class MatchSpec(Strict):
    any: list[Expression] = Field(default_factory=list, description="fires when one expression matches")
    all: list[Expression] = Field(default_factory=list, description="fires when every expression matches")
    scope: Scope = Scope.line
    ignorecase: bool = False
    in_container: bool = Field(default=False, description=(
        "fires only on lines a container log's prefix marks as a container's: a Compose service "
        "(`vllm-1  | ...`) or `kubectl logs --prefix` (`[pod/name/container] ...`)"))
    keeps_message: bool = Field(default=False, description=(
        "the pattern names only the step that failed (a Kubernetes event's reason), not why: the "
        "message on the matched line is still reported as an error of its own, above this finding"))

    @model_validator(mode="after")
    def one_list(self) -> MatchSpec:
        if bool(self.any) == bool(self.all):
            raise ValueError("give exactly one of `any` or `all`, each a list of {regex: ...}")
        return self

    @property
    def expressions(self) -> list[Expression]:
        return self.any or self.all


class Pattern(Strict):
    """A known failure: how to recognise it and what to do about it."""

    title: Annotated[str, StringConstraints(min_length=8, max_length=120)]
    id: KebabId
    status: Status = Status.experimental
    role: Role = Role.failure
    marks: Mark | None = Field(
        default=None, description="a signal's place on the timeline (start, restart, exit, ready, upgrade); "
                                  "`start` lines also count the runs of a service")
    severity: Severity
    confidence: Confidence = Confidence.medium
    area: Area
    tags: list[str] = Field(default_factory=list)
    description: Annotated[str, StringConstraints(min_length=20)] = Field(
        description="What the failure is: the cause stated for the user. May use {capture} names."
    )
    why: Annotated[str, StringConstraints(min_length=10)] = Field(description="Why it matters.")
    match: MatchSpec
    facts: dict[str, str] = Field(
        default_factory=dict, description="capture name → fact it records (e.g. nvcc_version)"
    )
    fix: list[str | FixStep] = Field(
        min_length=1, description="concrete steps, commands where they exist; a step that holds only in "
                                  "some environments is {step: ..., when: [fact conditions]}")
    avoid: list[str] = Field(default_factory=list, description="tempting workarounds that make it worse")
    references: list[str] = Field(default_factory=list)
    source: Annotated[str, StringConstraints(min_length=5)] = Field(
        description="where the error string is printed: upstream file or issue thread"
    )
    falsepositives: list[str] = Field(default_factory=list)
    postmortems: list[str] = Field(default_factory=list)
    supports: list[Condition] = Field(
        default_factory=list,
        description="facts that confirm this cause, e.g. 'gpu_sm >= 12.0', 'nvcc_version < 12.9'",
    )
    contradicts: list[Condition] = Field(
        default_factory=list,
        description="facts that argue against it, e.g. 'nvcc_version >= 12.9': confidence drops one level",
    )
    overlaps: list[KebabId] = Field(
        default_factory=list,
        description="ids of patterns of the same area meant to fire on the same lines (a symptom and its cause)",
    )
    refines: list[KebabId] = Field(
        default_factory=list,
        description="ids of more general patterns that fire on the same failure: when both are found, this one "
                    "ranks first and the general one folds under it",
    )
    explains: list[KebabId] = Field(
        default_factory=list,
        description="ids of patterns whose lines are a consequence of this failure (a fallback warning, a "
                    "later crash it causes): when both are found, this one ranks first and the consequence "
                    "folds under it",
    )

    @property
    def fix_texts(self) -> list[str]:
        """Every step's text, conditional or not (search, site, `patterns show`)."""
        return [s.step if isinstance(s, FixStep) else s for s in self.fix]

    def conditions(self) -> list[str]:
        """Every fact condition the pattern states: supports, contradicts, fix steps."""
        return [*self.supports, *self.contradicts, *(c for s in self.fix if isinstance(s, FixStep) for c in s.when)]

    @model_validator(mode="after")
    def only_signals_mark(self) -> Pattern:
        if self.marks is not None and self.role is not Role.signal:
            raise ValueError("`marks` is for lifecycle signals: add `role: signal` or remove it")
        return self

    @model_validator(mode="after")
    def placeholders_name_captures(self) -> Pattern:
        """`{name}` in the description or a fix step must be a named group; one that only
        some `any` expressions capture needs a default: `{name|the default}`."""
        groups = [set(NAMED_GROUP.findall(e.regex)) for e in self.match.expressions]
        always = set.intersection(*groups) if self.match.any else set.union(*groups)
        for text in [self.description, *self.fix_texts]:
            for m in PLACEHOLDER.finditer(text):
                name = m["name"]
                if not any(name in g for g in groups):
                    raise ValueError(f"{{{name}}} is not a named group of any match expression")
                if name not in always and m["default"] is None:
                    raise ValueError(f"{{{name}}} is captured by only some expressions: "
                                     f"give a default, {{{name}|...}}")
        return self
