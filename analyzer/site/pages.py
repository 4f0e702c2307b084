"""One page per pattern and one per postmortem."""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.kb.postmortems import Postmortem
from analyzer.library.schema import FixStep, Pattern
from analyzer.prose import clip
from analyzer.site import paths
from analyzer.site.content import Content, Example, PatternEntry
from analyzer.site.html import chip, esc, external, fill, slug
from analyzer.site.layout import Page, page
from analyzer.site.markdown import CodeLinker, inline, render
from analyzer.site.related import Link

ROOT = "../"  # every pattern and postmortem page sits one folder down
_PLACEHOLDER = re.compile(r"\{(?P<name>[A-Za-z_]\w*)(?:\|(?P<default>[^{}<]*))?\}")
EXPECT = {
    "match": ("matches", "ok"),
    "todo-match": ("should match (known gap)", "gap"),
    "ok": ("does not match (near miss)", "miss"),
    "todo-ok": ("should not match (known gap)", "gap"),
}


def _placeholders(html: str) -> str:
    """`{gpu_sm}` and `{name|default}` in a description: the value captured from the log."""

    def var(m: re.Match[str]) -> str:
        default = f" (or: {m['default']})" if m["default"] else ""  # already escaped by inline()
        return f'<var title="captured from the log line{default}">{m["name"]}</var>'

    return _PLACEHOLDER.sub(var, html)


def _text(text: str, linker: CodeLinker | None = None, copy: bool = False) -> str:
    return _placeholders(inline(" ".join(text.split()), linker, copy))


def _linker(content: Content) -> CodeLinker:
    def href(code: str) -> str | None:
        if content.pattern(code):
            return ROOT + paths.pattern(code)
        if content.postmortem(code):
            return ROOT + paths.postmortem(code)
        return None

    return href


def severity_chip(level: str, root: str = ROOT) -> str:
    return chip(level, f"sev sev-{level}", root + paths.severity(level), title=f"severity {level}")


def tag_chips(tags: Sequence[str], root: str = ROOT) -> str:
    return " ".join(chip(t, "tag", root + paths.tag(slug(t))) for t in dict.fromkeys(tags))


def _list(items: Sequence[str], cls: str, ordered: bool = False) -> str:
    tag = "ol" if ordered else "ul"
    return f'<{tag} class="{cls}">' + "".join(f"<li>{i}</li>" for i in items) + f"</{tag}>"


def _section(title: str, body: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<section{klass}><h2>{esc(title)}</h2>{body}</section>"


def _highlight(ex: Example) -> str:
    out, pos = [], 0
    for start, end in ex.spans:
        out += [esc(ex.text[pos:start]), f"<mark>{esc(ex.text[start:end])}</mark>"]
        pos = end
    out.append(esc(ex.text[pos:]))
    return "".join(out)


def _examples(e: PatternEntry) -> str:
    if not e.examples:
        return ""
    order = {"match": 0, "todo-match": 1, "ok": 2, "todo-ok": 3}
    rows = []
    for ex in sorted(e.examples, key=lambda x: (order[x.expect], x.line)):
        label, cls = EXPECT[ex.expect]
        caps = " ".join(chip(f"{k} = {v}", "capture") for k, v in ex.captures.items())
        rows.append(f'<li class="example {cls}"><div class="ex-meta"><span class="verdict">{esc(label)}</span>'
                    f'<span class="muted small">line {ex.line}</span>{caps}</div>'
                    f'<pre class="logline"><code>{_highlight(ex)}</code></pre></li>')
    head = (f'<p class="muted small">Real log lines from the fixture <code>{esc(e.fixture_source)}</code>; '
            "highlighted: what the pattern matches. Near misses show what it must not fire on.</p>")
    return _section("Examples from real logs", head + '<ul class="examples">' + "".join(rows) + "</ul>",
                    "examples")


def _regexes(p: Pattern) -> str:
    how = "any expression" if p.match.any else "every expression"
    flags = [f"fires when {how} matches", f"scope: {p.match.scope.value}",
             "case-insensitive" if p.match.ignorecase else "case-sensitive"]
    blocks = []
    for expr in p.match.expressions:
        trigger = (f'<p class="muted small">prefilter (trigger): <code>{esc(expr.trigger)}</code></p>'
                   if expr.trigger else "")
        blocks.append(f'<div class="regex"><pre><code>{esc(expr.regex)}</code></pre>'
                      f'<button type="button" class="copy" data-copy="{esc(expr.regex)}" '
                      f'aria-label="Copy the regular expression">copy</button>{trigger}</div>')
    meta = '<p class="muted small">' + " · ".join(esc(f) for f in flags) + " · syntax: Python <code>regex</code></p>"
    return _section("Regular expressions", meta + "".join(blocks), "regexes")


def _stats(e: PatternEntry) -> str:
    s = e.stats
    if s is None:
        return ""
    fixture_ok = s.fixture_lines > 0 and s.fixture_matched == s.fixture_lines
    tiles = [
        ("fixture lines matched", f"{s.fixture_matched}/{s.fixture_lines}", "good" if fixture_ok else "bad"),
        (f"of the {s.corpus_total} development-corpus logs, it fired on", str(s.corpus_logs), ""),
        ("of those, the top finding", str(s.corpus_top), ""),
        ("hits on benign logs", str(s.benign_hits), "good" if s.benign_hits == 0 else "bad"),
    ]
    body = '<dl class="stats">' + "".join(f'<div class="stat {cls}"><dt>{esc(label)}</dt><dd>{esc(value)}</dd></div>'
                                          for label, value, cls in tiles) + "</dl>"
    note = ('<p class="muted small">From <code>triage patterns stats</code>: its fixture (real lines), the '
            "development corpus (a small set of real failure logs kept with the tests: a 0 there means this failure "
            "is not among them, not that it is rare), and the benign logs.</p>")
    return f'<section class="box"><h2>Stats</h2>{body}{note}</section>'


def _link_item(content: Content, link: Link) -> str:
    pm = content.postmortem(link.id)
    if pm is None:
        return ""
    badge = ('<span class="badge linked" title="the pattern and the postmortem name each other">linked</span>'
             if link.explicit else f'<span class="badge sim" title="cosine similarity of the embeddings">'
                                   f"similar {round(link.score * 100)}%</span>")
    return (f'<li>{severity_dot(pm.front.severity.value)}<a href="{ROOT}{paths.postmortem(pm.id)}">'
            f'{esc(pm.front.title)}</a> <span class="muted small">{pm.front.date.isoformat()}</span> {badge}</li>')


def severity_dot(level: str) -> str:
    return f'<span class="dot sev-{esc(level)}" title="severity {esc(level)}"></span>'


def _postmortems(e: PatternEntry, content: Content) -> str:
    links = [Link(pm.id, 1.0, True) for pm in content.linked_postmortems(e.pattern.id)]
    seen = {link.id for link in links}
    links += [link for link in content.related.of_pattern(e.pattern.id) if link.id not in seen]
    if not links:
        return '<section class="box"><h2>Postmortems</h2><p class="muted">None yet.</p></section>'
    items = "".join(_link_item(content, link) for link in links)
    return f'<section class="box"><h2>Postmortems</h2><ul class="links">{items}</ul></section>'


def _conditions(p: Pattern, content: Content) -> str:
    rows = []
    if p.facts:
        rows.append("<dt>Records</dt>" + "".join(f"<dd><code>{esc(k)}</code>: {esc(v)}</dd>"
                                                 for k, v in p.facts.items()))
    if p.supports:
        rows.append("<dt>Confirmed by</dt>" + "".join(f"<dd><code>{esc(c)}</code></dd>" for c in p.supports))
    if p.contradicts:
        rows.append("<dt>Argued against by</dt>" + "".join(f"<dd><code>{esc(c)}</code></dd>" for c in p.contradicts))
    if p.overlaps:
        rows.append("<dt>Fires with</dt>" + "".join(
            f'<dd><a href="{ROOT}{paths.pattern(o)}">{esc(o)}</a></dd>' if content.pattern(o) else
            f"<dd><code>{esc(o)}</code></dd>" for o in p.overlaps))
    if not rows:
        return ""
    return '<section class="box"><h2>Facts and rules</h2><dl class="facts">' + "".join(rows) + "</dl></section>"


def _fix_step(step: str | FixStep, link: CodeLinker) -> str:
    """A step, and for a conditional one the facts it holds for (a report keeps or drops it
    by the log's facts; the catalogue shows every step with its condition)."""
    if isinstance(step, str):
        return _text(step, link, copy=True)
    when = " and ".join(f"<code>{esc(c)}</code>" for c in step.when)
    return _text(step.step, link, copy=True) + f' <span class="muted small">(only when {when})</span>'


def pattern_page(e: PatternEntry, content: Content) -> Page:
    p = e.pattern
    link = _linker(content)
    chips = [severity_chip(p.severity.value), chip(f"confidence {p.confidence.value}", "plain"),
             chip(p.status.value, f"state state-{p.status.value}")]
    if p.role.value == "signal":
        chips.append(chip("lifecycle signal", "plain", title="feeds chains and timelines; not reported alone"))
    chips.append(tag_chips(p.tags))
    avoid = _section("Avoid", _list([_text(a, link) for a in p.avoid], "avoid-list"), "avoid") if p.avoid else ""
    falsepos = (_section("False positives", _list([_text(f, link) for f in p.falsepositives], "plain-list"))
                if p.falsepositives else "")
    refs = ('<section class="box"><h2>References</h2>' + _list([external(r) for r in p.references], "refs")
            + "</section>") if p.references else ""
    body = fill("pattern.html", severity=p.severity.value, area=esc(p.area), area_href=ROOT + paths.area(p.area),
                title=esc(p.title), id=esc(p.id), chips=" ".join(chips), description=_text(p.description, link),
                why=_text(p.why, link), fix=_list([_fix_step(s, link) for s in p.fix], "steps", ordered=True),
                avoid=avoid, examples=_examples(e), regexes=_regexes(p), falsepositives=falsepos, stats=_stats(e),
                postmortems=_postmortems(e, content), conditions=_conditions(p, content), references=refs,
                source=_text(p.source), file=esc(e.source))
    source = e.source + (f" and {e.fixture_source}" if e.examples else "")
    return page(paths.pattern(p.id), p.title, body, source, description=clip(p.description, 300),
                trail=[("Patterns", paths.PATTERNS), (p.area, paths.area(p.area)), (p.id, None)],
                body_class=f"page-pattern sev-{p.severity.value}")


def _pattern_item(e: PatternEntry) -> str:
    p = e.pattern
    return (f'<li>{severity_dot(p.severity.value)}<a href="{ROOT}{paths.pattern(p.id)}">{esc(p.title)}</a>'
            f' <span class="badge linked">linked</span></li>')


def postmortem_page(pm: Postmortem, content: Content) -> Page:
    f = pm.front
    link = _linker(content)
    chips = [severity_chip(f.severity.value)] + [chip(c, "plain component", title="component") for c in f.components]
    chips.append(tag_chips(f.tags))
    linked = content.linked_patterns(pm)
    patterns = ('<section class="box"><h2>Patterns</h2><ul class="links">' + "".join(_pattern_item(e) for e in linked)
                + "</ul></section>") if linked else ""
    similar = [_link_item(content, lk) for lk in content.related.of_postmortem(pm.id)]
    related = ('<section class="box"><h2>Related incidents</h2><ul class="links">' + "".join(similar)
               + '</ul><p class="muted small">Precomputed from the embeddings of both write-ups.</p></section>'
               if similar else "")
    avoid = ('<section class="box avoid"><h2>Avoid</h2>' + _list([_text(a, link) for a in f.avoid], "avoid-list")
             + "</section>") if f.avoid else ""
    body = fill("postmortem.html", severity=f.severity.value, date=f.date.isoformat(), title=esc(f.title),
                id=esc(pm.id), chips=" ".join(chips), root_cause=_text(f.root_cause, link),
                body=render(pm.body, link), patterns=patterns, related=related,
                fix=_list([_text(s, link, copy=True) for s in f.fix], "steps", ordered=True), avoid=avoid,
                symptoms=_list([_text(s, link) for s in f.symptoms], "plain-list"),
                sources=_list([external(s) if s.startswith("http") else _text(s) for s in f.sources], "refs"))
    source = content.postmortem_source(pm)
    return page(paths.postmortem(pm.id), f.title, body, source, description=clip(f.root_cause, 300),
                trail=[("Postmortems", paths.POSTMORTEMS), (f.date.isoformat(), None)],
                body_class=f"page-postmortem sev-{f.severity.value}")
