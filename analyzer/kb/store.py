"""The index: one DuckDB file with documents, chunks and their embeddings (FLOAT[384]),
pattern ↔ postmortem links and precomputed related postmortems.

Written atomically: built in a temporary file beside the target, then renamed over it, so
a crash mid-build leaves the previous index answering. Chunks are keyed by the hash of
their text; a rebuild copies the embeddings of unchanged chunks from the previous index
and embeds only the new ones."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.cache import cache_dir, read_cached, write_atomic
from analyzer.errors import TriageError
from analyzer.kb.documents import Document, digest
from analyzer.kb.embed import DIM, Embedder
from analyzer.kb.words import tokens

SCHEMA_VERSION = "4"  # 3: chunks.words, the passage tokenised for BM25; 4: documents.title_words
RELATED = 5


class IndexUnusable(TriageError):
    """The index file is missing, from another program, or damaged."""


def default_index_path(data_root: Path) -> Path:
    return cache_dir() / f"index-{digest(str(data_root.resolve()))[:12]}.duckdb"


@dataclass(frozen=True)
class BuildStats:
    documents: int
    chunks: int
    embedded: int  # chunks that needed the model (the rest were reused)


def connect(path: Path, read_only: bool = True) -> Any:
    import duckdb

    try:
        con = duckdb.connect(str(path), read_only=read_only)
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except duckdb.Error as exc:
        raise IndexUnusable(f"not a triage index or damaged ({str(exc).splitlines()[0]})", path,
                          help="rebuild it: triage kb index --rebuild") from exc
    if meta.get("schema") != SCHEMA_VERSION:
        con.close()
        raise IndexUnusable(f"index schema {meta.get('schema')!r}, expected {SCHEMA_VERSION}", path,
                          help="rebuild it: triage kb index --rebuild")
    return con


def read_meta(path: Path) -> dict[str, str] | None:
    """The index's metadata, or None when it is missing or unreadable."""
    if not path.exists():
        return None
    try:
        con = connect(path)
    except IndexUnusable:
        return None
    try:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()


def _previous_embeddings(path: Path, model: str) -> dict[str, list[float]]:
    """Embeddings of the previous index by passage hash, from any schema version that has
    them (an upgrade re-embeds nothing); none from a damaged or foreign file."""
    import duckdb

    if not path.exists():
        return {}
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return {}
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("model") != model:
            return {}
        return {h: list(e) for h, e in con.execute("SELECT hash, embedding FROM chunks").fetchall()}
    except duckdb.Error:
        return {}
    finally:
        con.close()


def build_index(path: Path, docs: Sequence[Document], embedder: Callable[[], Embedder], model: str,
                stamp: str) -> BuildStats:
    import duckdb

    reuse = _previous_embeddings(path, model)
    rows = [(d.id, i, text, digest(text)) for d in docs for i, text in enumerate(d.chunks)]
    missing = list(dict.fromkeys(h for *_r, h in rows if h not in reuse))
    if missing:
        texts = {h: t for _d, _i, t, h in rows}
        vectors = embedder().embed([texts[h] for h in missing])
        reuse.update(zip(missing, vectors, strict=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        _write(con, docs, rows, reuse, model, stamp)
        related = _related(con)
        con.close()
        os.replace(tmp, path)
        # after the index: a crash in between leaves a sidecar with the old stamp, never used
        _write_related(path, stamp, related)
    finally:
        con.close()
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    return BuildStats(len(docs), len(rows), len(missing))


def _remove_orphans(path: Path) -> None:
    """Temporary files left by indexers that were killed (their process is gone)."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = tmp.name[len(path.name) + 2:-len(".tmp")]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _write(con: Any, docs: Sequence[Document], rows: list[tuple[str, int, str, str]],
           vectors: dict[str, list[float]], model: str, stamp: str) -> None:
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE documents (id TEXT PRIMARY KEY, kind TEXT, title TEXT, path TEXT, hash TEXT, "
                "severity TEXT, fix TEXT, regexes TEXT, cause TEXT, title_words TEXT)")
    con.execute(f"CREATE TABLE chunks (doc_id TEXT, seq INTEGER, text TEXT, hash TEXT, embedding FLOAT[{DIM}], "
                "words TEXT)")
    con.execute("CREATE TABLE links (pattern_id TEXT, postmortem_id TEXT)")
    con.execute("CREATE TABLE related (pattern_id TEXT, postmortem_id TEXT, score DOUBLE, explicit BOOLEAN)")
    con.executemany("INSERT INTO meta VALUES (?, ?)",
                    [("schema", SCHEMA_VERSION), ("model", model), ("stamp", stamp)])
    con.executemany("INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(d.id, d.kind, d.title, d.path, d.hash, d.severity, json.dumps(d.fix), json.dumps(d.regexes),
                      d.cause, " ".join(tokens(d.title))) for d in docs])
    con.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                    [(doc, seq, text, h, vectors[h], " ".join(tokens(text))) for doc, seq, text, h in rows])
    links = [(p, d.id) for d in docs if d.kind == "postmortem" for p in d.links]
    if links:
        con.executemany("INSERT INTO links VALUES (?, ?)", links)
    con.execute(f"""
        INSERT INTO related
        WITH sims AS (
            SELECT p.doc_id AS pattern_id, m.doc_id AS postmortem_id,
                   max(array_cosine_similarity(p.embedding, m.embedding)) AS score
            FROM chunks p JOIN documents dp ON dp.id = p.doc_id AND dp.kind = 'pattern'
            JOIN chunks m ON true JOIN documents dm ON dm.id = m.doc_id AND dm.kind = 'postmortem'
            WHERE p.seq = 0
            GROUP BY ALL
        ), ranked AS (
            SELECT s.*, l.pattern_id IS NOT NULL AS explicit,
                   row_number() OVER (PARTITION BY s.pattern_id
                                      ORDER BY (l.pattern_id IS NOT NULL) DESC, s.score DESC) AS r
            FROM sims s LEFT JOIN links l ON l.pattern_id = s.pattern_id AND l.postmortem_id = s.postmortem_id
        )
        SELECT pattern_id, postmortem_id, score, explicit FROM ranked WHERE r <= {RELATED}
    """)


RelatedByPattern = dict[str, list[tuple[str, str, float]]]  # pattern id → (postmortem id, title, score)


@dataclass(frozen=True, slots=True)
class RelatedRow:
    """A postmortem related to a pattern: named by it (explicit, score 1.0) or near by meaning."""

    pattern_id: str
    postmortem_id: str
    title: str
    score: float  # 1.0 when explicit, else the best cosine similarity, rounded to 4 places
    explicit: bool


def related_rows(con: Any) -> list[RelatedRow]:
    """The precomputed related postmortems of every pattern, linked ones first: the one list
    that reports (through the sidecar) and the site's pages both show."""
    rows = con.execute(
        "SELECT r.pattern_id, r.postmortem_id, d.title, r.score, r.explicit "
        "FROM related r JOIN documents d ON d.id = r.postmortem_id "
        "ORDER BY r.pattern_id, r.explicit DESC, r.score DESC, r.postmortem_id").fetchall()
    return [RelatedRow(pid, pm, title, 1.0 if explicit else round(float(score), 4), bool(explicit))
            for pid, pm, title, score, explicit in rows]


def _related(con: Any) -> RelatedByPattern:
    out: RelatedByPattern = {}
    for r in related_rows(con):
        out.setdefault(r.pattern_id, []).append((r.postmortem_id, r.title, r.score))
    return out


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


def postmortem_pairs(con: Any, top: int, min_score: float) -> list[tuple[str, str, float]]:
    """Postmortem ↔ postmortem similarity: for each passage of one incident, its best cosine
    match among the passages of the other; the mean of those, taken both ways. Whole incidents
    that tell the same story score high; one shared stock sentence does not. The `top` best of
    each incident at or above `min_score`, rounded to 4 places."""
    return [(a, b, round(float(score), 4)) for a, b, score in con.execute(_PAIRS, [top, min_score]).fetchall()]


@dataclass(frozen=True, slots=True)
class DocumentRow:
    id: str
    kind: str  # pattern or postmortem
    title: str
    path: str
    fix: list[str]
    regexes: list[str]
    cause: str
    severity: str
    title_words: list[str]  # the title tokenised for BM25, stored like a passage's words


def documents(con: Any) -> dict[str, DocumentRow]:
    rows = con.execute("SELECT id, kind, title, path, fix, regexes, cause, severity, title_words FROM documents"
                       ).fetchall()
    return {r[0]: DocumentRow(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6] or "", r[7] or "",
                              r[8].split()) for r in rows}


def links(con: Any) -> list[tuple[str, str]]:
    """(pattern id, postmortem id) for every pattern a postmortem names."""
    return [(p, m) for p, m in con.execute("SELECT pattern_id, postmortem_id FROM links").fetchall()]


@dataclass(frozen=True, slots=True)
class PassageScore:
    doc_id: str
    text: str
    cosine: float  # similarity of the passage's embedding to the query's
    words: list[str]  # the passage tokenised for BM25


def passages(con: Any, vector: Sequence[float]) -> list[PassageScore]:
    rows = con.execute(f"SELECT doc_id, text, array_cosine_similarity(embedding, ?::FLOAT[{DIM}]), words FROM chunks",
                       [list(vector)]).fetchall()
    return [PassageScore(d, t, float(c or 0.0), w.split()) for d, t, c, w in rows]


def rewrite_related(path: Path, stamp: str) -> RelatedByPattern:
    """The sidecar again, from a current index whose sidecar is missing or damaged."""
    con = connect(path)
    try:
        related = _related(con)
    finally:
        con.close()
    _write_related(path, stamp, related)
    return related


def _write_related(path: Path, stamp: str, related: RelatedByPattern) -> None:
    """Each postmortem's title once, and per pattern its (postmortem, score) pairs: a third of
    the bytes to parse on every run that consults the knowledge base."""
    titles = {pm: title for rows in related.values() for pm, title, _score in rows}
    pairs = {pid: [[pm, score] for pm, _title, score in rows] for pid, rows in related.items()}
    write_atomic(related_path(path), json.dumps({"stamp": stamp, "titles": titles, "related": pairs}).encode())


def related_path(index: Path) -> Path:
    return index.with_name(index.name + ".related.json")


def read_related(index: Path, stamp: str) -> RelatedByPattern | None:
    """The related postmortems of every pattern, as written beside the index by its build:
    a run whose findings are all pattern matches needs no database (DuckDB's import alone
    costs half a second). None when the sidecar is missing, damaged or of another build, or
    when the index file changed after it (replaced, damaged: the database must be looked at)."""
    try:
        if index.stat().st_mtime_ns > related_path(index).stat().st_mtime_ns:
            return None
    except OSError:
        return None
    data = read_cached(related_path(index))
    try:
        doc = json.loads(data) if data is not None else None
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("stamp") != stamp:
        return None
    titles, related = doc.get("titles"), doc.get("related")
    if not isinstance(titles, dict) or not isinstance(related, dict):
        return None  # damaged, or the older layout with a title in every row: read the database
    try:
        return {str(pid): [(str(pm), str(titles[pm]), float(score)) for pm, score in rows]
                for pid, rows in related.items()}
    except (KeyError, TypeError, ValueError):
        return None
