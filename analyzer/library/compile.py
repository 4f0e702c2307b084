"""Compile a Library for both phases: triggers for the multi-pattern engine, and the full
`regex` expressions (named groups, lookarounds) for phase 2."""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

from analyzer.errors import PatternError
from analyzer.library.load import Library, PatternFile
from analyzer.library.rules import RuleBook
from analyzer.library.schema import Expression, Pattern, Role
from analyzer.models import InputForm
from analyzer.scan import STRUCTURAL, Engine, EngineFactory, Trigger, default_engine, hyperscan_source

MATCH_TIMEOUT_S = 0.5  # one slow pattern on one event must not hang a run


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    pattern: Pattern
    regexes: tuple[regex.Pattern[str], ...]

    @property
    def id(self) -> str:
        return self.pattern.id


def trigger_of(expr: Expression) -> str:
    return expr.trigger if expr.trigger is not None else hyperscan_source(expr.regex)


def compile_pattern(pf: PatternFile) -> CompiledPattern:
    p = pf.pattern
    flags = regex.MULTILINE | (regex.IGNORECASE if p.match.ignorecase else 0)
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

    def engine(self, form: InputForm) -> Engine:
        if form not in self._engines:
            self._engines[form] = self.engine_factory(self.triggers, form)
        return self._engines[form]


def compile_library(library: Library, engine_factory: EngineFactory | None = None,
                    rulebook: RuleBook | None = None) -> CompiledLibrary:
    from analyzer.facts import FACT_KEY, compile_facts

    rulebook = rulebook or RuleBook.empty()
    patterns: dict[str, CompiledPattern] = {}
    triggers: list[Trigger] = list(STRUCTURAL)
    for name, fact in rulebook.facts.items():
        triggers.extend(Trigger(FACT_KEY + name, hyperscan_source(r)) for r in fact.regexes)
    errors: list[PatternError] = []
    for pf in library.files:
        try:
            cp = compile_pattern(pf)
        except PatternError as exc:
            errors.append(exc)
            continue
        patterns[cp.id] = cp
        ignorecase = pf.pattern.match.ignorecase
        triggers.extend(Trigger(cp.id, trigger_of(e), ignorecase) for e in pf.pattern.match.expressions)
    if errors:
        from analyzer.errors import PatternErrors

        raise PatternErrors(errors)
    return CompiledLibrary(patterns, tuple(triggers), engine_factory or default_engine(), rulebook,
                           compile_facts(rulebook.facts))
