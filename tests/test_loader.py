"""Pattern files are validated with file:line errors that say what to add."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import PatternError, PatternErrors
from analyzer.library.load import load_library, load_pattern
from tests.conftest import ROOT

GOOD = (ROOT / "patterns" / "host" / "host-oom-killed-service.yaml").read_text()


def write(tmp_path: Path, text: str, area: str = "host", stem: str = "host-oom-killed-service") -> Path:
    folder = tmp_path / area
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.yaml"
    path.write_text(text)
    return path


def test_the_real_library_loads() -> None:
    lib = load_library([ROOT / "patterns"])
    assert len(lib.files) >= 3


def test_unknown_field_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("severity: high", "severity: high\nseverty: low"))
    with pytest.raises(PatternError) as err:
        load_pattern(path)
    assert err.value.line == GOOD.split("\n").index("severity: high") + 2
    assert "severty" in err.value.message and "Extra inputs" in err.value.message


def test_bad_value_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("severity: high", "severity: catastrophic"))
    with pytest.raises(PatternError) as err:
        load_pattern(path)
    assert err.value.line == GOOD.split("\n").index("severity: high") + 1
    assert str(err.value).startswith(f"{path}:{err.value.line}: severity:")


def test_id_must_equal_file_stem_and_area_the_folder(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="rename the file"):
        load_pattern(write(tmp_path, GOOD, stem="other-name"))
    with pytest.raises(PatternError, match="move the file"):
        load_pattern(write(tmp_path, GOOD, area="gpu"))


def test_yaml_object_tags_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("postmortems: []", "postmortems: !!python/object/apply:os.system ['true']"))
    with pytest.raises(PatternError, match="invalid YAML"):
        load_pattern(path)


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "#" * 300_000)
    with pytest.raises(PatternError, match="over the"):
        load_pattern(path)


def test_all_errors_are_collected(tmp_path: Path) -> None:
    write(tmp_path, GOOD.replace("severity: high", "severity: nope"))
    write(tmp_path, "title: [unclosed", area="gpu", stem="broken")
    with pytest.raises(PatternErrors) as err:
        load_library([tmp_path])
    assert len(err.value.errors) == 2


def test_match_needs_exactly_one_of_any_or_all(tmp_path: Path) -> None:
    both = GOOD.replace("match:\n  any:", "match:\n  all:\n    - regex: 'abc'\n  any:")
    with pytest.raises(PatternError, match="exactly one of"):
        load_pattern(write(tmp_path, both))


def test_schema_json_is_current() -> None:
    from analyzer.commands.patterns import schema_json

    assert (ROOT / "patterns" / "schema.json").read_text() == schema_json(), \
        "run: triage patterns schema --out patterns/schema.json"
    assert (ROOT / "patterns" / "catalogue.schema.json").read_text() == schema_json(catalogue=True), \
        "run: triage patterns schema --catalogue --out patterns/catalogue.schema.json"


def test_every_pattern_file_names_the_schema() -> None:
    for path in (ROOT / "patterns").rglob("*.yaml"):
        if path.parent.name.startswith("_") or path.name == "known-false-positives.yaml":
            continue  # rule data and lint data, not pattern files
        schema = "catalogue.schema.json" if path.parent.name == "catalogues" else "schema.json"
        assert path.read_text().startswith(f"# yaml-language-server: $schema=../{schema}"), path


def _loads_without(monkeypatch: pytest.MonkeyPatch, name: str, root: Path, expected: object) -> None:
    """The library loads to `expected` while the loader's `name` refuses to be called."""
    from analyzer.library import load as load_module

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError(f"{name} called again")

    with monkeypatch.context() as m:
        m.setattr(load_module, name, refuse)
        assert load_library([root]).files == expected


def _edit_a_title(root: Path) -> Path:
    """Edit one pattern file; the next load must show the edit."""
    edited = root / "host" / "host-oom-killed-service.yaml"
    edited.write_text(edited.read_text().replace("title: ", "title: Edited ", 1))
    assert load_library([root]).get("host-oom-killed-service").pattern.title.startswith("Edited ")
    return edited


def test_a_library_seen_before_is_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same files, same bytes: the validated models come from the cache, no YAML is parsed;
    an edited file, or a damaged cache entry, is parsed again."""
    import shutil

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "patterns"
    shutil.copytree(ROOT / "patterns", root)  # whole: patterns name others (refines:, covered_by:)
    first = load_library([root])
    (entry,) = (tmp_path / "cache" / "triage" / "library").iterdir()
    _loads_without(monkeypatch, "load_yaml", root, first.files)
    edited = _edit_a_title(root)
    entry.write_bytes(b"[{\"title\": 1}]")  # damaged, or from an older schema: parsed again, same result
    edited.write_text(edited.read_text().replace("title: Edited ", "title: ", 1))
    assert load_library([root]).files == first.files


def test_a_run_from_the_cache_unpickles_only_the_patterns_it_finds(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run needs every pattern's head (triggers, switches, conditions); the whole model
    only of the few its triggers find. A stage that reads all models would undo that."""
    from analyzer.run import load
    from analyzer.triage import analyze

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    load()  # parses the library and fills the cache
    library = load()
    assert not any(cp.file.loaded for cp in library.patterns.values())
    report = analyze([str(ROOT / "examples" / "founding-incident.log")], library, knowledge=False)
    loaded = {cp.id for cp in library.patterns.values() if cp.file.loaded}
    assert {f.id for f in report.findings if f.kind == "pattern"} <= loaded
    assert 0 < len(loaded) <= 40 < len(library.patterns)


def test_unchanged_files_are_not_even_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files whose size, inode and modification time are as when the library was cached are
    not read again; a file modified since is; a file modified within the clock's racy window
    is never trusted by its stat alone."""
    import os
    import shutil
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "patterns"
    shutil.copytree(ROOT / "patterns", root, copy_function=shutil.copy)
    stat_dir = tmp_path / "cache" / "triage" / "library-stat"
    # as if just written, however long the copy and the first load take on a busy machine
    just_now = time.time() + 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (just_now, just_now))
    first = load_library([root])
    assert not stat_dir.exists()  # modified within the racy window: hashed every time
    an_hour_ago = os.stat(root).st_mtime - 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    assert load_library([root]).files == first.files
    assert len(list(stat_dir.iterdir())) == 1
    _loads_without(monkeypatch, "read_text", root, first.files)
    _edit_a_title(root)
