"""`ndcg-report judges`: two or more judgment sets compared, on their labels and on the runs' orders.

Arguments without `=` are judgment sets (the first is the reference), `NAME=RUN` are runs; without
runs only the labels are compared. Every set is read and checked, and every run evaluated under every
set, before anything is printed. The text layout is in commands.judges_text.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.commands.output import write_output
from ndcg_report.commands.parser import _add_metric_options
from ndcg_report.errors import InputError, ParameterError

if TYPE_CHECKING:
    from ndcg_report.analysis.judgments.comparison import JudgmentComparison
    from ndcg_report.inputs.reading import Qrels

DEFAULT_CUTOFFS = "10"  # without -m, -k or --preset: nDCG@10 (eval's default is seven cut-offs)
NAME = "judges"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """judges' arguments: the sets and runs, the measures, the baseline of the verdicts and the layout."""
    judges = subparsers.add_parser(
        NAME, help="compare judgment sets (human and LLM labels): label agreement, and the runs' orders and "
                   "verdicts under each set",
        description="Compare judgment sets: label agreement on the pairs both judge, and each run evaluated under\n"
                    "every set as eval evaluates it. Without -m, -k or --preset the measure is nDCG@10 only.")
    judges.add_argument("inputs", nargs="+", metavar="SET_OR_RUN",
                        help="judgment sets (REFERENCE OTHER [OTHER...]: qrels in any format eval takes, named by "
                             "their file names; the first is the reference) and runs as NAME=RUN (optional: without "
                             "runs only the labels are compared)")
    _add_metric_options(judges)
    judges.add_argument("--baseline", default="", metavar="RUN",
                        help="the system the verdicts compare with under each set: the NAME of one of the runs, or "
                             "one more [NAME=]RUN (default: no verdicts)")
    judges.add_argument("--fill-unjudged-from", default="", dest="fill_from", metavar="SET",
                        help="add one more set: the reference with the pairs it lacks (in its own queries) labelled "
                             "by the named set")
    judges.add_argument("--queries", type=int, default=10, dest="most_queries", metavar="N",
                        help="the queries where the sets disagree most, per measure")
    judges.add_argument("--seed", type=int, default=42, help="seed of the randomization tests of the verdicts")
    judges.add_argument("--format", default="text", choices=("text", "json", "csv"),
                        help="text for reading; json: the object summary.json holds as `judgments`; csv: one row "
                             "per number (docs/command-line.md lists the columns)")


def run(args: argparse.Namespace) -> int:
    return write_output(run_judges(args))


def run_judges(args: argparse.Namespace) -> str:
    """The comparison of the judgment sets (and of the runs under them), as text, JSON or CSV."""
    comparison = judges_comparison(args)
    if args.format == "json":
        import json

        return json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if args.format == "csv":
        from ndcg_report.analysis.judgments.tables import tidy

        return tidy(comparison).to_csv(index=False, lineterminator="\n")
    from ndcg_report.commands.judges_text import comparison_text

    return comparison_text(comparison)


def judges_comparison(args: argparse.Namespace) -> "JudgmentComparison":
    """Read the sets (refusing a set that cannot be compared before any run is read), evaluate every run
    under every set with the same parameters, and compare (analysis.judgments.compare_judgments)."""
    from ndcg_report.analysis.judgments.comparison import compare_judgments
    from ndcg_report.analysis.judgments.sets import check_comparable_sets, with_filled_set
    from ndcg_report.core.presets import averaging, measure_set

    if args.most_queries < 0:
        raise ParameterError(f"--queries must be a whole number >= 0; got {args.most_queries}")
    set_paths, run_texts = _split_arguments(args.inputs)
    sets = _read_sets(set_paths)
    reference = next(iter(sets))
    sets, filled = with_filled_set(sets, args.fill_from)
    check_comparable_sets(sets, reference)
    runs, baseline = _runs(run_texts, args.baseline)
    cutoffs = DEFAULT_CUTOFFS if not (args.measures or args.cutoffs or args.preset) else args.cutoffs
    asked = measure_set(args.preset, args.measures, cutoffs, args.rel_level, args.judged_only)
    policies = averaging(args.preset, args.missing, args.no_relevant, args.identical_ids)
    evaluations = _evaluations(runs, sets, reference, dict(
        gain=args.gain, missing=policies.missing, no_relevant=policies.no_relevant,
        identical_ids=policies.identical_ids, measures=asked.measures, rel_level=asked.rel_level))
    return compare_judgments(evaluations, sets, reference, baseline, seed=args.seed, filled=filled,
                             most_queries=args.most_queries)


def _split_arguments(given: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(judgment set paths, (name, path) of each NAME=RUN): an argument naming no run is a set."""
    from ndcg_report.analysis.systems import split_run_option

    sets, runs = [], []
    for text in given:
        name, path = split_run_option(text, "RUN")
        if name:
            runs.append((name, path))
        else:
            sets.append(text)
    if len(sets) < 2:
        raise ParameterError(f"give at least two judgment sets (the reference, then each set to compare with it); got "
                             f"{len(sets)}: arguments without '=' are judgment sets, NAME=RUN are runs")
    return sets, runs


def _read_sets(paths: list[str]) -> "dict[str, Qrels]":
    """{name: qrels} in the order given, each named by its file name (file_name), made unique with -2, -3."""
    from ndcg_report.analysis.systems import check_distinct_paths, file_name
    from ndcg_report.inputs.reading import read_qrels
    from ndcg_report.analysis.judgments.sets import unique_set_name
    from ndcg_report.inputs.access.sources import source_path

    check_distinct_paths([Path(path) for path in paths], [f"judgment set {i}" for i in range(1, len(paths) + 1)], "judgment set")
    sets: dict = {}
    for path in paths:
        sets[unique_set_name(file_name(path) or "judgments", sets)] = read_qrels(source_path(path))
    return sets


def _runs(given: list[tuple[str, str]], baseline: str) -> tuple[list[tuple[str, str]], str | None]:
    """((name, path) of each run, the baseline's name): --baseline names one of the runs, or is one more
    [NAME=]RUN (named by its file name), appended."""
    from ndcg_report.analysis.systems import check_distinct_paths, derived_name, split_run_option, unique_names

    runs = list(given)
    chosen = None
    if baseline:
        if baseline in {name for name, _ in runs}:
            chosen = baseline
        else:
            name, path = split_run_option(baseline, "--baseline")
            runs.append((name or derived_name("", path, len(runs) + 1), path))
            chosen = runs[-1][0]
    if chosen is not None and len(runs) < 2:
        raise ParameterError("--baseline needs at least one other run to compare with it (NAME=RUN)")
    check_distinct_paths([Path(path) for _, path in runs], [f"run {name!r}" for name, _ in runs])
    unique_names([name for name, _ in runs], [name for name, _ in runs])
    return runs, chosen


def _evaluations(runs: list[tuple[str, str]], sets: "dict[str, Qrels]", reference: str, options: dict) -> dict:
    """{set: {run: evaluate_pass(run, set, **options)}}, each run read once; InputError for a run that
    shares no query with the reference."""
    from ndcg_report.core.evaluation_pass import evaluate_pass
    from ndcg_report.analysis.judgments.sets import unique_set_name
    from ndcg_report.inputs.access.sources import source_path
    from ndcg_report.inputs.tables import load_run

    evaluations: dict[str, dict] = {name: {} for name in sets}
    for run_name, path in runs:
        run = load_run(source_path(path))
        for set_name, qrels in sets.items():
            evaluation = evaluate_pass(run, qrels, **options)
            if set_name == reference and evaluation.counts.in_both == 0:
                raise InputError(run.path or path, None, f"run {run_name!r} has no query in common with the reference "
                                 f"judgments {qrels.path}", "check that the runs and the judgments are for the same topics")
            evaluations[set_name][run_name] = evaluation
        del run
    return evaluations if runs else {}
