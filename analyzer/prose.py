"""How text is shortened for a reader: at the end of a sentence that fits, else at a word
boundary with an ellipsis, never mid-word; a long log line folded to its start and end; and a
card's text without its title repeated."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """`text` in one line, cut to `limit` characters at the last sentence end that fits (when
    it keeps at least half), else at the last space, with "…"."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if end >= limit // 2:
        return head[:end + 1]
    space = head[:limit - 1].rfind(" ")
    return (head[:space] if space > 0 else head[:limit - 1]).rstrip(",;: ") + "…"


def without_title(text: str, title: str) -> str:
    """A card's body that does not open by repeating its own title."""
    flat, heading = " ".join(text.split()), " ".join(title.split()).rstrip(".")
    if heading and flat.lower().startswith(heading.lower()):
        return flat[len(heading):].lstrip(" .:-—").strip()
    return flat


FOLD_AT = 700  # a longer evidence line is folded on a terminal (JSON and Markdown keep it whole)


def fold(text: str) -> str:
    """A long line for the terminal: its start and its end, which in an allocator or a
    compiler message often holds the clue (private pools, fragmentation, the failing flag)."""
    if len(text) <= FOLD_AT:
        return text
    return f"{text[:FOLD_AT // 2 - 40]} … {text[-(FOLD_AT // 2 + 40):]}"
