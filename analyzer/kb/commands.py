"""What the `triage kb …` commands do; printing goes through analyzer.render."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from analyzer.data import data_dir
from analyzer.errors import PatternError
from analyzer.kb.lint import lint_kb
from analyzer.kb.postmortems import load_kb
from analyzer.render import Format, print_lines


def kb_root() -> Path:
    return data_dir("kb")


def lint(extra_patterns: Sequence[Path]) -> bool:
    from analyzer.triage import load

    problems = lint_kb(kb_root(), load(extra_patterns))
    count = sum(1 for p in kb_root().glob("*.md") if p.name != "README.md")
    print_lines([str(p) for p in problems] + [f"{count} postmortems, {len(problems)} problems"])
    return not problems


def list_postmortems(fmt: Format) -> None:
    pms = sorted(load_kb(kb_root()), key=lambda p: p.front.date, reverse=True)
    if fmt is Format.json:
        print(json.dumps([{"id": p.id, "title": p.front.title, "date": p.front.date.isoformat(),
                           "severity": p.front.severity.value, "patterns": p.front.patterns} for p in pms], indent=2))
        return
    print_lines([f"{p.front.date}  {p.front.severity.value:<9} {p.id}" for p in pms])


def show_postmortem(postmortem_id: str) -> None:
    path = kb_root() / f"{postmortem_id}.md"
    if not path.exists():
        raise PatternError(f"unknown postmortem id: {postmortem_id}", help="see `triage kb list`")
    print(path.read_text(), end="")
