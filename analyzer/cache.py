"""The user's cache folder for triage, and writes (into it, and of a report's `--out` file)
that never leave half a file.

It holds what is costly to rebuild and cheap to check: the knowledge-base index and its
related-postmortems sidecar, compiled hyperscan databases, the validated pattern library
and the stamp proving its expressions compile (these three keyed by content hash; the library
also by its files' stat, so that unchanged files are not read), and the site's word
embeddings. Everything in it can be deleted at any time.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triage"


def write_atomic(path: Path, data: bytes) -> bool:
    """Write through a temporary file and a rename. A cache that cannot be written (a
    read-only home, a full disk) only costs time: False, and nothing is left behind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_replacing(path, data)
    except OSError:
        return False
    return True


def write_replacing(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`: a reader
    sees the old file or the new one, never half of one. On any error the temporary file is
    removed and the error raised."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def prune(folder: Path, keep: int) -> None:
    """Keep the `keep` most recently written files of a folder of keyed entries (each edit
    of the library makes a new key; the old entries are never asked for again)."""
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[keep:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def read_cached(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
