"""`ndcg-report build` and `demo`: validate, build a BM25 baseline if asked, then build the report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ndcg_report.commands.output import Note, log, write_output
from ndcg_report.commands.gate import OUTPUTS as GATE_OUTPUTS
from ndcg_report.commands.report_flags import add_build_flags
from ndcg_report.errors import ParameterError
from ndcg_report.exit_codes import EXIT_OK, EXIT_REGRESSION

NAME = "build"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """build's options: the report options table's (the runs, the qrels, the baseline or a corpus to build
    it from, and the report's), then --out."""
    build = subparsers.add_parser(NAME, help="build the HTML report of one or more runs against a baseline")
    add_build_flags(build)
    build.add_argument("--out", required=True, help="output folder: absent, empty or an earlier report's; its report "
                                                     "files are replaced when the build succeeds, anything else kept")
    for name in ("junit", "markdown"):  # the gate's files, as `ndcg-report gate` writes them
        build.add_argument(f"--{name}", metavar="FILE", default="", help=f"with --against: {GATE_OUTPUTS[name]}")


def run(args: argparse.Namespace) -> int:
    """Build the report (of `build`, or of `demo`'s dataset) as a process that ends with its supervisor (a
    batch), if it has one."""
    from ndcg_report.build.supervisor import die_with_supervisor

    die_with_supervisor()
    note = run_build(args, args.argv, args.started)
    code = write_output(note)
    return EXIT_REGRESSION if code == EXIT_OK and isinstance(note, Gated) and note.failed else code


class Gated(Note):
    """The line of a build --against an earlier one, and whether its gate failed (exit 4)."""

    failed = False


def bm25_settings(args: argparse.Namespace) -> dict:
    """k1, b and top_k from the command line, Anserini's defaults where not given."""
    from ndcg_report.baseline.settings import BM25_DEFAULTS

    given = {"k1": args.k1, "b": args.b, "top_k": args.top_k}
    return {name: BM25_DEFAULTS[name] if value is None else value for name, value in given.items()}


def run_build(args: argparse.Namespace, argv: Sequence[str], started: float) -> Note:
    """Validate, build the BM25 baseline if asked, then build the report; return the line to print (a
    Note: the report is the product), with the time since `started`, time.monotonic() when the command
    began. The build's kernel fork server is started first: it imports what the kernels need while
    this process imports and checks."""
    from pathlib import Path

    from ndcg_report.build.kernels.kernel_forks import running_fork_server, server_label
    from ndcg_report.build.publish import check_out_path

    _check_command_line(argv)
    out = args.out or (_demo_out(args.dataset) if args.command == "demo" else "")
    if out:
        check_out_path(Path(out))
    with running_fork_server(server_label(Path(out))) as fork_server:  # or a batch's, running for all its builds
        return _run_build(args, argv, started, fork_server)


def _check_command_line(argv: Sequence[str]) -> None:
    """ParameterError for an argument holding bytes that are not UTF-8 (a name, a path): the report
    writes its command line into report.html and summary.json, which hold only text."""
    from ndcg_report.inputs.ids import non_utf8

    for argument in argv:
        shown = non_utf8(argument)
        if shown:
            raise ParameterError(f"the argument {shown} holds bytes that are not UTF-8; a report records its command "
                                 "line as text: give names and paths in UTF-8 (rename the file, or link to it)")


def _demo_out(dataset: str) -> str:
    from ndcg_report.build.demos import DEMOS

    return DEMOS[dataset].out if dataset in DEMOS else ""


def _run_build(args: argparse.Namespace, argv: Sequence[str], started: float, fork_server: str) -> Note:
    import shlex
    import time
    from pathlib import Path

    from ndcg_report.inputs.reading import read_topics
    from ndcg_report.build.pipeline import build_report, check_notebook, check_timeout, input_paths
    from ndcg_report.build.publish import check_out_dir
    from ndcg_report.build.loading import check_run_and_qrels
    from ndcg_report.build.corpus_baseline import with_bm25_baseline
    from ndcg_report.build.demos import DEMOS
    from ndcg_report.analysis.options.checks import check_given
    from ndcg_report.analysis.options.command import FILE_ROLES
    from ndcg_report.analysis.options.table import BY_NAME
    from ndcg_report.build.parameters import NOTEBOOK_OPTIONS, demo_values, validate_parameters
    from ndcg_report.commands.report_flags import bm25_names, given_values
    from ndcg_report.analysis.systems import check_name, split_run_option
    from ndcg_report.baseline.settings import BM25_DEFAULTS
    from ndcg_report.inputs.access.stamps import InputWatch

    command = shlex.join(["ndcg-report", *argv])
    bm25 = dict(BM25_DEFAULTS)
    if args.command == "demo":
        values = demo_values(args.dataset)
        values["command"] = command
        out = args.out or DEMOS[args.dataset].out
    else:
        runs = [split_run_option(text) for text in args.runs]
        if args.run_name:
            if len(runs) != 1:
                raise ParameterError("--run-name names a single --run; with several runs, give each as --run NAME=PATH")
            if runs[0][0]:
                raise ParameterError("the run is named twice (--run NAME=PATH and --run-name); give one name")
            runs = [(check_name(args.run_name, "--run-name"), runs[0][1])]
        flags = {name: BY_NAME[name].cli_flag for name in NOTEBOOK_OPTIONS}
        values = {
            **check_given(given_values(args, NOTEBOOK_OPTIONS), NOTEBOOK_OPTIONS, flags.__getitem__),  # named by flag
            "run_name": "",  # the run's name is in runs
            "runs": [{"name": name, "path": path} for name, path in runs],
            "qrels": args.qrels[0] if len(args.qrels) == 1 else args.qrels, "command": command,
            **{name: getattr(args, name) or "" for name in FILE_ROLES},
        }
        given = [BY_NAME[name].cli_flag for name, value in given_values(args, bm25_names()).items() if value != ""]
        if args.baseline and given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ParameterError(f"{' and '.join(given)} {verb} only with --corpus: they set how BM25 is built "
                                 "from a corpus, and --baseline gives the baseline run; drop them or use --corpus")
        bm25 = bm25_settings(args)
        out = args.out
    check_timeout(args.timeout)
    params = validate_parameters(**values)
    inputs = InputWatch.of(input_paths(params))  # before their first read: the report is of one version of each
    notebook = getattr(args, "notebook", "")
    if notebook:
        check_notebook(Path(notebook))
    check_out_dir(Path(out).resolve(), [*input_paths(params), *([Path(notebook)] if notebook else [])])
    if params.baseline is None:  # check run, qrels and topics before a long BM25 build
        check_run_and_qrels(params)
        read_topics(params.topics)
    params = with_bm25_baseline(params, **bm25, cache_dir=getattr(args, "cache_dir", None) or None, log=log)
    gate_files = _gate_files(args, params)
    result = build_report(params, Path(out), timeout=args.timeout, notebook=Path(notebook) if notebook else None,
                          progress=sys.stderr.isatty(), fork_server=fork_server, inputs=inputs)
    for note in result.notes:
        log(f"ndcg-report: note: {note}")
    line = f"built {result.out_dir / 'report.html'} in {time.monotonic() - started:.1f} s (the whole command)\n"
    if params.against is None:
        return Note(line)
    return _gated(line, result.out_dir, gate_files)


def _gate_files(args: argparse.Namespace, params) -> dict:
    """The gate's files asked for (--junit, --markdown), checked before the build; ParameterError without --against."""
    from ndcg_report.commands.gate import output_files

    asked = [f"--{name}" for name in ("junit", "markdown") if getattr(args, name, "")]
    if asked and params.against is None:
        raise ParameterError(f"{' and '.join(asked)} write{'s' if len(asked) == 1 else ''} the gate's verdict: give "
                             "--against BEFORE_DIR, the folder of an earlier build, too")
    return output_files(args, (params.against,)) if asked else {}


def _gated(line: str, out_dir, outputs: dict) -> "Gated":
    """The build's line, once the gate's verdict (gate.json, written by the report) is printed on standard error
    and its files written; failed on a regression."""
    import json

    from ndcg_report.analysis.gate.since_last import GATE_FILE
    from ndcg_report.analysis.gate.verdict import GateVerdict
    from ndcg_report.commands.gate import announce
    from ndcg_report.commands.output import one_line

    verdict = GateVerdict.from_dict(json.loads((out_dir / GATE_FILE).read_text(encoding="utf-8")))
    for text in announce(verdict.title, verdict, outputs):
        log(one_line(text))
    note = Gated(line)
    note.failed = verdict.failed
    return note
