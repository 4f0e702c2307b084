"""What the `triage kb …` commands do; printing goes through analyzer.render."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from analyzer.choices import Format
from analyzer.data import data_dir
from analyzer.errors import PatternError
from analyzer.render import print_lines, print_raw, print_warning, render_hits


def kb_root() -> Path:
    return data_dir("kb")


def lint(extra_patterns: Sequence[Path]) -> bool:
    from analyzer.authoring.postmortem_lint import lint_kb
    from analyzer.triage import load

    problems = lint_kb(kb_root(), load(extra_patterns))
    count = sum(1 for p in kb_root().glob("*.md") if p.name != "README.md")
    print_lines([str(p) for p in problems] + [f"{count} postmortems, {len(problems)} problems"])
    return not problems


def list_postmortems(fmt: Format) -> None:
    from analyzer.kb.postmortems import load_kb

    pms = sorted(load_kb(kb_root()), key=lambda p: p.front.date, reverse=True)
    if fmt is Format.json:
        rows = [{"id": p.id, "title": p.front.title, "date": p.front.date.isoformat(),
                 "severity": p.front.severity.value, "patterns": p.front.patterns} for p in pms]
        print_raw(json.dumps(rows, indent=2) + "\n")
        return
    print_lines([f"{p.front.date}  {p.front.severity.value:<9} {p.id}" for p in pms])


def show_postmortem(postmortem_id: str) -> None:
    path = kb_root() / f"{postmortem_id}.md"
    if not path.exists():
        raise PatternError(f"unknown postmortem id: {postmortem_id}", help="see `triage kb list`")
    print_raw(path.read_text())


def index(path: Path | None, model: str | None, rebuild: bool) -> None:
    import time

    from analyzer.kb.index import ensure, plan

    p = plan(path, model)
    start = time.perf_counter()
    stats = ensure(p, rebuild)
    took = time.perf_counter() - start
    if stats is None:
        print_lines([f"index {p.path} is current"])
    else:
        print_lines([f"indexed {stats.documents} documents, {stats.chunks} passages "
                     f"({stats.embedded} embedded, the rest reused) in {took:.1f}s into {p.path}"])


def search(query: str, limit: int, kind: str | None, fmt: Format, path: Path | None, model: str | None,
           full: bool = False) -> None:
    from analyzer.kb.index import ensure, plan
    from analyzer.kb.search import search as run

    p = plan(path, model)
    if ensure(p) is not None:
        print_warning(f"built the search index {p.path} first")
    hits = run(p, query, limit, kind)
    if fmt is Format.json:
        print_raw(json.dumps({"query": query, "hits": [h.__dict__ for h in hits]}, indent=2) + "\n")
        return
    render_hits(query, hits, full=full)


def new_from_report(report: Path, out: Path | None) -> None:
    from analyzer.authoring.postmortem_draft import write_draft

    target = write_draft(report, out or kb_root())
    print_lines([f"wrote {target}", "next: replace every TODO, check the log excerpts, then `triage kb lint`"])
