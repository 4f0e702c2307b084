"""Which files of a pattern folder are pattern files, and the pattern ids they declare, read
without validating them: a shell completing `triage patterns show <TAB>` waits on this, so it
imports no pydantic and parses no YAML.

A hand-written pattern's id is its file's stem (the loader refuses any other); a catalogue's
patterns are its `id:` template with each entry's key, for the entries that no hand-written
pattern covers (`covered_by`). Catalogues are read line by line in the form their files take
(top-level `id:`, `entries:` a block list of mappings); tests check that the ids agree with
the loaded library.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from analyzer.data import data_files

CATALOGUE_DIR = "catalogues"
_KNOWN_FALSE_POSITIVES = "known-false-positives.yaml"  # listed by lint, not a pattern

_TOP_ID = re.compile(r"""id:\s*(["']?)(?P<id>[a-z0-9{}-]+)\1\s*(?:#.*)?$""")
_ITEM = re.compile(r"(?P<indent> *)- +(?P<rest>.*)$")
_FIELD = re.compile(r"""(?P<name>key|covered_by):\s*(["']?)(?P<value>[a-z0-9-]+)\2\s*(?:#.*)?$""")


def pattern_entries(root: Path) -> list[tuple[Path, os.stat_result]]:
    """The YAML files under `root` that hold patterns or catalogues, with their stat: not under
    a folder or file starting with `_` (rules, benign logs), not the false-positive list."""
    return [(p, st) for p, st in data_files(root, frozenset({".yaml"})) if p.name != _KNOWN_FALSE_POSITIVES]


def pattern_files(root: Path) -> list[Path]:
    return [p for p, _st in pattern_entries(root)]


def is_catalogue(path: Path) -> bool:
    return path.parent.name == CATALOGUE_DIR


def catalogue_ids(text: str) -> list[str]:
    """The ids a catalogue expands into: its `id:` template filled with each entry's key,
    except entries left to a hand-written pattern (`covered_by`)."""
    template: str | None = None
    entries: list[dict[str, str]] = []
    in_entries = False
    item_indent: int | None = None
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and not line.startswith("-"):  # a top-level key
            in_entries = line.startswith("entries:")
            if m := _TOP_ID.match(line):
                template = m["id"]
            continue
        if not in_entries:
            continue
        indent = len(line) - len(line.lstrip(" "))
        item = _ITEM.match(line)
        if item and (item_indent is None or len(item["indent"]) == item_indent):
            item_indent = len(item["indent"])
            entries.append({})
            field_text = item["rest"]
        elif item_indent is not None and entries and indent == item_indent + 2:
            field_text = line.strip()
        else:
            continue
        if m := _FIELD.match(field_text):
            entries[-1][m["name"]] = m["value"]
    if template is None or "{key}" not in template:
        return []
    return [template.replace("{key}", e["key"]) for e in entries if "key" in e and "covered_by" not in e]


def pattern_ids(roots: Iterable[Path]) -> list[str]:
    """Every pattern id under `roots`, sorted; folders that do not exist and files that
    cannot be read are skipped (the loader reports them)."""
    ids: set[str] = set()
    for root in roots:
        if not root.is_dir():
            continue
        for path in pattern_files(root):
            if not is_catalogue(path):
                ids.add(path.stem)
                continue
            try:
                ids.update(catalogue_ids(path.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return sorted(ids)
