"""Write the JSON report of every real log the repository holds into one file, to compare two
versions of the engine: a refactoring that must not change behaviour is checked by running
this before and after and comparing the two files (`--compare BEFORE AFTER`).

Logs: the development corpus, the holdout set, the training half, the pasted logs, every
pattern fixture (shared catalogue fixtures once), the postmortems' example log and, when
present, the benchmark's generated journals. The knowledge base is left out (its scores
depend on the index, not on the engine).

    python scripts/report_snapshot.py --out /tmp/before.json
    python scripts/report_snapshot.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def logs() -> list[Path]:
    data = ROOT / "tests" / "data"
    found = [p for sub in ("corpus", "holdout", "training", "pastes") for p in sorted((data / sub).rglob("*.log"))]
    found += sorted((ROOT / "patterns").rglob("*.log"))
    found += sorted((ROOT / "examples").glob("*.log"))
    found += sorted((ROOT / "bench" / "data").glob("*.log"))
    return found


def snapshot() -> dict[str, object]:
    from analyzer.triage import analyze, load

    library = load()
    out: dict[str, object] = {}
    for path in logs():
        report = analyze([str(path)], library=library, knowledge=False)
        out[str(path.relative_to(ROOT))] = json.loads(report.model_dump_json())
    return out


def compare(before: Path, after: Path) -> int:
    a = json.loads(before.read_text())
    b = json.loads(after.read_text())
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    only = sorted(a.keys() ^ b.keys())
    for key in differ:
        print(f"differs: {key}")
    for key in only:
        print(f"in one only: {key}")
    print(f"{len(a.keys() & b.keys())} logs compared, {len(differ)} differ, {len(only)} in one snapshot only")
    return 1 if differ or only else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the snapshot here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    args.out.write_text(json.dumps(snapshot(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
