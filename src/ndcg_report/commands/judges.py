"""`ndcg-report judges`: two or more judgment sets compared, on their labels and on the runs' orders.

Judgment sets are `--set [NAME=]PATH` (repeated; the first is the reference) and every argument a run
(`NAME=RUN`); without --set, arguments without `=` are the sets (named by their file names) and
`NAME=RUN` the runs. Without runs only the labels are compared. Every set is read and checked, and every run evaluated under every
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
    judges.add_argument("inputs", nargs="*", metavar="SET_OR_RUN",
                        help="judgment sets (REFERENCE OTHER [OTHER...]: qrels in any format eval takes, named by "
                             "their file names; the first is the reference) and runs as NAME=RUN (optional: without "
                             "runs only the labels are compared); with --set, runs only")
    judges.add_argument("--set", action="append", default=[], dest="sets", metavar="[NAME=]PATH",
                        help="a judgment set and its name (repeat: the first is the reference; without NAME=, named "
                             "by its file name), as build --qrels NAME=PATH; every argument is then a run")
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
    judges.add_argument("--shared-queries", action="store_true",
                        help="evaluate every run only on the queries all the runs have (the means, orders, verdicts "
                             "and correlations; the label agreement stays over every pair)")
    judges.add_argument("--format", default="text", choices=("text", "json", "csv", "latex", "markdown"),
                        help="text for reading; json: the object summary.json holds as `judgments`; csv: one row "
                             "per number (docs/command-line.md lists the columns); latex, markdown: the paper tables "
                             "(each system's mean under each set, and the sets' agreement and system orders)")


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
    if args.format in ("latex", "markdown"):
        tables = comparison.to_latex() if args.format == "latex" else comparison.to_markdown()
        return tables if tables.endswith("\n") else tables + "\n"
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
    set_paths, run_texts = _split_arguments(args.inputs, args.sets)
    sets = _read_sets(set_paths)
    reference = next(iter(sets))
    sets, filled = with_filled_set(sets, args.fill_from)
    check_comparable_sets(sets, reference)
    runs, baseline = _runs(run_texts, args.baseline)
    cutoffs = DEFAULT_CUTOFFS if not (args.measures or args.cutoffs or args.preset) else args.cutoffs
    asked = measure_set(args.preset, args.measures, cutoffs, args.rel_level, args.judged_only)
    policies = averaging(args.preset, args.missing, args.no_relevant, args.identical_ids)
    evaluated = _on_shared_queries(sets, runs) if args.shared_queries and runs else sets
    evaluations = _evaluations(runs, evaluated, reference, dict(
        gain=args.gain, missing=policies.missing, no_relevant=policies.no_relevant,
        identical_ids=policies.identical_ids, measures=asked.measures, rel_level=asked.rel_level))
    comparison = compare_judgments(evaluations, sets, reference, baseline, seed=args.seed, filled=filled,
                                   most_queries=args.most_queries)
    if args.shared_queries and runs:
        import dataclasses

        shared = len(set(next(iter(evaluated.values())).table["qid"].to_pylist()))
        comparison = dataclasses.replace(comparison, runs_shared_queries=shared)
    return comparison


def _on_shared_queries(sets: "dict[str, Qrels]", runs: list[tuple[str, str]]) -> "dict[str, Qrels]":
    """Every set restricted to the queries all the runs have (each run read once more to evaluate it);
    ParameterError if they share none that some set judges."""
    from ndcg_report.analysis.judgments.sets import on_queries
    from ndcg_report.inputs.access.sources import source_path
    from ndcg_report.inputs.tables import load_run

    shared: set[str] = set()
    for position, (_, path) in enumerate(runs):
        qids = {str(qid) for qid in load_run(source_path(path)).table["qid"].to_pylist()}
        shared = qids if position == 0 else shared & qids
    for name, qrels in sets.items():
        if not shared & {str(qid) for qid in qrels.table["qid"].to_pylist()}:
            raise ParameterError(f"--shared-queries: the runs share no query that judgment set {name!r} judges; leave "
                                 "the option out, or give runs of the same queries")
    restricted = {name: on_queries(qrels, frozenset(shared)) for name, qrels in sets.items()}
    return restricted


def _split_arguments(given: list[str], named: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """((name, path) of each judgment set, (name, path) of each NAME=RUN). With --set the sets are those
    and every argument is a run; without, an argument naming no run is a set (named '' here: by its file).
    ParameterError for fewer than two sets, a plain path among the runs of --set, or a set and a run
    (or two sets) of one name."""
    from ndcg_report.analysis.systems import split_run_option

    sets, runs = [], []
    for text in given:
        name, path = split_run_option(text, "RUN")
        if name:
            runs.append((name, path))
        elif named:
            raise ParameterError(f"{text!r}: with --set every argument is a run, given as NAME=RUN; give a judgment "
                                 "set as --set NAME=PATH")
        else:
            sets.append(("", text))
    if named:
        sets = [split_run_option(text, "--set") for text in named]
    if len(sets) < 2:
        raise ParameterError(f"give at least two judgment sets (the reference, then each set to compare with it); got "
                             f"{len(sets)}: --set NAME=PATH for each, or arguments without '=' (NAME=RUN are runs)")
    runs_by_name = {name.casefold(): name for name, _ in runs}
    seen: set[str] = set()
    for name, _ in sets:
        if not name:
            continue
        if name.casefold() in seen:
            raise ParameterError(f"two judgment sets are named {name!r}; give each set its own name (--set NAME=PATH)")
        seen.add(name.casefold())
        if name.casefold() in runs_by_name:
            raise ParameterError(f"{name!r} names both a judgment set and a run ({runs_by_name[name.casefold()]}=RUN); "
                                 "give them different names")
    return sets, runs


def _read_sets(given: list[tuple[str, str]]) -> "dict[str, Qrels]":
    """{name: qrels} in the order given; a set given without a name is named by its file name (file_name),
    made unique with -2, -3."""
    from ndcg_report.analysis.systems import check_distinct_paths, file_name
    from ndcg_report.inputs.reading import read_qrels
    from ndcg_report.analysis.judgments.sets import unique_set_name
    from ndcg_report.inputs.access.sources import source_path

    paths = [path for _, path in given]
    check_distinct_paths([Path(path) for path in paths], [f"judgment set {i}" for i in range(1, len(paths) + 1)], "judgment set")
    taken = {name: None for name, _ in given if name}
    sets: dict = {}
    for name, path in given:
        sets[name or unique_set_name(file_name(path) or "judgments", taken)] = read_qrels(source_path(path))
        taken.update(dict.fromkeys(sets))
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
