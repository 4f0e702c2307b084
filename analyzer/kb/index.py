"""Keep the index current: rebuilt when kb/ or patterns/ changed (or on request), from
the postmortems and the pattern library, with the embedding model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analyzer.data import builtin_patterns, data_dir
from analyzer.kb.documents import Document, pattern_document, postmortem_document, source_stamp
from analyzer.kb.embed import Embedder, SentenceTransformerEmbedder, model_path
from analyzer.kb.store import SCHEMA_VERSION, BuildStats, build_index, default_index_path, read_meta, read_related


@dataclass(frozen=True)
class IndexPlan:
    path: Path
    model: Path
    stamp: str

    @property
    def model_name(self) -> str:
        return self.model.name if self.model.name != "model" else "all-MiniLM-L6-v2"


def plan(index: Path | None = None, model: str | None = None) -> IndexPlan:
    roots = [data_dir("kb"), builtin_patterns()]
    path = index or default_index_path(data_dir("kb"))
    stamp = f"{source_stamp(roots)}:{model_path(model)}:schema {SCHEMA_VERSION}"
    return IndexPlan(path, model_path(model), stamp)


def is_fresh(p: IndexPlan) -> bool:
    """The index was built from the current files, model and schema. The sidecar written after
    it carries the same stamp and answers without opening the database; without a sidecar,
    the index's own metadata does."""
    if read_related(p.path, p.stamp) is not None:
        return True
    meta = read_meta(p.path)
    return meta is not None and meta.get("stamp") == p.stamp


def documents() -> list[Document]:
    from analyzer.kb.postmortems import load_kb  # the models: only a build reads the files
    from analyzer.library.load import load_library

    docs = [postmortem_document(pm) for pm in load_kb(data_dir("kb"))]
    docs += [pattern_document(pf) for pf in load_library([builtin_patterns()]).files
             if pf.pattern.role.value == "failure"]
    return docs


def ensure(p: IndexPlan, rebuild: bool = False) -> BuildStats | None:
    """Build the index when it is missing, stale, damaged, or `rebuild` is asked; else None."""
    if not rebuild and is_fresh(p):
        return None

    def embedder() -> Embedder:
        return SentenceTransformerEmbedder(p.model)

    return build_index(p.path, documents(), embedder, p.model_name, p.stamp)
