"""`triage patterns lint`: every problem of the library at once, each with file:line, the
reason and a help line saying what to add.

Each check is a small class with its name and description beside it (pySigma's
validators); adding a check means adding a class to CHECKS.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import regex

from analyzer.choices import InputForm
from analyzer.errors import PatternError, PatternErrors
from analyzer.library.compile import CompiledLibrary, compile_library, compile_pattern
from analyzer.library.fixture_file import Expect, Fixture, fixture_of, parse_fixture
from analyzer.library.load import Library, PatternFile, load_library, load_pattern, pattern_paths, trigger_of
from analyzer.library.yamlfile import load_yaml, read_text
from analyzer.scan import HyperscanEngine, Trigger, hyperscan_available

ADVERSARIAL_LENGTH = 4000
SLOW_SECONDS = 0.05
KNOWN_FALSE_POSITIVES = "known-false-positives.yaml"
TRIGGER_WASTE_LINES = 10  # benign lines a trigger may hit while its own regex refuses them


@dataclass(frozen=True, slots=True)
class Problem:
    check: str
    path: Path
    line: int | None
    message: str
    help: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        text = f"{where}: [{self.check}] {self.message}"
        return f"{text}\n    help: {self.help}" if self.help else text


@dataclass
class Context:
    """What the checks look at: the loaded library, its fixtures, the benign logs."""

    library: Library
    compiled: CompiledLibrary | None
    fixtures: dict[str, Fixture] = field(default_factory=dict)
    benign: Sequence[Path] = ()
    known_false_positives: dict[str, set[str]] = field(default_factory=dict)  # pattern → benign file names


class Check(Protocol):
    name: str
    description: str

    def run(self, ctx: Context) -> Iterable[Problem]: ...


class Compiles:
    name = "compiles"
    description = "every match expression and trigger compiles in the `regex` module and in hyperscan"

    def run(self, ctx: Context) -> Iterator[Problem]:
        for pf in ctx.library.files:
            try:
                compile_pattern(pf)
            except PatternError as exc:
                yield Problem(self.name, pf.path, exc.line, exc.message, exc.help or "")
            if not hyperscan_available():
                continue
            for i, expr in enumerate(pf.pattern.match.expressions):
                try:
                    HyperscanEngine([Trigger(pf.pattern.id, trigger_of(expr))], InputForm.console)
                except PatternError:
                    yield Problem(self.name, pf.path, _line_of_regex(pf, i),
                                  f"hyperscan cannot compile the trigger of expression {i + 1}",
                                  "add `trigger:` with a simpler expression (no lookarounds or backreferences)")


_NESTED = re.compile(r"\((?:\?:)?(?P<body>[^()]*(?:[+*]|\{\d+,\})[^()]*)\)(?:[+*]|\{\d+,\})")
# a group that starts with a fixed character (`(?:\.\d+)+`, `(?:, '[^']+')*`) cannot match in two ways
_ANCHORED_BODY = re.compile(r"(?:\\[^wsdWSDbB]|[^\\\[.(])(?![+*?{])")


def nested_quantifiers(expr: str) -> bool:
    return any(not _ANCHORED_BODY.match(m["body"]) for m in _NESTED.finditer(expr))


def adversarial_inputs(expr: str) -> list[str]:
    """Strings that make backtracking engines explode on a bad regex: long runs of the
    characters the regex talks about, ended by a character that makes the match fail."""
    runs = ["a", " ", "0", "a ", "\t", "/", ":", "x", "-", "."]
    literal = re.sub(r"\\.|[()\[\]{}?*+|^$.]", "", expr)[:12]
    if literal:
        runs.append(literal)
    inputs = [r * (ADVERSARIAL_LENGTH // len(r)) + tail for r in runs for tail in ("!", "\n!", "")]
    # a few occurrences of a needed character spread over a long run: polynomial blow-ups like (.*a){12}
    for needed in sorted(set(literal))[:6]:
        inputs.append(("x" * (ADVERSARIAL_LENGTH // 12) + needed) * 11)
    return inputs


def is_slow(rx: regex.Pattern[str], inputs: Sequence[str]) -> bool:
    """Slow on some input in each of three tries: a busy machine delays one try, not three
    (catastrophic backtracking is slow every time)."""
    return all(any(_slow_once(rx, text) for text in inputs) for _ in range(3))


def _slow_once(rx: regex.Pattern[str], text: str) -> bool:
    start = time.perf_counter()
    try:
        rx.search(text, timeout=SLOW_SECONDS * 4)
    except TimeoutError:
        return True
    return time.perf_counter() - start > SLOW_SECONDS


class Backtracking:
    name = "backtracking"
    description = ("no catastrophic backtracking: nested quantifiers are flagged and every regex is timed "
                   "on adversarial input")

    def run(self, ctx: Context) -> Iterator[Problem]:
        for pf in ctx.library.files:
            for i, expr in enumerate(pf.pattern.match.expressions):
                try:
                    rx = regex.compile(expr.regex, regex.MULTILINE)
                except regex.error:
                    continue  # reported by Compiles
                if is_slow(rx, adversarial_inputs(expr.regex)):
                    yield Problem(self.name, pf.path, _line_of_regex(pf, i),
                                  f"expression {i + 1} backtracks catastrophically on adversarial input",
                                  "remove nested quantifiers over overlapping classes, e.g. (\\w+\\s?)* → [\\w\\s]*")
                elif nested_quantifiers(expr.regex):
                    yield Problem(self.name, pf.path, _line_of_regex(pf, i),
                                  f"expression {i + 1} nests quantifiers (fast today, fragile tomorrow)",
                                  "rewrite the group so that its content cannot match in two ways")


class Fixtures:
    name = "fixtures"
    description = "each pattern has a fixture with a source, a must-match line and a must-not-match near miss"

    def run(self, ctx: Context) -> Iterator[Problem]:
        for pf in ctx.library.files:
            fixture = ctx.fixtures.get(pf.pattern.id)
            if fixture is None:
                continue  # a missing or broken fixture is reported by lint_library
            if not any(a.expect is Expect.ok for a in fixture.annotations):
                yield Problem(self.name, pf.fixture, 1, "fixture has no `# ok` near miss",
                              "add a real line with the same words in a harmless context, marked `# ok`")
            if not any(a.expect is Expect.match for a in fixture.annotations):
                yield Problem(self.name, pf.fixture, 1, f"fixture has no `# match` line for {pf.pattern.id}",
                              f"add a real line it must recognise, marked `# match {pf.pattern.id}`")
        ids = {pf.pattern.id for pf in ctx.library.files}
        for pf in {pf.fixture: pf for pf in ctx.library.files}.values():  # a word after `# ok` is a target:
            if pf.pattern.id not in ctx.fixtures:                       # a wrong one would skip the line
                continue  # a missing or broken fixture is reported by lint_library
            for a in parse_fixture(pf.fixture).annotations:
                if pf.catalogue and a.expect is Expect.match and a.target is None:
                    yield Problem(self.name, pf.fixture, a.fixture_line, "a catalogue's `# match` names no pattern",
                                  "write `# match <pattern-id>`: the fixture is shared by the catalogue's patterns")
                elif a.target is not None and a.target not in (ids if pf.catalogue else {pf.pattern.id}):
                    yield Problem(self.name, pf.fixture, a.fixture_line, f"`{a.target}` is not a pattern of this file",
                                  "name the pattern the line belongs to, or put a comment in parentheses")


class Overlap:
    name = "overlap"
    description = "no must-match line of one pattern is claimed by another pattern of the same area (lnav's check)"

    def run(self, ctx: Context) -> Iterator[Problem]:
        if ctx.compiled is None:
            return
        by_id = {pf.pattern.id: pf for pf in ctx.library.files}
        for pid, fixture in ctx.fixtures.items():
            owner = by_id[pid]
            texts = [a.text for a in fixture.annotations if a.expect is Expect.match]
            for a in fixture.annotations:
                if a.expect is not Expect.match:
                    continue
                for other, cp in ctx.compiled.patterns.items():
                    if other == pid or cp.pattern.area != owner.pattern.area:
                        continue
                    if cp.pattern.match.all and not all(any(rx.search(t) for t in texts) for rx in cp.regexes):
                        continue  # an `all:` pattern claims nothing where its other lines are absent
                    meant = {*owner.pattern.overlaps, *owner.pattern.refines}
                    if other in meant or pid in cp.pattern.overlaps or pid in cp.pattern.refines:
                        continue  # declared: both fire (a symptom and its cause, or a refinement)
                    if any(rx.search(a.text) for rx in cp.regexes):
                        yield Problem(self.name, fixture.path, a.fixture_line,
                                      f"this must-match line of {pid} is also claimed by {other}",
                                      f"narrow one of the two regexes, or list `{other}` under `overlaps:` (or "
                                      f"`refines:` when {pid} is the more specific) in {pid}.yaml when both are "
                                      "meant to fire")


class BenignSilence:
    name = "benign"
    description = "no pattern fires on the benign logs unless listed in patterns/known-false-positives.yaml"

    def run(self, ctx: Context) -> Iterator[Problem]:
        if ctx.compiled is None:
            return
        from analyzer.readers.source import open_source
        from analyzer.run import read_one

        for log in ctx.benign:
            for m in read_one(ctx.compiled, open_source(str(log))).matches:
                if log.name in ctx.known_false_positives.get(m.pattern_id, set()):
                    continue
                pf = ctx.library.get(m.pattern_id)
                yield Problem(self.name, pf.path, None,
                              f"fires on benign log {log}:{m.records[0].line}: {m.records[0].message[:120]!r}",
                              "make the regex specific to the failure, or list the file under this pattern "
                              f"in patterns/{KNOWN_FALSE_POSITIVES} with a reason")


class TriggerBreadth:
    name = "trigger"
    description = (f"no phase-1 trigger hits more than {TRIGGER_WASTE_LINES} lines of the benign logs that its own "
                   "regex then refuses (each such line is parsed and matched again on every run)")

    def run(self, ctx: Context) -> Iterator[Problem]:
        if ctx.compiled is None:
            return
        compiled = ctx.compiled
        owners: list[tuple[str, int] | None] = []  # trigger index → (pattern id, expression index)
        counts: dict[str, int] = {}
        for t in compiled.triggers:
            if t.key in compiled.patterns:  # a pattern's triggers come in its expressions' order
                counts[t.key] = counts.get(t.key, 0) + 1
                owners.append((t.key, counts[t.key] - 1))
            else:
                owners.append(None)  # a structural or fact trigger
        refused: dict[tuple[str, int], list[str]] = {}
        for log in ctx.benign:
            messages, hits = _benign_hits(compiled, log)
            for line, idx in sorted(hits):
                owner = owners[idx]
                if owner is None:
                    continue
                pid, j = owner
                message = messages.get(line, "")
                if not compiled.patterns[pid].regexes[j].search(message):
                    refused.setdefault(owner, []).append(f"{log.name}:{line}")
        for (pid, j), where in sorted(refused.items()):
            if len(where) <= TRIGGER_WASTE_LINES:
                continue
            pf = ctx.library.get(pid)
            yield Problem(self.name, pf.path, _line_of_regex(pf, j),
                          f"trigger {trigger_of(pf.pattern.match.expressions[j])!r} hits {len(where)} benign lines "
                          f"its regex refuses (first: {', '.join(where[:3])})",
                          "give the expression a `trigger:` that names the message's own words, not a fragment "
                          "common to healthy logs")


def _benign_hits(compiled: CompiledLibrary, log: Path) -> tuple[dict[int, str], set[tuple[int, int]]]:
    """A benign log's message on each line, and the (line, trigger index) pairs phase 1 finds in it."""
    from analyzer.readers import parse_lines
    from analyzer.readers.source import open_source

    source = open_source(str(log))
    try:
        buf = b"".join(source.chunks())
    finally:
        source.close()
    messages: dict[int, str] = {}
    for record in parse_lines(buf.split(b"\n"), source.form, 1, str(log)):
        for line in range(record.line, record.end_line + 1):
            messages[line] = record.message
    hits = {(buf.count(b"\n", 0, max(end - 1, 0)) + 1, idx) for end, idx in compiled.engine(source.form).scan(buf)}
    return messages, hits


class Finished:
    name = "unfinished"
    description = "no draft placeholder is left: a TODO in the pattern, the `# ok` placeholder in its fixture"

    def run(self, ctx: Context) -> Iterator[Problem]:
        from analyzer.authoring.pattern_draft import unfinished

        for pf in ctx.library.files:
            for path, line, message in unfinished(pf):
                yield Problem(self.name, path, line, message, "finish the draft before it can land")


CHECKS: tuple[Check, ...] = (Compiles(), Backtracking(), Fixtures(), Overlap(), BenignSilence(), TriggerBreadth(),
                             Finished())


def _line_of_regex(pf: PatternFile, index: int) -> int | None:
    _data, lines = load_yaml(read_text(pf.path), pf.path)
    key = "any" if pf.pattern.match.any else "all"
    return lines.get(("match", key, index, "regex")) or lines.get(("match", key, index))


def _load_all(roots: Sequence[Path]) -> tuple[Library, list[Problem]]:
    """Like load_library, but keeps the good patterns and turns the rest into problems."""
    problems: list[Problem] = []
    try:
        return load_library(roots), problems
    except PatternErrors as errs:
        problems += [Problem("schema", Path(e.path or "?"), e.line, e.message, e.help or "") for e in errs.errors]
    good = []
    for path in pattern_paths(roots):
        try:
            good.append(PatternFile(load_pattern(path), path))
        except PatternError:
            continue
    first = {pf.pattern.id: pf for pf in reversed(good)}  # the first file of a duplicated id wins
    return Library(tuple(pf for pf in good if first[pf.pattern.id] is pf)), problems


def known_false_positives(roots: Sequence[Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for root in roots:
        path = root / KNOWN_FALSE_POSITIVES
        if path.exists():
            data, _ = load_yaml(read_text(path), path)
            for pid, entries in (data or {}).items():
                out.setdefault(pid, set()).update(e["file"] for e in entries or [])
    return out


def lint_library(roots: Sequence[Path], benign: Sequence[Path] = (),
                 checks: Sequence[Check] = CHECKS) -> list[Problem]:
    library, problems = _load_all(roots)
    fixtures: dict[str, Fixture] = {}
    for pf in library.files:
        if not pf.fixture.exists():
            problems.append(Problem("fixtures", pf.path, None, "pattern has no fixture",
                                    f"add {pf.fixture.name} with real log lines marked `# match` and `# ok`"))
            continue
        try:
            fixtures[pf.pattern.id] = fixture_of(pf)
        except PatternError as exc:
            problems.append(Problem("fixtures", pf.fixture, exc.line, exc.message, exc.help or ""))
    try:
        compiled: CompiledLibrary | None = compile_library(library)
    except PatternError:
        compiled = None  # each refusal is reported by Compiles
    ctx = Context(library, compiled, fixtures, benign, known_false_positives(roots))
    for check in checks:
        problems.extend(check.run(ctx))
    return problems
