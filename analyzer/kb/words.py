"""The words of a passage as lexical search sees them: lower-case tokens, lightly stemmed.

Shared by the index (which stores each passage's and each title's words, so a search does not tokenise the
whole knowledge base again) and by the queries.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9_][a-z0-9_.+-]*")
_SUFFIX = re.compile(r"(?:ing|ed|es|s)$")


def stem(word: str) -> str:
    """A light suffix stemmer: 'times', 'timed' and 'hangs' meet 'time' and 'hang'."""
    return _SUFFIX.sub("", word) if len(word) > 4 and word.isalpha() else word


def tokens(text: str) -> list[str]:
    return [stem(t.strip(".-+")) for t in _WORD.findall(text.lower()) if len(t.strip(".-+")) > 1]
