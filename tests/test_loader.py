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
    from analyzer.library.commands import schema_json

    assert (ROOT / "patterns" / "schema.json").read_text() == schema_json(), \
        "run: triage patterns schema --out patterns/schema.json"


def test_every_pattern_file_names_the_schema() -> None:
    for path in (ROOT / "patterns").rglob("*.yaml"):
        if path.parent.name.startswith("_") or path.name == "known-false-positives.yaml":
            continue  # rule data and lint data, not pattern files
        assert path.read_text().startswith("# yaml-language-server: $schema=../schema.json"), path
