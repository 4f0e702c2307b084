"""The findings of all nodes as one table in DuckDB: one row per node and finding (and per
symptom a node's own diagnosis folded under it), written to Parquet with `--out` so that
DuckDB, Spark or Trino can read it later; the cross-node diagnosis queries it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.errors import InputError
from analyzer.fleet.work import NodeResult

_SCHEMA = """CREATE TABLE fleet (
    node VARCHAR, finding_id VARCHAR, kind VARCHAR, severity VARCHAR, title VARCHAR,
    first_time TIMESTAMP, last_time TIMESTAMP, count INTEGER, processes INTEGER, runs INTEGER,
    folded_under VARCHAR, evidence_path VARCHAR, evidence_line INTEGER, evidence VARCHAR)"""


@dataclass(frozen=True)
class FindingRow:
    """One finding id across the nodes (an aggregate of the table)."""

    id: str
    nodes: int
    first_time: str | None
    last_time: str | None
    count: int
    processes: int
    first_node: str
    per_node: list[tuple[str, int, int, int, str | None]]  # node, count, runs, processes, first time


class FleetTable:
    def __init__(self) -> None:
        import duckdb

        self.db = duckdb.connect()
        self.db.execute(_SCHEMA)

    def add(self, result: NodeResult) -> None:
        if result.report is None:
            return
        rows: list[tuple[Any, ...]] = []
        for f in result.report.findings:
            ev = f.evidence[0] if f.evidence else None
            rows.append((result.name, f.id, f.kind.value, f.severity.value, f.title, _ts(f.first_time),
                         _ts(f.last_time), f.count, f.processes, f.runs, None, ev.path if ev else None,
                         ev.line if ev else None, ev.text if ev else None))
            for s in f.symptoms:
                sev = s.evidence[0] if s.evidence else None
                rows.append((result.name, s.id, "symptom", None, s.title, None, None, s.count, 1, 1, f.id,
                             sev.path if sev else None, sev.line if sev else None, sev.text if sev else None))
        if rows:
            self.db.executemany("INSERT INTO fleet VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def write_parquet(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            self.db.execute(f"COPY fleet TO '{_quote(tmp)}' (FORMAT parquet)")
            tmp.replace(path)  # whole or not at all
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path) from exc

    def findings(self) -> list[FindingRow]:
        """Each finding id: how many nodes, when first and last, where first; earliest first."""
        rows = self.db.execute("""
            SELECT finding_id, count(DISTINCT node), strftime(min(first_time), '%Y-%m-%dT%H:%M:%SZ'),
                   strftime(max(last_time), '%Y-%m-%dT%H:%M:%SZ'), sum(count)::INTEGER,
                   sum(processes)::INTEGER, arg_min(node, coalesce(first_time, TIMESTAMP '9999-01-01')),
                   list((node, count, runs, processes, strftime(first_time, '%Y-%m-%dT%H:%M:%SZ'))
                        ORDER BY first_time NULLS LAST, node)
            FROM fleet GROUP BY finding_id
            ORDER BY min(first_time) NULLS LAST, finding_id""").fetchall()
        return [FindingRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                           [(p[0], int(p[1]), int(p[2]), int(p[3]), p[4]) for p in r[7]]) for r in rows]

    def evidence(self, finding_id: str, limit: int = 3) -> list[tuple[str, str, int, str]]:
        """The first lines that show a finding, one per node, earliest nodes first."""
        return self.db.execute("""
            SELECT node, evidence_path, evidence_line, evidence FROM fleet
            WHERE finding_id = ? AND evidence IS NOT NULL
            ORDER BY first_time NULLS LAST, node LIMIT ?""", [finding_id, limit]).fetchall()


def _ts(iso: str | None) -> str | None:
    return iso.replace("T", " ").removesuffix("Z") if iso else None


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")
