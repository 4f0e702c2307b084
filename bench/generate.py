"""Generate a large, realistic journal with incidents planted at known lines.

Background lines are real shapes: the loghub samples (tests/data/benign) and the serving
logs of tests/data/corpus, re-stamped as journalctl short-iso or json lines. Planted: a
Python traceback (FlashInfer's gate), a host OOM kill, an Xid 79 and an NCCL /dev/shm
failure. Files go to bench/data/ (ignored by git), never committed.

    python bench/generate.py --size 100M --form short-iso
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
START = 1_777_802_290  # 2026-05-03 09:58:10 UTC

PLANTED: dict[str, list[tuple[str, int | None, str]]] = {
    "flashinfer-no-eligible-cuda-arch": [
        ("python3", 4242, "Traceback (most recent call last):"),
        ("python3", 4242, '  File "/srv/venv/lib/python3.12/site-packages/flashinfer/jit/core.py", line 108, '
                          "in check_cuda_arch"),
        ("python3", 4242, '    raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")'),
        ("python3", 4242, "RuntimeError: FlashInfer requires GPUs with sm75 or higher"),
    ],
    "host-oom-killed-service": [
        ("kernel", None, "Out of memory: Killed process 4242 (python3) total-vm:412331204kB, anon-rss:198765432kB, "
                         "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:402112kB oom_score_adj:0"),
    ],
    "gpu-fell-off-bus-xid-79": [
        ("kernel", None, "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus."),
    ],
    "nccl-shm-dev-shm-too-small": [
        ("python3", 4243, "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device"),
    ],
}


def background() -> list[tuple[str, str]]:
    """(identifier, message) pairs from real logs, prefixes stripped."""
    out = []
    prefix = re.compile(r"^(?:[A-Z][a-z]{2} +\d+ [\d:]+ \S+ |\d{4}-\d\d-\d\d[T ][\d:.,]+\S* )?"
                        r"(?:(\S+?)(?:\[\d+\])?: )?")
    for log in sorted((DATA / "benign").rglob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            m = prefix.match(line)
            ident = (m.group(1) if m and m.group(1) else log.stem.split("_")[0].lower())[:20]
            msg = line[m.end():] if m else line
            if msg and "oom" not in msg.lower():
                out.append((re.sub(r"[^\w.-]", "", ident) or "app", msg))
    return out


def render(form: str, t: float, ident: str, pid: int | None, msg: str) -> str:
    if form == "json":
        obj = {"__REALTIME_TIMESTAMP": str(int(t * 1e6)), "_HOSTNAME": "gpu-node-7", "SYSLOG_IDENTIFIER": ident,
               "MESSAGE": msg, "PRIORITY": "6"}
        if pid:
            obj["_PID"] = str(pid)
        return json.dumps(obj)
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")
    who = f"{ident}[{pid}]" if pid else ident
    return f"{stamp} gpu-node-7 {who}: {msg}"


def lines(size: int, form: str, seed: int = 7) -> Iterator[tuple[str, str | None]]:
    """(line, planted pattern id or None) until about `size` bytes."""
    rng = random.Random(seed)
    pool = background()
    written = 0
    n = 0
    plants = list(PLANTED.items())
    every = max(size // (len(plants) + 1), 1)
    next_plant = every
    while written < size:
        if written >= next_plant and plants:
            pid, entries = plants.pop(0)
            for ident, proc, msg in entries:
                line = render(form, START + n, ident, proc, msg)
                written += len(line) + 1
                n += 1
                yield line, pid if msg == entries[-1][2] else None
            next_plant += every
            continue
        ident, msg = pool[rng.randrange(len(pool))]
        line = render(form, START + n / 50, ident, 1000 + rng.randrange(50), msg)
        written += len(line) + 1
        n += 1
        yield line, None


def generate(path: Path, size: int, form: str) -> dict[str, int]:
    """Write the file; return the planted pattern ids with the line of their last entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    planted: dict[str, int] = {}
    with path.open("w") as out:
        for i, (line, pid) in enumerate(lines(size, form), start=1):
            out.write(line + "\n")
            if pid:
                planted[pid] = i
    return planted


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="100M")
    ap.add_argument("--form", choices=["short-iso", "json"], default="short-iso")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    target = a.out or ROOT / "bench" / "data" / f"journal-{a.size}.{a.form}.log"
    print(json.dumps({"path": str(target), "planted": generate(target, parse_size(a.size), a.form)}))
