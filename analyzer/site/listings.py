"""The index (search, counts per area and severity, newest postmortems) and the listing
pages: all patterns, all postmortems, each area, each tag, each severity."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from analyzer.kb.postmortems import Postmortem
from analyzer.site import paths
from analyzer.site.content import SEVERITIES, Content, PatternEntry, Tag
from analyzer.site.html import chip, esc, fill, root_of
from analyzer.site.layout import Page, page
from analyzer.site.pages import severity_chip, severity_dot

NEWEST = 8
TOP_TAGS = 28
SEARCH_SCRIPTS = ("assets/search-index.js", "assets/search-terms.js", "assets/search.js")
SOURCES = "the pattern library (patterns/) and the knowledge base (kb/)"


def pattern_table(entries: Sequence[PatternEntry], root: str, show_area: bool = True) -> str:
    if not entries:
        return '<p class="muted">None.</p>'
    head = "<th>Severity</th><th>Pattern</th>" + ("<th>Area</th>" if show_area else "")
    rows = []
    for e in entries:
        p = e.pattern
        area = f'<td><a href="{root}{paths.area(p.area)}">{esc(p.area)}</a></td>' if show_area else ""
        signal = ' <span class="badge">signal</span>' if p.role.value == "signal" else ""
        rows.append(f"<tr><td>{severity_chip(p.severity.value, root)}</td>"
                    f'<td><a href="{root}{paths.pattern(p.id)}">{esc(p.title)}</a>{signal}'
                    f'<div class="muted small mono">{esc(p.id)}</div></td>{area}</tr>')
    return (f'<div class="table-wrap"><table class="list"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>")


def postmortem_list(pms: Sequence[Postmortem], root: str) -> str:
    if not pms:
        return '<p class="muted">None.</p>'
    items = [f'<li><time datetime="{pm.front.date.isoformat()}">{pm.front.date.isoformat()}</time>'
             f'{severity_dot(pm.front.severity.value)}<a href="{root}{paths.postmortem(pm.id)}">'
             f"{esc(pm.front.title)}</a></li>" for pm in pms]
    return '<ul class="incidents">' + "".join(items) + "</ul>"


def _area_table(content: Content, root: str) -> str:
    head = "".join(f'<th class="num"><a href="{root}{paths.severity(s.value)}">{severity_dot(s.value)}{s.value}</a>'
                   "</th>" for s in SEVERITIES)
    rows = []
    totals: Counter[str] = Counter()
    for area, entries in content.areas().items():
        counts = Counter(e.pattern.severity.value for e in entries)
        totals.update(counts)
        cells = "".join(f'<td class="num{" zero" if not counts[s.value] else ""}">{counts[s.value] or "·"}</td>'
                        for s in SEVERITIES)
        rows.append(f'<tr><th scope="row"><a href="{root}{paths.area(area)}">{esc(area)}</a></th>{cells}'
                    f'<td class="num total">{len(entries)}</td></tr>')
    foot = "".join(f'<td class="num">{totals[s.value]}</td>' for s in SEVERITIES)
    return (f'<div class="table-wrap"><table class="matrix"><thead><tr><th>Area</th>{head}<th class="num">all</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody><tfoot><tr><th scope="row">all areas</th>{foot}'
            f'<td class="num total">{len(content.patterns)}</td></tr></tfoot></table></div>')


def _severity_tiles(content: Content) -> str:
    pats = Counter(e.pattern.severity.value for e in content.patterns)
    pms = Counter(pm.front.severity.value for pm in content.postmortems)
    return "".join(f'<a class="sev-tile sev-{s.value}" href="{paths.severity(s.value)}"><span class="n">'
                   f'{pats[s.value]}</span><span class="label">{s.value}</span><span class="sub">'
                   f"{pms[s.value]} postmortem{'s' if pms[s.value] != 1 else ''}</span></a>" for s in SEVERITIES)


def _tag_cloud(tags: Sequence[Tag], root: str, limit: int | None = None) -> str:
    ranked = sorted(tags, key=lambda t: (-(len(t.patterns) + len(t.postmortems)), t.name))[:limit]
    return " ".join(chip(f"{t.name} {len(t.patterns) + len(t.postmortems)}", "tag", root + paths.tag(t.slug))
                    for t in sorted(ranked, key=lambda t: t.name))


def index_page(content: Content) -> Page:
    failures = sum(1 for e in content.patterns if e.pattern.role.value == "failure")
    lede = (f"{len(content.patterns)} patterns ({failures} failures, {len(content.patterns) - failures} lifecycle "
            f"signals) and {len(content.postmortems)} postmortems of real incidents on GPU and LLM-serving machines: "
            "the evidence lines, the fix, and what not to do. Search works offline, in this page.")
    body = fill("index.html", lede=esc(lede), severity_tiles=_severity_tiles(content),
                area_table=_area_table(content, ""), newest=postmortem_list(content.postmortems[:NEWEST], ""),
                postmortem_count=str(len(content.postmortems)), tags=_tag_cloud(content.tags(), "", TOP_TAGS))
    return page(paths.INDEX, "GPU and LLM-serving failure catalogue", body, SOURCES, scripts=SEARCH_SCRIPTS,
                body_class="home", description=lede)


def _listing(path: str, eyebrow: str, title: str, lede: str, body: str, source: str,
             trail: Sequence[tuple[str, str | None]]) -> Page:
    html = fill("listing.html", eyebrow=esc(eyebrow), title=esc(title), lede=lede, body=body)
    return page(path, title, html, source, trail=trail, body_class="page-listing")


def _section(title: str, body: str) -> str:
    return f'<section class="panel"><h2>{esc(title)}</h2>{body}</section>'


def listing_pages(content: Content) -> list[Page]:
    out = [
        _listing(paths.PATTERNS, "Catalogue", "All patterns",
                 f"{len(content.patterns)} patterns, grouped by area, most severe first.",
                 "".join(_section(area, pattern_table(entries, "../", show_area=False))
                         for area, entries in content.areas().items()),
                 "patterns/", [("Patterns", None)]),
        _listing(paths.POSTMORTEMS, "Knowledge base", "All postmortems",
                 f"{len(content.postmortems)} write-ups of real incidents, newest first.",
                 postmortem_list(content.postmortems, "../"), "kb/", [("Postmortems", None)]),
        _listing(paths.AREAS, "Catalogue", "Areas", "Where in the stack each failure happens.",
                 _section("Patterns by area and severity", _area_table(content, "../")),
                 "patterns/", [("Areas", None)]),
        _listing(paths.TAGS, "Catalogue", "Tags", "Every tag of a pattern or a postmortem, with its count.",
                 f'<p class="tags cloud">{_tag_cloud(content.tags(), "../")}</p>', SOURCES, [("Tags", None)]),
    ]
    out += [_area_page(content, area, entries) for area, entries in content.areas().items()]
    out += [_tag_page(content, tag) for tag in content.tags()]
    out += [_severity_page(content, s.value) for s in SEVERITIES]
    return out


def _area_page(content: Content, area: str, entries: list[PatternEntry]) -> Page:
    ids = {e.pattern.id for e in entries}
    pms = [pm for pm in content.postmortems if ids & set(pm.front.patterns)]
    root = root_of(paths.area(area))
    body = (_section(f"Patterns ({len(entries)})", pattern_table(entries, root, show_area=False))
            + _section(f"Postmortems that name them ({len(pms)})", postmortem_list(pms, root)))
    return _listing(paths.area(area), "Area", area, f"Patterns of the <code>{esc(area)}</code> area.", body,
                    f"patterns/{area}/", [("Areas", paths.AREAS), (area, None)])


def _tag_page(content: Content, tag: Tag) -> Page:
    root = root_of(paths.tag(tag.slug))
    entries = [e for e in (content.pattern(p) for p in tag.patterns) if e is not None]
    pms = [pm for pm in (content.postmortem(p) for p in tag.postmortems) if pm is not None]
    body = (_section(f"Patterns ({len(entries)})", pattern_table(entries, root))
            + _section(f"Postmortems ({len(pms)})", postmortem_list(pms, root)))
    return _listing(paths.tag(tag.slug), "Tag", tag.name, "Patterns and postmortems tagged "
                    f"<code>{esc(tag.name)}</code>.", body, "the tags of patterns/ and kb/",
                    [("Tags", paths.TAGS), (tag.name, None)])


def _severity_page(content: Content, level: str) -> Page:
    root = root_of(paths.severity(level))
    entries = sorted((e for e in content.patterns if e.pattern.severity.value == level),
                     key=lambda e: (e.pattern.area, e.pattern.id))
    pms = [pm for pm in content.postmortems if pm.front.severity.value == level]
    body = (_section(f"Patterns ({len(entries)})", pattern_table(entries, root))
            + _section(f"Postmortems ({len(pms)})", postmortem_list(pms, root)))
    return _listing(paths.severity(level), "Severity", level.capitalize(),
                    f"Everything rated {severity_chip(level, root)}.", body, "the severities of patterns/ and kb/",
                    [(f"severity {level}", None)])
