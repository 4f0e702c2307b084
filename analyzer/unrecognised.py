"""Errors that no pattern knows are reported, never dropped: the final lines of tracebacks,
C++ terminate messages and exception-shaped lines that no pattern matched are masked
(numbers, hex, paths) and grouped by template. Each becomes a finding of kind `unrecognised`
that says so plainly, quotes the error, names the program whose code raised it (the
innermost traceback frame of a known project) and the next diagnostic step. It ranks below
the findings that explain a cause and above those that only describe consequences (a
killed process, a failed unit, an engine that did not start): the unknown error is the lead.
The knowledge base later adds the nearest past incidents by meaning, offered as such."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from analyzer.choices import Confidence, FindingKind, Severity
from analyzer.clock import iso, to_seconds
from analyzer.events import EXCEPTION
from analyzer.library.rules import Emitter
from analyzer.models import Event, EventKind, Evidence, Finding, Frame, whole_line

MAX_TEMPLATES = 200  # memory bound on a huge log full of unknown errors
REPORTED = 3  # unrecognised errors reported, most frequent first

_MASKS = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"(?<![\w.])/(?:[\w.@+-]+/)*[\w.@+-]+"), "<path>"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)*"), "<n>"),
)
_PACKAGE = re.compile(r"(?:site-packages|dist-packages)[/\\]+(?P<pkg>[A-Za-z_]\w*)[/\\]")  # Windows too
# warnings are not errors: a healthy service logs them
_NOT_AN_ERROR = re.compile(r"(?:Warning|DeprecationWarning|FutureWarning|UserWarning)\b")
# Error lines of other shapes: a compiler's (gcc, nvcc), a command-line tool's (docker, podman,
# ollama and other cobra CLIs), glog's ERROR/FATAL lines (Triton Inference Server, XLA,
# libnvidia-container, Kubernetes components), apptainer's `ERROR  :`, and NCCL's WARN lines
# (NCCL warns only when something failed)
_ERROR_LINE = re.compile(r"(?:\S+?:\d+(?::\d+)?: (?:fatal )?error: |(?:\S+: )?fatal error: |nvcc fatal\s*: "
                         r"|(?:docker: )?Error response from daemon: |Error: "
                         r"|[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] |(?:ERROR|FATAL) *: +"
                         r"|.*?\bNCCL WARN )(?P<msg>\S.*)")
_NCCL_WARN = re.compile(r"^.*?\bNCCL WARN ")  # host:pid:tid [dev] file.cc:line: the prefix varies
_GLOG = re.compile(r"^[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ (?P<file>\S+:\d+)\] ")


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
    if event.kind is EventKind.nccl_block:  # a rank's run of NCCL lines: its first WARN is the error
        return next((_NCCL_WARN.sub("NCCL WARN ", line.strip()) for line in event.text.split("\n")
                     if "NCCL WARN " in line), None)
    if event.kind is EventKind.line:
        first = event.text.split("\n")[0].strip()
        m = EXCEPTION.match(first)
        if m and ": " in first and not _NOT_AN_ERROR.search(m["type"]):
            return first
        if _ERROR_LINE.match(first):
            return _NCCL_WARN.sub("NCCL WARN ", _GLOG.sub(r"\g<file>: ", first))
    return None


@dataclass
class Unexplained:
    template: str
    text: str
    evidence: Evidence
    frame: Frame | None = None  # the innermost frame, where it was raised
    count: int = 1
    first: float | None = None  # seconds of the first and last occurrences whose time is known
    last: float | None = None

    def seen_at(self, seconds: float | None) -> None:
        if seconds is not None:
            self.first = seconds if self.first is None else min(self.first, seconds)
            self.last = seconds if self.last is None else max(self.last, seconds)


@dataclass
class Collector:
    items: dict[str, Unexplained] = field(default_factory=dict)

    def add(self, events: Iterable[Event], matched_lines: set[tuple[str, int]]) -> None:
        for event in events:
            if any((r.path, r.line) in matched_lines for r in event.records):
                continue
            line = error_line(event)
            if line is None:
                continue
            template = mask(line)
            when = to_seconds(event.records[-1].time)
            if template in self.items:
                self.items[template].count += 1
                self.items[template].seen_at(when)
            elif len(self.items) < MAX_TEMPLATES:
                last = event.records[-1]
                self.items[template] = Unexplained(template, line, Evidence(path=last.path, line=last.line,
                                                                             text=whole_line(line)),
                                                   event.frames[-1] if event.frames else None)
                self.items[template].seen_at(when)

    def merge(self, other: Collector) -> None:
        """Fold in the collector of another input read elsewhere (a `--jobs` worker)."""
        for template, item in other.items.items():
            if template in self.items:
                self.items[template].count += item.count
                self.items[template].seen_at(item.first)
                self.items[template].seen_at(item.last)
            elif len(self.items) < MAX_TEMPLATES:
                self.items[template] = item

    def top(self) -> list[Unexplained]:
        """The most frequent first; of equals, the earliest (in a cascade the first error leads)."""
        ordered = sorted(self.items.values(), key=lambda u: (-u.count, u.evidence.path, u.evidence.line))
        return ordered[:REPORTED]


def _emitter(frame: Frame | None, emitters: Mapping[str, Emitter]) -> tuple[str, Emitter] | None:
    if frame is None:
        return None
    m = _PACKAGE.search(frame.file)
    if m and m["pkg"] in emitters:
        return m["pkg"], emitters[m["pkg"]]
    return None


def _where(frame: Frame) -> str:
    m = _PACKAGE.search(frame.file)
    short = frame.file[m.start("pkg"):] if m else frame.file
    return f"{short}, line {frame.line}, in {frame.function}"


def unrecognised(collector: Collector, emitters: Mapping[str, Emitter]) -> list[Finding]:
    out = []
    for u in collector.top():
        who = _emitter(u.frame, emitters)
        raised = f" It was raised in {_where(u.frame)}" if u.frame else ""
        raised += f" ({who[1].project})." if who else ("." if raised else "")
        fix = [f"Read the lines just before line {u.evidence.line}: an earlier warning or error often says why "
               "(a failed probe, a missing file, a refused connection)."]
        if u.frame:
            fix.append(f"Open the innermost frame, {_where(u.frame)}, to see what condition raised it.")
        if who:
            fix.append(f"Search the error text in {who[1].project}'s issues: {who[1].issues}?q="
                       + "+".join(re.findall(r"[A-Za-z]{3,}", u.text)[:8]))
        fix.append("If it is a new failure worth knowing, draft a pattern for it: "
                   f"`triage patterns new ID --from {u.evidence.path}:{u.evidence.line}`.")
        digest = hashlib.sha256(u.template.encode()).hexdigest()[:10]
        shown = u.text if len(u.text) <= 150 else u.text[:149].rsplit(" ", 1)[0] + "…"
        out.append(Finding(
            id=f"unrecognised-{digest}", kind=FindingKind.unrecognised, title=f"Not recognised: {shown}",
            severity=Severity.low, confidence=Confidence.low,
            cause=f"No pattern in the library explains this error: {u.text.rstrip('.')}.{raised} "
                  "It is reported so that it is not lost: the cause is not known to triage.",
            fix=fix, evidence=[u.evidence], count=u.count, first_line=u.evidence.line,
            last_line=u.evidence.line, first_time=iso(u.first), last_time=iso(u.last),
            captures={"program": who[0]} if who else {},
            reasons=[f"an error no pattern explains, seen {u.count} time(s): ranked below the findings that "
                     "explain a cause and above those that only describe consequences (low confidence)"]))
    return out


def place(findings: Sequence[Finding], unknown: Sequence[Finding]) -> list[Finding]:
    """Unrecognised errors go after every finding that names a cause (medium or high
    confidence) and before the consequences."""
    at = next((i for i, f in enumerate(findings) if f.confidence is Confidence.low), len(findings))
    return [*findings[:at], *unknown, *findings[at:]]
