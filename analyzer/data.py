"""Where the bundled data lives: beside the package in a wheel, at the repo top in a checkout."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def data_dir(name: str) -> Path:
    """`patterns` or `kb`: analyzer/_data/NAME when installed from a wheel, else REPO/NAME."""
    bundled = _PACKAGE / "_data" / name
    return bundled if bundled.is_dir() else _REPO / name


def data_files(root: Path, suffixes: frozenset[str]) -> list[tuple[Path, os.stat_result]]:
    """The files under `root` whose suffix is one of `suffixes`, with their stat, in the order
    `sorted(root.rglob(...))` gives; nothing whose name below `root` starts with `_` (rules,
    benign logs), no symlinked folder followed. Scanned with os.scandir: every start-up checks
    its caches against the data folders' thousands of files, and pathlib's per-path objects
    cost several times the system calls."""
    found: list[tuple[tuple[str, ...], str, os.stat_result]] = []
    base = str(root)
    if not os.path.isdir(base):
        return []  # as rglob gives for a folder that is not there
    stack: list[tuple[str, tuple[str, ...]]] = [(base, ())]
    while stack:
        folder, parts = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue  # a folder that cannot be listed is passed over, as rglob does
        with entries:
            for entry in entries:
                if entry.name.startswith("_"):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, (*parts, entry.name)))
                elif os.path.splitext(entry.name)[1] in suffixes and entry.is_file():
                    try:
                        st = entry.stat()
                    except OSError:
                        continue  # gone since the folder was listed
                    found.append(((*parts, entry.name), entry.path, st))
    found.sort(key=lambda f: f[0])
    return [(Path(path), st) for _parts, path, st in found]


def builtin_patterns() -> Path:
    return data_dir("patterns")


def test_data_dir() -> Path:
    """Real failure logs (corpus/) and benign logs (benign/) kept with the tests of a checkout."""
    return _REPO / "tests" / "data"


def benign_logs() -> list[Path]:
    """Benign logs of a checkout (tests/data/benign) and the library's own benign fixtures."""
    folders = [test_data_dir() / "benign", builtin_patterns() / "_benign"]
    return sorted(p for f in folders if f.is_dir() for p in f.rglob("*.log"))


def corpus_logs() -> list[Path]:
    """The development corpus of a checkout (tests/data/corpus); none in an installed wheel."""
    folder = test_data_dir() / "corpus"
    return sorted(folder.glob("*.log")) if folder.is_dir() else []


PROJECT = "triage"
_SCHEMA_MARK = "`triage patterns schema`"  # in the $comment of the generated patterns/schema.json


def checkout_patterns(start: Path) -> Path | None:
    """The `patterns/` of the checkout of this project that `start` lies in, looking upward:
    the nearest folder holding the project's `patterns/schema.json`, or a `pyproject.toml`
    naming the project. None outside any checkout (an installed package is not one: drafts
    are never written into site-packages)."""
    try:
        start = start.resolve(strict=True)
    except OSError:  # a current folder removed under the process
        return None
    for folder in (start, *start.parents):
        if folder == _PACKAGE or _PACKAGE in folder.parents:  # a wheel's analyzer/_data/patterns
            continue
        if _is_project_schema(folder / "patterns" / "schema.json") or _names_project(folder / "pyproject.toml"):
            return folder / "patterns"
    return None


def _is_project_schema(path: Path) -> bool:
    try:
        return _SCHEMA_MARK in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _names_project(pyproject: Path) -> bool:
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project")
    except (OSError, ValueError):  # missing, unreadable, or not TOML (TOMLDecodeError is a ValueError)
        return False
    return isinstance(project, dict) and project.get("name") == PROJECT
