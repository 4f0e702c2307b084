"""Measure `triage --follow` on an endless stream: lines per second and resident memory over
minutes of writing at the highest rate the pipe takes.

A writer cycles through the benign loghub samples (real logs of healthy systems), with a
real failure line planted every 50,000 lines, into `triage --follow - --format json`, for
`--seconds`. The follower's RSS is sampled every second from /proc. The reference is the
same lines read as one file by `triage` without --follow, in this script: the follow's
rate is reported as a ratio of it, and memory is flat when the RSS of the last minute is
no more than 10 % above the RSS after the first ten seconds.

    python bench/follow.py --seconds 180
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRIAGE = [sys.executable, "-m", "analyzer"]
FAILURE = b"/bin/sh: 1: /dev/null/bin/nvcc: not found"
EVERY = 50_000


def benign_block() -> bytes:
    """One block of about 10,000 benign lines (from the loghub samples), ending in a newline."""
    lines = [raw for path in sorted((ROOT / "tests" / "data" / "benign").rglob("*.log"))
             for raw in path.read_bytes().split(b"\n") if raw.strip()]
    return b"\n".join(lines[:10_000]) + b"\n"


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def follow_run(seconds: float) -> dict[str, float]:
    block = benign_block()
    per_block = block.count(b"\n")
    proc = subprocess.Popen([*TRIAGE, "--follow", "-", "--format", "json", "--no-kb"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    announced: list[str] = []
    out = proc.stdout

    def collect() -> None:
        announced.extend(out.read().decode().split("\n")[:-1])

    reader = threading.Thread(target=collect)
    reader.start()
    samples: list[tuple[float, int]] = []
    start = time.monotonic()
    last_sample = start
    while time.monotonic() - start < seconds:
        proc.stdin.write(block)
        written += per_block
        if written % EVERY < per_block:
            proc.stdin.write(FAILURE + b"\n")
            written += 1
        now = time.monotonic()
        if now - last_sample >= 1.0:
            samples.append((now - start, _rss_kib(proc.pid)))
            last_sample = now
    proc.stdin.close()
    proc.wait()
    took = time.monotonic() - start
    reader.join()
    early = [rss for t, rss in samples if 5 <= t <= 15] or [samples[0][1]]
    late = [rss for t, rss in samples if t >= took - 60]
    ids = [json.loads(line)["id"] for line in announced if line.strip()]
    return {"seconds": round(took, 1), "lines": written, "lines_per_s": round(written / took),
            "rss_early_mb": round(max(early) / 1024, 1), "rss_late_mb": round(max(late) / 1024, 1),
            "rss_peak_mb": round(max(r for _, r in samples) / 1024, 1),
            "rss_growth": round(max(late) / max(early), 3), "announced": len(ids),
            "failure_announced_once": float(ids.count("cuda-home-has-no-nvcc") == 1)}


def batch_reference(lines: int) -> float:
    """Lines per second of `triage` reading the same stream as one file (the reference)."""
    block = benign_block()
    per_block = block.count(b"\n")
    with tempfile.NamedTemporaryFile(suffix=".log") as f:
        for i in range(max(1, lines // per_block)):
            f.write(block)
            if i % (EVERY // per_block) == 0:
                f.write(FAILURE + b"\n")
        f.flush()
        n = Path(f.name).read_bytes().count(b"\n")
        start = time.monotonic()
        subprocess.run([*TRIAGE, f.name, "--format", "json", "--no-kb", "--jobs", "1"], cwd=ROOT,
                       capture_output=True, check=False)
        return n / (time.monotonic() - start)


def measure(seconds: float) -> dict[str, float]:
    figures = follow_run(seconds)
    reference = batch_reference(min(int(figures["lines"]), 2_000_000))
    figures["batch_lines_per_s"] = round(reference)
    figures["rate_vs_batch"] = round(figures["lines_per_s"] / reference, 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180)
    args = parser.parse_args()
    print(json.dumps(measure(args.seconds), indent=2))


if __name__ == "__main__":
    main()
