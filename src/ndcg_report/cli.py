"""The `ndcg-report` command line: exit 0 done, 1 a step failed, 2 bad input or usage.

The entry point (`console`, and `python -m ndcg_report.cli`): dispatches to the commands/ modules and
turns every error into one line and an exit code, never a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from ndcg_report.console import lossy_stderr
from ndcg_report.commands.output import EXIT_BAD_INPUT, EXIT_FAILED, error_line, silence_stdout, write_output
from ndcg_report.commands.parser import build_parser
from ndcg_report.errors import BuildError, InputError, ParameterError
from ndcg_report.interrupts import exit_code, install as install_stop_signals, restore as restore_signals
from ndcg_report.interrupts import signal_name, signal_of


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: exit 0, 1, 2, 3 (batch) or 128 + a stop signal; one line on error, never a traceback."""
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
    args = build_parser().parse_args(argv)
    if not _working_folder_exists():
        error_line("the working folder was deleted: cd to an existing folder")
        return EXIT_BAD_INPUT
    try:
        if args.command == "batch":
            from ndcg_report.batch.runner import main as run_batch

            return run_batch(args.config, jobs=args.jobs, force=args.force, index_only=args.index_only,
                             dask=args.dask)
        if args.command == "eval":
            from ndcg_report.commands.eval_process import prepare_eval_process

            prepare_eval_process()
            from ndcg_report.commands.eval import run_eval

            output = run_eval(args)
        elif args.command == "bm25":
            from ndcg_report.commands.bm25 import run_bm25

            output = run_bm25(args)
        elif args.command == "judges":
            from ndcg_report.commands.judges import run_judges

            output = run_judges(args)
        elif args.command == "table":
            from ndcg_report.commands.table import run_table

            output = run_table(args)
        elif args.command == "pool":
            from ndcg_report.commands.pool import run_pool

            output = run_pool(args)
        elif args.command == "suite":
            from ndcg_report.build.supervisor import die_with_supervisor
            from ndcg_report.commands.suite import run_suite

            die_with_supervisor()
            output = run_suite(args, argv, started)
        else:
            from ndcg_report.build.supervisor import die_with_supervisor

            from ndcg_report.commands.build_report import run_build

            die_with_supervisor()
            output = run_build(args, argv, started)
        return write_output(output)
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
