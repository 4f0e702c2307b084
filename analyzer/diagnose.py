"""Matches + facts → ranked findings with reasons: version-gated rules, causal chains,
folding of symptoms under their cause, runs across restarts, and the timeline.

Score = 10 x severity + 4 x confidence (after facts support or contradict it)
        + 6 for the root of a causal chain + 2 per supporting fact - 3 per contradiction
        - 2 when it last occurred long (over a day) before the last failure.
Ties go to the earlier first occurrence: in a cascade the cause is logged first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from analyzer.choices import Confidence, FindingKind
from analyzer.clock import iso, to_seconds
from analyzer.facts import derive, distinct, newest, normalise, spoken
from analyzer.findings import build_findings, fill
from analyzer.library.compile import CompiledLibrary
from analyzer.library.rules import Chain, Rule, RuleBook, Step, Table, holds, resolve, spell
from analyzer.library.schema import Mark
from analyzer.models import Evidence, Fact, Finding, Hypothesis, Match, Symptom, TimelineEntry, whole_line

# Ranking: a finding's score is SEVERITY_WEIGHT per severity level plus CONFIDENCE_WEIGHT per
# confidence level, plus or minus what the log's facts and chains say; ties go to the earlier line.
SEVERITY_WEIGHT = 10  # one severity level outweighs any confidence difference (2 levels x 4)
CONFIDENCE_WEIGHT = 4  # a surer explanation of the same severity ranks first
FACTS_SUPPORT = 2  # a `supports:` condition or a version rule holds: evidence beyond the message
FACTS_CONTRADICT = -3  # a `contradicts:` condition holds: outweighs one support, confidence drops a level
CHAIN_BONUS = 6  # the root of a causal chain: lifts a cause above the louder symptoms it led to
REFINES_ABOVE = 0.5  # a specific pattern ranks just above the general one it refines, when both are found
CHAIN_ABOVE_ROOT = 1  # a chain ranks just above its own root finding, which it explains more fully
STALE = -2  # last seen long before the latest failure: an old problem, probably not this outage
STALE_S = 86400  # "long before": a day


@dataclass(frozen=True, slots=True)
class Occurrence:
    pattern_id: str
    path: str
    line: int
    seconds: float | None
    host: str | None
    unit: str | None
    text: str


def occurrences(matches: Sequence[Match]) -> list[Occurrence]:
    out = []
    for m in matches:
        r = m.records[0]
        out.append(Occurrence(m.pattern_id, r.path, r.line, to_seconds(r.time), r.host,
                              m.captures.get("unit") or r.unit, r.message.split("\n")[0]))
    return sorted(out, key=lambda o: (o.path, o.line))


@dataclass
class Diagnosis:
    findings: list[Finding]
    facts: dict[str, Fact]
    timeline: list[TimelineEntry]


def diagnose(matches: Sequence[Match], fact_sightings: Sequence[Fact], library: CompiledLibrary) -> Diagnosis:
    book = library.rulebook
    facts = newest(fact_sightings, book.facts)
    derive(facts, book.tables)
    values = {name: f.value for name, f in facts.items()}
    failures = [m for m in matches if not library.is_signal(m.pattern_id)]
    occ = occurrences(matches)
    found = build_findings(failures, library.patterns, book.phase_of)
    reasons: dict[str, list[str]] = {pid: [] for pid in found}
    bonus: dict[str, float] = dict.fromkeys(found, 0.0)
    for pid, finding in list(found.items()):
        finding = _gate_fix(finding, library, values, book)
        found[pid] = _weigh_facts(finding, library, values, book.tables, reasons[pid], bonus)
    for rule in book.rules:
        _apply_rule(rule, found, facts, fact_sightings, values, book.tables, reasons, bonus)
    chains = [c for chain in book.chains
              if (c := _chain(chain, occ, found, library, reasons, bonus, fact_sightings))]
    ranked = _refine(_rank(found, reasons, bonus, occ), library)
    scores = {f.id: f.score for f in ranked}
    why = {f.id: f.reasons for f in ranked}
    chains = [c.model_copy(update={"score": scores[c.members[0]] + CHAIN_ABOVE_ROOT,
                                   "reasons": [*c.reasons, *why[c.members[0]],
                                               f"ranked just above its root cause (+{CHAIN_ABOVE_ROOT})"]})
              for c in chains]
    ranked = _fold(sorted(chains + ranked, key=lambda f: (-f.score, f.first_line)), library)
    starts = {pid for pid in library.patterns if library.mark(pid) is Mark.start}
    ranked = [f.model_copy(update={"runs": _runs(f, occ, starts), **_times(f, occ)}) for f in ranked]
    return Diagnosis(ranked, facts, _timeline(occ, ranked, library))


def number(findings: Sequence[Finding]) -> list[Finding]:
    """The final order, numbered once (after the unrecognised errors took their places), and
    the anti-fixes flagged by number: a finding whose captured values appear in what a higher
    finding says to avoid is the tempting workaround at work (CUDA_HOME=/dev/null after the
    FlashInfer gate), whichever line shows it: the finding says which one it undermines."""
    out: list[Finding] = []
    for i, f in enumerate(findings):
        f = f.model_copy(update={"rank": i + 1})
        values = [_whole(v) for v in f.captures.values() if _code_like(v)]
        warned = next((g for g in out if any(v.search(a) for v in values for a in g.avoid)), None)
        if warned is not None:
            f = f.model_copy(update={
                "cause": f"Anti-fix: this is the workaround that finding #{warned.rank} ({warned.title}) warns "
                         f"against; it does not cure #{warned.rank} and breaks more. {f.cause}",
                "reasons": [*f.reasons,
                            f"its captured values appear in what #{warned.rank} ({warned.id}) says to avoid"]})
        out.append(f)
    return out


def _code_like(value: str) -> bool:
    """A value an avoid text can name as the workaround itself (a path, a setting, a flag, a
    version), not a plain word that any advice may mention ("Triton", "Llama")."""
    return len(value) >= 5 and not value.isalpha()


def _whole(value: str) -> re.Pattern[str]:
    """The value as a whole token: '/dev/null' is in '`CUDA_HOME=/dev/null`', not in '/dev/nullx'."""
    return re.compile(rf"(?<![\w/.-]){re.escape(value)}(?![\w/])")


def _gate_fix(f: Finding, library: CompiledLibrary, values: Mapping[str, str], book: RuleBook) -> Finding:
    """Keep the fix steps that fit this environment: a conditional step goes when a fact
    (or a value the error line itself captured) contradicts it, and says which conditions
    the log could not settle."""
    pattern = library.patterns[f.id].pattern
    if all(isinstance(s, str) for s in pattern.fix):
        return f
    scope = {**values, **{k: normalise(v, book.facts[k].unit) for k, v in f.captures.items() if k in book.facts}}
    steps: list[str] = []
    for step in pattern.fix:
        if isinstance(step, str):
            steps.append(fill(step, f.captures))
            continue
        verdicts = [holds(c, scope, book.tables) for c in step.when]
        # a derived fact (the failure phase) that the log does not show means "not this case"
        if False in verdicts or any(v is None and book.facts[c.split(" ")[0]].derived
                                    for c, v in zip(step.when, verdicts, strict=True)):
            continue
        text = fill(step.step, f.captures)
        open_ = [c for c, v in zip(step.when, verdicts, strict=True) if v is None]
        steps.append(f"{text} (only if {spell(open_, book.facts)}; the log does not say)" if open_ else text)
    return f.model_copy(update={"fix": steps or f.fix})


def _weigh_facts(f: Finding, library: CompiledLibrary, values: Mapping[str, str], tables: Mapping[str, Table],
                 why: list[str], bonus: dict[str, float]) -> Finding:
    pattern = library.patterns[f.id].pattern
    for cond in pattern.supports:
        if holds(cond, values, tables):
            why.append(f"facts support it: {_show(cond, values, tables)} (+{FACTS_SUPPORT})")
            bonus[f.id] += FACTS_SUPPORT
    confidence = f.confidence
    for cond in pattern.contradicts:
        if holds(cond, values, tables):
            why.append(f"facts contradict it: {_show(cond, values, tables)} ({FACTS_CONTRADICT}, confidence lowered)")
            bonus[f.id] += FACTS_CONTRADICT
            confidence = confidence.lowered
    return f.model_copy(update={"confidence": confidence})


def _show(cond: str, values: Mapping[str, str], tables: Mapping[str, Table]) -> str:
    fact, op, term = cond.split(" ")
    right = resolve(term, values, tables)
    return f"{fact} {values.get(fact)} {op} {right}" + (f" ({term})" if right != term else "")


def _apply_rule(rule: Rule, found: dict[str, Finding], facts: Mapping[str, Fact], sightings: Sequence[Fact],
                values: Mapping[str, str], tables: Mapping[str, Table], reasons: dict[str, list[str]],
                bonus: dict[str, float]) -> None:
    if not all(holds(c, values, tables) for c in rule.when):
        return
    varied = {name: distinct(sightings, name) for name in rule.varies}
    if any(len(seen) < 2 for seen in varied.values()):
        return
    shown = " and ".join([*(_show(c, values, tables) for c in rule.when),
                          *(f"{name} seen as {spoken(f.value for f in seen)}" for name, seen in varied.items())])
    explained = [pid for pid in rule.explains if pid in found]
    for pid in explained:
        reasons[pid].append(f"rule {rule.id} confirms it from facts: {shown} (+{FACTS_SUPPORT})")
        bonus[pid] += FACTS_SUPPORT
    if explained:
        return
    used = [name for c in rule.when for name in re.findall(r"[a-z_]+", c) if name in facts]
    subst = dict(values) | {f"{t}[{k}]": str(resolve(f"{t}[{k}]", values, tables))
                            for t in tables for k in values}
    subst |= {f"{name}:all": spoken(f.value for f in seen) for name, seen in varied.items()}
    evidence = [facts[n].evidence for n in dict.fromkeys(used) if n in facts]
    evidence += [f.evidence for seen in varied.values() for f in seen]
    text = rule.filled(subst)
    found[rule.id] = Finding(
        id=rule.id, kind=FindingKind.rule, title=text.title, severity=rule.severity, confidence=rule.confidence,
        cause=text.cause, fix=text.fix, avoid=list(rule.avoid), references=[rule.source],
        evidence=evidence, first_line=min((e.line for e in evidence), default=0),
        last_line=max((e.line for e in evidence), default=0))
    reasons[rule.id] = [f"rule from facts alone: {shown}"]
    bonus[rule.id] = 0.0


def _step_ok(step: Step, o: Occurrence, library: CompiledLibrary) -> bool:
    if o.pattern_id in step.patterns_exclude:
        return False
    if o.pattern_id in step.patterns:
        return True
    cp = library.patterns[o.pattern_id]
    return cp.pattern.area in step.areas and not library.is_signal(o.pattern_id)


def _chain(chain: Chain, occ: Sequence[Occurrence], found: dict[str, Finding], library: CompiledLibrary,
           reasons: dict[str, list[str]], bonus: dict[str, float], sightings: Sequence[Fact]) -> Finding | None:
    """Earliest occurrence of each step in order, same input and host, within the window."""
    links: list[Occurrence] = []
    for step in chain.steps:
        after = links[-1] if links else None
        nxt = next((o for o in occ if _step_ok(step, o, library) and _follows(o, after, links, chain.window_s)), None)
        if nxt is None:
            return None
        links.append(nxt)
    root = links[chain.root - 1]
    root_finding = found.get(root.pattern_id)
    if root_finding is None:
        return None
    members = list(dict.fromkeys([root.pattern_id] + [o.pattern_id for o in links if o.pattern_id in found]))
    fix = [" ".join(step.split()) for step in chain.fix] + list(root_finding.fix)
    avoid = list(root_finding.avoid)
    for pid in members[1:]:
        other = found[pid]
        fix += [f"Also, for {pid}: {other.fix[0]}"] if other.fix else []
        avoid += [a for a in other.avoid if a not in avoid]
    evidence = [Evidence(path=o.path, line=o.line, text=whole_line(o.text)) for o in links]
    reasons[root.pattern_id].append(f"root of causal chain {chain.id} (+{CHAIN_BONUS})")
    bonus[root.pattern_id] += CHAIN_BONUS
    chain_reasons = [f"causal chain {chain.id}: " + " → ".join(o.pattern_id for o in links),
                     f"root cause: {root.pattern_id} (step {chain.root})"]
    return Finding(
        id=chain.id, kind=FindingKind.chain, title=fill(chain.title, {"root_title": root_finding.title}),
        severity=max((found[p].severity for p in members), key=lambda s: s.rank),
        confidence=root_finding.confidence,
        cause=" ".join(chain.description.split()).replace("{root_cause}", root_finding.cause),
        why=root_finding.why, fix=fix, avoid=avoid, references=root_finding.references, evidence=evidence,
        count=1, first_line=links[0].line, last_line=links[-1].line, captures=root_finding.captures,
        reasons=chain_reasons, members=members, hypotheses=_candidates(chain, links[chain.root - 1], occ, sightings))


def _candidates(chain: Chain, root: Occurrence, occ: Sequence[Occurrence],
                sightings: Sequence[Fact]) -> list[Hypothesis]:
    """Each candidate explanation of a chain, supported when the log shows, before the root
    step, a line of one of its patterns or one of its facts with two different values."""
    out = []
    before = [f for f in sightings if f.evidence.path == root.path and f.evidence.line < root.line]
    for c in chain.candidates:
        evidence = [Evidence(path=o.path, line=o.line, text=whole_line(o.text)) for o in occ
                    if o.pattern_id in c.patterns and o.path == root.path and o.line < root.line][:2]
        for name in c.facts_changed:
            if len(seen := distinct(before, name)) > 1:  # two releases, not one release spelt two ways
                evidence += [f.evidence for f in seen[:2]]
        out.append(Hypothesis(claim=" ".join(c.claim.split()), supported=bool(evidence), evidence=evidence))
    return out


def _follows(o: Occurrence, after: Occurrence | None, links: Sequence[Occurrence], window: int) -> bool:
    if after is None:
        return True
    if o.path != after.path or o.line <= after.line or (o.host and after.host and o.host != after.host):
        return False
    first = links[0]
    return o.seconds is None or first.seconds is None or o.seconds - first.seconds <= window


def _rank(found: Mapping[str, Finding], reasons: Mapping[str, list[str]], bonus: Mapping[str, float],
          occ: Sequence[Occurrence]) -> list[Finding]:
    last_failure = max((o.seconds for o in occ if o.pattern_id in found and o.seconds is not None), default=None)
    scored = []
    for pid, f in found.items():
        score = SEVERITY_WEIGHT * f.severity.rank + CONFIDENCE_WEIGHT * f.confidence.rank + bonus.get(pid, 0.0)
        why = [f"severity {f.severity.value} (+{SEVERITY_WEIGHT * f.severity.rank})",
               f"confidence {f.confidence.value} (+{CONFIDENCE_WEIGHT * f.confidence.rank})", *reasons.get(pid, [])]
        last = max((o.seconds for o in occ if o.pattern_id == pid and o.seconds is not None), default=None)
        if last_failure is not None and last is not None and last_failure - last > STALE_S:
            score += STALE
            why.append(f"last seen over a day before the latest failure ({STALE})")
        why.append(f"first seen at line {f.first_line}")
        scored.append(f.model_copy(update={"score": score, "reasons": why}))
    return sorted(scored, key=lambda f: (-f.score, f.first_line))


def _beneath(library: CompiledLibrary, pid: str) -> dict[str, list[str]]:
    """The patterns a pattern outranks when both are found: the general ones it `refines` and the
    consequences it `explains` (rules' findings are not patterns: none)."""
    own = library.patterns.get(pid)
    return {"refines": own.pattern.refines, "explains": own.pattern.explains} if own else {}


def _refine(ranked: list[Finding], library: CompiledLibrary) -> list[Finding]:
    """A specific pattern found with a general one it `refines`, or a cause found with the
    consequence it `explains`, ranks just above it; along a chain of them (a pattern refining one
    that refines a third) each ends above the next, so the passes go on until no score moves."""
    out = list(ranked)
    score = {f.id: f.score for f in out}
    for _ in range(len(out)):
        moved = False
        for i, f in enumerate(out):
            found = {key: [g for g in ids if g in score] for key, ids in _beneath(library, f.id).items()}
            top = max((score[g] for ids in found.values() for g in ids), default=None)
            if top is not None and f.score < top + REFINES_ABOVE:
                said = "; ".join(f"{key} {', '.join(ids)}" for key, ids in found.items() if ids)
                reason = f"{said}, found too: ranked just above it (+{REFINES_ABOVE})"
                reasons = f.reasons if reason in f.reasons else [*f.reasons, reason]
                out[i] = f.model_copy(update={"score": top + REFINES_ABOVE, "reasons": reasons})
                score[f.id] = top + REFINES_ABOVE
                moved = True
        if not moved:
            break
    return sorted(out, key=lambda f: (-f.score, f.first_line))


def _fold(findings: list[Finding], library: CompiledLibrary) -> list[Finding]:
    """Chain members fold under their chain, a general pattern under the specific one that
    refines it, a consequence under the cause that explains it. A low-confidence (generic
    symptom) finding folds under the highest finding of its area, or else under the top finding
    when that one was logged before it: a symptom follows its cause."""
    out: list[Finding] = []
    folded: dict[str, list[Symptom]] = {}
    chained = {m: f.id for f in findings if f.kind is FindingKind.chain for m in f.members}
    present = {f.id for f in findings}
    refined = {g: f.id for f in reversed(findings) if f.kind is FindingKind.pattern
               for ids in _beneath(library, f.id).values() for g in ids if g in present and g not in chained}

    def areas(g: Finding) -> set[str]:
        ids = g.members if g.kind is FindingKind.chain else [g.id]
        return {library.patterns[i].pattern.area for i in ids if i in library.patterns}

    under: dict[str, str] = {}  # a folded finding -> the finding it is shown under
    for f in findings:  # ranked order
        host = chained.get(f.id)
        specific = refined.get(f.id)
        while specific in under:  # the specific pattern is itself folded: under the one that shows it
            specific = under[specific]
        if host is None and specific in {g.id for g in out}:
            host = specific  # the specific pattern (or the cause) is shown
        if host is None and f.kind is FindingKind.pattern and f.confidence is Confidence.low:
            area = library.patterns[f.id].pattern.area
            causes = [g for g in out if g.confidence is not Confidence.low]
            host = next((g.id for g in causes if area in areas(g) and g.first_line <= f.last_line), None)
            if host is None and causes and causes[0].first_line <= f.first_line:
                host = causes[0].id
        if host is not None:
            under[f.id] = host
            folded.setdefault(host, []).append(Symptom(id=f.id, title=f.title, count=f.count, evidence=f.evidence[:2]))
            continue
        out.append(f)
    return [f.model_copy(update={"symptoms": folded.get(f.id, [])}) for f in out]


def _runs(f: Finding, occ: Sequence[Occurrence], start_ids: set[str]) -> int:
    starts = sorted((o.path, o.line) for o in occ if o.pattern_id in start_ids)
    mine = [(o.path, o.line) for o in occ if o.pattern_id == f.id]
    if not mine:
        return 1
    return len({sum(1 for s in starts if s[0] == p and s[1] < line) for p, line in mine})


def _times(f: Finding, occ: Sequence[Occurrence]) -> dict[str, str | None]:
    """The first and last times of a finding's occurrences (a chain's: of its links)."""
    ids = {f.id, *f.members}
    seconds = [o.seconds for o in occ if o.pattern_id in ids and o.seconds is not None]
    return {"first_time": iso(min(seconds, default=None)), "last_time": iso(max(seconds, default=None))}


def _timeline(occ: Sequence[Occurrence], findings: Sequence[Finding],
              library: CompiledLibrary) -> list[TimelineEntry]:
    first: dict[str, str] = {}
    for f in findings:
        for pid in [f.id, *f.members, *(s.id for s in f.symptoms)]:
            first.setdefault(pid, f.id)
    entries: list[TimelineEntry] = []
    seen: set[str] = set()
    marks = {o.pattern_id: library.mark(o.pattern_id) for o in occ}
    signal_lines = {(o.path, o.line) for o in occ if marks[o.pattern_id] is not None}
    for o in occ:
        kind = marks[o.pattern_id]
        if kind is None and (o.pattern_id in seen or o.pattern_id not in first or (o.path, o.line) in signal_lines):
            continue
        seen.add(o.pattern_id)
        entries.append(TimelineEntry(time=iso(o.seconds), path=o.path, line=o.line, host=o.host,
                                     unit=o.unit, kind=kind.value if kind else o.pattern_id, text=whole_line(o.text)))
    return entries
