"""An unknown TypeError/AttributeError/ImportError raised in a package's own code, with the shape of
an interface that is not there, is worded as a likely version mismatch (analyzer.mismatch); the
user's own script and data bugs are not."""

from __future__ import annotations

import pytest

from analyzer.choices import Confidence, FindingKind
from analyzer.library.compile import CompiledLibrary
from analyzer.mismatch import package_of, read_mismatch
from analyzer.models import Frame
from tests.conftest import ROOT, analyze_bytes

KNOWN = {"megatron", "torch", "vllm", "transformer_engine"}


def frame(path: str) -> Frame:
    return Frame(path, 10, "f")


@pytest.mark.parametrize(("text", "path", "caller", "provider"), [
    # Transformer Engine 1.13 calling torch >= 2.4's signature on torch 2.1 (NVIDIA/TransformerEngine#1473)
    ("TypeError: torch.is_autocast_enabled() takes no arguments (1 given)",
     "/venv/lib/python3.10/site-packages/transformer_engine/pytorch/ops/_common.py", "transformer_engine", "torch"),
    ("TypeError: LlamaAttention.forward() got an unexpected keyword argument 'position_embeddings'",
     "/venv/lib/python3.11/site-packages/peft/tuners/lora/layer.py", "peft", None),
    ("TypeError: forward() got an unexpected keyword argument 'cache_position'",
     "/venv/lib/python3.11/site-packages/peft/tuners/lora/layer.py", "peft", None),
    ("TypeError: load() missing 1 required keyword-only argument: 'weights_only'",
     "/venv/lib/python3.11/site-packages/vllm/model_executor/loader.py", "vllm", None),
    ("AttributeError: module 'torch.library' has no attribute 'custom_op'",
     "/venv/lib/python3.11/site-packages/vllm/utils.py", "vllm", "torch"),
    ("ImportError: cannot import name 'split_torch_state_dict_into_shards' from 'huggingface_hub' (C:\\py\\x.py)",
     "C:\\py\\Lib\\site-packages\\transformers\\modeling_utils.py", "transformers", "huggingface_hub"),
    # SGLang 0.1.14 importing a module vLLM 0.4.0 removed (sgl-project/sglang#362, training b32-05)
    ("ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata'",
     "/venv/lib/python3.10/site-packages/sglang/srt/models/gemma.py", "sglang", "vllm"),
    # a source checkout of a known project
    ("TypeError: get_cpu_offload_context() takes from 0 to 4 positional arguments but 5 were given",
     "/workspace/megatron/megatron/core/transformer/custom_layers/transformer_engine.py", "megatron", None),
])
def test_interface_mismatches_name_the_caller_and_the_provider(text: str, path: str, caller: str,
                                                               provider: str | None) -> None:
    m = read_mismatch(text, frame(path), KNOWN)
    assert m is not None and (m.caller, m.provider) == (caller, provider)


@pytest.mark.parametrize(("text", "path"), [
    ("TypeError: main() missing 1 required positional argument: 'args'", "/home/me/train.py"),  # the user's script
    ("TypeError: foo() takes 1 positional argument but 2 were given", "/app/vllm/serve.py"),  # a script beside it
    ("AttributeError: 'NoneType' object has no attribute 'shape'", "/venv/lib/site-packages/vllm/a.py"),
    ("AttributeError: 'LLMEngine' object has no attribute 'model_executor'", "/venv/lib/site-packages/vllm/llm.py"),
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", "/venv/lib/site-packages/vllm/a.py"),
    ("AttributeError: module 'torch' has no attribute 'xpu'", "/venv/lib/site-packages/torch/__init__.py"),
    ("TypeError: torch._C._cuda_init() takes no arguments (1 given)", "/venv/lib/site-packages/torch/cuda/__init__.py"),
    # a package not installed at all (named alone), and a package's own submodule missing (a partial install)
    ("ModuleNotFoundError: No module named 'vllm'", "/venv/lib/site-packages/sglang/srt/server.py"),
    ("ModuleNotFoundError: No module named 'vllm._C'", "/venv/lib/site-packages/vllm/platforms/cuda.py"),
])
def test_other_errors_and_the_users_own_code_are_not_read_as_a_mismatch(text: str, path: str) -> None:
    assert read_mismatch(text, frame(path), KNOWN) is None


def test_a_known_librarys_missing_name_without_a_frame_is_read_with_the_asker_unknown() -> None:
    """A paste of the last line alone: a known project's module lacking a name reads as drift against
    that project; a module of the user's own, or a call's shape, says nothing without a frame."""
    m = read_mismatch("ImportError: cannot import name 'PrepareModuleInputOutput' from "
                      "'torch.distributed.tensor.parallel'", None, KNOWN)
    assert m is not None and (m.caller, m.provider) == (None, "torch")
    m = read_mismatch("AttributeError: module 'torch.library' has no attribute 'custom_op'", None, KNOWN)
    assert m is not None and (m.caller, m.provider) == (None, "torch")
    for text in ("ImportError: cannot import name 'helper' from 'mytools.io'",
                 "TypeError: torch.is_autocast_enabled() takes no arguments (1 given)",
                 "ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata'"):
        assert read_mismatch(text, None, KNOWN) is None


def test_a_frameless_import_error_is_worded_as_a_version_mismatch_of_the_provider(library: CompiledLibrary) -> None:
    """pytorch/torchtitan#1423 (training b32-09): one line, no traceback; torch lacks the name."""
    text = (ROOT / "tests/data/training/b32-09-torch-too-old-prepare-module-io-torchtitan-1423.log").read_bytes()
    [top] = analyze_bytes(text, library).findings[:1]
    assert top.kind is FindingKind.unrecognised and top.confidence is Confidence.low
    assert "another torch version than the one it was released against" in top.cause
    assert top.fix[0].startswith("Find the package that asked")


def test_a_package_is_known_by_pip_or_by_a_known_folder_with_a_subpackage() -> None:
    assert package_of("/x/dist-packages/ray/dag/node.py", set()) == "ray"
    assert package_of("/workspace/megatron/megatron/core/a.py", KNOWN) == "megatron"
    assert package_of("/workspace/megatron/pretrain_gpt.py", KNOWN) is None


def test_a_bold_traceback_line_in_a_source_checkout_is_worded_as_a_version_mismatch(library: CompiledLibrary) -> None:
    """NVIDIA/Megatron-LM#996 (training b28-05), as pasted with its last line made bold in Markdown;
    that line, which a pattern now names, replaced by another argument mismatch no pattern knows."""
    log = (ROOT / "tests/data/training/b28-05-te-version-gate-cpu-offload-args-megatron-996.log").read_text()
    known = "get_cpu_offload_context() takes from 0 to 4 positional arguments but 5 were given"
    assert known in log
    log = log.replace(known, "TELayerNormColumnParallelLinear.__init__() got an unexpected keyword argument 'frob'")
    [top] = [f for f in analyze_bytes(log.encode(), library).findings if f.kind is FindingKind.unrecognised][:1]
    assert top.title == ("Not recognised: TypeError: TELayerNormColumnParallelLinear.__init__() got an unexpected "
                         "keyword argument 'frob'")
    assert top.confidence is Confidence.low and "(Megatron-LM)" in top.cause
    assert "version mismatch between megatron and the package that defines it" in top.cause
    assert top.fix[0].startswith("Compare the installed versions with those megatron was released against")


def test_a_line_pasted_as_inline_code_is_read_without_its_backticks(library: CompiledLibrary) -> None:
    """sgl-project/sglang#362 and pytorch/torchtitan#1423 (training b32-05, b32-09), as pasted: one
    line in backticks, the closing one lost; a line that only starts with a quoted word keeps them."""
    for name in ("b32-05-vllm04-removed-input-metadata-sglang-362.log",
                 "b32-09-torch-too-old-prepare-module-io-torchtitan-1423.log"):
        text = (ROOT / "tests/data/training" / name).read_text()
        assert text.startswith("`")
        titles = [f.title for f in analyze_bytes(text.encode(), library).findings]
        assert titles and titles[0].startswith("Not recognised: ") and "Error: " in titles[0]
        assert not titles[0].startswith("Not recognised: `"), titles
    assert analyze_bytes(b"`foo` is deprecated, use `bar`\n", library).findings == []
