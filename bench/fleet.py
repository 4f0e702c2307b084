"""Measure `triage fleet` on a generated fleet (bench/fleet_generate.py: benign lines, one
node's Xid 79, every other rank's NCCL timeout): wall time in local worker processes and as
Ray tasks on a local Ray cluster (`ray.init(num_cpus=2)`, started here), the driver's peak
RSS at two fleet sizes (flat in the node count when the larger fleet's is within 10 % of the
smaller's), and whether both runs name the right root node and agree.

    python bench/fleet.py --nodes 256 --node-size 20M
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from fleet_generate import write_fleet  # noqa: E402
from generate import parse_size  # noqa: E402

# The driver's peak RSS is VmHWM of its own memory: getrusage's ru_maxrss would carry the
# size of the process that started it (Linux keeps the larger across fork and exec).
_DRIVER = """
import json, sys
mode, folder = sys.argv[1], sys.argv[2]
if mode == "ray":
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
from analyzer.fleet.driver import triage_fleet
report = triage_fleet([folder], jobs=2, ray_address="auto" if mode == "ray" else None)
print(json.dumps({"root_node": report.root_node, "root_id": report.findings[0].id if report.findings else None,
                  "findings": report.model_dump(mode="json")["findings"],
                  "driver_peak_rss_mb": next(int(line.split()[1]) for line in open("/proc/self/status")
                                             if line.startswith("VmHWM:")) / 1024}))
"""


def run(mode: str, folder: Path) -> dict[str, object]:
    """One fleet run in a fresh driver process: wall seconds, the driver's own peak RSS (its
    workers and Ray's processes are not the driver), the root it names."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _DRIVER, mode, str(folder)], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    took = time.perf_counter() - start
    result: dict[str, object] = json.loads(done.stdout.strip().split("\n")[-1])
    result["seconds"] = round(took, 1)
    return result


def measure(nodes: int, node_size: str, out: Path, small: int = 64) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for count in (small, nodes):
        folder = out / f"fleet-{count}"
        shutil.rmtree(folder, ignore_errors=True)
        began = time.perf_counter()
        truth = write_fleet(folder, nodes=count, node_bytes=parse_size(node_size), incident="xid", root=count // 3)
        generated = time.perf_counter() - began
        mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        local = run("local", folder)
        on_ray = run("ray", folder)
        rows.append({"nodes": count, "mb": round(mb), "generate_s": round(generated, 1),
                     "local_s": local["seconds"], "ray_s": on_ray["seconds"],
                     "local_mb_s": round(mb / float(local["seconds"]), 1),  # type: ignore[arg-type]
                     "driver_rss_local_mb": round(float(local["driver_peak_rss_mb"]), 1),  # type: ignore[arg-type]
                     "driver_rss_ray_mb": round(float(on_ray["driver_peak_rss_mb"]), 1),  # type: ignore[arg-type]
                     "root_right": local["root_node"] == truth["root_node"] and local["root_id"] == truth["root_id"],
                     "ray_same_findings": on_ray["findings"] == local["findings"]})
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--node-size", default="20M")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data")
    a = ap.parse_args()
    print(json.dumps(measure(a.nodes, a.node_size, a.out), indent=2))


if __name__ == "__main__":
    main()
