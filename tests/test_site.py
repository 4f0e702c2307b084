"""The static site (`triage site build`): every pattern and postmortem has a page, every
internal link resolves, nothing external is loaded, secrets are refused, and in a real
headless Chromium the pages load without console errors, search finds the founding
incident by an error word and by a paraphrase, and a pattern page shows its fixture.

The site is built once per session, with a real index (all-MiniLM-L6-v2) in a tmp path.
Screenshots go to $TRIAGE_SCREENSHOTS, or a folder of the session's tmp dir; the path is
printed. Chromium is Debian's (scripts/install-system-packages), driven by Playwright
(the `browser` fixture of tests/conftest.py).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from analyzer.data import benign_logs, builtin_patterns, corpus_logs, data_dir
from analyzer.kb.index import IndexPlan
from analyzer.kb.postmortems import load_kb
from analyzer.library.load import load_library
from analyzer.site import paths
from analyzer.site.build import MARKER, BuildOptions, BuildResult, build_site
from analyzer.site.guard import SecretInPage, find_secret
from analyzer.site.markdown import inline, render
from tests.conftest import BrowserTab
from tests.test_kb import QUERIES

FOUNDING = "2026-05-03-flashinfer-sm120-rejected-after-oom-restart"
GATE = "flashinfer-sm12x-needs-cuda-12-9"
FOUNDING_PATTERNS = {GATE, "cuda-home-has-no-nvcc"}
FAKE_TOKEN = "hf_" + "Zq7RkWm3Tp9XsLv2Nd8Fb4Hc6Jg1Ya5Ue0"
# a GPU that left the PCIe bus: NVIDIA's Xid 79, the write-up, and amdgpu's "device lost from bus!"
FELL_OFF_BUS_POSTMORTEM = "2025-10-25-gpu-fell-off-bus-without-xid-line-missed-by-health-monitor"
FELL_OFF_BUS = {"gpu-fell-off-bus-xid-79", FELL_OFF_BUS_POSTMORTEM, "amdgpu-device-lost-from-pcie-bus"}
# symptoms in other words than the catalogue's, each with the documents that answer it
PARAPHRASES: list[tuple[str, set[str]]] = [
    ("gpu vanished from the machine", FELL_OFF_BUS),
    ("the card disappeared after a while", FELL_OFF_BUS),
    ("server dies after reboot because compiler too old", {FOUNDING, GATE}),
    # any kernel OOM kill answers it (the host's, a Kubernetes container's, a Slurm step's, runc's)
    ("the process was terminated because ram ran out",
     {"host-oom-killed-service", "k8s-container-oomkilled-memory-limit", "slurm-step-oom-killed",
      "runc-container-init-oom-killed"}),
    ("not allowed to fetch the weights without logging in",
     {"hf-gated-repo-needs-token", "2024-06-16-infinity-gated-nv-embed-without-hf-token"}),
    ("collective operation stalled forever",
     {"nccl-watchdog-collective-timeout", "2024-05-07-vllm-041-nccl-watchdog-timeout-custom-allreduce"}),
    ("graphics driver updated automatically and now nothing works",
     {"nvidia-driver-kernel-module-mismatch",
      "2021-04-27-unattended-upgrade-nvml-driver-library-mismatch-on-gpu-nodes"}),
    # any program's "address already in use" answers it
    ("socket already taken by another program",
     {"serving-port-already-in-use", "2023-10-05-ollama-serve-port-11434-held-by-systemd-service",
      "torch-distributed-port-in-use", "llama-server-cannot-bind-http-port", "dcgm-hostengine-port-in-use",
      "ray-grpc-server-port-in-use", "ray-serve-http-port-bind-failed"}),
    ("pytorch wheel lacks kernels for my new card",
     {"torch-build-lacks-gpu-arch", "2025-07-25-vllm-0-10-0-torch-without-sm120-on-rtx-5070-ti"}),
    ("nvidia-smi freezes",
     {"gpu-gsp-rpc-timeout-xid-119-120", "2023-03-03-gsp-rpc-timeout-xid-119-driver-525-hangs-nvidia-smi"}),
    ("half precision not supported on old gpu",
     {"bf16-unsupported-gpu-compute-capability", "2023-09-05-vllm-bf16-model-rejected-on-v100"}),
]


# ---------------------------------------------------------------- the build, once per session

@pytest.fixture(scope="session")
def site_index(kb_index: IndexPlan) -> IndexPlan:
    return kb_index  # the session's one real index (tests/conftest.py)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, site_index: IndexPlan) -> BuildResult:
    out = tmp_path_factory.mktemp("site") / "site"
    return build_site(BuildOptions(out=out, pattern_roots=[builtin_patterns()], kb_root=data_dir("kb"),
                                   index=site_index.path, model=site_index.model, corpus=corpus_logs(),
                                   benign=benign_logs()))


@pytest.fixture(scope="session")
def site(built: BuildResult) -> Path:
    return built.out


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("TRIAGE_SCREENSHOTS") or tmp_path_factory.getbasetemp() / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# ---------------------------------------------------------------- pages and links, no browser

def test_every_pattern_and_postmortem_has_a_page(site: Path, built: BuildResult) -> None:
    library = load_library([builtin_patterns()])
    postmortems = load_kb(data_dir("kb"))
    missing = [p.id for p in library.patterns if not (site / paths.pattern(p.id)).is_file()]
    missing += [pm.id for pm in postmortems if not (site / paths.postmortem(pm.id)).is_file()]
    assert missing == [], f"no page for: {missing}"
    for p in library.patterns:
        assert (site / paths.area(p.area)).is_file()
        page = (site / paths.pattern(p.id)).read_text()
        assert f"<code>{p.id}</code>" in page
    assert built.patterns == len(library.patterns) and built.postmortems == len(postmortems)
    assert built.pages > len(library.patterns) + len(postmortems)
    oom = (site / paths.pattern("cuda-out-of-memory")).read_text()  # its statistics say what they count
    assert "of the 20 development-corpus logs, it fired on" in oom and "real failure logs it fired on" not in oom
    assert "not that it is rare" in oom


def test_a_tag_called_index_has_its_own_page_beside_the_tags_listing(site: Path) -> None:
    # uv-first-index-lacks-requested-version is tagged `index` (uv's --index option)
    assert paths.tag("index") != paths.TAGS and paths.area("index") != paths.AREAS
    page = (site / paths.tag("index")).read_text()
    assert "uv-first-index-lacks-requested-version" in page
    assert paths.tag("index").removeprefix("tags/") in (site / paths.TAGS).read_text()  # the listing links to it


def test_every_generated_file_names_its_source(site: Path) -> None:
    for path in site.rglob("*"):
        if path.is_file() and path.name != MARKER:
            head = "\n".join(path.read_text().split("\n")[:2])
            assert re.search(r"(generated|copied) by triage site build from \S", head), path


class Links(HTMLParser):
    """Every href/src of a page, and every id it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.links.append((tag, name, value))


def _parse(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text())
    return parser


def test_every_internal_link_resolves_and_every_page_is_reachable(site: Path) -> None:
    """Crawl from the index: each relative link names a file of the build (and an id in it,
    for #fragments); each page is reached; nothing is loaded from outside."""
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    parsed: dict[str, Links] = {}
    seen, todo, broken, external = {"index.html"}, ["index.html"], [], []
    while todo:
        page = todo.pop()
        links = parsed.setdefault(page, _parse(site / page))
        for tag, attr, value in links.links:
            parts = urlsplit(value)
            if parts.scheme or value.startswith("//"):
                if tag != "a" or parts.scheme not in ("http", "https"):
                    external.append(f"{page}: <{tag} {attr}={value}>")  # only plain links may leave the site
                continue
            target = (Path(page).parent / unquote(parts.path)).as_posix() if parts.path else page
            target = os.path.normpath(target)
            if not (site / target).is_file():
                broken.append(f"{page}: {value}")
                continue
            if parts.fragment and target.endswith(".html"):
                ids = parsed.setdefault(target, _parse(site / target)).ids
                if parts.fragment not in ids:
                    broken.append(f"{page}: {value} (no such id)")
            if target.endswith(".html") and target not in seen:
                seen.add(target)
                todo.append(target)
    assert broken == [] and external == [], (broken[:20], external[:20])
    assert pages - seen == set(), f"pages no link reaches: {sorted(pages - seen)[:20]}"
    script = (site / "assets" / "search-index.js").read_text()
    urls = re.findall(r'"u":"([^"]+)"', script)
    assert urls and all((site / u).is_file() for u in urls)


# ---------------------------------------------------------------- the guard

def _kb_with(tmp_path: Path, text: str) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / f"{FOUNDING}.md").write_text(text)
    return kb


def test_build_refuses_a_postmortem_with_a_secret(tmp_path: Path) -> None:
    original = (data_dir("kb") / f"{FOUNDING}.md").read_text()
    leaky = original.replace("## How it was fixed\n", f"## How it was fixed\n\nThe unit had HF_TOKEN={FAKE_TOKEN}.\n")
    assert leaky != original
    kb = _kb_with(tmp_path, leaky)
    out = tmp_path / "out"
    with pytest.raises(SecretInPage) as err:
        build_site(BuildOptions(out=out, pattern_roots=[builtin_patterns()], kb_root=kb))
    message = str(err.value)
    assert f"postmortems/{FOUNDING}.html" in message and "hugging face token" in message
    assert f"kb/{FOUNDING}.md" in message and FAKE_TOKEN[4:] not in message  # the secret is not repeated
    assert not out.exists()  # nothing was published


def test_build_refuses_a_pattern_with_a_secret_and_keeps_the_previous_site(tmp_path: Path) -> None:
    patterns = tmp_path / "patterns"
    area = patterns / "toolchain"
    area.mkdir(parents=True)
    src = builtin_patterns() / "toolchain"
    shutil.copy(src / f"{GATE}.log", area / f"{GATE}.log")
    yaml = (src / f"{GATE}.yaml").read_text().replace(
        "fix:\n", f'fix:\n  - "Log in first: `huggingface-cli login --token {FAKE_TOKEN}`."\n', 1)
    (area / f"{GATE}.yaml").write_text(yaml)
    kb = _kb_with(tmp_path, (data_dir("kb") / f"{FOUNDING}.md").read_text())
    out = tmp_path / "out"
    clean = (src / f"{GATE}.yaml").read_text()
    (area / f"{GATE}.yaml").write_text(clean)
    build_site(BuildOptions(out=out, pattern_roots=[patterns], kb_root=kb))
    before = (out / paths.pattern(GATE)).read_text()
    (area / f"{GATE}.yaml").write_text(yaml)
    with pytest.raises(SecretInPage, match=rf"patterns/{GATE}\.html.*patterns/toolchain/{GATE}\.yaml"):
        build_site(BuildOptions(out=out, pattern_roots=[patterns], kb_root=kb))
    assert (out / paths.pattern(GATE)).read_text() == before


def test_build_refuses_to_replace_a_folder_it_did_not_build(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    kb = _kb_with(tmp_path, (data_dir("kb") / f"{FOUNDING}.md").read_text())
    with pytest.raises(Exception, match="did not build"):
        build_site(BuildOptions(out=out, pattern_roots=[builtin_patterns()], kb_root=kb))
    assert (out / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize(("text", "secret"), [
    (f"export HF_TOKEN={FAKE_TOKEN}", True),
    ("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", True),
    ("password=letmein", True),
    ("curl -H &quot;Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc&quot;", True),
    ("Treat the token as a secret: environment file or secret store", False),
    ("pass the token: HF_TOKEN=$HF_TOKEN or --token &lt;token&gt;", False),
    ("secret=[REDACTED]", False),
    # huggingface_hub's LocalTokenNotFoundError quotes the code that asked for a token
    ("Token is required (`token=True`), but no token found.", False),
    ("token=Truestory42", True),
])
def test_secret_detection(text: str, secret: bool) -> None:
    assert (find_secret(text) is not None) == secret


# ---------------------------------------------------------------- the Markdown subset

def test_markdown_escapes_everything_and_keeps_the_subset() -> None:
    html = render("## Why <it>\n\nRun `rm -rf <dir>` and **then** [read](https://x.org/a?b=1&c=2) "
                  "or [click](javascript:alert(1)).\n\n- one\n- two `x`\n\n1. first\n2. second\n\n"
                  "```log\n<script>alert(1)</script>\n```\n\n<img src=x onerror=alert(1)>\n")
    assert "<script>" not in html and "<img" not in html and "javascript:" not in html.replace(
        "(javascript:alert(1))", "")
    assert '<h2 id="why-it">Why &lt;it&gt;</h2>' in html
    assert "<code>rm -rf &lt;dir&gt;</code>" in html and "<strong>then</strong>" in html
    assert '<a href="https://x.org/a?b=1&amp;c=2"' in html
    assert "<ul><li>one</li>\n<li>two <code>x</code></li></ul>" in html and "<ol><li>first</li>" in html
    assert '<pre class="code lang-log"><span class="lang">log</span><code>&lt;script&gt;' in html
    assert 'class="copy" data-copy="apt-get install cuda-nvcc-13-0"' in inline(
        "run `apt-get install cuda-nvcc-13-0`", copy=True)


# ---------------------------------------------------------------- the command line and the server

def test_site_commands_are_wired(tmp_path: Path, site_index: IndexPlan, built: BuildResult) -> None:
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "analyzer", "site", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "build" in res.stdout and "serve" in res.stdout
    res = subprocess.run([sys.executable, "-m", "analyzer", "site", "build", "--out", str(tmp_path / "s"),
                          "--index", str(site_index.path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert re.search(r"built \d+ pages", res.stdout) and (tmp_path / "s" / "index.html").is_file()


@pytest.fixture(scope="session")
def server(site: Path) -> Iterator[str]:
    from analyzer.site.serve import make_server, url_of

    httpd = make_server(site, 0)
    assert httpd.server_address[0] == "127.0.0.1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield url_of(httpd)
    httpd.shutdown()
    httpd.server_close()


def test_serve_answers_on_localhost_only(server: str) -> None:
    assert server.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(server + paths.pattern(GATE), timeout=10) as r:
        assert r.status == 200 and "text/html" in r.headers["Content-Type"]
    with urllib.request.urlopen(server + "assets/search.js", timeout=10) as r:
        assert "javascript" in r.headers["Content-Type"]


# ---------------------------------------------------------------- in a real browser

class Tab(BrowserTab):
    """A tab of the site: records errors (tests/conftest.py's `browser`), types into its search box."""

    def search(self, query: str) -> list[str]:
        """Type `query` as a person would; the ids of the results, best first."""
        self.page.fill("#q", "")
        self.page.type("#q", query, delay=5)
        # the results of this query, not the previous one's (the pages' CSP forbids wait_for_function's eval)
        self.page.wait_for_selector(f'#results[data-query="{query}"] li', timeout=5000)
        hrefs = self.page.eval_on_selector_all("#results a.r-title", "els => els.map(e => e.getAttribute('href'))")
        return [Path(h).stem for h in hrefs]


def _file_url(site: Path, page: str) -> str:
    return (site / page).as_uri()


def test_index_loads_without_console_errors(browser: Any, site: Path, server: str, screenshots: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    for url in (_file_url(site, "index.html"), server + "index.html"):
        with Tab(browser) as tab:
            tab.page.goto(url)
            tab.page.wait_for_load_state("load")
            assert tab.page.evaluate("typeof window.triageSearch") == "function", url
            assert tab.page.locator("table.matrix").is_visible()
            assert tab.errors == [], (url, tab.errors)
            if url.startswith("file:"):
                tab.page.screenshot(path=str(screenshots / "index.png"), full_page=True)
    with capsys.disabled():
        print(f"\n[site] screenshots: {screenshots}")


def test_typing_nvcc_shows_the_founding_incidents_pattern(browser: Any, site: Path) -> None:
    with Tab(browser) as tab:
        tab.page.goto(_file_url(site, "index.html"))
        ids = tab.search("nvcc")
        assert FOUNDING_PATTERNS & set(ids[:10]), ids
        assert tab.page.locator("#browse").is_hidden()
        assert tab.errors == []


def test_a_paraphrase_finds_the_founding_postmortem(browser: Any, site: Path, screenshots: Path) -> None:
    with Tab(browser) as tab:
        tab.page.goto(_file_url(site, "index.html"))
        ids = tab.search("flashinfer refuses blackwell after a restart")
        assert FOUNDING in ids[:3], ids
        tab.page.screenshot(path=str(screenshots / "search.png"))
        # no word of the write-up's title but "gpu": "vanished" reaches its symptom's "disappeared" through
        # the term expansions, and its result says so (a pattern that says "vanishing" may rank above it)
        ids = tab.search("gpu vanished from the machine")
        assert ids[0] in FELL_OFF_BUS, ids
        assert FELL_OFF_BUS_POSTMORTEM in ids[:3], ids
        hit = tab.page.locator("#results li").nth(ids.index(FELL_OFF_BUS_POSTMORTEM))
        assert "vanished → disappear" in hit.inner_text()
        assert tab.errors == []


def test_search_quality_on_the_knowledge_base_queries(browser: Any, site: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The queries `triage search` is held to (tests/test_kb.py) and more paraphrases,
    answered offline in the browser without the model: in the top 3, with the
    embedding-derived term expansions and without them (lexical matching alone)."""
    queries = QUERIES + PARAPHRASES
    with Tab(browser) as tab:
        tab.page.goto(_file_url(site, "index.html"))

        answers: dict[str, list[str]] = {}

        def ranks() -> list[int | None]:
            out = []
            for query, expected in queries:
                ids = tab.page.evaluate("q => window.triageSearch(q)", query)
                answers.setdefault(query, ids[:5])
                out.append(next((i + 1 for i, d in enumerate(ids) if d in expected), None))
            return out

        full = ranks()
        tab.page.evaluate("() => { for (const k in window.TRIAGE_TERMS.terms) delete window.TRIAGE_TERMS.terms[k]; }")
        lexical = ranks()

    def top(rs: list[int | None], n: int) -> int:
        return sum(1 for r in rs if r is not None and r <= n)

    with capsys.disabled():
        print(f"\n[site] offline search over {len(queries)} queries: top 1 {top(full, 1)}, top 3 {top(full, 3)} "
              f"with term expansions; top 1 {top(lexical, 1)}, top 3 {top(lexical, 3)} lexical only")
    missed = [(q, answers[q]) for (q, _e), r in zip(queries, full, strict=True) if r is None or r > 3]
    assert top(full, 3) >= 0.9 * len(queries), missed
    assert top(full, 1) >= top(lexical, 1) and top(full, 3) >= top(lexical, 3)


def test_a_pattern_page_shows_its_fixture_and_copyable_fix(browser: Any, site: Path, screenshots: Path) -> None:
    with Tab(browser) as tab:
        tab.page.goto(_file_url(site, paths.pattern(GATE)))
        example = tab.page.locator("section.examples li.example.ok").first
        assert example.is_visible()
        assert "SM 12.x requires CUDA >= 12.9" in example.inner_text()
        assert tab.page.locator("section.examples mark").first.inner_text() == "SM 12.x requires CUDA >= 12.9"
        assert tab.page.locator("section.fix button.copy").count() >= 3
        button = tab.page.locator("section.fix button.copy").first
        button.click()  # the label changes when the clipboard's promise settles
        tab.page.wait_for_function("b => b.innerText !== 'copy'", arg=button.element_handle(), timeout=5000)
        assert button.inner_text() in ("copied", "select it")
        assert tab.page.locator(f'a[href="../{paths.postmortem(FOUNDING)}"]').first.is_visible()
        tab.page.screenshot(path=str(screenshots / "pattern.png"), full_page=True)
        assert tab.errors == []


def test_pages_fit_a_narrow_screen(browser: Any, site: Path, screenshots: Path) -> None:
    for page in ("index.html", paths.pattern(GATE), paths.postmortem(FOUNDING)):
        with Tab(browser, 390, 844) as tab:
            tab.page.goto(_file_url(site, page))
            width = tab.page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{page} scrolls sideways on a phone: {width}px"
            if page != "index.html":
                tab.page.screenshot(path=str(screenshots / f"narrow-{Path(page).stem}.png"))
            assert tab.errors == []


def test_build_report(built: BuildResult, capsys: pytest.CaptureFixture[str]) -> None:
    assert built.seconds > 0 and built.expansions > 1000  # the model's word neighbours were shipped
    with capsys.disabled():
        print(f"\n[site] {built.pages} pages, {built.files} files, {built.expansions} words with expansions, "
              f"built in {built.seconds:.1f}s")
