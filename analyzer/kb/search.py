"""Hybrid search over the index: vector similarity (the query embedded by the torch-free
encoder) fused with BM25 over the same passages, plus a strong boost when the query is an
error string that a pattern's regex recognises: those patterns rank first and the incidents
they name next. One document per hit, with its best passage."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.kb.embed import NumpyMiniLM
from analyzer.kb.index import IndexPlan
from analyzer.kb.store import DocumentRow, connect, documents, links, passages
from analyzer.kb.words import tokens

VECTOR_WEIGHT = 0.6
LEXICAL_WEIGHT = 0.4
TITLE_WEIGHT = 0.1  # BM25 over titles alone: a title holding the query's words beats a long passage repeating one
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
        docs = documents(con)
        pairs = links(con)
        scored = passages(con, (encoder or NumpyMiniLM(p.model)).embed([query])[0])
    finally:
        con.close()
    lexical = _normalise(bm25(tokens(query), [s.words for s in scored]))
    best: dict[str, tuple[float, str]] = {}
    cosine: dict[str, float] = {}
    for passage, lex in zip(scored, lexical, strict=True):
        score = VECTOR_WEIGHT * passage.cosine + LEXICAL_WEIGHT * lex
        cosine[passage.doc_id] = max(cosine.get(passage.doc_id, 0.0), passage.cosine)
        if passage.doc_id not in best or score > best[passage.doc_id][0]:
            best[passage.doc_id] = (score, passage.text)
    doc_ids = list(best)
    titles = _normalise(bm25(tokens(query), [docs[d].title_words for d in doc_ids]))
    for doc_id, title in zip(doc_ids, titles, strict=True):
        score, text = best[doc_id]
        best[doc_id] = (score + TITLE_WEIGHT * title, text)
    shortlist = sorted(best, key=lambda d: -best[d][0])[:REGEX_SHORTLIST]
    recognised = set(_regex_hits(query, [docs[d] for d in shortlist]))
    named = {postmortem_id for pattern_id, postmortem_id in pairs  # incidents that a recognising pattern names
             if pattern_id in recognised and postmortem_id in best}
    for doc_id in named:
        score, text = best[doc_id]
        best[doc_id] = (score + REGEX_BONUS / 2, text)
    for doc_id in recognised:
        score, text = best[doc_id]
        best[doc_id] = (score + REGEX_BONUS, text)
    hits = [Hit(d, docs[d].kind, docs[d].title, round(s, 4), text, docs[d].fix, docs[d].path, docs[d].cause,
                docs[d].severity, round(cosine[d], 4))
            for d, (s, text) in best.items() if kind is None or docs[d].kind == kind]
    # A pasted error string: the patterns that recognise it come first, then the incidents they name
    # (past occurrences of that very error), then whatever merely shares its words or meaning.
    tier = {**dict.fromkeys(named, 1), **dict.fromkeys(recognised, 2)}
    return sorted(hits, key=lambda h: (-tier.get(h.id, 0), -h.score))[:limit]


def _regex_hits(query: str, docs: Sequence[DocumentRow]) -> list[str]:
    import regex

    found = []
    for doc in docs:
        for expr in doc.regexes:
            try:
                if regex.search(expr, query, regex.MULTILINE, timeout=0.05):
                    found.append(doc.id)
                    break
            except (regex.error, TimeoutError):
                continue
    return found
