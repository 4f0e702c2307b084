"""A paste that stops mid-line: the last line's message is matched as far as it goes, said so,
and trusted one level less; a cut anywhere else, or a line no pattern begins, stays unknown."""

from __future__ import annotations

from analyzer.choices import Confidence, FindingKind
from analyzer.cut import literal_runs
from analyzer.findings import CUT_NOTE
from analyzer.library.compile import CompiledLibrary
from tests.conftest import analyze_bytes

# PyTorch's CUDA error line (c10/cuda's check, as every torch thread shows it), nvcc's
# architecture check and NCCL's system error through torch.distributed, each cut where a
# copied paste ends
CUT_LINES = [
    ("RuntimeError: CUDA error: an illegal memory access was encount", "cuda-illegal-memory-access"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_1", "nvcc-unsupported-gpu-architecture"),
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled sys",
     "nccl-unhandled-system-error"),
]


def test_a_last_line_cut_short_is_read_as_far_as_it_goes(library: CompiledLibrary) -> None:
    for line, expected in CUT_LINES:
        top = analyze_bytes(f"Loading model weights took 14.2 GB\n{line}\n\n".encode(), library).findings[0]
        whole = library.patterns[expected].pattern.confidence
        assert (top.id, top.confidence) == (expected, whole.lowered), line
        assert top.cause.startswith(CUT_NOTE) and top.evidence[0].text == line


def test_a_cut_line_before_other_lines_is_not_guessed(library: CompiledLibrary) -> None:
    data = (f"{CUT_LINES[0][0]}\n"
            "INFO 03-27 10:29:01 [worker.py:267] shutting down\n"
            "INFO 03-27 10:29:02 [worker.py:268] workers stopped\n"
            "INFO 03-27 10:29:03 [worker.py:269] bye\n").encode()
    assert [f.id for f in analyze_bytes(data, library).findings if f.id == "cuda-illegal-memory-access"] == []


def test_a_whole_line_no_pattern_knows_stays_unknown(library: CompiledLibrary) -> None:
    """A wildcard followed by words would 'match' any long line partially; the cut must fall
    in or just after the regex's own words."""
    line = "RuntimeError: the frobnicator of stage three refused the widget because of its colour"
    [top] = analyze_bytes(f"{line}\n".encode(), library).findings
    assert top.kind is FindingKind.unrecognised
    # one word after an exception's name is not the start of a pattern's message ("RuntimeError:
    # <component> was requested, but nvcc was not found" begins that way)
    line = "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: RuntimeError: something"
    [top] = analyze_bytes(f"{line}\n".encode(), library).findings
    assert top.kind is FindingKind.unrecognised


def test_a_whole_line_keeps_its_confidence(library: CompiledLibrary) -> None:
    top = analyze_bytes(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", library).findings[0]
    assert top.id == "cuda-illegal-memory-access" and not top.cause.startswith(CUT_NOTE)
    assert top.confidence is library.patterns[top.id].pattern.confidence


def test_literal_runs_are_what_the_line_must_spell() -> None:
    assert literal_runs(r"The model's max seq len \((?P<n>\d+)\) is larger than the maximum number") == [
        "The model's max seq len (", ") is larger than the maximum number"]
    assert literal_runs(r"nvcc fatal\s*: Unsupported gpu architecture '(?P<arch>compute_\d+)'") == [
        "nvcc fatal", ": Unsupported gpu architecture '"]
    # a class, an optional character and a quantified escape break the runs
    assert literal_runs(r"[Cc]uda errors? occurred\.? in the kernel launcher") == [" in the kernel launcher"]
    assert Confidence.high.lowered is Confidence.medium and Confidence.low.lowered is Confidence.low


def test_whole_lines_that_begin_a_longer_message_are_not_cut(library: CompiledLibrary) -> None:
    """Near misses from the library's fixtures: the GPU operator's driver container line ends in a
    full stop (whole, though a pattern wants more after it), and argparse's refusal of another
    option goes on past the words the pattern needs with more than one token."""
    for line, not_this in [("FATAL: failed to install elfutils packages.",
                             "gpu-operator-driver-rhel-entitlement-missing"),
                            ("train.py: error: unrecognized arguments: --lr-warmup 5",
                             "torch-launch-local-rank-argument-unrecognized")]:
        ids = [f.id for f in analyze_bytes(f"{line}\n".encode(), library).findings]
        assert not_this not in ids, line


def test_a_line_that_ends_where_a_word_or_name_ends_is_read_as_whole(library: CompiledLibrary) -> None:
    """Whole last lines of real pastes that the start of a longer message spells out: a complete
    symbol name after "undefined symbol: " (numba#8985, the stub libcuda; a GLIBC_PRIVATE message
    goes on with ", version ..."), and sentences that end where a word of another message's text
    ends (Megatron's tensor-parallel assertion, GCC's missing cc1plus)."""
    for line in ["AttributeError: /usr/local/cuda/lib64/stubs/libcuda.so: undefined symbol: _undef",
                 "AssertionError: First dimension of the tensor should be divisible by tensor parallel size",
                 "gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or directory"]:
        causes = [f.cause for f in analyze_bytes(f"{line}\n".encode(), library).findings]
        assert causes and not any(c.startswith(CUT_NOTE) for c in causes), line
