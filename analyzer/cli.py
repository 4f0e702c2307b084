"""The typer app: parse options, call the library, hand the result to render.

`triage FILE…` analyses logs (the `analyze` command is implied); subcommands group the
rest (`triage patterns …`). Heavy packages (torch, sentence-transformers, duckdb) are
imported only inside the commands that need them, never for `--help`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

# typer vendors click since 0.29 (pinned in pyproject); its exceptions are only named here
from typer._click.core import Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer._click.shell_completion import CompletionItem
from typer.core import TyperGroup

from analyzer import __version__
from analyzer.choices import Color, ExportFormat, Format, InputForm, Severity
from analyzer.errors import ExitCode, TriageError

if TYPE_CHECKING:
    from analyzer.library.compile import CompiledLibrary
    from analyzer.triage import JournalQuery

class _Root(TyperGroup):
    """Shell completion leaves paths (log files, folders) to the shell: an empty answer makes
    the installed script fall back to the shell's own file completion (bash `-o default`, zsh
    `_files`, fish), with its quoting and `~`. As `triage FILE` is `triage analyze FILE`, where
    what is typed begins both a subcommand and a path, the paths are offered here too."""

    def shell_complete(self, ctx: Context, incomplete: str) -> list[CompletionItem]:
        items = super().shell_complete(ctx, incomplete)
        if items and incomplete and not incomplete.startswith("-"):
            items += [CompletionItem(p) for p in _paths_starting(incomplete)]
        return items


def _paths_starting(prefix: str, most: int = 200) -> list[str]:
    """The files and folders (with a `/`) whose path begins with `prefix`, as typed."""
    stem = prefix.rpartition("/")[2]
    head = prefix[:len(prefix) - len(stem)]
    try:
        entries = sorted(os.scandir(os.path.expanduser(head) or "."), key=lambda e: e.name)
    except OSError:
        return []
    return [head + e.name + ("/" if e.is_dir() else "") for e in entries
            if e.name.startswith(stem) and (stem.startswith(".") or not e.name.startswith("."))][:most]


app = typer.Typer(
    name="triage", cls=_Root, no_args_is_help=True, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Find the root cause of a GPU/LLM-serving failure in its logs.\n\n"
         "Example: triage -u sglang    |    triage journal.log    |    journalctl -u sglang | triage",
)
patterns_app = typer.Typer(no_args_is_help=True, help="Browse and test the pattern library.")
app.add_typer(patterns_app, name="patterns")
kb_app = typer.Typer(no_args_is_help=True, help="The knowledge base of postmortems.")
app.add_typer(kb_app, name="kb")
site_app = typer.Typer(no_args_is_help=True, help="A static site of the patterns and postmortems.")
app.add_typer(site_app, name="site")

SUBCOMMANDS = {"analyze", "patterns", "kb", "search", "site", "fleet"}
COMPLETE_VAR = "_TRIAGE_COMPLETE"  # set by the completion script (`--install-completion`) for each TAB

IndexOpt = Annotated[Path | None, typer.Option("--index", help="The DuckDB index file (default: in ~/.cache/triage).")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Embedding model folder (default: all-MiniLM-L6-v2).")]


def _version(value: bool) -> None:
    if value:
        print(f"triage {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Find the root cause of a GPU/LLM-serving failure in its logs."""


PatternsOpt = Annotated[list[Path] | None, typer.Option(
    "--patterns", help="Extra pattern folder (a team's private patterns); repeatable.")]


def _pattern_ids(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion: the ids of the library and of the --patterns folders given so far,
    read from file names (no validation: a TAB must answer at once)."""
    from analyzer.data import builtin_patterns
    from analyzer.library.ids import pattern_ids

    given = set(ctx.params.get("ids") or [])
    roots = [builtin_patterns(), *(ctx.params.get("patterns") or [])]
    return [i for i in pattern_ids(roots) if i.startswith(incomplete) and i not in given]


def _postmortem_ids(incomplete: str) -> list[str]:
    from analyzer.data import data_dir
    from analyzer.kb.ids import postmortem_ids

    return [i for i in postmortem_ids(data_dir("kb")) if i.startswith(incomplete)]


@app.command()
def analyze(
    files: Annotated[list[str] | None, typer.Argument(
        help="Log files (.gz, .zst, binary .journal too); '-' reads stdin.", show_default=False)] = None,
    unit: Annotated[list[str] | None, typer.Option(
        "--unit", "-u", help="Read this machine's journal for a unit (`.service` optional, globs too), with "
        "systemd's and the kernel's lines of its time window; repeatable.", rich_help_panel="Journal")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", "-S", help="Journal entries from this time, in journalctl's syntax: -2h, "
        "'2026-05-14 10:00', yesterday.", rich_help_panel="Journal")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", "-U", help="Journal entries up to this time.", rich_help_panel="Journal")] = None,
    boot: Annotated[str | None, typer.Option(
        "--boot", "-b", help="One boot: alone this boot, -1 the one before, or a boot id.",
        rich_help_panel="Journal")] = None,
    kernel: Annotated[bool, typer.Option(
        "--dmesg", "-k", help="Kernel lines only (this boot unless -b says otherwise).",
        rich_help_panel="Journal")] = False,
    journal_file: Annotated[list[str] | None, typer.Option(
        "--file", help="A journal file of another machine (journalctl --file); repeatable.",
        rich_help_panel="Journal")] = None,
    journal_dir: Annotated[list[str] | None, typer.Option(
        "--journal-dir", "-D", help="A journal folder (journalctl --directory); repeatable.",
        rich_help_panel="Journal")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.terminal,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to this file instead of stdout.")] = None,
    fail_on: Annotated[Severity | None, typer.Option(
        "--fail-on", help="Exit 1 when a finding has this severity or higher.")] = None,
    patterns: PatternsOpt = None,
    input_format: Annotated[InputForm, typer.Option(
        "--input-format", help="Input form; 'auto' sniffs it.")] = InputForm.auto,
    follow: Annotated[bool, typer.Option(
        "--follow", help="Follow a live log (-u UNIT, '-', or a growing file): print each finding once it is "
        "complete, count repeats; with --fail-on, exit 1 at the first such finding.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show why each finding is ranked where it is.")] = False,
    index: IndexOpt = None,
    no_kb: Annotated[bool, typer.Option("--no-kb", help="Skip related postmortems and suggestions.")] = False,
    redact: Annotated[bool, typer.Option(
        "--redact", help="Remove secrets from the output; `--redact hosts` removes host names and addresses too."
    )] = False,
    redact_hosts: Annotated[bool, typer.Option("--redact-hosts", help="Same as `--redact hosts`.")] = False,
    color: Annotated[Color, typer.Option("--color", help="Colour the terminal report: auto, always (for less -R), "
                                                           "never.")] = Color.auto,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", min=0, help="Worker processes for several files or one large file (0: one per core).")] = 0,
    engine: Annotated[str, typer.Option("--engine", hidden=True, help="hyperscan|python|auto")] = "auto",
) -> int:
    """Analyse logs and report the most likely root causes, ranked.

    Example: triage --format markdown /var/log/sglang.log > incident.md
    """
    from analyzer import render
    from analyzer.triage import JournalQuery, load
    from analyzer.triage import analyze as run_analysis

    render.use_color(color)
    journal = JournalQuery(units=tuple(unit or ()), since=since, until=until, boot=boot, kernel=kernel,
                           files=tuple(journal_file or ()), directories=tuple(journal_dir or ()))
    if files and journal.filtered:
        raise TriageError("-u, --since, --until, -b and -k read a journal; give log files or those options, "
                          "not both (a binary journal file goes with --file)")
    reads_journal = journal.filtered or bool(journal.files or journal.directories)
    if not files and not reads_journal:
        if sys.stdin.isatty():
            raise TriageError("no input: give a log file, '-' for stdin, -u UNIT, or --journal-dir DIR")
        files = ["-"]  # `journalctl -u svc | triage`: the pipe is the input
    if follow and out is not None:
        raise TriageError("--follow prints as findings come; redirect its output instead of --out")
    library = load(patterns or [], _engine(engine))
    if follow:
        return _follow(files or [], journal if reads_journal else None, library, fmt, fail_on, explain,
                       knowledge=not no_kb, index=index, redact=redact or redact_hosts, hosts=redact_hosts)
    with render.progress_bar() as progress:
        report = run_analysis(files or [], library, input_format, journal if reads_journal else None,
                              knowledge=not no_kb,
                              index=index, progress=progress, jobs=jobs or min(os.cpu_count() or 1, 8))
    if redact or redact_hosts:
        from analyzer.redact import redact_report

        report = redact_report(report, hosts=redact_hosts)
    render.render(report, fmt, explain=explain, path=out)
    if fail_on is not None and any(f.severity.rank >= fail_on.rank for f in report.findings):
        return ExitCode.FINDINGS
    return ExitCode.OK


def _follow(files: list[str], journal: JournalQuery | None, library: CompiledLibrary, fmt: Format,
            fail_on: Severity | None, explain: bool, knowledge: bool, index: Path | None, redact: bool,
            hosts: bool) -> int:
    """`--follow`: findings as they complete, until the input ends or one meets --fail-on."""
    from analyzer import render
    from analyzer.follow import Follower, Update, follow, open_feed, open_journal_feed
    from analyzer.redact import redact_finding

    if fmt not in (Format.terminal, Format.json):
        raise TriageError("--follow prints to the terminal or as JSON lines (--format terminal|json)")
    if journal is None and len(files) != 1:
        raise TriageError("--follow reads one input: -u UNIT, '-' for a pipe, or one growing file")
    process = None
    if journal is not None:
        feed, process, warnings = open_journal_feed(journal)
        for warning in warnings:
            render.print_warning(warning)
        name, form = f"{', '.join(journal.units) or 'the journal'} (live)", InputForm.journal_json
    else:
        feed, name, form = open_feed(files[0]), files[0], InputForm.auto
    follower = Follower(library, name=name, form=form, knowledge=knowledge, index=index)
    view = render.FollowView(fmt, explain=explain)
    met = False

    def on_update(update: Update) -> bool:
        nonlocal met
        for f in update.new:
            view.finding(redact_finding(f, hosts=hosts) if redact else f)
            if fail_on is not None and f.severity.rank >= fail_on.rank:
                met = True
                return False  # exit at the first finding that meets --fail-on
        for f_id, count in update.grown.items():
            view.grown(f_id, follower.titles.get(f_id, f_id), follower.numbers.get(f_id, 0), count)
        _status()
        return True

    def _status() -> None:
        top = sorted(follower.known.items(), key=lambda kv: -kv[1])[:3]
        view.progress(name, follower.lines, follower.announced,
                      [(follower.numbers[k], n) for k, n in top if k in follower.numbers])

    try:
        follow(feed, follower, on_update, on_idle=_status)
    finally:
        view.done()
        if process is not None:
            process.terminate()
            process.wait()
    return ExitCode.FINDINGS if met else ExitCode.OK


@app.command()
def fleet(
    inputs: Annotated[list[str], typer.Argument(
        help="Node logs: a folder with one subfolder or file per node, files, globs (.gz, .zst, journal "
             "folders), or nodes' own `triage --format json` reports.", show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format (terminal, json, markdown).")
                   ] = Format.terminal,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write every node's findings as one table to this Parquet file (DuckDB, Spark, Trino).")
                   ] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", help="Run the per-node analysis as Ray tasks: on the cluster at this address (auto: the one "
                      "RAY_ADDRESS names), or `local` for a Ray instance started here.")] = None,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", min=0, help="Local worker processes (0: one per core); ignored with --ray.")] = 0,
    fail_on: Annotated[Severity | None, typer.Option(
        "--fail-on", help="Exit 1 when a finding has this severity or higher.")] = None,
    patterns: PatternsOpt = None,
) -> int:
    """Triage many nodes at once: which node failed first, and which failures are echoes.

    Example: triage fleet /srv/incident/ --out fleet.parquet    (one folder or file per node)
    """
    from analyzer import render
    from analyzer.fleet.driver import triage_fleet

    if fmt not in (Format.terminal, Format.json, Format.markdown):
        raise TriageError("triage fleet prints terminal, json or markdown")
    report = triage_fleet(inputs, jobs=jobs or min(os.cpu_count() or 1, 8), ray_address=ray, out=out,
                          extra_patterns=patterns or [])
    render.render_fleet(report, fmt)
    if fail_on is not None and any(f.severity.rank >= fail_on.rank for f in report.findings):
        return ExitCode.FINDINGS
    return ExitCode.OK


def _engine(name: str):  # type: ignore[no-untyped-def]
    from analyzer.scan import HyperscanEngine, PythonEngine, default_engine

    engines = {"hyperscan": HyperscanEngine, "python": PythonEngine, "auto": default_engine()}
    if name not in engines:
        raise TriageError(f"unknown engine {name!r} (hyperscan, python or auto)")
    return engines[name]


@patterns_app.command("list")
def patterns_list(
    area: Annotated[str | None, typer.Option("--area", help="Only this area.")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.terminal,
    patterns: PatternsOpt = None,
) -> int:
    """List the patterns of the library.

    Example: triage patterns list --area toolchain
    """
    from analyzer.commands import patterns as commands

    commands.list_patterns(patterns or [], area, fmt)
    return ExitCode.OK


@patterns_app.command("test")
def patterns_test(
    ids: Annotated[list[str] | None, typer.Argument(help="Pattern ids; all when none.",
                                                    autocompletion=_pattern_ids)] = None,
    patterns: PatternsOpt = None,
) -> int:
    """Run every pattern's fixture: must-match and must-not-match lines.

    Example: triage patterns test flashinfer-sm12x-needs-cuda-12-9
    """
    from analyzer.commands import patterns as commands

    return ExitCode.OK if commands.test_patterns(patterns or [], ids or []) else ExitCode.FINDINGS


@patterns_app.command("show")
def patterns_show(
    pattern_id: Annotated[str, typer.Argument(help="The pattern id.", autocompletion=_pattern_ids)],
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.terminal,
    patterns: PatternsOpt = None,
) -> int:
    """Show a pattern: its docs, regexes, fixture examples and sources.

    Example: triage patterns show cuda-home-has-no-nvcc
    """
    from analyzer.commands import patterns as commands

    commands.show_pattern(patterns or [], pattern_id, fmt)
    return ExitCode.OK


@patterns_app.command("lint")
def patterns_lint(patterns: PatternsOpt = None) -> int:
    """Check the library: schema, both regex engines, backtracking, overlaps, benign logs.

    Example: triage patterns lint --patterns ~/team-patterns
    """
    from analyzer.commands import patterns as commands

    return ExitCode.OK if commands.lint_patterns(patterns or []) else ExitCode.FINDINGS


@patterns_app.command("stats")
def patterns_stats(
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.terminal,
    patterns: PatternsOpt = None,
) -> int:
    """Per pattern: fixture hits, real-corpus hits, top-finding count, benign hits.

    Example: triage patterns stats --format json
    """
    from analyzer.commands import patterns as commands

    commands.stats_patterns(patterns or [], fmt)
    return ExitCode.OK


@patterns_app.command("new")
def patterns_new(
    pattern_id: Annotated[str, typer.Argument(help="Kebab-case id naming the failure.")],
    source: Annotated[str, typer.Option("--from", help="FILE:LINE of a real log line.")],
    area: Annotated[str, typer.Option("--area", help="Area folder.")] = "runtime",
    root: Annotated[Path | None, typer.Option(
        "--out", "--patterns", help="Pattern folder to write into (default: the patterns/ of the checkout you "
                                    "are in); --patterns is the same, as test and lint take it."
    )] = None,
) -> int:
    """Draft a pattern and its fixture from a real log line (secrets redacted; the logger's
    prefix left out of the regex, numbers as named groups).

    Example: triage patterns new vllm-engine-dead --from service.log:120 --area serving
    """
    from analyzer.commands import patterns as commands

    commands.new_pattern(pattern_id, area, source, root)
    return ExitCode.OK


@patterns_app.command("schema")
def patterns_schema(
    out: Annotated[Path | None, typer.Option("--out", help="Write here instead of stdout.")] = None,
    catalogue: Annotated[bool, typer.Option("--catalogue", help="The schema of catalogue files instead.")] = False,
) -> int:
    """Print the JSON Schema of pattern files (patterns/schema.json) or catalogues
    (patterns/catalogue.schema.json).

    Example: triage patterns schema --out patterns/schema.json
    """
    from analyzer.commands import patterns as commands

    commands.write_schema(out, catalogue)
    return ExitCode.OK


@patterns_app.command("export")
def patterns_export(
    out: Annotated[Path, typer.Option("--out", help="Folder for the rules: new, empty, or an earlier export's.")],
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="Rule language.")] = ExportFormat.sigma,
    lucene: Annotated[bool, typer.Option("--lucene", help="Regexes as Lucene reads them (the whole message, "
                                         "no anchors), for the Elasticsearch and OpenSearch backends.")] = False,
    patterns: PatternsOpt = None,
) -> int:
    """Write the library as rules for a log platform: one Sigma rule per pattern, and
    NOT-EXPORTED.md listing the patterns a rule cannot express, with the reason.

    Example: triage patterns export --format sigma --out rules/ && sigma convert -t loki rules/
    """
    from analyzer.commands import patterns as commands

    commands.export_patterns(patterns or [], fmt, out, lucene)
    return ExitCode.OK


@kb_app.command("lint")
def kb_lint(patterns: PatternsOpt = None) -> int:
    """Check every postmortem: schema, sections, pattern links, log excerpts that trigger them.

    Example: triage kb lint
    """
    from analyzer.commands import kb as commands

    return ExitCode.OK if commands.lint(patterns or []) else ExitCode.FINDINGS


@kb_app.command("list")
def kb_list(fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.terminal) -> int:
    """List the postmortems, newest first.

    Example: triage kb list --format json
    """
    from analyzer.commands import kb as commands

    commands.list_postmortems(fmt)
    return ExitCode.OK


@kb_app.command("show")
def kb_show(postmortem_id: Annotated[str, typer.Argument(help="The postmortem id.",
                                                         autocompletion=_postmortem_ids)]) -> int:
    """Print a postmortem.

    Example: triage kb show 2026-05-03-flashinfer-sm120-rejected-after-oom-restart
    """
    from analyzer.commands import kb as commands

    commands.show_postmortem(postmortem_id)
    return ExitCode.OK


@kb_app.command("new")
def kb_new(
    report: Annotated[Path, typer.Option("--from-report", help="A `triage --format json` report.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder to write into (default: kb/).")] = None,
) -> int:
    """Draft a postmortem from a triage run: timeline, evidence, findings, facts; secrets redacted.

    Example: triage --format json svc.log > run.json && triage kb new --from-report run.json
    """
    from analyzer.commands import kb as commands

    commands.new_from_report(report, out)
    return ExitCode.OK


@kb_app.command("index")
def kb_index(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild even when the index is current.")] = False,
    index: IndexOpt = None,
    model: ModelOpt = None,
) -> int:
    """Build the search index of postmortems and patterns (only what changed is embedded).

    Example: triage kb index --rebuild
    """
    from analyzer.commands import kb as commands

    commands.index(index, model, rebuild)
    return ExitCode.OK


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words, a paraphrase, or an error line pasted as is.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=50, help="Most hits shown.")] = 10,
    kind: Annotated[str | None, typer.Option("--kind", help="postmortem or pattern")] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.terminal,
    full: Annotated[bool, typer.Option("--full", help="A card per hit: the passage and the fix steps.")] = False,
    index: IndexOpt = None,
    model: ModelOpt = None,
) -> int:
    """Search past incidents and patterns by meaning and by exact error strings.

    Example: triage search "flashinfer rejects blackwell after a restart"
    """
    from analyzer.commands import kb as commands

    if kind not in (None, "postmortem", "pattern"):
        raise TriageError(f"--kind must be postmortem or pattern, not {kind!r}")
    commands.search(query, limit, kind, fmt, index, model, full)
    return ExitCode.OK


@site_app.command("build")
def site_build(
    out: Annotated[Path | None, typer.Option("--out", help="Folder to write (default: site/_build).")] = None,
    index: IndexOpt = None,
    model: ModelOpt = None,
) -> int:
    """Build the static site: a page per pattern and postmortem, offline search, no network.

    Example: triage site build --out /tmp/site && xdg-open /tmp/site/index.html
    """
    from analyzer.commands import site as commands

    commands.build(out, index, model)
    return ExitCode.OK


@site_app.command("serve")
def site_serve(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 8000,
    directory: Annotated[Path | None, typer.Option("--dir", help="A built site (default: site/_build).")] = None,
) -> int:
    """Serve the built site on 127.0.0.1 only (it is built first when missing).

    Example: triage site serve --port 8000
    """
    from analyzer.commands import site as commands

    commands.serve(directory, port)
    return ExitCode.OK


REDACT_CHOICES = {"secrets": "--redact", "hosts": "--redact-hosts"}

USAGE = """Usage: triage [OPTIONS] [FILE]...   (or: triage -u UNIT, or: journalctl -u UNIT | triage)

  triage -u sglang --since -2h                    the unit's journal, with the kernel's lines
  triage /var/log/sglang.log                      find the root cause in a log
  triage search "flashinfer rejects blackwell"    search past incidents and patterns

Run `triage --help` for every command and option."""


def _redact_args(args: list[str]) -> list[str]:
    """`--redact` alone, `--redact secrets|hosts`, `--redact=VALUE`: the value is taken only
    when it is one of the choices, so a file name after the flag is never swallowed."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if arg == "--redact" and i + 1 < len(args) else None
        value = arg.split("=", 1)[1] if arg.startswith("--redact=") else None
        if nxt is not None and (nxt in REDACT_CHOICES or _not_an_input(nxt)):
            value, i = nxt, i + 1
        if value is None:
            out.append(arg)
        elif value in REDACT_CHOICES:
            out.append(REDACT_CHOICES[value])
        else:
            raise TriageError(f"--redact takes no value, 'secrets' or 'hosts', not {value!r}")
        i += 1
    return out


_BOOT_VALUE = re.compile(r"[+-]?\d+|[0-9a-f]{32}([+-]\d+)?", re.IGNORECASE)


def _boot_args(args: list[str]) -> list[str]:
    """`-b` alone is this boot, as journalctl has it; `-b -1`, `-b ID` name one."""
    out: list[str] = []
    for i, arg in enumerate(args):
        out.append(arg)
        if arg in ("-b", "--boot"):
            nxt = args[i + 1] if i + 1 < len(args) else ""
            if not _BOOT_VALUE.fullmatch(nxt):
                out.append("0")
    return out


def _complete_when_asked() -> None:
    """A shell asking for completions (its script sets COMPLETE_VAR for each TAB, with the
    terminal on stdin): answered by typer, which exits, before any routing or reading."""
    if os.environ.get(COMPLETE_VAR):
        app(prog_name="triage")


def _usage_when_alone(raw: list[str]) -> None:
    """`triage` typed alone on a terminal: the three commonest uses, not an error."""
    if not raw and sys.stdin.isatty():
        print(USAGE)
        sys.exit(ExitCode.OK)


def _not_an_input(arg: str) -> bool:
    """A word after --redact that is neither an option, stdin nor an existing file: its value."""
    return not arg.startswith("-") and not Path(arg).exists()


def _route(args: list[str]) -> list[str]:
    """`triage FILE…` means `triage analyze FILE…`; no arguments read a pipe on stdin."""
    if not args and not sys.stdin.isatty():
        return ["analyze"]
    for arg in args:
        if arg in ("--help", "-h", "--version", "--install-completion", "--show-completion"):
            return args
        if not arg.startswith("-") or arg == "-":
            return args if arg in SUBCOMMANDS else ["analyze", *_boot_args(_redact_args(args))]
        return ["analyze", *_boot_args(_redact_args(args))]
    return args


def main(argv: list[str] | None = None) -> None:
    _complete_when_asked()
    raw = list(sys.argv[1:] if argv is None else argv)
    _usage_when_alone(raw)
    _catch_sigint()
    try:
        args = _route(raw)
        code = app(args, prog_name="triage", standalone_mode=False)
    except TriageError as exc:
        _fail(str(exc), exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        _interrupted()
    except NoArgsIsHelpError as exc:
        print(exc.format_message())
        sys.exit(ExitCode.USAGE)
    except ClickException as exc:
        _fail(_usage_message(exc.format_message()), ExitCode.USAGE)
    except KeyboardInterrupt:
        _interrupted()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitCode.OK)
    except Exception as exc:  # a bug: one line, and how to see the rest
        if _signalled:  # a Ctrl-C wrapped in another error on its way up
            _interrupted()
        if os.environ.get("TRIAGE_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set TRIAGE_DEBUG=1 for the traceback, "
              "and please report it)", ExitCode.INTERNAL)
    if code == ExitCode.INTERRUPTED:  # click turns Ctrl-C into an abort with this code
        _interrupted()
    sys.exit(int(code) if isinstance(code, int) else ExitCode.OK)


def _interrupted() -> None:
    """Ctrl-C: one line and exit 130, through os._exit. A KeyboardInterrupt that landed while
    an extension module ran Python code at import (PyRun_String) leaves CPython marked to
    re-raise SIGINT at exit, which would turn any exit status into death by signal. The
    stack has unwound (finally blocks ran) by the time this is called."""
    from analyzer.render import print_error

    print_error("interrupted")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(ExitCode.INTERRUPTED)


_signalled = False


def _catch_sigint() -> None:
    if threading.current_thread() is threading.main_thread():  # signals belong to the main thread
        signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(_signum: int, _frame: object) -> None:
    """Python's own behaviour, plus a note: code that runs Python from native code (pydantic's
    schema builder) may wrap the KeyboardInterrupt in an error of its own."""
    global _signalled
    _signalled = True
    raise KeyboardInterrupt


def _usage_message(message: str) -> str:
    """A bad option value in the tool's words: "'bogus' is not one of 'info', 'low', ..."
    without the validator's "Value error, " that typer's enum check puts before it."""
    return message.replace("Value error, ", "")


def _fail(message: str, code: int) -> None:
    from analyzer.render import print_error

    print_error(message)
    sys.exit(code)


if __name__ == "__main__":
    main()
