"""The site's similarity links, as the index holds them (`kb/store.py` computes both):
postmortem ↔ postmortem by whole-incident similarity, pattern → postmortem from the index's
`related` table (the postmortems a pattern names first, then by similarity), the same list
that reports show."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TOP = 5
MIN_SCORE = 0.35  # below this, two incidents have little in common

@dataclass(frozen=True, slots=True)
class Link:
    id: str
    score: float  # cosine similarity; 1.0 for an explicit link
    explicit: bool = False


@dataclass(frozen=True)
class RelatedLinks:
    """Empty when no index was given: pages then show explicit links only."""

    patterns: dict[str, list[Link]] = field(default_factory=dict)  # pattern id → postmortems
    postmortems: dict[str, list[Link]] = field(default_factory=dict)  # postmortem id → postmortems
    index: Path | None = None

    def of_pattern(self, pattern_id: str) -> list[Link]:
        return self.patterns.get(pattern_id, [])

    def of_postmortem(self, postmortem_id: str) -> list[Link]:
        return self.postmortems.get(postmortem_id, [])


def load_related(index: Path) -> RelatedLinks:
    from analyzer.kb.store import connect, postmortem_pairs, related_rows

    con = connect(index)
    try:
        rows = related_rows(con)
        pairs = postmortem_pairs(con, TOP, MIN_SCORE)
    finally:
        con.close()
    patterns: dict[str, list[Link]] = {}
    for r in rows:
        patterns.setdefault(r.pattern_id, []).append(Link(r.postmortem_id, r.score, r.explicit))
    postmortems: dict[str, list[Link]] = {}
    for a, b, score in pairs:
        postmortems.setdefault(a, []).append(Link(b, score))
    return RelatedLinks(patterns, postmortems, index)
