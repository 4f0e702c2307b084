"""The HTML report (`--format html`): one self-contained page holding every finding as the
terminal shows it, log text escaped, a timeline picture whose lanes, markers and causal
arrows say what the report says, redaction kept; and in a real headless Chromium, the
founding example's page loads without errors, each arrow runs from the centre of one
marker to the centre of the other, and the page prints on A4 with nothing cut."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from analyzer.choices import Confidence, InputForm, Severity
from analyzer.html_report import to_html
from analyzer.library.compile import CompiledLibrary
from analyzer.models import Evidence, Fact, Finding, Hypothesis, InputSummary, Related, Report, Symptom, TimelineEntry
from analyzer.prose import fold
from analyzer.redact import redact_report
from analyzer.timeline_svg import lanes
from analyzer.triage import analyze
from tests.conftest import CHAIN, GATE, ROOT, BrowserTab, analyze_bytes

EXAMPLE = "examples/founding-incident.log"
SCREENSHOT = ROOT / "docs" / "report-founding-incident.png"
A4_WIDTH_PT = 595.28
PRINTABLE_PX = round((210 - 2 * 12) / 25.4 * 96)  # A4 less the page's 12 mm margins, in CSS px: 703
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>"\'&'


@pytest.fixture(scope="module")
def founding(library: CompiledLibrary) -> Report:
    return analyze([EXAMPLE], library=library, knowledge=False)


@pytest.fixture(scope="module")
def page(founding: Report) -> str:
    return to_html(founding)


class Element:
    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs, self.text = tag, attrs, ""


class Page(HTMLParser):
    """Every element with its attributes, the text inside each <article> (a finding), and the
    page's whole text."""

    VOID = {"meta", "br", "img", "link", "input", "hr", "path", "rect", "circle", "polygon"}

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.articles: dict[str, str] = {}
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = Element(tag, {k: v or "" for k, v in attrs})
        self.elements.append(el)
        if tag not in self.VOID:
            self.open.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            el = self.open.pop()
            if el.tag == "article":
                self.articles[el.attrs["data-rank"]] = el.text
            if el.tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text += data
        for el in self.open:
            el.text += data

    def find(self, tag: str, **attrs: str) -> list[Element]:
        return [e for e in self.elements if e.tag == tag
                and all(e.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]


def flat(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def markers(doc: Page) -> dict[str, Element]:
    return {e.attrs["id"]: e for e in doc.find("g") if "mark" in e.attrs.get("class", "").split()}


def centre(el: Element) -> tuple[float, float]:
    m = re.fullmatch(r"translate\(([\d.]+) ([\d.]+)\)", el.attrs["transform"])
    assert m, el.attrs
    return float(m[1]), float(m[2])


def ends(path: Element) -> tuple[tuple[float, float], tuple[float, float]]:
    m = re.fullmatch(r"M([\d.]+),([\d.]+) Q[-\d.]+,[-\d.]+ ([\d.]+),([\d.]+)", path.attrs["d"])
    assert m, path.attrs
    return (float(m[1]), float(m[2])), (float(m[3]), float(m[4]))


# ---------------------------------------------------------------- the document

def test_one_self_contained_document_without_script(page: str) -> None:
    doc = Page(page)
    assert page.startswith("<!DOCTYPE html>\n") and page.count("<html") == 1 and page.rstrip().endswith("</html>")
    tags = {e.tag for e in doc.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed"}, tags
    assert not [e for e in doc.elements if "src" in e.attrs or any(k.startswith("on") for k in e.attrs)]
    assert "@import" not in page and "url(http" not in page and "@font-face" not in page
    for a in doc.find("a"):  # links within the page, or references to open: nothing loads by itself
        assert a.attrs["href"].startswith(("#", "https://", "http://")), a.attrs
    assert len(doc.find("svg")) == 1 and len(doc.find("style")) == 1
    assert "@media print" in page and "@page" in page
    svg = doc.find("svg")[0]
    assert svg.attrs["width"] == "100%" and re.fullmatch(r"0 0 800 \d+", svg.attrs["viewbox"])


def test_every_finding_as_the_terminal_shows_it(founding: Report, page: str) -> None:
    doc = Page(page)
    assert [f.id for f in founding.findings][:2] == [CHAIN, "cuda-home-has-no-nvcc"]
    assert "63 lines read from examples/founding-incident.log (journal-short)" in flat(doc.text)
    for f in founding.findings:
        text = flat(doc.articles[str(f.rank)])
        assert doc.find("article", id=f"finding-{f.rank}", data_id=f.id)
        assert doc.find("a", href=f"#finding-{f.rank}")  # the summary at the top
        assert f"#{f.rank}" in text and f.severity.value in text and f"confidence {f.confidence.value}" in text
        for part in [f.title, f.cause, *f.fix, *f.avoid]:
            assert flat(part) in text, part
        if f.why:
            assert flat(f.why) in text
        for e in f.evidence:
            assert f"line {e.line}{flat(fold(e.text))}" in text
        for s in f.symptoms:
            assert f"{flat(s.title)} {s.id}" in text
        for m in f.members:
            assert m in text
        for h in f.hypotheses:
            assert flat(h.claim) in text
        for ref in f.references:
            assert doc.find("a", href=ref)
        assert ("Do NOT" in text) == bool(f.avoid)
    chain = flat(doc.articles["1"])
    assert "Evidence, in order" in chain and f"Root cause: {GATE}; also in the chain: host-oom-killed-service" in chain
    assert "Why the earlier step could lead to the failure" in chain and "Nothing in this log shows it." in chain
    for fact in founding.facts.values():
        assert f"{fact.label}{fact.value}line {fact.evidence.line}" in doc.text.replace("\n", "")
    assert "Timeline 2026-05-03" in doc.text and "finding #1" in doc.text


def test_related_incidents_reasons_and_warnings(founding: Report) -> None:
    top = founding.findings[0].model_copy(update={"related": [
        Related(id="2026-05-03-flashinfer-sm120-rejected-after-oom-restart", title="SGLang on Blackwell", score=1.0),
        Related(id="cuda-out-of-memory", title="CUDA out of memory", score=0.61, kind="pattern")]})
    report = founding.model_copy(update={"findings": [top], "warnings": ["x.log: 3 line(s) are not valid UTF-8"]})
    plain = flat(Page(to_html(report)).text)
    assert ("Past incidents like this one SGLang on Blackwell (2026-05-03, linked by the postmortem) — "
            "triage kb show 2026-05-03-flashinfer-sm120-rejected-after-oom-restart") in plain
    assert "CUDA out of memory (similarity 0.61) — triage patterns show cuda-out-of-memory" in plain
    assert "x.log: 3 line(s) are not valid UTF-8" in plain
    assert "Why ranked #1" not in plain and "Why ranked #1" in flat(Page(to_html(report, explain=True)).text)


def test_log_text_is_escaped_everywhere() -> None:
    """A log line is data: its `<script>` is shown, never run, in evidence, lanes, tooltips,
    facts, the timeline table, and attributes."""
    ev = Evidence(path=f"logs/{HOSTILE}.log", line=3, text=f"RuntimeError: {HOSTILE}")
    finding = Finding(rank=1, id="cuda-out-of-memory", title=f"Not recognised: {HOSTILE}", severity=Severity.high,
                      confidence=Confidence.low, cause=HOSTILE, why=HOSTILE, fix=[HOSTILE], avoid=[HOSTILE],
                      references=[f"https://example.org/{HOSTILE}"], evidence=[ev], phase=HOSTILE,
                      symptoms=[Symptom(id=HOSTILE, title=HOSTILE, count=2, evidence=[ev])],
                      hypotheses=[Hypothesis(claim=HOSTILE, supported=True, evidence=[ev])],
                      related=[Related(id=HOSTILE, title=HOSTILE, score=0.5)], reasons=[HOSTILE])
    report = Report(
        inputs=[InputSummary(path=ev.path, format=InputForm.console, lines=3)], findings=[finding],
        facts={"x": Fact(name="x", label=HOSTILE, value=HOSTILE, evidence=ev)}, warnings=[HOSTILE],
        timeline=[TimelineEntry(time="2026-05-03T10:00:00Z", path=ev.path, line=1, host=HOSTILE, unit=HOSTILE,
                                kind="start", text=HOSTILE),
                  TimelineEntry(time=HOSTILE, path=ev.path, line=3, unit=HOSTILE, kind=HOSTILE, text=HOSTILE),
                  TimelineEntry(time="2026-05-03T10:00:05Z", path=ev.path, line=3, unit="u", kind="cuda-out-of-memory",
                                text=HOSTILE)])
    page = to_html(report, explain=True)
    doc = Page(page)
    assert "<script" not in page and "<img" not in page
    assert not {e.tag for e in doc.elements} & {"script", "img"}
    assert not [e for e in doc.elements if any(k.startswith("on") for k in e.attrs)]
    assert page.count("&lt;script&gt;") >= 20
    assert doc.text.count('<script>alert("x")</script>') >= 15  # shown to the reader as text
    assert doc.find("g", data_kind=HOSTILE)  # an attribute keeps the value whole, quoted


def test_redacted_report_holds_no_secret(library: CompiledLibrary) -> None:
    log = (b"2026-05-03T10:00:00+0000 gpu-7.cluster.internal python3[9]: HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 "
           b"Access to model meta-llama/Llama-3.1-8B is restricted. You must be authenticated to access it.\n"
           b"2026-05-03T10:00:01+0000 gpu-7.cluster.internal python3[9]: ValueError: bad connection to "
           b"https://user:s3cretpassw0rd@db.example.com/x token=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\n")
    secrets = ("hf_aBcDeF", "s3cretpassw0rd", "sk-proj-Ab3d", "cluster.internal", "db.example.com")
    report = analyze_bytes(log, library)
    plain = to_html(report)
    assert all(s in plain for s in secrets)  # the test would see a leak
    assert report.timeline and report.findings[0].id == "hf-gated-repo-needs-token"
    clean = to_html(redact_report(report, hosts=True))
    assert not [s for s in secrets if s in clean]
    assert "hf-gated-repo-needs-token" in clean and "[REDACTED]" in clean and "<svg" in clean


def test_no_timeline_no_picture_and_no_findings_said() -> None:
    empty = Report(inputs=[InputSummary(path="a.log", format=InputForm.console, lines=5)], findings=[])
    page = to_html(empty)
    assert "<svg" not in page and "No failure found: no pattern matched and no error line was seen." in page


# ---------------------------------------------------------------- the timeline picture

def test_chain_arrows_run_from_step_to_step_and_to_the_symptoms(founding: Report, page: str) -> None:
    doc = Page(page)
    marks = markers(doc)
    assert len(marks) == len(founding.timeline)
    arrows = [e for e in doc.find("path") if "arrow" in e.attrs.get("class", "").split()]
    chain = [(marks[a.attrs["data-from"]], marks[a.attrs["data-to"]]) for a in arrows
             if a.attrs["data-kind"] == "chain"]
    # OOM kill (line 2) → restart (line 8) → FlashInfer's refusal (line 18): the chain's evidence, in order
    assert [(a.attrs["data-line"], b.attrs["data-line"]) for a, b in chain] == [("2", "8"), ("8", "18")]
    assert [e.line for e in founding.findings[0].evidence] == [2, 8, 18]
    assert {a.attrs["data-finding"] for a in arrows} == {"1", "2"}
    # finding #2 (the /dev/null CUDA_HOME) folds the general nvcc pattern and the build failure it
    # explains: its arrows run from its own first line to theirs
    second = [a for a in arrows if a.attrs["data-finding"] == "2"]
    assert {a.attrs["data-kind"] for a in second} == {"symptom"}
    own_line = str(founding.findings[1].first_line)
    assert {marks[a.attrs["data-from"]].attrs["data-line"] for a in second} == {own_line}
    folded_under_second = {s.id for s in founding.findings[1].symptoms}
    assert {marks[a.attrs["data-to"]].attrs["data-kind"] for a in second} == folded_under_second
    folding = [a for a in arrows if a.attrs["data-kind"] == "symptom" and a.attrs["data-finding"] == "1"]
    symptoms = {marks[a.attrs["data-to"]].attrs["data-line"] for a in folding}
    assert {marks[a.attrs["data-from"]].attrs["data-kind"] for a in folding} == {GATE}
    folded = {s.id for s in founding.findings[0].symptoms} - set(founding.findings[0].members)
    assert symptoms == {str(e.line) for e in founding.timeline if e.kind in folded}
    assert "45" not in symptoms  # finding #2's own line is not a symptom of #1
    for a in arrows:  # the geometry: an arrow starts and ends at the centres of its markers
        start, end = ends(a)
        assert start == pytest.approx(centre(marks[a.attrs["data-from"]]), abs=0.11)
        assert end == pytest.approx(centre(marks[a.attrs["data-to"]]), abs=0.11)


def test_markers_say_what_each_entry_is(founding: Report, page: str) -> None:
    marks = markers(Page(page))
    by_line = {int(m.attrs["data-line"]): m for m in marks.values()}
    assert by_line[2].attrs["data-role"] == "member" and by_line[2].attrs["data-finding"] == "1"  # the OOM kill
    assert by_line[18].attrs["data-role"] == "root" and by_line[18].attrs["data-finding"] == "1"
    assert by_line[45].attrs["data-role"] == "root" and by_line[45].attrs["data-finding"] == "2"
    assert by_line[23].attrs["data-role"] == "symptom"
    assert [by_line[n].attrs["data-role"] for n in (5, 8, 9, 44)] == ["exit", "restart", "start", "start"]
    assert "data-finding" not in by_line[8].attrs
    # distinct shapes: a restart is a diamond, an exit a square, a start a triangle, a finding a numbered circle
    for role, shape in (("restart", '<path d="M0,-'), ("exit", "<rect "), ("start", '<path d="M-'),
                        ("root", "<circle ")):
        drawn = re.search(rf'<g class="mark"[^>]* data-role="{role}".*?</g>', page)
        assert drawn and shape in drawn[0], role
    legend = flat(Page(page).text)
    for text in ("start", "restart", "exit", "finding n (of a chain: its root cause)", "a symptom finding n explains",
                 "chain: one step leads to the next", "colour: critical"):
        assert text in legend


def test_lanes_per_unit_and_per_host(founding: Report, page: str) -> None:
    labels, lane_of = lanes(founding.timeline)
    assert labels == ["kernel", "sglang-k26.service", "python3", "systemd"]
    assert [labels[i] for i in lane_of] == [e.unit for e in founding.timeline]
    marks = markers(Page(page))
    assert [int(marks[f"m{i}"].attrs["data-lane"]) for i in range(len(founding.timeline))] == lane_of

    def entry(host: str | None, unit: str | None, path: str = "a.log") -> TimelineEntry:
        return TimelineEntry(time=None, path=path, line=1, host=host, unit=unit, kind="start", text="x")

    two_hosts = [entry("n1", "vllm"), entry("n2", "vllm"), entry("n1", "kernel"), entry(None, None, "b/rank0.log")]
    assert lanes(two_hosts) == (["n1 · vllm", "n1 · kernel", "n2 · vllm", "rank0.log"], [0, 2, 1, 3])  # by host
    ranks = [entry(None, None, f"logs/rank{n}.log") for n in (0, 1, 0)]
    assert lanes(ranks) == (["rank0.log", "rank1.log"], [0, 1, 0])
    many = [entry("n1", f"unit{i}") for i in range(14)]
    labels, lane_of = lanes(many)
    assert len(labels) == 10 and labels[-1] == "5 more units" and lane_of[-1] == 9


def test_time_axis_real_times_cut_gaps_and_untimed_entries(founding: Report, page: str) -> None:
    doc = Page(page)
    marks = markers(doc)
    timed = sorted((e.time or "", centre(marks[f"m{i}"])[0]) for i, e in enumerate(founding.timeline))
    assert [x for _t, x in timed] == sorted(x for _t, x in timed)  # later is further right
    ticks = [g.attrs["data-time"] for g in doc.find("g") if g.attrs.get("class") == "tick"]
    assert ticks[0] == "2026-05-03T09:58:10Z" and "2026-05-03T10:35:20Z" in ticks
    breaks = [flat(g.text) for g in doc.find("g") if g.attrs.get("class") == "break"]
    assert breaks == ["8 min", "21 min", "7 min"]  # the quiet stretches between the bursts
    # one burst is drawn on a linear scale: 09:58:10, 09:58:11 and 09:58:31 keep their proportions
    x = {e.line: centre(marks[f"m{i}"])[0] for i, e in enumerate(founding.timeline)}
    assert (x[8] - x[2]) / (x[5] - x[2]) == pytest.approx(21, rel=0.03)
    # entries without a time: a strip of their own at the right, in line order
    untimed = [e.model_copy(update={"time": None, "line": 100 + k}) for k, e in enumerate(founding.timeline[:3])]
    mixed = Page(to_html(founding.model_copy(update={"timeline": [*founding.timeline, *reversed(untimed)]})))
    marks = markers(mixed)
    right = [centre(marks[f"m{len(founding.timeline) + k}"])[0] for k in range(3)]
    assert min(right) > max(centre(m)[0] for m in list(marks.values())[:len(founding.timeline)])
    assert right == sorted(right, reverse=True)  # appended in reverse line order, drawn in line order
    assert "untimed:" in mixed.text and "no time" in [flat(g.text) for g in mixed.find("g")
                                                      if g.attrs.get("class") == "break"]


# ---------------------------------------------------------------- the CLI

def run_triage(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "analyzer", "--no-kb", *args], capture_output=True, cwd=cwd,
                          timeout=120)


def test_cli_prints_html_or_writes_any_format_to_a_file(tmp_path: Path) -> None:
    res = run_triage(EXAMPLE, "--format", "html")
    assert res.returncode == 0 and res.stdout.startswith(b"<!DOCTYPE html>") and res.stderr == b""
    assert b'<article class="finding sev-critical" id="finding-1"' in res.stdout
    out = tmp_path / "report.html"
    wrote = run_triage(EXAMPLE, "--format", "html", "--out", str(out))
    assert wrote.returncode == 0 and wrote.stdout == b"" and out.read_bytes() == res.stdout
    md = tmp_path / "report.md"
    assert run_triage("--format", "markdown", "--out", str(md), EXAMPLE).stdout == b""
    assert md.read_text() == run_triage("--format", "markdown", EXAMPLE).stdout.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]  # no temporary file left
    failing = run_triage(EXAMPLE, "--format", "html", "--fail-on", "high", "--out", str(out))
    assert failing.returncode == 1 and failing.stdout == b""


def test_cli_unwritable_out_is_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    for target, reason in ((blocker / "report.html", "Not a directory"), (tmp_path, "Is a directory"),
                           (tmp_path / "missing" / "r.html", "No such file or directory")):
        res = run_triage(EXAMPLE, "--format", "html", "--out", str(target))
        err = res.stderr.decode()
        assert res.returncode == 2 and res.stdout == b"", err
        assert err == f"triage: error: {target}: cannot write the report: {reason}\n", err
    assert blocker.read_text() == "not a folder\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from analyzer.errors import TriageError
    from analyzer.render import save

    target = tmp_path / "report.html"
    target.write_text("the previous report\n")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(TriageError, match="cannot write the report: No space left on device"):
        save(target, "<!DOCTYPE html>" + "x" * 100_000)
    assert target.read_text() == "the previous report\n" and [p.name for p in tmp_path.iterdir()] == ["report.html"]


# ---------------------------------------------------------------- in a real browser

def _geometry(tab: BrowserTab) -> list[dict[str, Any]]:
    """Each arrow's two ends and the centres of the markers it names, in the page's pixels."""
    return tab.page.evaluate("""() => {
        const centre = el => { const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; };
        return [...document.querySelectorAll('svg.timeline path.arrow')].map(a => {
            const m = a.getScreenCTM(), n = a.getTotalLength();
            const at = d => {
                const p = a.getPointAtLength(d);
                return [m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f];
            };
            return {kind: a.dataset.kind, from: a.dataset.from, to: a.dataset.to, start: at(0), end: at(n),
                    fromCentre: centre(document.getElementById(a.dataset.from)),
                    toCentre: centre(document.getElementById(a.dataset.to))};
        });
    }""")


def test_founding_report_in_chromium_arrows_meet_marker_centres(browser: Any, page: str, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    for width in (1280, 700, 420):  # a desktop, a narrow window, a phone: the picture scales, the geometry holds
        with BrowserTab(browser, width, 900) as tab:
            tab.page.goto(path.as_uri())
            tab.page.wait_for_load_state("load")
            assert tab.errors == [], tab.errors
            arrows = _geometry(tab)
            assert sorted(a["kind"] for a in arrows).count("chain") == 2 and len(arrows) >= 5
            for a in arrows:
                assert a["start"] == pytest.approx(a["fromCentre"], abs=2.5), a
                assert a["end"] == pytest.approx(a["toCentre"], abs=2.5), a
            box = tab.page.evaluate("(() => { const r = document.querySelector('svg.timeline')"
                                    ".getBoundingClientRect(); return [r.width, r.height]; })()")
            assert 0 < box[0] <= width and box[1] > 100
            assert tab.page.evaluate("document.documentElement.scrollWidth") <= width


def test_founding_report_prints_on_a4_with_nothing_cut(browser: Any, page: str, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    with BrowserTab(browser, PRINTABLE_PX, 1000) as tab:
        tab.page.emulate_media(media="print")
        tab.page.goto(path.as_uri())
        tab.page.wait_for_load_state("load")
        assert tab.errors == [], tab.errors
        svg = tab.page.evaluate("(() => { const r = document.querySelector('svg.timeline').getBoundingClientRect();"
                                " return [r.left, r.right]; })()")
        assert svg[0] >= 0 and svg[1] <= PRINTABLE_PX
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= PRINTABLE_PX
        widest = tab.page.evaluate("Math.max(...[...document.querySelectorAll('main *')]"
                                   ".map(e => e.getBoundingClientRect().right))")
        assert widest <= PRINTABLE_PX + 0.5, widest
        pdf = tab.page.pdf(format="A4")
    assert pdf.startswith(b"%PDF")
    boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    assert boxes and all(float(w) == pytest.approx(A4_WIDTH_PT, abs=2) for w, _h in boxes)
    assert 1 <= pages <= 8 and len(boxes) == pages


def test_the_readme_screenshot_is_small_and_regenerates(tmp_path: Path) -> None:
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG") and SCREENSHOT.stat().st_size < 400_000
    assert f"]({SCREENSHOT.relative_to(ROOT)})" in (ROOT / "README.md").read_text()
    out = tmp_path / "shot.png"
    res = subprocess.run([sys.executable, "scripts/screenshot_report.py", "--out", str(out)], capture_output=True,
                         cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr.decode()
    data = out.read_bytes()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert data.startswith(b"\x89PNG") and len(data) < 400_000 and width == 1000 and 400 < height < 1200
