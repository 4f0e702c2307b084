"""Catalogues: a closed error set as one data file, expanded by the loader into patterns with
the same schema, fixtures and lint as hand-written ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.authoring.fixture_runs import run_fixture
from analyzer.authoring.pattern_lint import lint_library
from analyzer.errors import PatternErrors
from analyzer.library.compile import compile_library
from analyzer.library.fixture_file import fixture_of
from analyzer.library.load import load_library

CATALOGUE = """\
catalogue: demo-errors
title: Demo emitter's closed error set
area: gpu
emitter: demo_strerror()
source: https://example.org/demo.h (enum demoError)
id: "demo-error-{key}"
title_template: "Demo error {number} ({name}): {summary}"
expressions:
  - 'demo error: {string}(?![\\w ])'
  - '\\b{name}\\b'
tags: [demo]
why: The demo program stops; whatever called it fails with it.
severity: high
entries:
  - key: out-of-slots
    name: demoErrorOutOfSlots
    number: 2
    string: out of slots
    summary: every slot is taken
    meaning: The demo program ran out of slots, because too many clients held one at once.
    fix: ["Raise `slots=` in demo.conf or stop clients that hold slots."]
  - key: out-of-slots-forever
    name: demoErrorOutOfSlotsForever
    number: 3
    string: out of slots forever
    summary: slots are gone for good
    meaning: The demo program lost its slot table and cannot hand out slots until it restarts.
    fix: ["Restart the demo service."]
    severity: critical
  - key: disk
    name: demoErrorDisk
    number: 4
    string: disk full
    summary: the disk is full
    meaning: A hand-written pattern already recognises this value; the catalogue only says so.
    covered_by: host-oom-killed-service
"""

FIXTURE = """\
# source: format string of demo_strerror() (lines built from it)
# match demo-error-out-of-slots
RuntimeError: demo error: out of slots
# match demo-error-out-of-slots-forever
RuntimeError: demo error: out of slots forever
# match demo-error-out-of-slots-forever
status=demoErrorOutOfSlotsForever
# ok
demo error: out of patience
"""


def write(root: Path, catalogue: str = CATALOGUE, fixture: str = FIXTURE) -> Path:
    folder = root / "catalogues"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "demo-errors.yaml").write_text(catalogue)
    (folder / "demo-errors.log").write_text(fixture)
    host = root / "host"  # the pattern the covered entry names
    host.mkdir(exist_ok=True)
    src = Path(__file__).resolve().parents[1] / "patterns" / "host"
    for suffix in (".yaml", ".log"):
        (host / f"host-oom-killed-service{suffix}").write_text((src / f"host-oom-killed-service{suffix}").read_text())
    return root


def test_a_catalogue_expands_into_patterns_and_runs_its_shared_fixture(tmp_path: Path) -> None:
    library = load_library([write(tmp_path)])
    expanded = [pf for pf in library.files if pf.catalogue == "demo-errors"]
    assert [pf.pattern.id for pf in expanded] == ["demo-error-out-of-slots", "demo-error-out-of-slots-forever"]
    top = expanded[1].pattern
    assert top.title == "Demo error 3 (demoErrorOutOfSlotsForever): slots are gone for good"
    assert top.severity.value == "critical" and top.area == "gpu" and "demo-errors" in top.tags
    assert top.source == "demo_strerror() (https://example.org/demo.h (enum demoError))"
    compiled = compile_library(library)
    for pf in expanded:  # the longer string does not make the shorter one fire, and the other way round
        outcomes = run_fixture(pf, fixture_of(pf), compiled)
        assert outcomes and all(o.passed for o in outcomes), [(o.annotation.text, o.detail) for o in outcomes]
    assert len(fixture_of(expanded[0]).annotations) == 2  # its own `# match` and the shared `# ok`


def test_a_library_with_a_catalogue_is_cached_and_read_back(tmp_path: Path) -> None:
    root = write(tmp_path)
    first = load_library([root])
    again = load_library([root])  # from the cache
    assert [(f.pattern.id, f.catalogue, f.path) for f in again.files] == \
        [(f.pattern.id, f.catalogue, f.path) for f in first.files]


def test_a_covered_entry_lends_its_name_to_the_pattern_that_covers_it(tmp_path: Path) -> None:
    """An entry left to a hand-written pattern is recognised by its symbolic name too (the
    catalogue's `\\b{name}\\b`): the covering pattern takes that form after its own. Its printed
    string is not lent: which lines with those words are that failure is the pattern's choice."""
    library = load_library([write(tmp_path)])
    covering = next(pf.pattern for pf in library.files if pf.pattern.id == "host-oom-killed-service")
    own = load_library([write(tmp_path / "plain", CATALOGUE.replace("  - '\\b{name}\\b'\n", ""))])
    before = next(pf.pattern for pf in own.files if pf.pattern.id == "host-oom-killed-service")
    added = [e.regex for e in covering.match.any[len(before.match.any):]]
    assert added == ["\\bdemoErrorDisk\\b"], added
    compiled = compile_library(library)
    rx = compiled.patterns["host-oom-killed-service"].regexes
    assert any(r.search("status=demoErrorDisk") for r in rx)
    assert not any(r.search("demo error: disk full") for r in rx)


def test_an_entry_cannot_be_left_to_a_pattern_that_needs_all_its_expressions(tmp_path: Path) -> None:
    root = write(tmp_path)
    host = root / "host" / "host-oom-killed-service.yaml"
    text = host.read_text()
    assert "\n  any:\n" in text
    host.write_text(text.replace("\n  any:\n", "\n  all:\n", 1))
    with pytest.raises(PatternErrors) as err:
        load_library([root])
    assert ("entry 'disk': covered_by names 'host-oom-killed-service', which needs all of its expressions"
            in str(err.value))


@pytest.mark.parametrize(("change", "message"), [
    (("covered_by: host-oom-killed-service", "covered_by: no-such-pattern"),
     "entry 'disk': covered_by names an unknown pattern 'no-such-pattern'"),
    (("catalogue: demo-errors", "catalogue: other"), "differs from the file name"),
    (("    fix: [\"Restart the demo service.\"]\n", ""), "needs at least one fix step"),
    (("key: disk", "key: out-of-slots"), "entry key 'out-of-slots' appears twice"),
    (("    severity: critical\n", "    severity: critical\n    uses: [no-such-set]\n"),
     "entry 'out-of-slots-forever' uses 'no-such-set', which is not among expression_sets"),
])
def test_a_broken_catalogue_is_refused_with_its_file(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(PatternErrors) as err:
        load_library([write(tmp_path, CATALOGUE.replace(*change))])
    assert message in str(err.value) and "demo-errors.yaml" in str(err.value.path)


def test_lint_wants_every_catalogue_match_to_name_its_pattern(tmp_path: Path) -> None:
    fixture = FIXTURE.replace("# match demo-error-out-of-slots\n", "# match\n", 1)
    problems = lint_library([write(tmp_path, fixture=fixture)])
    assert any("a catalogue's `# match` names no pattern" in p.message for p in problems), problems
    fixture = FIXTURE.replace("# match demo-error-out-of-slots\n", "# match demo-error-typo\n", 1)
    problems = lint_library([write(tmp_path, fixture=fixture)])
    messages = [p.message for p in problems]
    assert "`demo-error-typo` is not a pattern of this file" in messages
    assert "fixture has no `# match` line for demo-error-out-of-slots" in messages


def test_an_entry_may_refine_or_overlap_a_hand_written_pattern(tmp_path: Path) -> None:
    """An entry more specific than a hand-written pattern on the same lines ranks above it
    (`refines:`); one meant to fire beside it says so (`overlaps:`); both on the entry only."""
    catalogue = CATALOGUE.replace(
        "    severity: critical\n",
        "    severity: critical\n    refines: [host-oom-killed-service]\n    overlaps: [host-oom-killed-service]\n")
    library = load_library([write(tmp_path, catalogue)])
    by_id = {pf.pattern.id: pf.pattern for pf in library.files}
    assert by_id["demo-error-out-of-slots-forever"].refines == ["host-oom-killed-service"]
    assert by_id["demo-error-out-of-slots-forever"].overlaps == ["host-oom-killed-service"]
    assert by_id["demo-error-out-of-slots"].refines == [] and by_id["demo-error-out-of-slots"].overlaps == []
    with pytest.raises(PatternErrors) as err:
        load_library([write(tmp_path / "typo", catalogue.replace("refines: [host-oom", "refines: [no-such-oom"))])
    assert "no-such-oom-killed-service" in str(err.value)


def test_an_entry_adds_its_own_forms_after_the_catalogue_expressions(tmp_path: Path) -> None:
    """`extra_expressions:` keeps the catalogue's templates and adds the entry's own forms after
    them; `expressions:` replaces the catalogue's; a template given twice is compiled once."""
    catalogue = CATALOGUE.replace(
        "    severity: critical\n",
        "    severity: critical\n    extra_expressions: ['slot table lost \\(code {number}\\)', '\\b{name}\\b']\n", 1)
    catalogue = catalogue.replace(
        "    fix: [\"Raise `slots=` in demo.conf or stop clients that hold slots.\"]\n",
        "    fix: [\"Raise `slots=` in demo.conf or stop clients that hold slots.\"]\n"
        "    expressions: ['demo error: {string}$']\n    extra_expressions: ['no free slot \\({number}\\)']\n", 1)
    fixture = FIXTURE + "# match demo-error-out-of-slots-forever\nslot table lost (code 3)\n" \
        "# match demo-error-out-of-slots\nno free slot (2)\n# ok\nstatus=demoErrorOutOfSlots\n"
    library = load_library([write(tmp_path, catalogue, fixture)])
    by_id = {pf.pattern.id: pf for pf in library.files if pf.catalogue == "demo-errors"}
    assert [e.regex for e in by_id["demo-error-out-of-slots-forever"].pattern.match.any] == [
        "demo error: out of slots forever(?![\\w ])", "\\bdemoErrorOutOfSlotsForever\\b",
        "slot table lost \\(code 3\\)"]
    assert [e.regex for e in by_id["demo-error-out-of-slots"].pattern.match.any] == [
        "demo error: out of slots$", "no free slot \\(2\\)"]
    compiled = compile_library(library)
    for pf in by_id.values():
        outcomes = run_fixture(pf, fixture_of(pf), compiled)
        assert outcomes and all(o.passed for o in outcomes), [(o.annotation.text, o.detail) for o in outcomes]


def test_entries_opt_into_a_named_expression_set(tmp_path: Path) -> None:
    """`expression_sets:` holds a form once for the entries that fit it; an entry's `uses:` adds
    that set's templates after the catalogue's expressions and before its own extra forms, and an
    entry that does not use it is not matched by it."""
    catalogue = CATALOGUE.replace(
        "tags: [demo]\n", "expression_sets:\n  alone: ['^{string}$']\ntags: [demo]\n", 1).replace(
        "    severity: critical\n",
        "    severity: critical\n    uses: [alone]\n    extra_expressions: ['slots lost \\({number}\\)']\n", 1)
    fixture = FIXTURE + "# match demo-error-out-of-slots-forever\nout of slots forever\n# ok\nout of slots\n"
    library = load_library([write(tmp_path, catalogue, fixture)])
    by_id = {pf.pattern.id: pf for pf in library.files if pf.catalogue == "demo-errors"}
    assert [e.regex for e in by_id["demo-error-out-of-slots-forever"].pattern.match.any] == [
        "demo error: out of slots forever(?![\\w ])", "\\bdemoErrorOutOfSlotsForever\\b",
        "^out of slots forever$", "slots lost \\(3\\)"]
    assert len(by_id["demo-error-out-of-slots"].pattern.match.any) == 2
    compiled = compile_library(library)
    for pf in by_id.values():
        outcomes = run_fixture(pf, fixture_of(pf), compiled)
        assert outcomes and all(o.passed for o in outcomes), [(o.annotation.text, o.detail) for o in outcomes]
