"""Rule data (`patterns/_rules/*.yaml`): fact extractors, compatibility tables with their
sources, version-gated rules and causal chains, as validated models; and the small
condition language they share: `fact op value`, where value is a version, another fact,
or `table[fact]`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from analyzer.choices import Confidence, Severity
from analyzer.library.yamlfile import M, load_yaml, read_text, validate

RULES_DIR = "_rules"
_CONDITION = re.compile(r"^(?P<fact>[a-z_]+) (?P<op><=|>=|==|!=|<|>) (?P<value>[\w.+-]+(?:\[[a-z_]+\])?)$")
Condition = Annotated[str, StringConstraints(pattern=_CONDITION.pattern)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FactDef(Strict):
    label: str
    regexes: list[str] = Field(default_factory=list)
    unit: Literal["cuda_tag", "sm"] | None = None
    keep: Literal["first", "last"] = "last"  # which sighting wins: the failing run's, or the first banner's
    # set by the engine, not read from a line (the failure phase): unknown means "not shown",
    # so a fix step that needs it is left out rather than offered with a doubt
    derived: bool = False

    @model_validator(mode="after")
    def read_or_derived(self) -> FactDef:
        if bool(self.regexes) == self.derived:
            raise ValueError("a fact is either read from lines (regexes) or derived by the engine (derived: true)")
        return self


class Phase(Strict):
    """A phase of a serving engine's life, recognised by the frames of a traceback."""

    id: str = Field(pattern=r"^[a-z]+(?:-[a-z]+)*$")
    label: str
    frames: list[str] = Field(min_length=1)  # regexes over "FILE FUNCTION" of each frame


class PhasesFile(Strict):
    source: str = Field(min_length=5)
    phases: list[Phase]


class Table(Strict):
    description: str
    source: str = Field(min_length=5)
    rows: dict[str, str]


class Rule(Strict):
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    title: str
    severity: Severity
    confidence: Confidence
    when: list[Condition] = Field(default_factory=list)
    # facts the log must show with two or more different values (one job's ranks or nodes
    # reporting different releases of a library they must share)
    varies: list[str] = Field(default_factory=list)
    explains: list[str] = Field(default_factory=list)
    description: str
    fix: list[str] = Field(min_length=1)
    avoid: list[str] = Field(default_factory=list)
    source: str

    @model_validator(mode="after")
    def has_condition(self) -> Rule:
        if not self.when and not self.varies:
            raise ValueError("a rule needs a condition: `when` or `varies`")
        return self

    def filled(self, subst: Mapping[str, str]) -> RuleText:
        """Title, cause and fix with `{fact}`, `{table[fact]}` and `{fact:all}` replaced: one
        place for a log's findings and a fleet's."""
        return RuleText(title=fill_facts(self.title, subst), cause=fill_facts(self.description, subst),
                        fix=[fill_facts(step, subst) for step in self.fix])


@dataclass(frozen=True)
class RuleText:
    title: str
    cause: str
    fix: list[str]


def fill_facts(text: str, subst: Mapping[str, str]) -> str:
    """A rule's text with its placeholders replaced (longest names first)."""
    for key, value in sorted(subst.items(), key=lambda kv: -len(kv[0])):
        text = text.replace("{" + key + "}", value)
    return " ".join(text.split())


class Step(Strict):
    patterns: list[str] = Field(default_factory=list)
    areas: list[str] = Field(default_factory=list)
    patterns_exclude: list[str] = Field(default_factory=list)


class Candidate(Strict):
    """A reason a chain's steps may be linked, and what in a log would support it: an
    occurrence of one of `patterns`, or a fact seen with two values, before the root step."""

    claim: str = Field(min_length=10)
    patterns: list[str] = Field(default_factory=list)
    facts_changed: list[str] = Field(default_factory=list)


class Chain(Strict):
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    title: str
    window_s: int = Field(gt=0)
    root: int = Field(ge=1)
    steps: list[Step] = Field(min_length=2)
    description: str
    # what the order itself asks for (before the root finding's own fix steps)
    fix: list[str] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)


class Emitter(Strict):
    project: str
    issues: str = Field(pattern=r"^https://")


class EmittersFile(Strict):
    emitters: dict[str, Emitter]


class FleetFile(Strict):
    """fleet.yaml: the patterns that are one node's echo of another node's failure."""

    source: str = Field(min_length=5)
    skew_s: float = Field(ge=0)
    consequences: dict[str, str]


class FactsFile(Strict):
    facts: dict[str, FactDef]


class CompatFile(Strict):
    tables: dict[str, Table]


class RulesFile(Strict):
    rules: list[Rule]


class ChainsFile(Strict):
    chains: list[Chain]


@dataclass(frozen=True)
class RuleBook:
    facts: dict[str, FactDef]
    tables: dict[str, Table]
    rules: list[Rule]
    chains: list[Chain]
    emitters: dict[str, Emitter] = field(default_factory=dict)
    phases: list[Phase] = field(default_factory=list)  # most specific first
    consequences: dict[str, str] = field(default_factory=dict)  # pattern id → why it is another node's echo
    skew_s: float = 5.0

    @staticmethod
    def empty() -> RuleBook:
        return RuleBook({}, {}, [], [])

    def phase_of(self, frames: Sequence[tuple[str, str]]) -> Phase | None:
        """The first phase (most specific) one of whose regexes matches a frame (file, function)."""
        shown = [f"{file} {function}" for file, function in frames]
        for phase in self.phases:
            if any(re.search(rx, text) for rx in phase.frames for text in shown):
                return phase
        return None


def _load(path: Path, model: type[M]) -> M:
    data, lines = load_yaml(read_text(path), path)
    return validate(model, data, lines, path)


def load_rulebook(patterns_root: Path) -> RuleBook:
    folder = patterns_root / RULES_DIR
    if not folder.is_dir():
        return RuleBook.empty()
    facts = _load(folder / "facts.yaml", FactsFile)
    compat = _load(folder / "compat.yaml", CompatFile)
    rules = _load(folder / "rules.yaml", RulesFile)
    chains = _load(folder / "chains.yaml", ChainsFile)
    emitters = _load(folder / "emitters.yaml", EmittersFile)
    phases = _load(folder / "phases.yaml", PhasesFile)
    fleet = _load(folder / "fleet.yaml", FleetFile)
    return RuleBook(facts.facts, compat.tables, rules.rules, chains.chains, emitters.emitters, phases.phases,
                    fleet.consequences, fleet.skew_s)


_RELEASE = re.compile(r"(?P<release>\d+(?:\.\d+)*)(?:[.-]?(?P<tag>a|b|rc|dev|post)\.?(?P<n>\d*))?")


def check_references(book: RuleBook, patterns: Mapping[str, Sequence[str]], root: Path) -> None:
    """Every pattern id the rule data names exists, and every condition names a declared fact
    and table: a typo would otherwise make a rule or a fix step silently never apply.
    `patterns` maps each pattern id to the fact conditions it states."""
    problems: list[tuple[str, str]] = []

    def ids(where: str, named: Sequence[str]) -> None:
        problems.extend((where, f"names an unknown pattern `{i}`") for i in named if i not in patterns)

    def conditions(where: str, conds: Sequence[str]) -> None:
        for cond in conds:
            m = _CONDITION.match(cond)
            names = [m["fact"], *re.findall(r"\[([a-z_]+)\]", m["value"])] if m else []
            table = re.match(r"([a-z_]+)\[", m["value"]) if m else None
            problems.extend((where, f"`{cond}` names an unknown fact `{n}`") for n in names if n not in book.facts)
            if table and table[1] not in book.tables:
                problems.append((where, f"`{cond}` names an unknown table `{table[1]}`"))

    for rule in book.rules:
        ids(f"rules.yaml {rule.id}", rule.explains)
        conditions(f"rules.yaml {rule.id}", rule.when)
        problems.extend((f"rules.yaml {rule.id}", f"`varies` names an unknown fact `{f}`")
                        for f in rule.varies if f not in book.facts)
    for chain in book.chains:
        for step in chain.steps:
            ids(f"chains.yaml {chain.id}", [*step.patterns, *step.patterns_exclude])
        for cand in chain.candidates:
            ids(f"chains.yaml {chain.id}", cand.patterns)
            problems.extend((f"chains.yaml {chain.id}", f"names an unknown fact `{f}`")
                            for f in cand.facts_changed if f not in book.facts)
    ids("fleet.yaml", list(book.consequences))
    for pid, conds in patterns.items():
        conditions(f"pattern {pid}", conds)
    if problems:
        from analyzer.errors import PatternError

        where, what = problems[0]
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PatternError(f"{where} {what}{more}", root / RULES_DIR)


def version(text: str) -> tuple[int, ...] | None:
    """A comparable version: `0.6.8rc1` < `0.6.8` < `0.6.8.post1`; a local part after `+`
    (`2.9.1+cu130`, `0.2.3+cu121torch2.5`) does not count."""
    m = _RELEASE.search(text.split("+")[0])
    if m is None:
        return None
    parts = tuple(int(p) for p in m["release"].split("."))
    if m["tag"] is None:
        return parts
    # a pre-release sorts below its release (padding with zeros), a post-release above it
    return (*parts, 0 if m["tag"] == "post" else -1, int(m["n"] or 0))


def resolve(term: str, facts: Mapping[str, str], tables: Mapping[str, Table]) -> str | None:
    """A literal version, a fact name, or `table[fact]` (the row whose key the fact starts with)."""
    if m := re.fullmatch(r"([a-z_]+)\[([a-z_]+)\]", term):
        table, key = tables.get(m[1]), facts.get(m[2])
        if table is None or key is None:
            return None
        major = key.split(".")[0]
        return table.rows.get(key) or table.rows.get(major)
    if re.fullmatch(r"[a-z_]+", term):
        return facts.get(term)
    return term


_SAY = {"<": "<", "<=": "≤", ">": ">", ">=": "≥", "==": "=", "!=": "≠"}


def spell(conditions: Sequence[str], facts: Mapping[str, FactDef]) -> str:
    """Conditions as a reader says them: `flashinfer_version < 0.6.9` → `FlashInfer < 0.6.9`."""
    out = []
    for cond in conditions:
        m = _CONDITION.match(cond)
        if m is None:
            raise ValueError(f"bad condition {cond!r}")
        known = facts.get(m["fact"])
        out.append(f"{known.label if known else m['fact']} {_SAY[m['op']]} {m['value']}")
    return " and ".join(out)


def holds(condition: str, facts: Mapping[str, str], tables: Mapping[str, Table]) -> bool | None:
    """True or False when every fact it needs is known; None when one is missing."""
    m = _CONDITION.match(condition)
    if m is None:
        raise ValueError(f"bad condition {condition!r}")
    left = facts.get(m["fact"])
    right = resolve(m["value"], facts, tables)
    if left is None or right is None:
        return None
    a, b = version(left), version(right)
    if a is None and b is None and m["op"] in ("==", "!="):  # names, not versions: a phase, a dtype
        return (left == right) == (m["op"] == "==")
    if a is None or b is None:
        return None
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[m["op"]]
