"""The suite report's data and files: its collections' reports, the Suite, summary.json and table.csv.

A SuiteReport is what the suite notebook shows: each collection's Report (exactly what that
collection's own report computes) and the Suite made of their Experiments. `summary_record` is its
summary.json (schema SUITE_SCHEMA_VERSION, `kind` "suite") and `table_csv` its table.csv, one row per
(collection, system, measure): Suite.cells.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ndcg_report.analysis.report_model import Report
from ndcg_report.analysis.tables.suite import Suite
from ndcg_report.version import __version__

SUITE_SCHEMA_VERSION = 1
KIND = "suite"  # summary.json's `kind`: a suite's, where a report's has none


@dataclass(frozen=True, eq=False)
class SuiteReport:
    """Everything a suite report shows: the collections' Reports (in order), the Suite over them, the
    links to the collections' own reports (collection -> relative URL, only those built), the command
    that rebuilds the suite and its own warnings (suite_warnings; each collection's are its Report's)."""

    title: str
    reports: Mapping[str, Report]
    suite: Suite
    command: str
    links: Mapping[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def suite_warnings(suite: Suite) -> list[str]:
    """What to read first of the suite itself: a system missing from collections, too few collections for
    the tests over collections."""
    lines = []
    counts = suite.table.loc[suite.headline.label, "collections"]
    for system in suite.names:
        if counts[system] < len(suite.collections):
            missing = [c for c in suite.collections if system not in suite.experiments[c].names]
            lines.append(f"{system} is missing from {', '.join(missing)}: its mean over collections is over "
                         f"{int(counts[system])} of {len(suite.collections)}, and the collections without it "
                         "are left out of the ranks and Friedman's test")
    test = suite.tests
    if not test.has_power or any(test.wilcoxon["verdict"] == "no power"):
        lines.append(f"{len(suite.collections)} collection(s): the tests over collections have no power (a verdict "
                     f"needs at least {test.min_collections}, Demšar 2006); read the table, not a test")
    return lines


def table_csv(suite: Suite) -> str:
    """table.csv: Suite.cells (collection, system, role, measure as 'nDCG@10', n, mean, delta, ci_low,
    ci_high, ci_level, p_holm, significant), numbers in full precision, missing values empty."""
    frame = suite.cells.copy()
    frame["significant"] = frame["significant"].map({True: "true", False: "false"}).astype(object)
    return frame.to_csv(index=False, lineterminator="\n", float_format=lambda value: repr(float(value)))


def summary_record(report: SuiteReport) -> dict:
    """summary.json of a suite: parameters, per collection its files (name, format, sha256, lines), its
    parameters and the link to its report, the table (Suite.table as records), the tests over
    collections of every measure (AcrossCollections.record), the warnings and the command."""
    suite = report.suite
    return {
        "schema_version": SUITE_SCHEMA_VERSION, "kind": KIND, "ndcg_report_version": __version__,
        "title": report.title,
        "parameters": {"baseline_name": suite.baseline_name, "systems": list(suite.names),
                       "collections": list(suite.collections), "measures": [m.label for m in suite.measures],
                       "headline": suite.headline.label, "alpha": suite.alpha},
        "collections": [_collection_record(name, collection, report.links.get(name))
                        for name, collection in report.reports.items()],
        "table": _table_records(suite.table),
        "tests": {m.label: suite.across(m).record() for m in suite.measures},
        "warnings": [*report.warnings, *(f"{name}: {warning}" for name, collection in report.reports.items()
                                         for warning in collection.warnings)],
        "command": report.command,
    }


def _collection_record(name: str, report: Report, link: str | None) -> dict:
    p, experiment = report.params, report.experiment
    return {
        "name": name, "report": link or None, "systems": list(experiment.names),
        "files": [{key: _plain(value) for key, value in row.items()} for row in report.files.to_dict("records")],
        "parameters": {
            "qrels": p.qrels.name, "baseline": Path(str(p.baseline)).name, "topics": p.topics.name if p.topics else None,
            "preset": p.preset or None, "measures": experiment.labels, "headline": experiment.headline.label,
            "rel_level": _plain(experiment.rel_level), "gain": p.gain, "missing": p.missing,
            "no_relevant": p.no_relevant, "identical_ids": p.identical_ids, "seed": p.seed,
            "n_resamples": experiment.n_resamples, "confidence": experiment.confidence, "alpha": experiment.alpha,
        },
        "queries": int(len(experiment.scores(experiment.headline))),
    }


def _table_records(table: pd.DataFrame) -> list[dict]:
    """Suite.table as one record per (measure, system): the collections' means under `means` (None where
    missing), then the columns over collections."""
    collections = [c for c in table.columns if c not in ("mean", "collections", "mean_rank", "ranked_on", "wins",
                                                         "ties", "losses")]
    records = []
    for (measure, system), row in table.iterrows():
        records.append({"measure": measure, "system": system,
                        "means": {c: _plain(row[c]) for c in collections},
                        **{key: _plain(row[key]) for key in table.columns if key not in collections}})
    return records


def _plain(value: object) -> object:
    """A JSON value: NaN and NA as None, numpy numbers as Python's; counts as int."""
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value
