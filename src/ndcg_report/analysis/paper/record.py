"""summary.json's keys that the paper tables read, made from an Experiment: the same numbers a report writes.

`experiment_record(experiment)` holds the same values as a report's summary.json under the same keys
(parameters.measures/headline/alpha/n_resamples/seed/rel_level, systems[].summary and .depth, baseline,
comparison_family, comparisons, pairwise; tests/analysis/test_paper_tables.py compares them with a built
report's), so `Experiment.to_latex()` and `ndcg-report table` make one table from one function.
It takes the Experiment's tables, never the Experiment's module (analysis.experiment imports this).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ndcg_report.analysis.paper.leaderboard import leaderboard_csv, leaderboard_latex, leaderboard_markdown

WRITERS: dict[str, Callable[..., str]] = {"latex": leaderboard_latex, "markdown": leaderboard_markdown,
                                          "csv": leaderboard_csv}  # a paper table's form: its writer, whose keywords are its options
SUMMARY_COLUMNS = ("n", "mean")
COMPARISON_COLUMNS = ("n", "delta", "holm_randomization_pvalue", "randomization_method")


def experiment_record(experiment: Any) -> dict:
    """The part of summary.json an analysis.experiment.Experiment gives (no title, files or command)."""
    measures, labels = experiment.measures, experiment.labels
    test, depth = experiment.pairwise, experiment.depth()
    return {
        "title": "",
        "parameters": {"measures": list(labels), "headline": experiment.headline.label, "alpha": experiment.alpha,
                       "n_resamples": experiment.n_resamples, "seed": experiment.seed,
                       "rel_level": _number(experiment.rel_level)},
        "systems": [{"name": name, "role": "baseline" if name == experiment.baseline_name else "run",
                     "depth": {key: _number(value) for key, value in depth.loc[name].items()},
                     "summary": _records(experiment.evaluations[name].summary, measures, SUMMARY_COLUMNS)}
                    for name in experiment.systems],
        "baseline": experiment.baseline_name,
        "comparison_family": {"adjustment": "holm", "over": "systems", "size": experiment.family_size},
        "comparisons": {name: _records(experiment.comparison(name), measures, COMPARISON_COLUMNS)
                        for name in experiment.names},
        **({"more_baselines": more_baselines_record(
            experiment, lambda frame: _records(frame, measures, COMPARISON_COLUMNS))} if experiment.more_baselines else {}),
        "pairwise": {
            "method": "randomized Tukey HSD", "measure": test.label, "n_queries": test.n_queries,
            "n_resamples": test.n_resamples, "null_distribution": test.method, "alpha": test.alpha,
            "systems": list(test.names), "means": {name: _number(test.means[name]) for name in test.names},
            "pvalues": {a: {b: _number(test.pvalues.at[a, b]) for b in test.names} for a in test.names},
        },
    }


def more_baselines_record(experiment: Any, records: Callable[[Any], dict]) -> dict:
    """summary.json's `more_baselines`: per baseline after the first, in order, its Holm family (the systems
    compared with it) and each system's comparison with it, that system's rows (measures in order) made by records."""
    found = {}
    for base in experiment.more_baselines:
        table = experiment.comparisons_with(base)
        systems = list(dict.fromkeys(table.index.get_level_values(0)))
        found[base] = {"family": {"adjustment": "holm", "over": "systems", "size": len(systems), "systems": systems},
                       "comparisons": {name: records(table.loc[name]) for name in systems}}
    return found


def _records(frame: Any, measures: tuple, columns: tuple[str, ...]) -> dict:
    """{label: {measure, k, column: value}} of a frame with one row per measure, in the measures' order."""
    return {measure.label: {"measure": measure.measure, "k": measure.k,
                            **{column: _number(row[column], column == "n") for column in columns}}
            for measure, (_, row) in zip(measures, frame.iterrows())}


def _number(value: object, count: bool = False) -> object:
    """A value as summary.json holds it: NaN as None, a count as an int, numpy numbers as Python's."""
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return None
        return int(value) if count and float(value).is_integer() else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def experiment_table(experiment: Any, form: str, path: str | Path | None = None, **options: Any) -> str | None:
    """The leaderboard of experiment_record(experiment) as `form` ('latex', 'markdown' or 'csv': the
    options of analysis.paper.leaderboard's leaderboard_latex, _markdown or _csv); with a path, written
    there atomically and None returned."""
    from ndcg_report.files import write_text_atomic

    text = WRITERS[form](experiment_record(experiment), **options)
    if path is None:
        return text
    write_text_atomic(Path(path), text)
    return None


Method = TypeVar("Method", bound=Callable[..., Any])


def with_options_of(form: str) -> Callable[[Method], Method]:
    """Decorate a method taking `**options` for the writer of `form` (WRITERS): its signature, as help()
    and Jupyter show it, lists that writer's keyword options (measures, systems, digits, ...) in place of
    `**options`, so they are declared once, by the writer."""
    writer = inspect.signature(WRITERS[form], eval_str=True)
    options = [parameter for parameter in writer.parameters.values() if parameter.kind is parameter.KEYWORD_ONLY]

    def decorate(method: Method) -> Method:
        own = inspect.signature(method)
        kept = [parameter for parameter in own.parameters.values() if parameter.kind is not parameter.VAR_KEYWORD]
        method.__signature__ = own.replace(parameters=[*kept, *options])  # type: ignore[attr-defined]
        return method

    return decorate
