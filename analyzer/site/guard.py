"""The last gate before a page is written: no secret-looking string may be published.

It reuses the patterns of analyzer/redact.py (SECRETS). Token formats (Hugging Face,
OpenAI-style, GitHub, AWS keys, private keys) always count. Keyword assignments
(`password=…`, `token: …`) count unless the value is plainly not a secret: a placeholder
(`$HF_TOKEN`, `<token>`, `hf_xxxx…`, `[REDACTED]`, `...`), a literal (`token=True`), or prose: a colon, a space and
an ordinary lowercase word ("treat the token as a secret: environment file or…").
`password=letmein` still counts.
"""

from __future__ import annotations

import html
import re

from analyzer.errors import TriageError
from analyzer.redact import REDACTED, SECRETS

_PROSE = re.compile(r"^[a-z]+[.,;:]?$")
_LITERALS = {"True", "False", "None", "true", "false", "null"}  # `token=True` in an error message quoting code
_PLACEHOLDER = re.compile(r"[$<>{}]|\.\.\.|…|x{4,}|X{4,}|\*{3,}|" + re.escape(REDACTED))


class SecretInPage(TriageError):
    """A page would publish a secret-looking string."""


def _value(m: re.Match[str]) -> str:
    groups = m.groupdict()
    start = m.end("keep") if groups.get("keep") is not None else m.start()
    end = m.start("tail") if groups.get("tail") is not None else m.end()
    return m.string[start:end].strip("'\" ")


def _not_a_secret(m: re.Match[str], value: str) -> bool:
    if _PLACEHOLDER.search(value) or value.rstrip("`)]}") in _LITERALS:
        return True
    keep = m.groupdict().get("keep") or ""
    return keep.rstrip(" ").endswith(":") and keep.endswith(" ") and bool(_PROSE.match(value))


def find_secret(text: str) -> tuple[str, int, int] | None:
    """The first secret-looking string in `text`: (kind, line, column), or None. The string
    itself is never repeated: an error message may end up in a CI log."""
    plain = html.unescape(text)
    for name, pattern in SECRETS:
        for m in pattern.finditer(plain):
            if _not_a_secret(m, _value(m)):
                continue
            line_start = plain.rfind("\n", 0, m.start()) + 1
            return name, plain.count("\n", 0, m.start()) + 1, m.start() - line_start + 1
    return None


def check_page(page: str, text: str, source: str) -> None:
    """Raise SecretInPage naming the page, its source and the line, if `text` carries a secret."""
    found = find_secret(text)
    if found is None:
        return
    kind, line, column = found
    raise SecretInPage(f"refusing to publish {page}: it contains a secret-looking string ({kind}, "
                       f"line {line}, column {column} of the page), from {source}",
                       help="remove or redact it in the source (analyzer/redact.py does), then build again")
