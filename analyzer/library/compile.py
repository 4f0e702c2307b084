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
from analyzer.library.load import Library, PatternFile, PatternHead, trigger_of
from analyzer.library.rules import RuleBook
from analyzer.library.schema import Mark, Pattern
from analyzer.scan import STRUCTURAL, Engine, EngineFactory, Trigger, default_engine, fact_key, hyperscan_source

MATCH_TIMEOUT_S = 0.5  # one slow pattern on one event must not hang a run


@dataclass(slots=True)
class CompiledPattern:
    file: PatternFile
    _regexes: tuple[regex.Pattern[str], ...] | None = None

    @property
    def id(self) -> str:
        return self.file.head.id

    @property
    def head(self) -> PatternHead:
        return self.file.head

    @property
    def pattern(self) -> Pattern:
        """The whole validated pattern (unpickled on first use when it came from the cache)."""
        return self.file.pattern

    @property
    def compiled(self) -> bool:
        """Whether the regexes are compiled yet (they are on first use once a stamp proved them)."""
        return self._regexes is not None

    @property
    def regexes(self) -> tuple[regex.Pattern[str], ...]:
        if self._regexes is None:
            flags = _flags(self.head.ignorecase)
            self._regexes = tuple(regex.compile(r, flags) for r in self.head.regexes)
        return self._regexes


def _flags(ignorecase: bool) -> int:
    return int(regex.MULTILINE | (regex.IGNORECASE if ignorecase else 0))


def compile_pattern(pf: PatternFile) -> CompiledPattern:
    """Compile every expression and trigger now: a file:line error for one that fails."""
    p = pf.pattern
    flags = _flags(p.match.ignorecase)
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
    return CompiledPattern(pf, tuple(compiled))


def _stamp(library: Library) -> Path:
    """Keyed by the expressions, or by the library's content key when it has one (the files'
    bytes and the code that reads them fix every expression)."""
    h = hashlib.sha256(regex.__version__.encode())
    if library.key is not None:
        h.update(f"\0library\0{library.key}".encode())
    else:
        for pf in library.files:
            for rx, trigger in zip(pf.head.regexes, pf.head.triggers, strict=True):
                h.update(f"\0{pf.head.ignorecase}\0{rx}\0{trigger}".encode())
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
        return self.patterns[pattern_id].head.is_signal

    def mark(self, pattern_id: str) -> Mark | None:
        """What a lifecycle signal marks on the timeline (`marks:` in its file); None otherwise."""
        cp = self.patterns.get(pattern_id)
        return Mark(cp.head.marks) if cp is not None and cp.head.marks is not None else None

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
            cp = CompiledPattern(pf) if proven else compile_pattern(pf)
        except PatternError as exc:
            errors.append(exc)
            continue
        patterns[cp.id] = cp
        ignorecase = pf.head.ignorecase
        triggers.extend(Trigger(cp.id, t, ignorecase) for t in pf.head.triggers)
    if errors:
        from analyzer.errors import PatternErrors

        raise PatternErrors(errors)
    if not proven and write_atomic(stamp, b""):
        prune(stamp.parent, keep=32)
    return CompiledLibrary(patterns, tuple(triggers), engine_factory or default_engine(), rulebook,
                           {name: [regex.compile(r, regex.MULTILINE) for r in d.regexes]
                            for name, d in rulebook.facts.items()})
