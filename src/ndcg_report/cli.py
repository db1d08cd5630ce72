"""The `ndcg-report` command line: exit 0 done, 1 a step failed, 2 bad input or usage."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ndcg_report.errors import InputError, ParameterError

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
    return parser


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
    args = build_parser().parse_args(argv)
    try:
        if args.command == "eval":
            output = run_eval(args)
        else:  # pragma: no cover - argparse rejects unknown commands
            raise ParameterError(f"unknown command {args.command}")
    except (InputError, ParameterError) as exc:
        print(f"ndcg-report: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
