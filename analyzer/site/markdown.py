"""A small, safe Markdown renderer for the subset the knowledge base uses.

Blocks: ATX headings, paragraphs, bullet and numbered lists (nested by indentation),
fenced code (``` or ~~~, with a language), block quotes, horizontal rules. Inline: code
spans, links, bare http(s) addresses, bold. Everything else is text: every character of
the input is escaped, raw HTML included, and a link is kept only when its address is
http(s), mailto, an anchor or a relative path (never `javascript:` or `data:`).
Underscore and single-star emphasis are left alone on purpose: log text and globs
(`*nvidia*`, `gpu_memory_utilization`) are full of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from analyzer.site.html import esc, slug

CodeLinker = Callable[[str], str | None]  # code span text → href, for ids that have a page

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)[^\n]*$")
_HEADING = re.compile(r"^ {0,3}(?P<level>#{1,6})\s+(?P<text>.*?)(?:\s+#+)?\s*$")
_RULE = re.compile(r"^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_QUOTE = re.compile(r"^ {0,3}> ?(?P<text>.*)$")
_ITEM = re.compile(r"^(?P<indent> *)(?P<marker>[-*+]|(?P<num>\d{1,9})[.)])(?P<gap> +|$)(?P<text>.*)$")
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<code_text>.+?)(?P=ticks))"
    r"|(?P<link>\[(?P<link_text>[^\]\n]+)\]\((?P<href>[^()\s]+)\))"
    r"|(?P<bold>\*\*(?P<bold_text>(?:(?!\*\*).)+)\*\*)"
    r"|(?P<url>\bhttps?://[^\s<>()\"'`]*[^\s<>()\"'`.,;:!?\]])",
    re.S,
)
_SAFE_HREF = re.compile(r"^(?:https?://|mailto:|#|(?![a-zA-Z][a-zA-Z0-9+.-]*:)[\w./~-])")


def safe_href(href: str) -> bool:
    return bool(_SAFE_HREF.match(href))


def inline(text: str, linker: CodeLinker | None = None, copy: bool = False) -> str:
    """Inline Markdown to HTML. `linker` turns code spans that name a page into links;
    `copy` adds a copy button after each code span that looks like a command."""
    out: list[str] = []
    pos = 0
    for m in _INLINE.finditer(text):
        out.append(esc(text[pos:m.start()]))
        pos = m.end()
        if m["code"]:
            out.append(_code_span(m["code_text"].strip() or m["code_text"], linker, copy))
        elif m["link"]:
            label = inline(m["link_text"], linker)
            href = m["href"]
            out.append(f'<a href="{esc(href)}"{_ext(href)}>{label}</a>' if safe_href(href) else label)
        elif m["bold"]:
            out.append(f"<strong>{inline(m['bold_text'], linker, copy)}</strong>")
        else:
            url = m["url"]
            out.append(f'<a href="{esc(url)}"{_ext(url)}>{esc(url)}</a>')
    out.append(esc(text[pos:]))
    return "".join(out)


def _ext(href: str) -> str:
    return ' rel="noopener noreferrer external" class="ext"' if href.startswith("http") else ""


def looks_like_command(code: str) -> bool:
    """Worth a copy button: more than one word, an assignment with its value, or a path."""
    return len(code) > 3 and not code.endswith("=") and any(c in code for c in " =/")


def _code_span(code: str, linker: CodeLinker | None, copy: bool) -> str:
    href = linker(code) if linker else None
    if href:
        return f'<a href="{esc(href)}"><code>{esc(code)}</code></a>'
    if copy and looks_like_command(code):
        return (f'<code class="cmd">{esc(code)}</code><button type="button" class="copy" '
                f'data-copy="{esc(code)}" title="Copy to the clipboard" aria-label="Copy: {esc(code)}">copy</button>')
    return f"<code>{esc(code)}</code>"


def render(text: str, linker: CodeLinker | None = None, heading_offset: int = 0) -> str:
    """A Markdown document (or fragment) to HTML; headings go `heading_offset` levels down."""
    lines = text.replace("\r\n", "\n").replace("\t", "    ").split("\n")
    return "\n".join(_Blocks(linker, heading_offset).render(lines))


class _Blocks:
    def __init__(self, linker: CodeLinker | None, heading_offset: int) -> None:
        self.linker = linker
        self.offset = heading_offset

    def render(self, lines: list[str], tight: bool = False) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            for block in (self._fence, self._heading, self._rule, self._quote, self._list):
                done = block(lines, i, out)
                if done is not None:
                    i = done
                    break
            else:
                i = self._paragraph(lines, i, out, tight)
        return out

    def _fence(self, lines: list[str], i: int, out: list[str]) -> int | None:
        m = _FENCE.match(lines[i])
        if m is None:
            return None
        fence, indent, lang = m["fence"], len(m["indent"]), m["lang"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            line = lines[j]
            body.append(line[indent:] if not line[:indent].strip() else line.lstrip())
            j += 1
        cls = f' class="code lang-{esc(lang)}"' if lang else ' class="code"'
        label = f'<span class="lang">{esc(lang)}</span>' if lang else ""
        out.append(f"<pre{cls}>{label}<code>{esc(chr(10).join(body))}</code></pre>")
        return j + 1

    def _heading(self, lines: list[str], i: int, out: list[str]) -> int | None:
        m = _HEADING.match(lines[i])
        if m is None:
            return None
        level = min(len(m["level"]) + self.offset, 6)
        text = m["text"]
        out.append(f'<h{level} id="{esc(slug(text))}">{inline(text, self.linker)}</h{level}>')
        return i + 1

    def _rule(self, lines: list[str], i: int, out: list[str]) -> int | None:
        if not _RULE.match(lines[i]):
            return None
        out.append("<hr>")
        return i + 1

    def _quote(self, lines: list[str], i: int, out: list[str]) -> int | None:
        if not _QUOTE.match(lines[i]):
            return None
        body: list[str] = []
        j = i
        while j < len(lines) and lines[j].strip():
            m = _QUOTE.match(lines[j])
            if m is None:
                break
            body.append(m["text"])
            j += 1
        out.append("<blockquote>" + "\n".join(self.render(body)) + "</blockquote>")
        return j

    def _list(self, lines: list[str], i: int, out: list[str]) -> int | None:
        first = _ITEM.match(lines[i])
        if first is None or (not first["text"].strip() and i + 1 < len(lines) and not lines[i + 1].strip()):
            return None
        base = len(first["indent"])
        ordered = first["num"] is not None
        items: list[tuple[list[str], bool]] = []
        j = i
        loose = False
        while j < len(lines) and self._same_list(lines[j], base, ordered):
            m = _ITEM.match(lines[j])
            assert m is not None
            col = base + len(m["marker"]) + max(len(m["gap"]), 1)
            body = [m["text"]]
            j += 1
            blank = False
            while j < len(lines):
                line = lines[j]
                indent = len(line) - len(line.lstrip(" "))
                if not line.strip():
                    blank = True
                    body.append("")
                    j += 1
                    continue
                if indent >= col or (indent > base and _ITEM.match(line)):
                    body.append(line[min(indent, col):])
                elif not blank and not self._starts_block(line):
                    body.append(line.strip())  # a lazy continuation line
                else:
                    break
                blank = False
                j += 1
            trailing = bool(body) and not body[-1].strip()
            while body and not body[-1].strip():
                body.pop()
            loose = loose or (trailing and j < len(lines) and self._same_list(lines[j], base, ordered))
            items.append((body, any(not b.strip() for b in body)))
        tag = "ol" if ordered else "ul"
        start = int(first["num"]) if ordered and first["num"] else 1
        attr = f' start="{start}"' if ordered and start != 1 else ""
        rendered = ["<li>" + "\n".join(self.render(b, tight=not (loose or has_blank))) + "</li>"
                    for b, has_blank in items]
        out.append(f"<{tag}{attr}>" + "\n".join(rendered) + f"</{tag}>")
        return j

    @staticmethod
    def _same_list(line: str, base: int, ordered: bool) -> bool:
        m = _ITEM.match(line)
        return m is not None and len(m["indent"]) == base and (m["num"] is not None) == ordered

    @staticmethod
    def _starts_block(line: str) -> bool:
        return bool(_ITEM.match(line) or _FENCE.match(line) or _HEADING.match(line) or _QUOTE.match(line)
                    or _RULE.match(line))

    def _paragraph(self, lines: list[str], i: int, out: list[str], tight: bool) -> int:
        body = [lines[i].strip()]
        j = i + 1
        while j < len(lines) and lines[j].strip() and not self._starts_block(lines[j]):
            body.append(lines[j].strip())
            j += 1
        text = inline("\n".join(body), self.linker)
        out.append(text if tight else f"<p>{text}</p>")
        return j
