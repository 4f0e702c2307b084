"""The pattern library as Sigma rules (`triage patterns export --format sigma --out DIR`), so
that a fleet's log platform raises the same failures: one rule per pattern, written to
`DIR/<area>/<id>.yml`; the patterns that a rule cannot express are listed with the reason in
`DIR/NOT-EXPORTED.md`, never dropped in silence.

A rule carries the pattern's words (title, description, why, fix, references, false
positives), a stable id (a UUID derived from the pattern id), `status` (the same three words),
`level` (`info` is Sigma's `informational`) and tags under `triage.` (`triage.area.gpu`,
`triage.cuda`). Its detection is a keyword search of the log line (the message), which Loki
turns into line filters (`|~`) and other backends map to their message field: `match.any` is
a list of `|re` values (any of them), `match.all` the same with `|all`, `ignorecase` the `|i`
modifier. The regexes are rewritten into Sigma's subset by `sigma_regex`; with `lucene=True`
they are written as Lucene reads them instead (the whole message, no anchors), for the
Elasticsearch and OpenSearch backends, which pass a regex through unchanged.

The logsource says where such lines are logged, decided from the pattern's catalogue and
regexes (kernel's and systemd's own phrasing), in this order:
- `product: linux, service: kernel`: the kernel's lines (NVRM and Xid, OOM kills, AER, EDAC,
  machine checks, hung tasks, segfaults), the nvidia-xid and linux-kernel-failures catalogues;
- `product: linux, service: systemd`: systemd's own lines about units (exit statuses, restart
  loops, start limits), the systemd catalogues;
- `product: linux, category: application`: what a process logs (Python tracebacks, serving
  engines, CUDA libraries, NCCL, containers);
- `product: linux` alone when a pattern's expressions come from more than one of these.

A pattern matched on a whole event (`scope: event`: a traceback, an NVRM block) is exported
only when none of its expressions can match across a line break, and not when it needs all of
several expressions (they may hold on different lines of the event).
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analyzer.choices import Severity
from analyzer.errors import TriageError
from analyzer.library import sigma_regex
from analyzer.library.load import Library, PatternFile
from analyzer.library.schema import PLACEHOLDER, FixStep, Pattern, Role, Scope
from analyzer.library.sigma_regex import NEWLINE, Unsupported

# ids of exported rules are uuid5(NAMESPACE, pattern id): the same pattern keeps its rule id
NAMESPACE = uuid.UUID("1b2aee59-7c21-4ba3-90dd-a6b386d6e888")
LEDGER = "NOT-EXPORTED.md"  # also marks a folder as this command's output
AUTHOR = "triage pattern library"

LEVELS = {Severity.info: "informational", Severity.low: "low", Severity.medium: "medium",
          Severity.high: "high", Severity.critical: "critical"}

KERNEL_CATALOGUES = {"nvidia-xid", "linux-kernel-failures"}
SYSTEMD_CATALOGUES = {"systemd-exit-status", "systemd-unit-results"}
_KERNEL = re.compile(
    r"NVRM|Xid|nvidia-modeset|nvidia-nvlink|pcieport|\bAER\b|EDAC|mce: |[Mm]achine [Cc]heck|"
    r"Out of memory: Kill|oom-kill:|oom_reaper|invoked oom-killer|Killed process|blocked for more than|"
    r"soft lockup|Kernel panic|Call Trace|segfault at|traps: |BUG: |RmInitAdapter|_kgspBootGspRm|"
    r"apparmor=|nfs: server|Unknown symbol|disagrees about version of symbol|Direct firmware load|"
    r"NVIDIA driver will ignore|Legacy drivers|fallen off the bus")
_SYSTEMD = re.compile(
    r"\\\.(?:\(\?:)?(?:service|mount|scope|socket)|code=(?:exited|killed|dumped|\(|\\w)|Failed with result|"
    r"Start request repeated|start request repeated|Scheduled restart job|holdoff time over|Failed at step|"
    r"\^Started |\^Reloading|unit file|Unit file|Unit \(\?P<unit>|Found left-over process|mount namespacing|"
    r"process exited, code=")

KERNEL = {"product": "linux", "service": "kernel"}
SYSTEMD = {"product": "linux", "service": "systemd"}
APPLICATION = {"product": "linux", "category": "application"}
HOST = {"product": "linux"}


@dataclass
class SigmaExport:
    """What an export wrote, and the patterns it could not express, with the reason."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[PatternFile, str]] = field(default_factory=list)

    def reasons(self) -> Counter[str]:
        return Counter(reason for _pf, reason in self.skipped)


def rule_id(pattern_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, pattern_id))


def logsource(pf: PatternFile) -> dict[str, str]:
    if pf.catalogue in KERNEL_CATALOGUES:
        return KERNEL
    if pf.catalogue in SYSTEMD_CATALOGUES:
        return SYSTEMD
    kinds = {"kernel" if _KERNEL.search(e.regex) else "systemd" if _SYSTEMD.search(e.regex) else "app"
             for e in pf.pattern.match.expressions}
    if len(kinds) > 1:
        return HOST
    return {"kernel": KERNEL, "systemd": SYSTEMD, "app": APPLICATION}[kinds.pop()]


def tags(p: Pattern) -> list[str]:
    """Sigma's tag form, `namespace.name` in lower case: ours under `triage.`."""
    out = [f"triage.area.{p.area}"] + (["triage.signal"] if p.role is Role.signal else [])
    for tag in p.tags:
        name = re.sub(r"[^a-z0-9_.-]+", "-", tag.lower()).strip("-.")
        if name and f"triage.{name}" not in out:
            out.append(f"triage.{name}")
    return out


def filled(text: str) -> str:
    """A title or description with its `{capture}` placeholders as the reader will see them."""
    return PLACEHOLDER.sub(lambda m: m["default"] if m["default"] is not None else f"<{m['name']}>",
                           " ".join(text.split()))


def description(p: Pattern) -> str:
    steps = [filled(s.step) + f" (when {', '.join(s.when)})" if isinstance(s, FixStep) else filled(s)
             for s in p.fix]
    fix = "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1))
    return (f"{filled(p.description)}\n\nWhy it matters: {filled(p.why)}\n\nFix:\n{fix}\n\n"
            f"Exported from triage's pattern {p.id} (triage patterns show {p.id}).")


def expressions(p: Pattern, lucene: bool = False) -> list[str]:
    """Every expression of the pattern in Sigma's subset (or Lucene's dialect); raises
    Unsupported naming the expression and what it needs."""
    if p.match.in_container:
        raise Unsupported("it holds only for a container's lines (in_container), told by a log prefix that "
                          "a log platform stores in its own fields, not in the message")
    if p.match.scope is Scope.event and p.match.all and len(p.match.all) > 1:
        raise Unsupported("all of its expressions must hold in one event (scope: event), each on a line "
                          "of its own, and a log platform matches one line at a time")
    out = []
    for n, e in enumerate(p.match.expressions, 1):
        where = f"expression {n}" if len(p.match.expressions) > 1 else "its expression"
        try:
            node = sigma_regex.rewrite(sigma_regex.parse(e.regex, ignorecase=lucene and p.match.ignorecase))
            if p.match.scope is Scope.event and _crosses_lines(node):
                raise Unsupported("it matches a whole event (scope: event) across log lines, "
                                  "and a log platform matches one line at a time")
            text = sigma_regex.LUCENE.write(sigma_regex.whole_field(node)) if lucene else sigma_regex.SIGMA.write(node)
        except Unsupported as exc:
            raise Unsupported(f"{where}: {exc}") from None
        out.append(text)
    return out


def _crosses_lines(node: sigma_regex.Node) -> bool:
    if isinstance(node, sigma_regex.Chars):
        return bool(node & NEWLINE)
    if isinstance(node, sigma_regex.Seq):
        return any(_crosses_lines(i) for i in node.items)
    if isinstance(node, sigma_regex.Alt):
        return any(_crosses_lines(b) for b in node.branches)
    if isinstance(node, sigma_regex.Rep):
        return _crosses_lines(node.item)
    return False


def rule(pf: PatternFile, lucene: bool = False) -> dict[str, Any]:
    """The Sigma rule of one pattern, as the YAML document's mapping; raises Unsupported."""
    p = pf.pattern
    values = expressions(p, lucene)
    if p.match.ignorecase and not lucene and p.match.any and len(values) > 1:
        # one alternation: pySigma's Loki backend merges several `|re|i` values into one regex
        # and drops the case flag on the way (it keeps it for a single value)
        values = ["|".join(f"({v})" for v in values)]
    # `all` of one value is not allowed; Lucene has no case flag (the classes carry both cases)
    modifier = "".join(["|re", "|all" if p.match.all and len(values) > 1 else "",
                        "|i" if p.match.ignorecase and not lucene else ""])
    references = list(dict.fromkeys([*p.references, *([p.source] if p.source.startswith("http") else [])]))
    out: dict[str, Any] = {"title": filled(p.title), "id": rule_id(p.id), "status": p.status.value,
                           "description": description(p)}
    if references:
        out["references"] = references
    out |= {"author": AUTHOR, "tags": tags(p), "logsource": dict(logsource(pf)),
            "detection": {"keywords": {modifier: values}, "condition": "keywords"}}
    if p.falsepositives:
        out["falsepositives"] = [" ".join(f.split()) for f in p.falsepositives]
    out["level"] = LEVELS[p.severity]
    return out


class _Dumper(yaml.SafeDumper):
    """Multi-line texts (the description) as literal blocks, as a person writes them."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def render(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


def export_sigma(library: Library, folder: Path, lucene: bool = False) -> SigmaExport:
    """Write one rule per pattern under `folder` and the ledger of those not exported."""
    _prepare(folder)
    result = SigmaExport(folder)
    for pf in library.files:
        try:
            text = render(rule(pf, lucene))
        except Unsupported as exc:
            result.skipped.append((pf, str(exc)))
            continue
        path = folder / pf.pattern.area / f"{pf.pattern.id}.yml"
        _write(path, text)
        result.written.append(path)
    _write(folder / LEDGER, ledger(result, lucene))
    return result


def ledger(result: SigmaExport, lucene: bool = False) -> str:
    how = " --lucene" if lucene else ""
    lines = ["# Patterns without a Sigma rule", "",
             f"`triage patterns export --format sigma{how}` wrote {len(result.written)} rules. "
             f"These {len(result.skipped)} patterns have none: a rule could not say what they match "
             "without changing it. `triage` itself still finds them in a log.", "",
             "| reason | patterns |", "|---|---|"]
    lines += [f"| {_cell(_general(r))} | {n} |" for r, n in Counter(_general(r) for _pf, r in result.skipped)
              .most_common()]
    lines += ["", "| pattern | file | why |", "|---|---|---|"]
    lines += [f"| {pf.pattern.id} | {pf.path.name} | {_cell(reason)} |" for pf, reason in result.skipped]
    return "\n".join(lines) + "\n"


def _general(reason: str) -> str:
    """The reason without the expression it concerns, to count alike reasons together."""
    return reason.split(": ", 1)[1] if reason.startswith(("expression ", "its expression")) else reason


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _prepare(folder: Path) -> None:
    """A new or empty folder, or one this command wrote before (its old rules are removed, so
    that a pattern removed from the library loses its rule too)."""
    if folder.exists() and not folder.is_dir():
        raise TriageError("--out names a file, not a folder", folder)
    if folder.is_dir() and any(folder.iterdir()):
        if not (folder / LEDGER).is_file():
            raise TriageError(f"--out folder is not empty and holds no {LEDGER} of an earlier export", folder,
                              help="give a new or empty folder")
        try:
            for old in sorted(folder.rglob("*.yml")):
                old.unlink()
            for sub in sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True):
                if not any(sub.rglob("*")):
                    shutil.rmtree(sub)
        except OSError as exc:
            raise TriageError(f"cannot remove the earlier export: {exc.strerror or exc}", folder) from None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TriageError(f"cannot create the folder: {exc.strerror or exc}", folder) from None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TriageError(f"cannot write: {exc.strerror or exc}", path) from None


def summary(result: SigmaExport) -> list[str]:
    """What the command prints: counts, then each pattern not exported with its reason."""
    lines = [f"wrote {len(result.written)} Sigma rules to {result.folder}"]
    if result.skipped:
        lines.append(f"{len(result.skipped)} patterns not exported (listed in {result.folder / LEDGER}):")
        lines += [f"  {pf.pattern.id}: {reason}" for pf, reason in result.skipped]
    return lines

