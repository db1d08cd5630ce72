"""`ndcg-report suite`: a suite of collections from its YAML config, built as one report (and theirs)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ndcg_report.commands.output import Note, log


def run_suite(args: argparse.Namespace, argv: Sequence[str], started: float) -> Note:
    """Read and check the suite's config and every input, then build the suite report into --out (with
    --with-reports, each collection's report too); return the line to print. Bad input: ParameterError or
    InputError before anything is written."""
    import shlex
    import time
    from pathlib import Path

    from ndcg_report.batch.suite_config import load_suite_config
    from ndcg_report.build.kernels.kernel_forks import running_fork_server, server_label
    from ndcg_report.build.pipeline import check_out_dir, check_timeout
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
