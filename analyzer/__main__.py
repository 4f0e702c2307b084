"""The `triage` command and `python -m analyzer`.

Ctrl-C while the CLI is still importing (typer, pydantic, rich: a second or more on a
busy machine) would otherwise end in a KeyboardInterrupt traceback; it exits 130 too.
"""

import os
import signal
import sys


def run() -> None:
    signalled = []

    def on_sigint(signum: int, _frame: object) -> None:
        signalled.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        from analyzer.cli import main
    except BaseException:
        if not signalled:
            raise
        # pydantic builds its schemas at import, in native code that may wrap the interrupt
        sys.stderr.write("triage: error: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # ExitCode.INTERRUPTED (not imported: the import was interrupted); see cli._interrupted
    main()


if __name__ == "__main__":
    run()
