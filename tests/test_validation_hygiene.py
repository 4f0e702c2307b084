"""The validation half stays unseen by the library: no pattern, fixture or postmortem cites one
of its threads (one disclosed exception, see tests/data/README.md), and none holds a line of
its logs that identifies the report (a line with three or more numbers: timestamps, pids, sizes)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

VALIDATION = ROOT / "tests" / "data" / "validation"
LIBRARY_FILES = [*sorted((ROOT / "patterns").rglob("*.yaml")), *sorted((ROOT / "patterns").rglob("*.log")),
                 *sorted((ROOT / "kb").glob("*.md"))]
_URL = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)")
_SHORT = re.compile(r"\b([\w.-]+)/([\w.-]+)#(\d+)")
# NVIDIA's own notice about containers losing their GPUs, cited since 2026-11-29; validation case b4-06
# (collected later) names it as its root cause. Disclosed in tests/data/README.md.
DISCLOSED = {("nvidia", "nvidia-container-toolkit", "48")}
# Lines a compiler prints identically for every user who hits the bug (a system header's fixed
# position, no pid, time or size): the fixture of nvcc-11-5-gcc-11-std-function-parse-error took
# them from JiyaSu/CapelliniSpTRSV#2 and turboderp/exllama#65; validation case b6-04 holds the
# same g++ 11 output. Disclosed in tests/data/README.md.
COMPILER_OUTPUT = {
    "/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with \u2018...\u2019:",
    "/usr/include/c++/11/bits/std_function.h:435:145: note:         \u2018_ArgTypes\u2019",
    "/usr/include/c++/11/bits/std_function.h:530:146: error: parameter packs not expanded with \u2018...\u2019:",
}


def _threads(text: str) -> set[tuple[str, str, str]]:
    return {(a.lower(), b.lower(), n) for rx in (_URL, _SHORT) for a, b, n in rx.findall(text)}


def test_library_cites_no_validation_thread() -> None:
    threads = set().union(*(_threads(p.read_text()) for p in VALIDATION.glob("cases-*.yaml")))
    assert threads, "no validation threads found"
    cited = {(str(p.relative_to(ROOT)), t) for p in LIBRARY_FILES
             for t in _threads(p.read_text(errors="replace")) & threads if t not in DISCLOSED}
    assert sorted(cited) == []


def test_library_holds_no_identifying_validation_line() -> None:
    lines = {line.strip(): log.name for log in VALIDATION.glob("*.log")
             for line in log.read_text(errors="replace").splitlines()
             if len(line.strip()) >= 30 and len(re.findall(r"\d+", line)) >= 3
             and line.strip() not in COMPILER_OUTPUT}
    assert lines, "no validation lines found"
    copied = [f"{p.relative_to(ROOT)}:{i} ({lines[s.strip()]})" for p in LIBRARY_FILES
              for i, s in enumerate(p.read_text(errors="replace").splitlines(), 1) if s.strip() in lines]
    assert copied == []
