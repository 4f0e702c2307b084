"""Lines a paste broke: a log copied from a terminal or a web page into a ticket is often
hard-wrapped at the window's width (each long line cut into pieces of exactly that width, in
the middle of a word) or soft-wrapped at a space. The pieces are joined again before anything
reads them, so a message cut in two still matches as one line.

Only a small console input (one that fits in the first block read, as a paste does) is
rejoined, and loses its colour codes and the indentation all its lines share (a Markdown code
block's) first, so that what phase 1 reads starts where the log's own lines start. The line
count is kept: the joined text stands on the first piece's line and the later pieces' lines are
left empty, so evidence still points at the input's own line numbers. A first line whose
selection started inside its worker prefix gets the prefix back from the line after it.

A hard wrap is taken as proven only when at least two different lines have the longest length of
the input and each is followed by a piece that cannot start a line of its own (not indented, no
time stamp, level, traceback, exception name or worker prefix at its start), the cut line does
not end a sentence, at least three in four lines of that length are cut so, and one cut at least
falls inside a word. A soft wrap is a long line that ends in a space, followed by a line that
starts with a lower-case letter; a long line that ends in a word followed by a piece that starts
with one space and a lower-case word was wrapped just before its space (read after the quote,
time stamp or worker column each line of the paste may carry, and across blank lines). A piece
that starts with the same word as the line it would join is a record of its own (a compiler's
or a program's run of equal-length error lines). An error line that ends in a colon, followed
by lower-case pieces indented deeper than it, each but the last ending in a colon, is a chain
of Go errors the paste broke after its colons (kubectl, containerd, runc): the pieces join it.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from analyzer.models import Record
from analyzer.readers.console import Columns, console_record, named_columns
from analyzer.readers.worker import worker_prefixes

MIN_WIDTH = 60  # terminals and text boxes are wider; shorter equal lines are a coincidence
_STARTS_A_LINE = re.compile(
    r"\s|$"  # indented: a traceback's frame, a continuation the log wrote itself
    r"|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d "  # a time stamp
    r"|\d+\.\d\d\.\d{3}\.\d{3} [DIWEF] "  # llama.cpp's own prefix (2026 builds): 0.01.310.221 E
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE)\b|[IWEF]\d{4} "  # a level, glog
    r"|Traceback |File \"|During handling|The above exception"  # Python's own lines
    r"|\[|\((?:[\w.:-]+ )?pid=|\(raylet\b|>|#|\$ "  # a bracketed or worker prefix, a quote, a comment, a prompt
    r"|[A-Za-z_]\w*(?:\.\w+)+:|\S+:\d+:\d+ \["  # an exception's dotted name, NCCL's host:pid:tid [dev]
)
_ENDS_A_SENTENCE = (".", "!", "?")
# one space, then a lower-case word that is not a kernel call-trace frame (" __schedule+0x2e7/0x8e0")
# nor an apt/dpkg item (" libfoo : Depends: ..."): a piece whose space the wrap moved to its start
_SPACE_FIRST = re.compile(r" [a-z][a-z-]*(?![\w+.]*\+0x)(?![\w.+-]* : )")


# colours of a terminal or `docker logs` copied with the text, also as rsyslog writes them (it
# escapes control characters as '#' and three octal digits: ESC is #033)
ANSI = re.compile(rb"(?:\x1b|#033)\[[0-9;?]*[A-Za-z]")


def tidy(data: bytes) -> bytes:
    """A paste as the log wrote it: colour codes and stray NULs out, the shared indentation out,
    wrapped lines joined; the line count is kept."""
    if b"\x1b" in data or b"#033[" in data:
        data = ANSI.sub(b"", data)
    if b"\x00" in data:  # stray NULs of a text log (readers/detect.py)
        data = data.replace(b"\x00", b"")
    return rejoin(unindent(data))


def unindent(data: bytes) -> bytes:
    """`data` without the indentation every non-blank line shares: a log pasted as a Markdown
    code block (four spaces) or under a list item. A traceback's frames keep their own indent."""
    lines = data.split(b"\n")
    indents = [line[:len(line) - len(line.lstrip(b" \t"))] for line in lines if line.strip()]
    common = os.path.commonprefix(indents)  # noqa: RUF071 -- a character prefix is meant: b"\t" is not b"    "
    if not common:
        return data
    return b"\n".join(line[len(common):] if line.startswith(common) else line.lstrip(b" \t\r")
                       for line in lines)


def rejoin(data: bytes) -> bytes:
    """`data` with hard- and soft-wrapped lines joined; the same bytes when nothing was wrapped."""
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    width = _wrap_width(lines)
    out = list(lines)
    head, joined = 0, False  # the line being continued
    for i in range(1, len(lines)):
        if _continues(lines[i - 1], lines[i], width) and out[head].strip() and not _same_start(out[head], lines[i]):
            out[head] += lines[i]
            out[i] = ""  # keep the count: the piece's own line is now empty
            joined = True
        else:
            head = i
    joined = _join_cut_before_space(out) or joined
    joined = _join_open_quote(out) or joined
    joined = _join_colon_chain(out) or joined
    joined = _restore_cut_prefix(out) or joined
    return "\n".join(out).encode("utf-8", "surrogateescape") if joined else data


# a traceback's frame line cut after its file, and the rest of it ("line 378, in prepare")
_CUT_FRAME = re.compile(r'(?:^|\s)File "[^"]+",$')
_FRAME_REST = re.compile(r"line \d+(?:, in \S.*)?$")


def _join_cut_before_space(out: list[str]) -> bool:
    """Join, in place, each piece that a paste cut just before its space to the line it
    continues, read after the prefixes every line of the paste may carry (a quote, a time
    stamp, a worker or container column) and across blank lines; True when one was joined.
    A traceback's frame cut after its file joins its "line N, in f" even where the space is lost."""
    prev: int | None = None  # the last line that was not blank
    joined = False
    columns = named_columns(out)
    for i, line in enumerate(out):
        if not line.strip():
            continue
        if prev is not None and (line.startswith(" ") or "  " in line):  # the piece's space is there
            record, before = _read(line, columns), _read(out[prev], columns)
            if record.worker == before.worker and wrapped_before_its_space(before.message, record.message) \
                    and not _same_start(before.message, record.message):
                out[prev] = out[prev].rstrip("\r") + record.message + ("\r" if line.endswith("\r") else "")
                out[i] = ""
                joined = True
                continue
        if prev is not None and "line " in line and out[prev].rstrip("\r").endswith('",'):
            record, before = _read(line, columns), _read(out[prev], columns)
            if record.worker == before.worker and _CUT_FRAME.search(before.message) \
                    and _FRAME_REST.match(record.message):  # a frame cut at its space, the space lost
                out[prev] = out[prev].rstrip("\r") + " " + record.message + ("\r" if line.endswith("\r") else "")
                out[i] = ""
                joined = True
                continue
        prev = i
    return joined


# a logfmt value (`msg="...`) opened on a line and not closed on it
_OPEN_QUOTE = re.compile(r'\b\w+="(?:[^"\\]|\\.)*$')
_CLOSES_QUOTE = re.compile(r'^(?:[^"\\]|\\.)*"')
MAX_QUOTE_PIECES = 8


def _join_open_quote(out: list[str]) -> bool:
    """Join, in place, the indented lines that continue a logfmt value left open at the end of its
    line (`level=error msg="failed to write spec: invalid CDI Spec:` wrapped by hand, its rest on
    lines indented under it) up to the piece that closes the quote; True when one was joined."""
    joined = False
    i = 0
    while i < len(out):
        head = out[i].rstrip("\r")
        if _OPEN_QUOTE.search(head):
            pieces: list[int] = []
            closed = False
            j = i + 1
            while j < len(out) and len(pieces) < MAX_QUOTE_PIECES and out[j][:1] in (" ", "\t") and out[j].strip():
                pieces.append(j)
                if closed := bool(_CLOSES_QUOTE.match(out[j].strip())):
                    break
                j += 1
            if closed:
                i = _join_pieces(out, i, pieces)
                joined = True
        i += 1
    return joined


def _join_pieces(out: list[str], at: int, pieces: list[int]) -> int:
    """Join, in place, the pieces onto line `at` (each after one space) and leave their own lines
    empty, so the line count is kept; the last piece's index."""
    out[at] = out[at].rstrip("\r") + "".join(" " + out[k].strip() for k in pieces)
    for k in pieces:
        out[k] = ""
    return pieces[-1]


# an error line a paste broke after one of its colons, its rest on lines indented deeper under it:
# a chain of wrapped Go errors ("failed to create shim task: OCI runtime create failed:") as
# kubectl, containerd and runc print it; each piece starts with a lower-case word, and the chain
# ends with the first piece that does not end in a colon. A Python exception line is left alone:
# the lines under it are its own (a state_dict's "size mismatch for ..." list).
_CHAIN_HEAD = re.compile(r"(?i)\b(?:error|failed|failure|cannot|unable)\b.*: .*:$")
_PYTHON_EXCEPTION = re.compile(r"\s*[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b")
_CHAIN_PIECE = re.compile(r"(?!at )[a-z][\w-]*[ :]")
MAX_CHAIN_PIECES = 8


def _join_colon_chain(out: list[str]) -> bool:
    """Join, in place, the indented pieces of an error chain wrapped after its colons onto the
    line they continue; True when one was joined."""
    joined = False
    i = 0
    while i < len(out):
        head = out[i].rstrip("\r")
        if head.endswith(":") and _CHAIN_HEAD.search(head) and not _PYTHON_EXCEPTION.match(head):
            indent = len(head) - len(head.lstrip())
            pieces: list[int] = []
            j = i + 1
            while j < len(out) and len(pieces) < MAX_CHAIN_PIECES:
                line = out[j].rstrip("\r")
                text = line.strip()
                if not text or len(line) - len(line.lstrip()) <= indent or not _CHAIN_PIECE.match(text):
                    break
                pieces.append(j)
                if not text.endswith(":"):
                    break
                j += 1
            if pieces:
                i = _join_pieces(out, i, pieces)
                joined = True
        i += 1
    return joined


MIN_PREFIX_KEPT = 6  # what is left of a cut prefix: "1) " alone could be a list item


def _restore_cut_prefix(out: list[str]) -> bool:
    """Restore, in place, the worker prefix of a paste's first line when the selection started
    inside it ("RayWorkerWrapper pid=243, ip=10.0.0.1) ERROR..." with the next line's whole
    "(RayWorkerWrapper pid=243, ip=10.0.0.1) "), also behind what both lines carry before it (a
    quote, a container's column); True when one was restored."""
    lines = [i for i, line in enumerate(out) if line.strip() and not line.startswith("```")][:2]
    if len(lines) < 2:
        return False
    first, second = out[lines[0]], out[lines[1]]
    for at, whole in worker_prefixes(second):
        outer = second[:at]
        if not first.startswith(outer) or first.startswith(outer + whole):
            continue
        for cut in range(1, len(whole) - MIN_PREFIX_KEPT + 1):
            if first.startswith(whole[cut:], len(outer)):
                out[lines[0]] = outer + whole[:cut] + first[len(outer):]
                return True
    return False


def _read(line: str, columns: Columns = ()) -> Record:
    return console_record("", 0, line.rstrip("\r"), columns=columns)


def _continues(piece: str, nxt: str, width: int | None) -> bool:
    """Does `nxt` continue the line whose last piece is `piece`?"""
    if not piece.strip() or not nxt or _STARTS_A_LINE.match(nxt):
        return False
    if width is not None and len(piece) == width and not piece.rstrip().endswith(_ENDS_A_SENTENCE):
        return True
    return len(piece) >= MIN_WIDTH and piece.endswith(" ") and nxt[0].islower()


def wrapped_before_its_space(piece: str, nxt: str) -> bool:
    """Is `nxt` (a line's text after its prefixes) the rest of `piece`, cut just before a space?
    A long line ending in a word, then one space and a lower-case word that starts no line of
    its own: "...cpython-310-x86_64-linux-gnu.so: undefined" / " symbol: _ZN3c10..."."""
    return len(piece) >= MIN_WIDTH and piece[-1:].isalnum() and _SPACE_FIRST.match(nxt) is not None


def _same_start(line: str, nxt: str) -> bool:
    """Lines that start with the same word are records of one program, not pieces of one line."""
    return line.split(None, 1)[0] == nxt.split(None, 1)[0]


def _wrap_width(lines: list[str]) -> int | None:
    lengths = Counter(len(line) for line in lines if len(line) >= MIN_WIDTH)
    if not lengths:
        return None
    width = max(lengths)
    at_width = [i for i in range(len(lines) - 1) if len(lines[i]) == width]
    cuts = [i for i in at_width
            if _continues(lines[i], lines[i + 1], width) and not _same_start(lines[i], lines[i + 1])]
    if len({lines[i] for i in cuts}) < 2:  # two different pieces: a repeated line proves nothing
        return None
    # a terminal cuts every line it wraps, mostly inside a word: lines that merely share the
    # longest length (two log lines of 106 characters) are not a wrap
    inside_a_word = any(lines[i][-1].isalnum() and lines[i + 1][0].isalnum() for i in cuts)
    return width if inside_a_word and 4 * len(cuts) >= 3 * len(at_width) else None
