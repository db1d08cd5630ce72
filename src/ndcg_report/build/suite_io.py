"""The suite notebook's end of the build: each collection's Report, the Suite, the suite's files written.

Each collection is read exactly as its own report reads it (build.notebook_io.load_report, through the
build's input cache), so every cell of the suite is that report's number; the suite's files
(summary.json, table.csv) are written beside the notebook, except in nbval's re-execution.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ndcg_report.analysis.tables.suite import compare_suite
from ndcg_report.analysis.tables.suite_report import SuiteReport, suite_warnings, summary_record, table_csv
from ndcg_report.build.notebook_io import load_report
from ndcg_report.build.steps.processes import REVALIDATION_ENV
from ndcg_report.build.suite_parameters import SuiteParameters
from ndcg_report.errors import ParameterError


def load_suite(params: SuiteParameters) -> SuiteReport:
    """Every collection's Report (load_report of its parameters), then the Suite over their Experiments."""
    reports = {collection.name: load_report(collection.params) for collection in params.collections}
    try:
        suite = compare_suite({name: report.experiment for name, report in reports.items()},
                              baseline_name=params.baseline_name, systems=params.systems or None,
                              headline=params.headline or None)
    except ParameterError as exc:
        raise ParameterError(f"the suite: {exc}") from None
    return SuiteReport(title=params.title or suite_title(suite.names, suite.collections), reports=reports,
                       suite=suite, command=params.command,
                       links={c.name: c.report for c in params.collections if c.report},
                       warnings=suite_warnings(suite))


def suite_title(names: tuple[str, ...], collections: tuple[str, ...]) -> str:
    """The title of a suite given none: its systems on its collections."""
    return f"{', '.join(names)} on {', '.join(collections)}"


def save_suite_outputs(report: SuiteReport, folder: str | Path) -> None:
    """Write summary.json and table.csv into folder; nothing in the build's nbval re-execution (the files
    are papermill's, from the execution the report shows)."""
    if os.environ.get(REVALIDATION_ENV):
        return
    folder = Path(folder)
    (folder / "table.csv").write_text(table_csv(report.suite), encoding="utf-8")
    text = json.dumps(summary_record(report), indent=2, allow_nan=False) + "\n"
    (folder / "summary.json").write_text(text, encoding="utf-8")
