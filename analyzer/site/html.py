"""HTML helpers: escaping, the templates of `site/templates/`, relative links and slugs."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path
from string import Template

from analyzer.data import data_dir

GENERATOR = "triage site build"
_SLUG = re.compile(r"[^a-z0-9]+")


def esc(text: object) -> str:
    """Escape text for an element body or a double-quoted attribute."""
    return html.escape(str(text), quote=True)


def slug(text: str) -> str:
    """A file-name-safe form of a tag or heading: lowercase words joined by dashes."""
    return _SLUG.sub("-", text.lower()).strip("-") or "x"


def site_dir() -> Path:
    """`site/` of a checkout (or analyzer/_data/site in a wheel): templates and assets."""
    return data_dir("site")


@cache
def template(name: str) -> Template:
    return Template((site_dir() / "templates" / name).read_text(encoding="utf-8"))


def fill(name: str, **slots: str) -> str:
    """A template with every `${slot}` filled; a missing slot is a bug and raises KeyError."""
    return template(name).substitute(slots)


def root_of(page: str) -> str:
    """The relative prefix from a page (`patterns/x.html`) back to the site root (`../`)."""
    return "../" * page.count("/")


def link(href: str, text: str, cls: str = "") -> str:
    klass = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(href)}"{klass}>{esc(text)}</a>'


def chip(text: str, cls: str, href: str | None = None, title: str = "") -> str:
    tip = f' title="{esc(title)}"' if title else ""
    if href:
        return f'<a class="chip {esc(cls)}" href="{esc(href)}"{tip}>{esc(text)}</a>'
    return f'<span class="chip {esc(cls)}"{tip}>{esc(text)}</span>'


def external(url: str, text: str | None = None) -> str:
    """A link to an outside page, or plain text when `url` is not an http(s) address."""
    if re.match(r"https?://", url):
        return (f'<a href="{esc(url)}" rel="noopener noreferrer external" class="ext">'
                f"{esc(text or url)}</a>")
    return esc(text or url)
