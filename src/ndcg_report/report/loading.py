"""Reading and checking a report's input files, before any kernel starts (no pandas, scipy or
matplotlib needed, so bad input fails fast). A run of millions of lines takes hundreds of MB once
parsed, so the runs are read one at a time: each is read, checked (and handed to whoever keeps it)
and let go before the next is read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ndcg_report.core.metrics import evaluate
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.trec import Qrels, Run, read_qrels, read_run, read_topics
from ndcg_report.report.input_cache import load_parsed
from ndcg_report.report.parameters import ReportParameters

if TYPE_CHECKING:
    import pandas as pd

    from ndcg_report.report.experiment import Experiment


def input_qrels(path: Path, cache: Path | None = None, digests: dict[Path, str] | None = None) -> Qrels:
    """The qrels at path: from a build's folder of parsed inputs (report.input_cache) if it holds them
    unchanged, else read and checked; digests: path_sha256 of inputs already hashed."""
    return load_parsed(cache, path, "qrels", (digests or {}).get(path)) or read_qrels(path)


def input_run(path: Path, cache: Path | None = None, digests: dict[Path, str] | None = None) -> Run:
    """The run at path, as input_qrels."""
    return load_parsed(cache, path, "run", (digests or {}).get(path)) or read_run(path)


def checked_runs(params: ReportParameters, qrels: Qrels, cache: Path | None = None,
                 digests: dict[Path, str] | None = None) -> Iterator[tuple[str, Run]]:
    """(name, run) of each run under test in turn, read as input_run does and checked to share a query
    with the qrels (InputError if not). Nothing here holds a run once the next is asked for."""
    for item in params.runs:
        yield item.name, _common_query(input_run(item.path, cache, digests), "run", qrels)


def baseline_path(params: ReportParameters) -> Path:
    """The baseline run's path; ParameterError if there is none yet (a corpus BM25 is built first)."""
    if params.baseline is None:
        raise ParameterError("no baseline run: build the corpus BM25 first (corpus_baseline.with_bm25_baseline)")
    return params.baseline


def checked_baseline(params: ReportParameters, qrels: Qrels, cache: Path | None = None,
                     digests: dict[Path, str] | None = None) -> Run:
    """The baseline, read as input_run does and checked to share a query with the qrels."""
    return _common_query(input_run(baseline_path(params), cache, digests), "baseline", qrels)


def check_run_and_qrels(params: ReportParameters) -> None:
    """Read and check the runs and the qrels, one run at a time (before a BM25 baseline is built, so
    typos fail fast); InputError for bad input."""
    qrels = read_qrels(params.qrels)
    for _ in checked_runs(params, qrels):
        pass


def check_inputs(params: ReportParameters, cache: Path | None = None, digests: dict[Path, str] | None = None,
                 keep: Callable[[Run | Qrels], object] | None = None) -> tuple[Qrels, pd.Series | None]:
    """Read and check every input file, holding one run at a time; return the qrels and the topics.

    InputError for bad input, no query in common with the qrels, or (check_paired_queries) no query
    averaged in the baseline or in both a run and the baseline; the checks come in this order, each
    over the runs in order, then the baseline. keep: called with the qrels, then each run and then
    the baseline once each is read and has a query in common with the qrels (a build saves them for
    its kernels). cache, digests: as for input_qrels.
    """
    baseline_path(params)
    qrels = input_qrels(params.qrels, cache, digests)
    if keep is not None:
        keep(qrels)
    averaged = []
    for _, run in checked_runs(params, qrels, cache, digests):
        averaged.append((run.path, headline_averaged(run, qrels, params)))
        if keep is not None:
            keep(run)
        del run  # not held while the next run is read
    baseline = checked_baseline(params, qrels, cache, digests)
    baseline_averaged = headline_averaged(baseline, qrels, params)
    if keep is not None:
        keep(baseline)
    check_paired_queries(baseline.path, baseline_averaged, averaged, qrels, params)
    del baseline
    topics = read_topics(params.topics) if params.topics else None
    return qrels, topics


def load_inputs(params: ReportParameters, cache: Path | None = None,
                digests: dict[Path, str] | None = None) -> tuple[list[Run], Run, Qrels, pd.Series | None]:
    """check_inputs, keeping every run: (runs, baseline, qrels, topics), all in memory at once."""
    kept: list[Run] = []
    qrels, topics = check_inputs(params, cache, digests,
                                 keep=lambda parsed: kept.append(parsed) if isinstance(parsed, Run) else None)
    return kept[:-1], kept[-1], qrels, topics


def headline_averaged(run: Run, qrels: Qrels, params: ReportParameters) -> np.ndarray:
    """Per qrels query, whether the run's value of the headline measure enters its mean."""
    options = dict(gain=params.gain, missing=params.missing, no_relevant=params.no_relevant,
                   measures=(params.headline,), rel_level=params.rel_level)
    return evaluate(run, qrels, **options).averaged[:, 0]


def check_paired_queries(baseline_path: str, baseline_averaged: np.ndarray,
                         runs: Iterable[tuple[str, np.ndarray]], qrels: Qrels, params: ReportParameters) -> None:
    """InputError unless the baseline has a query averaged on the headline measure and every run has
    one averaged together with the baseline (with missing=skip, runs and baseline may cover different
    queries). The averaged arrays are per qrels query, as headline_averaged gives them (or the
    headline's column of an Evaluation's `averaged`); runs: (path, averaged) of each run in order."""
    if not baseline_averaged.any():
        left_out = [reason for policy, reason in (
            (params.no_relevant == "skip", "queries without a relevant document (--no-relevant skip)"),
            (params.missing == "skip", "queries the baseline did not retrieve for (--missing skip)"),
        ) if policy]
        raise InputError(
            qrels.path, None, f"no judged query is averaged for the baseline {baseline_path}: left out are "
            + " and ".join(left_out), "check the qrels' labels and the baseline, or average those queries as 0",
        )
    for path, averaged in runs:
        if not (averaged & baseline_averaged).any():
            raise InputError(
                path, None,
                f"no query is averaged in both this run and the baseline {baseline_path} "
                f"(missing={params.missing}, no_relevant={params.no_relevant})",
                "give runs of the same queries, or --missing zero to count a query a run lacks as 0",
            )


def check_experiment_pairs(experiment: Experiment, qrels: Qrels, params: ReportParameters) -> None:
    """check_paired_queries from the headline's column of an experiment's evaluations (the same
    per-query flags headline_averaged gives: they depend on the run, the qrels and the options alone)."""
    column = experiment.baseline.column(params.headline)
    check_paired_queries(
        experiment.runs[experiment.baseline_name].path, experiment.baseline.averaged[:, column],
        [(experiment.runs[name].path, experiment.evaluations[name].averaged[:, column]) for name in experiment.names],
        qrels, params)


def _common_query(system: Run, role: str, qrels: Qrels) -> Run:
    """system itself; InputError if it has no query in common with the qrels."""
    judged = set(qrels.table["qid"].chunk(0).dictionary.to_pylist())
    if not judged & set(system.table["qid"].chunk(0).dictionary.to_pylist()):
        raise InputError(system.path, None, f"the {role} has no query in common with the qrels {qrels.path}",
                         "check that they are for the same topics")
    return system
