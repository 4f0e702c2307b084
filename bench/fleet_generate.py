"""Generate a fleet of node journals with a multi-node incident planted (real lines only).

Background: the benign loghub samples re-stamped as journalctl short-iso lines of each node
(bench/generate.py's pool). Planted, as upstream programs print them (the lines of the
library's fixtures):
- `xid`: node ROOT's kernel logs Xid 79 (the GPU fell off the bus, NVIDIA driver; the line of
  NVIDIA/nvidia-docker#1553); ten minutes later every rank of every other node logs the
  ProcessGroupNCCL watchdog's collective timeout (PyTorch; vllm-project/vllm#5458's line).
- `exception`: one rank on node ROOT raises a CUDA illegal memory access (torch's
  `RuntimeError: CUDA error: an illegal memory access was encountered`); the others time out.
Each node's clock is off by up to two seconds (within the tolerated skew), and each rank's
timeout comes up to three seconds apart, as watchdogs do.

    python bench/fleet_generate.py --nodes 256 --node-size 20M --out bench/data/fleet
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from generate import background, parse_size  # noqa: E402

T0 = 1_777_802_290 + 3600  # the fault: 2026-05-03 10:58:10 UTC; background from an hour before
RANKS = 8
XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
TIMEOUT = ("[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=4211, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) "
           "ran for 600086 milliseconds before timing out.")
EXCEPTION = [
    "Traceback (most recent call last):",
    '  File "/srv/venv/lib/python3.12/site-packages/vllm/worker/model_runner.py", line 1547, in execute_model',
    "    hidden_or_intermediate_states = model_executable(",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
]
ROOT_ID = {"xid": "gpu-fell-off-bus-xid-79", "exception": "cuda-illegal-memory-access"}


def _stamp(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def _background_block(node_bytes: int, seed: int) -> list[tuple[float, str]]:
    """(time, `HOST ident[pid]: message`) lines with a host placeholder, about `node_bytes`."""
    rng = random.Random(seed)
    pool = background()
    out: list[tuple[float, str]] = []
    size = 0
    while size < node_bytes:
        ident, msg = pool[rng.randrange(len(pool))]
        text = f"{{host}} {ident}[{1000 + rng.randrange(50)}]: {msg}"
        out.append((0.0, text))
        size += len(text) + 26
    span = 3600 + 900  # an hour before the fault to fifteen minutes after
    return [(T0 - 3600 + span * i / len(out), text) for i, (_, text) in enumerate(out)]


def _planted(incident: str, node: int, root: int, rng: random.Random) -> list[tuple[float, str]]:
    if node == root:
        if incident == "xid":
            return [(T0, f"{{host}} kernel: {XID}")]
        return [(T0 + i * 0.001, f"{{host}} python3[5100]: [rank{node * RANKS}]:{text}")
                for i, text in enumerate(EXCEPTION)]
    return [(T0 + 600 + rng.uniform(0, 3), f"{{host}} python3[{5100 + r}]: " + TIMEOUT.format(rank=node * RANKS + r))
            for r in range(RANKS)]


def write_fleet(folder: Path, nodes: int = 16, node_bytes: int = 200_000, incident: str = "xid",
                root: int = 5, seed: int = 1) -> dict[str, object]:
    """One file per node (`node-NN.log`); returns the root node's name and the root cause's id."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    block = _background_block(node_bytes, seed)
    for n in range(nodes):
        host = f"node-{n:03d}"
        skew = rng.uniform(-2, 2)
        lines = sorted([*block, *_planted(incident, n, root, rng)], key=lambda x: x[0])
        with (folder / f"{host}.log").open("w") as out:
            out.writelines(f"{_stamp(t + skew)} {text.replace('{host}', host, 1)}\n" for t, text in lines)
    return {"root_node": f"node-{root:03d}", "root_id": ROOT_ID[incident], "nodes": nodes}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--node-size", default="200K")
    ap.add_argument("--incident", choices=sorted(ROOT_ID), default="xid")
    ap.add_argument("--root", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "fleet")
    a = ap.parse_args()
    print(json.dumps(write_fleet(a.out, a.nodes, parse_size(a.node_size), a.incident, a.root)))
