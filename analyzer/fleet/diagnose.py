"""Across nodes: the earliest failure that is not another node's echo is the root cause; the
echoes (fleet.yaml's consequences: collective timeouts, peers gone, stores lost) on every node
fold under it with their node and process counts.

Node clocks are not corrected: events on different nodes closer than the rule book's skew
(5 s) are taken as simultaneous, and the report says when that leaves the order uncertain.
Only failures of medium severity or more, or errors no pattern knows, can be the root, and
when echoes were seen, only those from `LEAD` before the first echo on: a harmless warning
hours earlier does not take the blame.

A rule over a fact that every node of a job must share (`varies:`, NCCL's release) is checked
across the nodes as well: each node's value as its own report gives it; the nodes in the
smaller group are named first, as the odd ones out. Such a finding ranks just below the root.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from analyzer.choices import FindingKind, Severity
from analyzer.facts import release, spoken
from analyzer.fleet.model import FleetFinding, FleetReport, FleetSymptom, NodeCount, NodeEvidence, NodeSummary
from analyzer.fleet.table import FindingRow, FleetTable
from analyzer.library.rules import RuleBook
from analyzer.models import Fact, Finding

LEAD = dt.timedelta(hours=1)  # how long before the first echo a root cause may lie


def diagnose_fleet(table: FleetTable, exemplars: dict[str, Finding], titles: dict[str, str],
                   nodes: list[NodeSummary], book: RuleBook, warnings: list[str],
                   facts: Mapping[str, Mapping[str, Fact]] | None = None) -> FleetReport:
    rows = table.findings()
    echo_ids = set(book.consequences)
    echoes = [r for r in rows if r.id in echo_ids]
    causes = [r for r in rows if r.id not in echo_ids and r.id in exemplars]
    first_echo = min((_time(r.first_time) for r in echoes if r.first_time), default=None)
    root, certainty = _root(causes, exemplars, first_echo, book.skew_s)
    findings: list[FleetFinding] = []
    if root is not None:
        symptoms = [_symptom(r, titles) for r in echoes]
        findings.append(_finding(root, exemplars[root.id], table, root=True, symptoms=symptoms,
                                 reasons=[certainty, *_echo_reasons(symptoms, root.first_node)]))
    for r in causes:
        if root is None or r.id != root.id:
            findings.append(_finding(r, exemplars[r.id], table))
    if root is None:
        findings += [_finding(r, exemplars[r.id], table, consequence=True) for r in echoes if r.id in exemplars]
    skews = [f for f in _skews(book, facts or {}) if f.id not in exemplars]
    ranked = sorted(findings, key=lambda f: (not f.root, f.consequence, _order(f)))
    ranked = ranked[:1] + skews + ranked[1:] if ranked and ranked[0].root else skews + ranked
    ranked = [f.model_copy(update={"rank": i}) for i, f in enumerate(ranked, 1)]
    straggler = _straggler(nodes, echoes) if root is None else None
    return FleetReport(nodes=nodes, findings=ranked, root_node=root.first_node if root else None,
                       alignment=_alignment(book.skew_s, certainty if root else None), straggler=straggler,
                       warnings=warnings)


def _root(causes: Sequence[FindingRow], exemplars: dict[str, Finding], first_echo: dt.datetime | None,
          skew_s: float) -> tuple[FindingRow | None, str]:
    """The earliest cause that could be the root, and how sure its place in time is."""
    eligible = [r for r in causes if _can_lead(exemplars[r.id])]
    if first_echo is not None:
        near = [r for r in eligible if r.first_time and first_echo - LEAD <= _time(r.first_time)
                <= first_echo + dt.timedelta(seconds=skew_s)]
        eligible = near or eligible
    timed = sorted((r for r in eligible if r.first_time), key=lambda r: (_time(r.first_time),
                                                                           -exemplars[r.id].severity.rank))
    if not timed:
        untimed = sorted(eligible, key=lambda r: -exemplars[r.id].severity.rank)
        if not untimed:
            return None, ""
        return untimed[0], "the logs give no times for it: it leads by severity, not by order in time"
    root = timed[0]
    t0 = _time(root.first_time)
    rivals = [r for r in timed[1:] if r.first_node != root.first_node
              and (_time(r.first_time) - t0).total_seconds() <= skew_s]
    echo_gap = (first_echo - t0).total_seconds() if first_echo is not None else None
    if rivals:
        names = ", ".join(sorted({r.first_node for r in rivals}))
        return root, (f"uncertain order: {names} failed within {skew_s:g} s of {root.first_node}, "
                      "closer than node clocks can be trusted")
    if echo_gap is not None and echo_gap < skew_s:
        return root, f"uncertain order: the first echo on another node came within {skew_s:g} s of it"
    lead = f", {_duration(echo_gap)} before the first echo on another node" if echo_gap is not None else ""
    return root, f"the earliest failure on any node ({root.first_time} on {root.first_node}{lead})"


def _skews(book: RuleBook, facts: Mapping[str, Mapping[str, Fact]]) -> list[FleetFinding]:
    """The `varies:` rules across nodes: a fact with different values on different nodes."""
    out = []
    for rule in book.rules:
        if rule.when or len(rule.varies) != 1:  # a condition on one node's facts does not combine
            continue
        name = rule.varies[0]
        groups: dict[object, list[tuple[str, Fact]]] = {}
        for node in sorted(facts):
            if (fact := facts[node].get(name)) is not None:
                groups.setdefault(release(fact.value), []).append((node, fact))
        if len(groups) < 2:
            continue
        ordered = sorted(groups.values(), key=len)  # the odd ones out first (stable: by node name)
        seen = [(node, fact) for group in ordered for node, fact in group]
        subst = {f"{name}:all": spoken(group[0][1].value for group in ordered)}
        by_node = "; ".join(f"{', '.join(n for n, _ in group)}: {group[0][1].value}" for group in ordered)
        text = rule.filled(subst)
        out.append(FleetFinding(
            id=rule.id, kind=FindingKind.rule, title=text.title, severity=rule.severity, confidence=rule.confidence,
            cause=text.cause, fix=text.fix, avoid=list(rule.avoid), references=[rule.source],
            nodes=[NodeCount(node=n, count=1) for n, _ in seen], first_node=ordered[0][0][0], count=len(seen),
            processes=len(seen),
            evidence=[NodeEvidence(node=n, path=f.evidence.path, line=f.evidence.line, text=f.evidence.text)
                      for n, f in seen],
            reasons=[f"{seen[0][1].label} differs between nodes ({by_node})"]))
    return out


def _can_lead(f: Finding) -> bool:
    return f.kind is FindingKind.unrecognised or f.severity.rank >= Severity.medium.rank


def _finding(r: FindingRow, f: Finding, table: FleetTable, root: bool = False, consequence: bool = False,
             symptoms: list[FleetSymptom] | None = None, reasons: list[str] | None = None) -> FleetFinding:
    return FleetFinding(
        id=r.id, kind=f.kind, title=f.title, severity=f.severity, confidence=f.confidence, cause=f.cause,
        fix=f.fix, avoid=f.avoid, references=f.references, nodes=[_count(p) for p in r.per_node],
        first_node=r.first_node, first_time=r.first_time, last_time=r.last_time, count=r.count,
        processes=r.processes, consequence=consequence, root=root, symptoms=symptoms or [],
        evidence=[NodeEvidence(node=n, path=p, line=line, text=t) for n, p, line, t in table.evidence(r.id)],
        reasons=[x for x in (reasons or []) if x])


def _count(p: tuple[str, int, int, int, str | None]) -> NodeCount:
    return NodeCount(node=p[0], count=p[1], runs=p[2], processes=p[3], first_time=p[4])


def _symptom(r: FindingRow, titles: dict[str, str]) -> FleetSymptom:
    return FleetSymptom(id=r.id, title=titles.get(r.id, r.id), nodes=sorted({p[0] for p in r.per_node}),
                        processes=r.processes, count=r.count, first_time=r.first_time)


def _echo_reasons(symptoms: list[FleetSymptom], root_node: str) -> list[str]:
    out = []
    for s in symptoms:
        others = [n for n in s.nodes if n != root_node]
        if others:
            out.append(f"{s.title} on {len(others)} other node(s), {s.processes} process(es): an echo of this failure")
    return out


def _straggler(nodes: list[NodeSummary], echoes: Sequence[FindingRow]) -> str | None:
    """With echoes on several nodes and no failure of its own anywhere: the one node that
    logged nothing is the one the others waited for (or it died without a word)."""
    echoing = {p[0] for r in echoes for p in r.per_node}
    if len(echoing) < 2:
        return None
    silent = [n.name for n in nodes if n.name not in echoing and n.findings == 0 and not n.from_report]
    return silent[0] if len(silent) == 1 else None


def _alignment(skew_s: float, certainty: str | None) -> str:
    base = (f"node clocks are compared as logged (not corrected); events closer than {skew_s:g} s on different "
            "nodes are taken as simultaneous")
    return f"{base}; root: {certainty}" if certainty else base


def _order(f: FleetFinding) -> tuple[str, int]:
    return (f.first_time or "9999", -f.severity.rank)


def _time(iso: str | None) -> dt.datetime:
    assert iso is not None
    return dt.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
