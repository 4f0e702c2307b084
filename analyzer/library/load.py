"""Load and validate pattern files into a Library, collecting every error at once."""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import VERSION as PYDANTIC_VERSION

from analyzer import choices
from analyzer.cache import cache_dir, prune, read_cached, write_atomic
from analyzer.errors import PatternError, PatternErrors
from analyzer.library import catalogue, schema
from analyzer.library.catalogue import Catalogue, expand
from analyzer.library.ids import is_catalogue, pattern_entries
from analyzer.library.schema import Pattern
from analyzer.library.yamlfile import line_of, load_yaml, read_text, validate

RACY_S = 2.0  # a file written this close to the cache entry may change without its stat changing

SCHEMA_LINE = "# yaml-language-server: $schema=../schema.json"


@dataclass(frozen=True, slots=True)
class PatternFile:
    pattern: Pattern
    path: Path
    catalogue: str | None = None  # the catalogue it was expanded from (path is the catalogue's file)

    @property
    def fixture(self) -> Path:
        return self.path.with_suffix(".log")


@dataclass(frozen=True, slots=True)
class Library:
    files: tuple[PatternFile, ...]

    @property
    def patterns(self) -> list[Pattern]:
        return [f.pattern for f in self.files]

    def get(self, pattern_id: str) -> PatternFile:
        for f in self.files:
            if f.pattern.id == pattern_id:
                return f
        raise KeyError(pattern_id)


def _pattern_entries(roots: Iterable[Path]) -> list[tuple[Path, os.stat_result]]:
    entries: list[tuple[Path, os.stat_result]] = []
    for root in roots:
        if not root.is_dir():
            raise PatternError("pattern folder does not exist", root)
        entries.extend(pattern_entries(root))
    return entries


def pattern_paths(roots: Iterable[Path]) -> list[Path]:
    return [path for path, _st in _pattern_entries(roots)]


def load_catalogue(path: Path, text: str | None = None) -> Catalogue:
    text = read_text(path) if text is None else text
    data, lines = load_yaml(text, path)
    cat = validate(Catalogue, data, lines, path, help="see patterns/README.md, Catalogues")
    if cat.catalogue != path.stem:
        raise PatternError(f"catalogue {cat.catalogue!r} differs from the file name {path.stem!r}",
                           path, line_of(lines, ("catalogue",)))
    return cat


def _expand(path: Path, text: str, covers: list[tuple[Path, str, str]]) -> list[Pattern]:
    """A catalogue's patterns; its entries left to hand-written patterns go to `covers`
    (path, entry key, pattern id), checked once every pattern is known."""
    cat = load_catalogue(path, text)
    covers += [(path, e.key, e.covered_by) for e in cat.entries if e.covered_by is not None]
    try:
        return expand(cat)
    except ValueError as exc:
        raise PatternError(str(exc).split("\n")[0], path, None) from exc


def load_pattern(path: Path, text: str | None = None) -> Pattern:
    text = read_text(path) if text is None else text
    data, lines = load_yaml(text, path)
    if not isinstance(data, dict):
        raise PatternError("a pattern file holds one mapping (title:, id:, ...)", path, 1)
    # whole-model checks (placeholders) are about the texts: blame the description
    pattern = validate(Pattern, data, lines, path, help="see patterns/README.md for every field",
                       whole_model=("description",))
    _check_placement(pattern, path, lines)
    return pattern


def _check_placement(pattern: Pattern, path: Path, lines: dict[tuple[str | int, ...], int]) -> None:
    if pattern.id != path.stem:
        raise PatternError(f"id {pattern.id!r} differs from the file name {path.stem!r}",
                           path, line_of(lines, ("id",)), help=f"rename the file to {pattern.id}.yaml")
    if pattern.area != path.parent.name:
        raise PatternError(f"area {pattern.area!r} differs from the folder {path.parent.name!r}",
                           path, line_of(lines, ("area",)),
                           help=f"move the file to patterns/{pattern.area}/")


def load_library(roots: Sequence[Path]) -> Library:
    """Load every pattern under `roots`; raise PatternErrors listing all problems.

    A library seen before is read from the cache, keyed by every file's bytes: parsing and
    validating YAML with line marks costs about 0.2 s, unpickling the validated models 60 ms.
    When no file changed since (same size, inode and modification time in nanoseconds, as
    git's index tells), even reading and hashing the files is skipped."""
    entries = _pattern_entries(roots)
    paths = [path for path, _st in entries]
    code = _code_hash()
    stats = _stat_key(code.copy(), entries)
    known = read_cached(stats.entry)
    if known is not None and (library := _from_cache(_library_path(known.decode(errors="replace")), paths)):
        return library
    errors: list[PatternError] = []
    texts: list[tuple[Path, str]] = []
    for path in paths:
        try:
            texts.append((path, read_text(path)))
        except PatternError as exc:
            errors.append(exc)
    key = _content_key(code, texts)
    cached = _library_path(key)
    if not errors and (library := _from_cache(cached, paths)) is not None:
        _remember(stats, key)
        return library
    library = _parse(texts, errors)
    if write_atomic(cached, pickle.dumps(library.files, protocol=pickle.HIGHEST_PROTOCOL)):
        prune(cached.parent, keep=32)
        _remember(stats, key)
    return library


def _parse(texts: Sequence[tuple[Path, str]], errors: list[PatternError]) -> Library:
    files: list[PatternFile] = []
    seen: dict[str, Path] = {}
    covers: list[tuple[Path, str, str]] = []
    for path, text in texts:
        try:
            patterns = _expand(path, text, covers) if is_catalogue(path) else [load_pattern(path, text)]
        except PatternError as exc:
            errors.append(exc)
            continue
        for pattern in patterns:
            if pattern.id in seen:
                errors.append(PatternError(f"id {pattern.id!r} is already used by {seen[pattern.id]}", path, 2))
                continue
            seen[pattern.id] = path
            files.append(PatternFile(pattern, path, path.stem if is_catalogue(path) else None))
    errors += [PatternError(f"entry {key!r}: covered_by names an unknown pattern {pid!r}", path)
               for path, key, pid in covers if pid not in seen]
    errors += [PatternError(_relation_error(key, rid, f.pattern.id), f.path, _relation_line(f.path, key, i))
               for f in files for key in ("refines", "explains")
               for i, rid in enumerate(getattr(f.pattern, key)) if rid not in seen or rid == f.pattern.id]
    if errors:
        raise PatternErrors(errors)
    return Library(tuple(files))


def _relation_error(key: str, rid: str, own: str) -> str:
    if rid == own:
        other = "the more general pattern it refines" if key == "refines" else "the pattern of its consequence"
        return f"{key} names the pattern itself ({rid!r}): name {other}"
    return f"{key} names an unknown pattern {rid!r}"


def _relation_line(path: Path, key: str, index: int) -> int | None:
    """The line of a `refines:`/`explains:` item, from the file's line marks (parsed again only for the error)."""
    _data, lines = load_yaml(read_text(path), path)
    return line_of(lines, (key, index))


def _code_hash() -> hashlib._Hash:
    """The code the cached models depend on: the model modules, pydantic and Python."""
    h = hashlib.sha256(f"{sys.version}\0{PYDANTIC_VERSION}".encode())
    for module in (schema, catalogue, choices):
        h.update(Path(module.__file__ or "").read_bytes())
    return h


def _content_key(code: hashlib._Hash, texts: Sequence[tuple[Path, str]]) -> str:
    """Keyed by every file's path and bytes, and by the code of the models they validate against."""
    for path, text in texts:
        code.update(f"\0{path.resolve()}\0{text}".encode())
    return code.hexdigest()[:32]


def _library_path(key: str) -> Path:
    return cache_dir() / "library" / f"{key}.pickle"


@dataclass(frozen=True, slots=True)
class _Stats:
    entry: Path  # where the content key of the files in exactly this state is remembered
    newest: float  # the latest modification time among them


def _stat_key(code: hashlib._Hash, entries: Sequence[tuple[Path, os.stat_result]]) -> _Stats:
    """The files' state (path, size, inode, modification time in ns, as the folder scan saw
    it) keyed with the model code."""
    newest = 0.0
    for path, st in entries:
        code.update(f"\0{os.path.abspath(path)}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}".encode())
        newest = max(newest, st.st_mtime)
    return _Stats(cache_dir() / "library-stat" / code.hexdigest()[:32], newest)


def _remember(stats: _Stats, key: str) -> None:
    """Remember the content key under the files' stat key, unless a file was modified so
    recently that a further edit within the clock's resolution could keep its stat the same
    (git's "racy" files): those are hashed again next time."""
    if time.time() - stats.newest > RACY_S and write_atomic(stats.entry, key.encode()):
        prune(stats.entry.parent, keep=32)


def _from_cache(cached: Path, paths: Sequence[Path]) -> Library | None:
    """The pickled validated models (written by this user, keyed by the model code), or None
    when missing, damaged or of other files: the library is then parsed again."""
    data = read_cached(cached)
    if data is None:
        return None
    try:
        files = pickle.loads(data)
    except Exception:  # a damaged pickle raises nearly anything; it only costs a parse
        return None
    if not (isinstance(files, tuple) and all(isinstance(f, PatternFile) for f in files)):
        return None
    if {f.path for f in files} != set(paths):
        return None
    return Library(files)
