"""What the `triage site …` commands do; printing goes through analyzer.render."""

from __future__ import annotations

from pathlib import Path

from analyzer.data import builtin_patterns, data_dir
from analyzer.errors import TriageError
from analyzer.render import print_lines, print_warning
from analyzer.site.build import BuildOptions, BuildResult, build_site
from analyzer.site.html import site_dir


def default_out() -> Path:
    """site/_build of the checkout; ./site/_build when triage runs from an installed wheel."""
    site = site_dir()
    bundled = site.parent.name == "_data"
    return Path.cwd() / "site" / "_build" if bundled else site / "_build"


def build(out: Path | None, index: Path | None, model: str | None) -> BuildResult:
    from analyzer.data import benign_logs, corpus_logs
    from analyzer.kb.index import ensure, plan

    p = plan(index, model)
    if ensure(p) is not None:
        print_warning(f"built the search index {p.path} first")
    opts = BuildOptions(out=out or default_out(), pattern_roots=[builtin_patterns()], kb_root=data_dir("kb"),
                        index=p.path, model=p.model, corpus=corpus_logs(), benign=benign_logs())
    result = build_site(opts)
    print_lines([f"built {result.pages} pages ({result.patterns} patterns, {result.postmortems} postmortems, "
                 f"areas, tags, severities) and {result.files - result.pages} other files in {result.seconds:.1f}s "
                 f"into {result.out}",
                 f"open {result.out / 'index.html'} in a browser, or run: triage site serve"])
    return result


def serve(directory: Path | None, port: int) -> None:
    from analyzer.site.serve import make_server, url_of

    root = directory or default_out()
    if not (root / "index.html").is_file():
        if directory is not None:
            raise TriageError("no site here (no index.html)", root, help="build it: triage site build --out DIR")
        build(None, None, None)
    try:
        server = make_server(root, port)
    except OSError as exc:
        raise TriageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
                          help="choose another port with --port") from exc
    print_lines([f"serving {root} at {url_of(server)} (127.0.0.1 only; Ctrl-C stops)"])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print_lines(["stopped"])
    finally:
        server.server_close()
