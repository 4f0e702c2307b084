"""`triage fleet` as a library call: discover the nodes, analyse each (local processes or Ray),
gather their findings in one DuckDB table (Parquet with `out`), diagnose across nodes. The
driver keeps the table and one example of each finding, never a node's log text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from analyzer.errors import InputError
from analyzer.fleet.diagnose import diagnose_fleet
from analyzer.fleet.model import FleetReport, NodeSummary
from analyzer.fleet.nodes import discover
from analyzer.fleet.table import FleetTable
from analyzer.fleet.work import NodeResult, run_local, run_ray
from analyzer.models import Fact, Finding
from analyzer.triage import load

NodeDone = Callable[[int, int], None]  # (nodes done, nodes in all), for progress


def triage_fleet(inputs: Sequence[str], jobs: int = 1, ray_address: str | None = None, out: Path | None = None,
                 extra_patterns: Sequence[Path] = (), on_node: NodeDone | None = None) -> FleetReport:
    nodes = discover(list(inputs))
    if not nodes:
        raise InputError("no node logs found", ", ".join(inputs))
    library = load(list(extra_patterns))  # the driver's: the rule book and the patterns' wording
    extra = tuple(str(p) for p in extra_patterns)
    results = run_ray(nodes, ray_address, extra) if ray_address else run_local(nodes, jobs, extra)
    table = FleetTable()
    exemplars: dict[str, Finding] = {}
    titles: dict[str, str] = {}
    summaries: dict[str, NodeSummary] = {}
    facts: dict[str, dict[str, Fact]] = {}
    warnings: list[str] = []
    for done, result in enumerate(results, 1):
        if result.error:
            warnings.append(f"node {result.node.name}: {result.error}")
        table.add(result)
        _keep(result, exemplars, titles)
        _summarise(result, summaries)
        if result.report is not None:  # two inputs of one host: the first one's value
            facts[result.name] = result.report.facts | facts.get(result.name, {})
        if on_node is not None:
            on_node(done, len(nodes))
    if out is not None:
        table.write_parquet(out)
    return diagnose_fleet(table, exemplars, titles, [summaries[k] for k in sorted(summaries)], library.rulebook,
                          warnings, facts)


def _keep(result: NodeResult, exemplars: dict[str, Finding], titles: dict[str, str]) -> None:
    """One example of each finding (its wording, fix and severity), without its evidence."""
    for f in result.report.findings if result.report else []:
        if f.id not in exemplars:
            exemplars[f.id] = f.model_copy(update={"evidence": [], "symptoms": [], "related": []})
        titles.setdefault(f.id, f.title)
        for s in f.symptoms:
            titles.setdefault(s.id, s.title)


def _summarise(result: NodeResult, summaries: dict[str, NodeSummary]) -> None:
    report = result.report
    inputs = [result.node.report] if result.node.report else [*result.node.files, *result.node.journal_dirs]
    times = [f.first_time for f in report.findings if f.first_time] if report else []
    mine = NodeSummary(name=result.name, inputs=[str(i) for i in inputs],
                       lines=sum(i.lines for i in report.inputs) if report else 0,
                       findings=len(report.findings) if report else 0, first_failure=min(times, default=None),
                       from_report=result.node.report is not None)
    if result.name in summaries:  # two inputs whose lines name the same host: one node
        old = summaries[result.name]
        firsts = [t for t in (old.first_failure, mine.first_failure) if t]
        mine = old.model_copy(update={"inputs": old.inputs + mine.inputs, "lines": old.lines + mine.lines,
                                      "findings": old.findings + mine.findings,
                                      "first_failure": min(firsts, default=None)})
    summaries[result.name] = mine
