"""Hybrid search over the index: vector similarity (the query embedded by the torch-free
encoder) fused with BM25 over the same passages, plus a strong boost when the query is an
error string that a pattern's regex recognises. One document per hit, with its best
passage."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from analyzer.kb.embed import NumpyMiniLM
from analyzer.kb.index import IndexPlan
from analyzer.kb.store import connect
from analyzer.kb.words import tokens

VECTOR_WEIGHT = 0.6
LEXICAL_WEIGHT = 0.4
REGEX_BONUS = 0.5
REGEX_SHORTLIST = 10  # a pasted error line shares rare words with its pattern: it is in the shortlist


@dataclass(frozen=True)
class Hit:
    id: str
    kind: str
    title: str
    score: float
    passage: str
    fix: list[str]
    path: str
    cause: str = ""
    severity: str = ""
    similarity: float = 0.0  # cosine similarity of the best passage alone


def bm25(query: list[str], docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(n, 1)
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in set(query):
            if t in tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] * (k1 + 1) / (tf[t] + k1 * (1 - b + b * len(d) / avg))
        scores.append(s)
    return scores


def _normalise(values: list[float]) -> list[float]:
    top = max(values, default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


def search(p: IndexPlan, query: str, limit: int = 5, kind: str | None = None,
           encoder: NumpyMiniLM | None = None) -> list[Hit]:
    con = connect(p.path)
    try:
        docs = {r[0]: r for r in con.execute(
            "SELECT id, kind, title, path, fix, regexes, cause, severity FROM documents").fetchall()}
        links = con.execute("SELECT pattern_id, postmortem_id FROM links").fetchall()
        vector = (encoder or NumpyMiniLM(p.model)).embed([query])[0]
        rows: list[Any] = con.execute(
            "SELECT doc_id, text, array_cosine_similarity(embedding, ?::FLOAT[384]), words FROM chunks", [vector]
        ).fetchall()
    finally:
        con.close()
    lexical = _normalise(bm25(tokens(query), [words.split() for *_r, words in rows]))
    best: dict[str, tuple[float, str]] = {}
    cosine: dict[str, float] = {}
    for (doc_id, text, cos, _words), lex in zip(rows, lexical, strict=True):
        score = VECTOR_WEIGHT * float(cos or 0.0) + LEXICAL_WEIGHT * lex
        cosine[doc_id] = max(cosine.get(doc_id, 0.0), float(cos or 0.0))
        if doc_id not in best or score > best[doc_id][0]:
            best[doc_id] = (score, text)
    shortlist = sorted(best, key=lambda d: -best[d][0])[:REGEX_SHORTLIST]
    recognised = set(_regex_hits(query, {d: docs[d] for d in shortlist}))
    for pattern_id, postmortem_id in links:  # incidents that a recognising pattern names
        if pattern_id in recognised and postmortem_id in best:
            score, text = best[postmortem_id]
            best[postmortem_id] = (score + REGEX_BONUS / 2, text)
    for doc_id in recognised:
        score, text = best[doc_id]
        best[doc_id] = (score + REGEX_BONUS, text)
    hits = [Hit(d, docs[d][1], docs[d][2], round(s, 4), text, json.loads(docs[d][4]), docs[d][3], docs[d][6],
                docs[d][7], round(cosine[d], 4)) for d, (s, text) in best.items() if kind is None or docs[d][1] == kind]
    return sorted(hits, key=lambda h: -h.score)[:limit]


def _regex_hits(query: str, docs: dict[str, Any]) -> list[str]:
    import regex

    found = []
    for doc_id, row in docs.items():
        for expr in json.loads(row[5]):
            try:
                if regex.search(expr, query, regex.MULTILINE, timeout=0.05):
                    found.append(doc_id)
                    break
            except (regex.error, TimeoutError):
                continue
    return found
