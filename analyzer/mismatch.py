"""Python errors whose shape says that a package's code used an interface that is not there.

CPython raises these at the point of use, in the caller's frame: a `TypeError` when a call's
arguments do not fit the callee's signature (`takes N positional arguments but M were given`,
`got an unexpected keyword argument`, `missing N required positional argument`, `takes no
arguments`), an `AttributeError` when a module lacks the name asked for, an `ImportError` when
`from X import name` finds no such name, a `ModuleNotFoundError` for a submodule of an installed
package. When the innermost frame is in a package's code (site-packages, or a known project's
source tree), that package's released code is the caller, and released code rarely gets its own
interfaces wrong: the usual reason is that it was written against another release of the package
that provides the interface (one was upgraded without the other). This module reads the shape
and the parties; `unrecognised` words the finding.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from analyzer.models import Frame

# the top-level package of a file installed by pip (Windows paths too)
INSTALLED_PACKAGE = re.compile(r"(?:site-packages|dist-packages)[/\\]+(?P<pkg>[A-Za-z_]\w*)[/\\]")
_SEGMENT = re.compile(r"[/\\]")
_CALL = re.compile(
    r"^TypeError: (?P<callee>[A-Za-z_][\w.]*)\(\) (?P<what>"
    r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given"
    r"|takes no arguments \(\d+ given\)"
    r"|got an unexpected keyword argument '\w+'"
    r"|missing \d+ required (?:positional|keyword-only) arguments?: .+"
    r"|got multiple values for argument '\w+')")
_MODULE_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_MODULE_ATTRIBUTE = re.compile(
    r"^AttributeError: module '(?P<module>[A-Za-z_][\w.]*)' has no attribute '(?P<name>\w+)'")
_IMPORT = re.compile(r"^ImportError: cannot import name '(?P<name>\w+)' from '(?P<module>[A-Za-z_][\w.]*)'")
# a submodule the package does not have: Python names the first part of a dotted import it could not
# find, so 'vllm.model_executor.input_metadata' means vllm and vllm.model_executor were found (a
# package that is not installed at all is named alone: "No module named 'vllm'")
_SUBMODULE = re.compile(r"^(?:ModuleNotFoundError|ImportError): No module named '(?P<module>[A-Za-z_]\w*(?:\.\w+)+)'")
# a name looked up in a module that lacks it, and how it is said
_LOOKUPS = ((_MODULE_ATTRIBUTE, "asks module {module} for {name}, which it does not have"),
            (_IMPORT, "imports {name} from {module}, which does not define it"))
# Not read: "'X' object has no attribute 'y'". Nothing in it says whose class X is, and in a
# package's own code it is as often that package's bug (an engine that dropped an attribute its
# own entry point still reads) as drift against another package.


@dataclass(frozen=True, slots=True)
class Mismatch:
    caller: str | None  # the installed package whose code made the call or the lookup (None: no frame says)
    what: str  # what it asked for that is not there, in words
    provider: str | None  # the package that provides the interface, when the message names it


def package_of(path: str, known: Collection[str]) -> str | None:
    """The package a source file belongs to: the one pip installed it under, else the first
    folder of its path named as a `known` package with a subpackage below it (a source checkout:
    /workspace/megatron/megatron/core/...; a script beside the package, /app/vllm/serve.py, is not it)."""
    if m := INSTALLED_PACKAGE.search(path):
        return m["pkg"]
    return next((part for part in _SEGMENT.split(path)[:-2] if part in known), None)


def read_mismatch(text: str, frame: Frame | None, known: Collection[str]) -> Mismatch | None:
    """The interface mismatch `text` describes, when it was raised in a package's code (not in the
    user's own script: then nothing says whose code is out of date). Without a frame (a paste of the
    last line alone), a name that a `known` project's module lacks is read the same way with the
    asking package unknown: the user's own code seldom imports a library's private names."""
    if frame is None:
        return _frameless(text, known)
    caller = package_of(frame.file, known)
    if caller is None:
        return None
    if c := _CALL.match(text):
        callee = c["callee"]
        head, dot, _ = callee.partition(".")
        # a module's function (torch.is_autocast_enabled), not a class's method (Linear.__init__)
        top = head if dot and _MODULE_NAME.fullmatch(head) else None
        if top == caller:
            return None  # its own function: its bug, not drift
        return Mismatch(caller, f"calls {callee}() with arguments it does not accept ({c['what']})",
                        _other(top, caller))
    for shape, what in (*_LOOKUPS, (_SUBMODULE, "imports module {module}, which the installed package does not have")):
        if (a := shape.match(text)) and (provider := _other(a["module"].split(".")[0], caller)):
            return Mismatch(caller, what.format(**a.groupdict()), provider)
    return None  # a package's lookup in itself is its own bug or a partial install, not drift


def _frameless(text: str, known: Collection[str]) -> Mismatch | None:
    for shape, what in _LOOKUPS:
        if (a := shape.match(text)) and (top := a["module"].split(".")[0]) in known:
            return Mismatch(None, what.format(**a.groupdict()), top)
    return None


def _other(package: str | None, caller: str) -> str | None:
    return package if package and package != caller else None
