"""The build: gather the content, render every page and data file, check each one for
secrets, then publish the whole site at once (written beside the target, then swapped in),
so a refused or failed build leaves the previous site untouched."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import TriageError
from analyzer.site import paths
from analyzer.site.content import Content, gather
from analyzer.site.guard import check_page
from analyzer.site.html import GENERATOR, site_dir
from analyzer.site.layout import Page
from analyzer.site.listings import index_page, listing_pages
from analyzer.site.pages import pattern_page, postmortem_page
from analyzer.site.related import RelatedLinks, load_related
from analyzer.site.search_index import catalogue_texts, records, script

MARKER = ".triage-site"
_COMMENTS = {".css": ("/* ", " */"), ".js": ("/* ", " */"), ".svg": ("<!-- ", " -->"), ".html": ("<!-- ", " -->")}


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    pattern_roots: Sequence[Path]
    kb_root: Path
    index: Path | None = None  # the DuckDB search index: related incidents; None shows explicit links only
    model: Path | None = None  # the embedding model: query-term expansions; None ships none
    words_cache: Path | None = None  # cached word vectors (see terms.py)
    corpus: Sequence[Path] = field(default_factory=list)  # real failure logs, for pattern stats
    benign: Sequence[Path] = field(default_factory=list)


@dataclass(frozen=True)
class BuildResult:
    out: Path
    pages: int  # HTML pages
    files: int  # every file written
    patterns: int
    postmortems: int
    expansions: int  # words with term expansions in the search data
    seconds: float


def render_pages(content: Content) -> list[Page]:
    pages = [index_page(content)]
    pages += [pattern_page(e, content) for e in content.patterns]
    pages += [postmortem_page(pm, content) for pm in content.postmortems]
    pages += listing_pages(content)
    seen: dict[str, str] = {}
    for pg in pages:
        if pg.path in seen:
            raise TriageError(f"two pages would be written to {pg.path}: from {seen[pg.path]} and {pg.source}")
        seen[pg.path] = pg.source
    return pages


def _expansions(content: Content, opts: BuildOptions) -> dict[str, list[tuple[str, float]]]:
    if opts.model is None:
        return {}
    from analyzer.site.terms import cache_path, expansions, model_embedder, vocabulary, words

    catalogue = sorted(words(catalogue_texts(content)))
    cache = opts.words_cache or cache_path(opts.model.name if opts.model.name != "model" else "all-MiniLM-L6-v2")
    return expansions(vocabulary(opts.model), catalogue, model_embedder(opts.model), cache)


def data_files(content: Content, terms: dict[str, list[tuple[str, float]]]) -> list[Page]:
    index = {"version": 1, "docs": records(content)}
    words = {"version": 1, "about": "word -> [catalogue term, cosine similarity], from all-MiniLM-L6-v2 word "
             "embeddings; the browser adds them as weaker query terms", "terms": terms}
    src = "patterns/ and kb/ (analyzer/site/search_index.py)"
    return [Page(f"{paths.ASSETS}/search-index.js", script("TRIAGE_INDEX", index, src), src),
            Page(f"{paths.ASSETS}/search-terms.js", script("TRIAGE_TERMS", words, src + " and the embedding model"),
                 "the embedding model's word neighbours")]


def asset_files() -> list[Page]:
    """site/assets/*, each with a header naming where it comes from."""
    out = []
    for path in sorted((site_dir() / "assets").iterdir()):
        if not path.is_file() or path.suffix not in _COMMENTS:
            continue
        start, end = _COMMENTS[path.suffix]
        source = f"site/assets/{path.name}"
        header = f"{start}copied by {GENERATOR} from {source}; edit that file, not this one{end}\n"
        out.append(Page(f"{paths.ASSETS}/{path.name}", header + path.read_text(encoding="utf-8"), source))
    return out


def publish(files: Sequence[Page], out: Path) -> None:
    """Write `files` into a fresh folder beside `out`, then swap it in."""
    out = out.resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise TriageError("refusing to replace a folder that triage did not build", out,
                          help=f"choose an empty or new folder with --out (a site build holds a {MARKER} file)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    old = out.with_name(f".{out.name}.{os.getpid()}.old")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for f in files:
            target = tmp / f.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.html, encoding="utf-8")
        (tmp / MARKER).write_text(f"generated by {GENERATOR}: this folder is replaced by the next build\n")
        if out.exists():
            os.replace(out, old)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def build_site(opts: BuildOptions) -> BuildResult:
    start = time.perf_counter()
    related = load_related(opts.index) if opts.index is not None else RelatedLinks()
    content = gather(opts.pattern_roots, opts.kb_root, related, opts.corpus, opts.benign)
    pages = render_pages(content)
    terms = _expansions(content, opts)
    files = pages + data_files(content, terms) + asset_files()
    for f in files:
        check_page(f.path, f.html, f.source)
    publish(files, opts.out)
    return BuildResult(opts.out.resolve(), len(pages), len(files) + 1, len(content.patterns), len(content.postmortems),
                       len(terms), round(time.perf_counter() - start, 2))
