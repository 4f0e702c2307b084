"""What the `triage patterns …` commands do, as library functions returning plain data;
printing goes through analyzer.render."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from analyzer.data import builtin_patterns
from analyzer.errors import PatternError
from analyzer.library.compile import compile_library
from analyzer.library.fixtures import Outcome, parse_fixture, run_fixture
from analyzer.library.load import Library, load_library
from analyzer.library.schema import Pattern
from analyzer.render import Format, print_lines


def _library(extra: Sequence[Path]) -> Library:
    return load_library([builtin_patterns(), *extra])


def list_patterns(extra: Sequence[Path], area: str | None, fmt: Format) -> None:
    rows = [pf.pattern for pf in _library(extra).files if area is None or pf.pattern.area == area]
    if fmt is Format.json:
        print(json.dumps([{"id": p.id, "title": p.title, "area": p.area, "severity": p.severity.value,
                           "status": p.status.value} for p in rows], indent=2))
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
            results[pf.pattern.id] = run_fixture(pf, parse_fixture(pf.fixture), compiled)
        except PatternError as exc:
            results[pf.pattern.id] = exc
    return results


def orphan_fixtures(library: Library, roots: Sequence[Path]) -> list[Path]:
    known = {pf.fixture for pf in library.files}
    return sorted(p for root in roots for p in root.rglob("*.log") if p not in known)


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
        failed += bool(bad)
        mark = "✗" if bad else "✓"
        lines.append(f"{mark} {pid} ({len(result)} annotated lines)")
        path = library.get(pid).fixture
        lines += [f"    {path}:{o.annotation.fixture_line}: {o.annotation.expect.value}: {o.detail}"
                  for o in result if o.detail]
    if not ids:
        for orphan in orphan_fixtures(library, [builtin_patterns(), *extra]):
            failed += 1
            lines.append(f"✗ {orphan}: fixture without a pattern (add {orphan.with_suffix('.yaml').name})")
    lines.append(f"{len(lines) and sum(1 for ln in lines if ln.startswith('✓'))} passed, {failed} failed")
    print_lines(lines)
    return failed == 0


def schema_json() -> str:
    schema = Pattern.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$comment"] = "Generated from analyzer/library/schema.py by `triage patterns schema`; do not edit."
    return json.dumps(schema, indent=2) + "\n"


def write_schema(out: Path | None) -> None:
    text = schema_json()
    if out is None:
        print(text, end="")
    else:
        out.write_text(text)
