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

SCHEMA_VERSION = "3"  # 3: chunks.words, the passage tokenised for BM25
RELATED = 5


class IndexError_(TriageError):
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
        raise IndexError_(f"not a triage index or damaged ({str(exc).splitlines()[0]})", path,
                          help="rebuild it: triage kb index --rebuild") from exc
    if meta.get("schema") != SCHEMA_VERSION:
        con.close()
        raise IndexError_(f"index schema {meta.get('schema')!r}, expected {SCHEMA_VERSION}", path,
                          help="rebuild it: triage kb index --rebuild")
    return con


def read_meta(path: Path) -> dict[str, str] | None:
    """The index's metadata, or None when it is missing or unreadable."""
    if not path.exists():
        return None
    try:
        con = connect(path)
    except IndexError_:
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
                "severity TEXT, fix TEXT, regexes TEXT, cause TEXT)")
    con.execute(f"CREATE TABLE chunks (doc_id TEXT, seq INTEGER, text TEXT, hash TEXT, embedding FLOAT[{DIM}], "
                "words TEXT)")
    con.execute("CREATE TABLE links (pattern_id TEXT, postmortem_id TEXT)")
    con.execute("CREATE TABLE related (pattern_id TEXT, postmortem_id TEXT, score DOUBLE, explicit BOOLEAN)")
    con.executemany("INSERT INTO meta VALUES (?, ?)",
                    [("schema", SCHEMA_VERSION), ("model", model), ("stamp", stamp)])
    con.executemany("INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(d.id, d.kind, d.title, d.path, d.hash, d.severity, json.dumps(d.fix), json.dumps(d.regexes),
                      d.cause) for d in docs])
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


def _related(con: Any) -> RelatedByPattern:
    """Precomputed related postmortems of every pattern: (id, title, score), linked ones first."""
    rows = con.execute(
        "SELECT r.pattern_id, r.postmortem_id, d.title, CASE WHEN r.explicit THEN 1.0 ELSE r.score END AS s "
        "FROM related r JOIN documents d ON d.id = r.postmortem_id "
        "ORDER BY r.pattern_id, r.explicit DESC, r.score DESC").fetchall()
    out: RelatedByPattern = {}
    for pid, pm, title, score in rows:
        out.setdefault(pid, []).append((pm, title, round(float(score), 4)))
    return out


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
    write_atomic(related_path(path), json.dumps({"stamp": stamp, "related": related}).encode())


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
    if not isinstance(doc, dict) or doc.get("stamp") != stamp or not isinstance(doc.get("related"), dict):
        return None
    return {pid: [(str(pm), str(title), float(score)) for pm, title, score in rows]
            for pid, rows in doc["related"].items()}
