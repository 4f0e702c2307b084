"""`triage patterns new ID --from FILE:LINE`: a first draft of a pattern from a real log
line. Volatile tokens (numbers, hex, paths, pids) become regex pieces; the fixture gets the
line, redacted, and a must-not-match placeholder to replace with a real near miss."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.choices import InputForm
from analyzer.errors import PatternError
from analyzer.library.load import SCHEMA_LINE, PatternFile
from analyzer.readers import parse_lines
from analyzer.readers.detect import detect
from analyzer.redact import redact

# volatile tokens, most specific first; each becomes a regex piece
_TOKENS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]+"), r"0x[0-9a-fA-F]+"),
    (re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+"), r"\S+"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), r"[0-9a-f]+"),
    (re.compile(r"\d+(?:\.\d+)+"), r"\d+(?:\.\d+)+"),
    (re.compile(r"\d+"), r"\d+"),
)


def masked_regex(message: str) -> str:
    """The message as a regex: literal text escaped, volatile tokens generalised."""
    out: list[str] = []
    pos = 0
    spans: list[tuple[int, int, str]] = []
    for rx, piece in _TOKENS:
        for m in rx.finditer(message):
            if not any(s < m.end() and m.start() < e for s, e, _ in spans):
                spans.append((m.start(), m.end(), piece))
    for start, end, piece in sorted(spans):
        out.append(re.escape(message[pos:start]))
        out.append(piece)
        pos = end
    out.append(re.escape(message[pos:]))
    return "".join(out).replace("\\ ", " ")


@dataclass(frozen=True)
class Draft:
    yaml_path: Path
    log_path: Path
    yaml_text: str
    log_text: str


def draft_pattern(pattern_id: str, area: str, source: str, root: Path) -> Draft:
    path_text, _, line_text = source.rpartition(":")
    if not path_text or not line_text.isdigit():
        raise PatternError("--from expects FILE:LINE, e.g. service.log:120")
    path, line = Path(path_text), int(line_text)
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise PatternError(f"cannot read: {exc.strerror}", path) from exc
    if not 1 <= line <= len(lines):
        raise PatternError(f"line {line} is outside the file ({len(lines)} lines)", path)
    form = detect(b"\n".join(lines[:200]))
    records = parse_lines(lines[line - 1:line], form if form is not InputForm.journal_export else InputForm.console)
    message = redact(records[0].message if records else lines[line - 1].decode("utf-8", "replace"), hosts=True)
    regex = masked_regex(message.split("\n")[0]).replace("'", "''")
    folder = root / area
    yaml_text = _YAML.format(schema=SCHEMA_LINE, id=pattern_id, area=area, regex=regex, src=path.name, line=line)
    log_text = (f"# source: {path.name}:{line} (replace with the public issue thread or upstream file)\n"
                f"# match\n{message}\n# ok\n{NEAR_MISS_PLACEHOLDER}: the same words in a harmless context\n")
    return Draft(folder / f"{pattern_id}.yaml", folder / f"{pattern_id}.log", yaml_text, log_text)


NEAR_MISS_PLACEHOLDER = "REPLACE WITH A REAL NEAR MISS"
_TODO = re.compile(r"\bTODO\b")


def unfinished(pf: PatternFile) -> list[tuple[Path, int, str]]:
    """What a draft still holds of its placeholders: each `TODO` in the pattern file and the
    `# ok` placeholder line of its fixture, with file and line (lint and test refuse them)."""
    found: list[tuple[Path, int, str]] = []
    if not pf.catalogue:
        found += [(pf.path, n, "a TODO placeholder is left in the pattern")
                  for n, text in enumerate(pf.path.read_text().split("\n"), 1) if _TODO.search(text)]
    if pf.fixture.exists() and not pf.catalogue:
        found += [(pf.fixture, n, "the `# ok` placeholder line is left in the fixture: put a real near miss there")
                  for n, text in enumerate(pf.fixture.read_text().split("\n"), 1) if NEAR_MISS_PLACEHOLDER in text]
    return found


def write_draft(draft: Draft) -> None:
    for target in (draft.yaml_path, draft.log_path):
        if target.exists():
            raise PatternError("already exists; choose another id (ids are never reused)", target)
    draft.yaml_path.parent.mkdir(parents=True, exist_ok=True)
    draft.yaml_path.write_text(draft.yaml_text)
    draft.log_path.write_text(draft.log_text)


_YAML = """{schema}
title: TODO one line naming the failure, not the detector
id: {id}
status: experimental
severity: high
confidence: medium
area: {area}
tags: []
description: >-
  TODO what failed and why, in the words an engineer searches for.
why: >-
  TODO what the failure does to the service.
match:
  any:
    - regex: '{regex}'
  scope: line
fix:
  - "TODO a concrete step, with its command"
avoid: []
references: []
source: "TODO the upstream file that prints this, or the issue thread (drafted from {src}:{line})"
falsepositives: []
postmortems: []
"""
