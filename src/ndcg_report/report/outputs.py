"""The report's machine-readable outputs: per_query.csv (one row per system, query and k) and
summary.json (schema SCHEMA_VERSION: systems, comparisons with the baseline, pairwise tests)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from ndcg_report.core.output_formats import PER_QUERY_COLUMNS, csv_text, csv_chunks
from ndcg_report.report.content import Report, verdicts
from ndcg_report.version import __version__

SCHEMA_VERSION = 2
COUNT_COLUMNS = frozenset({"n", "wins", "ties", "losses"})


def per_query_table(report: Report) -> pd.DataFrame:
    """per_query.csv: system, role (run or baseline), qid, k, num_ret, num_rel, dcg, idcg, ndcg, judged, in_run, averaged."""
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
            "summary": _records(evaluation.summary),
        })
    comparisons = {name: _records(experiment.comparison(name)) for name in experiment.names}
    test = experiment.pairwise
    return {
        "schema_version": SCHEMA_VERSION,
        "ndcg_report_version": __version__,
        "title": report.title,
        "parameters": {
            "runs": [{"name": name, "file": item.path.name} for name, item in zip(experiment.names, p.runs)],
            "baseline": p.baseline.name, "baseline_name": experiment.baseline_name, "qrels": p.qrels.name,
            "topics": p.topics.name if p.topics else None, "corpus": p.corpus.name if p.corpus else None,
            "bm25": p.bm25_settings or None, "cutoffs": [str(k) for k in p.cutoffs],
            "headline_k": experiment.headline_k, "gain": p.gain, "missing": p.missing, "no_relevant": p.no_relevant,
            "seed": p.seed, "n_resamples": experiment.n_resamples, "confidence": experiment.confidence,
            "alpha": experiment.alpha, "large_n": experiment.large_n,
        },
        "files": report.files.to_dict(orient="records"),
        "systems": systems,
        "baseline": experiment.baseline_name,
        "comparison_family": {
            "adjustment": "holm", "size": experiment.family_size, "systems": list(experiment.names),
            "cutoffs": experiment.labels, "tests": ["t", "wilcoxon", "randomization"],
            "description": "every (system, k) comparison with the baseline, adjusted separately for each test",
        },
        "comparisons": comparisons,
        "pairwise": {
            "method": "randomized Tukey HSD", "k": test.k, "n_queries": test.n_queries,
            "n_resamples": test.n_resamples, "null_distribution": test.method, "alpha": test.alpha,
            "systems": list(test.names),
            "means": {name: _json_number(test.means[name]) for name in test.names},
            "pvalues": {a: {b: _json_number(test.pvalues.at[a, b]) for b in test.names} for a in test.names},
            "letters": {name: test.letters[name] for name in test.names},
        },
        "verdicts": verdicts(experiment),
        "warnings": report.warnings,
        "command": report.command,
    }


def per_query_csv_chunks(report: Report) -> Iterator[bytes | memoryview]:
    """per_query.csv: the text pandas' to_csv writes for per_query_table(report), made by vectorised
    Arrow string operations (core.output_formats), a block of queries at a time."""
    experiment = report.experiment
    yield ("system,role," + ",".join(PER_QUERY_COLUMNS) + "\n").encode("utf-8")
    for name in experiment.systems:
        role = "baseline" if name == experiment.baseline_name else "run"
        yield from csv_chunks(experiment.evaluations[name], per_query=True, digits=None,
                              lead=f"{csv_text(name)},{role},", header=False, infinity=True)


def save_outputs(report: Report, folder: str | Path) -> None:
    """Write per_query.csv and summary.json into folder."""
    folder = Path(folder)
    with open(folder / "per_query.csv", "wb") as out:
        for chunk in per_query_csv_chunks(report):
            out.write(chunk)
    text = json.dumps(summary_record(report), indent=2, sort_keys=False, allow_nan=False) + "\n"
    (folder / "summary.json").write_text(text, encoding="utf-8")


def _records(frame: pd.DataFrame) -> dict:
    return {str(k): {c: _json_number(v, c) for c, v in row.items()} for k, row in frame.iterrows()}


def _json_number(value, column: str = ""):
    if column in COUNT_COLUMNS and isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value
