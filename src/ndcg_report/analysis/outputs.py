"""The report's machine-readable outputs: per_query.csv rows and the summary.json record.

per_query.csv has one row per system, query and measure; summary.json (schema SCHEMA_VERSION) the
systems, comparisons with the baseline and pairwise tests, every per-measure record keyed by the
measure's label, 'nDCG@10', with its measure and k.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from ndcg_report.core.output_formats import PER_QUERY_COLUMNS, csv_text, csv_chunks
from ndcg_report.core.toplists import RBO_PERSISTENCE
from ndcg_report.analysis.drilldown import drilldown_queries
from ndcg_report.core.measures.names import Measure
from ndcg_report.analysis.tables.report_groups import groups_record
from ndcg_report.analysis.paper.record import more_baselines_record
from ndcg_report.analysis.report_model import Report
from ndcg_report.analysis.results import family_note, interval_name, verdicts
from ndcg_report.version import __version__

SCHEMA_VERSION = 4
COUNT_COLUMNS = frozenset({"n", "wins", "ties", "losses", "family_size"})


def per_query_table(report: Report) -> pd.DataFrame:
    """per_query.csv: system, role (run or baseline), then core.output_formats.PER_QUERY_COLUMNS."""
    return report.experiment.per_query


def summary_record(report: Report) -> dict:
    """summary.json: parameters, files, every system's summary, the comparisons with the baseline
    (Holm over the stated family), the pairwise test, verdicts and warnings."""
    p, experiment = report.params, report.experiment
    systems = []
    depth = experiment.depth()
    for name in experiment.systems:
        evaluation, run = experiment.evaluations[name], experiment.runs[name]
        systems.append({
            "name": name, "role": "baseline" if name == experiment.baseline_name else "run", "tag": run.tag,
            "file": Path(run.path).name if run.path else None, "queries": vars(evaluation.counts),
            "tied_lines": evaluation.tied_lines,
            "depth": {key: _json_number(value) for key, value in depth.loc[name].items()},
            "summary": _records(evaluation.summary, evaluation.measures),
        })
    comparisons = {name: _records(experiment.comparison(name), experiment.measures) for name in experiment.names}
    test = experiment.pairwise
    return {
        "schema_version": SCHEMA_VERSION,
        "ndcg_report_version": __version__,
        "title": report.title,
        "parameters": {
            "runs": [{"name": name, "file": item.path.name} for name, item in zip(experiment.names, p.runs)],
            "baseline": p.baseline.name, "baseline_name": experiment.baseline_name, "qrels": p.qrels.name,
            **({"more_baselines": [{"name": name, "file": item.path.name}
                                   for name, item in zip(experiment.more_baselines, p.more_baselines)]}
               if p.more_baselines else {}),
            "judgment_sets": [{"name": item.name, "file": item.path.name} for item in p.judgment_sets] or None,
            "fill_unjudged_from": p.fill_unjudged_from or None, "groups": p.groups.name if p.groups else None,
            "topics": p.topics.name if p.topics else None, "corpus": p.corpus.name if p.corpus else None,
            "bm25": p.bm25_settings or None, "cutoffs": [str(k) for k in p.cutoffs] if p.cutoffs else None,
            "preset": p.preset or None, "measures": experiment.labels, "rel_level": _json_number(experiment.rel_level),
            "headline": experiment.headline.label,
            "gain": p.gain, "missing": p.missing, "no_relevant": p.no_relevant, "identical_ids": p.identical_ids,
            **({"max_retrieved": p.max_retrieved} if p.max_retrieved else {}),  # trec_eval's -M, when given
            "averaging_given": list(p.averaging_given),
            "seed": p.seed, "n_resamples": experiment.n_resamples, "confidence": experiment.confidence,
            "alpha": experiment.alpha, "large_n": experiment.large_n,
            **({"against": p.against.name} if p.against else {}),  # gate.json beside it
        },
        "files": report.files.to_dict(orient="records"),
        "systems": systems,
        "baseline": experiment.baseline_name,
        "comparison_family": {
            "adjustment": "holm", "over": "systems", "size": experiment.family_size, "systems": list(experiment.names),
            "measures": experiment.labels, "tests": ["t", "wilcoxon", "randomization"],
            "interval": f"family_ci_*: {interval_name(experiment)} of the mean delta",
            "description": family_note(experiment),
        },
        "comparisons": comparisons,
        **({"more_baselines": more_baselines_record(experiment, lambda frame: _records(frame, experiment.measures))}
           if experiment.more_baselines else {}),
        "pairwise": {
            "method": "randomized Tukey HSD", "measure": test.label, "n_queries": test.n_queries,
            "n_resamples": test.n_resamples, "null_distribution": test.method, "alpha": test.alpha,
            "systems": list(test.names),
            "means": {name: _json_number(test.means[name]) for name in test.names},
            "pvalues": {a: {b: _json_number(test.pvalues.at[a, b]) for b in test.names} for a in test.names},
            "letters": {name: test.letters[name] for name in test.names},
        },
        "unjudged": {"file": "unjudged.tsv", "depth": experiment.drilldown_depth,
                     "documents": experiment.unjudged_pool().num_rows},
        "drilldown": {"depth": experiment.drilldown_depth, "queries": drilldown_queries(experiment, p.drilldown)[0],
                      "anchor": "report.html#q-<qid, percent-encoded>", "largest_changes": largest_changes(experiment)},
        "rank_overlap": {"measure": f"rank-biased overlap (p = {RBO_PERSISTENCE}) of each system's top "
                                    f"{experiment.drilldown_depth} with the baseline's, mean over the paired queries",
                         "systems": {name: _json_number(value) for name, value in
                                     experiment.rank_overlap().mean().items()}},
        "verdicts": verdicts(experiment),
        "judgments": _judgments(experiment),
        "groups": groups_record(report),
        "figures": list(report.figure_names),
        "warnings": report.warnings,
        "command": report.command,
    }


def _judgments(experiment) -> dict | None:
    """The judgment sets compared (analysis.judgments: `ndcg-report judges --format json`'s object), each
    set's file by its name as the other files are; None with one set of judgements."""
    if experiment.judgments is None:
        return None
    record = experiment.judgments.to_dict()
    for judgment_set in record["sets"]:
        if judgment_set["filled_from"] is None and judgment_set["path"]:
            judgment_set["path"] = Path(judgment_set["path"]).name
        elif judgment_set["filled_from"] is not None:
            judgment_set["path"] = ""
    return record


def largest_changes(experiment) -> dict:
    """Per system, its largest loss and largest win against the baseline on the headline measure
    ({"loss": {"qid", "delta"}, "win": ...}; None where it has none)."""
    changes = {}
    deltas = experiment.deltas()
    for name in experiment.names:
        column = deltas[name].sort_values(kind="stable")
        loss = column.index[0] if len(column) and column.iloc[0] < 0 else None
        win = column.index[-1] if len(column) and column.iloc[-1] > 0 else None
        changes[name] = {key: None if qid is None else {"qid": qid, "delta": float(column[qid])}
                         for key, qid in (("loss", loss), ("win", win))}
    return changes


def per_query_csv_chunks(report: Report) -> Iterator[bytes | memoryview]:
    """per_query.csv: the text pandas' to_csv writes for per_query_table(report), made by vectorised
    Arrow string operations (core.output_formats), a block of queries at a time."""
    experiment = report.experiment
    yield ("system,role," + ",".join(PER_QUERY_COLUMNS) + "\n").encode("utf-8")
    for name in experiment.systems:
        role = "baseline" if name == experiment.baseline_name else "run"
        yield from csv_chunks(experiment.evaluations[name], per_query=True, digits=None,
                              lead=f"{csv_text(name)},{role},", header=False, infinity=True)


def _records(frame: pd.DataFrame, measures: tuple[Measure, ...]) -> dict:
    """One record per row of a frame indexed by (measure, k) in the order of `measures`, keyed by label."""
    return {measure.label: {"measure": measure.measure, "k": measure.k,
                            **{c: _json_number(v, c) for c, v in row.items()}}
            for measure, (_, row) in zip(measures, frame.iterrows())}


def _json_number(value, column: str = ""):
    if column in COUNT_COLUMNS and isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value
