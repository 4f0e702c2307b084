"""`triage kb new --from-report REPORT.json`: a postmortem draft from a triage run, with its
timeline, evidence, findings and facts filled in and secrets (and hosts) redacted."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import yaml

from analyzer.choices import FindingKind
from analyzer.errors import TriageError
from analyzer.models import Report
from analyzer.redact import redact


def _slug(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))[:60].strip("-")


def _clean(text: str) -> str:
    return redact(text, hosts=True)


def draft_from_report(report: Report, today: dt.date | None = None) -> tuple[str, str]:
    """(postmortem id, Markdown text) for the report's top finding."""
    if not report.findings:
        raise TriageError("the report has no finding to write a postmortem about")
    top = report.findings[0]
    day = today or dt.date.today()
    pid = f"{day.isoformat()}-{_slug(top.id)}"
    patterns = [p for f in report.findings if f.kind in (FindingKind.pattern, FindingKind.chain)
                for p in (f.members if f.kind is FindingKind.chain else [f.id])]
    front = {
        "id": pid, "title": f"TODO name the incident: {top.title}"[:140], "date": day.isoformat(),
        "components": ["TODO"], "severity": top.severity.value,
        "symptoms": [_clean(e.text) for e in top.evidence[:4]] or ["TODO"],
        "root_cause": _clean(top.cause), "fix": [_clean(s) for s in top.fix] or ["TODO"],
        "avoid": [_clean(a) for a in top.avoid], "patterns": list(dict.fromkeys(patterns)),
        "tags": [], "sources": ["TODO the incident ticket or public issue thread"],
    }
    timeline = [f"- {e.time or ''} line {e.line}: {e.kind}: {_clean(e.text)}" for e in report.timeline] \
        or ["- TODO"]
    facts = [f"- {f.label}: {_clean(f.value)}" for f in report.facts.values()]
    evidence = [_clean(e.text) for f in report.findings for e in f.evidence][:20]
    findings = [f"- #{f.rank} {f.title} ({f.kind}, {f.severity.value})" for f in report.findings]
    body = "\n".join([
        "---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000).strip(), "---", "",
        "## Summary", "", "TODO two or three sentences: what broke, for whom, for how long, what fixed it.", "",
        "## Timeline", "", *timeline, "",
        "## What happened", "", "The evidence, as triage found it:", "", "```log", *evidence, "```", "",
        "Findings:", "", *findings, "", *(["Facts from the log:", "", *facts, ""] if facts else []),
        "## Why", "", _clean(top.cause), "",
        "## How it was fixed", "", *[f"{i}. {_clean(s)}" for i, s in enumerate(top.fix, 1)], "",
        "## Lessons", "", "- TODO", "",
    ])
    return pid, body


def write_draft(report_path: Path, kb_root: Path) -> Path:
    try:
        report = Report.model_validate_json(report_path.read_text())
    except OSError as exc:
        raise TriageError(f"cannot read: {exc.strerror}", report_path) from exc
    except ValueError as exc:
        raise TriageError("not a triage JSON report (make one with `triage --format json LOG`)",
                          report_path) from exc
    pid, text = draft_from_report(report)
    target = kb_root / f"{pid}.md"
    if target.exists():
        raise TriageError("a postmortem with this id exists already; rename the draft", target)
    target.write_text(text)
    return target
