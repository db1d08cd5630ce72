"""The `ndcg-report` command line: exit 0 done, 1 a step failed, 2 bad input or usage."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ndcg_report.errors import BuildError, InputError, ParameterError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_metric_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k", "--cutoffs", default="1,3,5,10,20,100,1000",
        help="comma-separated cut-offs; 'all' means no cut-off (default: 1,3,5,10,20,100,1000)",
    )
    parser.add_argument("--gain", default="linear", choices=("linear", "exponential"),
                        help="linear: gain = label (trec_eval); exponential: 2**label - 1")
    parser.add_argument("--missing", default="zero", choices=("zero", "skip"),
                        help="queries with relevant docs that the run lacks: score 0 (trec_eval -c) or leave out")
    parser.add_argument("--no-relevant", default="skip", choices=("skip", "zero"), dest="no_relevant",
                        help="queries with nothing relevant in qrels: leave out (default) or score 0 (trec_eval)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ndcg-report", description="Exact, fast NDCG@k of TREC runs, and reports on them.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    evaluate = commands.add_parser("eval", help="print NDCG@k of a run (trec_eval's argument order)")
    evaluate.add_argument("qrels", help="qrels file: qid iter docid rel (plain or .gz)")
    evaluate.add_argument("run", help="run file: qid Q0 docid rank score tag (plain or .gz)")
    _add_metric_options(evaluate)
    evaluate.add_argument("-q", "--per-query", action="store_true", help="one row per query as well as the mean")
    evaluate.add_argument("--format", default="trec", choices=("trec", "csv", "json"), help="output layout")
    evaluate.add_argument("--digits", type=int, default=None,
                          help="decimals printed (default 4 for trec and csv, full precision for json)")
    build = commands.add_parser("build", help="build the HTML report of a run against a baseline")
    build.add_argument("--run", required=True, help="the run under test")
    build.add_argument("--qrels", required=True, help="the qrels")
    build.add_argument("--baseline", required=True, help="the baseline run (e.g. Anserini BM25)")
    build.add_argument("--topics", default="", help="qid<TAB>query text, shown in the per-query tables")
    _add_metric_options(build)
    build.add_argument("--name", default="", help="report title")
    build.add_argument("--run-name", default="", help="display name of the run (default: its tag)")
    build.add_argument("--baseline-name", default="", help="display name of the baseline (default: its tag)")
    build.add_argument("--seed", type=int, default=42, help="seed of the bootstrap and randomization tests")
    build.add_argument("--timeout", type=int, default=600, help="seconds one notebook cell may take")
    build.add_argument("--notebook", default="", help="a customised copy of the report notebook")
    build.add_argument("--out", required=True, help="output folder (replaced only when the build succeeds)")

    demo = commands.add_parser("demo", help="build the embedded demo: TREC DL 2019 passage, monoT5 against BM25")
    demo.add_argument("--out", default="reports/demo", help="output folder (default: reports/demo)")
    demo.add_argument("--timeout", type=int, default=600, help="seconds one notebook cell may take")
    return parser


DEMO = {
    "run": "package:dl19-passage/monot5.dl19.run.gz",
    "baseline": "package:dl19-passage/run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
    "qrels": "package:dl19-passage/qrels.dl19-passage.txt",
    "topics": "package:dl19-passage/topics.dl19-passage.txt",
    "title": "TREC DL 2019 passage: monoT5 against BM25",
    "run_name": "monoT5",
    "baseline_name": "BM25",
}


def run_build(args: argparse.Namespace, argv: Sequence[str]) -> str:
    """Validate, then build the report; return the line to print."""
    import shlex
    from pathlib import Path

    from ndcg_report.build import build_report
    from ndcg_report.report import validate_parameters

    if args.command == "demo":
        values = dict(DEMO, command=shlex.join(["ndcg-report", *argv]))
    else:
        values = dict(
            run=args.run, qrels=args.qrels, baseline=args.baseline, topics=args.topics, ks=args.cutoffs,
            gain=args.gain, missing=args.missing, no_relevant=args.no_relevant, title=args.name, seed=args.seed,
            run_name=args.run_name, baseline_name=args.baseline_name, command=shlex.join(["ndcg-report", *argv]),
        )
    if args.timeout < 1:
        raise ParameterError("--timeout must be at least 1 second")
    params = validate_parameters(**values)
    notebook = getattr(args, "notebook", "")
    if notebook and not Path(notebook).is_file():
        raise InputError(notebook, None, "no such notebook", "check the --notebook path")
    result = build_report(params, Path(args.out), timeout=args.timeout, notebook=Path(notebook) if notebook else None)
    return f"built {result.out_dir / 'report.html'} in {result.seconds:.1f} s\n"


def run_eval(args: argparse.Namespace) -> str:
    """Evaluate and render; nothing is printed until everything has succeeded."""
    from ndcg_report.metrics import evaluate, parse_cutoffs
    from ndcg_report.output_formats import format_csv, format_json, format_trec
    from ndcg_report.read_inputs import read_qrels, read_run

    cutoffs = parse_cutoffs(args.cutoffs)
    if args.digits is not None and not 0 <= args.digits <= 17:
        raise ParameterError("--digits must be between 0 and 17")
    qrels = read_qrels(args.qrels)
    run = read_run(args.run)
    evaluation = evaluate(run.table, qrels.table, cutoffs, args.gain, args.missing, args.no_relevant)
    if evaluation.counts.in_both == 0:
        raise InputError(args.run, None, f"no query in common with the qrels {args.qrels}",
                         "check that the run and the qrels are for the same topics")
    if args.format == "trec":
        return format_trec(evaluation, args.per_query, 4 if args.digits is None else args.digits)
    if args.format == "csv":
        return format_csv(evaluation, args.per_query, 4 if args.digits is None else args.digits)
    return format_json(evaluation, args.per_query, args.digits)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "eval":
            output = run_eval(args)
        else:
            output = run_build(args, argv)
    except (InputError, ParameterError) as exc:
        print(f"ndcg-report: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BuildError as exc:
        print(f"ndcg-report: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
