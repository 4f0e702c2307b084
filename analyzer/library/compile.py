"""Compile a Library for both phases: triggers for the multi-pattern engine, and the full
`regex` expressions (named groups, lookarounds) for phase 2.

Every expression of a library is compiled once to prove it valid; a stamp in the cache,
keyed by the expressions themselves, records that proof. Later runs of the same library
compile a pattern's expressions only when its trigger fires (a run sees a handful of the
hundreds), which takes about 0.4 s off every start.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import regex

from analyzer.cache import cache_dir, prune, write_atomic
from analyzer.choices import InputForm
from analyzer.errors import PatternError
from analyzer.library.load import Library, PatternFile
from analyzer.library.rules import RuleBook
from analyzer.library.schema import Expression, Mark, Pattern, Role
from analyzer.scan import STRUCTURAL, Engine, EngineFactory, Trigger, default_engine, fact_key, hyperscan_source

MATCH_TIMEOUT_S = 0.5  # one slow pattern on one event must not hang a run


@dataclass(slots=True)
class CompiledPattern:
    pattern: Pattern
    _regexes: tuple[regex.Pattern[str], ...] | None = None

    @property
    def id(self) -> str:
        return self.pattern.id

    @property
    def compiled(self) -> bool:
        """Whether the regexes are compiled yet (they are on first use once a stamp proved them)."""
        return self._regexes is not None

    @property
    def regexes(self) -> tuple[regex.Pattern[str], ...]:
        if self._regexes is None:
            flags = _flags(self.pattern)
            self._regexes = tuple(regex.compile(e.regex, flags) for e in self.pattern.match.expressions)
        return self._regexes


def _flags(p: Pattern) -> int:
    return int(regex.MULTILINE | (regex.IGNORECASE if p.match.ignorecase else 0))


def trigger_of(expr: Expression) -> str:
    return expr.trigger if expr.trigger is not None else hyperscan_source(expr.regex)


def compile_pattern(pf: PatternFile) -> CompiledPattern:
    """Compile every expression and trigger now: a file:line error for one that fails."""
    p = pf.pattern
    flags = _flags(p)
    compiled = []
    for i, expr in enumerate(p.match.expressions):
        try:
            compiled.append(regex.compile(expr.regex, flags))
        except regex.error as exc:
            raise PatternError(f"match expression {i + 1} does not compile: {exc}", pf.path,
                               help="the `regex` module's syntax (PCRE-like) is expected") from exc
        try:
            regex.compile(trigger_of(expr).encode(), flags)
        except regex.error as exc:
            raise PatternError(f"trigger {i + 1} does not compile: {exc}", pf.path) from exc
    return CompiledPattern(p, tuple(compiled))


def _stamp(library: Library) -> Path:
    h = hashlib.sha256(regex.__version__.encode())
    for pf in library.files:
        for e in pf.pattern.match.expressions:
            h.update(f"\0{pf.pattern.match.ignorecase}\0{e.regex}\0{trigger_of(e)}".encode())
    return cache_dir() / "validated" / h.hexdigest()[:32]


@dataclass
class CompiledLibrary:
    patterns: dict[str, CompiledPattern]
    triggers: tuple[Trigger, ...]
    engine_factory: EngineFactory = field(default_factory=default_engine)
    rulebook: RuleBook = field(default_factory=RuleBook.empty)
    fact_regexes: dict[str, list[regex.Pattern[str]]] = field(default_factory=dict)
    _engines: dict[InputForm, Engine] = field(default_factory=dict)

    def is_signal(self, pattern_id: str) -> bool:
        return self.patterns[pattern_id].pattern.role is Role.signal

    def mark(self, pattern_id: str) -> Mark | None:
        """What a lifecycle signal marks on the timeline (`marks:` in its file); None otherwise."""
        cp = self.patterns.get(pattern_id)
        return cp.pattern.marks if cp is not None else None

    def engine(self, form: InputForm) -> Engine:
        if form not in self._engines:
            self._engines[form] = self.engine_factory(self.triggers, form)
        return self._engines[form]


def compile_library(library: Library, engine_factory: EngineFactory | None = None,
                    rulebook: RuleBook | None = None) -> CompiledLibrary:
    rulebook = rulebook or RuleBook.empty()
    patterns: dict[str, CompiledPattern] = {}
    triggers: list[Trigger] = list(STRUCTURAL)
    for name, fact in rulebook.facts.items():
        triggers.extend(Trigger(fact_key(name), hyperscan_source(r)) for r in fact.regexes)
    errors: list[PatternError] = []
    stamp = _stamp(library)
    proven = stamp.exists()
    for pf in library.files:
        try:
            cp = CompiledPattern(pf.pattern) if proven else compile_pattern(pf)
        except PatternError as exc:
            errors.append(exc)
            continue
        patterns[cp.id] = cp
        ignorecase = pf.pattern.match.ignorecase
        triggers.extend(Trigger(cp.id, trigger_of(e), ignorecase) for e in pf.pattern.match.expressions)
    if errors:
        from analyzer.errors import PatternErrors

        raise PatternErrors(errors)
    if not proven and write_atomic(stamp, b""):
        prune(stamp.parent, keep=32)
    return CompiledLibrary(patterns, tuple(triggers), engine_factory or default_engine(), rulebook,
                           {name: [regex.compile(r, regex.MULTILINE) for r in d.regexes]
                            for name, d in rulebook.facts.items()})
