"""Similarity links precomputed from the embeddings in the DuckDB index.

Postmortem ↔ postmortem: for each passage of one incident, its best cosine match among
the passages of the other; the mean of those, taken both ways. Whole incidents that tell
the same story score high; one shared stock sentence does not. Pattern → postmortem: the
index's own `related` table (the postmortems a pattern names first, then by similarity).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TOP = 5
MIN_SCORE = 0.35  # below this, two incidents have little in common

_PAIRS = """
WITH pm AS (
    SELECT c.doc_id, c.seq, c.embedding FROM chunks c
    JOIN documents d ON d.id = c.doc_id AND d.kind = 'postmortem'
), best AS (
    SELECT a.doc_id AS a, a.seq, b.doc_id AS b, max(array_cosine_similarity(a.embedding, b.embedding)) AS s
    FROM pm a JOIN pm b ON a.doc_id <> b.doc_id
    GROUP BY ALL
), one_way AS (
    SELECT a, b, avg(s) AS s FROM best GROUP BY ALL
), both_ways AS (
    SELECT x.a, x.b, (x.s + y.s) / 2 AS score FROM one_way x JOIN one_way y ON x.a = y.b AND x.b = y.a
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY a ORDER BY score DESC, b) AS r FROM both_ways
)
SELECT a, b, score FROM ranked WHERE r <= ? AND score >= ? ORDER BY a, score DESC, b
"""


@dataclass(frozen=True, slots=True)
class Link:
    id: str
    score: float  # cosine similarity; 1.0 for an explicit link
    explicit: bool = False


@dataclass(frozen=True)
class Related:
    """Empty when no index was given: pages then show explicit links only."""

    patterns: dict[str, list[Link]] = field(default_factory=dict)  # pattern id → postmortems
    postmortems: dict[str, list[Link]] = field(default_factory=dict)  # postmortem id → postmortems
    index: Path | None = None

    def of_pattern(self, pattern_id: str) -> list[Link]:
        return self.patterns.get(pattern_id, [])

    def of_postmortem(self, postmortem_id: str) -> list[Link]:
        return self.postmortems.get(postmortem_id, [])


def load_related(index: Path) -> Related:
    from analyzer.kb.store import connect

    con = connect(index)
    try:
        rows = con.execute("SELECT pattern_id, postmortem_id, score, explicit FROM related "
                           "ORDER BY pattern_id, explicit DESC, score DESC, postmortem_id").fetchall()
        pairs = con.execute(_PAIRS, [TOP, MIN_SCORE]).fetchall()
    finally:
        con.close()
    patterns: dict[str, list[Link]] = {}
    for pid, pm, score, explicit in rows:
        patterns.setdefault(pid, []).append(Link(pm, 1.0 if explicit else round(float(score), 3), bool(explicit)))
    postmortems: dict[str, list[Link]] = {}
    for a, b, score in pairs:
        postmortems.setdefault(a, []).append(Link(b, round(float(score), 3)))
    return Related(patterns, postmortems, index)
