"""Where the bundled data lives: beside the package in a wheel, at the repo top in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def data_dir(name: str) -> Path:
    """`patterns` or `kb`: analyzer/_data/NAME when installed from a wheel, else REPO/NAME."""
    bundled = _PACKAGE / "_data" / name
    return bundled if bundled.is_dir() else _REPO / name


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
