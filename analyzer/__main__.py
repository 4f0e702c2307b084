"""The `triage` command and `python -m analyzer`.

Ctrl-C while the CLI is still importing (typer, pydantic, rich: a second or more on a
busy machine) would otherwise end in a KeyboardInterrupt traceback; it exits 130 too.
"""

import sys


def run() -> None:
    try:
        from analyzer.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("triage: error: interrupted\n")
        sys.exit(130)  # ExitCode.INTERRUPTED, not imported: the import itself was interrupted
    main()


if __name__ == "__main__":
    run()
