"""The knowledge base: postmortems validated and tested, the DuckDB index (atomic,
incremental, self-healing), the torch-free query encoder, and search quality with the
real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from analyzer.authoring.postmortem_lint import lint_kb
from analyzer.data import data_dir
from analyzer.errors import PatternError
from analyzer.kb.documents import Document
from analyzer.kb.embed import NumpyMiniLM, SentenceTransformerEmbedder, model_path
from analyzer.kb.index import IndexPlan, ensure
from analyzer.kb.postmortems import load_kb, load_postmortem
from analyzer.kb.search import search
from analyzer.kb.store import IndexUnusable, build_index, connect
from analyzer.library.compile import CompiledLibrary
from tests.conftest import ROOT

KB = data_dir("kb")
FOUNDING = "2026-05-03-flashinfer-sm120-rejected-after-oom-restart"


def test_the_knowledge_base_lints_clean(library: CompiledLibrary) -> None:
    assert len(load_kb(KB)) >= 30
    assert [str(p) for p in lint_kb(KB, library)] == []


def test_postmortem_problems_are_reported(tmp_path: Path, library: CompiledLibrary) -> None:
    text = (KB / f"{FOUNDING}.md").read_text()
    broken = tmp_path / f"{FOUNDING}.md"
    broken.write_text(text.replace("## Lessons", "## Lesson"))
    with pytest.raises(PatternError, match="missing sections: Lessons"):
        load_postmortem(broken)
    broken.write_text(text.replace("patterns: [", "patterns: [no-such-pattern, serving-port-already-in-use, "))
    problems = [str(p) for p in lint_kb(tmp_path, library)]
    assert any("unknown patterns: no-such-pattern" in p for p in problems)
    assert any("fire on none of its log excerpts: serving-port-already-in-use" in p for p in problems)
    broken.write_text(text.replace("severity: critical", "severity: apocalyptic"))
    with pytest.raises(PatternError, match="severity") as err:
        load_postmortem(broken)
    assert err.value.line == text.split("\n").index("severity: critical") + 1


class CountingEmbedder:
    """A fake embedder for plumbing tests: deterministic vectors, counts what it embeds."""

    name = "fake"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen += texts
        return [[float((hash(t) >> i) & 1) + 0.01 for i in range(384)] for t in texts]


def _docs(n: int, changed: int | None = None) -> list[Document]:
    return [Document(id=f"d{i}", kind="pattern", title=f"doc {i}", path="x", fix=["do it"],
                     chunks=[f"chunk a of {i}", f"chunk b of {i}" + (" changed" if i == changed else "")])
            for i in range(n)]


def test_reindex_embeds_only_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    first = CountingEmbedder()
    build_index(path, _docs(5), lambda: first, "fake", "s1")
    assert len(first.seen) == 10
    second = CountingEmbedder()
    stats = build_index(path, _docs(5, changed=3), lambda: second, "fake", "s2")
    assert second.seen == ["chunk b of 3 changed"] and stats.embedded == 1


def test_damaged_or_foreign_index_is_reported_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "index.duckdb"
    path.write_bytes(b"this is not a duckdb file at all" * 100)
    with pytest.raises(IndexUnusable, match="not a triage index or damaged"):
        connect(path)
    build_index(path, _docs(2), CountingEmbedder, "fake", "s")
    con = connect(path)
    assert con.execute("SELECT count(*) FROM chunks").fetchall() == [(4,)]
    con.close()


@pytest.fixture(scope="session")
def index(kb_index: IndexPlan) -> IndexPlan:
    return kb_index


def test_index_is_fresh_after_build_and_reuses_everything(index: IndexPlan) -> None:
    assert ensure(index) is None  # current: nothing to do
    stats = ensure(index, rebuild=True)
    assert stats is not None and stats.embedded == 0


def test_related_postmortems_are_precomputed(index: IndexPlan) -> None:
    con = connect(index.path)
    rows = con.execute("SELECT postmortem_id, explicit FROM related WHERE pattern_id = ? ORDER BY explicit DESC",
                       ["flashinfer-sm12x-needs-cuda-12-9"]).fetchall()
    con.close()
    assert rows[0] == (FOUNDING, True)


def test_numpy_encoder_matches_sentence_transformers(capfd: pytest.CaptureFixture[str]) -> None:
    texts = ["flashinfer refuses blackwell after a restart",
             "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
             "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-xxxxx (size 7340384) " * 8]
    ours = NumpyMiniLM(model_path()).embed(texts)
    ref = SentenceTransformerEmbedder(model_path()).embed(texts)
    for a, b in zip(ours, ref, strict=True):
        assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.9999
    assert "Loading weights" not in capfd.readouterr().err  # the reference loader's bar stays off the terminal


QUERIES: list[tuple[str, set[str]]] = [
    # questions asked after a maintenance: reboots, driver updates, node replacements
    ("GPUs unusable after a reboot: fabric manager is not running", {"nvswitch-fabric-manager-not-running"}),
    ("after a driver update nvidia-smi says driver library version mismatch",
     {"nvidia-driver-kernel-module-mismatch",
      "2021-04-27-unattended-upgrade-nvml-driver-library-mismatch-on-gpu-nodes"}),
    # the daemon that exits at start, or the unit that systemd skipped because /dev/nvidia* was not there yet
    ("persistence daemon failed to start after node replacement",
     {"nvidia-persistenced-failed", "gpu-unit-skipped-before-device-nodes-exist"}),
    ("NVSwitch fabric not ready after maintenance",
     {"cuda-error-fabric-not-ready", "cuda-driver-error-fabric-not-ready", "nvswitch-fabric-manager-not-running"}),
    # exact error strings
    ("RuntimeError: FlashInfer requires GPUs with sm75 or higher", {"flashinfer-sm12x-needs-cuda-12-9", FOUNDING}),
    ("Failed to initialize NVML: Driver/library version mismatch",
     {"nvidia-driver-kernel-module-mismatch", "2021-04-27-unattended-upgrade-nvml-driver-library-mismatch-on-gpu-nodes"}),
    ("include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device",
     {"nccl-shm-dev-shm-too-small", "2020-06-19-nccl-27-shm-segment-fails-in-docker-64mb-dev-shm"}),
    ("ImportError: common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy",
     {"cuda-driver-api-symbol-missing", "2025-07-28-sglang-sgl-kernel-cugreenctx-undefined-on-driver-535"}),
    ("ValueError: Cannot use chat template functions because tokenizer.chat_template is not set",
     {"chat-template-missing-base-model", "2024-12-10-sglang-chat-completions-fail-on-base-llama-3-2-1b"}),
    ("NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
     {"torch-build-lacks-gpu-arch", "2025-07-25-vllm-0-10-0-torch-without-sm120-on-rtx-5070-ti"}),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
     {"triton-no-c-compiler", "2024-11-19-triton-failed-to-find-c-compiler-cut-cross-entropy"}),
    ("/tmp/tmpbe9ryx74/cuda_utils.c:5:10: fatal error: Python.h: No such file or directory",
     {"triton-jit-python-h-missing", "2025-10-31-triton-python-h-missing-in-scope-docker-image"}),
    ("Total number of attention heads (52) must be divisible by tensor parallel size (3).",
     {"tensor-parallel-size-does-not-divide-model", "2023-07-10-vllm-llama-33b-52-heads-on-three-gpus"}),
    ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has "
     "compute capability 7.0.", {"bf16-unsupported-gpu-compute-capability", "2023-09-05-vllm-bf16-model-rejected-on-v100"}),
    ("Error: listen tcp 127.0.0.1:11434: bind: address already in use",
     {"serving-port-already-in-use", "2023-10-05-ollama-serve-port-11434-held-by-systemd-service"}),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 500: named symbol not found",
     {"wsl-cuda-init-named-symbol-not-found", "2024-05-24-wsl2-docker-desktop-error-500-after-driver-555"}),
    # paraphrases and symptoms in plain words
    ("flashinfer refuses blackwell after a restart", {FOUNDING, "flashinfer-sm12x-needs-cuda-12-9"}),
    ("GPU disappeared from the PCIe bus and nvidia-smi no longer sees it",
     {"gpu-fell-off-bus-xid-79", "2025-10-25-gpu-fell-off-bus-without-xid-line-missed-by-health-monitor"}),
    ("ollama model download stops because the root partition is full",
     {"disk-full-no-space-left-on-device", "2023-11-29-ollama-pull-fills-small-root-partition"}),
    ("docker container has too little shared memory for nccl with tensor parallel",
     {"nccl-shm-dev-shm-too-small", "2020-06-19-nccl-27-shm-segment-fails-in-docker-64mb-dev-shm",
      "2023-11-18-vllm-tp2-docker-ray-object-store-tmp-nccl-shm-crash", "ray-object-store-dev-shm-too-small"}),
    ("nvidia-smi stopped working after an automatic upgrade of the driver package",
     {"2021-04-27-unattended-upgrade-nvml-driver-library-mismatch-on-gpu-nodes", "nvidia-driver-kernel-module-mismatch"}),
    ("model download refused because the repository requires accepting a license and a token",
     {"hf-gated-repo-needs-token", "2024-06-16-infinity-gated-nv-embed-without-hf-token"}),
    ("vllm says no memory is left for the kv cache blocks",
     {"gpu-memory-budget-leaves-no-kv-cache", "2024-11-19-vllm-064-no-kv-cache-blocks-on-shared-gpu",
      "max-model-len-exceeds-kv-cache"}),
    ("multi gpu job hangs and the collective operation times out after ten minutes",
     {"nccl-watchdog-collective-timeout", "2024-05-07-vllm-041-nccl-watchdog-timeout-custom-allreduce"}),
    ("new pytorch container on a server whose nvidia driver is too old",
     {"cuda-driver-too-old-for-cuda-runtime", "2023-12-21-cu121-container-on-cuda-11-0-driver-found-version-11000"}),
    ("nvcc refuses the newer gcc version during the cuda build",
     {"nvcc-host-compiler-too-new", "2024-08-27-nvcc-rejects-gcc-14-llama-cpp-cuda-build"}),
    ("flash attention extension was compiled against a different torch version",
     {"flash-attn-built-for-other-torch", "2025-06-26-flash-attn-2-8-abi-mismatch-with-vllm-pinned-torch-2-6"}),
    ("GPU runs out of memory while warming up the sampler with many sequences",
     {"cuda-out-of-memory", "2025-01-28-vllm-v1-cuda-oom-sampler-warmup-max-num-seqs-1024"}),
    ("the service user has no permission to create the ollama models folder",
     {"model-dir-permission-denied", "2025-02-16-ollama-service-cannot-create-var-lib-ollama"}),
    ("the server cannot load a model that needs custom code from its repository",
     {"trust-remote-code-required", "2023-07-04-vllm-async-engine-mpt-needs-trust-remote-code"}),
    ("GPU firmware GSP timeout makes nvidia-smi hang",
     {"gpu-gsp-rpc-timeout-xid-119-120", "2023-03-03-gsp-rpc-timeout-xid-119-driver-525-hangs-nvidia-smi"}),
    ("peer to peer access between two RTX 4090 cards fails in all-reduce",
     {"gpu-p2p-peer-access-broken", "2024-05-13-trtllm-custom-allreduce-no-p2p-on-2x-rtx4090d"}),
]


@pytest.fixture(scope="session")
def encoder() -> NumpyMiniLM:
    return NumpyMiniLM(model_path())


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=[q[:50] for q, _ in QUERIES])
def test_search_quality(query: str, expected: set[str], index: IndexPlan, encoder: NumpyMiniLM) -> None:
    top = [h.id for h in search(index, query, limit=3, encoder=encoder)]
    assert expected & set(top), top


def test_exact_error_string_ranks_its_pattern_and_postmortem_first(index: IndexPlan, encoder: NumpyMiniLM) -> None:
    hits = search(index, "RuntimeError: FlashInfer requires GPUs with sm75 or higher", limit=3, encoder=encoder)
    ids = [h.id for h in hits]
    # the incident the recognising pattern names comes next, above the same check's older-wording
    # pattern ("FlashInfer requires sm75+"), which shares the query's words but does not recognise it
    assert ids[:2] == ["flashinfer-no-eligible-cuda-arch", FOUNDING], ids
    assert hits[0].fix and hits[0].passage


def test_search_prints_a_compact_list_unless_asked_for_cards(index: IndexPlan) -> None:
    from tests.test_cli import triage

    query = "after a driver update nvidia-smi says driver library version mismatch"
    compact = triage("search", query, "--index", str(index.path)).stdout.decode().splitlines()
    numbered = [ln for ln in compact if ln[:3].strip().rstrip(".").isdigit()]
    commands = [ln.strip() for ln in compact if ln.startswith("    triage ")]
    assert len(numbered) == len(commands) == 10  # ten hits unless -n says otherwise
    assert all(c.split()[1:3] in (["kb", "show"], ["patterns", "show"]) and len(c.split()) == 4 for c in commands)
    assert "Fix" not in compact and not any("{" in ln for ln in compact)
    cards = triage("search", query, "-n", "2", "--full", "--index", str(index.path)).stdout.decode()
    assert cards.count("#1 ") == 1 and "#2 " in cards and "#3 " not in cards and "Fix" in cards


def test_search_kind_filter(index: IndexPlan, encoder: NumpyMiniLM) -> None:
    hits = search(index, "driver too old", limit=5, kind="postmortem", encoder=encoder)
    assert hits and all(h.kind == "postmortem" for h in hits)


UNKNOWN = b"""Traceback (most recent call last):
  File "/srv/app.py", line 3, in <module>
    main()
RuntimeError: the inference worker could not fit the model weights into GPU memory
"""


def test_unmatched_error_is_reported_with_the_nearest_incidents_but_not_their_fix(index: IndexPlan) -> None:
    from analyzer.readers.source import open_bytes
    from analyzer.triage import Run, load

    run = Run(load(), knowledge=True, index=index.path)
    run.read(open_bytes("unknown.log", UNKNOWN))
    report = run.report()
    assert report.findings, report.warnings
    top = report.findings[0]
    assert top.kind == "unrecognised" and top.confidence.value == "low"
    assert top.title == "Not recognised: RuntimeError: the inference worker could not fit the model weights into GPU memory"
    assert top.evidence[0].line == 4 and top.related and all(r.score >= 0.5 for r in top.related)
    assert "No pattern in the library explains this error" in top.cause
    assert "Nearest known failures by meaning, not confirmed for this log: " in top.cause
    assert top.fix[0].startswith("Read the lines just before line 4")  # diagnostic steps, no other incident's fix
    assert not any(step in top.fix for r in top.related for step in _fix_of(index, r.id))


def _fix_of(index: IndexPlan, doc_id: str) -> list[str]:
    import duckdb

    with duckdb.connect(str(index.path), read_only=True) as con:
        row = con.execute("SELECT fix FROM documents WHERE id = ?", [doc_id]).fetchone()
    return list(json.loads(row[0])) if row else []


def test_pattern_findings_come_before_unrecognised_errors_and_carry_related(index: IndexPlan) -> None:
    from analyzer.data import data_dir
    from analyzer.readers.source import open_bytes
    from analyzer.triage import Run, load

    log = (data_dir("kb").parent / "examples" / "founding-incident.log").read_bytes() + UNKNOWN
    run = Run(load(), knowledge=True, index=index.path)
    run.read(open_bytes("mixed.log", log))
    findings = run.report().findings
    kinds = [f.kind for f in findings]
    assert kinds[0] == "chain" and kinds.index("unrecognised") > kinds.index("pattern")
    assert findings[0].related[0].id == FOUNDING and findings[0].related[0].score == 1.0


def test_related_without_an_index_uses_the_postmortems_links(tmp_path: Path) -> None:
    from analyzer.data import data_dir
    from analyzer.triage import analyze

    report = analyze([str(data_dir("kb").parent / "examples" / "founding-incident.log")],
                     index=tmp_path / "absent.duckdb")
    assert [r.id for r in report.findings[0].related] == [FOUNDING]


def test_kb_new_drafts_a_valid_postmortem_from_a_report(tmp_path: Path, library: CompiledLibrary) -> None:
    from analyzer.data import data_dir

    example = data_dir("kb").parent / "examples" / "founding-incident.log"
    text = example.read_text().replace("Started sglang-k26.service", "Started sglang-k26.service token=hf_"
                                        "abcdefghijklmnopqrstuvwxyzABCDEF12", 1)
    (tmp_path / "svc.log").write_text(text)
    run = subprocess.run([sys.executable, "-m", "analyzer", "--format", "json", "--no-kb", str(tmp_path / "svc.log")],
                         capture_output=True, text=True, check=True)
    (tmp_path / "run.json").write_text(run.stdout)
    out = tmp_path / "kb"
    out.mkdir()
    res = subprocess.run([sys.executable, "-m", "analyzer", "kb", "new", "--from-report", str(tmp_path / "run.json"),
                          "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    (draft,) = out.glob("*.md")
    body = draft.read_text()
    assert "hf_abcdefghij" not in body and "ct200" not in body
    pm = load_postmortem(draft)
    assert pm.front.patterns[0] == "flashinfer-sm12x-needs-cuda-12-9" and json.loads(run.stdout)["timeline"]
    assert [str(p) for p in lint_kb(out, library)] == []


def test_a_pattern_only_run_reads_related_from_the_sidecar_without_duckdb_or_torch(index: IndexPlan) -> None:
    """Every finding of the example is a pattern match: its related postmortems come from the
    JSON written beside the index, equal to the database's, and no heavy package is imported."""
    from analyzer.data import data_dir
    from analyzer.kb.store import read_related, related_path, rewrite_related

    sidecar = read_related(index.path, index.stamp)
    assert sidecar is not None and sidecar["flashinfer-sm12x-needs-cuda-12-9"][0][0] == FOUNDING
    assert rewrite_related(index.path, index.stamp) == sidecar  # what the database holds
    assert read_related(index.path, "another stamp") is None  # a sidecar of another build is ignored
    sidecar_time = related_path(index.path).stat().st_mtime_ns
    os.utime(related_path(index.path), ns=(sidecar_time, index.path.stat().st_mtime_ns - 1))
    assert read_related(index.path, index.stamp) is None  # the index changed after its sidecar
    os.utime(related_path(index.path), ns=(sidecar_time, sidecar_time))

    example = data_dir("kb").parent / "examples" / "founding-incident.log"
    code = ("import sys, json\nfrom pathlib import Path\nfrom analyzer.triage import analyze\n"
            f"r = analyze([{str(example)!r}], index=Path({str(index.path)!r}))\n"
            "print(json.dumps([[x.id for x in f.related] for f in r.findings]))\n"
            "print([m for m in ('duckdb', 'torch', 'sentence_transformers', 'transformers') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    related, heavy = out.stdout.strip().split("\n")
    assert heavy == "[]" and json.loads(related)[0][0] == FOUNDING

    saved = related_path(index.path).read_bytes()
    try:  # a damaged sidecar: the run falls back to the database, same answer, and writes it again
        related_path(index.path).write_bytes(b"{not json")
        assert read_related(index.path, index.stamp) is None
        out2 = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
        assert out2.stdout.split("\n")[0] == related and "duckdb" in out2.stdout.split("\n")[1]
        assert read_related(index.path, index.stamp) == sidecar
        for damaged in ({"stamp": index.stamp, "titles": {}, "related": {"p": [["pm", 0.9]]}},  # a title lost
                        {"stamp": index.stamp, "titles": {"pm": "t"}, "related": {"p": [["pm"]]}},  # a cut row
                        {"stamp": index.stamp, "related": {"p": [["pm", "t", 0.9]]}}):  # the older layout
            related_path(index.path).write_text(json.dumps(damaged))
            assert read_related(index.path, index.stamp) is None
    finally:
        related_path(index.path).write_bytes(saved)
