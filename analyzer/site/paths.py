"""Where each page lives in the build, relative to its root (links are relative everywhere,
so the site works from file:// and from any folder a server puts it in)."""

from __future__ import annotations

from analyzer.site.html import slug

INDEX = "index.html"
PATTERNS = "patterns/index.html"
POSTMORTEMS = "postmortems/index.html"
AREAS = "areas/index.html"
TAGS = "tags/index.html"
ASSETS = "assets"


def _leaf(name: str) -> str:
    """A page's file name: a tag, area or id called "index" must not take its folder's listing."""
    return f"{name}_.html" if name == "index" else f"{name}.html"


def pattern(pattern_id: str) -> str:
    return f"patterns/{_leaf(pattern_id)}"


def postmortem(postmortem_id: str) -> str:
    return f"postmortems/{_leaf(postmortem_id)}"


def area(name: str) -> str:
    return f"areas/{_leaf(slug(name))}"


def tag(tag_slug: str) -> str:
    return f"tags/{_leaf(tag_slug)}"


def severity(level: str) -> str:
    return f"severity/{level}.html"
