"""Shell completion as a shell asks for it: the real entry point run with the variables the
installed script sets (`_TRIAGE_COMPLETE`, `COMP_WORDS`, `COMP_CWORD` for bash), answering
with subcommands, options, pattern ids, postmortem ids and paths; and the script installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer.data import builtin_patterns, data_dir
from analyzer.kb.ids import postmortem_ids
from analyzer.library.ids import catalogue_ids, pattern_ids
from tests.conftest import ROOT, in_pty

POSTMORTEM = "2023-10-05-ollama-serve-port-11434-held-by-systemd-service"


def complete(line: str, cwd: Path = ROOT, shell: str = "bash", **extra: str) -> list[str]:
    """What `triage` answers when the shell completes the last word of `line` (a line ending
    in a space completes a new, empty word)."""
    words = line.split(" ")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "_TRIAGE_COMPLETE": f"complete_{shell}", **extra}
    if shell == "bash":
        env |= {"COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    else:
        env["_TYPER_COMPLETE_ARGS"] = line
    res = subprocess.run([sys.executable, "-m", "analyzer"], env=env, cwd=cwd, capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    return [w for w in res.stdout.split("\n") if w]


def test_subcommands_and_options(tmp_path: Path) -> None:
    assert complete("triage ") == ["analyze", "fleet", "search", "patterns", "kb", "site"]
    assert complete("triage pat", cwd=tmp_path) == ["patterns"]  # in the checkout, the patterns/ folder too
    assert complete("triage patterns ") == ["list", "test", "show", "lint", "stats", "new", "schema", "export"]
    assert complete("triage kb s") == ["show"]
    assert complete("triage analyze --fo") == ["--format", "--follow"]
    assert set(complete("triage analyze --format ")) == {"terminal", "markdown", "json", "html"}
    assert complete("triage --inst") == ["--install-completion"]
    assert complete("triage patterns new vllm-x --ar") == ["--area"]


def test_pattern_ids_complete_from_the_library_and_extra_folders(tmp_path: Path) -> None:
    assert complete("triage patterns show cuda-home-has-n") == ["cuda-home-has-no-nvcc"]
    assert complete("triage patterns test flashinfer-sm12x-needs-cuda-12-") == ["flashinfer-sm12x-needs-cuda-12-9"]
    # a catalogue's patterns: its id template with each entry's key
    assert complete("triage patterns show cublas-not-i") == ["cublas-not-initialized"]
    # an id already given to `patterns test` is not offered again
    assert complete("triage patterns test cuda-home-has-no-nvcc cuda-home-has-n") == []
    team = tmp_path / "team-patterns" / "team"
    team.mkdir(parents=True)
    (team / "team-reload-seen.yaml").write_text("id: team-reload-seen\n")
    assert complete("triage patterns show team-rel") == []
    assert complete(f"triage patterns show --patterns {team.parent} team-rel") == ["team-reload-seen"]


def test_postmortem_ids_complete() -> None:
    assert complete("triage kb show 2023-10-05-ollama") == [POSTMORTEM]
    assert len(complete("triage kb show 20")) == len(postmortem_ids(data_dir("kb"))) > 20


def test_paths_complete_for_log_arguments(tmp_path: Path) -> None:
    """Paths are the shell's to complete (bash `-o default`, zsh `_files`): the answer is
    empty for them; where a subcommand also begins with the word, the paths are offered too."""
    (tmp_path / "sglang.log").write_text("x\n")
    (tmp_path / "search-notes.log").write_text("x\n")
    (tmp_path / "site-logs").mkdir()
    (tmp_path / ".hidden.log").write_text("x\n")
    assert complete("triage s", cwd=tmp_path) == ["search", "site", "search-notes.log", "sglang.log", "site-logs/"]
    assert complete("triage si", cwd=tmp_path) == ["site", "site-logs/"]
    assert complete("triage sg", cwd=tmp_path) == []
    assert complete("triage analyze sg", cwd=tmp_path) == []
    assert complete("triage analyze --journal-dir ", cwd=tmp_path) == []
    assert complete("triage kb new --from-report ru", cwd=tmp_path) == []
    assert complete("triage analyze sg", cwd=tmp_path, shell="zsh") == ["_files"]
    zsh = complete("triage patterns show cuda-home-has-n", shell="zsh")
    assert zsh == ["""_arguments '*: :(("cuda-home-has-no-nvcc"))'"""]


def test_completion_reads_file_names_only() -> None:
    """A TAB answers without loading the library (no YAML parsed, no pattern models built)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('LOADED', [m for m in ('yaml', 'rich', 'analyzer.library.load', "
            "'analyzer.kb.postmortems', 'duckdb', 'hyperscan') if m in sys.modules], file=sys.stderr))\n"
            "from analyzer.cli import main\nmain()\n")
    for words, cword in (("triage patterns show cuda-home-has-n", "3"), ("triage kb show 2023-10-05-ol", "3")):
        env = {**os.environ, "_TRIAGE_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
        res = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0 and res.stdout.strip(), res.stderr
        assert "LOADED []" in res.stderr


def test_the_fast_ids_are_the_library_ids() -> None:
    from analyzer.kb.postmortems import load_kb
    from analyzer.library.load import load_library

    assert pattern_ids([builtin_patterns()]) == sorted(p.id for p in load_library([builtin_patterns()]).patterns)
    assert postmortem_ids(data_dir("kb")) == [pm.id for pm in load_kb(data_dir("kb"))]


def test_catalogue_ids_read_the_entries_not_their_texts() -> None:
    text = """# a comment
catalogue: demo
id: 'demo-{key}'  # the template
expressions:
  - '{name}'
entries:
  - key: first
    meaning: >-
      - key: not-an-entry
  - name: X
    key: "second"   # quoted
  - key: third
    covered_by: some-pattern
overlaps: []
"""
    assert catalogue_ids(text) == ["demo-first", "demo-second"]
    assert catalogue_ids("entries:\n  - key: a\n") == []  # no template: nothing to name


def test_completion_is_not_routed_when_stdin_is_a_terminal() -> None:
    """The shell runs `triage` with no arguments and the terminal on stdin: the usage text
    shown to a person typing `triage` alone must not answer a completion request."""
    env = {**os.environ, "_TRIAGE_COMPLETE": "complete_bash", "COMP_WORDS": "triage pat", "COMP_CWORD": "1"}
    code, out = in_pty([], env=env, stdin_tty=True)
    assert (code, out.split()) == (0, ["patterns", "patterns/"])  # the command, and the checkout's folder


def _in_bash(args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`triage ARGS` started by bash, so the shell it detects is bash (`; exit` keeps bash
    from replacing itself with the command)."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", "-c", f"'{sys.executable}' -m analyzer {args}; exit $?"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_install_completion_writes_the_bash_script(tmp_path: Path) -> None:
    res = _in_bash("--install-completion", tmp_path)
    script = tmp_path / ".bash_completions" / "triage.sh"
    assert res.returncode == 0 and f"bash completion installed in {script}" in res.stdout, res.stderr
    text = script.read_text()
    assert "_TRIAGE_COMPLETE=complete_bash" in text and "complete -o default -F _triage_completion triage" in text
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()
    shown = _in_bash("--show-completion", tmp_path)
    assert shown.returncode == 0 and shown.stdout.strip() == text.strip()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_tab_in_an_interactive_bash(tmp_path: Path) -> None:
    """The installed script in a real bash on a terminal: TAB completes a log path, a pattern
    id and a postmortem id on the command line."""
    import pty
    import select

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "triage").write_text(f"#!/bin/sh\nPYTHONPATH='{ROOT}' exec '{sys.executable}' -m analyzer \"$@\"\n")
    (bin_dir / "triage").chmod(0o755)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "svc-node7.log").write_text("x\n")
    script = tmp_path / "triage.sh"
    script.write_text(_in_bash("--show-completion", tmp_path).stdout)
    master, slave = pty.openpty()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb", "PS1": "$ "}
    proc = subprocess.Popen(["bash", "--norc", "--noprofile", "-i"], stdin=slave, stdout=slave, stderr=slave,
                            cwd=tmp_path, env=env, start_new_session=True)
    os.close(slave)

    def until(text: str, timeout: float = 60) -> str:
        seen, end = b"", time.monotonic() + timeout
        while text.encode() not in seen and time.monotonic() < end:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        return seen.decode(errors="replace")

    try:
        os.write(master, f"source '{script}'; echo READY\n".encode())
        assert "READY\r\n" in until("READY\r\n")
        for typed, shown in (("triage analyze logs/svc", "triage analyze logs/svc-node7.log"),
                             ("triage patterns show cuda-home-has-n", "triage patterns show cuda-home-has-no-nvcc"),
                             ("triage kb show 2023-10-05-ol", f"triage kb show {POSTMORTEM}")):
            os.write(master, b"\x15" + typed.encode() + b"\t")  # Ctrl-U clears the line first
            assert shown in until(shown), typed
    finally:
        os.write(master, b"\x15exit\n")
        proc.wait(timeout=30)
        os.close(master)
