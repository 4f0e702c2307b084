"""Postmortems: `kb/<date>-<slug>.md`, YAML front matter validated by a pydantic model and
a Markdown body with fixed sections. Fenced ```log blocks hold real excerpts; they are
tests too: the patterns a postmortem names must fire on them."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from analyzer.choices import Severity
from analyzer.errors import PatternError
from analyzer.kb.ids import postmortem_paths
from analyzer.library.yamlfile import line_of, load_yaml, read_text, validate

SECTIONS = ("Summary", "Timeline", "What happened", "Why", "How it was fixed", "Lessons")
_FRONT = re.compile(r"\A---\n(?P<yaml>.*?)\n---\n", re.S)
_LOG_BLOCK = re.compile(r"^```log[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
_HEADING = re.compile(r"^## (?P<name>.+?)\s*$", re.M)

Slug = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d\d-\d\d-[a-z0-9]+(-[a-z0-9]+)*$", max_length=100)]


class Front(BaseModel):
    """The front matter of a postmortem."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Slug
    title: Annotated[str, StringConstraints(min_length=10, max_length=140)]
    date: dt.date
    components: list[str] = Field(min_length=1)
    severity: Severity
    symptoms: list[str] = Field(min_length=1)
    root_cause: Annotated[str, StringConstraints(min_length=20)]
    fix: list[str] = Field(min_length=1)
    avoid: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Postmortem:
    front: Front
    path: Path
    body: str
    logs: tuple[tuple[int, str], ...]  # (line in the file, excerpt) of each ```log block

    @property
    def id(self) -> str:
        return self.front.id

    def sections(self) -> dict[str, str]:
        parts = list(_HEADING.finditer(self.body))
        return {m["name"]: self.body[m.end():parts[i + 1].start() if i + 1 < len(parts) else None].strip()
                for i, m in enumerate(parts)}


def load_postmortem(path: Path) -> Postmortem:
    text = read_text(path)
    m = _FRONT.match(text)
    if m is None:
        raise PatternError("no front matter: start the file with ---, the YAML fields, then ---", path, 1)
    data, lines = load_yaml(m["yaml"], path, first_line=2)
    if not isinstance(data, dict):
        raise PatternError("front matter must be a mapping (id:, title:, ...)", path, 2)
    front = validate(Front, data, lines, path, help="see kb/README.md for every field")
    if front.id != path.stem:
        raise PatternError(f"id {front.id!r} differs from the file name {path.stem!r}", path,
                           line_of(lines, ("id",)), help=f"rename the file to {front.id}.md")
    body = text[m.end():]
    offset = text[:m.end()].count("\n")
    logs = tuple((offset + body[:b.start()].count("\n") + 2, b["body"]) for b in _LOG_BLOCK.finditer(body))
    pm = Postmortem(front, path, body, logs)
    missing = [s for s in SECTIONS if s not in pm.sections()]
    if missing:
        raise PatternError(f"missing sections: {', '.join(missing)}", path,
                           help="add `## " + "`, `## ".join(missing) + "`")
    return pm


def load_kb(root: Path) -> list[Postmortem]:
    """Every postmortem under `root`; raises on the first invalid file (see kb lint for all)."""
    return [load_postmortem(p) for p in postmortem_paths(root)]
