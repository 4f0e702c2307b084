"""The postmortems of a knowledge-base folder and their ids, found without reading them: a
shell completing `triage kb show <TAB>` waits on this. A postmortem's id is its file's stem
(the loader refuses any other)."""

from __future__ import annotations

from pathlib import Path

README = "README.md"


def postmortem_paths(root: Path) -> list[Path]:
    """`root/*.md` but the folder's README, sorted by name (dates first, so oldest first)."""
    return sorted(p for p in root.glob("*.md") if p.name != README)


def postmortem_ids(root: Path) -> list[str]:
    return [p.stem for p in postmortem_paths(root)]
