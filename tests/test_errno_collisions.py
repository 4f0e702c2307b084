"""Every linux-errno entry's string, printed the ways programs print it, fires its own entry and
no other: a string that begins another one (ENODEV's "No such device" in ENXIO's "No such device
or address") must not take the longer one's lines."""

from __future__ import annotations

import regex

from analyzer.library.catalogue import Entry, expand
from analyzer.library.load import load_catalogue
from tests.conftest import ROOT

CATALOGUE = load_catalogue(ROOT / "patterns" / "catalogues" / "linux-errno.yaml")
EXPRESSIONS = {p.id: [regex.compile(e.regex, regex.MULTILINE) for e in p.match.expressions]
               for p in expand(CATALOGUE)}
GO_STRINGS = {"ESTALE": "stale NFS file handle"}  # Go's syscall table differs from glibc here


def _printed(entry: Entry) -> list[str]:
    s, n, go = entry.string or "", entry.number, GO_STRINGS.get(entry.name or "", (entry.string or "").lower())
    return [f"OSError: [Errno {n}] {s}: '/x'", f"{s} (os error {n})", f"connect() failed ({n}: {s})",
            f"read(): fd 3 failed with {s}", f"dial tcp 10.0.0.2:80: connect: {go}", f"Error: open /x/y: {go}",
            f"level=error msg=\"failed to start: {go}\"", f"failed to start: {go}"]


def _fired(line: str) -> set[str]:
    return {pid for pid, rxs in EXPRESSIONS.items() if any(r.search(line) for r in rxs)}


def test_each_printed_string_fires_only_its_own_entry() -> None:
    crossed = [f"{line!r} fires {sorted(other)}" for e in CATALOGUE.entries if e.string
               for line in _printed(e) if (other := _fired(line) - {CATALOGUE.pattern_id(e)})]
    assert crossed == []


def test_enodev_does_not_take_enxio_lines() -> None:
    for line in ("Error: open /dev/ttyUSB0: no such device or address",
                 "read(): fd 3 failed with No such device or address", "connect: no such device or address"):
        assert _fired(line) == {"errno-enxio"}, line
    assert _fired("failed to set up interface ib0: no such device") == {"errno-enodev"}
