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


def pattern(pattern_id: str) -> str:
    return f"patterns/{pattern_id}.html"


def postmortem(postmortem_id: str) -> str:
    return f"postmortems/{postmortem_id}.html"


def area(name: str) -> str:
    return f"areas/{slug(name)}.html"


def tag(tag_slug: str) -> str:
    return f"tags/{tag_slug}.html"


def severity(level: str) -> str:
    return f"severity/{level}.html"
