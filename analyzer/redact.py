"""Secret (and optionally host) redaction for everything triage writes that a person may
share: drafts of patterns and postmortems, reports on request, the site."""

from __future__ import annotations

import re

from analyzer.choices import FindingKind
from analyzer.models import Evidence, Finding, Report

REDACTED = "[REDACTED]"

SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)")),
    ("hugging face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("openai-style key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b")),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("aws secret", re.compile(r"(?i)(?P<keep>(?:aws_)?secret_access_key\s*[=:]\s*)['\"]?[A-Za-z0-9/+=]{40,}['\"]?")),
    ("authorization header",
     re.compile(r"(?i)\b(?P<keep>authorization\s*:\s*(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}")),
    ("bearer token", re.compile(r"(?i)\b(?P<keep>bearer\s+)[A-Za-z0-9._~+/=-]{16,}")),
    ("password in url", re.compile(r"(?i)\b(?P<keep>[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+(?P<tail>@)")),
    ("password assignment",
     re.compile(r"(?i)\b(?P<keep>(?:password|passwd|api[_-]?key|secret|token)\s*[=:]\s*)['\"]?[^\s'\",;]{6,}['\"]?")),
)

HOSTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ipv4 address", re.compile(r"\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")),
    ("hostname", re.compile(r"\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
                            r"(?:com|net|org|io|internal|local|lan|cloud|ai)\b", re.IGNORECASE)),
)


def _replace(pattern: re.Pattern[str], text: str) -> str:
    """Replace the secret; named groups `keep` (before) and `tail` (after) stay."""

    def sub(m: re.Match[str]) -> str:
        found = m.groupdict()
        return f"{found.get('keep') or ''}{REDACTED}{found.get('tail') or ''}"

    return pattern.sub(sub, text)


def redact(text: str, hosts: bool = False) -> str:
    """Replace secrets (and with `hosts`, IP addresses and host names) by [REDACTED]."""
    for _name, pattern in SECRETS + (HOSTS if hosts else ()):
        text = _replace(pattern, text)
    return text


def _evidence(e: Evidence, hosts: bool) -> Evidence:
    return e.model_copy(update={"text": redact(e.text, hosts)})


def redact_finding(f: Finding, hosts: bool = False) -> Finding:
    """One finding with every text taken from the log redacted (evidence, captures, the cause
    that quotes them, an unrecognised error's title); what the library wrote is left as it is."""
    return f.model_copy(update={
        "evidence": [_evidence(e, hosts) for e in f.evidence],
        "captures": {k: redact(v, hosts) for k, v in f.captures.items()},
        "cause": redact(f.cause, hosts),
        "title": redact(f.title, hosts) if f.kind is FindingKind.unrecognised else f.title,
        "symptoms": [s.model_copy(update={"evidence": [_evidence(e, hosts) for e in s.evidence]})
                     for s in f.symptoms],
        "hypotheses": [h.model_copy(update={"evidence": [_evidence(e, hosts) for e in h.evidence]})
                       for h in f.hypotheses],
    })


def redact_report(report: Report, hosts: bool = False) -> Report:
    """The report with every text taken from the log (evidence, facts, timeline, captures)
    redacted; what the library wrote (titles, causes, fixes) is left as it is."""
    findings = [redact_finding(f, hosts) for f in report.findings]
    facts = {k: f.model_copy(update={"value": redact(f.value, hosts), "evidence": _evidence(f.evidence, hosts)})
             for k, f in report.facts.items()}
    timeline = [t.model_copy(update={"text": redact(t.text, hosts),
                                     "host": ("[REDACTED]" if hosts else t.host) if t.host else None})
                for t in report.timeline]
    return report.model_copy(update={"findings": findings, "facts": facts, "timeline": timeline})
