r"""`triage patterns new ID --from FILE:LINE`: a first draft of a pattern from a real log line.

The regex is the message's stable core: the logger's prefix (level, date and time, source
file and line, worker, glog header) is dropped, literal text is escaped, numbers become named
groups (`rank 3` → `rank (?P<rank>\d+)`), and other volatile tokens (paths, hashes, redacted
secrets and hosts) become plain regex pieces. The fixture gets the line, redacted, with the
values the groups capture, and a must-not-match placeholder to replace with a real near miss."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.choices import InputForm
from analyzer.errors import PatternError
from analyzer.library.load import SCHEMA_LINE, PatternFile
from analyzer.readers import parse_lines
from analyzer.readers.detect import detect
from analyzer.redact import REDACTED, redact

_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|CRIT(?:ICAL)?|FATAL|ALERT|EMERG)"
_TIME = r"\d\d:\d\d:\d\d(?:[.,]\d+)?"
# what loggers put before the message, each tried at its start until none applies
_PREFIXES: tuple[re.Pattern[str], ...] = tuple(re.compile(rx) for rx in (
    rf"[DIWEF]\d{{4}} {_TIME}\s+\d+\s+[^\s\]]+:\d+\]\s+",  # glog: E0514 10:00:01.123456 1234 file.cc:42]
    r"\([A-Za-z_][\w.-]*(?: [\w.]+=[^\s)]+)+\)\s+",  # worker: (EngineCore_DP0 pid=123), (VllmWorker rank=3 pid=9)
    r"\[rank\d+\]:?\s+",  # torchrun: [rank0]:
    rf"\[[^\]\n]*{_TIME}[^\]\n]*\]:?\s+",  # bracketed time: [2025-05-14 10:00:01 TP0], [2024-05-12 10:01:02,123]
    r"\[\d{4}-\d\d-\d\d\]\s+",  # bracketed date
    rf"\d{{4}}-\d\d-\d\d(?:[T ]{_TIME}(?:Z|[+-]\d\d:?\d\d)?)?\s+",  # ISO date and time
    rf"\d\d-\d\d {_TIME}\s+",  # vLLM: 05-14 10:00:01
    rf"{_TIME}\s+",  # a bare time
    rf"{_LEVEL}:[\w.]+:\s*",  # Python logging's basic format: ERROR:root:message
    rf"{_LEVEL}:\s+",  # ERROR: message
    rf"{_LEVEL}\s+",  # vLLM: ERROR 05-14 ...
    r"(?i:\[(?:trace|debug|info|notice|warn(?:ing)?|error|err|crit(?:ical)?|fatal|[DIWEFC])\]):?\s+",  # [ERROR] [W]
    r"[DIWEFC]\s+(?=\d)",  # a one-letter level before a time: W 10:00:01
    r"\[[\w./<>-]+:\d+(?::[\w<>]+)?\]:?\s+",  # [core.py:123], [loss_scaler.py:190:update_scale]
    r"[\w./<>-]+\.\w+:\d+\]\s+",  # older vLLM: core.py:123]
    r"\{[\w./<>-]+:\d+\}\s+",  # {pod_manager.py:197}
    rf"[A-Za-z_][\w.]*\s+-\s+(?={_LEVEL}\b)",  # the logger's name before its level: vllm.engine - ERROR - ...
    r"[\w.<>]+:[\w<>]+:\d+\s+-\s+",  # loguru's place: module:function:42 -
    r"[\w.-]+:\d+:\d+ \[\d+\]\s+",  # NCCL: host:pid:tid [device]
    r"[\w.-]+\.\w+:\d+\s+(?=NCCL )",  # NCCL's source place: allocator.cc:79 NCCL WARN ...
    r"(?:time|ts|level|lvl|source|caller)=(?:\"[^\"]*\"|\S+)\s+",  # logfmt (Go): time=... level=ERROR source=x.go:1
))
_SEPARATOR = re.compile(r"(?:\||-)\s+")  # between the fields of a prefix: `... | ERROR | ...`, `... - ERROR - ...`
CORE_LENGTH = 240  # a longer message is cut at a word: its start identifies it, its tail varies


def message_core(message: str) -> str:
    """The message without the logger's prefix; the message itself when nothing else is left."""
    text = message
    while True:
        for rx in _PREFIXES:
            m = rx.match(text)
            if m and text[m.end():].strip():
                text = text[m.end():]
                if sep := _SEPARATOR.match(text):
                    text = text[sep.end():]
                break
        else:
            break
    text = text.strip()
    if len(text) > CORE_LENGTH:
        text = text[:CORE_LENGTH].rsplit(" ", 1)[0]
    return text or message


# volatile tokens, most specific first: (token, regex piece, a number that gets a named group)
_TOKENS: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (re.compile(re.escape(REDACTED)), r"\S+", False),
    (re.compile(r"(?<![\w.])0x[0-9a-fA-F]+\b"), r"0x[0-9a-fA-F]+", True),
    (re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+"), r"\S+", False),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b"), r"[0-9a-f]+", False),  # a hash, not a number
    (re.compile(r"(?<![A-Za-z_.\d])\d+(?:\.\d+)+"), r"\d+(?:\.\d+)+", True),  # a version, an address
    (re.compile(r"(?<![A-Za-z_.\d])\d+"), r"\d+", True),  # not a name's digits: bf16, H100, sm_90
)
# the word before a number: `rank 3`, `pid=12`, `--tensor-parallel-size 4`, `self.watchdog_timeout=300`
_NAME_BEFORE = re.compile(r"(?:^|\s)[-(\[{\"',]*(?:[A-Za-z_]\w*\.)*(?P<word>[A-Za-z][A-Za-z0-9_-]*?)[-_=:#]*\s*$",
                          re.ASCII)
_EXTENSIONS = frozenset({"c", "cc", "cpp", "cu", "cuh", "go", "h", "hpp", "js", "log", "py", "rs", "so", "txt"})
# words that say nothing of the number after them (`rank 3 of 8`, `compiled with: 9.1`)
_NOT_NAMES = frozenset({"a", "an", "and", "as", "at", "by", "for", "from", "in", "is", "of", "on", "or", "than",
                        "the", "to", "was", "were", "with"})


def _group_name(before: str, taken: set[str]) -> str:
    """The word just before a number when it is an identifier, else `n1`, `n2`…; unique
    within the regex."""
    base = ""
    if (m := _NAME_BEFORE.search(before[-60:])) and not (m["word"] in _EXTENSIONS and "." in m[0]):  # core.py:12
        base = m["word"].replace("-", "_").lower()[:30]
    base = "" if base in _NOT_NAMES else base
    name, i = (base, 2) if base else ("n1", 1)
    while name in taken:
        name = f"{base}_{i}" if base else f"n{i}"
        i += 1
    taken.add(name)
    return name


def draft_regex(message: str) -> tuple[str, dict[str, str]]:
    """The message as a regex, literal text escaped, volatile tokens generalised; and the
    value each named group captures on the message."""
    spans: list[tuple[int, int, str, bool]] = []
    for rx, piece, number in _TOKENS:
        for m in rx.finditer(message):
            if not any(s < m.end() and m.start() < e for s, e, _, _ in spans):
                spans.append((m.start(), m.end(), piece, number))
    out: list[str] = []
    captures: dict[str, str] = {}
    pos = 0
    for start, end, piece, number in sorted(spans):
        out.append(re.escape(message[pos:start]))
        if number:
            name = _group_name(message[:start], set(captures))
            captures[name] = message[start:end]
            piece = f"(?P<{name}>{piece})"
        out.append(piece)
        pos = end
    out.append(re.escape(message[pos:]))
    return "".join(out).replace("\\ ", " ").replace("\\-", "-"), captures


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
    regex, captures = draft_regex(message_core(message.split("\n")[0]))
    folder = root / area
    yaml_text = _YAML.format(schema=SCHEMA_LINE, id=pattern_id, area=area, regex=regex.replace("'", "''"),
                             src=path.name, line=line)
    values = "".join(f" {name}={value}" for name, value in captures.items())
    log_text = (f"# source: {path.name}:{line} (replace with the public issue thread or upstream file)\n"
                f"# match{values}\n{message}\n# ok\n{NEAR_MISS_PLACEHOLDER}: the same words in a harmless context\n")
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
