"""Build a suite: its collections' inputs checked, its notebook through the report's pipeline, published.

The suite is a NotebookJob of build.pipeline.build_notebook, the machinery of a report's build: the
inputs read and checked before any kernel (each collection's, as its report checks them), papermill ->
nbval -> nbconvert of the suite notebook in staging, atomic publish. With its collections' reports
(--with-reports) each is built by build_report into the staging folder's `collections/NAME/` before the
notebook runs, so the suite and its reports are published together, or nothing is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ndcg_report.build.loading import check_inputs, parsed_inputs
from ndcg_report.build.pipeline import BuildResult, NotebookJob, build_notebook, build_report, package_file
from ndcg_report.build.publish import REPORTS_FOLDER, SUITE_OUTPUTS
from ndcg_report.build.suite_parameters import SuiteParameters, suite_notebook_parameters
from ndcg_report.errors import BuildError
from ndcg_report.inputs.access.stamps import InputWatch

SUITE_NOTEBOOK = "ndcg_suite.ipynb"


def report_link(name: str) -> str:
    """Where a collection's report is, relative to the suite's report.html."""
    return f"{REPORTS_FOLDER}/{name}/report.html"


def with_report_links(params: SuiteParameters) -> SuiteParameters:
    """params with every collection linked to its report, as --with-reports builds them."""
    return replace(params, collections=tuple(replace(c, report=report_link(c.name)) for c in params.collections))


def build_suite(params: SuiteParameters, out_dir: Path, timeout: int = 600, with_reports: bool = False,
                progress: bool = False, fork_server: str | None = None, inputs: InputWatch | None = None) -> BuildResult:
    """Build the suite report of params into out_dir (report.html, report.ipynb, summary.json, table.csv;
    with_reports: each collection's report in collections/NAME/ too, linked from the suite); on any failure
    out_dir is left as it was. timeout, progress, fork_server, inputs: as build_report's."""
    if with_reports:
        params = with_report_links(params)
    job = NotebookJob(template=package_file("notebooks", SUITE_NOTEBOOK), parameters=suite_notebook_parameters(params),
                      inputs=tuple(params.input_paths()), check_inputs=lambda keep: check_suite_inputs(params, keep),
                      outputs=SUITE_OUTPUTS, parsed={path: kind for collection in params.collections
                                                     for path, kind in parsed_inputs(collection.params).items()},
                      prepare=(lambda staging, forks: build_collection_reports(params, staging, timeout, forks, progress))
                      if with_reports else None)
    return build_notebook(job, out_dir, timeout, progress=progress, fork_server=fork_server, inputs=inputs)


def check_suite_inputs(params: SuiteParameters, keep: Callable[[object], object] | None = None) -> None:
    """Read and check every collection's inputs as its report would (build.loading.check_inputs), in
    order; InputError for the first bad one."""
    for collection in params.collections:
        check_inputs(collection.params, keep=keep)


def build_collection_reports(params: SuiteParameters, staging: Path, timeout: int, fork_server: str,
                             progress: bool = False) -> None:
    """Each collection's report, built by build_report into staging/collections/NAME (its inputs were
    checked already); BuildError naming the collection whose build failed."""
    for collection in params.collections:
        try:
            build_report(collection.params, staging / REPORTS_FOLDER / collection.name, timeout=timeout,
                         progress=progress, fork_server=fork_server)
        except BuildError as exc:
            raise BuildError(f"{exc} (the report of collection {collection.name!r})") from None
