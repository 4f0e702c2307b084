"""Errors that no pattern knows are reported, never dropped: the final lines of tracebacks,
C++ terminate messages and exception-shaped lines that no pattern matched are masked
(numbers, hex, paths) and grouped by template. Each becomes a finding of kind `unrecognised`
that says so plainly, quotes the error, names the program whose code raised it (the
innermost traceback frame of a known project) and the next diagnostic step. It ranks below
the findings that explain a cause and above those that only describe consequences (a
killed process, a failed unit, an engine that did not start): the unknown error is the lead.
The knowledge base later adds the nearest past incidents by meaning, offered as such.

A service that fails without an error-shaped line still said something: when systemd reports
its process exited with a failure status and the service's own lines just before hold no error
and no known pattern, its last line (not a routine INFO one) is reported the same way, saying
that it is the last thing the program logged before the unit failed."""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from analyzer.choices import Confidence, FindingKind, Severity
from analyzer.clock import iso, to_seconds
from analyzer.events import (
    EXCEPTION,
    FRAME,
    IPY_ARROW,
    RICH_FRAME,
    RUST_PANIC_AT,
    VLLM_HEADER_AFTER_LEVEL,
    raised_error,
)
from analyzer.library.rules import Emitter
from analyzer.mismatch import INSTALLED_PACKAGE, Mismatch, package_of, read_mismatch
from analyzer.models import Event, EventKind, Evidence, Finding, Frame, Record, whole_line
from analyzer.scan import (
    BARE_ERROR,
    CUDA_CHECK,
    FAILED_CALL,
    FFMPEG_COMPONENT,
    FFMPEG_FAILED,
    GIT_APPLY_FAILED,
    GO_FATAL_SIGNAL,
    GO_LOG_DATE,
    K8S_FAILED_REASON,
    KUBELET_SANDBOX,
    NIX_BUILD_FAILED,
    SHELL_NOT_FOUND,
    TENSORPIPE_THROW,
    UCX_LOG_HEAD,
    USAGE_ERROR,
)

MAX_TEMPLATES = 200  # memory bound on a huge log full of unknown errors
REPORTED = 3  # unrecognised errors reported, most frequent first
MAX_JOINED = 600  # characters of an error line beyond which its indented continuation lines are not added

_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+"), "<path>"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)*"), "<n>"),
)
# warnings are not errors: a healthy service logs them
_NOT_AN_ERROR = re.compile(r"(?:Warning|DeprecationWarning|FutureWarning|UserWarning)\b")
# Error lines of other shapes: a compiler's (gcc, nvcc), a command-line tool's (docker, podman,
# ollama and other cobra CLIs, also after an emoji), Open MPI's fatal error handler, a shell's
# "command not found", glog's ERROR/FATAL lines (Triton Inference Server, XLA, libnvidia-container,
# Kubernetes components), apptainer's `ERROR  :`, NCCL's WARN lines (NCCL warns only when something
# failed), and a Go error chain printed bare: Go's convention is a lowercase
# "error <doing what>: <cause>: <cause>" (fmt.Errorf wrapping, e.g. the NVIDIA device plugin's
# and container toolkit's), at the start of the message. Any of them may follow
# the head Go's standard logger writes: a prefix the program sets (nvidia-docker 1.x: its name and
# " | "), then the date and time (scan.py's GO_LOG_DATE)
_GO_LOG = r"(?:[\w./-]+ \| )?" + GO_LOG_DATE
_MSBUILD = r"(?:\d+>)?"  # MSBuild's project number before a tool's line, in a parallel build
_MSBUILD_HEAD = re.compile(r"^\d+>(?=\S)")
_GO_LOG_HEAD = re.compile("^" + _GO_LOG)
_ERROR_LINE = re.compile(f"(?:{_GO_LOG})?"
                         r"(?:\S+?:\d+(?::\d+)?: (?:fatal )?error: |(?:\S+: )?fatal error: |nvcc fatal\s*: "
                         # nvcc's front end and MSVC put the line in parentheses ("k.cu(12): error: ...",
                         # "C:/x/config.h(78): fatal error C1189: ..."), MSVC's number after the word, MSBuild
                         # a project's "1>" before it; MSVC's linker: "LINK : fatal error LNK1181: ..."
                         r"|" + _MSBUILD + r"(?:\S[^\n]*?\(\d+(?:,\s?\d+)?\)\s?|LINK\s)"
                         r": (?:fatal )?error(?: [A-Z]{1,3}\d{4})?: "
                         r"|(?:docker: )?Error response from daemon: "
                         # "Error: " after the emoji some tools put before it (CuTe DSL's "❌ Error: ")
                         r"|(?:[\u2600-\u27BF\U0001F300-\U0001FAFF]\uFE0F?\s*)?Error: "
                         r"|(?=error [a-z]+ing\b[^:\n]{0,80}: \S)"
                         # Open MPI's MPI_ERRORS_ARE_FATAL handler: "*** An error occurred in MPI_Init_thread"
                         r"|\*\*\* (?=An error occurred in \S)"
                         # git apply's refusal of a patch (scan.py)
                         r"|(?=" + GIT_APPLY_FAILED + ")"
                         r"|[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] |(?:ERROR|FATAL) *: +"
                         # a shell (bash, dash, a script) that cannot find the command it was to run
                         r"|(?:/[\w.-]+)*/?(?:bash|sh|dash|zsh|ksh|[\w.-]+\.sh)(?:: line \d+|: \d+)?: "
                         r"(?=" + SHELL_NOT_FOUND + r"\s*$)"
                         # a rejected command line (scan.py), quoted with the program that names itself
                         r"|(?=(?:[\w./-]+: )?(?:" + USAGE_ERROR + r"))"
                         # a failed operation as glibc's error()/perror() print it (scan.py)
                         r"|(?=(?:[\w./-]*/)?(?!(?:warning|info|notice|debug):)" + FAILED_CALL + r"\s*$)"
                         r"|.*?\bNCCL WARN )(?P<msg>\S.*)")
# A failed C/C++ assert(): glibc's "[prog: ]file:line: function: Assertion `expr' failed." (the
# function may be a long C++ signature), and a CUDA kernel's device-side assert, which names the
# block and thread instead; the expression is the message, where it failed the context
_ASSERT = re.compile(r"(?:[\w./+-]+: )?(?P<src>[^\s:]+:\d+): (?:.*?: )?(?:block: \[[\d,]+\], thread: \[[\d,]+\] )?"
                     r"Assertion [`'](?P<expr>.+)[`'] failed\.?\s*$"
                     # FFmpeg's av_assert0 (libavutil/avassert.h: "Assertion %s failed at %s:%d") and test
                     # macros written after it (GDRCopy's sanity test quotes the expression)
                     r"|Assertion (?P<q>[\"'`]?)(?P<expr2>.+?)(?P=q) failed at (?P<src2>[^\s:]+:\d+)\s*$")
_BARE_ERROR = re.compile(BARE_ERROR)  # scan.py: the message is on the next line
_NCCL_WARN = re.compile(r"^.*?\bNCCL WARN ")  # host:pid:tid [dev] file.cc:line: the prefix varies
# Error lines whose prefix says only "this is an error": the title quotes the message after it.
# Each shape is a format of a program in the stack: ptxas/nvlink/cicc ("ptxas fatal   : ..."), a
# C++ exception's what() line cut from its terminate message, TensorRT-LLM's and TensorRT's
# loggers ("[TensorRT-LLM][ERROR] ", its Python logger's "[TRT-LLM] [RANK 0] [E] " in multi-rank
# runs, trtexec's "[E] "), Slurm's "[time] [job] error: ", a tool's
# "<prog>: error: " (or "<prog>[pid]: ERROR: " where a syslog line lost its date), a C++ check
# that names its file ("x.cc:61: InternalError: ..."), Rust and Go panics, the JVM's uncaught
# exception, PostgreSQL's FATAL and PANIC, ROCm's HIP runtime at AMD_LOG_LEVEL's error level, APT's "E: ";
# a line that ends in a colon introduces the lines after it and is not the error (except a C++
# check's, cut short). A healthy service's routine "error:" lines (sshd's "error: Received
# disconnect") have none of these shapes.
_PREFIXED = re.compile(
    r"(?:\s*what\(\):\s+"
    r"|(?P<tool>nvcc|ptxas|nvlink|cicc|fatbinary)\b[^\n]{0,200}?\b(?:fatal|error)\s+:\s+"
    r"|(?:\[[^\]\n]{1,40}\]\s*)?\[(?P<lib>TensorRT-LLM|TRT-LLM|TRT|TensorRT)\]\s*(?:\[RANK \d+\]\s*)?"
    r"\[(?:ERROR|E|FATAL|F)\]\s+"
    r"|\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\]\s+\[[EF]\]\s+"
    r"|\[\d{4}-\d\d-\d\dT[\d:.]+\]\s+(?:\[[\w.]+\]\s+)?error:\s+"
    r"|(?P<prog>[A-Za-z][\w.-]*)(?::\s+error|\[\d+\]:\s+(?:ERROR|FATAL)\s*):\s+"
    r"|(?P<src>\S+\.(?:cc|cpp|cu|cuh|h|hpp|c|rs|go):\d+):\s+(?=[A-Z]\w*(?:Error|Exception):\s)"
    r"|thread\s+'[^'\n]*'\s+panicked\s+at\s+"
    r"|Exception in thread \"[^\"\n]{0,200}\" (?=[\w.$]+(?:Error|Exception)\b)"  # the JVM's uncaught exception
    # PostgreSQL's FATAL and PANIC (the session or the server ends) after its default log_line_prefix
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \w+ \[\d+\] (?:\S+ )?(?P<pg>FATAL|PANIC):\s+"
    r"|panic:\s+"
    r"|(?P<apt>E):\s+(?=[A-Z])"  # APT's errors (apt-get, apt): "E: Unable to locate package ...", "E: Version ..."
    # the Go runtime's crash on a fatal signal outside Go code (cgo): its signal table's name for it
    # (runtime/sigtab_linux_generic.go), then "PC=0x... m=N sigcode=N" and the goroutines' stacks
    r"|(?P<go>)(?=" + GO_FATAL_SIGNAL + r"\s*$)"
    # ROCm's HIP runtime (clr) with AMD_LOG_LEVEL set: ":1:" is its error level, then file, line, time
    r"|:1:(?P<hip>[\w.]+\.(?:cpp|hpp|h))\s*:\s*\d+\s*:\s*\d+ us:\s+(?:\[pid:\d+ tid:\s?0x[0-9a-fA-F]+\]\s+)?"
    # FFmpeg's av_log behind its component prefix, where the line says something failed (scan.py)
    r"|" + FFMPEG_COMPONENT + "(?=" + FFMPEG_FAILED + ")"
    r")(?P<msg>\S.*)")
# Lines that only a logger's level marks as errors: vLLM ("ERROR 05-03 10:00:00 [file.py:12] "),
# Python's basicConfig ("ERROR:root:") and default formats, gunicorn ("[time] [pid] [ERROR] "),
# loguru ("| ERROR | mod:fn:12 - "), Ray
# ("\tERROR file.py:12 -- "), Rust's tracing (TGI: "...Z ERROR text_generation_router: ") and
# TensorFlow/XLA's glog with a date. These programs also log a traceback line by line at that
# level (indented after the prefix) and introduce what follows ("Last error:"), and they log
# context at error level; so such a line counts only when it is not indented and not an
# introduction, and is reported only when no finding explains a cause (`weak`).
_LOGGED = re.compile(
    r"(?:(?:ERROR|CRITICAL) " + VLLM_HEADER_AFTER_LEVEL +
    r"|(?:ERROR|CRITICAL):[\w.]*:"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - (?:[\w.]+ - )?(?:ERROR|CRITICAL) - "
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)? *\| *(?:ERROR|CRITICAL) *\| *\S+ +- "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s+(?:ERROR|CRITICAL) \S+:\d+ -- "
    r"|(?:\d{4}-\d\d-\d\dT[\d:.]+Z +)?ERROR +(?:[\w-]+: +)?[a-z_][\w:]*: "
    r"|\d{4}-\d\d-\d\d[ T][\d:.]+: +[EF] +\S+:\d+\] "
    # a bracketed level after up to two bracketed fields: gunicorn's "[time] [pid] [ERROR] ", NVIDIA
    # Fabric Manager's "[time] [ERROR] [tid N] ", and the same with the time cut from a paste
    r"|(?:\[[^\]\n]{1,40}\] ){0,2}\[(?:ERROR|FATAL|CRITICAL)\] +(?:\[tid \d+\] +)?"
    # UCX's logger at its error level (scan.py's UCX_LOG_HEAD says its format)
    r"|" + UCX_LOG_HEAD +
    r")(?P<msg>\S.*[^:\s])\s*$")
# Error lines quoted whole: the OCI runtime's failure (docker and podman print it after their own
# prefix, which a paste often lacks)
_WHOLE = re.compile(r"OCI runtime (?:create|exec|start) failed: \S|Conversion failed!$"  # and ffmpeg's last line
                    r"|" + KUBELET_SANDBOX + r"\S"  # and kubelet's (scan.py)
                    r"|" + TENSORPIPE_THROW + r"\S"  # and TensorPipe's failed check (scan.py)
                    r"|" + NIX_BUILD_FAILED)  # and Nix's failed build (scan.py)
# A CUDA program's check line (scan.py), wherever a program's own prefix puts it in the line: quoted
# from its start
_CUDA_CHECK = re.compile(CUDA_CHECK)
# A Kubernetes Warning event that says something failed (scan.py), in kubectl describe's Events table
# (type, reason, age, from, message) or `kubectl get events` (last seen, type, reason, object, message):
# the reason and the message are the error
_K8S_EVENT = re.compile(r"(?:\S+\s+)?Warning\s+(?P<reason>" + K8S_FAILED_REASON + r")\s+"
                        r"(?:[a-z][\w.-]*/\S+|\S+(?: \(x\d+ over \S+\))?\s+[\w.-]+(?:, ?[\w.-]+)?)\s+(?P<msg>\S.*)$")
# Go's logrus and its key=value lines (nvidia-ctk, nvidia-container-runtime, containerd, dockerd):
# the level field marks the error, or the message says it is one: logrus' Printf logs at level info,
# and a program that ends with `log.Printf("Error: %v", err)` (the device plugin's config-manager,
# cmd/config-manager/main.go) prints its fatal error as msg="Error: ..."; msg= (and error=) hold
# it; a logger's line, so weak
_LOGFMT = re.compile(r'(?:^|\s)(?:level=(?:error|fatal|panic)\s|msg="(?:Error|ERROR|error): )')
_LOGFMT_FIELD = re.compile(r'\b(?P<key>msg|error|err)=(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<v>\S+))')
# zap's console encoder (controller-runtime's logger, so most Kubernetes operators: the GPU Operator,
# the Network Operator, DRA drivers): time (epoch seconds, "1.665e+09", or ISO), level, the logger's
# name, the caller, the message and the fields as JSON, tab-separated; the level marks the error, the
# message and the fields' "error" hold it. A logger's line, so weak
_ZAP = re.compile(r"^(?:\d+(?:\.\d+)?(?:e\+\d\d)?|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?)"
                  r"\t(?:ERROR|DPANIC|PANIC|FATAL)\t(?P<rest>.+)$")
# A JSON log line (zap's and logrus's JSON encoders, slog's JSONHandler, Python's JSON formatters)
# whose level field says error or worse
_JSON_LINE = re.compile(r'^\{.*"(?:level|severity|levelname|lvl)"\s*:\s*"(?i:error|fatal|panic|dpanic|critical)"')
_JSON_MESSAGE = ("msg", "message")
_JSON_ERROR = ("error", "err", "exception")
_GLOG = re.compile(r"^[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ (?P<file>\S+:\d+)\] ")
# systemd's line when a service's process failed (src/core/service.c, "Main process exited" and
# "Control process exited" for ExecStartPre= and the like): an exit status other than 0, or a
# signal. The service's own last line before it, when no error shape marks one, is its last word
# on why: a daemon that gives up prints one plain sentence (Fabric Manager, persistenced, dockerd).
_UNIT_EXIT = re.compile(r"(?P<unit>[\w@.\\-]{1,256}?)(?:\.service)?: (?:Main|Control) process exited, "
                        r"code=(?:exited, status=(?!0/)|killed, status=|dumped, status=)(?P<status>\d+(?:/\w+)?)")
LAST_WORDS = 12  # lines before the exit looked at: the region read before a hit (regions.BEFORE)
# a syslog line pasted as text, after its time stamp (any date form): host, program[pid], message
_SYSLOG_TAIL = re.compile(r"^.{0,24}?\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d)? [\w.-]+ "
                          r"(?P<ident>[\w.@-]+?)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)")
_NOT_LAST_WORDS = re.compile(r"\b(?:INFO|DEBUG|TRACE|NOTICE)\b|level=(?:info|debug|trace)\b")
_NAME_PART = re.compile(r"[a-z][a-z0-9]{4,}")
_TOO_COMMON = {"nvidia", "server", "service", "daemon", "python", "python3"}


def mask(text: str) -> str:
    for rx, token in _MASKS:
        text = rx.sub(token, text)
    return " ".join(text.split())


def error_line(event: Event) -> str | None:
    """The line that names an unknown error, if the event has one."""
    if event.kind in (EventKind.traceback, EventKind.cpp_terminate) and event.exc_type:
        if _NOT_AN_ERROR.search(event.exc_type):
            return None
        return f"{event.exc_type}: {event.exc_message or ''}".strip().rstrip(":")
    if event.kind is EventKind.traceback and event.exc_message:  # a dialog that names no type
        return event.exc_message
    if event.kind is EventKind.nccl_block:  # a rank's run of NCCL lines: its first WARN is the error
        return next((_NCCL_WARN.sub("NCCL WARN ", line.strip()) for line in event.text.split("\n")
                     if "NCCL WARN " in line), None)
    return _line_error(event) if event.kind is EventKind.line else None


def _line_error(event: Event) -> str | None:
    """The error a one-line event names: an exception, an assert, an error shape of a program."""
    first = event.text.split("\n")[0].strip()
    m = EXCEPTION.match(first)
    if m and ": " in first and not _NOT_AN_ERROR.search(m["type"]):
        return first
    if "Assertion " in first and (a := _ASSERT.match(first)):
        return f"Assertion `{a['expr'] or a['expr2']}' failed at {a['src'] or a['src2']}"
    if _ERROR_LINE.match(first):
        first = _MSBUILD_HEAD.sub("", _GO_LOG_HEAD.sub("", first, count=1), count=1)
        return _NCCL_WARN.sub("NCCL WARN ", _GLOG.sub(r"\g<file>: ", first))
    if (m := _PREFIXED.match(first)) and (m["src"] or not first.endswith(":")):  # not an introduction
        return _unprefixed(m)
    if (m := RUST_PANIC_AT.search(first)) and len(lines := event.text.split("\n")) > 1 and lines[1].strip():
        return f"panicked at {m['at']}: {lines[1].strip()}"
    if _WHOLE.match(first):
        return first
    if "error" in first and (m := _CUDA_CHECK.search(first)):  # every form holds the word
        return first[m.start():].rstrip()
    if "Warning" in first and (m := _K8S_EVENT.match(first)):
        return f"{m['reason']}: {m['msg'].strip()}"
    return None


# GNU make's line for a recipe that failed (src/job.c child_error: "*** [<makefile>:<line>: <target>]
# Error <n>", make 3.x "*** [<target>] Error <n>"), after "make[<level>]: "; "(ignored)" under -i is no
# failure. It says which target's command failed, not why (the compiler's own error line above does):
# a weak lead, so a build that failed without a compiler error shape is not silent
MAKE_CASCADE = "make: ["  # the start of every failed-recipe lead, and their one template
_MAKE_FAILED = re.compile(r"(?:[\w.-]*/)?g?make(?:\[\d+\])?: \*\*\* (?P<msg>\[.+\] Error \d+)\s*$")


def logged_error_line(event: Event) -> str | None:
    """A line that only its logger's level marks as an error (a weak lead), if the event is one."""
    if event.kind is not EventKind.line:
        return None
    first = event.text.split("\n")[0].strip()
    if m := _LOGGED.match(first):
        return m["msg"].strip()
    if "*** [" in first and (m := _MAKE_FAILED.match(first)):
        return "make: " + m["msg"]
    if _LOGFMT.search(first):
        return _logfmt(first)
    if "\t" in first and (m := _ZAP.match(first)):
        *names, last = m["rest"].split("\t")
        fields = _json_object(last) if last.startswith("{") else None
        message = names[-1] if fields is not None and names else last
        return _message_and_error(message, fields or {})
    if first[:1] == "{" and _JSON_LINE.match(first) and (fields := _json_object(first)):
        message = next((v for k in _JSON_MESSAGE if isinstance(v := fields.get(k), str)), "")
        return _message_and_error(message, fields)
    return None


def _json_object(text: str) -> dict[str, object] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _message_and_error(message: str, fields: Mapping[str, object]) -> str | None:
    """A structured line's message with its error field ("Reconciler error: no matches for kind ..."),
    on one line."""
    error = next((v for k in _JSON_ERROR if isinstance(v := fields.get(k), str) and v), "")
    text = f"{message}: {error}" if message and error and error not in message else message or error
    return " ".join(text.split()) or None


def cut_traceback_line(event: Event) -> str | None:
    """A Python traceback that ends before its exception line (the paste or the log was cut, or the
    process died mid-print): the source line its innermost frame quotes is all there is to go on,
    a weak lead (`Unexplained.cut`) worded as such."""
    if event.kind is not EventKind.traceback or event.exc_type or event.exc_message or not event.frames:
        return None
    lines = event.text.split("\n")
    # the source line quoted under the innermost frame, else the innermost frame's own row (IPython's
    # arrow row under it names the failing source line)
    quoted = next((lines[i].strip() for i in sorted(event.code_lines, reverse=True)), None)
    return quoted or next((line.strip() for line in reversed(lines)
                           if FRAME.match(line) or IPY_ARROW.match(line) or RICH_FRAME.match(line)), None)


def _holder(event: Event, line: str) -> Record:
    """The record that says the error: a traceback's exception line is its last, a ComfyUI
    dialog's message comes before its frames."""
    needle = event.exc_message or line
    return next((r for r in reversed(event.records) if needle in r.message), event.records[-1])


def _unprefixed(m: re.Match[str]) -> str:
    """The message after its prefixes (a what() line holds TensorRT-LLM's own), named after the
    tool that printed it where the prefix names one."""
    who = (m["tool"] or m["prog"] or m["lib"] or (m["pg"] and f"PostgreSQL {m['pg']}") or (m["hip"] and "HIP runtime")
           or (m["ff"] and f"FFmpeg {m['ff']}") or (m["apt"] and "apt")
           or (m["go"] is not None and "Go runtime"))
    for _ in range(3):
        if not (inner := _PREFIXED.match(m["msg"])):
            break
        m = inner
        who = who or m["tool"] or m["prog"] or m["lib"]
    return f"{who}: {m['msg'].strip()}" if who else m["msg"].strip()


# the escapes of a quoted logfmt value (logrus quotes with Go's %q): a message that held a line break
# or a tab (a command's captured output) reads as words
_LOGFMT_ESCAPE = re.compile(r'\\(["\\nrt])')
_ESCAPED = {'"': '"', "\\": "\\", "n": " ", "r": " ", "t": " "}


def _logfmt(line: str) -> str | None:
    """`msg="..."` with its `error="..."` when both are there, unquoted."""
    fields = {m["key"]: _LOGFMT_ESCAPE.sub(lambda e: _ESCAPED[e[1]], m["q"] if m["q"] is not None else m["v"])
              for m in _LOGFMT_FIELD.finditer(line)}
    return _message_and_error(fields.get("msg", ""), fields)


@dataclass
class Unexplained:
    template: str
    text: str
    evidence: Evidence
    frame: Frame | None = None  # the innermost frame, where it was raised
    logger: str | None = None  # the journal's unit or program name of the line, when it has one
    count: int = 1
    weak: bool = False  # marked an error only by its logger's level: reported when nothing explains a cause
    exit: str | None = None  # the unit failure it preceded: "nvidia-fabricmanager.service exited with status 1/FAILURE"
    cut: bool = False  # a traceback without its exception line: the last lead, after every other
    from_raise: bool = False  # such a traceback whose innermost source line raises it with its message
    first: float | None = None  # seconds of the first and last occurrences whose time is known
    last: float | None = None

    def seen_at(self, seconds: float | None) -> None:
        if seconds is not None:
            self.first = seconds if self.first is None else min(self.first, seconds)
            self.last = seconds if self.last is None else max(self.last, seconds)


@dataclass
class Collector:
    items: dict[str, Unexplained] = field(default_factory=dict)
    # the latest events per input and host, with whether a pattern or an error shape already
    # took them: who logged them is worked out only when a unit fails (`_last_words`)
    said: dict[tuple[str, str | None], deque[tuple[Event, bool]]] = field(default_factory=dict)
    bare: dict[tuple[str, str | None], str] = field(default_factory=dict)  # a bare "Error:" just read, per input
    # an error line just kept that ends in a colon, per input: its message goes on in the indented
    # lines after it (a chain of Go errors wrapped by the paste), which are read as its own text
    open: dict[tuple[str, str | None], str] = field(default_factory=dict)

    def add(self, events: Iterable[Event], matched_lines: set[tuple[str, int]]) -> None:
        for event in events:
            matched = any((r.path, r.line) in matched_lines for r in event.records)
            last, first = event.records[-1], event.text.partition("\n")[0]
            head = first.strip()
            bare = self.bare.pop((last.path, last.host), None)
            after_bare = f"{bare} {head}" if bare and event.kind is EventKind.line else None
            opened = self.open.pop((last.path, last.host), None)
            taken = bool(opened and not matched and event.kind is EventKind.line and first[:1].isspace() and head
                         and self._go_on(opened, head, (last.path, last.host)))
            taken = taken or matched or self._add_error(event, after_bare)
            if event.kind is EventKind.line and _BARE_ERROR.fullmatch(head):
                self.bare[(last.path, last.host)] = head
            if event.kind is EventKind.line and (m := _unit_exit(first)):
                self._last_words(event, m["unit"], m["status"])
            else:  # a traceback counts too: it is the lead, not the line before it
                self.said.setdefault((last.path, last.host), deque(maxlen=LAST_WORDS)).append((event, taken))

    def _add_error(self, event: Event, after_bare: str | None = None) -> bool:
        """`after_bare`: the line before was a bare "Error:" and this line is its message (dnf's
        format): the two as one error line, when the line is no error of its own."""
        line, weak = error_line(event) or after_bare, False
        if line is None:
            line, weak = logged_error_line(event), True
        if line is None and (line := cut_traceback_line(event)):
            if raised := raised_error(line):  # the raise statement names the exception: as good as its line
                self._keep(event, raised, False, from_raise=True)
            else:
                self._keep(event, line, True, cut=True)
            return True
        if line is None:
            return False
        self._keep(event, line, weak)
        return True

    def _keep(self, event: Event, line: str, weak: bool, exit: str | None = None, logger: str | None = None,
              cut: bool = False, from_raise: bool = False) -> None:
        # each make above a failed one reports it again: one lead, the innermost (first) failure
        template = MAKE_CASCADE if line.startswith(MAKE_CASCADE) else mask(line)
        when = to_seconds(event.records[-1].time)
        if template in self.items:
            self.items[template].count += 1
            self.items[template].seen_at(when)
        elif len(self.items) < MAX_TEMPLATES:
            last = _holder(event, line)
            self.items[template] = Unexplained(template, line, Evidence(path=last.path, line=last.line,
                                                                         text=whole_line(line)),
                                               event.frames[-1] if event.frames else None,
                                               logger=logger or last.unit, weak=weak, exit=exit, cut=cut,
                                               from_raise=from_raise)
            self.items[template].seen_at(when)
            if not weak and not cut and line.endswith(":"):
                end = event.records[-1]
                self.open[(end.path, end.host)] = template

    def _go_on(self, template: str, more: str, where: tuple[str, str | None]) -> bool:
        """An indented line after an error line that ended in a colon: the rest of its message."""
        item = self.items.get(template)
        if item is None or len(item.text) > MAX_JOINED:
            return False
        item.text = f"{item.text} {more}"
        if more.endswith(":"):
            self.open[where] = template
        return True

    def forget(self, event: Event) -> None:
        """A pattern took the event after all (analyzer.cut): it is not an unknown error."""
        lines = {(r.path, r.line) for r in event.records}
        for template, item in list(self.items.items()):
            if (item.evidence.path, item.evidence.line) in lines:
                item.count -= 1
                if item.count <= 0:
                    del self.items[template]

    def _last_words(self, exit_event: Event, unit: str, status: str) -> None:
        """A failed unit whose service logged no error just before: its last line is the lead."""
        end = exit_event.records[0]
        recent = [(e, taken, *_speaker(e)) for e, taken in self.said.get((end.path, end.host), ())
                  if end.line - LAST_WORDS <= e.first_line < end.line]
        recent = [r for r in recent if not _is_systemd(r[2])]  # the service's lines, not systemd's or the kernel's
        said = [r for r in recent if _related(r[2], unit)]
        if not said and len({who or e.records[-1].process for e, _, who, _ in recent}) == 1:
            said = recent  # one program spoke in the window: the unit's, whatever its name
        if not said or any(taken for _, taken, _, _ in said):
            return  # nothing to go on, or an error or a known pattern is already the lead
        event, _taken, who, line = said[-1]
        if len(line) < 12 or _NOT_LAST_WORDS.search(line):
            return
        self._keep(event, f"{who}: {line}" if who else line, False,
                   exit=f"{unit}.service exited with status {status} (line {end.line})", logger=who)

    def merge(self, other: Collector) -> None:
        """Fold in the collector of another input read elsewhere (a `--jobs` worker)."""
        for template, item in other.items.items():
            if template in self.items:
                self.items[template].count += item.count
                self.items[template].seen_at(item.first)
                self.items[template].seen_at(item.last)
            elif len(self.items) < MAX_TEMPLATES:
                self.items[template] = item

    def top(self, explained: bool = False) -> list[Unexplained]:
        """Errors the program raised or printed before lines only a logger or make marks (a make
        cascade repeats one compiler error's failure up the tree), then the most frequent first;
        of equals, the earliest (in a cascade the first error leads). Weak leads only when no
        finding `explained` a cause."""
        ordered = sorted((u for u in self.items.values() if not (explained and u.weak)),
                         key=lambda u: (u.cut, u.weak, -u.count, u.evidence.path, u.evidence.line))
        return ordered[:REPORTED]


def _unit_exit(text: str) -> re.Match[str] | None:
    """systemd's exit line in `text`, looked for only around its fixed words (a line can be huge)."""
    at = text.find(" process exited, code=")
    return None if at < 0 else _UNIT_EXIT.search(text[max(0, at - 300):at + 80])


def _speaker(event: Event) -> tuple[str | None, str]:
    """The program that logged an event and its first line's message (a pasted syslog line
    carries both in its text)."""
    record, text = event.records[-1], event.text.split("\n")[0].strip()
    if record.unit is None and (m := _SYSLOG_TAIL.match(text)):
        return m["ident"], m["msg"].strip()
    return record.unit, text


def _is_systemd(program: str | None) -> bool:
    return program is not None and (program == "kernel" or program.startswith("systemd") or program == "init.scope")


def _related(program: str | None, unit: str) -> bool:
    """Does `program` (a syslog identifier or a unit) name the service `unit`? The identifier is the
    binary's name, which shares the unit's name or a distinctive part of it (nv-fabricmanager
    for nvidia-fabricmanager.service, dockerd for docker.service)."""
    if not program:
        return False
    p, u = program.lower().removesuffix(".service"), unit.lower().split("@")[0]
    if p.startswith(u) or u.startswith(p):
        return True
    return bool(set(_NAME_PART.findall(p)) & set(_NAME_PART.findall(u)) - _TOO_COMMON)


def _emitter(frame: Frame | None, emitters: Mapping[str, Emitter]) -> tuple[str, Emitter] | None:
    if frame is None:
        return None
    pkg = package_of(frame.file, emitters)
    return (pkg, emitters[pkg]) if pkg is not None and pkg in emitters else None


def _where(frame: Frame) -> str:
    m = INSTALLED_PACKAGE.search(frame.file)
    short = frame.file[m.start("pkg"):] if m else frame.file
    return f"{short}, line {frame.line}, in {frame.function}"


class Leads(NamedTuple):
    errors: list[Finding]  # unknown errors: after the causes, before the consequences
    cut: list[Finding]  # tracebacks cut before their exception: after every other finding


def unrecognised(collector: Collector, emitters: Mapping[str, Emitter], explained: bool = False) -> Leads:
    """The unknown errors as findings; with `explained` (a finding names a cause), only the
    errors the program itself raised, not the lines its logger merely marked."""
    out, cut = [], []
    for u in collector.top(explained):
        who = _emitter(u.frame, emitters)
        if u.cut and u.frame:
            cut.append(_cut_traceback(u, who))
            continue
        if u.frame and u.from_raise:
            raised = (" The traceback stops before its exception line; this is the exception that the raise "
                      f"statement of its innermost frame, {_where(u.frame)}"
                      + (f" ({who[1].project})" if who else "") + ", names.")
        elif u.frame:
            raised = f" It was raised in {_where(u.frame)}" + (f" ({who[1].project})." if who else ".")
        elif u.exit:
            raised = f" It is the last line {u.logger or 'the service'} logged before {u.exit}."
        else:
            raised = f" It was logged by {u.logger}." if u.logger else ""
        fix = [f"Read the lines just before line {u.evidence.line}: an earlier warning or error often says why "
               "(a failed probe, a missing file, a refused connection)."]
        if u.frame:
            fix.append(f"Open the innermost frame, {_where(u.frame)}, to see what condition raised it.")
        if who:
            fix.append(f"Search the error text in {who[1].project}'s issues: {who[1].issues}?q="
                       + "+".join(re.findall(r"[A-Za-z]{3,}", u.text)[:8]))
        fix.append("If it is a new failure worth knowing, draft a pattern for it: "
                   f"`triage patterns new ID --from {u.evidence.path}:{u.evidence.line}`.")
        drift = read_mismatch(u.text, u.frame, emitters)
        if drift:
            fix.insert(0, _drift_step(drift))
        out.append(_finding(
            u, who, f"Not recognised: {_shown(u.text)}",
            f"No pattern in the library explains this error: {u.text.rstrip('.')}.{raised}"
            + (_drift_cause(drift) if drift else ""), fix,
            f"an error no pattern explains, seen {u.count} time(s): ranked below the findings that "
            "explain a cause and above those that only describe consequences (low confidence)"))
    return Leads(out, cut)


TITLE_HEAD, TITLE_TAIL = 80, 70  # characters of a long error kept from its start and its end


def _shown(text: str) -> str:
    """A long error for a title: its start (who failed doing what) and its end (the innermost
    reason of a chain of errors, "...: no such file or directory"), cut at spaces."""
    if len(text) <= TITLE_HEAD + TITLE_TAIL + 5:
        return text
    return f"{text[:TITLE_HEAD].rsplit(' ', 1)[0]} … {text[-TITLE_TAIL:].split(' ', 1)[-1]}"


def _finding(u: Unexplained, who: tuple[str, Emitter] | None, title: str, cause: str, fix: list[str],
             reason: str) -> Finding:
    """An unknown error's finding: low, unsure, its id from its template, said to be unknown."""
    return Finding(
        id="unrecognised-" + hashlib.sha256(u.template.encode()).hexdigest()[:10], kind=FindingKind.unrecognised,
        title=title, severity=Severity.low, confidence=Confidence.low,
        cause=cause + " It is reported so that it is not lost: the cause is not known to triage.",
        fix=fix, evidence=[u.evidence], count=u.count, first_line=u.evidence.line, last_line=u.evidence.line,
        first_time=iso(u.first), last_time=iso(u.last), captures={"program": who[0]} if who else {},
        reasons=[reason])


def _cut_traceback(u: Unexplained, who: tuple[str, Emitter] | None) -> Finding:
    """A traceback without its exception: where it stopped, and where to find the rest."""
    assert u.frame is not None
    where = _where(u.frame) + (f" ({who[1].project})" if who else "")
    fix = ["Find the rest of this traceback: the exception line follows its last frame in the whole log "
           "of the process (`journalctl -u <unit>`, `docker logs`, the worker's own log file), "
           "not in a copy cut short.",
           f"Open the innermost frame, {_where(u.frame)}, to see what its line can raise."]
    if who:
        fix.append(f"Search the frame's function in {who[1].project}'s issues: {who[1].issues}?q={u.frame.function}")
    return _finding(
        u, who, f"Not recognised: a traceback cut before its exception, last in {_where(u.frame)}",
        "A Python traceback ends before its exception line (the log or the paste stops there, or another "
        f"line cuts in), so what was raised is not in the log. Its innermost frame is {where}, at `{u.text}`.",
        fix, "a traceback without its exception line: the last of the leads (low confidence)")


def _drift_cause(d: Mismatch) -> str:
    """What the shape of an interface mismatch suggests, said as a likelihood (analyzer.mismatch)."""
    if d.caller is None:  # no frame: the package that asked is not in the log
        return (f" Its shape is an interface mismatch: the code that ran {d.what}. A released package that "
                f"asks {d.provider} for a name it lacks usually met another {d.provider} version than the "
                f"one it was released against (the installed {d.provider} is older or newer; one was upgraded "
                "without the other); the traceback's frames, not in this log, name the package that asked.")
    between = f"{d.caller} and {d.provider}" if d.provider else f"{d.caller} and the package that defines it"
    return (f" Its shape is an interface mismatch: {d.caller}'s code {d.what}. Released code rarely gets "
            f"an interface wrong by itself; the usual reason is a version mismatch between {between} "
            "(one upgraded without the other), less often a bug in it.")


def _drift_step(d: Mismatch) -> str:
    if d.caller is None:
        return (f"Find the package that asked (the innermost frames of the whole traceback), compare the installed "
                f"{d.provider} version with the range that package requires (`pip check`, its release notes) "
                "and install a pair that goes together.")
    pinned = f"its requirement on {d.provider}" if d.provider else "its declared requirements"
    return (f"Compare the installed versions with those {d.caller} was released against (`pip check`, "
            f"{pinned}, its release notes) and install a pair that goes together.")


def names_a_cause(f: Finding) -> bool:
    """A finding that explains a failure: medium or high confidence, and more than the
    information a healthy start-up also prints (an info finding says what a line means,
    e.g. XLA's plugins registered twice, not why anything failed)."""
    return f.confidence is not Confidence.low and f.severity is not Severity.info


def place(findings: Sequence[Finding], leads: Leads) -> list[Finding]:
    """Unrecognised errors go after every finding that names a cause and before the
    consequences and the merely informative, each side in its ranked order (a consequence of
    higher severity can outscore a cause: with an unknown error beside them, it still goes below);
    a traceback cut before its exception names no error at all and goes last."""
    if not leads.errors:
        return [*findings, *leads.cut]
    causes = [f for f in findings if names_a_cause(f)]
    return [*causes, *leads.errors, *(f for f in findings if not names_a_cause(f)), *leads.cut]
