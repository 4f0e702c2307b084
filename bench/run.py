"""Measure triage in one run and write bench/RESULTS.md.

Figures that count are ratios against a reference run in the same script (ripgrep over
the same file with the library's triggers), because absolute times drift on a shared
machine. Also: `--follow` on an endless stream (lines/s against the same lines read as one
file, RSS over minutes: bench/follow.py), `triage fleet` over 64 and 256 generated nodes of
20 MB, locally and on a local Ray cluster (bench/fleet.py), peak RSS, cold `--help`, cold
`triage` on a 1,000-line log whose findings are all pattern matches, cold and warm
`triage search`, and a check that every planted incident was found.

    python bench/run.py --sizes 100M,1G          # 4G too, when the disk and time allow
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import fleet  # noqa: E402
import follow  # noqa: E402
from generate import generate, parse_size  # noqa: E402

TRIAGE = [sys.executable, "-m", "analyzer"]


def timed(cmd: list[str]) -> tuple[float, int, subprocess.CompletedProcess[bytes]]:
    """Wall seconds and peak RSS (KiB) of this command alone, read by GNU time (`%M`):
    getrusage(RUSAGE_CHILDREN) would report the largest child so far, e.g. ripgrep's map.
    With worker processes, `%M` is the largest single process: see `tree_peak_memory`."""
    gnu_time = shutil.which("time") or "/usr/bin/time"
    start = time.perf_counter()
    res = subprocess.run([gnu_time, "-f", "@@rss %M", *cmd], capture_output=True, cwd=ROOT)
    took = time.perf_counter() - start
    tail = res.stderr.decode(errors="replace").rsplit("@@rss ", 1)
    rss = int(tail[1].split()[0]) if len(tail) == 2 else 0
    res = subprocess.CompletedProcess(res.args, res.returncode, res.stdout, tail[0].encode())
    return took, rss, res


def tree_peak_memory(cmd: list[str]) -> tuple[int, int]:
    """Peaks (KiB) of the summed RSS and of the summed PSS of a command and all its descendants,
    sampled every 20 ms from /proc: what the machine must hold when workers run side by side.
    Forked workers share the parent's pages (the compiled library) until they write them: the
    RSS sum counts each shared page once per process, PSS splits it between the processes."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_rss = peak_pss = 0
    while proc.poll() is None:
        pids = _tree(proc.pid)
        peak_rss = max(peak_rss, sum(_rss(pid) for pid in pids))
        peak_pss = max(peak_pss, sum(_pss(pid) for pid in pids))
        time.sleep(0.02)
    return peak_rss, peak_pss


def _tree(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):  # the process ended meanwhile
            pids += [p for child in task.read_text().split() for p in _tree(int(child))]
    return pids


def _rss(pid: int) -> int:
    return _proc_kib(f"/proc/{pid}/status", "VmRSS:")


def _pss(pid: int) -> int:
    return _proc_kib(f"/proc/{pid}/smaps_rollup", "Pss:")


def _proc_kib(path: str, key: str) -> int:
    """A KiB figure of a /proc file (`VmRSS:   1234 kB`); 0 once the process has ended."""
    try:
        text = Path(path).read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith(key)), 0)


def triggers_file(path: Path) -> Path:
    from analyzer.triage import load

    path.write_text("\n".join(t.expr.replace('\\"', '"') for t in load().triggers) + "\n")
    return path


def measure_file(size: str, form: str, out: Path, rg_patterns: Path) -> dict[str, object]:
    log = out / f"journal-{size}.{form}.log"
    planted = generate(log, parse_size(size), form)
    mb = log.stat().st_size / 1e6
    t_triage, rss, res = timed([*TRIAGE, "--format", "json", "--no-kb", str(log)])
    tree_rss, tree_pss = tree_peak_memory([*TRIAGE, "--format", "json", "--no-kb", str(log)])
    findings = json.loads(res.stdout)["findings"] if res.returncode == 0 else []
    # found: the pattern (or a chain holding it) reported with the planted line as evidence
    lines = {f["id"]: {e["line"] for e in f["evidence"]} for f in findings}
    for f in findings:
        for member in f.get("members", []):
            lines.setdefault(member, set()).update(e["line"] for e in f["evidence"])
    found = {pid for pid, line in planted.items() if line in lines.get(pid, set())}
    row: dict[str, object] = {"size": size, "form": form, "mb": round(mb, 1), "triage_s": round(t_triage, 2),
                              "triage_mb_s": round(mb / t_triage, 1), "peak_rss_mb": round(rss / 1024, 1),
                              "tree_rss_mb": round(tree_rss / 1024, 1), "tree_pss_mb": round(tree_pss / 1024, 1),
                              "planted_found": sorted(set(planted) & found),
                              "planted_missed": sorted(set(planted) - found)}
    if shutil.which("rg"):
        # the library's triggers compile past ripgrep's default size limits (100 MB regex, 10 MB
        # DFA): without larger limits rg exits at once with status 2 and would look fast
        t_rg, _rss, rg = timed(["rg", "--regex-size-limit", "4G", "--dfa-size-limit", "4G",
                                "-c", "-f", str(rg_patterns), str(log)])
        if rg.returncode not in (0, 1):  # 1: no line matched
            raise SystemExit(f"ripgrep failed ({rg.returncode}): {rg.stderr.decode(errors='replace').strip()}")
        row |= {"rg_s": round(t_rg, 2), "rg_mb_s": round(mb / t_rg, 1),
                "speed_over_rg": round(t_rg / t_triage, 2)}
    log.unlink()
    return row


def best(cmd: list[str], runs: int = 3) -> float:
    """The fastest of a few fresh processes: what a user sees, minus noise from the machine."""
    return min(timed(cmd)[0] for _ in range(runs))


def cold_starts(out: Path) -> dict[str, float]:
    small = out / "small.log"
    example = (ROOT / "examples" / "founding-incident.log").read_text()
    small.write_text("\n".join((example * 20).split("\n")[:1000]) + "\n")  # 1,000 lines, all known
    index = out / "index.duckdb"
    for stale in (index, index.with_name(index.name + ".related.json")):
        stale.unlink(missing_ok=True)  # a full build, with the model
    figures = {"help_s": best([*TRIAGE, "--help"]),
               "first_run_empty_cache_s": timed([*TRIAGE, "--no-kb", "--format", "json", str(small)])[0],
               "small_log_no_kb_s": best([*TRIAGE, "--no-kb", "--format", "json", str(small)]),
               "index_build_s": timed([*TRIAGE, "kb", "index", "--index", str(index)])[0]}
    figures["small_log_s"] = best([*TRIAGE, "--format", "json", "--index", str(index), str(small)])
    query = "flashinfer rejects blackwell after a restart"
    figures["search_cold_s"] = min(_cold([*TRIAGE, "search", query, "--index", str(index), "-f", "json"])
                                   for _ in range(3))
    figures["search_warm_s"] = min(timed([*TRIAGE, "search", query, "--index", str(index), "-f", "json"])[0]
                                   for _ in range(3))
    return {k: round(v, 2) for k, v in figures.items()}


def _cold(cmd: list[str]) -> float:
    """A fresh process after the page cache is dropped (root only; otherwise just a fresh process)."""
    subprocess.run(["sh", "-c", "sync; echo 1 > /proc/sys/vm/drop_caches"], capture_output=True)
    return timed(cmd)[0]


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{platform.platform()}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def write_results(rows: list[dict[str, object]], cold: dict[str, float], live: dict[str, float],
                  fleet_rows: list[dict[str, object]]) -> str:
    lines = ["# Benchmark results", "", "Generated by `python bench/run.py`; do not edit.", "",
             f"Machine: {machine()}", "", "## Throughput (end to end, `triage --format json --no-kb`)", "",
             f"Workers: one per core ({os.cpu_count()}); files over 64 MB are split between them.", "",
             "| file | MB | triage s | triage MB/s | rg -c -f s | speed vs rg | peak RSS MB, one process | "
             "peak RSS MB, all processes | peak PSS MB, all processes | found |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['size']} {r['form']} | {r['mb']} | {r['triage_s']} | {r['triage_mb_s']} | "
                     f"{r.get('rg_s', '-')} | {r.get('speed_over_rg', '-')} | {r['peak_rss_mb']} | "
                     f"{r['tree_rss_mb']} | {r['tree_pss_mb']} | "
                     f"{len(r['planted_found'])}/{len(r['planted_found']) + len(r['planted_missed'])} |")  # type: ignore[arg-type]
    lines += ["", ("## Start-up and search (best of 3 fresh processes, except first run and index build; "
                      "cold search: the page cache dropped before each)"), "",
              "| measure | seconds |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in cold.items()]
    lines += ["", ("## Follow (`triage --follow - --format json`, benign lines written as fast as the pipe "
                   f"takes them for {live['seconds']} s, a failure every 50,000 lines; bench/follow.py)"), "",
              "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in live.items()]
    if fleet_rows:
        keys = list(fleet_rows[0])
        lines += ["", ("## Fleet (`triage fleet` over one file per node, bench/fleet_generate.py: an Xid 79 on one "
                       "node, NCCL timeouts on every rank of the others; local: 2 worker processes; Ray: "
                       "`ray.init(num_cpus=2)` started by the driver; bench/fleet.py)"), "",
                  "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in fleet_rows]
    lines += ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {'yes' if ok else 'no'} |"
              for name, value, ok in targets(rows, cold, live, fleet_rows)]
    return "\n".join(lines) + "\n"


def targets(rows: list[dict[str, object]], cold: dict[str, float], live: dict[str, float],
            fleet_rows: list[dict[str, object]]) -> list[tuple[str, str, bool]]:
    speeds = [float(r["speed_over_rg"]) for r in rows if "speed_over_rg" in r]  # type: ignore[arg-type]
    rss = {str(r["size"]): float(r["tree_rss_mb"]) for r in rows}  # type: ignore[arg-type]
    pss = max(float(r["tree_pss_mb"]) for r in rows)  # type: ignore[arg-type]
    out = [("throughput ≥ 1.0x ripgrep, every file", f"{min(speeds):.2f}x at worst" if speeds else "-",
            bool(speeds) and min(speeds) >= 1.0),
           ("peak RSS ≤ 300 MB (all processes)", f"{max(rss.values()):.0f} MB", max(rss.values()) <= 300),
           ("peak PSS ≤ 300 MB (all processes, shared pages counted once)", f"{pss:.0f} MB", pss <= 300),
           ("triage --help ≤ 0.3 s", f"{cold['help_s']} s", cold["help_s"] <= 0.3),
           ("pattern-only triage of a 1,000-line log ≤ 0.8 s", f"{cold['small_log_s']} s", cold["small_log_s"] <= 0.8),
           ("cold triage search ≤ 1.5 s", f"{cold['search_cold_s']} s", cold["search_cold_s"] <= 1.5)]
    out += [("follow: RSS of the last minute within 10 % of the first seconds",
             f"{live['rss_late_mb']} vs {live['rss_early_mb']} MB", live["rss_growth"] <= 1.1),
            ("follow: each failure announced once, counted after", f"{int(live['announced'])} announced",
             bool(live["failure_announced_once"]))]
    if len(fleet_rows) == 2:
        small, big = fleet_rows
        for mode in ("local", "ray"):
            a, b = float(small[f"driver_rss_{mode}_mb"]), float(big[f"driver_rss_{mode}_mb"])  # type: ignore[arg-type]
            out.append((f"fleet driver RSS flat ({mode}): {big['nodes']} nodes within 10 % of {small['nodes']}",
                        f"{b} vs {a} MB", b <= a * 1.1))
        out.append(("fleet: right root node and cause, Ray's findings the same as local's",
                    f"{sum(bool(r['root_right']) and bool(r['ray_same_findings']) for r in fleet_rows)}/2",
                    all(r["root_right"] and r["ray_same_findings"] for r in fleet_rows)))
    if "1G" in rss and "4G" in rss:
        out.append(("RSS flat: 4 GB within 10 % of 1 GB", f"{rss['4G']:.0f} vs {rss['1G']:.0f} MB",
                    rss["4G"] <= rss["1G"] * 1.1))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100M,1G")
    ap.add_argument("--forms", default="short-iso,json")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data")
    ap.add_argument("--follow-seconds", type=float, default=180, help="How long the follow is fed.")
    ap.add_argument("--fleet-nodes", type=int, default=256, help="Nodes of the large fleet (0: no fleet run).")
    ap.add_argument("--fleet-node-size", default="20M")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    # a cache of our own: the first run compiles the library's databases, as on a new machine
    os.environ["XDG_CACHE_HOME"] = str(a.out / "cache")
    shutil.rmtree(a.out / "cache", ignore_errors=True)
    # the package's bytecode, as an installed wheel has it (pip compiles it at install): in a
    # shell with PYTHONDONTWRITEBYTECODE set, every run would compile the edited sources again
    compileall.compile_dir(ROOT / "analyzer", quiet=1)
    rg_patterns = triggers_file(a.out / "triggers.txt")
    cold = cold_starts(a.out)  # first: its first run meets an empty cache
    rows = [measure_file(size, form, a.out, rg_patterns) for size in a.sizes.split(",")
            for form in a.forms.split(",")]
    live = follow.measure(a.follow_seconds)
    fleet_rows = fleet.measure(a.fleet_nodes, a.fleet_node_size, a.out) if a.fleet_nodes else []
    text = write_results(rows, cold, live, fleet_rows)
    (ROOT / "bench" / "RESULTS.md").write_text(text)
    print(text)
    return 0 if all(not r["planted_missed"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
