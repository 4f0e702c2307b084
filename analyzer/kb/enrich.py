"""Findings meet the knowledge base: each finding gets its related postmortems, and
errors no pattern knows get the nearest past incidents by meaning.

No model is needed when every finding is a pattern match: related postmortems are read
from the index (precomputed there) or, without an index, from the postmortems' own links.
The nearest incidents need the index; without one, the report says how to build it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.choices import FindingKind
from analyzer.errors import PatternError
from analyzer.models import Finding, Related

if TYPE_CHECKING:
    from analyzer.kb.index import IndexPlan
    from analyzer.kb.search import Hit
    from analyzer.kb.store import RelatedByPattern

NEAREST = 3  # past incidents offered for an unrecognised error
MIN_SIMILARITY = 0.5  # cosine similarity of the best passage; below it an incident is not offered


def _pattern_ids(f: Finding) -> list[str]:
    return list(f.members) if f.kind is FindingKind.chain else [f.id] if f.kind is FindingKind.pattern else []


def _linked(pattern_ids: Sequence[str]) -> RelatedByPattern:
    from analyzer.data import data_dir
    from analyzer.kb.postmortems import load_kb

    try:
        pms = load_kb(data_dir("kb"))
    except PatternError:
        return {}
    return {pid: [(pm.id, pm.front.title, 1.0) for pm in pms if pid in pm.front.patterns] for pid in pattern_ids}


def _related(p: IndexPlan, ids: Sequence[str]) -> tuple[RelatedByPattern, bool]:
    """The related postmortems of `ids`, and whether the index is fresh (read once: the
    sidecar answers both when it is current)."""
    from analyzer.kb.index import is_fresh
    from analyzer.kb.store import read_related, rewrite_related

    if (every := read_related(p.path, p.stamp)) is None:
        if not is_fresh(p):
            return _linked(ids), False
        every = rewrite_related(p.path, p.stamp)  # the next run reads the sidecar again
    return {pid: every.get(pid, []) for pid in ids}, True


def enrich(findings: list[Finding], index: Path | None, warnings: list[str]) -> list[Finding]:
    from analyzer.kb.index import plan

    p = plan(index)
    ids = sorted({pid for f in findings for pid in _pattern_ids(f)})
    related, fresh = _related(p, ids)
    out = []
    for f in findings:
        best: dict[str, Related] = {}
        for pm, title, score in (r for pid in _pattern_ids(f) for r in related.get(pid, [])):
            if pm not in best or score > best[pm].score:
                best[pm] = Related(id=pm, title=title, score=score)
        ranked = sorted(best.values(), key=lambda r: -r.score)[:5]
        out.append(f.model_copy(update={"related": ranked}))
    unknown = [f for f in out if f.kind is FindingKind.unrecognised]
    if unknown and not fresh:
        warnings.append(f"{len(unknown)} error(s) match no pattern; build the index with `triage kb index` "
                        "to see the nearest past incidents")
    elif unknown:
        from analyzer.kb.embed import NumpyMiniLM
        from analyzer.kb.search import search

        encoder = NumpyMiniLM(p.model)
        out = [nearest(f, search(p, f.evidence[0].text, 5, encoder=encoder))
               if f.kind is FindingKind.unrecognised else f for f in out]
    return out


def nearest(f: Finding, hits: Sequence[Hit]) -> Finding:
    """The past incidents and patterns nearest to an unrecognised error, offered as such: with
    their similarity, above a cut-off, and never with their fix steps."""
    near = [h for h in hits if h.similarity >= MIN_SIMILARITY][:NEAREST]
    if not near:
        return f
    said = "; ".join(f"{h.title} ({h.kind} {h.id}, similarity {h.similarity:.2f})" for h in near)
    return f.model_copy(update={
        "cause": f"{f.cause} Nearest known failures by meaning, not confirmed for this log: {said}.",
        "related": [Related(id=h.id, title=h.title, score=round(h.similarity, 4), kind=h.kind) for h in near],
        "reasons": [*f.reasons, f"nearest by meaning: {near[0].id} (similarity {near[0].similarity:.2f}, "
                                f"cut-off {MIN_SIMILARITY})"]})
