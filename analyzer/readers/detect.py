"""Sniff the form of an input from its first lines."""

from __future__ import annotations

import re

from analyzer.choices import InputForm
from analyzer.readers.journal_text import _SHORT_LINE, _VERBOSE_HEAD
from analyzer.readers.kernel import KERNEL_LINE

JOURNAL_MAGIC = b"LPKSHHRH"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_EXPORT_FIELD = re.compile(r"(?:__CURSOR|__REALTIME_TIMESTAMP|_[A-Z_]+|[A-Z][A-Z0-9_]*)=")
_JOURNAL_ID = re.compile(r"\S+ \S+?(?:\[\d+\]: | kernel: )")
SAMPLE_LINES = 200
MIN_SHARE = 0.5  # a form must explain at least half of the entry lines


def _score_short(line: str) -> bool:
    m = _SHORT_LINE.match(line)
    if not m:
        return False
    if m["time"].startswith("["):  # short-monotonic vs dmesg: a journal line names host and ident
        return bool(m["pid"]) or m["ident"] == "kernel"
    return True


def detect(head: bytes) -> InputForm:
    lines = [ln for ln in head.decode("utf-8", "replace").split("\n")[:SAMPLE_LINES * 4] if ln.strip()]
    lines = lines[:SAMPLE_LINES]
    if not lines:
        return InputForm.console
    first = lines[0]
    if first.startswith("__CURSOR=") or sum(bool(_EXPORT_FIELD.match(x)) for x in lines) > 0.6 * len(lines):
        return InputForm.journal_export
    if _VERBOSE_HEAD.match(first):
        return InputForm.journal_verbose
    scores = {
        InputForm.journal_json: sum((x.startswith("{") and '"MESSAGE"' in x) or '"__CURSOR"' in x
                                    for x in lines),
        InputForm.docker: sum(x.startswith('{"log":') for x in lines),
        InputForm.journal_short: sum(_score_short(x) for x in lines),
        InputForm.kernel: sum(bool(KERNEL_LINE.match(x)) for x in lines),
    }
    heads = sum(not x[:1].isspace() for x in lines) or 1
    form, score = max(scores.items(), key=lambda kv: kv[1])
    return form if score >= MIN_SHARE * heads else InputForm.console


_CONTROL = bytes(c for c in range(32) if c not in b"\t\n\r\f\v\b\x1b") + b"\x7f"
_TEXT_SHARE = 0.9  # at least this share of the non-NUL bytes is text


def looks_binary(head: bytes) -> bool:
    """A file that is not text (journal files are handled first). A text log can hold stray
    NUL bytes: PyTorch's DataLoader writes one after its worker-crash message, a crash can leave
    a run of them in a log file, and UTF-16 (a Windows shell's redirect) has one per character;
    such a log is text when what is left without its NULs is text. Without NULs it is text."""
    sample = head[:8192]
    if b"\x00" not in sample:
        return False
    rest = sample.replace(b"\x00", b"")
    if not rest:
        return True
    control = len(rest) - len(rest.translate(None, _CONTROL))
    undecodable = len(rest) - len(rest.decode("utf-8", "ignore").encode("utf-8"))
    return control + undecodable > (1 - _TEXT_SHARE) * len(rest)
