#!/usr/bin/env python3
r"""List the error messages a project raises or logs, release by release, and how many of them
the pattern library recognises.

    python scripts/mine_messages.py --repo /work/.mirror/flashinfer-ai+flashinfer/repo \
        --name flashinfer --tags '^v0\.6\.\d+$' --last 8 --path flashinfer --out flashinfer.json

It reads a bare git repository (as the `fetch` tool brings it) at each of the last N release
tags matching `--tags`, with `git grep`, and collects message templates: the first run of
adjacent string literals (joined as Python and C join them) of `raise XError(...)`,
`logger/logging.error/exception/critical/warning(...)`, `warnings.warn(...)`, `assert cond, "..."`,
C/C++ `throw ...("...")`, NCCL-style `WARN("...")`, torch's `TORCH_CHECK`/`AT_ERROR`, glog's
`LOG(ERROR) <<`, Triton's `Status(Status::Code::X, ...)`, `TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_X, ...)`
and `LOG_ERROR <<` (in C++ and Python a message built with `+` or `<<` reads on over its pieces,
each expression a `{}`), the NVIDIA driver's `NV_PRINTF(LEVEL_ERROR, ...)`, systemd's `log_(unit_)error(_errno)(...)`,
the kernel's `pr_err`/`dev_err`, Go `errors.New/fmt.Errorf`, `log/klog/logrus.Errorf(...)` and
`slog.Error(...)`, Slurm's `error()`/`fatal()`, the ROCm runtime's `LogError`/`LogPrintfError`/
`ClPrint(amd::LOG_ERROR, ...)`, rocBLAS's and hipBLASLt's `*_cerr <<`, the kernel's `DRM_ERROR`,
and Rust `panic!/bail!/anyhow!/error!(...)`, `.expect("...")` and thiserror's `#[error("...")]`.
f-string and Rust fields and printf/Go conversions become `{}`. Each template keeps the file it is
in and the first and last release (of those read) that print it; a template in the newest release only is new, one
missing from it is gone. Coverage: each template is filled with a few sample values and run
through every expression of the library (both hand-written patterns and catalogues); it is
covered when one of them matches. Prints a summary line and writes the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS = {
    "py": r"(raise [A-Za-z_][A-Za-z0-9_.]*(Error|Exception)\(|\b(logger|logging|log|_LOGGER)\.(error|exception|critical"
          r"|fatal|warning|warn)\(|warnings\.warn\(|^ *assert [^,]*, *)",
    "c": r"(throw [A-Za-z_:]+\(|WARN\(|ERROR\(|TORCH_CHECK\(|TORCH_INTERNAL_ASSERT\(|AT_ERROR\(|fprintf\(stderr,"
         r"|LOG\((ERROR|WARNING|FATAL)\) *<<|NV_PRINTF\(LEVEL_(ERROR|WARNING),|nv_printf\(NV_DBG_(ERRORS|WARNINGS),"
         r"|\blog_(unit_)?(emergency|alert|crit|error|warning|notice)(_errno)?\(|\b(pr|dev|drm)_(err|warn|crit|alert)\("
         # Triton: Status(Status::Code::X, ...), TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_X, ...), its loggers
         r"|Status::Code::[A-Z_]+,|TRITONSERVER_ERROR_[A-Z_]+,|TRITONSERVER_LOG_(ERROR|WARN),"
         r"|\bLOG_(ERROR|WARNING|FATAL) *<<|LOG_TRITONSERVER_ERROR\("
         # llama.cpp / ggml: LLAMA_LOG_ERROR(...), GGML_LOG_WARN(...), common's LOG_ERR(...), the server's SRV_ERR(...)
         r"|\b(LLAMA|GGML)_LOG_(ERROR|WARN)\(|\bLOG_(ERR|WRN)\(|\b(SRV|SLT|QUE)_(ERR|WRN)\(|\bGGML_ABORT\("
         # Slurm's error()/fatal() (src/common/log.h; glibc's error(status, errnum, fmt) reads alike), the
         # ROCm runtime's (clr) LogError/LogPrintfError and ClPrint at its error and warning levels,
         # rocBLAS's and hipBLASLt's error streams, the kernel's DRM_ERROR and DRM_DEV_ERROR (amdgpu)
         r"|(^|[^\w.>])(error|fatal|fatal_abort)\(|\bLog(Printf)?(Error|Warning)\(|\bClPrint\(amd::LOG_(ERROR|WARNING),"
         r"|\b(rocblas|hipblaslt)_cerr *<<|\bDRM_(DEV_)?(ERROR|WARN)\()",
    "go": r"(errors\.New\(|fmt\.Errorf\(|\b(log|slog|klog|logrus|logger|l)\.(Error|Errorf|Warn|Warnf|Warning"
          r"|Warningf|Fatal|Fatalf|Panic|Panicf|ErrorS|ErrorContext|WarnContext)\()",
    # thiserror's `#[error("...")]` gives an error type its message
    "rs": r"(\b(panic|bail|anyhow|error|warn|unreachable|unimplemented)!\(|\.expect\(|Err\([A-Za-z_:]*\(|#\[error\()",
}
EXTS = {"py": ["*.py"], "c": ["*.c", "*.cc", "*.cpp", "*.cu", "*.h", "*.hpp", "*.cuh"], "go": ["*.go"],
        "rs": ["*.rs"]}
_STRING = re.compile(r"""[rfbu]{0,2}(?P<q>"|')(?P<s>(?:\\.|(?!(?P=q)).)*)(?P=q)""")
# a literal right after the previous one: only spaces, newlines or a line continuation between
_NEXT = re.compile(r"(?:\s|\\\n)*" + _STRING.pattern)
_JOIN = re.compile(r"\)?\s*(?:\+|<<)\s*")  # C++: `"a" + x`, `std::string("a") + x`, `<< "a" << x`
_PIECE = re.compile(r"(?:std::string\(\s*)?" + _STRING.pattern)  # `+ std::string("a")` is a literal too
_WRAPPER = re.compile(r"_IF_[A-Z_]*ERROR\($")  # a macro that passes on an error the call inside returns
_FIELD = re.compile(r"\{[^{}]*\}|%[-#0 +]*\d*(?:\.\d+)?[lhzjt]*[sdifgxXurcpevqwTm]")  # printf, glibc %m, Go %v/%q/%w
SAMPLES = ("1", "12.8", "x", "/tmp/x")
FOLLOW = 6  # lines after the call that may hold the message
MIN_LETTERS = 12  # shorter templates ("%s", "{}") say nothing
_BLOCK = ("//", "/*", "*")
COMMENTS = {"py": ("#",), "c": _BLOCK, "go": _BLOCK, "rs": _BLOCK}  # a line that opens so is a comment


@dataclass
class Row:
    template: str
    file: str
    first: str
    last: str
    releases: list[str] = field(default_factory=list)
    covered_by: str | None = None


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False).stdout


def release_tags(repo: Path, pattern: str, last: int) -> list[str]:
    """The newest `last` tags, or release branches (Triton's r26.06: core has no tags), matching `pattern`."""
    refs = git(repo, "for-each-ref", "--sort=creatordate", "--format=%(refname:short)", "refs/tags", "refs/heads")
    tags = [t for t in refs.split() if re.search(pattern, t)]
    return tags[-last:]


def message(code: str, joins: bool = False) -> str | None:
    """The first string literal in `code` joined with the literals right after it, as the
    language joins `"no space" "after this."` (a message split over several lines). With
    `joins` (C++ and Python), a message built with `+` (`std::string("a '") + name + "'"`,
    `"a " + str(n)`) or streamed with `<<` (`LOG_ERROR << "a " << n`) reads on over the pieces,
    each expression a `{}`."""
    first = _STRING.search(code)
    if first is None or (joins and ";" in code[:first.start()]):  # the call's own message is not a literal
        return None
    lead = code[:first.start()].rstrip()
    before = joins and lead.endswith(("+", "<<")) and lead.rstrip("+<").strip()  # `name + " is not..."`
    parts, pos = ["{}" if before else "", first["s"]], first.end()
    while True:
        if (nxt := _NEXT.match(code, pos)) is not None:
            parts.append(nxt["s"])
            pos = nxt.end()
        elif joins and (op := _JOIN.match(code, pos)) is not None:
            if (lit := _PIECE.match(code, op.end())) is not None:  # the next piece is a literal
                parts.append(lit["s"])
                pos = lit.end()
                continue
            if (pos := _operand(code, op.end())) == op.end():
                break
            if code[op.end():pos].strip() != "std::endl" and parts[-1] != "{}":  # adjacent operands: one field
                parts.append("{}")
        else:
            break
    return "".join(parts)


def _operand(code: str, pos: int) -> int:
    """Where the C++ expression from `pos` ends: at `+`, `<<`, `;`, `,` or a closing bracket outside
    brackets and literals (`std::to_string(i + 1)` is one operand)."""
    depth, i = 0, pos
    while i < len(code):
        if code[i] in "\"'" and (lit := _STRING.match(code, i)) is not None:
            i = lit.end()
            continue
        if code[i] in "([{":
            depth += 1
        elif code[i] in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and (code[i] in ";,+" or code.startswith("<<", i)):
            return i
        i += 1
    return i


def templates_at(repo: Path, tag: str, paths: Sequence[str]) -> dict[str, str]:
    """template → file, at one release. The message may start on one of the lines after the
    call (`raise RuntimeError(` then the string on its own line) and run over several."""
    out: dict[str, str] = {}
    for lang, call in CALLS.items():
        specs = [_spec(p, e) for p in paths for e in EXTS[lang]] if paths else EXTS[lang]
        text = git(repo, "grep", "-n", f"-A{FOLLOW}", "-E", call, tag, "--", *specs)
        lines = [ln for ln in text.splitlines() if ln != "--"]
        for i, line in enumerate(lines):
            m = re.match(rf"{re.escape(tag)}:(?P<file>[^:]+):\d+:(?P<code>.*)$", line)
            if m is None or (c := re.search(call, m["code"])) is None:
                continue
            if m["code"][:c.start()].lstrip().startswith(COMMENTS[lang]):  # a call commented out prints nothing
                continue
            if _WRAPPER.search(m["code"][:c.end()]):  # RETURN_IF_ERROR(f(x, "a")): "a" is f's argument, no message
                continue
            rest = [m["code"][c.end():]]
            for follow in lines[i + 1:i + 1 + FOLLOW]:
                f = re.match(rf"{re.escape(tag)}:{re.escape(m['file'])}-\d+-(?P<code>.*)$", follow)
                if f is None:
                    break
                rest.append(f["code"])
            msg = message("\n".join(rest), joins=lang in ("c", "py"))
            if msg is None:
                continue
            msg = re.sub(r"\\[nrt]", " ", re.sub(r"\\([\"'])", r"\1", msg))  # escapes: spaces, quotes unescaped
            template = " ".join(_FIELD.sub("{}", msg).split())
            if sum(ch.isalpha() for ch in template) >= MIN_LETTERS:
                out.setdefault(template, m["file"])
    return out


def _spec(path: str, ext: str) -> str:
    """A `--path` as a git pathspec for files of one extension: the file itself when it is one of
    that kind (`torch/serialization.py`), else the folder's files of that kind (a folder whose
    name has a dot included; for a file of another kind the spec matches nothing)."""
    if "." in path.rsplit("/", 1)[-1]:
        return path if path.endswith(ext.lstrip("*")) else f"{path}/{ext}"
    return f"{path.rstrip('/')}/{ext}"


def mine(repo: Path, tags: Sequence[str], paths: Sequence[str]) -> list[Row]:
    rows: dict[str, Row] = {}
    for tag in tags:
        for template, file in templates_at(repo, tag, paths).items():
            row = rows.setdefault(template, Row(template, file, tag, tag))
            row.last = tag
            row.releases.append(tag)
    return sorted(rows.values(), key=lambda r: (r.file, r.template))


def expressions() -> list[tuple[str, regex.Pattern[str]]]:
    from analyzer.triage import load

    library = load()
    return [(pid, rx) for pid, cp in library.patterns.items() if not library.is_signal(pid) for rx in cp.regexes]


def cover(rows: Iterable[Row], exprs: Sequence[tuple[str, regex.Pattern[str]]]) -> None:
    for row in rows:
        samples = [row.template.replace("{}", v) for v in SAMPLES]
        row.covered_by = next((pid for pid, rx in exprs for s in samples if rx.search(s)), None)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="a bare git repository (the fetch tool's)")
    ap.add_argument("--name", required=True, help="the emitter's name in the summary")
    ap.add_argument("--tags", default=r"^v?\d+\.\d+(\.\d+)?$", help="regex of the release tags (or branches) to read")
    ap.add_argument("--last", type=int, default=8, help="how many of the newest matching tags")
    ap.add_argument("--path", action="append", default=[], help="only these folders or files (repeatable)")
    ap.add_argument("--out", type=Path, help="write the rows here as JSON")
    a = ap.parse_args(argv)
    tags = release_tags(a.repo, a.tags, a.last)
    if not tags:
        print(f"{a.name}: no tag matches {a.tags!r}", file=sys.stderr)
        return 2
    rows = mine(a.repo, tags, a.path)
    cover(rows, expressions())
    newest = [r for r in rows if r.last == tags[-1]]
    covered = sum(1 for r in newest if r.covered_by)
    print(f"{a.name}: {len(newest)} message templates in {tags[-1]} ({len(rows)} across {tags[0]}..{tags[-1]}); "
          f"the library recognises {covered} ({100 * covered / max(1, len(newest)):.0f}%)")
    if a.out:
        a.out.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
