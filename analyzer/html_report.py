"""A report as one self-contained HTML document, to share or print (`--format html`).

The same content as the terminal report (findings with evidence, fix and what not to do,
facts, timeline, warnings) with the timeline drawn as an inline SVG picture. Nothing is
loaded from elsewhere: the CSS is inline, there is no script and no web font. Every string
taken from the log is escaped; the page prints on A4 (one column, the picture scaled to
the page's width).
"""

from __future__ import annotations

import re
from html import escape

from analyzer import __version__
from analyzer.choices import FindingKind, Severity
from analyzer.models import Evidence, Finding, Related, Report
from analyzer.prose import fold
from analyzer.timeline_svg import SEVERITY_COLOURS, holders, timeline_svg
from analyzer.wording import RELATED_SHOWN, hypothesis_line, opener, related_line, seen, times, where

_CSS = """
:root { color-scheme: light; --ink: #212529; --muted: #5c636a; --rule: #dee2e6; --paper: #ffffff;
  --code: #f1f3f5; --fix: #2b8a3e; --avoid: #a61e4d; }
* { box-sizing: border-box; }
html { background: var(--paper); }
body { margin: 0; color: var(--ink); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  "Helvetica Neue", Arial, sans-serif; }
main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; border-bottom: 1px solid var(--rule); padding-bottom: .2rem; }
h3 { font-size: 1.1rem; margin: .35rem 0 .5rem; line-height: 1.35; }
h4 { font-size: .95rem; margin: 1rem 0 .3rem; }
p { margin: .4rem 0; }
a { color: #1864ab; }
code, .line { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: .85em; }
code { background: var(--code); padding: 0 .2em; border-radius: 3px; overflow-wrap: anywhere; }
.muted, .inputs { color: var(--muted); }
.badge { display: inline-block; font-size: .75rem; font-weight: 700; letter-spacing: .04em; color: #fff;
  padding: .05rem .45rem; border-radius: 3px; text-transform: uppercase; vertical-align: .1em; }
.summary { padding-left: 1.5rem; }
.summary li { margin: .2rem 0; }
.finding { border: 1px solid var(--rule); border-left: 6px solid var(--sev); border-radius: 4px;
  padding: .6rem 1rem .8rem; margin: 1.2rem 0; }
.finding > header { color: var(--muted); font-size: .9rem; }
.finding .rank { font-weight: 700; color: var(--ink); margin: 0 .3rem; }
table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; vertical-align: top; padding: .15rem .5rem .15rem 0; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--rule); }
table.events td.what { white-space: nowrap; }
table.evidence td:first-child, table.events td.where { white-space: nowrap; color: var(--muted);
  font-size: .85rem; }
.line { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }
table.evidence .line { display: block; background: var(--code); padding: .1rem .4rem; border-radius: 3px; }
ol.fix li::marker { color: var(--fix); font-weight: 700; }
.avoid h4, h4.avoid { color: var(--avoid); }
ul.avoid { list-style: none; padding-left: 1.2rem; }
ul.avoid li::before { content: "\\2717"; color: var(--avoid); font-weight: 700; margin-left: -1.1rem;
  width: 1.1rem; display: inline-block; }
ul.hypotheses { list-style: none; padding-left: 1.2rem; }
ul.hypotheses li::before { content: attr(data-mark); margin-left: -1.1rem; width: 1.1rem; display: inline-block; }
ul.references { padding-left: 1.2rem; overflow-wrap: anywhere; }
figure { margin: 0; }
svg.timeline { display: block; width: 100%; height: auto; max-width: 100%; }
.warnings li { color: #8f5d00; }
table.facts td:nth-child(2) { font-weight: 600; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .8rem; border-top: 1px solid var(--rule);
  padding-top: .5rem; }
@page { size: A4; margin: 12mm; }
@media print {
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  a { color: inherit; text-decoration: none; }
  .screen-only { display: none; }
  .finding { break-inside: auto; border-left-width: 4px; }
  h2, h3, h4 { break-after: avoid; }
  li, tr, figure { break-inside: avoid; }
}
"""


def to_html(report: Report, explain: bool = False) -> str:
    single = len(report.inputs) == 1
    names = ", ".join(i.path.rsplit("/", 1)[-1] for i in report.inputs)
    total = sum(i.lines for i in report.inputs)
    sev_css = "".join(f".sev-{s.value} {{ --sev: {c}; }} .badge.sev-{s.value} {{ background: {c}; }}\n"
                      for s, c in SEVERITY_COLOURS.items())
    body = ['<header><h1>triage report</h1>',
            f'<p class="inputs">{total} lines read from '
            + ", ".join(f"<code>{escape(i.path)}</code> ({escape(i.format.value)})" for i in report.inputs)
            + "</p></header>"]
    body += _summary(report)
    picture = timeline_svg(report, single)
    day = next((e.time[:10] for e in report.timeline if e.time), "")
    if picture:
        body += [f'<section class="timeline" id="timeline"><h2>Timeline {escape(day)}</h2>',
                 f"<figure>{picture}</figure>", '<p class="muted screen-only">Each event with its log line: '
                 '<a href="#events">below the findings</a>. Hover a marker for its line.</p></section>']
    if report.findings:
        body.append('<section id="findings"><h2>Findings</h2>')
        body += [_finding(f, single, explain) for f in report.findings]
        body.append("</section>")
    if report.facts:
        body += ['<section id="facts"><h2>Facts from the log</h2>',
                 '<table class="facts"><thead><tr><th>fact</th><th>value</th><th>evidence</th></tr></thead><tbody>']
        body += [f"<tr><td>{escape(x.label)}</td><td>{escape(x.value)}</td>"
                 f"<td class=\"muted\">{escape(where(x.evidence, single))}</td></tr>" for x in report.facts.values()]
        body.append("</tbody></table></section>")
    if report.timeline:
        body += [f'<section id="events"><h2>Timeline {escape(day)}, line by line</h2>', _events(report, single, day),
                 "</section>"]
    if report.warnings:
        body += ['<section id="warnings"><h2>Warnings</h2><ul class="warnings">',
                 *[f"<li>{escape(w)}</li>" for w in report.warnings], "</ul></section>"]
    body.append(f"<footer>Written by triage {escape(__version__)} (<code>--format html</code>). "
                "This page is self-contained: no script, nothing loaded from the network.</footer>")
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="triage {escape(__version__)}">'
            f"<title>triage report: {escape(names)}</title>"
            f"<style>{_CSS}{sev_css}</style></head>\n"
            "<body><main>\n" + "\n".join(body) + "\n</main></body></html>\n")


def _summary(report: Report) -> list[str]:
    if not report.findings:
        return ["<p><strong>No failure found: no pattern matched and no error line was seen.</strong></p>"]
    counts = ", ".join(f"{n} {s.value}" for s in reversed(list(Severity))
                       if (n := sum(1 for f in report.findings if f.severity is s)))
    items = [f'<li><a href="#finding-{f.rank}">{_badge(f.severity)} {escape(f.title)}</a></li>'
             for f in report.findings]
    return [f'<nav class="summary-box" aria-label="findings"><p>{len(report.findings)} finding'
            f'{"" if len(report.findings) == 1 else "s"} ({counts}), most likely root cause first:</p>'
            '<ol class="summary">', *items, "</ol></nav>"]


def _badge(severity: Severity) -> str:
    return f'<span class="badge sev-{severity.value}">{severity.value}</span>'


_TICKS = re.compile(r"`([^`]+)`")


def _prose(text: str) -> str:
    """Library text, escaped, with its `code` spans set as code."""
    return _TICKS.sub(r"<code>\1</code>", escape(text))


def _line(e: Evidence, single: bool) -> str:
    return (f'<tr data-line="{e.line}"><td>{escape(where(e, single))}</td>'
            f'<td><span class="line">{escape(fold(e.text))}</span></td></tr>')


def _finding(f: Finding, single: bool, explain: bool) -> str:
    kind = "" if f.kind is FindingKind.pattern else f"{f.kind.value} · "
    phase = f" · during {escape(f.phase)}" if f.phase else ""
    out = [f'<article class="finding sev-{f.severity.value}" id="finding-{f.rank}" data-rank="{f.rank}" '
           f'data-id="{escape(f.id)}">',
           f'<header>{_badge(f.severity)}<span class="rank">#{f.rank}</span>'
           f"{escape(kind)}<code>{escape(f.id)}</code> · confidence {f.confidence.value}{phase}</header>",
           f"<h3>{escape(f.title)}</h3>", f'<p class="cause">{_prose(f.cause)}</p>']
    if f.why and f.why not in f.cause:
        out.append(f'<p class="why"><strong>Why it matters:</strong> {_prose(f.why)}</p>')
    if f.kind is FindingKind.chain and f.members:
        others = ", ".join(f"<code>{escape(m)}</code>" for m in f.members[1:])
        out.append(f'<p class="members">Root cause: <code>{escape(f.members[0])}</code>'
                   + (f"; also in the chain: {others}" if others else "") + "</p>")
    title = "Evidence, in order" if f.kind is FindingKind.chain else "Evidence"
    out += [f"<h4>{title}</h4>", '<table class="evidence"><tbody>', *[_line(e, single) for e in f.evidence],
            "</tbody></table>"]
    if f.count > 1:
        out.append(f'<p class="muted">{escape(seen(f))}, lines {f.first_line}-{f.last_line}</p>')
    if f.symptoms:
        out += ["<h4>Explains (folded under this finding)</h4>", '<ul class="symptoms">']
        out += [f'<li data-id="{escape(s.id)}">{escape(s.title)} <code>{escape(s.id)}</code>'
                + (f" ({times(s.count)})" if s.count > 1 else "") + "</li>" for s in f.symptoms]
        out.append("</ul>")
    if f.hypotheses:
        out += ["<h4>Why the earlier step could lead to the failure (candidates, checked against this log)</h4>",
                '<ul class="hypotheses">']
        out += [f'<li data-mark="{"✓" if h.supported else "?"}">{escape(hypothesis_line(h, single))}</li>'
                for h in f.hypotheses]
        out.append("</ul>")
    out += ["<h4>Fix</h4>", '<ol class="fix">', *[f"<li>{_prose(step)}</li>" for step in f.fix], "</ol>"]
    if f.avoid:
        out += ['<h4 class="avoid">Do NOT</h4>', '<ul class="avoid">', *[f"<li>{_prose(a)}</li>" for a in f.avoid],
                "</ul>"]
    if f.related:
        heading = ("Past incidents like this one" if f.kind is not FindingKind.unrecognised
                   else "Nearest known failures by meaning (not confirmed for this log)")
        out += [f"<h4>{heading}</h4>", '<ul class="related">', *[_related(r) for r in f.related[:RELATED_SHOWN]],
                "</ul>"]
    if f.references:
        out += ["<h4>References</h4>", '<ul class="references">', *[f"<li>{_link(r)}</li>" for r in f.references],
                "</ul>"]
    if explain and f.reasons:
        out += [f"<h4>Why ranked #{f.rank} (score {f.score:g})</h4>", '<ul class="reasons">',
                *[f"<li>{escape(r)}</li>" for r in f.reasons], "</ul>"]
    out.append("</article>")
    return "\n".join(out)


def _related(r: Related) -> str:
    """A past incident as the terminal says it, with the command that opens it set as code."""
    command = escape(opener(r.kind, r.id))
    return f"<li>{escape(related_line(r)).replace(command, f'<code>{command}</code>')}</li>"


def _link(ref: str) -> str:
    """A reference: a link when it is a web address, text otherwise."""
    if re.match(r"https?://[^\s\"'<>]+$", ref):
        return f'<a href="{escape(ref)}">{escape(ref)}</a>'
    return escape(ref)


def _events(report: Report, single: bool, day: str) -> str:
    """The timeline as a table under the picture, as the terminal shows it: time of day (the
    date when it is not `day`), line, what, and the log text."""
    held = holders(report.findings)
    rows = []
    for i, e in enumerate(report.timeline):
        what = f"finding #{held[e.kind][0].rank}" if e.kind in held else e.kind
        unit = f"{e.unit}: " if e.unit and e.unit not in e.text else ""
        when = (e.time[11:19] if e.time and e.time[:10] == day else e.time) or ""
        rows.append(f'<tr data-marker="m{i}"><td class="where">{escape(when)}</td>'
                    f'<td class="where">{escape(where(e, single))}</td>'
                    f'<td class="what">{escape(what)}</td>'
                    f'<td><span class="line">{escape(fold(unit + e.text))}</span></td></tr>')
    return ('<table class="events"><thead><tr><th>time</th><th>line</th><th>what</th><th>log</th></tr></thead>'
            "<tbody>" + "".join(rows) + "</tbody></table>")
