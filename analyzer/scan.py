"""Phase 1: a multi-pattern engine over raw byte chunks.

It answers one question at grep speed: at which byte offsets did anything of interest
fire (a pattern's trigger, the start of a traceback, ...)? Hyperscan in block mode is the
engine where its wheel imports; elsewhere the `regex` module scans the same buffer once
per trigger. Both report (end offset, trigger index) and agree line for line (tested on
every fixture).
"""

from __future__ import annotations

import hashlib
import platform
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Protocol

import regex

from analyzer.cache import cache_dir, prune, read_cached, write_atomic
from analyzer.choices import InputForm
from analyzer.errors import PatternError

Hit = tuple[int, int]  # (end offset in the buffer, index of the trigger)


class Reach(Enum):
    """How far around a trigger's line phase 2 reads (`regions.py` sets the line counts)."""

    usual = "usual"  # a pattern's or a fact's line: a few lines either side
    long = "long"  # the start of a traceback or a C++ terminate: far ahead, to its end
    narrow = "narrow"  # an error line no pattern may know: its neighbours only (most hits in a noisy log)


class Structural(StrEnum):
    """Places where phase 2 must look even when no pattern fires there."""

    traceback = "@traceback"
    terminate = "@terminate"
    bytes_message = "@bytes-message"  # journal JSON: a message stored as byte values; every pattern is tried
    exception = "@exception"  # unknown errors, reported as such
    error_line = "@error-line"  # a compiler's or a command-line tool's error line
    frame = "@frame"  # a Python traceback's frame: a paste may have lost the traceback's first line


_FACT = "fact:"


def fact_key(name: str) -> str:
    """The trigger key of a fact's regexes (a pattern id never contains a colon)."""
    return _FACT + name


def fact_of(key: str) -> str | None:
    """The fact a trigger key reads, or None for a pattern's or a structural trigger."""
    return key[len(_FACT):] if key.startswith(_FACT) else None


@dataclass(frozen=True, slots=True)
class Trigger:
    key: str  # a pattern id, a `Structural` key, or `fact_key(name)`
    expr: str
    ignorecase: bool = False
    reach: Reach = Reach.usual


TRACEBACK = r"Traceback \(most recent call last\)"  # Python's first traceback line (events.py builds from it)

# where a line's own text starts in the raw bytes: at the line's start, after a logger's "host app: ",
# or behind a prefix the readers take off (a quote's "> ", `docker logs -t`'s time, a Compose
# service's "name-1  | ", a bracketed or parenthesised worker: "[pod/name/container] ", "(VllmWorker pid=1) "),
# or after the date Go's standard logger writes first ("2017/06/06 16:44:49 ", unrecognised.py)
GO_LOG_DATE = r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? "  # log.LstdFlags, with Lmicroseconds or not
_START = r"(?:^|: |> ?|\dZ |  \| |\] |\) |" + GO_LOG_DATE + ")"

# FFmpeg's av_log prints no level, only a component's "[h264_nvenc @ 0x55...] " (Windows: no 0x); behind
# it, a line that says something failed or cannot be done is an error ("Cannot load libnvidia-encode.so.1",
# "OpenEncodeSessionEx failed: ..."); a decoder's routine "error while decoding MB" is lowercase, not one
FFMPEG_COMPONENT = r"\[(?P<ff>[\w:.-]+) @ (?:0x)?[0-9a-fA-F]+\][ \t]+"
FFMPEG_FAILED = r"(?:Cannot|Could not|Unable to|Error|Failed|Driver does not|No [\w ]{0,30}devices?\b|[^\n]*\bfailed\b)"
# The Go runtime's names of the signals it crashes on (runtime/sigtab_linux_generic.go), printed
# alone on a line when the signal arrives outside Go code (in cgo); inside Go code a panic follows
GO_FATAL_SIGNAL = (r"SIG(?:SEGV: segmentation violation|BUS: bus error|ILL: illegal instruction"
                   r"|FPE: floating-point exception|ABRT: abort|TRAP: trace trap|SYS: bad system call)")
# A command line its parser rejected (the program exits with its usage): a script's "Unknown option: <arg>",
# GNU getopt's "<prog>: unrecognized option '--x'", "invalid option -- 'x'" and "option requires an
# argument -- 'x'", Go's flag package "flag provided but not defined: -x", Rust clap's "error: unexpected
# argument '--x' found" (clap 2: "error: Found argument '--x' which wasn't expected"); argparse's and
# click's lines have an error prefix of their own. Not "Invalid argument" (EINVAL's strerror)
USAGE_ERROR = (r"(?:[Uu]nknown|[Uu]nrecogni[sz]ed|[Ii]nvalid) (?:command[- ]line )?(?:option|flag)s?"
               r"(?::? [^\s\w]{0,3}-|: \S| -- )"  # the quote before the option: ASCII, or U+2018 in UTF-8
               r"|option (?:requires an argument -- |[^\s\w]{0,3}-[^\n]{1,80} requires an argument)"
               r"|flag provided but not defined: |error: (?:unexpected argument|[Ff]ound argument) '")
# A program's failed operation as glibc's error() and perror() print it (coreutils, util-linux, shell
# tools in start scripts): "<prog>: cannot|failed to ...: <strerror>"; only strerror strings of a failed
# operation end it ("Connection reset by peer" after xinetd's "warning: can't get client address" does not)
FAILED_CALL = (r"[a-z][\w.+-]{0,30}: (?:[Cc]annot|can't|[Ff]ailed to|[Uu]nable to|[Cc]ould not)\b[^\n]{1,300}: "
               r"(?:Permission denied|No such file or directory|Operation not (?:permitted|supported)|File exists"
               r"|No space left on device|Read-only file system|Is a directory|Not a directory"
               r"|Device or resource busy|Input/output error|Directory not empty|Too many open files"
               r"|Cannot allocate memory|Invalid argument|No such device|Text file busy|Function not implemented"
               r"|Disk quota exceeded|Transport endpoint is not connected|Stale file handle)")
# A shell (bash, dash, a script) that cannot find the command it was to run, after the shell's own
# "<shell>: line N: " head: "x: command not found", dash's "x: not found", the exec builtin's "exec: x: not found"
SHELL_NOT_FOUND = r"(?:exec: )?[^\s:]+: (?:command )?not found"
# A Kubernetes event of type Warning whose reason says something failed (kubectl describe's Events
# table, `kubectl get events`): FailedCreatePodSandBox, FailedScheduling, FailedMount, Failed (an
# image pull), BackOff, Evicted, UnexpectedAdmissionError (a device plugin's refused allocation), and
# the reasons that name a failure otherwise: NodeNotReady, ExceededGracePeriod (pkg/kubelet/events),
# the admission's OutOf<resource> ("OutOfnvidia.com/gpu", pkg/kubelet/lifecycle/predicate.go); not
# Unhealthy or a plain notice; and kubelet's own message for a sandbox the runtime could not create
# (kuberuntime_manager.go), pasted without the table around it
K8S_FAILED_REASON = (r"(?:[A-Za-z]*(?:Fail|Err|BackOff|Evict|OOM)[A-Za-z]*|NodeNotReady|ExceededGracePeriod"
                     r"|OutOf[A-Za-z][\w.-]*(?:/[\w.-]+)?)")
KUBELET_SANDBOX = r"Failed to create pod sandbox: "
# UCX's log line up to its message: "[1760048752.141287] [host:1234:0] proto_reconfig.c:60   UCX  ERROR "
# (ucs/debug/log.c UCS_LOG_FMT; the bracketed host, pid and thread are absent in its short format)
UCX_LEVEL = r"\.(?:c|cc|h|inl):\d+ +UC[XSTP] +(?:ERROR|FATAL) "  # from the source file's suffix to the level
UCX_LOG_HEAD = r"(?:\[\d+\.\d+\] +)?(?:\[[^\]\n]{1,80}\] +)?[\w.-]+" + UCX_LEVEL + " *"
# git apply's refusals of a patch (apply.c: "patch failed: %s:%ld", "%s: patch does not apply"), printed
# through git's error() as "error: ..."; a build that patches a pinned source stops here
GIT_APPLY_FAILED = r"error: (?:patch failed: \S|[^\n]{1,300}: patch does not apply\r?$)"
# Nix's own line when a derivation's builder failed (its last log lines follow, each behind "> "), and
# the wording of later releases: "error: builder for '/nix/store/...drv' failed with exit code 2;",
# "error: build of '...drv' on 'ssh-ng://host' failed: builder for '...drv' failed with exit code 1;",
# "error: Cannot build '/nix/store/...drv'."
NIX_BUILD_FAILED = (r"error: (?:(?:build of '[^'\n]+' (?:on '[^'\n]+' )?failed: )?"
                    r"builder for '/nix/store/[^'\n]+' failed|Cannot build '/nix/store/)")
# TensorPipe's (torch RPC's transport) failed check, its TP_THROW prefix before the message in quotes
# (tensorpipe/common/defs.h: "In <function> at <file>:<line> \"<condition or message>\"")
TENSORPIPE_THROW = r'In [\w~]+(?:\(\))? at [^\s:"]+\.(?:h|cc|cpp):\d+ "'
# A CUDA program's check macro: "CUDA error: <string>", the CUDA_CHECK that many programs copy
# ("CUDA error <n> at <file>:<line>: <string>", llama.cpp's ggml-cuda.h in 2023) and its cuBLAS twin
# ("cuBLAS error <n> at <file>:<line>"), and the CUDA samples' idiom that many programs copy
# (vectorAdd.cu: "Failed to allocate device vector A (error code %s)!" with cudaGetErrorString): an
# error line even where the catalogues and patterns do not know the string or the wording
CUDA_CHECK = (r"CUDA (?:runtime |driver )?error(?: \d+)?(?: at [^\s:]+:\d+)?: \S|cuBLAS error \d+ at \S+:\d+"
              r"|Failed to [^\n]{1,120}? \(error code [^)\n]{1,120}\)!")
# "Error:" alone on its line, its message on the next (dnf: "Error: " then " Problem: package ...")
BARE_ERROR = r"(?:Error|ERROR):"

# ComfyUI's error dialogs, copied from its web page: a traceback without Python's first line
COMFY_DIALOG = r"Error occurred when executing |\*\*Exception Type:\*\* "

STRUCTURAL = (
    Trigger(Structural.traceback, TRACEBACK + "|" + COMFY_DIALOG, reach=Reach.long),
    Trigger(Structural.terminate, r"terminate called after throwing", reach=Reach.long),
    Trigger(Structural.bytes_message, r"\"MESSAGE\":\["),
    # each frame opens a window a few lines on: a traceback pasted without its first line is read
    # to its exception, or, where the paste stops before it, to its end (events.py)
    Trigger(Structural.frame, r'File "[^"\r\n]+", line \d+'),
    Trigger(Structural.exception, r"[A-Za-z_][\w.]*(?:Error|Exception): |[A-Za-z_]\w*\.error: ", reach=Reach.narrow),
    # gcc/nvcc (and nvcc's front end and MSVC with the line in parentheses, MSVC's linker), docker,
    # GNU make's failed recipe, podman, ollama, kubectl, glog, apptainer, NCCL's WARN lines (also pasted
    # without NCCL's "host:pid:tid [dev] file:line" head, so at the start of a line), and the
    # prefixed error lines of unrecognised.py (ptxas, TensorRT(-LLM), Slurm, TF/XLA, panics,
    # the OCI runtime, logrus, the loggers of vLLM, Python, loguru, Ray and Rust's tracing, a
    # Go error chain printed bare, ROCm's HIP runtime at its error level, an emoji's "Error: ", Open MPI's,
    # zap's and JSON loggers' error levels, APT's "E: ", dnf's bare "Error:" before its message, the Go
    # runtime's fatal signal, a failed C/C++ or device-side assert, a rejected command line, Kubernetes'
    # failed events and kubelet's sandbox failure)
    Trigger(Structural.error_line,
            r"(?:\d: (?:fatal )?error: |fatal error: |nvcc fatal|" + _START + r"Error: |Error response from daemon: "
            r"|\(\d+(?:, ?\d+)?\) ?: (?:fatal )?error(?: [A-Z]{1,3}\d{4})?: |LINK : fatal error LNK\d{4}: "
            r"|make(?:\[\d+\])?: \*\*\* \[[^\n]*\] Error \d+\r?$"
            r"|" + _START + r"[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] "
            r"|" + _START + TENSORPIPE_THROW +
            r"|" + _START + NIX_BUILD_FAILED +
            r"|" + _START + "(?:" + CUDA_CHECK + ")" +
            r"|" + _START + r"(?:ERROR|FATAL|PANIC) *: |(?:^| )NCCL WARN "
            # git apply's refusals (apply.c): a build script's patch that no longer fits its source
            r"|" + _START + GIT_APPLY_FAILED +
            r"|Exception in thread \"|" + _START + r"\[(?:ERROR|FATAL|CRITICAL)\] "
            # a shell that cannot find the command it was to run (its exec builtin's form too)
            r"|(?:sh|bash|dash|zsh|ksh)(?:: line \d+|: \d+)?: " + SHELL_NOT_FOUND + r"\r?$"
            r"|what\(\): |(?:nvcc|ptxas|nvlink|cicc|fatbinary)[^\n]{0,200}(?:fatal|error) +: "
            r"|\]\s*\[(?:ERROR|E|FATAL|F)\] |\] error: "
            r"|" + _START + r"[A-Za-z][\w.-]*(?:: error|\[\d+\]: (?:ERROR|FATAL) *): "
            r"|: [EF] \S+:\d+\] "
            r"|\.(?:cc|cpp|cu|cuh|h|hpp|c|rs|go):\d+: [A-Z]\w*(?:Error|Exception): |panicked at |" + _START + r"panic: "
            r"|OCI runtime (?:create|exec|start) failed: |level=(?:error|fatal|panic) |msg=\"(?:Error|ERROR|error): "
            r"|(?:^|\s)Warning +" + K8S_FAILED_REASON + r" |" + _START + KUBELET_SANDBOX +  # Kubernetes
            # zap's console encoder (tab-separated level) and a JSON log line's level field
            r"|\t(?:ERROR|DPANIC|PANIC|FATAL)\t|\"(?:level|severity|levelname|lvl)\" ?: ?"
            r"\"(?:[Ee]rror|ERROR|[Ff]atal|FATAL|[Pp]anic|PANIC|[Dd]panic|DPANIC|[Cc]ritical|CRITICAL)\""
            r"|(?:ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d|" + _START + r"(?:ERROR|CRITICAL):[\w.]*:"
            r"| - (?:ERROR|CRITICAL) - |\| *(?:ERROR|CRITICAL) *\||\s(?:ERROR|CRITICAL) \S+:\d+ -- "
            r"|(?:^|Z +)ERROR +[\w:-]+: |" + _START + r"error [a-z]+ing\b[^:\n]{0,80}: "
            r"|" + _START + r":1:[\w.]+\.(?:cpp|hpp|h) *:|" + _START + r"E: [A-Z]|^" + BARE_ERROR + r" ?\r?$"
            r"|" + _START + GO_FATAL_SIGNAL + r"\r?$"
            r"|" + UCX_LEVEL +  # UCX's logger (UCX_LOG_HEAD)
            r"|Assertion [`'][^\n]*[`'] failed|Assertion [^\n]* failed at [^\s:]+:\d+"
            r"|" + _START + "(?:" + USAGE_ERROR + ")|" + _START + r"(?:[\w./-]*/)?" + FAILED_CALL + r"\r?$"
            # an emoji (its UTF-8 bytes, a variation selector after it) before "Error: "; Open MPI's fatal handler
            r"|[\xE2\xF0][\x80-\xBF]{2,3}(?:\xEF\xB8\x8F)? ?Error: |\*\*\* An error occurred in "
            # FFmpeg's component prefix before a failure, and ffmpeg's last line
            r"|" + FFMPEG_COMPONENT + FFMPEG_FAILED + r"|Conversion failed!)",
            reach=Reach.narrow),
)

_QUOTED_FORMS = {InputForm.journal_json, InputForm.docker}


def for_form(expr: str, form: InputForm) -> str:
    """In JSON forms a message's quotes and tabs are escaped in the raw bytes."""
    if form in _QUOTED_FORMS:
        return expr.replace('\\"', '"').replace('"', r'\\?"')
    return expr


class Engine(Protocol):
    name: str

    def scan(self, buf: bytes) -> list[Hit]: ...


class HyperscanEngine:
    name = "hyperscan"

    def __init__(self, triggers: Sequence[Trigger], form: InputForm) -> None:
        import hyperscan

        self._hs = hyperscan
        exprs = [for_form(t.expr, form).encode() for t in triggers]
        flags = [self._flags(t) for t in triggers]
        cached = database_path(exprs, flags)
        self._db = self._load(cached)
        if self._db is None:
            self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            try:
                self._db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=flags)
            except hyperscan.error as exc:
                raise self._culprit(triggers, exprs, flags) from exc
            if write_atomic(cached, hyperscan.dumpb(self._db)):
                prune(cached.parent, keep=32)

    def _load(self, path: Path) -> Any:
        """A database compiled earlier for the same triggers on this kind of CPU (compiling
        the library's few hundred triggers costs about half a second; loading, microseconds)."""
        hs = self._hs
        data = read_cached(path)
        if data is None:
            return None
        try:
            db = hs.loadb(data, hs.HS_MODE_BLOCK)
            db.scratch = hs.Scratch(db)
        except hs.error:  # damaged, or from another hyperscan build: compile again
            return None
        return db

    def _culprit(self, triggers: Sequence[Trigger], exprs: list[bytes], flags: list[int]) -> PatternError:
        """Compile the triggers one by one to name the one hyperscan refuses."""
        hs = self._hs
        for trigger, expr, flag in zip(triggers, exprs, flags, strict=True):
            try:
                hs.Database(mode=hs.HS_MODE_BLOCK).compile(expressions=[expr], ids=[0], elements=1, flags=[flag])
            except hs.error as exc:
                return PatternError(f"pattern {trigger.key}: hyperscan cannot compile trigger {trigger.expr!r}: {exc}",
                                    help="give the expression a `trigger:` without lookarounds or backreferences")
        return PatternError("hyperscan cannot compile the library's triggers together")

    def _flags(self, t: Trigger) -> int:
        hs = self._hs
        flags = hs.HS_FLAG_MULTILINE  # `$` (and `^`) at line ends, as in phase 2
        if t.ignorecase:
            flags |= hs.HS_FLAG_CASELESS
        if not t.expr.isascii():
            flags |= hs.HS_FLAG_UTF8
        return int(flags)

    def scan(self, buf: bytes) -> list[Hit]:
        hits: list[Hit] = []
        add = hits.append

        def on_match(idx: int, _start: int, end: int, _flags: int, _ctx: object) -> None:
            add((end, idx))

        self._db.scan(buf, match_event_handler=on_match)
        return hits


class PythonEngine:
    """Pure-Python phase 1 (non-x86 machines): one `regex` pass per trigger."""

    name = "python"

    def __init__(self, triggers: Sequence[Trigger], form: InputForm) -> None:
        self._compiled = [
            regex.compile(for_form(t.expr, form).encode(), regex.MULTILINE | (regex.IGNORECASE if t.ignorecase else 0))
            for t in triggers
        ]

    def scan(self, buf: bytes) -> list[Hit]:
        hits: list[Hit] = []
        for idx, rx in enumerate(self._compiled):
            hits.extend((m.end(), idx) for m in rx.finditer(buf) if m.end() > m.start())
        hits.sort()
        return hits


def database_path(exprs: Sequence[bytes], flags: Sequence[int]) -> Path:
    """Where the compiled database for these expressions lives: keyed by the expressions,
    their flags, the hyperscan build and the CPU's features (a database is compiled for the
    instruction set of the machine that built it; a home folder may be shared by several)."""
    import hyperscan

    h = hashlib.sha256()
    for part in (getattr(hyperscan, "__version__", ""), platform.machine(), _cpu_flags(), repr(list(flags))):
        h.update(part.encode() + b"\0")
    for expr in exprs:
        h.update(expr + b"\0")
    return cache_dir() / "hyperscan" / f"{h.hexdigest()[:32]}.db"


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return ""


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


EngineFactory = Callable[[Sequence[Trigger], InputForm], Engine]


def default_engine() -> EngineFactory:
    return HyperscanEngine if hyperscan_available() else PythonEngine


NAMED_GROUP = re.compile(r"\(\?P?<([A-Za-z_]\w*)>")  # `(?P<name>` or `(?<name>`: a capture's name


def hyperscan_source(expr: str) -> str:
    """A regex as a phase-1 trigger: named groups become plain groups (they mean nothing to
    phase 1), and anchors at either end go, because in the raw input a message is preceded
    by its log prefix (time, host, unit) and may be followed by more of a JSON line."""
    expr = NAMED_GROUP.sub("(", expr)
    if expr.startswith("^"):
        expr = expr[1:]
    if expr.endswith("$") and not expr.endswith("\\$"):
        expr = expr[:-1]
    # trailing optional blanks add nothing to which line matches, but `\s` also matches the
    # newline: a greedy pass would end the hit on the next line, where hyperscan's first end is not
    while expr.endswith("\\s*") and _unescaped(expr, len(expr) - 3):
        expr = expr[:-3]
    return expr


def _unescaped(expr: str, i: int) -> bool:
    """Whether the backslash at `i` starts an escape (is not itself escaped)."""
    run = len(expr[:i]) - len(expr[:i].rstrip("\\"))
    return run % 2 == 0
