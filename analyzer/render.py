"""The only module that talks to the terminal (and the only one importing rich).

Report → terminal text (rich, with a semantic Theme), Markdown (for an incident ticket),
JSON (the public contract documented in the README) or HTML (`html_report`), on stdout or
into a file (`--out`). Diagnostics go to stderr.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from analyzer.cache import write_replacing
from analyzer.choices import Color, FindingKind, Format
from analyzer.errors import TriageError
from analyzer.fleet.model import FleetFinding, FleetReport, FleetSymptom
from analyzer.html_report import to_html
from analyzer.models import Finding, Report
from analyzer.prose import clip, fold, without_title
from analyzer.wording import RELATED_SHOWN, doc_date, hypothesis_line, opener, related_line, seen, times, where

if TYPE_CHECKING:
    from rich.progress import TaskID

THEME = Theme({
    "sev.critical": "bold white on red",
    "sev.high": "bold red",
    "sev.medium": "bold yellow",
    "sev.low": "cyan",
    "sev.info": "dim",
    "evidence": "bright_white",
    "location": "dim cyan",
    "fix": "green",
    "avoid": "bold magenta",
    "muted": "dim",
    "title": "bold",
})


_COLOR = [Color.auto]  # set once by the CLI's --color


def use_color(mode: Color) -> None:
    _COLOR[0] = mode


def _colour_args() -> dict[str, Any]:
    mode = _COLOR[0]
    if mode is Color.always:
        return {"force_terminal": True, "no_color": False}
    if mode is Color.never:
        return {"no_color": True, "color_system": None}
    return {"no_color": "NO_COLOR" in os.environ or None}


def console(file: TextIO | None = None, width: int | None = None) -> Console:
    return Console(file=file or sys.stdout, theme=THEME, width=width, highlight=False, soft_wrap=False,
                   **_colour_args())


def error_console() -> Console:
    return Console(file=sys.stderr, theme=THEME, highlight=False, soft_wrap=True, **_colour_args())


def to_json(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"


def render(report: Report, fmt: Format, out: TextIO | None = None, explain: bool = False,
           path: Path | None = None) -> None:
    """The report on `out` (stdout), or written whole into the file `path`."""
    if path is not None:
        save(path, to_text(report, fmt, explain))
    elif fmt is Format.terminal:
        _terminal(report, console(out or sys.stdout), explain)
    else:
        (out or sys.stdout).write(to_text(report, fmt, explain))


def to_text(report: Report, fmt: Format, explain: bool = False) -> str:
    if fmt is Format.json:
        return to_json(report)
    if fmt is Format.markdown:
        return to_markdown(report)
    if fmt is Format.html:
        return to_html(report, explain)
    buffer = io.StringIO()  # the terminal form as a pipe gets it: no colour unless --color always
    _terminal(report, console(buffer), explain)
    return buffer.getvalue()


def save(path: Path, text: str) -> None:
    """Write a report file through a temporary file and a rename: on any error nothing is
    left half-written, and the error is one line."""
    try:
        write_replacing(path, text.encode())
    except OSError as exc:
        raise TriageError(f"cannot write the report: {exc.strerror or exc}", path) from None


def _terminal(report: Report, con: Console, explain: bool = False) -> None:
    total = sum(i.lines for i in report.inputs)
    names = ", ".join(f"{i.path} ({i.format})" for i in report.inputs)
    con.print(Text(f"triage: {total} lines read from {names}", style="muted"))
    if not report.findings:
        con.print("No failure found: no pattern matched and no error line was seen.", style="title")
    single = len(report.inputs) == 1
    for f in report.findings:
        con.print(_panel(f, single, explain))
    if report.facts:
        con.print(_facts(report))
    if report.timeline:
        for line in _timeline(report, single):
            con.print(line, no_wrap=True, overflow="ellipsis")
    for w in report.warnings:
        con.print(Text(f"warning: {w}", style="sev.medium"))


def _facts(report: Report) -> Table:
    grid = Table(title="Facts from the log", title_justify="left", title_style="title", box=None, padding=(0, 1))
    grid.add_column("fact", style="muted", no_wrap=True)
    grid.add_column("value", style="evidence")
    grid.add_column("evidence", style="location")
    for fact in report.facts.values():
        where = f"line {fact.evidence.line}"
        grid.add_row(Text(fact.label), Text(fact.value), where)  # Text: "[cuda12]" is not markup
    return grid


def _timeline(report: Report, single: bool) -> list[Text]:
    """One line per event: time of day, input line, what (a lifecycle step or the finding
    number it belongs to), and the log text; the caller cuts lines at the screen width."""
    holder: dict[str, int] = {}
    for f in report.findings:
        for pid in [f.id, *f.members, *(s.id for s in f.symptoms)]:
            holder.setdefault(pid, f.rank)
    day = next((e.time[:10] for e in report.timeline if e.time), "")
    lines = [Text(f"Timeline {day}".strip(), style="title")]
    for e in report.timeline:
        when = (e.time[11:19] if e.time and e.time[:10] == day else e.time) or ""
        where = str(e.line) if single else f"{e.path}:{e.line}"
        what = f"finding #{holder[e.kind]}" if e.kind in holder else e.kind
        unit = f"{e.unit}: " if e.unit and e.unit not in e.text else ""
        lines.append(Text.assemble((f" {when} ", "muted"), (f"{where:>5}  ", "location"),
                                   (f"{what:<11} ", "sev.high" if e.kind in holder else "title"),
                                   (unit + e.text, "evidence")))
    return lines


def _panel(f: Finding, single_input: bool, explain: bool = False) -> Panel:
    parts: list[Text | Table] = [Text(f.title, style="title"), Text(f.cause)]
    ev = Table.grid(padding=(0, 1))
    ev.add_column(style="location", no_wrap=True)
    ev.add_column(style="evidence")
    for e in f.evidence:  # one input: its name is in the header, the line number is enough
        ev.add_row(Text(where(e, single_input)), Text(fold(e.text)))
    parts += [Text("\nEvidence, in order" if f.kind is FindingKind.chain else "\nEvidence", style="title"), ev]
    if f.count > 1:
        parts.append(Text(f"{seen(f)}, lines {f.first_line}-{f.last_line}", style="muted"))
    if f.symptoms:
        parts += [Text("\nExplains (folded under this finding)", style="title"),
                  _items(["·"] * len(f.symptoms),
                         [f"{s.title} [{s.id}]" + (f" ({times(s.count)})" if s.count > 1 else "") for s in f.symptoms],
                         "muted")]
    if f.hypotheses:
        parts += [Text("\nWhy the earlier step could lead to the failure (candidates, checked against this log)",
                       style="title"),
                  _items(["✓" if h.supported else "?" for h in f.hypotheses],
                         [hypothesis_line(h, single_input) for h in f.hypotheses], "muted")]
    parts += [Text("\nFix", style="title"), _items([f"{i}." for i in range(1, len(f.fix) + 1)], f.fix, "fix")]
    if f.avoid:
        parts += [Text("\nDo NOT", style="avoid"), _items(["✗"] * len(f.avoid), f.avoid, "avoid")]
    if f.related:
        parts += [Text("\nPast incidents like this one" if f.kind is not FindingKind.unrecognised
                       else "\nNearest known failures by meaning (not confirmed for this log)", style="title"),
                  _items(["·"] * len(f.related[:RELATED_SHOWN]), [related_line(r) for r in f.related[:RELATED_SHOWN]],
                         "muted")]
    if f.references:
        parts.append(Text("\nReferences: " + "  ".join(f.references), style="muted"))
    if explain and f.reasons:
        parts += [Text(f"\nWhy ranked #{f.rank} (score {f.score:g})", style="title"),
                  _items(["-"] * len(f.reasons), f.reasons, "muted")]
    sev = f.severity.value
    kind = "" if f.kind is FindingKind.pattern else f"{f.kind} · "
    title = Text.assemble((f" {sev.upper()} ", f"sev.{sev}"), (f" #{f.rank} ", "title"),
                          (f"{kind}{f.id} · confidence {f.confidence.value} ", "muted"))
    return Panel(Group(*parts), title=title, title_align="left", border_style=f"sev.{sev}")


def _items(marks: list[str], items: list[str], style: str) -> Table:
    """A hanging-indent list: wrapped lines stay under their item, not under the mark."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(style=style)
    for mark, item in zip(marks, items, strict=True):
        grid.add_row(f"  {mark}", Text(item))  # pattern text is never rich markup: "[rank0]", "jax[cuda12]"
    return grid


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: Report) -> str:
    lines = ["# triage report", ""]
    for i in report.inputs:
        lines.append(f"- input `{i.path}` ({i.format}, {i.lines} lines)")
    lines.append("")
    if not report.findings:
        lines += ["No failure found: no pattern matched and no error line was seen.", ""]
    for f in report.findings:
        lines += [f"## {f.rank}. {f.title}", "",
                  f"**Severity:** {f.severity.value} · **Confidence:** {f.confidence.value} · "
                  f"**{f.kind.value.capitalize()}:** `{f.id}` · **Seen:** {seen(f).removeprefix('seen ')}", "",
                  f.cause, "", "**Evidence**", "", "```"]
        lines += [f"{e.path}:{e.line}: {e.text}" for e in f.evidence]
        lines += ["```", "", "**Fix**", ""]
        lines += [f"{n}. {step}" for n, step in enumerate(f.fix, 1)]
        if f.avoid:
            lines += ["", "**Do not**", ""] + [f"- {_md_escape(a)}" for a in f.avoid]
        if f.hypotheses:
            lines += ["", "**Why the earlier step could lead to the failure** "
                          "(candidates, checked against this log)", ""]
            lines += [f"- {'supported' if h.supported else 'not shown'}: {_md_escape(h.claim)}"
                      + "".join(f" (`{e.path}:{e.line}` {_md_escape(e.text)})" for e in h.evidence)
                      for h in f.hypotheses]
        if f.symptoms:
            lines += ["", "**Explains:** " + ", ".join(f"{s.title} (`{s.id}`" + (f", {times(s.count)})" if s.count > 1
                                                                                  else ")") for s in f.symptoms)]
        if f.related:
            lines += ["", "**Past incidents like this one**" if f.kind is not FindingKind.unrecognised
                      else "**Nearest known failures by meaning** (not confirmed for this log)", ""]
            lines += [f"- {_md_escape(related_line(r))}" for r in f.related[:RELATED_SHOWN]]
        if f.references:
            lines += ["", "**References:** " + ", ".join(f.references)]
        lines.append("")
    if report.facts:
        lines += ["## Facts from the log", "", "| fact | value | line |", "|---|---|---|"]
        lines += [f"| {x.label} | {_md_escape(x.value)} | {x.evidence.line} |" for x in report.facts.values()]
        lines.append("")
    if report.timeline:
        lines += ["## Timeline", "", "| time | line | what | text |", "|---|---|---|---|"]
        lines += [f"| {e.time or ''} | {e.line} | {e.kind} | {_md_escape(e.text)} |" for e in report.timeline]
        lines.append("")
    for w in report.warnings:
        lines.append(f"> warning: {w}")
    return "\n".join(lines).rstrip() + "\n"


PROGRESS_FROM = 8 * 1024 * 1024  # smaller inputs are read before a bar would be seen


@contextmanager
def progress_bar() -> Iterator[Callable[[str, int, int | None, int], None] | None]:
    """A bar on stderr (bytes, rate, findings so far) for inputs over a few MB, when stderr
    is a terminal; None otherwise, so that nothing of it reaches a pipe or a file."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TextColumn("{task.fields[rate]}"),
                   TextColumn("{task.fields[found]} finding(s)"), console=error_console(), transient=True)
    tasks: dict[str, TaskID] = {}
    read: dict[str, int] = {}
    start = time.monotonic()

    def update(name: str, done: int, total: int | None, found: int) -> None:
        read[name] = done  # the rate is over the whole run, all inputs: steadier than rich's window
        rate = f"{sum(read.values()) / 1e6 / max(time.monotonic() - start, 1e-3):.0f} MB/s"
        if name not in tasks:
            if max(done, total or 0) < PROGRESS_FROM:
                return
            if not tasks:
                bar.start()
            tasks[name] = bar.add_task(Path(name).name, total=total, found=found, rate=rate)
        bar.update(tasks[name], completed=done, found=found, rate=rate)

    try:
        yield update
    finally:
        if tasks:
            bar.stop()


class FollowView:
    """What `--follow` shows: each new finding once (a card, or one JSON object per line), counts
    that grow (a line each, at most once a minute per finding, when not on a terminal), and on a
    terminal a status line while the input is quiet, rewritten in place."""

    def __init__(self, fmt: Format, out: TextIO | None = None, explain: bool = False) -> None:
        self.fmt = fmt
        self.out = out or sys.stdout
        self.con = console(self.out)
        self.explain = explain
        self.live = self.out.isatty() and fmt is Format.terminal
        self.status_shown = ""
        self.told: dict[str, float] = {}  # finding id → when its count was last printed

    def finding(self, f: Finding) -> None:
        self._clear()
        if self.fmt is Format.json:
            self.out.write(f.model_dump_json() + "\n")
        else:
            self.con.print(Text(f"{time.strftime('%H:%M:%S')} new finding", style="muted"))
            self.con.print(_panel(f, True, self.explain))
        self.out.flush()

    def grown(self, f_id: str, title: str, number: int, count: int) -> None:
        if self.fmt is not Format.terminal or self.live:
            return  # JSON lines carry new findings only; a terminal shows counts in the status line
        now = time.monotonic()
        if now - self.told.get(f_id, -3600.0) < 60:
            return
        self.told[f_id] = now
        self.con.print(Text(f"#{number} {title}: seen {times(count)}", style="muted"))
        self.out.flush()

    def progress(self, name: str, lines: int, findings: int, top: list[tuple[int, int]]) -> None:
        """The status line: lines read, findings, the most repeated (number, count)."""
        counts = ", ".join(f"#{number} seen {times(n)}" for number, n in top)
        self._status(f"{lines:,} lines, {findings} finding(s){' · ' + counts if counts else ''} · "
                     f"following {name} (Ctrl-C stops)")  # counts first: a narrow terminal cuts the name

    def done(self) -> None:
        self._clear()
        self.out.flush()

    def _status(self, text: str) -> None:
        if not self.live or text == self.status_shown:
            return
        self._clear()
        width = self.con.width - 1
        self.out.write(text[:width])
        self.out.flush()
        self.status_shown = text

    def _clear(self) -> None:
        if self.status_shown:
            self.out.write("\r\x1b[2K")
            self.status_shown = ""


def print_error(message: str) -> None:
    error_console().print(Text(f"triage: error: {message}", style="sev.high"))


def print_warning(message: str) -> None:
    error_console().print(Text(f"triage: warning: {message}", style="sev.medium"))


def print_raw(text: str) -> None:
    """Machine-readable output (JSON, a file's text) written to stdout as it is, no markup."""
    sys.stdout.write(text)


def print_lines(lines: Sequence[str], out: TextIO | None = None) -> None:
    con = console(out)
    for line in lines:  # never wrapped: a command in them must still work when copied
        con.print(escape(line), soft_wrap=True)


def render_hits(query: str, hits: Sequence[Any], out: TextIO | None = None, full: bool = False) -> None:
    """Search results, one hit in two lines: number, kind, date (a postmortem) or severity (a
    pattern), score and title; then the command that opens it. With `full`, a card each:
    the passage that matched and the first fix steps."""
    con = console(out)
    if not hits:
        con.print(Text(f"No incident or pattern matches {query!r}.", style="title"))
    if not full:
        for i, h in enumerate(hits, 1):
            when = doc_date(h.kind, h.id) or h.severity
            con.print(Text.assemble((f"{i:>2}. ", "title"), (f"{h.kind:<10} {when:<12} {h.score:.2f}  ", "muted"),
                                    (h.title, "title")))
            con.print(Text(f"    {opener(h.kind, h.id)}", style="location"), soft_wrap=True)  # to copy: never wrapped
        return
    for i, h in enumerate(hits, 1):
        body: list[Text | Table] = [Text(clip(without_title(h.passage, h.title), 400)),
                                    Text(f"{h.path}", style="location")]
        if h.fix:
            body += [Text("Fix", style="title"), _items([f"{n}." for n in range(1, min(3, len(h.fix)) + 1)],
                                                       h.fix[:3], "fix")]
        title = Text.assemble((f" #{i} ", "title"), (f"{h.kind} · {h.id} · score {h.score:.2f} ", "muted"))
        con.print(Panel(Group(Text(h.title, style="title"), *body), title=title, title_align="left",
                        border_style="muted"))


def render_fleet(report: FleetReport, fmt: Format, out: TextIO | None = None) -> None:
    """A fleet report: JSON (the contract), Markdown, or the terminal's node-by-time overview
    and ranked findings."""
    stream = out or sys.stdout
    if fmt is Format.json:
        stream.write(report.model_dump_json(indent=2) + "\n")
        return
    if fmt is Format.markdown:
        stream.write(fleet_markdown(report))
        return
    con = console(stream)
    for line in fleet_header(report):
        con.print(Text(line, style="muted"))
    for line in fleet_overview(report):
        con.print(Text(line), no_wrap=True, overflow="ellipsis")
    if not report.findings:
        con.print("No failure found on any node.", style="title")
    for f in report.findings:
        con.print(_fleet_panel(f))
    for w in report.warnings:
        con.print(Text(f"warning: {w}", style="sev.medium"))


def fleet_header(report: FleetReport) -> list[str]:
    failing = sum(1 for n in report.nodes if n.findings)
    lines = [f"triage fleet: {len(report.nodes)} nodes, {sum(n.lines for n in report.nodes):,} lines, "
             f"{failing} with findings"]
    if report.root_node:
        root = report.findings[0]
        lines.append(f"root cause: {report.root_node}, {root.title} at {root.first_time or 'an unknown time'}")
    elif report.straggler:
        lines.append(f"no failure of its own on any node; {report.straggler} logged nothing while the others "
                     "timed out waiting: the straggler, or it died without a word (read its kernel log)")
    lines.append(f"clocks: {report.alignment}")
    return lines


OVERVIEW_WIDTH = 48  # time buckets in the node-by-time overview
OVERVIEW_ROWS = 24


def fleet_overview(report: FleetReport) -> list[str]:
    """One row per node with findings, earliest first: `X` the root cause, `!` another failure,
    `~` an echo (a timeout waiting on a peer), on a shared time axis."""
    marks: dict[str, list[tuple[str, str]]] = {}
    for f in report.findings:
        mark = "X" if f.root else ("~" if f.consequence else "!")
        for n in f.nodes:
            if n.first_time:
                marks.setdefault(n.node, []).append((n.first_time, mark))
        for s in f.symptoms:
            for node in s.nodes:
                if s.first_time:
                    marks.setdefault(node, []).append((_node_time(report, s.id, node) or s.first_time, "~"))
    times = sorted(t for ms in marks.values() for t, _ in ms)
    if not times:
        return []
    start, end = _epoch(times[0]), _epoch(times[-1])
    span = max(end - start, 1.0)
    order = sorted(marks, key=lambda n: (min(t for t, _ in marks[n]), n))
    width = max(len(n) for n in order[:OVERVIEW_ROWS])
    rows = [f"{'node':<{width}}  {times[0][11:19]}{' ' * (OVERVIEW_WIDTH - 16)}{times[-1][11:19]}"]
    for node in order[:OVERVIEW_ROWS]:
        cells = ["."] * OVERVIEW_WIDTH
        for t, mark in sorted(marks[node], key=lambda m: "~!X".index(m[1])):
            cells[min(int((_epoch(t) - start) / span * (OVERVIEW_WIDTH - 1)), OVERVIEW_WIDTH - 1)] = mark
        rows.append(f"{node:<{width}}  {''.join(cells)}")
    if len(order) > OVERVIEW_ROWS:
        rows.append(f"… {len(order) - OVERVIEW_ROWS} more nodes with findings")
    rows.append("X root cause   ! another failure   ~ an echo of a failure elsewhere (timeout, peer gone)")
    return rows


def _node_time(report: FleetReport, finding_id: str, node: str) -> str | None:
    for f in report.findings:
        if f.id == finding_id:
            return next((n.first_time for n in f.nodes if n.node == node), None)
    return None


def _epoch(iso: str) -> float:
    import datetime as dt

    return dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC).timestamp()


def _fleet_panel(f: FleetFinding) -> Panel:
    where = ", ".join(n.node for n in f.nodes[:6]) + (f" and {len(f.nodes) - 6} more" if len(f.nodes) > 6 else "")
    parts: list[Text | Table] = [Text(f.title, style="title"), Text(f.cause),
                                 Text(f"\nOn {len(f.nodes)} node(s): {where}; first on {f.first_node}"
                                      f"{' at ' + f.first_time if f.first_time else ''}", style="muted")]
    reruns = [n for n in f.nodes if n.runs > 1]
    if reruns:
        parts.append(Text("Failed again across runs: " + ", ".join(f"{n.node} ({n.runs} runs)" for n in reruns),
                          style="muted"))
    ev = Table.grid(padding=(0, 1))
    ev.add_column(style="location", no_wrap=True)
    ev.add_column(style="evidence")
    for e in f.evidence:
        ev.add_row(Text(f"{e.node} line {e.line}"), Text(fold(e.text)))
    parts += [Text("\nEvidence", style="title"), ev]
    if f.symptoms:
        parts += [Text("\nEchoes on other nodes (folded under this finding)", style="title"),
                  _items(["·"] * len(f.symptoms), [fleet_symptom_line(s) for s in f.symptoms], "muted")]
    if f.reasons:
        parts += [Text("\nWhy", style="title"), _items(["-"] * len(f.reasons), f.reasons, "muted")]
    parts += [Text("\nFix", style="title"), _items([f"{i}." for i in range(1, len(f.fix) + 1)], f.fix, "fix")]
    if f.avoid:
        parts += [Text("\nDo NOT", style="avoid"), _items(["✗"] * len(f.avoid), f.avoid, "avoid")]
    sev = f.severity.value
    label = "root cause · " if f.root else ("echo · " if f.consequence else "")
    title = Text.assemble((f" {sev.upper()} ", f"sev.{sev}"), (f" #{f.rank} ", "title"), (f"{label}{f.id} ", "muted"))
    return Panel(Group(*parts), title=title, title_align="left", border_style=f"sev.{sev}")


def fleet_symptom_line(s: FleetSymptom) -> str:
    return f"{s.title} on {len(s.nodes)} node(s), {s.processes} process(es), {times(s.count)} [{s.id}]"


def fleet_markdown(report: FleetReport) -> str:
    out = ["# Fleet triage", ""] + [f"- {line}" for line in fleet_header(report)] + [""]
    overview = fleet_overview(report)
    if overview:
        out += ["```", *overview, "```", ""]
    for f in report.findings:
        label = " (root cause)" if f.root else (" (echo)" if f.consequence else "")
        out += [f"## #{f.rank} {_md_escape(f.title)}{label}", "",
                f"`{f.id}` · {f.severity.value} · on {len(f.nodes)} node(s), first on **{f.first_node}**"
                f"{' at ' + f.first_time if f.first_time else ''}", "", _md_escape(f.cause), ""]
        out += [f"- `{e.node}:{e.line}` `{e.text}`" for e in f.evidence] + [""]
        if f.symptoms:
            out += ["Echoes folded under it:", ""] + [f"- {_md_escape(fleet_symptom_line(s))}" for s in f.symptoms]
            out.append("")
        out += ["Fix:", ""] + [f"{i}. {_md_escape(step)}" for i, step in enumerate(f.fix, 1)] + [""]
    out += [f"> warning: {_md_escape(w)}" for w in report.warnings]
    return "\n".join(out).rstrip() + "\n"
