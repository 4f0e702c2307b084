"""Catalogues: the closed error sets an emitter defines (every cudaError_t, every Xid, every
systemd EXIT_* status) as one data file, `patterns/catalogues/<stem>.yaml`, that the loader
expands into one pattern per entry, with the same schema, lint, fixtures and site pages as a
hand-written pattern. An entry that a hand-written pattern already recognises names it in
`covered_by` and is not expanded, so the catalogue still says the set is covered; the forms that
name the entry are lent to that pattern (`lent`), so the set stays recognised by name: a bare
`CUDA_ERROR_INVALID_DEVICE` is known though its pattern was written for "invalid device ordinal"."""

from __future__ import annotations

import re
from typing import Annotated

import regex
from pydantic import Field, StringConstraints, model_validator

from analyzer.choices import Confidence, Severity
from analyzer.library.schema import Area, Expression, KebabId, MatchSpec, Pattern, Status, Strict

MAX_TITLE = 120
_FIELD = re.compile(r"\{(key|name|number|string|summary)\}")
_LOOKAROUND = re.compile(r"\(\?<?[=!][^()]*\)")  # hyperscan has none: the trigger drops them


class Entry(Strict):
    """One value of the emitter's set: its name, number and printed string, verbatim; what
    it means and what to do, in the library's words."""

    key: KebabId
    name: str | None = None
    number: int | str | None = None
    string: str | None = None
    summary: Annotated[str, StringConstraints(min_length=3, max_length=80)]
    meaning: Annotated[str, StringConstraints(min_length=20)]
    fix: list[str] = Field(default_factory=list)
    avoid: list[str] = Field(default_factory=list)
    severity: Severity | None = None
    confidence: Confidence | None = None
    expressions: list[str] | None = Field(
        default=None, description="templates that replace the catalogue's expressions for this entry")
    uses: list[KebabId] = Field(
        default_factory=list,
        description="named sets of the catalogue's `expression_sets` tried after its (or this entry's) expressions")
    extra_expressions: list[str] = Field(
        default_factory=list,
        description="templates tried after the catalogue's (or this entry's) expressions and the sets it uses: "
                    "forms only it prints")
    why: str | None = None
    covered_by: KebabId | None = None
    lend: bool = Field(default=True, description=(
        "whether the forms that name a covered entry join the pattern that covers it: false where "
        "that pattern names one situation of the value, not every one (ENOSPC from inotify is no full disk)"))
    refines: list[KebabId] = Field(
        default_factory=list,
        description="more general patterns that fire on the same failure: this entry ranks above them")
    explains: list[KebabId] = Field(
        default_factory=list,
        description="patterns whose lines are a consequence of this entry's failure: this entry ranks above them")
    overlaps: list[KebabId] = Field(
        default_factory=list,
        description="patterns meant to fire on this entry's lines too (besides the catalogue's own overlaps)")

    @model_validator(mode="after")
    def fix_unless_covered(self) -> Entry:
        if self.covered_by is None and not self.fix:
            raise ValueError("an expanded entry needs at least one fix step (or covered_by)")
        return self


class Catalogue(Strict):
    catalogue: KebabId
    title: Annotated[str, StringConstraints(min_length=8, max_length=160)]
    area: Area
    emitter: Annotated[str, StringConstraints(min_length=5)]
    source: Annotated[str, StringConstraints(min_length=5)]
    references: list[str] = Field(default_factory=list)
    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]*\{key\}[a-z0-9-]*$")]
    title_template: Annotated[str, StringConstraints(min_length=5)]
    expressions: list[str] = Field(min_length=1)
    expression_sets: dict[KebabId, list[str]] = Field(default_factory=dict, description=(
        "named template sets that only some entries use (`uses: [<name>]`): a form written once for the "
        "entries it fits, not copied into each"))
    tags: list[str] = Field(default_factory=list)
    why: Annotated[str, StringConstraints(min_length=10)]
    severity: Severity = Severity.medium
    confidence: Confidence = Confidence.medium
    entries: list[Entry] = Field(min_length=1)
    overlaps: list[KebabId] = Field(
        default_factory=list,
        description="hand-written patterns meant to fire on the same lines as the entries (a generic one)")
    keeps_message: bool = Field(default=False, description=(
        "the entries name only the step that failed (a reason), not why: the message on a matched line "
        "is still reported as an error of its own"))

    @model_validator(mode="after")
    def keys_unique(self) -> Catalogue:
        seen: set[str] = set()
        for e in self.entries:
            if e.key in seen:
                raise ValueError(f"entry key {e.key!r} appears twice")
            seen.add(e.key)
        return self

    @model_validator(mode="after")
    def sets_known(self) -> Catalogue:
        for e in self.entries:
            unknown = [u for u in e.uses if u not in self.expression_sets]
            if unknown:
                raise ValueError(f"entry {e.key!r} uses {unknown[0]!r}, which is not among expression_sets")
        return self

    def pattern_id(self, entry: Entry) -> str:
        return self.id.replace("{key}", entry.key)

    @property
    def expanded(self) -> list[Entry]:
        return [e for e in self.entries if e.covered_by is None]


def _values(entry: Entry) -> dict[str, str | None]:
    return {"key": entry.key, "name": entry.name, "string": entry.string, "summary": entry.summary,
            "number": None if entry.number is None else str(entry.number)}


def _text(template: str, entry: Entry) -> str:
    values = _values(entry)
    return _FIELD.sub(lambda m: values[m[1]] or "", template)


def _regex(template: str, entry: Entry) -> str | None:
    """The template with the entry's fields, regex-escaped; None when it needs a field the
    entry lacks (an entry without a name is not matched by `\\b{name}\\b`)."""
    values = _values(entry)
    if any(values[f] is None for f in _FIELD.findall(template)):
        return None
    return _FIELD.sub(lambda m: regex.escape(values[m[1]] or "", literal_spaces=True), template)


def _expression(rx: str) -> Expression:
    trigger = _LOOKAROUND.sub("", rx)
    return Expression(regex=rx, trigger=trigger if trigger != rx else None)


def _title(cat: Catalogue, entry: Entry) -> str:
    title = " ".join(_text(cat.title_template, entry).split())
    if len(title) <= MAX_TITLE:
        return title
    cut = title[:MAX_TITLE - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:(") + "…"


def _templates(cat: Catalogue, entry: Entry) -> list[str]:
    """The entry's expressions with its fields filled in (those it has the fields for)."""
    templates = [*(entry.expressions or cat.expressions),
                 *(t for name in entry.uses for t in cat.expression_sets[name]), *entry.extra_expressions]
    return [r for t in dict.fromkeys(templates) if (r := _regex(t, entry)) is not None]


def lent(cat: Catalogue) -> dict[str, list[Expression]]:
    """The forms that name each entry left to a hand-written pattern (its symbolic name:
    `CUDA_ERROR_INVALID_DEVICE`, `NVML_ERROR_NO_PERMISSION`), by that pattern's id. Forms by the
    printed string stay the pattern's own choice: "No space left on device" from inotify is no full
    disk, and the pattern that covers ENOSPC says so by what it matches."""
    out: dict[str, list[Expression]] = {}
    for entry in cat.entries:
        if entry.covered_by is None or not entry.lend:
            continue
        templates = [t for t in (entry.expressions or cat.expressions) if "{name}" in t and "{string}" not in t]
        out.setdefault(entry.covered_by, []).extend(
            _expression(r) for t in templates if (r := _regex(t, entry)) is not None)
    return out


def expand(cat: Catalogue) -> list[Pattern]:
    """One pattern per entry not covered by a hand-written pattern. Raises ValueError naming
    the entry when its pattern would not be valid."""
    out = []
    for entry in cat.expanded:
        exprs = _templates(cat, entry)
        if not exprs:
            raise ValueError(f"entry {entry.key!r}: no expression applies (it lacks the fields they use)")
        try:
            out.append(Pattern(
                title=_title(cat, entry), id=cat.pattern_id(entry), status=Status.stable,
                severity=entry.severity or cat.severity, confidence=entry.confidence or cat.confidence,
                area=cat.area, tags=[*cat.tags, cat.catalogue], description=" ".join(entry.meaning.split()),
                why=" ".join((entry.why or cat.why).split()),
                match=MatchSpec(any=[_expression(r) for r in exprs], keeps_message=cat.keeps_message),
                fix=list(entry.fix), avoid=list(entry.avoid), references=list(cat.references),
                overlaps=list(dict.fromkeys([*cat.overlaps, *entry.overlaps])), refines=list(entry.refines),
                explains=list(entry.explains),
                source=f"{cat.emitter} ({cat.source})"))
        except ValueError as exc:
            raise ValueError(f"entry {entry.key!r}: {exc}") from exc
    return out
