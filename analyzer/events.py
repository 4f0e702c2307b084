"""Phase 2, second step: rebuild multi-line events from records, per process.

Python tracebacks (with their "During handling of the above exception" and "The above
exception was the direct cause" chains, headless ones that start at a `File` frame, rich's boxed
form and IPython's/Jupyter's),
C++ `terminate called after throwing`, a Rust panic with its message on the next line, NCCL
WARN runs, torchrun's "Root Cause (first observed failure)" block, kernel messages continued
on indented lines, and ComfyUI's error dialogs as pasted from its web page (the older "Error
occurred when executing <node>:" box and the newer "# ComfyUI Error Report", whose exception and
stack trace are Markdown). Records of other processes may be interleaved: each process is
followed on its own, so journald entries of one traceback are joined even when mixed with others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analyzer.models import Event, EventKind, Frame, Record
from analyzer.scan import TRACEBACK

TRACEBACK_START = re.compile(TRACEBACK + ":")
FRAME = re.compile(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
# a frame line whose start the paste cut off ('.../site-packages/pkg/mod.py", line 139, in f'): the
# tail of its file name, its line and its function, at column 0
CUT_FRAME_HEAD = re.compile(r'[^\s"][^"]*\.pyw?", line \d+, in [\w<>.]+\s*$')
# rich's traceback (typer and other CLIs, `rich.traceback.install()`): a rule or box headed
# "Traceback (most recent call last)", each frame a "<file>:<line> in <func>" row (inside "│ " borders
# in the boxed form; a long path wraps onto the next row) above its source, the exception below
RICH_START = re.compile(r"─ Traceback \(most recent call last\) ─")
RICH_FRAME = re.compile(r"\s*(?:│ )?(?P<file>[^\s│]+?\.pyw?):(?P<line>\d+) in (?P<func>[^\s│]+)")
RICH_BOX = ("│", "╰", "╭")
# IPython's and Jupyter's traceback (ultratb): "<Type>   Traceback (most recent call last)" under a rule of
# dashes, then per frame a location row at column 0, "<file> in <func>(<args>)" (IPython 7 and older),
# "File <file>:<line>, in <func>(<args>)" or "Cell In[<n>], line <line>" (IPython 8+), above numbered source
# rows whose failing one carries an arrow ("---->", "-->", "->"), and the exception at column 0 last
IPY_START = re.compile(r"[A-Za-z_][\w.]*\s{2,}Traceback \(most recent call last\)\s*$")
IPY_FRAME = re.compile(r"File (?P<file>\S.*?):(?P<line>\d+), in (?P<func>[\w<>.]+)"
                       r"|Cell In\s?\[\d*\], line (?P<cell_line>\d+)"
                       r"|(?P<old_file>(?:/|~/|[A-Za-z]:\\|<ipython-input-)\S*) in (?P<old_func>[\w<>.]+)\(.*\)\s*$")
IPY_ARROW = re.compile(r"\s*-*> ?(?P<line>\d+)\b")
# an exception's type: a name with one of the usual endings, Python's StopIteration (a bare `next()` on an
# exhausted iterator ends a traceback with the name alone), a module's lowercase `error` class, or a
# dotted name
EXCEPTION = re.compile(
    r"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Fault|Failure)"
    r"|(?:[A-Za-z_]\w*\.)*Stop(?:Async)?Iteration"
    r"|(?:[A-Za-z_]\w*\.)+error"  # cv2.error (OpenCV's cv::Exception), re.error, zlib.error, struct.error
    r"|(?:[A-Za-z_]\w*\.)+[A-Z]\w*)(?::\s?(?P<msg>.*))?$"
)
CHAIN = re.compile(r"(?:During handling of the above exception|The above exception was the direct cause)")
TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
WHAT = re.compile(r"\s*what\(\):\s*(?P<msg>.*)")
NCCL = re.compile(r"NCCL (?:WARN|INFO)")
# torchrun's failure summary (torch.distributed.elastic ChildFailedError): the first failed
# worker's fields (rank, exit code, signal) under this heading, up to the closing rule
ROOT_CAUSE = "Root Cause (first observed failure):"
RULE = re.compile(r"\s*(?:={10,}|-{10,})\s*$")
MAX_ROOT_CAUSE = 12
# Rust's panic message since 1.73: the location ends the first line, the message is the next
RUST_PANIC_AT = re.compile(r"thread '[^'\n]*' panicked at (?P<at>\S+:\d+:\d+):$")
# vLLM's logger header ("ERROR 05-01 10:00:00 [core.py:700] ", older releases without the "["):
# its formatter (NewLineFormatter) repeats the header on every line of a multi-line message
VLLM_HEADER_AFTER_LEVEL = r"\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[^\]\s]+:\d+\] "
LOGGER_HEADER = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) " + VLLM_HEADER_AFTER_LEVEL)
# uvicorn's level prefix (uvicorn/logging.py: the level, a colon, padded to nine, then a space), which
# servers built on it also put on each line of a traceback they log; it says nothing about which
# message a line belongs to, so it comes off only lines that are a traceback's own
LEVEL_PREFIX = re.compile(r"(?:ERROR|DEBUG):    |INFO:     |WARNING:  |CRITICAL: ")
MAX_EXCEPTION_TAIL = 30
MAX_HEADLESS = 400  # lines of frames a traceback without its first line may hold
# ComfyUI's front end: the older dialog (heading, blank line, the exception's message, blank line,
# frames without "Traceback" and without indentation) and the Error Report (2024+: Markdown list
# items for the exception's type and message, then "## Stack Trace" and a fenced block of frames)
COMFY_DIALOG = re.compile(r"\s*Error occurred when executing [\w .:()/-]{1,120}:\s*$")
COMFY_TYPE = re.compile(r"\s*- \*\*Exception Type:\*\* ?(?P<type>\S+)\s*$")
COMFY_MESSAGE = re.compile(r"\s*- \*\*Exception Message:\*\* ?(?P<msg>.*)")
COMFY_FRAME_TAIL = 2  # a frame's code line and its carets, unindented in the older dialog
_CARETS = re.compile(r"\s*[\^~]+\s*$")
_MARKDOWN_HEADING = re.compile(r"#{1,3} ")


@dataclass(frozen=True, slots=True)
class _Line:
    record: int  # index into the process's records
    text: str


def build_events(records: Sequence[Record]) -> list[Event]:
    """Group records by process and rebuild events; returned in input order."""
    by_process: dict[str, list[Record]] = {}
    for record in records:
        by_process.setdefault(record.process, []).append(record)
    events: list[Event] = []
    for recs in by_process.values():
        events.extend(_process_events(recs))
    events.sort(key=lambda e: (e.first_line, e.last_line))
    return events


def _process_events(records: list[Record]) -> Iterable[Event]:
    lines, opens = _lines(records)
    i = 0
    while i < len(lines):
        text = lines[i].text
        if (start := _traceback_start(lines, i, opens)) is not None:
            base = _margin(lines, start)
            end = _traceback_end(lines, start, base)
            yield _traceback(records, lines[i:end], base)
        elif "Error occurred when executing " in text and COMFY_DIALOG.match(text):
            end = _dialog_end(lines, i + 1)
            yield _dialog(records, lines[i:end], i + 1)
        elif "**Exception Type:**" in text and (m := COMFY_TYPE.match(text)) and i + 1 < len(lines) \
                and (msg := COMFY_MESSAGE.match(lines[i + 1].text)):
            end = _report_end(lines, i + 2)
            message = _Line(lines[i + 1].record, f"{m['type']}: {msg['msg']}")
            yield _dialog(records, [lines[i], message, *lines[i + 2:end]], 1)
        elif "terminate called" in text and (m := TERMINATE.search(text)):
            end = i + 1
            while end < len(lines) and end - i < 3 and not WHAT.match(lines[end - 1].text):
                end += 1
            yield _terminate(records, lines[i:end], m["type"])
        elif (block_end := _message_end(lines, i)) is not None:
            end = block_end
            yield _event(records, lines[i:end], EventKind.line)
        elif "NCCL " in text and NCCL.search(text):
            end = i + 1
            while end < len(lines) and NCCL.search(lines[end].text):
                end += 1
            yield _event(records, lines[i:end], EventKind.nccl_block)
        else:
            end = i + 1
            while end < len(lines) and lines[end].record == lines[i].record:
                end += 1
            kind = EventKind.kernel_block if end - i > 1 and records[lines[i].record].unit == "kernel" \
                else EventKind.line
            yield _event(records, lines[i:end], kind)
        i = max(end, i + 1)


def _message_end(lines: list[_Line], i: int) -> int | None:
    """The end of a message of several lines that starts at line i and is read as one: a Rust
    panic (its location, then its message) or torchrun's root-cause block; None for others."""
    text = lines[i].text
    if "panicked at " in text and RUST_PANIC_AT.search(text) and i + 1 < len(lines):
        return i + 2
    if not text.startswith(ROOT_CAUSE):
        return None
    end = i + 1
    while end < len(lines) and end - i < MAX_ROOT_CAUSE and lines[end].text.strip() \
            and not RULE.match(lines[end].text):
        end += 1
    return end


def _lines(records: list[Record]) -> tuple[list[_Line], set[int]]:
    """The process's lines, with a logger header taken off where it repeats the previous
    line's (the message goes on), and the lines where such a multi-line message opens. An
    opening line keeps its header unless what follows it is indented: a paste that starts
    inside a logged traceback."""
    raw = [(i, text) for i, r in enumerate(records) for text in r.message.split("\n")]
    heads = [LOGGER_HEADER.match(text) if text[:1] in "DIWEC" else None for _, text in raw]
    lines: list[_Line] = []
    opens: set[int] = set()
    first = 0
    for n, ((i, text), m) in enumerate(zip(raw, heads, strict=True)):
        before = heads[n - 1] if n else None
        after = heads[n + 1] if n + 1 < len(heads) else None
        if m is not None and before is not None and m.group() == before.group():
            opens.add(first)
            text = text[m.end():]
        elif m is not None:
            first = n
            if after is not None and m.group() == after.group() and text[m.end():][:1].isspace():
                text = text[m.end():]
        elif text[:1] in "DIWEC" and (p := LEVEL_PREFIX.match(text)) and _in_traceback(text[p.end():], lines):
            text = text[p.end():]
        lines.append(_Line(i, text))
    return lines, opens


def _in_traceback(rest: str, before: list[_Line]) -> bool:
    """Is `rest` (a line after its level prefix) a traceback's own line: its first line, a frame or
    source line (indented), or the exception after them?"""
    if rest[:1].isspace() and rest.strip():
        return True
    if rest.startswith("Traceback (most recent call last)"):
        return True
    last = before[-1].text if before else ""
    return last[:1].isspace() and EXCEPTION.match(rest) is not None


def _traceback_start(lines: list[_Line], i: int, opens: set[int]) -> int | None:
    """Where the traceback of the event at line i starts: on that line, or on the next one when
    line i opens a logged message that goes on with a traceback ("... WorkerProc hit an
    exception." + its traceback: one event from its first line); None when there is none."""
    if i in opens and _starts_traceback(lines, i + 1):
        return i + 1
    return i if _starts_traceback(lines, i) else None


def _starts_traceback(lines: list[_Line], i: int) -> bool:
    if i >= len(lines):
        return False
    text = lines[i].text
    # substring tests first: most lines are none of these, and `in` is far cheaper than a regex
    return ("Traceback" in text and (TRACEBACK_START.search(text) is not None or RICH_START.search(text) is not None
                                     or IPY_START.match(text) is not None)) or \
        ('File "' in text and FRAME.match(text) is not None and _frames_lead_to_exception(lines, i)) or \
        ('", line ' in text and CUT_FRAME_HEAD.match(text) is not None and i + 1 < len(lines)
         and lines[i + 1].text[:1].isspace() and _frames_lead_to_exception(lines, i + 1)) or \
        (text[:1] in "/~<FC" and IPY_FRAME.match(text) is not None and _ipython_frames_lead_to_exception(lines, i))


def _ipython_frames_lead_to_exception(lines: list[_Line], i: int) -> bool:
    """A headless IPython traceback (the paste starts at a location row): location and source rows,
    one of them the failing row's arrow, then an exception at column 0."""
    arrow = False
    for j in range(i, min(len(lines), i + MAX_HEADLESS)):
        text = lines[j].text
        if arrow and EXCEPTION.match(text):
            return True
        if IPY_ARROW.match(text):
            arrow = True
        elif text.strip() and not text[:1].isspace() and not IPY_FRAME.match(text):
            return False
    return False


def _frames_lead_to_exception(lines: list[_Line], i: int) -> bool:
    """A headless traceback: frames (and code lines) followed by an exception line, or running on
    to the end of what was read (a paste that lost the traceback's first line and stops before
    its exception: the frame trigger's window ends a few lines after the last frame, so the end
    of the lines is the end of the input). Such a traceback is read as cut (`cut_traceback_line`)."""
    end = min(len(lines), i + MAX_HEADLESS)
    quoted = False  # a frame's source line seen: frames, not a lone line that looks like one
    for j in range(i, end):
        text = lines[j].text
        if EXCEPTION.match(text):
            return True
        if FRAME.match(text) or not text.strip():
            continue
        if not text[:1].isspace():
            return False
        quoted = True
    return quoted and end == len(lines)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _at(text: str, base: int) -> str:
    """A line read from the traceback's own margin: pip and other wrappers indent a child's
    traceback as a whole ("Traceback" at column 6, its exception at column 6 too)."""
    return text[base:] if base and text[:base].isspace() else text


def _margin(lines: list[_Line], i: int) -> int:
    text = lines[i].text
    return _indent(text) if text.lstrip().startswith("Traceback") else 0


def _traceback_end(lines: list[_Line], i: int, base: int) -> int:
    j = i + 1
    while j < len(lines):
        text = _at(lines[j].text, base)
        if EXCEPTION.match(text):
            j += 1
            tail = 0
            while j < len(lines) and tail < MAX_EXCEPTION_TAIL and _at(lines[j].text, base)[:1].isspace() \
                    and not FRAME.match(lines[j].text):
                j, tail = j + 1, tail + 1
            k = j
            while k < len(lines) and not lines[k].text.strip():
                k += 1
            if k < len(lines) and CHAIN.match(_at(lines[k].text, base)):
                j = k + 1
                continue
            return j
        if text.strip() and not text[:1].isspace() and not TRACEBACK_START.search(text) \
                and not CHAIN.match(text) and not FRAME.match(text) and not text.startswith(RICH_BOX) \
                and not IPY_ARROW.match(text) and not IPY_FRAME.match(text):
            return j  # something else interrupted the traceback
        j += 1
    return j


def _traceback(records: list[Record], block: list[_Line], base: int) -> Event:
    frames = tuple(Frame(m["file"], int(m["line"]), (m["func"] or "").strip())
                   for ln in block if (m := FRAME.match(ln.text) or RICH_FRAME.match(ln.text))) \
        or _ipython_frames(block)
    exc_type = exc_msg = None
    for ln in block:
        text = _at(ln.text, base)
        if (m := EXCEPTION.match(text)) and not text[:1].isspace():
            exc_type, exc_msg = m["type"], m["msg"]
    # a frame's source line is indented deeper than the frame (an exception line is not)
    code = frozenset(i for i in range(1, len(block))
                     if FRAME.match(block[i - 1].text) and _indent(block[i].text) > _indent(block[i - 1].text)
                     and not FRAME.match(block[i].text))
    said = max(code) if code and exc_type is None and exc_msg is None else None
    if said is not None and raised_error(block[said].text) is None:
        said = None
    return _event(records, block, EventKind.traceback, exc_type, exc_msg, frames, code, said)


def _ipython_frames(block: list[_Line]) -> tuple[Frame, ...]:
    """IPython's frames: its location rows, the line number from the row or (IPython 7 and older) from the
    arrow of the source rows below it."""
    frames = []
    for n, ln in enumerate(block):
        if not (m := IPY_FRAME.match(ln.text)):
            continue
        if m["old_file"]:
            arrow = next((a for later in block[n + 1:n + 40] if (a := IPY_ARROW.match(later.text))), None)
            frames.append(Frame(m["old_file"], int(arrow["line"]) if arrow else 0, m["old_func"]))
        elif m["cell_line"]:
            frames.append(Frame("<cell>", int(m["cell_line"]), "<module>"))
        else:
            frames.append(Frame(m["file"], int(m["line"]), m["func"]))
    return tuple(frames)


def _dialog_end(lines: list[_Line], i: int) -> int:
    """The end of an older ComfyUI dialog whose message starts at line i: the message runs to
    the first frame; each frame may be followed by its code line and carets. Without frames
    near, the dialog is its heading and the message's first line."""
    j = i
    while j < len(lines) and j - i < MAX_EXCEPTION_TAIL and not FRAME.match(lines[j].text):
        j += 1
    if j >= len(lines) or not FRAME.match(lines[j].text):
        return min(i + 1, len(lines))
    tail = 0
    while j < len(lines):
        text = lines[j].text
        if FRAME.match(text):
            tail = 0
        elif _CARETS.match(text):
            pass
        elif tail < COMFY_FRAME_TAIL - 1 and text.strip() and not _MARKDOWN_HEADING.match(text):
            tail += 1
        else:
            break
        j += 1
    return j


def _report_end(lines: list[_Line], i: int) -> int:
    """The end of an Error Report's exception, from the line after its message: the message's
    other lines, then "## Stack Trace" and its frames (fenced or not), up to the fence's end, the
    next heading ("## System Information" and "## Logs" are read as lines of their own) or, in
    an unfenced trace, the first line that is neither a frame nor indented."""
    j, trace, fenced = i, False, False
    while j < len(lines):
        raw = lines[j].text
        text = raw.strip()
        if text.startswith("```"):
            if fenced:
                return j + 1
            fenced = True
        elif text == "## Stack Trace":
            trace = True
        elif _MARKDOWN_HEADING.match(text) or (not trace and j - i >= MAX_EXCEPTION_TAIL) \
                or (trace and not fenced and not raw[:1].isspace() and not FRAME.match(raw)):
            return j
        j += 1
    return j


def _dialog(records: list[Record], block: list[_Line], message_at: int) -> Event:
    """A ComfyUI dialog as a traceback: its exception is the message line (with its type when
    the dialog names one), its frames are the lines that follow; code lines are the others."""
    message = block[message_at].text.strip() if message_at < len(block) else ""
    m = EXCEPTION.match(message)
    exc_type, exc_msg = (m["type"], m["msg"]) if m and m["msg"] is not None else (None, message or None)
    first_frame = next((k for k, ln in enumerate(block) if FRAME.match(ln.text)), len(block))
    frames = tuple(Frame(f["file"], int(f["line"]), (f["func"] or "").strip())
                   for ln in block if (f := FRAME.match(ln.text)))
    code = frozenset(k for k in range(first_frame, len(block)) if not FRAME.match(block[k].text))
    return _event(records, block, EventKind.traceback, exc_type, exc_msg, frames, code)


def _terminate(records: list[Record], block: list[_Line], exc_type: str) -> Event:
    msg = next((m["msg"] for ln in block if (m := WHAT.match(ln.text))), None)
    return _event(records, block, EventKind.cpp_terminate, exc_type, msg)


def _event(records: list[Record], block: list[_Line], kind: EventKind, exc_type: str | None = None,
           exc_msg: str | None = None, frames: tuple[Frame, ...] = (),
           code: frozenset[int] = frozenset(), raise_line: int | None = None) -> Event:
    if len(block) == 1:  # most events: one line of one record
        return Event(kind=kind, records=(records[block[0].record],), exc_type=exc_type, exc_message=exc_msg,
                     frames=frames, text=block[0].text, line_owner=(0,), code_lines=code)
    order: dict[int, int] = {}
    for ln in block:
        order.setdefault(ln.record, len(order))
    return Event(kind=kind, records=tuple(records[i] for i in order), exc_type=exc_type,
                 exc_message=exc_msg, frames=frames, text="\n".join(ln.text for ln in block),
                 line_owner=tuple(order[ln.record] for ln in block), code_lines=code, raise_line=raise_line)


# The source line of a cut traceback's innermost frame, when it raises an exception built from one
# string (a literal or an f-string, whose fields stay as written): the exception line that would
# have followed, "<Type>: <message>"
_RAISE = re.compile(r"raise\s+(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\(\s*[rRfFuU]{0,2}"
                    r"(?P<q>\"|')(?P<msg>(?:\\.|(?!(?P=q)).)+)(?P=q)\s*\)(?:\s+from\s+[\w.]+)?\s*$")


def raised_error(code: str) -> str | None:
    """The exception line a `raise X("message")` source line stands for, or None."""
    m = _RAISE.fullmatch(code.strip())
    return f"{m['type']}: {m['msg']}" if m else None
