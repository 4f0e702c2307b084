"""What the `triage patterns …` commands do, as library functions returning plain data;
printing goes through analyzer.render."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from analyzer.authoring.fixture_runs import Outcome, run_fixture
from analyzer.authoring.pattern_draft import unfinished
from analyzer.choices import ExportFormat, Format
from analyzer.data import benign_logs, builtin_patterns, checkout_patterns, corpus_logs
from analyzer.errors import PatternError
from analyzer.library.catalogue import Catalogue
from analyzer.library.compile import compile_library
from analyzer.library.fixture_file import fixture_of
from analyzer.library.load import Library, load_library
from analyzer.library.schema import Pattern
from analyzer.render import print_lines, print_raw


def _library(extra: Sequence[Path]) -> Library:
    return load_library([builtin_patterns(), *extra])


def list_patterns(extra: Sequence[Path], area: str | None, fmt: Format) -> None:
    rows = [pf.pattern for pf in _library(extra).files if area is None or pf.pattern.area == area]
    if fmt is Format.json:
        print_raw(json.dumps([{"id": p.id, "title": p.title, "area": p.area, "severity": p.severity.value,
                               "status": p.status.value} for p in rows], indent=2) + "\n")
        return
    print_lines([f"{p.area:<12} {p.severity.value:<9} {p.id:<48} {p.title}" for p in rows])


def fixture_results(library: Library, ids: Sequence[str]) -> dict[str, list[Outcome] | PatternError]:
    """Run the fixtures of `ids` (all when empty); a broken fixture maps to its error."""
    compiled = compile_library(library)
    results: dict[str, list[Outcome] | PatternError] = {}
    for pf in library.files:
        if ids and pf.pattern.id not in ids:
            continue
        try:
            if not pf.fixture.exists():
                raise PatternError("pattern has no fixture", pf.path,
                                   help=f"add {pf.fixture.name} with real log lines marked `# match`")
            results[pf.pattern.id] = run_fixture(pf, fixture_of(pf), compiled)
        except PatternError as exc:
            results[pf.pattern.id] = exc
    return results


def orphan_fixtures(library: Library, roots: Sequence[Path]) -> list[Path]:
    known = {pf.fixture for pf in library.files}
    return sorted(p for root in roots for p in root.rglob("*.log")
                  if p not in known and not any(part.startswith("_") for part in p.relative_to(root).parts))


def test_patterns(extra: Sequence[Path], ids: Sequence[str]) -> bool:
    library = _library(extra)
    unknown = [i for i in ids if i not in {p.id for p in library.patterns}]
    if unknown:
        raise PatternError(f"unknown pattern id: {', '.join(unknown)}")
    lines: list[str] = []
    failed = 0
    for pid, result in fixture_results(library, ids).items():
        if isinstance(result, PatternError):
            failed += 1
            lines.append(f"✗ {pid}: {result}")
            continue
        bad = [o for o in result if not o.passed]
        draft = unfinished(library.get(pid))
        failed += bool(bad or draft)
        mark = "✗" if bad or draft else "✓"
        lines.append(f"{mark} {pid} ({len(result)} annotated lines)")
        path = library.get(pid).fixture
        lines += [f"    {path}:{o.annotation.fixture_line}: {o.annotation.expect.value}: {o.detail}"
                  for o in result if o.detail]
        lines += [f"    {where}:{n}: {message}" for where, n, message in draft]
    if not ids:
        for orphan in orphan_fixtures(library, [builtin_patterns(), *extra]):
            failed += 1
            lines.append(f"✗ {orphan}: fixture without a pattern (add {orphan.with_suffix('.yaml').name})")
    lines.append(f"{len(lines) and sum(1 for ln in lines if ln.startswith('✓'))} passed, {failed} failed")
    print_lines(lines)
    return failed == 0


def schema_json(catalogue: bool = False) -> str:
    """The JSON Schema of pattern files, or of catalogues (patterns/catalogue.schema.json)."""
    schema = (Catalogue if catalogue else Pattern).model_json_schema()
    module = "catalogue.py" if catalogue else "schema.py"
    flag = " --catalogue" if catalogue else ""
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$comment"] = f"Generated from analyzer/library/{module} by `triage patterns schema{flag}`; do not edit."
    return json.dumps(schema, indent=2) + "\n"


def write_schema(out: Path | None, catalogue: bool = False) -> None:
    text = schema_json(catalogue)
    if out is None:
        print_raw(text)
    else:
        out.write_text(text)


def export_patterns(extra: Sequence[Path], fmt: ExportFormat, out: Path, lucene: bool = False) -> list[str]:
    """Write the library as rules of `fmt` (Sigma) under `out`; print and return the summary."""
    from analyzer.library.sigma import export_sigma, summary

    lines = summary(export_sigma(_library(extra), out, lucene=lucene))
    print_lines(lines)
    return lines


def lint_patterns(extra: Sequence[Path]) -> bool:
    from analyzer.authoring.pattern_lint import lint_library

    problems = lint_library([builtin_patterns(), *extra], benign_logs())
    print_lines([str(p) for p in problems] + [f"{len(problems)} problems"])
    return not problems


def show_pattern(extra: Sequence[Path], pattern_id: str, fmt: Format) -> None:
    library = _library(extra)
    try:
        pf = library.get(pattern_id)
    except KeyError:
        raise PatternError(f"unknown pattern id: {pattern_id}") from None
    p = pf.pattern
    if fmt is Format.json:
        print_raw(p.model_dump_json(indent=2) + "\n")
        return
    lines = [f"{p.title}", f"id {p.id} · {p.area} · {p.severity.value} · confidence {p.confidence.value} "
             f"· {p.status.value}", f"file {pf.path}", "", p.description.strip(), "", "Why: " + p.why.strip(), "",
             "Match (" + ("any" if p.match.any else "all") + f", scope {p.match.scope.value}):"]
    lines += [f"  {e.regex}" + (f"   [trigger: {e.trigger}]" if e.trigger else "") for e in p.match.expressions]
    lines += ["", "Fix:"] + [f"  {i}. {s}" for i, s in enumerate(p.fix_texts, 1)]
    lines += (["", "Avoid:"] + [f"  - {a}" for a in p.avoid]) if p.avoid else []
    if pf.fixture.exists():
        fixture = fixture_of(pf)
        lines += ["", f"Fixture examples ({pf.fixture.name}):"]
        lines += [f"  {a.expect.value:<10} {a.text[:150]}" for a in fixture.annotations[:8]]
    lines += ["", "Source: " + p.source] + [f"Reference: {r}" for r in p.references]
    print_lines(lines)


def stats_patterns(extra: Sequence[Path], fmt: Format) -> None:
    from analyzer.authoring.pattern_stats import pattern_stats

    library = _library(extra)
    rows = pattern_stats(library, compile_library(library), corpus_logs(), benign_logs())
    if fmt is Format.json:
        from dataclasses import asdict

        print_raw(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
        return
    out = [f"{'pattern':<48} {'fixture':>8} {'corpus':>7} {'top':>4} {'benign':>7}"]
    out += [f"{r.id:<48} {r.fixture_matched:>4}/{r.fixture_lines:<3} {r.corpus_logs:>7} {r.corpus_top:>4} "
            f"{r.benign_hits:>7}" for r in rows]
    out.append(f"{len(rows)} patterns; fired on {sum(r.corpus_logs > 0 for r in rows)} corpus-covering patterns; "
               f"{sum(r.benign_hits for r in rows)} benign hits")
    print_lines(out)


def new_pattern(pattern_id: str, area: str, source: str, root: Path | None) -> list[str]:
    """Draft into `root`, else into the patterns/ of the checkout the current folder lies in
    (never into an installed package); print the files written and the next steps."""
    from analyzer.authoring.pattern_draft import draft_pattern, write_draft

    target = root if root is not None else checkout_patterns(Path("."))
    if target is None:
        raise PatternError("not in a checkout of triage (no patterns/schema.json or pyproject.toml of the project "
                           "here or above): give the pattern folder to write into with --out DIR")
    draft = draft_pattern(pattern_id, area, source, target)
    write_draft(draft)
    if root is not None:  # the same folder for test and lint, an extra one beside the library
        check = f"triage patterns test --patterns {root} {pattern_id} && triage patterns lint --patterns {root}"
    elif target.resolve() == builtin_patterns().resolve():
        check = f"triage patterns test {pattern_id} && triage patterns lint"
    else:  # a checkout other than the library this triage reads: run the checkout's own code
        check = (f"cd {target.parent} && python -m analyzer patterns test {pattern_id} && "
                 "python -m analyzer patterns lint")
    steps = [f"wrote {draft.yaml_path}", f"wrote {draft.log_path}", "next:",
             "  1. replace every TODO in the pattern; name the upstream source and references",
             "  2. replace the `# ok` placeholder with a real near miss; add more real `# match` lines",
             f"  3. {check}",
             "  4. add a CHANGELOG line and open a pull request"]
    print_lines(steps)
    return steps
