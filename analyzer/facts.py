"""Environment facts (nvcc, torch and its CUDA, driver, GPU and compute capability, …)
read from the events where their phase-1 triggers fired, each with its evidence line."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import regex

from analyzer.library.rules import FactDef, Table, version
from analyzer.models import Event, Evidence, Fact, whole_line
from analyzer.scan import fact_of


def normalise(raw: str, unit: str | None) -> str:
    if unit == "cuda_tag" and raw.isdigit():  # 124 → 12.4, 130 → 13.0
        return f"{raw[:-1]}.{raw[-1]}"
    if unit == "sm" and raw.isdigit():  # 120 → 12.0, 90 → 9.0
        return f"{raw[:-1]}.{raw[-1]}"
    return raw.strip()


def extract_facts(events: Iterable[Event], hits: Mapping[int, set[str]], defs: Mapping[str, FactDef],
                  compiled: Mapping[str, list[regex.Pattern[str]]]) -> list[Fact]:
    """Facts in the events whose lines carry a fact trigger; the first value of each wins
    later, but every sighting is returned (a restart may show a new version)."""
    found: list[Fact] = []
    for event in events:
        names = {name for line in range(event.first_line, event.last_line + 1)
                 for k in hits.get(line, ()) if (name := fact_of(k)) is not None}
        for name in sorted(names):
            found.extend(_facts_in(event, name, defs[name], compiled[name]))
    return found


def _facts_in(event: Event, name: str, d: FactDef, rxs: list[regex.Pattern[str]]) -> Iterable[Fact]:
    lines = event.text.split("\n")
    for i, text in enumerate(lines):
        for rx in rxs:
            m = rx.search(text)
            if m is None:
                continue
            record = event.records[event.line_owner[i]] if event.line_owner else event.records[0]
            yield Fact(name=name, label=d.label, value=normalise(m["value"], d.unit),
                       evidence=Evidence(path=record.path, line=record.line, text=whole_line(text)))
            break


def derive(facts: dict[str, Fact], tables: Mapping[str, Table]) -> None:
    """Fill gaps from tables: the compute capability of a named GPU."""
    table = tables.get("gpu_sm")
    gpu = facts.get("gpu_name")
    if table is None or gpu is None or "gpu_sm" in facts:
        return
    for key, sm in table.rows.items():  # whole words: "T4" is not "Jetson T4000"
        if regex.search(rf"(?<!\w){regex.escape(key)}(?!\w)", gpu.value, regex.IGNORECASE):
            facts["gpu_sm"] = Fact(name="gpu_sm", label="GPU compute capability (from the GPU name)",
                                   value=sm, evidence=gpu.evidence, derived=True)
            return


def release(value: str) -> object:
    """What makes two values of a fact the same: the release when the value is a version
    (`2.19.3` = `2.19.3+cuda12.3`), the text otherwise."""
    return version(value) or value


def distinct(facts: Iterable[Fact], name: str) -> list[Fact]:
    """The first sighting of each different value of one fact, in log order: `2.19.3` and
    `2.19.3+cuda12.3` are one release (compared as versions), `2.14.3` another."""
    seen: dict[object, Fact] = {}
    for fact in facts:
        if fact.name == name:
            seen.setdefault(release(fact.value), fact)
    return sorted(seen.values(), key=lambda f: (f.evidence.path, f.evidence.line))


def spoken(values: Iterable[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    items = list(values)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def newest(facts: Iterable[Fact], defs: Mapping[str, FactDef] | None = None) -> dict[str, Fact]:
    """One value per fact: the last sighting (what the failing run saw), or the first for a
    fact declared `keep: first` (an engine's version banner, not a later line naming another
    release)."""
    out: dict[str, Fact] = {}
    for fact in facts:
        first = defs is not None and fact.name in defs and defs[fact.name].keep == "first"
        if fact.name not in out or (not first and version(fact.value) is not None):
            out[fact.name] = fact
    return out
