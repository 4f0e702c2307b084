"""`triage kb lint`: schema, links to patterns, and log excerpts that trigger them."""

from __future__ import annotations

from pathlib import Path

from analyzer.errors import PatternError
from analyzer.kb.postmortems import Postmortem, load_postmortem
from analyzer.library.compile import CompiledLibrary
from analyzer.readers.source import open_bytes
from analyzer.run import read_one


def fired(pm: Postmortem, library: CompiledLibrary) -> set[str]:
    """Pattern ids that fire on the postmortem's log excerpts."""
    ids: set[str] = set()
    for line, excerpt in pm.logs:
        ids |= {m.pattern_id for m in read_one(library, open_bytes(f"{pm.path}:{line}", excerpt.encode())).matches}
    return ids


def lint_kb(root: Path, library: CompiledLibrary) -> list[PatternError]:
    problems: list[PatternError] = []
    seen: dict[str, Path] = {}
    for path in sorted(root.glob("*.md")):
        if path.name == "README.md":
            continue
        try:
            pm = load_postmortem(path)
        except PatternError as exc:
            problems.append(exc)
            continue
        if pm.id in seen:
            problems.append(PatternError(f"id {pm.id} is also used by {seen[pm.id]}", path, 2))
        seen[pm.id] = path
        unknown = [p for p in pm.front.patterns if p not in library.patterns]
        if unknown:
            problems.append(PatternError(f"names unknown patterns: {', '.join(unknown)}", path,
                                         help="use ids from `triage patterns list`"))
        if pm.front.patterns and not pm.logs:
            problems.append(PatternError("names patterns but has no ```log excerpt", path,
                                         help="add a fenced ```log block with the real lines"))
        silent = set(pm.front.patterns) - set(unknown) - fired(pm, library) if pm.logs else set()
        if silent:
            problems.append(PatternError(f"patterns that fire on none of its log excerpts: {', '.join(sorted(silent))}",
                                         path, pm.logs[0][0], help="quote the lines that show the failure"))
    return problems
