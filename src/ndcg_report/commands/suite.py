"""`ndcg-report suite`: a suite of collections from its YAML config, built as one report (and theirs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ndcg_report.commands.output import Note, log, write_output
from ndcg_report.commands.report_flags import add_flags

NAME = "suite"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """suite's arguments: the config, the folder to write and whether each collection's report is built too."""
    suite = subparsers.add_parser(
        NAME, help="build one report across collections: systems x collections of each measure, with each "
                   "collection's own verdicts and the tests over collections",
        description="Build a suite report from a YAML config (see docs/command-line.md#suite): each collection's\n"
                    "runs against its own baseline, as its report computes them, in one systems x collections\n"
                    "table per measure, and the tests over collections (Wilcoxon, Friedman with Nemenyi).")
    suite.add_argument("config", help="YAML config: title, preset or measures, and collections: a list of "
                                      "{name, qrels, baseline, runs: {SYSTEM: PATH}, topics}")
    suite.add_argument("--out", required=True, help="output folder: absent, empty or an earlier suite's or report's; "
                                                     "its files are replaced when the build succeeds, anything else kept")
    suite.add_argument("--with-reports", action="store_true", dest="with_reports",
                       help="build each collection's full report too, into OUT/collections/NAME/, linked from the suite")
    add_flags(suite, ["timeout"])


def run(args: argparse.Namespace) -> int:
    """Build the suite as a process that ends with its supervisor (a batch), if it has one."""
    from ndcg_report.build.supervisor import die_with_supervisor

    die_with_supervisor()
    return write_output(run_suite(args, args.argv, args.started))


def run_suite(args: argparse.Namespace, argv: Sequence[str], started: float) -> Note:
    """Read and check the suite's config and every input, then build the suite report into --out (with
    --with-reports, each collection's report too); return the line to print. Bad input: ParameterError or
    InputError before anything is written."""
    import shlex
    import time
    from pathlib import Path

    from ndcg_report.batch.suite_config import load_suite_config
    from ndcg_report.build.kernels.kernel_forks import running_fork_server, server_label
    from ndcg_report.build.pipeline import check_timeout
    from ndcg_report.build.publish import check_out_dir
    from ndcg_report.build.publish import check_out_path
    from ndcg_report.build.suite_build import build_suite
    from ndcg_report.build.suite_parameters import validate_suite_parameters
    from ndcg_report.commands.build_report import _check_command_line
    from ndcg_report.inputs.access.stamps import InputWatch

    _check_command_line(argv)
    out = Path(args.out)
    check_out_path(out)
    check_timeout(args.timeout)
    with running_fork_server(server_label(out)) as fork_server:  # it imports while the config and inputs are checked
        config = load_suite_config(args.config)
        params = validate_suite_parameters(**config.parameters(), command=shlex.join(["ndcg-report", *argv]))
        inputs = InputWatch.of(params.input_paths())  # before their first read: the suite is of one version of each
        check_out_dir(out.resolve(), [*params.input_paths(), config.path])
        result = build_suite(params, out, timeout=args.timeout, with_reports=args.with_reports,
                             progress=sys.stderr.isatty(), fork_server=fork_server, inputs=inputs)
    for note in result.notes:
        log(f"ndcg-report: note: {note}")
    return Note(f"built {result.out_dir / 'report.html'} in {time.monotonic() - started:.1f} s (the whole command)\n")
