"""The report's phrases that every format says the same way: how often a finding was seen,
where a line is, a past incident a reader can open, a candidate explanation of a chain.
The terminal, Markdown and HTML reports all take them from here."""

from __future__ import annotations

from analyzer.models import Evidence, Finding, Hypothesis, Related, TimelineEntry
from analyzer.prose import fold

RELATED_SHOWN = 3  # past incidents under a finding, best first (JSON keeps them all)


def times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def seen(f: Finding) -> str:
    """How often and where: "seen 6 times in 4 runs, across 6 processes" (runs are the unit's
    starts; a run or process count of one is not said)."""
    text = f"seen {times(f.count)}"
    if f.runs > 1:
        text += f" in {f.runs} runs"
    if f.processes > 1:
        text += f", across {f.processes} processes"
    return text


def where(e: Evidence | TimelineEntry, single_input: bool) -> str:
    """A line's place: "line 18" when the report has one input (its name is in the header),
    else "path:18"."""
    return f"line {e.line}" if single_input else f"{e.path}:{e.line}"


def opener(kind: str, doc_id: str) -> str:
    """The command that opens a postmortem or a pattern, as search hits and related incidents show it."""
    return f"triage kb show {doc_id}" if kind == "postmortem" else f"triage patterns show {doc_id}"


def doc_date(kind: str, doc_id: str) -> str:
    """A postmortem's date, from its id (2026-05-03-...); empty for a pattern."""
    return doc_id[:10] if kind == "postmortem" and doc_id[:4].isdigit() else ""


def related_line(r: Related) -> str:
    """One line a reader can act on: title, date, similarity, and the command that opens it."""
    score = "linked by the postmortem" if r.score >= 1.0 else f"similarity {r.score:.2f}"
    return f"{r.title} ({', '.join(x for x in (doc_date(r.kind, r.id), score) if x)}) — {opener(r.kind, r.id)}"


def hypothesis_line(h: Hypothesis, single_input: bool) -> str:
    """A chain's candidate explanation and what in the log supports it, if anything."""
    if not h.supported:
        return f"{h.claim} Nothing in this log shows it."
    lines = ", ".join(where(e, single_input) for e in h.evidence)
    return f"{h.claim} Supported by {lines}: {fold(h.evidence[0].text)}"
