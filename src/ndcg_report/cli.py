"""The `ndcg-report` command line: exit 0 done, 1 a step failed, 2 bad input or usage, 4 a gate's regression.

The entry point (`console`, and `python -m ndcg_report.cli`): builds the parser from the commands/
modules (COMMANDS), runs the one asked for, and turns every error into one line and an exit code,
never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from ndcg_report.console import lossy_stderr
from ndcg_report.commands import batch, bm25, build_report, demo, gate, judges, pool, suite, table
from ndcg_report.commands import eval as evaluate
from ndcg_report.commands.output import error_line, silence_stdout
from ndcg_report.commands.parser import _Parser
from ndcg_report.errors import BuildError, InputError, ParameterError
from ndcg_report.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, exit_code
from ndcg_report.inputs.access.snapshots import INPUT_CACHE_ENV
from ndcg_report.interrupts import install as install_stop_signals, restore as restore_signals
from ndcg_report.interrupts import signal_name, signal_of

COMMANDS = (evaluate, build_report, suite, bm25, judges, pool, table, gate, demo, batch)  # in the order --help lists them
_BY_NAME = {command.NAME: command for command in COMMANDS}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: exit 0, 1, 2, 3 (batch), 4 (a gate) or 128 + a stop signal; one line on error, never a traceback."""
    replaced = install_stop_signals()  # first: Ctrl-C, SIGTERM and SIGHUP stop every command alike, from the start
    try:
        with lossy_stderr():  # what a command says there (progress, notes, errors) never fails it: a hung-up terminal
            return _main(argv)
    except KeyboardInterrupt as exc:  # interrupts.Interrupted for SIGTERM and SIGHUP; anywhere, output included
        signum = signal_of(exc)
        silence_stdout()  # what is left in the buffer must not block the exit on a full pipe
        error_line("interrupted" + ("" if signum == signal.SIGINT else f" by {signal_name(signum)}"), prefix="ndcg-report: ")
        return exit_code(signum)
    finally:
        restore_signals(replaced)


def _main(argv: Sequence[str] | None) -> int:
    import time

    started = time.monotonic()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv, argparse.Namespace(argv=argv, started=started))
    if not _working_folder_exists():
        error_line("the working folder was deleted: cd to an existing folder")
        return EXIT_BAD_INPUT
    os.environ.pop(INPUT_CACHE_ENV, None)  # a build names it to its own kernels alone: one exported is ignored
    try:
        return _BY_NAME[args.command].run(args)
    except (InputError, ParameterError) as exc:
        error_line(str(exc))
        return EXIT_BAD_INPUT
    except BuildError as exc:
        error_line(str(exc))
        return EXIT_FAILED
    except OSError as exc:  # reading inputs raises InputError: what is left is writing an output
        error_line(f"cannot write {exc.filename or 'the output'} ({exc.strerror or exc}); check the disk and the permissions")
        return EXIT_FAILED
    except MemoryError:
        error_line("out of memory")
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - never a traceback: one line naming what broke
        error_line(f"internal error ({type(exc).__name__}: {exc}); please report it with the command that caused it")
        return EXIT_FAILED


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: each of COMMANDS adds its subcommand and options."""
    from ndcg_report.version import __version__

    parser = _Parser(prog="ndcg-report", description="Exact, fast NDCG@k, R@k, P@k, RR, AP (trec_eval's measures) of TREC runs, and reports on them.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def _working_folder_exists() -> bool:
    """False if the working folder was deleted (relative paths, and every child process, would fail)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


def console() -> None:
    """The `ndcg-report` command: main(), then the process ends without the interpreter's teardown
    (0.2 s after a build: freeing pandas', pyarrow's and nbconvert's objects, which the system frees
    anyway) once the atexit handlers have run and the output is flushed; as usual if a thread that
    is not a daemon is still running (the interpreter would wait for it)."""
    import atexit
    import threading

    code = main()
    if any(thread is not threading.main_thread() and not thread.daemon for thread in threading.enumerate()):
        sys.exit(code)
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):  # closed, or no reader left: nothing more to say
                pass
        os._exit(code)


if __name__ == "__main__":
    console()
