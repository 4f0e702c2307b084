"""A pasted log whose last line was cut short: its message matched as far as it goes.

People copy a log from a terminal or a web page and often stop mid-line, so the line that says
what failed ends early ("... an illegal memory access was encount"). No pattern's full regex
matches it and phase 1 never fires for it, so the line would be reported as an unrecognised
error. For the input's last line only, the `regex` module's partial matching asks which line
patterns would match if the line went on. A regex with a wildcard before its last words would
"match" any long line that way, so the cut must fall in or just after the regex's literal text:
the line ends inside a word of one of its literal runs ("... was encount"; a line that ends
where a word of the run ends may be whole: "... divisible by tensor parallel size" is a complete
assertion that a longer message also begins with), or in one short token after one that holds a
digit or stands inside a quote or bracket the line leaves open (a number or a quoted name cut
short: "architecture 'compute_1"; a whole symbol name after "undefined symbol: " is no cut), and
the run is more than an exception's name ("RuntimeError: " begins every Python error, so one
word after it is no message's start); a line that ends in a full stop, a bracket or a quote
reads as whole. The longest such match wins; the finding says the line was cut and
is one level less confident (analyzer.findings)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import regex

from analyzer.library.compile import MATCH_TIMEOUT_S, CompiledPattern
from analyzer.library.schema import Scope
from analyzer.models import Event, Match

MIN_LINE = 30  # a shorter last line is too little to go on
MIN_CUT_MATCH = 24  # characters of the line the partial match must cover ...
MIN_SHORT_MATCH = 12  # ... or half of a shorter message's literal text, and never fewer than this
MIN_LITERAL = 10  # a literal run of the regex this long must hold the cut
CUT_IN_LITERAL = 6  # the line ends with at least this much of a literal run's start ...
CUT_AFTER_LITERAL = 16  # ... or at most this many characters after a whole literal run

_EXCEPTION_HEAD = regex.compile(r"\s*[\w.]*(?:Error|Exception|Warning)\s*:\s*")
_CLASS_ESCAPES = set("dDwWsSbBAZzGnrtfv0123456789pPxuUNkgXRhHK")
_QUANTIFIERS = set("?*{+")


def literal_runs(source: str) -> list[str]:
    """The runs of plain text a regex requires, as the line would spell them: escapes of
    punctuation undone, classes, groups' headers and optional characters left out."""
    runs: list[str] = []
    run: list[str] = []
    for kind, char in _tokens(source):
        if kind == "literal":
            run.append(char)
            continue
        if kind == "quantifier" and run:
            run.pop()  # the quantified character is optional or repeated
        if run:
            runs.append("".join(run))
            run.clear()
    if run:
        runs.append("".join(run))
    return [r for r in runs if len(r) >= MIN_LITERAL]


def _tokens(source: str) -> Iterator[tuple[str, str]]:
    """A regex as literal characters, quantifiers and breaks (everything else)."""
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            i += 2
            yield ("break", "") if source[i - 1] in _CLASS_ESCAPES else ("literal", source[i - 1])
        elif c == "[":
            i = _class_end(source, i + 1)
            yield "break", ""
        elif c == "(":
            i = _group_body(source, i + 1)
            yield "break", ""
        elif c in _QUANTIFIERS:
            i = source.find("}", i) + 1 if c == "{" and "}" in source[i:] else i + 1
            yield "quantifier", c
        else:
            i += 1
            yield ("break", "") if c in ".^$|)" else ("literal", c)


def _class_end(source: str, i: int) -> int:
    """The index after a character class whose body starts at `i`."""
    if source.startswith("^", i):
        i += 1
    if source.startswith("]", i):
        i += 1
    while i < len(source) and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return i + 1


def _group_body(source: str, i: int) -> int:
    """The index of a group's first character after its header: (?:  (?P<name>  (?i:  (?=  (?<!"""
    if not source.startswith("?", i):
        return i
    while i < len(source) and source[i] not in ":>=!)":
        i += 1
    return i + 1


def _cut_in_literal(text: str, runs: list[str]) -> bool:
    for lit in runs:
        for k in range(len(lit) - 1, CUT_IN_LITERAL - 1, -1):  # the line ends with lit's first k chars
            if text.endswith(lit[:k]) and lit[k - 1].isalnum() and lit[k].isalnum():  # inside a word
                return True
        if _EXCEPTION_HEAD.fullmatch(lit):
            continue
        at = text.rfind(lit)
        tail = text[at + len(lit):]
        if (at >= 0 and len(tail) <= CUT_AFTER_LITERAL and " " not in tail  # one token cut short ...
                and (any(c.isdigit() for c in tail) or _unclosed(text))):  # ... a number, or quoted
            return True
    return False


def _unclosed(text: str) -> bool:
    """The line opens a quote or bracket it never closes: it was cut before the closing one."""
    return (text.count("'") % 2 == 1 or text.count('"') % 2 == 1 or text.count("(") > text.count(")")
            or text.count("[") > text.count("]"))


def cut_match(event: Event, patterns: Mapping[str, CompiledPattern]) -> Match | None:
    """The pattern whose message the event's last line begins, when that line ends mid-message."""
    record = event.records[-1]
    text = record.message.rstrip().split("\n")[-1]
    if len(text) < MIN_LINE or not (text[-1].isalnum() or text[-1] in "_-"):
        return None  # too short, or it ends like a whole line (a full stop, a bracket, a quote)
    best: tuple[int, str, dict[str, str]] | None = None
    for pid, cp in patterns.items():
        h = cp.head
        if h.scope != Scope.line.value or h.require_all or h.in_container or h.is_signal:
            continue
        for source, rx in zip(h.regexes, cp.regexes, strict=True):
            runs = [r for r in literal_runs(source) if r[:MIN_LITERAL] in text or text.endswith(r[:CUT_IN_LITERAL])]
            if not runs or not _cut_in_literal(text, runs):
                continue
            try:
                m = rx.search(text, partial=True, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                continue
            need = min(MIN_CUT_MATCH, max(MIN_SHORT_MATCH, max(map(len, runs)) // 2))  # a short message's half
            if m is None or not m.partial or m.end() != len(text) or m.end() - m.start() < need:
                continue
            if best is None or m.end() - m.start() > best[0]:
                best = (m.end() - m.start(), pid, {k: v for k, v in m.groupdict().items() if v is not None})
    if best is None:
        return None
    return Match(best[1], event, (record,), best[2], cut=True)
