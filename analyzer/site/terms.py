"""Query-term expansions for the browser's search, derived from the embedding model.

The site has no model at query time, so lexical matching alone would miss a paraphrase
("refuses" for "rejects", "vanished" for "fell off"). At build time, every English word of
the model's vocabulary and every word of the catalogue is embedded with all-MiniLM-L6-v2;
each word maps to the catalogue words nearest to it (cosine ≥ THRESHOLD). The browser adds
those as weaker query terms. The map is honest about what it is: the model's word-level
neighbours, computed once, shipped as data; nothing runs on a server.

Word vectors are cached (a word's vector depends only on the model), so only new
catalogue words are embedded on later builds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from analyzer.cache import cache_dir
from analyzer.kb.words import stem

THRESHOLD = 0.62
NEIGHBOURS = 5
_WORD = re.compile(r"[a-z]{3,24}")
_STOP_WORDS = """the and for with that this from are was were has have had not but all any can its into out
one two than then them they their there these those when what which who why how our your you yes also very just
only more most some such each other same been being does did doing done over under again off too own both few nor
now she her him his hers its itself about above below between during before should would could will shall may
might must per via upon onto"""
STOP = frozenset(_STOP_WORDS.split())

WordEmbedder = Callable[[Sequence[str]], Any]  # words → float32 array (n, dim), rows normalised


def _same_word(word: str, term: str) -> bool:
    """An inflection, or one inside the other ('nvidia' in 'libnvidia', 'ram' in 'sram'):
    the search finds these already, or they are subword noise, not meaning."""
    root = stem(word)
    return term == root or root in term or term in root


def words(texts: Iterable[str]) -> set[str]:
    return {w for t in texts for w in _WORD.findall(t.lower()) if w not in STOP}


def vocabulary(model: Path) -> list[str]:
    """The model's whole-word vocabulary entries: plain lowercase English words."""
    vocab = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(w for w in vocab if _WORD.fullmatch(w) and w not in STOP)


def cache_path(model_name: str) -> Path:
    return cache_dir() / f"site-words-{re.sub(r'[^A-Za-z0-9.-]', '_', model_name)}.npz"


def model_embedder(model: Path) -> WordEmbedder:
    """sentence-transformers on single words: no padding to 128 tokens, large batches."""

    def embed(batch: Sequence[str]) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(model), device="cpu")
        backend = getattr(st.tokenizer, "_tokenizer", None)
        if backend is not None:
            backend.no_padding()  # tokenizer.json pads every text to 128 tokens: 40x the work for a word
        return st.encode(list(batch), batch_size=1024, normalize_embeddings=True, show_progress_bar=False,
                         convert_to_numpy=True)

    return embed


def word_vectors(wanted: Sequence[str], embed: WordEmbedder, cache: Path | None) -> tuple[list[str], Any]:
    """Vectors for `wanted`, from the cache where possible; new words are embedded and cached."""
    import numpy as np

    known: dict[str, Any] = {}
    if cache is not None and cache.exists():
        try:
            with np.load(cache) as data:
                known = dict(zip(data["words"].tolist(), data["vectors"], strict=True))
        except (OSError, ValueError, KeyError):
            known = {}
    missing = [w for w in wanted if w not in known]
    if missing:
        fresh = np.asarray(embed(missing), dtype=np.float32)
        known.update(zip(missing, fresh.astype(np.float16), strict=True))
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".{cache.stem}.{os.getpid()}.tmp.npz")
            names = sorted(known)
            np.savez(tmp, words=np.array(names), vectors=np.stack([known[w] for w in names]))
            os.replace(tmp, cache)
    return list(wanted), np.stack([known[w] for w in wanted]).astype(np.float32)


def expansions(query_words: Sequence[str], catalogue_words: Sequence[str], embed: WordEmbedder,
               cache: Path | None) -> dict[str, list[tuple[str, float]]]:
    """word → [(catalogue term, stemmed as the search index stems it), similarity)], best first.

    Neighbours that are the word's own inflections or contain it are left out."""
    import numpy as np

    every = sorted(set(query_words) | set(catalogue_words))
    names, vectors = word_vectors(every, embed, cache)
    position = {w: i for i, w in enumerate(names)}
    cat = sorted(set(catalogue_words))
    cat_vectors = vectors[[position[w] for w in cat]]
    cat_stems = [stem(w) for w in cat]
    out: dict[str, list[tuple[str, float]]] = {}
    k = min(NEIGHBOURS * 3, len(cat))
    for start in range(0, len(names), 2048):
        sims = vectors[start:start + 2048] @ cat_vectors.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for row in np.nonzero(sims.max(axis=1) >= THRESHOLD)[0]:
            word = names[start + row]
            best: dict[str, float] = {}
            for j in sorted(top[row], key=lambda j: (-sims[row, j], cat[j])):
                score = float(sims[row, j])
                if score < THRESHOLD:
                    break
                term = cat_stems[j]
                if not _same_word(word, term) and term not in best:
                    best[term] = round(score, 2)
            if best:
                out[word] = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:NEIGHBOURS]
    return out
