"""Pattern fixture files: `patterns/<area>/<id>.log` beside `<id>.yaml`, real log lines annotated
like semgrep's `ruleid:` / `ok:` comments.

    # source: https://github.com/org/repo/issues/123 (what the lines are)
    # match nvcc_version=12.8        the next log line must be evidence of this pattern,
    <log line>                        with these captured values (optional; gpu="Tesla T4")
    # ok                              the next log line must NOT be evidence (a near miss)
    <log line>
    # todo-match / # todo-ok          known gaps: reported, never failing

A catalogue's fixture (`patterns/catalogues/<stem>.log`) is shared by the patterns it expands
into: `# match <pattern-id> k=v` names the pattern the line belongs to; a `# ok` line must
fire none of them.

Every line starting with `#` is an annotation or a comment and is removed before the
fixture is analysed, through the whole pipeline (form detection, events, all patterns). A log
line that itself starts with `#` (a Markdown heading in a pasted report) is written `\\#...`.
Parsing only: `authoring/fixture_runs.py` runs a fixture through the engine.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from analyzer.errors import PatternError
from analyzer.library.load import PatternFile
from analyzer.library.yamlfile import read_text

_ANNOTATION = re.compile(r"# (?P<kind>match|ok|todo-match|todo-ok)\b(?: (?P<target>[a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$))?"
                         r"(?P<rest>.*)$")
_CAPTURE = re.compile(r"(?P<k>[A-Za-z_]\w*)=(?:\"(?P<q>[^\"]*)\"|(?P<v>\S+))")
_SOURCE = re.compile(r"# source: \S+")


class Expect(StrEnum):
    match = "match"
    ok = "ok"
    todo_match = "todo-match"
    todo_ok = "todo-ok"


@dataclass(frozen=True, slots=True)
class Annotation:
    expect: Expect
    fixture_line: int  # line of the annotated log line in the .log file
    log_line: int  # its line once comments are removed (what the analyser sees)
    text: str
    captures: dict[str, str] = field(default_factory=dict)
    target: str | None = None  # in a catalogue's fixture: the pattern the line belongs to


@dataclass(frozen=True, slots=True)
class Fixture:
    path: Path
    log: bytes
    annotations: tuple[Annotation, ...]
    line_map: tuple[int, ...]  # analysed line number - 1 → fixture line number

    def of(self, pattern_id: str) -> Fixture:
        """The annotations that concern one pattern: its own and the untargeted ones."""
        mine = tuple(a for a in self.annotations if a.target in (None, pattern_id))
        return Fixture(self.path, self.log, mine, self.line_map)


def fixture_of(pf: PatternFile) -> Fixture:
    """A pattern's fixture, narrowed to its own lines when it is shared (a catalogue's). A
    catalogue's fixture is parsed once for all its patterns (lint, stats, site and index
    building ask for each pattern's in turn), and again only when the file changes."""
    if not pf.catalogue:
        return parse_fixture(pf.fixture)
    st = pf.fixture.stat()
    return _parsed(pf.fixture, st.st_mtime_ns, st.st_size).of(pf.pattern.id)


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, _mtime_ns: int, _size: int) -> Fixture:
    return parse_fixture(path)


def parse_fixture(path: Path) -> Fixture:
    lines = read_text(path, max_bytes=1024 * 1024).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    kept: list[str] = []
    line_map: list[int] = []
    annotations: list[Annotation] = []
    pending: tuple[Expect, dict[str, str], int, str | None] | None = None
    has_source = False
    for n, text in enumerate(lines, start=1):
        if text.startswith("#"):
            has_source = has_source or bool(_SOURCE.match(text))
            if m := _ANNOTATION.match(text):
                if pending is not None:
                    raise PatternError("annotation is not followed by a log line", path, pending[2])
                caps = {c["k"]: c["v"] if c["v"] is not None else c["q"] for c in _CAPTURE.finditer(m["rest"])}
                pending = (Expect(m["kind"]), caps, n, m["target"])
            continue
        if text.startswith("\\#"):  # an escaped log line that starts with '#'
            text = text[1:]
        kept.append(text)
        line_map.append(n)
        if pending is not None:
            if not text.strip():
                raise PatternError("annotation is followed by an empty line", path, pending[2])
            annotations.append(Annotation(pending[0], n, len(kept), text, pending[1], pending[3]))
            pending = None
    if pending is not None:
        raise PatternError("annotation at the end of the file annotates nothing", path, pending[2])
    if not has_source:
        raise PatternError("fixture names no source", path, 1,
                           help="add `# source: URL (what these lines are)` at the top")
    if not any(a.expect is Expect.match for a in annotations):
        raise PatternError("fixture has no `# match` line", path, 1,
                           help="annotate at least one real log line that the pattern must match")
    return Fixture(path, ("\n".join(kept) + "\n").encode(), tuple(annotations), tuple(line_map))
