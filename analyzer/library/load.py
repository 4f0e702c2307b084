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
from typing import NamedTuple

from pydantic import VERSION as PYDANTIC_VERSION

from analyzer import choices, scan
from analyzer.cache import cache_dir, prune, read_cached, write_atomic
from analyzer.errors import PatternError, PatternErrors
from analyzer.library import catalogue, schema
from analyzer.library.catalogue import Catalogue, expand
from analyzer.library.ids import is_catalogue, pattern_entries
from analyzer.library.schema import Expression, Pattern, Role
from analyzer.library.yamlfile import line_of, load_yaml, read_text, validate
from analyzer.scan import hyperscan_source

RACY_S = 2.0  # a file written this close to the cache entry may change without its stat changing

SCHEMA_LINE = "# yaml-language-server: $schema=../schema.json"


def trigger_of(expr: Expression) -> str:
    """An expression's phase-1 source: its `trigger:`, or its regex made fit for phase 1."""
    return expr.trigger if expr.trigger is not None else hyperscan_source(expr.regex)


class PatternHead(NamedTuple):
    """What every run needs of every pattern, in plain values: phase 1's triggers, the
    matcher's switches, the fact conditions the rule data is checked against, the role and
    timeline mark. The rest of a pattern (texts, fix steps, sources) is unpickled only for the
    few patterns a run finds: unpickling 3,000 validated models cost a third of a start."""

    id: str
    role: str  # a Role's value
    marks: str | None  # a Mark's value
    scope: str  # a Scope's value
    require_all: bool  # `all:` rather than `any:`
    in_container: bool
    ignorecase: bool
    keeps_message: bool  # the matched line's message is still an unknown error (MatchSpec.keeps_message)
    regexes: tuple[str, ...]
    triggers: tuple[str, ...]  # each expression's phase-1 source (its `trigger:` or the regex made fit)
    conditions: tuple[str, ...]

    @classmethod
    def of(cls, p: Pattern) -> PatternHead:
        m = p.match
        return cls(p.id, p.role.value, p.marks.value if p.marks is not None else None, m.scope.value,
                   bool(m.all), m.in_container, m.ignorecase, m.keeps_message, tuple(e.regex for e in m.expressions),
                   tuple(trigger_of(e) for e in m.expressions),
                   tuple(p.conditions()))

    @property
    def is_signal(self) -> bool:
        return self.role == Role.signal.value


class PatternFile:
    """A pattern and the file it comes from. A pattern read from the cache stays pickled
    until `pattern` is first asked for; `head` is always at hand."""

    __slots__ = ("_blob", "_path", "_pattern", "catalogue", "head")

    def __init__(self, pattern: Pattern, path: Path, catalogue: str | None = None) -> None:
        self._pattern: Pattern | None = pattern
        self._blob: bytes | None = None
        self._path: Path | str = path
        self.catalogue = catalogue  # the catalogue it was expanded from (path is the catalogue's file)
        self.head = PatternHead.of(pattern)

    @classmethod
    def pickled(cls, head: PatternHead, blob: bytes, path: str, catalogue: str | None) -> PatternFile:
        pf = cls.__new__(cls)
        pf._pattern, pf._blob, pf._path, pf.catalogue, pf.head = None, blob, path, catalogue, head
        return pf

    @property
    def pattern(self) -> Pattern:
        if self._pattern is None:
            assert self._blob is not None
            self._pattern = pickle.loads(self._blob)
            self._blob = None
        return self._pattern

    @property
    def loaded(self) -> bool:
        """Whether the validated model is unpickled (or was parsed) yet."""
        return self._pattern is not None

    @property
    def path(self) -> Path:
        if isinstance(self._path, str):
            self._path = Path(self._path)
        return self._path

    @property
    def fixture(self) -> Path:
        return self.path.with_suffix(".log")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PatternFile):
            return NotImplemented
        return (os.fspath(self._path), self.catalogue, self.pattern) == \
            (os.fspath(other._path), other.catalogue, other.pattern)

    __hash__ = None  # type: ignore[assignment]  # as the pydantic model it holds

    def __repr__(self) -> str:
        return f"PatternFile({self.head.id!r}, {os.fspath(self._path)!r})"

    def row(self) -> tuple[PatternHead, bytes, str, str | None]:
        """What the cache keeps of it."""
        blob = self._blob if self._blob is not None else pickle.dumps(self.pattern, protocol=pickle.HIGHEST_PROTOCOL)
        return self.head, blob, os.fspath(self._path), self.catalogue


@dataclass(frozen=True, slots=True)
class Library:
    files: tuple[PatternFile, ...]
    key: str | None = None  # the content key of its files and model code, when known

    @property
    def patterns(self) -> list[Pattern]:
        return [f.pattern for f in self.files]

    def get(self, pattern_id: str) -> PatternFile:
        for f in self.files:
            if f.head.id == pattern_id:
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


def _expand(path: Path, text: str, covers: list[tuple[Path, str, str]],
            lent: dict[str, list[Expression]]) -> list[Pattern]:
    """A catalogue's patterns; its entries left to hand-written patterns go to `covers`
    (path, entry key, pattern id), checked once every pattern is known, and their forms to `lent`."""
    cat = load_catalogue(path, text)
    covers += [(path, e.key, e.covered_by) for e in cat.entries if e.covered_by is not None]
    for pid, exprs in catalogue.lent(cat).items():
        lent.setdefault(pid, []).extend(exprs)
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
    if known is not None and (library := _from_cache(known.decode(errors="replace"), paths)):
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
    if not errors and (library := _from_cache(key, paths)) is not None:
        _remember(stats, key)
        return library
    library = Library(_parse(texts, errors).files, key)
    rows = [pf.row() for pf in library.files]
    if write_atomic(cached, pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)):
        prune(cached.parent, keep=32)
        _remember(stats, key)
    return library


def _parse(texts: Sequence[tuple[Path, str]], errors: list[PatternError]) -> Library:
    files: list[PatternFile] = []
    seen: dict[str, Path] = {}
    covers: list[tuple[Path, str, str]] = []
    lent: dict[str, list[Expression]] = {}
    for path, text in texts:
        try:
            patterns = _expand(path, text, covers, lent) if is_catalogue(path) else [load_pattern(path, text)]
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
    needs_all = {f.pattern.id for f in files if f.pattern.match.all}
    errors += [PatternError(f"entry {key!r}: covered_by names {pid!r}, which needs all of its expressions "
                            "(`all:`); the entry's forms cannot join it: name a pattern with `any:`", path)
               for path, key, pid in covers if pid in needs_all]
    files = [_borrow(f, lent[f.pattern.id]) if f.pattern.id in lent else f for f in files]
    errors += [PatternError(_relation_error(key, rid, f.pattern.id), f.path, _relation_line(f.path, key, i),
                            help=f"name a pattern of the library (`triage patterns list`) or drop it from `{key}:`")
               for f in files for key in ("refines", "explains")
               for i, rid in enumerate(getattr(f.pattern, key)) if rid not in seen or rid == f.pattern.id]
    if errors:
        raise PatternErrors(errors)
    return Library(tuple(files))


def _borrow(f: PatternFile, exprs: Sequence[Expression]) -> PatternFile:
    """A hand-written pattern with the forms of the catalogue entries left to it, after its own."""
    match = f.pattern.match
    own = {e.regex for e in match.any}
    extra = [e for e in dict((e.regex, e) for e in exprs).values() if e.regex not in own]
    if not match.any or not extra:
        return f
    pattern = f.pattern.model_copy(update={"match": match.model_copy(update={"any": [*match.any, *extra]})})
    return PatternFile(pattern, f.path, f.catalogue)


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
    """The code the cached models depend on: the model modules, this one (the heads), the
    triggers' translation (scan), pydantic and Python."""
    h = hashlib.sha256(f"{sys.version}\0{PYDANTIC_VERSION}".encode())
    for module in (schema, catalogue, choices, sys.modules[__name__], scan):
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


def _from_cache(key: str, paths: Sequence[Path]) -> Library | None:
    """The pickled validated models (written by this user, keyed by the model code), or None
    when missing, damaged or of other files: the library is then parsed again. Each pattern
    stays pickled until it is asked for (PatternFile)."""
    data = read_cached(_library_path(key))
    if data is None:
        return None
    try:
        rows = pickle.loads(data)
        files = tuple(PatternFile.pickled(head, blob, path, cat) for head, blob, path, cat in rows)
    except Exception:  # a damaged pickle raises nearly anything; it only costs a parse
        return None
    if not all(isinstance(pf.head, PatternHead) for pf in files) \
            or {pf._path for pf in files} != {os.fspath(p) for p in paths}:
        return None
    return Library(files, key)
