"""`triage fleet`: generated 16-node incidents (real lines: an Xid 79 on one node, or one
rank's CUDA error, and every other rank's NCCL watchdog timeout) diagnosed with the right
root node and cause first, in local worker processes and on a real local Ray cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.fleet.driver import triage_fleet
from analyzer.fleet.model import FleetReport
from analyzer.fleet.nodes import discover, node_name
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from fleet_generate import write_fleet

TIMEOUT_ID = "nccl-watchdog-collective-timeout"


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, object]]]:
    out = {}
    for incident, root in (("xid", 5), ("exception", 11)):
        folder = tmp_path_factory.mktemp(incident)
        out[incident] = (folder, write_fleet(folder, nodes=16, node_bytes=60_000, incident=incident, root=root))
    return out


def _check(report: FleetReport, truth: dict[str, object]) -> None:
    assert report.root_node == truth["root_node"]
    first = report.findings[0]
    assert first.root and first.id == truth["root_id"] and first.first_node == truth["root_node"]
    echo = {s.id: s for s in first.symptoms}[TIMEOUT_ID]
    assert len(echo.nodes) == 15 and truth["root_node"] not in echo.nodes
    assert echo.processes == 120  # eight ranks on each of the fifteen other nodes
    assert "earliest failure on any node" in first.reasons[0] and "before the first echo" in first.reasons[0]
    assert len(report.nodes) == 16 and all(n.findings for n in report.nodes)


@pytest.mark.parametrize("incident", ["xid", "exception"])
def test_local_workers_find_the_root_node(fleets: dict[str, tuple[Path, dict[str, object]]], incident: str) -> None:
    folder, truth = fleets[incident]
    _check(triage_fleet([str(folder)], jobs=2), truth)


def test_a_real_local_ray_cluster_gives_the_same_findings(
        fleets: dict[str, tuple[Path, dict[str, object]]]) -> None:
    ray = pytest.importorskip("ray", reason="ray is a dev dependency: pip install -e '.[dev]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for folder, truth in fleets.values():
            on_ray = triage_fleet([str(folder)], ray_address="auto")  # the cluster this process joined
            _check(on_ray, truth)
            local = triage_fleet([str(folder)], jobs=2)
            assert on_ray.model_dump() == local.model_dump()
    finally:
        ray.shutdown()


def test_the_table_is_written_as_parquet_for_duckdb(fleets: dict[str, tuple[Path, dict[str, object]]],
                                                    tmp_path: Path) -> None:
    import duckdb

    folder, truth = fleets["xid"]
    out = tmp_path / "fleet.parquet"
    triage_fleet([str(folder)], jobs=2, out=out)
    rows = duckdb.sql(f"SELECT node, finding_id, first_time, count, processes FROM '{out}' "
                      "ORDER BY first_time").fetchall()
    assert rows[0][0] == truth["root_node"] and rows[0][1] == truth["root_id"]
    timeouts = [r for r in rows if r[1] == TIMEOUT_ID]
    assert len({r[0] for r in timeouts}) == 15 and sum(r[3] for r in timeouts) == 120
    assert not list(tmp_path.glob(".*.tmp"))  # written whole, then renamed


def test_nodes_own_json_reports_are_read_instead_of_logs(fleets: dict[str, tuple[Path, dict[str, object]]],
                                                         tmp_path: Path) -> None:
    folder, truth = fleets["exception"]
    for log in sorted(folder.glob("*.log")):
        done = subprocess.run([sys.executable, "-m", "analyzer", str(log), "--format", "json", "--no-kb"],
                              cwd=ROOT, capture_output=True, check=False)
        (tmp_path / f"{log.stem}.json").write_bytes(done.stdout)
    assert all(n.report for n in discover([str(tmp_path)]))
    report = triage_fleet([str(tmp_path)], jobs=2)
    _check(report, truth)
    assert all(n.from_report for n in report.nodes)


def test_the_host_name_in_the_lines_wins_over_the_file_name(fleets: dict[str, tuple[Path, dict[str, object]]],
                                                            tmp_path: Path) -> None:
    folder, truth = fleets["xid"]
    for log in folder.glob("*.log"):
        (tmp_path / f"dump-{log.stem[-3:]}.log").write_bytes(log.read_bytes())
    assert node_name(tmp_path / "dump-005.log.gz") == "dump-005"
    report = triage_fleet([str(tmp_path)], jobs=2)
    assert report.root_node == truth["root_node"]
    assert {n.name for n in report.nodes} == {f"node-{i:03d}" for i in range(16)}


def test_a_silent_node_that_the_others_waited_for_is_named(tmp_path: Path) -> None:
    """No failure of its own anywhere: the one node without the timeout is the straggler."""
    write_fleet(tmp_path, nodes=6, node_bytes=30_000, incident="xid", root=2)
    log = tmp_path / "node-002.log"
    log.write_text("".join(line for line in log.read_text().splitlines(keepends=True) if "NVRM" not in line))
    report = triage_fleet([str(tmp_path)], jobs=2)
    assert report.root_node is None and report.straggler == "node-002"
    assert report.findings[0].consequence and report.findings[0].id == TIMEOUT_ID


def test_cli(fleets: dict[str, tuple[Path, dict[str, object]]], tmp_path: Path) -> None:
    folder, truth = fleets["xid"]
    done = subprocess.run([sys.executable, "-m", "analyzer", "fleet", str(folder), "--format", "json",
                           "--out", str(tmp_path / "f.parquet")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["root_node"] == truth["root_node"] and data["findings"][0]["root"] is True
    assert (tmp_path / "f.parquet").stat().st_size > 0
    terminal = subprocess.run([sys.executable, "-m", "analyzer", "fleet", str(folder)], cwd=ROOT,
                              capture_output=True, text=True)
    assert f"root cause: {truth['root_node']}" in terminal.stdout
    overview = [line for line in terminal.stdout.split("\n") if line.startswith("node-")]
    assert overview[0].startswith(str(truth["root_node"])) and "X" in overview[0]
    assert all("~" in line for line in overview[1:])
    markdown = subprocess.run([sys.executable, "-m", "analyzer", "fleet", str(folder), "--format", "markdown"],
                              cwd=ROOT, capture_output=True, text=True)
    assert "(root cause)" in markdown.stdout and f"**{truth['root_node']}**" in markdown.stdout
    missing = subprocess.run([sys.executable, "-m", "analyzer", "fleet", str(tmp_path / "nope")], cwd=ROOT,
                             capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr


def test_a_node_failing_again_across_runs_is_counted(tmp_path: Path) -> None:
    """Two runs of the service on one node, each ending in the same CUDA error: the fleet
    finding keeps the node's run count and the terminal says it."""
    lines = []
    for i, minute in enumerate((0, 20)):
        at = f"2026-05-03T10:{minute + 5:02d}:00+0000 node-a python3[51{i}0]:"
        lines += [f"2026-05-03T10:{minute:02d}:00+0000 node-a systemd[1]: Started vllm.service - vLLM.",
                  f"{at} Traceback (most recent call last):",
                  f'{at}   File "/srv/venv/lib/python3.12/site-packages/vllm/worker/model_runner.py", line 1547, '
                  "in execute_model",
                  f"{at}     hidden_or_intermediate_states = model_executable(",
                  f"{at} RuntimeError: CUDA error: an illegal memory access was encountered"]
    (tmp_path / "a.log").write_text("\n".join(lines) + "\n")
    report = triage_fleet([str(tmp_path)])
    error = next(f for f in report.findings if f.id == "cuda-illegal-memory-access")
    assert [(n.node, n.runs, n.count) for n in error.nodes] == [("node-a", 2, 2)]
    shown = subprocess.run([sys.executable, "-m", "analyzer", "fleet", str(tmp_path)], cwd=ROOT,
                           capture_output=True, text=True)
    assert "Failed again across runs: node-a (2 runs)" in shown.stdout


def test_a_library_every_node_must_share_is_compared_across_nodes(tmp_path: Path) -> None:
    """Each node's log shows one NCCL release, so no node alone sees a mix; across the fleet
    the node with the other release is named first (the lines as NCCL prints them)."""
    for node, release in (("node-a", "2.19.3+cuda12.3"), ("node-b", "2.19.3+cuda12.3"), ("node-c", "2.14.3+cuda11.7")):
        (tmp_path / f"{node}.log").write_text(
            f"{node}:1017:1017 [0] NCCL INFO cudaDriverVersion 12000\nNCCL version {release}\n"
            f"{node}:1017:1020 [0] NCCL INFO comm 0x56 rank 0 nranks 3 cudaDev 0 busId 30 - Init START\n")
    report = triage_fleet([str(tmp_path)])
    skew = next(f for f in report.findings if f.id == "nccl-versions-differ-across-ranks")
    assert skew.kind == "rule" and skew.first_node == "node-c" and "2.14.3 and 2.19.3" in skew.title
    assert [n.node for n in skew.nodes] == ["node-c", "node-a", "node-b"]
    assert [e.text for e in skew.evidence][:2] == ["NCCL version 2.14.3+cuda11.7", "NCCL version 2.19.3+cuda12.3"]
    assert "node-c: 2.14.3" in skew.reasons[0]
    (tmp_path / "node-c.log").write_text((tmp_path / "node-a.log").read_text().replace("node-a", "node-c"))
    assert all(f.id != skew.id for f in triage_fleet([str(tmp_path)]).findings)
