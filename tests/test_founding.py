"""The founding diagnosis, pinned to what the emitting programs do: NVIDIA's first toolkit per
architecture, FlashInfer's SM 12.x gate by release (before it, inside it, after PR #3633), the
SM 12.0 / 12.1 split, the lone "sm75 or higher" line, the forms of the /dev/null workaround,
version facts from pip lines, a cut traceback, and the restart chain told from evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.choices import Confidence
from analyzer.errors import PatternError
from analyzer.findings import fill
from analyzer.library.compile import CompiledLibrary
from analyzer.library.load import load_library
from analyzer.library.rules import Rule, RuleBook, check_references, holds, load_rulebook, version
from analyzer.library.schema import PLACEHOLDER
from analyzer.models import Finding, Report
from tests.conftest import CHAIN, GATE, ROOT, analyze_bytes, root_id

NO_ARCH = "flashinfer-no-eligible-cuda-arch"
GATE_RULE = "flashinfer-gate-refuses-sm12x-with-nvcc-below-12-9"
SM75 = "RuntimeError: FlashInfer requires GPUs with sm75 or higher"
PROBE = "Failed to get device capability: SM 12.x requires CUDA >= 12.9."


def env(flashinfer: str | None = "0.6.8.post1", gpu: str | None = "NVIDIA GeForce RTX 5090",
        nvcc: str | None = "12.8") -> list[str]:
    """What `nvcc --version` and `python -m torch.utils.collect_env` print, as a unit's start-up logs them."""
    lines = []
    if nvcc:
        lines.append(f"Cuda compilation tools, release {nvcc}, V{nvcc}.93")
    if gpu:
        lines.append(f"GPU 0: {gpu}")
    if flashinfer:
        lines.append(f"[pip3] flashinfer-python=={flashinfer}")
    return lines


def report(lines: list[str], library: CompiledLibrary) -> Report:
    return analyze_bytes(("\n".join(lines) + "\n").encode(), library)


def finding(rep: Report, fid: str) -> Finding:
    return next(f for f in rep.findings if f.id == fid)


# --- NVIDIA's tables ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook(ROOT / "patterns")


@pytest.mark.parametrize(("sm", "nvcc"), [("12.0", "12.8"), ("12.1", "12.9"), ("10.0", "12.8"), ("10.3", "12.9"),
                                          ("11.0", "13.0"), ("9.0", "11.8"), ("8.7", "11.4")])
def test_first_toolkit_per_architecture(book: RuleBook, sm: str, nvcc: str) -> None:
    assert book.tables["min_nvcc_for_sm"].rows[sm] == nvcc


def test_cuda_13_dropped_pre_turing_and_gcc_limits(book: RuleBook) -> None:
    assert book.tables["last_nvcc_for_sm"].rows["7.0"] == "12.9" and "7.5" not in book.tables["last_nvcc_for_sm"].rows
    assert [book.tables["max_gcc_for_nvcc"].rows[v] for v in ("12.6", "12.8", "13.0")] == ["13", "14", "15"]


@pytest.mark.parametrize(("gpu", "sm"), [("NVIDIA Jetson T4000", "11.0"), ("Tesla T4", "7.5"),
                                         ("NVIDIA RTX A3000", "8.6"), ("NVIDIA A30", "8.0"), ("NVIDIA GB10", "12.1"),
                                         ("NVIDIA L40S", "8.9")])
def test_gpu_names_match_whole_words(gpu: str, sm: str, library: CompiledLibrary) -> None:
    assert report([f"GPU 0: {gpu}"], library).facts["gpu_sm"].value == sm


@pytest.mark.parametrize(("older", "newer"), [("0.6.8rc1", "0.6.8"), ("0.6.8", "0.6.8.post1"), ("0.6.8.post1", "0.6.9"),
                                              ("0.6.18", "0.6.19"), ("0.7.0.dev20260922", "0.7.0"), ("12.8", "12.9")])
def test_versions_order_pre_and_post_releases(older: str, newer: str) -> None:
    assert holds(f"v < {newer}", {"v": older}, {}) and holds(f"v > {older}", {"v": newer}, {})
    assert version("2.9.1+cu130") == (2, 9, 1)


# --- FlashInfer's gate by release ---------------------------------------------------------

def test_before_the_gate_nvcc_12_8_builds_sm_120_and_nothing_is_reported(library: CompiledLibrary) -> None:
    rep = report(env(flashinfer="0.6.6"), library)
    assert rep.findings == []  # nvcc 12.8 targets sm_120a, FlashInfer 0.6.6 builds 120a


@pytest.mark.parametrize("release", ["0.6.7", "0.6.8.post1", "0.6.18"])
def test_inside_the_gate_facts_alone_predict_the_refusal(release: str, library: CompiledLibrary) -> None:
    rep = report(env(flashinfer=release), library)
    assert [f.id for f in rep.findings] == [GATE_RULE]
    rule = rep.findings[0]
    assert rule.kind == "rule" and f"FlashInfer {release}" in rule.cause and "12.0f" in rule.cause
    assert any("FLASHINFER_CUDA_ARCH_LIST=12.0a" in s for s in rule.fix)


@pytest.mark.parametrize("release", ["0.6.19", "0.7.0"])
def test_after_the_last_release_known_to_gate_facts_alone_say_nothing(release: str, library: CompiledLibrary) -> None:
    assert report(env(flashinfer=release), library).findings == []


def test_gate_message_on_sm_120_with_nvcc_12_8_offers_every_sound_fix(library: CompiledLibrary) -> None:
    rep = report([*env(), PROBE, SM75], library)
    top = rep.findings[0]
    assert top.id == GATE and top.confidence is Confidence.high
    assert "12.0f" in top.cause and "sm_120a" in top.cause and "before FlashInfer looks in its JIT cache" in top.cause
    steps = " | ".join(top.fix)
    assert steps.index("FLASHINFER_CUDA_ARCH_LIST=12.0a") < steps.index("nvcc 12.9 or newer") < steps.index("#3633")
    assert "only if" not in steps  # the log settles every condition
    assert any("12.0f" in a and "12.9" in a for a in top.avoid)
    assert any(f"rule {GATE_RULE} confirms it" in r for r in top.reasons)
    assert [s.id for s in top.symptoms] == [NO_ARCH]


def test_sm_121_needs_12_9_whatever_the_release(library: CompiledLibrary) -> None:
    rep = report([*env(gpu="NVIDIA GB10"), PROBE, SM75], library)
    top = rep.findings[0]
    assert top.id == GATE
    assert not any("12.0a" in s or "#3633" in s for s in top.fix)  # 12.1 needs nvcc 12.9: no 12.8 workaround
    assert any("rule nvcc-too-old-for-gpu-arch confirms it" in r and "12.8 < 12.9" in r for r in top.reasons)


def test_unknown_gpu_keeps_conditional_steps_and_says_so(library: CompiledLibrary) -> None:
    top = report([PROBE], library).findings[0]
    assert top.id == GATE
    assert any("12.0a" in s and "(only if GPU compute capability = 12.0 and nvcc (CUDA toolkit compiler) ≥ 12.8;"
               in s for s in top.fix)


def test_gate_wording_on_a_gpu_below_sm_12_is_contradicted(library: CompiledLibrary) -> None:
    top = report([*env(gpu="NVIDIA H100 80GB HBM3", nvcc="12.8"), PROBE], library).findings[0]
    assert top.id == GATE and top.confidence is Confidence.medium
    assert any("facts contradict it: gpu_sm 9.0 < 12.0" in r for r in top.reasons)


@pytest.mark.parametrize(("line", "arch", "need"), [
    ("Failed to get device capability: RuntimeError('SM 120 requires CUDA >= 12.8'). "
     "torch.cuda.is_available()=True, torch.cuda.device_count()=1", "120", "12.8"),
    ("RuntimeError: SM 12.1+ requires CUDA >= 12.9", "12.1+", "12.9")])
def test_the_wording_after_pr_3633(line: str, arch: str, need: str, library: CompiledLibrary) -> None:
    top = report([line], library).findings[0]
    assert top.id == "flashinfer-sm12x-nvcc-too-old" and top.captures == {"arch": arch, "need": need}
    assert f"refused SM {arch}: it needs nvcc {need} or newer" in top.cause
    assert any(f"Install nvcc {need} or newer" in s for s in top.fix)


def test_sm_120_with_nvcc_12_6_after_pr_3633_is_confirmed_by_the_table(library: CompiledLibrary) -> None:
    line = "RuntimeError: SM 120 requires CUDA >= 12.8"
    top = report([*env(flashinfer=None, nvcc="12.6"), line], library).findings[0]
    assert top.id == "flashinfer-sm12x-nvcc-too-old"
    assert any("rule nvcc-too-old-for-gpu-arch confirms it" in r and "12.6 < 12.8" in r for r in top.reasons)


# --- "sm75 or higher" alone ---------------------------------------------------------------

def test_sm75_alone_is_low_confidence_and_names_the_other_causes(library: CompiledLibrary) -> None:
    top = report([SM75], library).findings[0]
    assert top.id == NO_ARCH and top.confidence is Confidence.low
    for cause in ("Failed to get device capability", "no GPU was visible", "stale detection",
                  "FLASHINFER_CUDA_ARCH_LIST", "older than Turing"):
        assert cause in top.cause


def test_sm75_with_gate_facts_is_explained_by_the_version_rule(library: CompiledLibrary) -> None:
    rep = report([*env(flashinfer="0.6.8"), SM75], library)
    assert rep.findings[0].id == GATE_RULE and [s.id for s in rep.findings[0].symptoms] == [NO_ARCH]


def test_newer_sm75_wording_and_a_cut_traceback(library: CompiledLibrary) -> None:
    newer = report([SM75 + ". Detected TARGET_CUDA_ARCHS=[]."], library).findings[0]
    assert newer.id == NO_ARCH and newer.captures == {"archs": ""}
    cut = report(["Traceback (most recent call last):",
                  '  File "/venv/lib/python3.12/site-packages/flashinfer/jit/core.py", line 413, in gen_jit_spec',
                  "    check_cuda_arch()",
                  '  File "/venv/lib/python3.12/site-packages/flashinfer/jit/core.py", line 108, in check_cuda_arch',
                  '    raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")',
                  "RuntimeError: FlashInfer requires GPUs with s"], library).findings[0]
    assert cut.id == NO_ARCH and 6 in [e.line for e in cut.evidence]
    probe_cut = report(["Failed to get device capability: SM 12.x requires CU"], library).findings[0]
    assert probe_cut.id == GATE


# --- the /dev/null workaround, in every form ----------------------------------------------

@pytest.mark.parametrize("line", [
    "NotADirectoryError: [Errno 20] Not a directory: '/dev/null/bin/nvcc'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/dev/null/bin/nvcc'",
    "/bin/sh: 1: /dev/null/bin/nvcc: not found",
    "/bin/sh: line 1: /dev/null/bin/nvcc: Not a directory",
    "RuntimeError: Error building extension 'sgl_kernel_jit': [1/2] /dev/null/bin/nvcc "
    "--generate-dependencies-with-compile -c cuda.cu -o cuda.cuda.o",
])
def test_every_form_of_the_dev_null_workaround_is_named_as_an_anti_fix(line: str, library: CompiledLibrary) -> None:
    rep = report([*env(), PROBE, SM75, line], library)
    assert [f.id for f in rep.findings] == [GATE, "cuda-home-has-no-nvcc"]
    anti = rep.findings[1]
    assert anti.captures["cuda_home"] == "/dev/null"
    assert anti.cause.startswith(f"Anti-fix: this is the workaround that finding #1 ({rep.findings[0].title}) warns")
    assert rep.facts["cuda_home"].value == "/dev/null"


def test_a_real_nvcc_failing_to_compile_is_not_the_missing_nvcc(library: CompiledLibrary) -> None:
    line = ("RuntimeError: Error building extension 'codebook_cuda': [1/3] /usr/local/cuda/bin/nvcc "
            "--generate-dependencies-with-compile -c cuda_kernel.cu")
    assert "cuda-home-has-no-nvcc" not in [f.id for f in report([line], library).findings]


# --- version facts ------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "facts"), [
    ("torch                    2.9.1+cu130", {"torch_version": "2.9.1", "torch_cuda": "13.0"}),
    ("torch==2.7.0+cu128", {"torch_version": "2.7.0", "torch_cuda": "12.8"}),
    ("[pip3] torch==2.8.0+cu128", {"torch_version": "2.8.0", "torch_cuda": "12.8"}),
    ("PyTorch version              : 2.9.1+cu128", {"torch_version": "2.9.1", "torch_cuda": "12.8"}),
    ("PyTorch: 2.9.1+cu130 sglang: 0.5.5.post1 sgl_kernel: 0.3.17 flashinfer_python: 0.5.0",
     {"flashinfer_version": "0.5.0", "sglang_version": "0.5.5.post1"}),
    ("flashinfer-python        0.6.8.post1", {"flashinfer_version": "0.6.8.post1"}),
    ("[pip3] flashinfer-python==0.3.1.post1", {"flashinfer_version": "0.3.1.post1"}),
    ("flashinfer                   : 0.7.0.dev20260922", {"flashinfer_version": "0.7.0.dev20260922"}),
    ("/root/.cache/flashinfer/0.6.6/120a/cached_ops/sampling/sampling.so", {"flashinfer_version": "0.6.6"}),
    ("[2024-05-02 10:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.14.4, "
     "git-hash=unknown, git-branch=unknown", {"deepspeed_version": "0.14.4"}),
    ("deepspeed info ................... 0.14.4, unknown, unknown", {"deepspeed_version": "0.14.4"}),
    ("deepspeed                0.16.3", {"deepspeed_version": "0.16.3"}),
])
def test_version_facts_from_pip_and_env_lines(line: str, facts: dict[str, str], library: CompiledLibrary) -> None:
    got = {k: v.value for k, v in report([line], library).facts.items()}
    assert facts.items() <= got.items(), got


# --- the chain, told from evidence ---------------------------------------------------------

OOM = ["kernel: Out of memory: Killed process 48213 (python3) total-vm:412331204kB, anon-rss:198765432kB",
       "sglang.service: Failed with result 'oom-kill'.",
       "sglang.service: Scheduled restart job, restart counter is at 1.",
       "Started sglang.service - SGLang."]


def chain(lines: list[str], library: CompiledLibrary) -> Finding:
    top = report(lines, library).findings[0]
    assert top.id == CHAIN and root_id(top) == GATE
    return top


def test_the_chain_says_what_the_log_shows_and_supports_nothing_it_does_not(library: CompiledLibrary) -> None:
    top = chain([*OOM, *env(), PROBE, SM75], library)
    assert top.cause.startswith("What the log shows is an order of events")
    assert "JIT cache" not in top.title and [h.supported for h in top.hypotheses] == [False, False, False]


def test_a_package_upgraded_before_the_oom_supports_the_upgrade_candidate(library: CompiledLibrary) -> None:
    top = chain(["Successfully installed flashinfer-python-0.6.8.post1", *OOM, *env(), PROBE, SM75], library)
    upgrade, environment, cache = top.hypotheses
    assert upgrade.supported and upgrade.evidence[0].line == 1
    assert not environment.supported and not cache.supported


def test_a_toolkit_that_changed_between_starts_supports_the_environment_candidate(library: CompiledLibrary) -> None:
    top = chain([*env(nvcc="12.9"), *OOM, *env(nvcc="12.8"), PROBE, SM75], library)
    upgrade, environment, _ = top.hypotheses
    assert environment.supported and [e.line for e in environment.evidence] == [1, 8]
    assert upgrade.supported  # nvcc_version is among the upgrade candidate's facts too


def test_a_cache_on_tmp_supports_the_cache_candidate(library: CompiledLibrary) -> None:
    top = chain(["Using /tmp/torch_extensions as PyTorch extensions root...", *OOM, *env(), PROBE], library)
    assert top.hypotheses[2].supported and not top.hypotheses[0].supported


# --- no template reaches a reader, no rule names what does not exist ----------------------

def test_no_pattern_text_shown_without_a_match_keeps_a_template() -> None:
    for pf in load_library([ROOT / "patterns"]).files:
        for text in [pf.pattern.title, pf.pattern.description, *pf.pattern.fix_texts]:
            shown = fill(text, {}, drop=True)
            assert PLACEHOLDER.search(shown) is None, (pf.pattern.id, shown)


def test_a_title_names_what_the_line_captured(library: CompiledLibrary) -> None:
    line = ("Error! Your kernel headers for kernel 6.8.0-45-generic cannot be found at "
            "/lib/modules/6.8.0-45-generic/build or /lib/modules/6.8.0-45-generic/source.\n")
    top = analyze_bytes(line.encode(), library).findings[0]
    assert top.id == "nvidia-module-build-kernel-headers-missing" and "kernel 6.8.0-45-generic are" in top.title


def test_a_suggestion_shows_the_cause_with_placeholders_filled() -> None:
    from analyzer.kb.documents import pattern_document

    pf = next(p for p in load_library([ROOT / "patterns"]).files if p.pattern.id == "cuda-home-has-no-nvcc")
    doc = pattern_document(pf)
    assert "{" not in doc.cause and "tried to run nvcc and there is no such program" in doc.cause


def test_rule_data_naming_an_unknown_fact_or_pattern_is_refused(book: RuleBook, tmp_path: Path) -> None:
    bad = Rule(id="typo", title="a rule with a typo", severity="high", confidence="low",
               when=["flashinfer_verison >= 0.6.7"], explains=["no-such-pattern"], description="d", fix=["f"],
               source="s")
    broken = RuleBook(book.facts, book.tables, [*book.rules, bad], book.chains)
    known: dict[str, list[str]] = {pf.pattern.id: [] for pf in load_library([ROOT / "patterns"]).files}
    check_references(book, known, tmp_path)  # the library as it is
    with pytest.raises(PatternError, match=re.escape("rules.yaml typo names an unknown pattern `no-such-pattern` (+1")):
        check_references(broken, known, tmp_path)


def test_a_rule_needs_a_condition_and_varies_names_known_facts(book: RuleBook, tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="a rule needs a condition"):
        Rule(id="empty", title="t", severity="high", confidence="low", description="d", fix=["f"], source="s")
    bad = Rule(id="skew", title="t", severity="high", confidence="low", varies=["ncll_version"], description="d",
               fix=["f"], source="s")
    known: dict[str, list[str]] = {pf.pattern.id: [] for pf in load_library([ROOT / "patterns"]).files}
    with pytest.raises(PatternError, match=re.escape("rules.yaml skew `varies` names an unknown fact `ncll_version`")):
        check_references(RuleBook(book.facts, book.tables, [bad], book.chains), known, tmp_path)
