"""Rule data (`patterns/_rules/*.yaml`): fact extractors, compatibility tables with their
sources, version-gated rules and causal chains, as validated models; and the small
condition language they share: `fact op value`, where value is a version, another fact,
or `table[fact]`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from analyzer.choices import Confidence, Severity
from analyzer.library.yamlfile import M, load_yaml, read_text, validate

RULES_DIR = "_rules"
_CONDITION = re.compile(r"^(?P<fact>[a-z_]+) (?P<op><=|>=|==|!=|<|>) (?P<value>[\w.+-]+(?:\[[a-z_]+\])?)$")
Condition = Annotated[str, StringConstraints(pattern=_CONDITION.pattern)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FactDef(Strict):
    label: str
    regexes: list[str] = Field(min_length=1)
    unit: Literal["cuda_tag", "sm"] | None = None


class Table(Strict):
    description: str
    source: str = Field(min_length=5)
    rows: dict[str, str]


class Rule(Strict):
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    title: str
    severity: Severity
    confidence: Confidence
    when: list[Condition] = Field(min_length=1)
    explains: list[str] = Field(default_factory=list)
    description: str
    fix: list[str] = Field(min_length=1)
    avoid: list[str] = Field(default_factory=list)
    source: str


class Step(Strict):
    patterns: list[str] = Field(default_factory=list)
    areas: list[str] = Field(default_factory=list)
    patterns_exclude: list[str] = Field(default_factory=list)


class Chain(Strict):
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
    title: str
    window_s: int = Field(gt=0)
    root: int = Field(ge=1)
    steps: list[Step] = Field(min_length=2)
    description: str


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

    @staticmethod
    def empty() -> RuleBook:
        return RuleBook({}, {}, [], [])


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
    return RuleBook(facts.facts, compat.tables, rules.rules, chains.chains)


def version(text: str) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", text)
    return tuple(int(p) for p in parts) if parts else None


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
    if a is None or b is None:
        return None
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[m["op"]]
