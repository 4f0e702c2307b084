"""Safe YAML loading with source lines, shared by pattern files and postmortem front matter.

Plain data only: no object tags (SafeLoader rejects them), a size limit, and a map from
each value's path to the line it was written on, so validation errors name file:line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from analyzer.errors import PatternError

MAX_BYTES = 256 * 1024

# libyaml's parser when PyYAML was built with it (ten times faster), with the safe constructor
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Location = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)
_YAML_HELP = "quote strings that contain ': ' or start with a backquote, [, { or *; plain data only, no tags"


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise PatternError(f"file is {size} bytes, over the {max_bytes}-byte limit", path)
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PatternError(f"not UTF-8 text ({exc.reason})", path) from exc
    except OSError as exc:
        raise PatternError(f"cannot read: {exc.strerror}", path) from exc


def load_yaml(text: str, path: Path, first_line: int = 1) -> tuple[Any, dict[Location, int]]:
    """Parse `text`; return the data and a map from value paths to 1-based lines."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = (mark.line + first_line) if mark is not None else None
        raise PatternError(f"invalid YAML: {exc.problem}", path, line, help=_YAML_HELP) from exc
    except yaml.YAMLError as exc:
        raise PatternError(f"invalid YAML: {exc}", path, help=_YAML_HELP) from exc
    finally:
        loader.dispose()
    lines: dict[Location, int] = {}
    if node is not None:
        _index(node, (), lines, first_line)
    return data, lines


def _index(node: yaml.Node, at: Location, lines: dict[Location, int], first_line: int) -> None:
    lines[at] = node.start_mark.line + first_line
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key)
            lines[(*at, name)] = key.start_mark.line + first_line
            _index(value, (*at, name), lines, first_line)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, (*at, i), lines, first_line)


def line_of(lines: dict[Location, int], loc: Location) -> int | None:
    """The line of the deepest known prefix of `loc` (pydantic locations may go deeper)."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def validate(model: type[M], data: Any, lines: dict[Location, int], path: Path, help: str | None = None,
             whole_model: Location = ()) -> M:
    """`model` from parsed YAML; the first error as `path:line: field: reason (+N more)`.
    `whole_model` is the location to blame for errors of a model-level check."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"]) or whole_model
        field = ".".join(str(p) for p in loc) or "(file)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise PatternError(f"{field}: {err['msg']}{more}", path, line_of(lines, loc), help=help) from exc
