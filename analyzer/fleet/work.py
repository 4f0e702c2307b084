"""Per-node analysis (the single-node pipeline) in local worker processes or as Ray tasks.
A task reads its node's files where they are and returns the node's report: findings, not
log text."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import InputError, TriageError
from analyzer.fleet.nodes import NodeInput
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Report
from analyzer.triage import JournalQuery, analyze, load

_LIBRARY: list[CompiledLibrary] = []  # one per worker process, loaded on its first node
_EXTRA: list[str] = []


@dataclass
class NodeResult:
    node: NodeInput
    name: str  # the host name its lines give, else the input's name
    report: Report | None
    error: str | None = None


def analyse_node(node: NodeInput, extra_patterns: Sequence[str] = ()) -> NodeResult:
    """One node: its own report read back, or its logs analysed; an input error is the
    node's, not the fleet's."""
    try:
        if node.report is not None:
            report = Report.model_validate_json(Path(node.report).read_bytes())
        else:
            journal = JournalQuery(directories=node.journal_dirs) if node.journal_dirs else None
            report = analyze(list(node.files), _library(extra_patterns), journal=journal, knowledge=False)
    except (TriageError, OSError, ValueError) as exc:
        where = f"{exc.path}: " if isinstance(exc, InputError) and exc.path else ""
        return NodeResult(node, node.name, None, f"{where}{exc}")
    return NodeResult(node, host_of(report) or node.name, report)


def host_of(report: Report) -> str | None:
    """The host name most of the node's lines carry, where the log form has one."""
    hosts = Counter(t.host for t in report.timeline if t.host)
    return hosts.most_common(1)[0][0] if hosts else None


def _library(extra: Sequence[str]) -> CompiledLibrary:
    if not _LIBRARY or list(extra) != _EXTRA:
        _LIBRARY[:] = [load([Path(p) for p in extra])]
        _EXTRA[:] = list(extra)
    return _LIBRARY[0]


def run_local(nodes: Sequence[NodeInput], jobs: int, extra_patterns: Sequence[str] = ()) -> Iterator[NodeResult]:
    """Nodes analysed in `jobs` worker processes (forked: the library loads once per worker)."""
    if jobs <= 1 or len(nodes) == 1:
        for node in nodes:
            yield analyse_node(node, extra_patterns)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(analyse_node, node, tuple(extra_patterns)) for node in nodes]
        for future in as_completed(futures):
            yield future.result()


def run_ray(nodes: Sequence[NodeInput], address: str, extra_patterns: Sequence[str] = ()) -> Iterator[NodeResult]:
    """Nodes analysed as Ray tasks: on the cluster at `address` (`auto`: the one RAY_ADDRESS or
    a local head names), or on a Ray instance started here (`local`); when this process has
    already joined a cluster, on that one. Results are taken as they finish."""
    try:
        import ray
    except ImportError as exc:
        raise TriageError("--ray needs Ray: pip install 'triage[fleet]' (or pip install ray)") from exc
    if not ray.is_initialized():
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    task = ray.remote(analyse_node)
    pending = [task.remote(node, tuple(extra_patterns)) for node in nodes]  # type: ignore[call-arg]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])
