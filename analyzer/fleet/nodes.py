"""Which logs belong to which node: a folder with one subfolder or file per node, several
files, globs, compressed files, binary journal folders, or nodes' own JSON reports."""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import InputError

_COMPRESSED = (".gz", ".zst")
_LOG_SUFFIXES = (".log", ".json", ".txt", ".journal", ".export")


@dataclass(frozen=True)
class NodeInput:
    """One node's logs as the driver names them; its host name may replace the name later."""

    name: str
    files: tuple[str, ...] = ()
    journal_dirs: tuple[str, ...] = ()
    report: str | None = None  # a `triage --format json` report written on the node


@dataclass
class _Building:
    files: list[str] = field(default_factory=list)
    journal_dirs: list[str] = field(default_factory=list)
    report: str | None = None


def node_name(path: Path) -> str:
    """`node17.log.gz` → `node17`; a folder keeps its name."""
    name = path.name
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    for suffix in _LOG_SUFFIXES:
        name = name.removesuffix(suffix)
    return name or path.name


def is_report(path: Path) -> bool:
    """A JSON report written by `triage --format json` (read instead of analysed again)."""
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and (b'"tool": "triage"' in head or b'"tool":"triage"' in head)


def is_journal_dir(path: Path) -> bool:
    return any(path.glob("*.journal")) or any(path.glob("*/*.journal"))


def discover(args: list[str]) -> list[NodeInput]:
    """The nodes named by the arguments, in name order; files of one node are read together."""
    nodes: dict[str, _Building] = {}
    for arg in args:
        paths = sorted(Path(p) for p in glob.glob(arg)) if any(c in arg for c in "*?[") else [Path(arg)]
        if not paths:
            raise InputError("matches no file", arg)
        for path in paths:
            if not path.exists():
                raise InputError("no such file or folder", path)
            if path.is_dir() and not is_journal_dir(path):
                children = [c for c in sorted(path.iterdir()) if not c.name.startswith(".")]
                if not children:
                    raise InputError("an empty folder: give one file or folder per node", path)
                for child in children:
                    _add(nodes, child)
            else:
                _add(nodes, path)
    return [NodeInput(name, tuple(b.files), tuple(b.journal_dirs), b.report) for name, b in sorted(nodes.items())]


def _add(nodes: dict[str, _Building], path: Path) -> None:
    node = nodes.setdefault(node_name(path), _Building())
    if path.is_dir():
        if is_journal_dir(path):
            node.journal_dirs.append(str(path))
        else:
            node.files += [str(f) for f in sorted(path.rglob("*")) if f.is_file() and not f.name.startswith(".")]
    elif is_report(path):
        if node.report is not None or node.files:
            raise InputError(f"node {node_name(path)!r} has a report and other inputs; give one of them", path)
        node.report = str(path)
    else:
        node.files.append(str(path))
