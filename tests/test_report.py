"""The reader's side of a report: the phase a failure happened in, the engine's own settings
as facts, past incidents shown, evidence kept whole, counts said right, no template left."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from analyzer.choices import Confidence, FindingKind, Format, Severity
from analyzer.findings import fill
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Evidence, Finding, Related, Report
from analyzer.render import fold, render, seen, to_markdown
from tests.conftest import ROOT, analyze_bytes, in_pty
from tests.test_cli import triage

SNAPSHOTS = ROOT / "tests" / "data" / "snapshots"

# Real lines from public threads: the vLLM memory profile of vllm-project/vllm#15598, the
# cudagraph notice of vllm-project/vllm#15228 and the graph-capture traceback (its tail, as
# pasted) of vllm-project/vllm#22624.
GRAPH_CAPTURE_OOM = b"""INFO 03-27 10:29:01 [worker.py:267] the current vLLM instance can use total_gpu_memory (44.53GiB) x gpu_memory_utilization (0.98) = 43.64GiB
(VllmWorkerProcess pid=1392) INFO 03-20 16:01:38 model_runner.py:1434] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI. If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage.
  File "/root/miniforge3/envs/vllm_infer/lib/python3.9/site-packages/vllm/worker/model_runner.py", line 1982, in capture
    gc.collect()
  File "/root/miniforge3/envs/vllm_infer/lib/python3.9/site-packages/torch/cuda/graphs.py", line 186, in __exit__
    self.cuda_graph.capture_end()
  File "/root/miniforge3/envs/vllm_infer/lib/python3.9/site-packages/torch/cuda/graphs.py", line 84, in capture_end
    super().capture_end()
RuntimeError: CUDA error: out of memory
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
"""  # noqa: E501

# Built from the format strings of vLLM 0.6.3 (engine/llm_engine.py's config banner) and 0.11.0
# (entrypoints/utils.py's "non-default args"), as a later restart would log them.
BANNERS = (b"INFO 12-20 20:25:00 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: "
           b"model='Qwen/Qwen2.5-7B', speculative_config=None, tokenizer='Qwen/Qwen2.5-7B', dtype=torch.bfloat16, "
           b"max_seq_len=40000, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=2, "
           b"pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=fp8, enforce_eager=False, "
           b"kv_cache_dtype=auto, quantization_param_path=None, device_config=cuda,\n"
           b"INFO 06-05 06:10:00 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 512, "
           b"'gpu_memory_utilization': 0.95}\n"
           b"INFO 06-05 06:10:01 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='x', "
           b"max_seq_len=8192, tensor_parallel_size=1, quantization=None, enforce_eager=True, kv_cache_dtype=auto,\n")


def test_the_phase_from_the_frames_titles_the_finding_and_picks_its_fix(library: CompiledLibrary) -> None:
    report = analyze_bytes(GRAPH_CAPTURE_OOM, library)
    top = report.findings[0]
    assert top.id == "cuda-out-of-memory" and top.phase == "CUDA graph capture"
    assert top.title.endswith("— during CUDA graph capture") and top.captures["failure_phase"] == "cuda-graph-capture"
    assert top.fix[0].startswith("It failed while capturing CUDA graphs") and "--max-num-seqs" in top.fix[0]
    assert report.facts["gpu_memory_utilization"].value == "0.98"
    assert "enforce_eager" not in report.facts  # vLLM's hint "set 'enforce_eager=True'" is not a setting
    # the same error while serving a request: no graph-capture step
    serving = GRAPH_CAPTURE_OOM.replace(b"model_runner.py\", line 1982, in capture",
                                        b"model_runner.py\", line 1700, in execute_model")
    serving = re.sub(rb'  File "[^"]*torch/cuda/graphs\.py".*\n.*\n', b"", serving)
    other = analyze_bytes(serving, library).findings[0]
    assert other.phase == "serving a request" and not other.fix[0].startswith("It failed while capturing")
    # no frames at all: no phase, and the step that needs one is left out, not offered with a doubt
    bare = analyze_bytes(b"RuntimeError: CUDA error: out of memory\n", library).findings[0]
    assert bare.phase is None and not any("capturing CUDA graphs" in s for s in bare.fix)


def test_engine_settings_are_facts_and_the_version_is_the_first_banners(library: CompiledLibrary) -> None:
    facts = {k: f.value for k, f in analyze_bytes(BANNERS, library).facts.items()}
    assert facts["vllm_version"] == "0.6.4.post1"  # the first banner, not the later 0.11.0 one
    assert facts["max_num_seqs"] == "512" and facts["gpu_memory_utilization"] == "0.95"
    assert facts["tensor_parallel_size"] == "1" and facts["max_model_len"] == "8192"  # the latest run's
    assert facts["quantization"] == "fp8"  # "quantization=None" of the later banner is no value
    assert facts["kv_cache_dtype"] == "auto"
    sglang = (b"[2025-03-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B', tokenizer_path='x', "
              b"context_length=32768, mem_fraction_static=0.88, max_running_requests=256, tp_size=4, "
              b"disable_cuda_graph=False, kv_cache_dtype='fp8_e5m2', quantization='awq', random_seed=1)\n")
    got = {k: f.value for k, f in analyze_bytes(sglang, library).facts.items()}
    assert got == {"max_model_len": "32768", "gpu_memory_utilization": "0.88", "max_num_seqs": "256",
                   "tensor_parallel_size": "4", "enforce_eager": "False", "kv_cache_dtype": "fp8_e5m2",
                   "quantization": "awq"}
    # TGI's launcher, as huggingface/text-generation-inference#832 shows it (2023, one line)
    tgi = (b'2023-08-22T18:35:50.966384Z  INFO text_generation_launcher: Args { '
           b'model_id: "meta-llama/Llama-2-13b-chat-hf", revision: None, validation_workers: 2, sharded: None, '
           b"num_shard: Some(4), quantize: None, dtype: None, trust_remote_code: false, max_concurrent_requests: 128, "
           b"max_best_of: 2, max_stop_sequences: 4, max_input_length: 4096, max_total_tokens: 8192, "
           b"waiting_served_ratio: 1.2, max_batch_prefill_tokens: 4096, max_batch_total_tokens: 16000, "
           b'max_waiting_tokens: 20, hostname: "831e9d857f4c", port: 80, '
           b'shard_uds_path: "/tmp/text-generation-server", master_addr: "localhost", master_port: 29500, '
           b'huggingface_hub_cache: Some("/data"), '
           b"weights_cache_override: None, disable_custom_kernels: false, json_output: false, otlp_endpoint: None, "
           b"cors_allow_origin: [], watermark_gamma: None, watermark_delta: None, ngrok: false, ngrok_authtoken: None, "
           b"ngrok_domain: None, ngrok_username: None, ngrok_password: None, env: false }\n")
    got = {k: f.value for k, f in analyze_bytes(tgi, library).facts.items()}
    assert got == {"max_model_len": "8192", "tensor_parallel_size": "4"}


def _finding(**kw: object) -> Finding:
    base: dict[str, object] = {"id": "cuda-out-of-memory", "title": "GPU out of memory", "severity": Severity.high,
                               "confidence": Confidence.high, "cause": "The GPU had no memory left.",
                               "fix": ["Lower --max-num-seqs."], "rank": 1}
    return Finding.model_validate(base | kw)


ALLOCATOR = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. " + "x" * 900
             + " Of the allocated memory 19.02 GiB is allocated by PyTorch, and 1.32 GiB is reserved by PyTorch "
               "but unallocated.")


def test_past_incidents_are_shown_under_the_finding_with_how_to_open_them() -> None:
    related = [Related(id="2026-05-03-flashinfer-sm120-rejected", title="FlashInfer rejected SM 12.0", score=1.0),
               Related(id="2025-11-02-oom-graph-capture", title="OOM while capturing graphs", score=0.8123),
               Related(id="vllm-gpu-free-memory-below-requested-utilization", title="Free memory below budget",
                       score=0.61, kind="pattern"),
               Related(id="2024-01-01-fourth", title="A fourth incident", score=0.55)]
    report = Report(inputs=[], findings=[_finding(related=related)])
    out = io.StringIO()
    render(report, Format.terminal, out)
    text = re.sub(r"[\s│]+", " ", out.getvalue())  # the panel's wrapping undone
    assert "Past incidents like this one" in text
    assert "triage kb show 2026-05-03-flashinfer-sm120-rejected" in text and "linked by the postmortem" in text
    assert "2025-11-02, similarity 0.81" in text and "triage patterns show" in text
    assert "A fourth incident" not in text  # three shown; JSON keeps all
    md = to_markdown(report)
    assert "**Past incidents like this one**" in md and "- OOM while capturing graphs (2025-11-02, similarity" in md
    assert len(json.loads(report.model_dump_json())["findings"][0]["related"]) == 4


def test_evidence_is_whole_in_json_and_markdown_and_folded_keeping_its_end_on_a_terminal() -> None:
    report = Report(inputs=[], findings=[_finding(evidence=[Evidence(path="x.log", line=3, text=ALLOCATOR)])])
    assert json.loads(report.model_dump_json())["findings"][0]["evidence"][0]["text"] == ALLOCATOR
    assert ALLOCATOR in to_markdown(report)
    folded = fold(ALLOCATOR)
    assert len(folded) < len(ALLOCATOR) and folded.endswith("reserved by PyTorch but unallocated.")
    assert folded.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")


def test_long_evidence_lines_from_a_log_stay_whole(library: CompiledLibrary) -> None:
    report = analyze_bytes((ALLOCATOR + "\n").encode(), library)
    assert report.findings[0].evidence[0].text == ALLOCATOR


def test_counts_are_said_as_people_say_them() -> None:
    assert seen(_finding(count=1)) == "seen once"
    assert seen(_finding(count=6, runs=4)) == "seen 6 times in 4 runs"
    assert seen(_finding(count=6, runs=4, processes=6)) == "seen 6 times in 4 runs, across 6 processes"
    assert seen(_finding(count=2, processes=2)) == "seen 2 times, across 2 processes"
    md = to_markdown(Report(inputs=[], findings=[_finding(count=1)]))
    assert "**Seen:** once" in md and "1 times" not in md and "x\n" not in md


def test_a_bad_fail_on_value_names_the_choices_in_the_tools_words() -> None:
    res = triage("--fail-on", "bogus", str(ROOT / "examples" / "founding-incident.log"))
    err = res.stderr.decode()
    assert res.returncode == 2 and err.count("\n") == 1
    assert "'bogus' is not one of 'info', 'low', 'medium', 'high', 'critical'" in err and "Value error" not in err


def test_no_template_reaches_a_reader_from_any_pattern(library: CompiledLibrary) -> None:
    """Every pattern's text as shown without a match (search, site, suggestions) and with the
    captures of its own fixture's first match: no `{name}` or `{name|default}` left."""
    brace = re.compile(r"\{[A-Za-z_]\w*(?:\|[^{}]*)?\}")
    for cp in library.patterns.values():
        p = cp.pattern
        for text in [p.description, *p.fix_texts]:
            shown = fill(text, {}, drop=True)
            assert not brace.search(shown), (p.id, shown)
            groups = {g: "v" for e in p.match.expressions for g in re.findall(r"\(\?P<(\w+)>", e.regex)}
            assert not brace.search(fill(text, groups)), (p.id, text)
    from analyzer.data import data_dir
    from analyzer.kb.postmortems import load_kb

    for pm in load_kb(data_dir("kb")):  # postmortems are shown as written: no template in them either
        assert not brace.search(pm.path.read_text()), pm.id


def test_unrecognised_findings_keep_their_kind_in_markdown() -> None:
    md = to_markdown(Report(inputs=[], findings=[_finding(id="unrecognised-1", kind=FindingKind.unrecognised)]))
    assert "**Unrecognised:** `unrecognised-1`" in md


def test_text_is_cut_at_a_sentence_or_a_word_and_a_card_does_not_repeat_its_title() -> None:
    from analyzer.prose import clip, without_title

    text = "The GPU ran out of memory. The engine reserved 0.98 of it for the KV cache and the rest was too small."
    assert clip(text, 45) == "The GPU ran out of memory."  # a sentence that keeps half
    assert clip(text, 70) == "The GPU ran out of memory. The engine reserved 0.98 of it for the KV…"
    assert clip("one two three four five six", 12) == "one two…"
    assert clip(text, 500) == text
    assert without_title("GPU out of memory. A CUDA allocation failed.", "GPU out of memory") == \
        "A CUDA allocation failed."


def test_an_engine_neutral_title_for_a_vllm_start_up_failure(library: CompiledLibrary) -> None:
    """A vLLM log is never told about an SGLang scheduler: the symptom pattern names no engine."""
    line = b"RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
    top = analyze_bytes(line, library).findings[0]
    assert top.id == "engine-startup-failed-see-root-cause" and "SGLang" not in top.title


def _snapshot(name: str, text: str) -> None:
    """Compare with tests/data/snapshots/NAME; TRIAGE_UPDATE_SNAPSHOTS=1 rewrites it (review the diff)."""
    import os

    path = SNAPSHOTS / name
    if os.environ.get("TRIAGE_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed: rerun with TRIAGE_UPDATE_SNAPSHOTS=1 and review the diff"


def test_markdown_and_json_snapshots_of_a_graph_capture_oom(tmp_path: Path) -> None:
    log = tmp_path / "vllm-graph-capture-oom.log"
    log.write_bytes(GRAPH_CAPTURE_OOM)
    md = triage("--no-kb", "--format", "markdown", str(log), cwd=tmp_path)
    js = triage("--no-kb", "--format", "json", str(log), cwd=tmp_path)
    assert md.returncode == js.returncode == 0
    _snapshot("vllm-graph-capture-oom.md", md.stdout.decode().replace(str(tmp_path), "TMP"))
    report = json.loads(js.stdout)
    for i in report["inputs"]:
        i["path"] = i["path"].replace(str(tmp_path), "TMP")
    for f in report["findings"]:
        for e in f["evidence"]:
            e["path"] = e["path"].replace(str(tmp_path), "TMP")
    for fact in report["facts"].values():
        fact["evidence"]["path"] = fact["evidence"]["path"].replace(str(tmp_path), "TMP")
    for e in report["timeline"]:
        e["path"] = e["path"].replace(str(tmp_path), "TMP")
    _snapshot("vllm-graph-capture-oom.json", json.dumps(report, indent=2, sort_keys=True) + "\n")


def test_the_terminal_report_through_a_pseudo_terminal(tmp_path: Path) -> None:
    """What a person sees on a real terminal: the phase in the title, the graph-capture fix
    first, the engine setting among the facts, colours on, nothing cut mid-word."""
    import os

    log = tmp_path / "oom.log"
    log.write_bytes(GRAPH_CAPTURE_OOM)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"COLUMNS": "120", "TERM": "xterm"}
    code, raw = in_pty(["--no-kb", str(log)], env)
    assert code == 0
    assert "\x1b[" in raw  # a terminal gets colour
    text = re.sub(r"\x1b\[[0-9;]*m", "", raw)
    flat = re.sub(r"[\s│]+", " ", text)
    assert "— during CUDA graph capture" in flat
    assert "1. It failed while capturing CUDA graphs" in flat
    assert "share of GPU memory the engine reserves 0.98" in flat


def test_square_brackets_in_pattern_text_and_log_lines_are_printed_as_written() -> None:
    f = _finding(fix=["Install the CUDA build: `pip install -U 'jax[cuda12]'`."],
                 evidence=[Evidence(path="x.log", line=1, text="[rank0]: RuntimeError: CUDA error: out of memory")],
                 avoid=["Do not pin [bold]anything[/bold] blindly."])
    out = io.StringIO()
    render(Report(inputs=[], findings=[f]), Format.terminal, out)
    text = out.getvalue()
    assert "jax[cuda12]" in text and "[rank0]: RuntimeError" in text and "[bold]anything[/bold]" in text


def test_an_unknown_error_in_a_comfyui_dialog_is_reported_at_its_message(library: CompiledLibrary) -> None:
    from tests.test_events import COMFY_DIALOG, COMFY_REPORT
    top = analyze_bytes(COMFY_DIALOG.encode(), library).findings[0]
    assert top.kind is FindingKind.unrecognised and "Some failure nobody has written" in top.title
    assert [e.line for e in top.evidence] == [3]  # the message, not the frame after it
    top = analyze_bytes(COMFY_REPORT.encode(), library).findings[0]
    assert top.kind is FindingKind.unrecognised and top.title.endswith("IndexError: list index out of range")
    assert [e.line for e in top.evidence] == [6]
