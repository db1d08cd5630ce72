"""A report's input files read and checked before any kernel starts, one run at a time.

No pandas, scipy or matplotlib is needed, so bad input fails fast. A run of millions of lines takes
hundreds of MB once parsed, so the runs are read one at a time: each is read, checked (and handed to
whoever keeps it) and let go before the next is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ndcg_report.core.evaluation_pass import averaged_queries
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.reading import Qrels, Run, read_qrels, read_run, read_topics
from ndcg_report.build.input_cache import load_parsed
from ndcg_report.analysis.report_model import ReportParameters

if TYPE_CHECKING:
    import pandas as pd


def parsed_inputs(params: ReportParameters) -> dict[Path, str]:
    """The input files check_inputs reads, in the order it reads them, each with its kind ('run', 'qrels',
    'groups', 'topics'): what a build copies before it reads them (build/input_snapshots.py). Not the
    corpus or the documents file: they are read where they are."""
    inputs = {params.qrels: "qrels", **{item.path: "qrels" for item in params.judgment_sets[1:]}}
    inputs.update({params.groups: "groups"} if params.groups is not None else {})
    inputs.update({item.path: "run" for item in params.compared_runs})
    inputs.update({path: kind for path, kind in ((params.baseline, "run"), (params.topics, "topics"))
                   if path is not None})
    return inputs


def input_qrels(path: Path, cache: Path | None = None, digests: dict[Path, str] | None = None) -> Qrels:
    """The qrels at path: from a build's folder of parsed inputs (report.input_cache) if it holds them
    unchanged, else read and checked; digests: the sha256 of inputs already known
    (inputs.access.snapshots.input_sha256)."""
    return load_parsed(cache, path, "qrels", (digests or {}).get(path)) or read_qrels(path)


def input_run(path: Path, cache: Path | None = None, digests: dict[Path, str] | None = None) -> Run:
    """The run at path, as input_qrels."""
    return load_parsed(cache, path, "run", (digests or {}).get(path)) or read_run(path)


@dataclass(frozen=True, eq=False)
class Averaged:
    """Per qrels query (the rows of an Evaluation), whether a run's headline measure is averaged there."""

    path: str  # the run's
    queries: np.ndarray


def checked_runs(params: ReportParameters, qrels: Qrels, cache: Path | None = None,
                 digests: dict[Path, str] | None = None,
                 paired_with: Averaged | None = None) -> Iterator[tuple[str, Run]]:
    """(name, run) of each run under test in turn, then of each other baseline, read as input_run does and
    checked to share a query with the qrels and, given the baseline's Averaged, to share an averaged query
    with the baseline (InputError if not). Nothing here holds a run once the next is asked for."""
    roles = ["run"] * len(params.runs) + ["baseline"] * len(params.more_baselines)
    for item, role in zip(params.compared_runs, roles):
        yield item.name, _paired(_common_query(input_run(item.path, cache, digests), role, qrels), qrels, params,
                                 paired_with)


def baseline_path(params: ReportParameters) -> Path:
    """The baseline run's path; ParameterError if there is none yet (a corpus BM25 is built first)."""
    if params.baseline is None:
        raise ParameterError("no baseline run: build the corpus BM25 first (corpus_baseline.with_bm25_baseline)")
    return params.baseline


def checked_baseline(params: ReportParameters, qrels: Qrels, cache: Path | None = None,
                     digests: dict[Path, str] | None = None) -> tuple[Run, Averaged]:
    """The baseline, read as input_run does and checked to share a query with the qrels and to have a
    query averaged on the headline measure (InputError if not); and those queries."""
    baseline = _common_query(input_run(baseline_path(params), cache, digests), "baseline", qrels)
    averaged = headline_averaged(baseline, qrels, params)
    check_baseline_averaged(averaged, qrels, params)
    return baseline, averaged


def check_run_and_qrels(params: ReportParameters) -> None:
    """Read and check the runs and the qrels, one run at a time (before a BM25 baseline is built, so
    typos fail fast); InputError for bad input."""
    qrels = read_qrels(params.qrels)
    for _ in checked_runs(params, qrels):
        pass


def check_inputs(params: ReportParameters, cache: Path | None = None, digests: dict[Path, str] | None = None,
                 keep: Callable[[Run | Qrels], object] | None = None) -> tuple[Qrels, pd.Series | None]:
    """Read and check every input file, holding one run at a time; return the qrels and the topics.

    InputError for bad input, no query in common with the qrels, no query averaged in the baseline
    or none in both a run and the baseline; the checks come in this order, each over the runs in
    order, then the baseline. keep: called with the qrels, then each run once it is read and has a
    query in common with the qrels, then the baseline once it is checked (a build saves them for its
    kernels).
    cache, digests: as for input_qrels.
    """
    baseline_path(params)
    qrels = input_qrels(params.qrels, cache, digests)
    if keep is not None:
        keep(qrels)
    judgment_sets(params, qrels, cache, digests, keep)
    if params.groups is not None:  # a groups file naming no query of the qrels is refused before any kernel
        from ndcg_report.analysis.tables.groups import checked_groups

        checked_groups(params.groups, qrels)
    averaged = []
    for _, run in checked_runs(params, qrels, cache, digests):
        averaged.append(headline_averaged(run, qrels, params))
        if keep is not None:
            keep(run)
        del run  # not held while the next run is read
    baseline, baseline_averaged = checked_baseline(params, qrels, cache, digests)
    if keep is not None:
        keep(baseline)
    del baseline
    for run_averaged in averaged:
        check_paired(run_averaged, baseline_averaged, params)
    topics = read_topics(params.topics) if params.topics else None
    return qrels, topics


def judgment_sets(params: ReportParameters, qrels: Qrels, cache: Path | None = None,
                  digests: dict[Path, str] | None = None, keep: Callable[[Run | Qrels], object] | None = None,
                  ) -> dict[str, Qrels]:
    """{name: Qrels} of every judgment set (the reference, already read as qrels, first), each read as
    input_qrels reads and handed to keep; InputError naming a set that shares no query or pair with the
    reference (analysis.judgments.sets.check_comparable_sets); {} with one set of judgements."""
    from ndcg_report.analysis.judgments.sets import check_comparable_sets

    if not params.judgment_sets:
        return {}
    reference, *others = params.judgment_sets
    sets = {reference.name: qrels}
    for item in others:
        sets[item.name] = input_qrels(item.path, cache, digests)
        if keep is not None:
            keep(sets[item.name])
    check_comparable_sets(sets, reference.name)  # a filled set holds the reference: nothing more to check
    return sets


def headline_averaged(run: Run, qrels: Qrels, params: ReportParameters) -> Averaged:
    """Where the run's headline measure is averaged: from the queries it has (core.evaluation_pass.averaged_queries,
    which reads only its qid column)."""
    return Averaged(run.path, averaged_queries(run, qrels, params.headline, params.missing, params.no_relevant,
                                               params.rel_level))


def check_baseline_averaged(baseline: Averaged, qrels: Qrels, params: ReportParameters) -> None:
    """InputError unless the baseline has a query averaged on the headline measure."""
    if not baseline.queries.any():
        left_out = [reason for policy, reason in (
            (params.no_relevant == "skip", "queries without a relevant document (--no-relevant skip)"),
            (params.missing == "skip", "queries the baseline did not retrieve for (--missing skip)"),
        ) if policy]
        raise InputError(
            qrels.path, None, f"no judged query is averaged for the baseline {baseline.path}: left out are "
            + " and ".join(left_out), "check the qrels' labels and the baseline, or average those queries as 0",
        )


def check_paired(run: Averaged, baseline: Averaged, params: ReportParameters) -> None:
    """InputError unless the run has a query averaged together with the baseline (with missing=skip,
    runs and baseline may cover different queries)."""
    if not (run.queries & baseline.queries).any():
        raise InputError(
            run.path, None,
            f"no query is averaged in both this run and the baseline {baseline.path} "
            f"(missing={params.missing}, no_relevant={params.no_relevant})",
            "give runs of the same queries, or --missing zero to count a query a run lacks as 0",
        )


def _paired(run: Run, qrels: Qrels, params: ReportParameters, baseline: Averaged | None) -> Run:
    """run itself, checked by check_paired against the baseline if given."""
    if baseline is not None:
        check_paired(headline_averaged(run, qrels, params), baseline, params)
    return run


def _common_query(system: Run, role: str, qrels: Qrels) -> Run:
    """system itself; InputError if it has no query in common with the qrels."""
    judged = set(qrels.table["qid"].chunk(0).dictionary.to_pylist())
    if not judged & set(system.table["qid"].chunk(0).dictionary.to_pylist()):
        raise InputError(system.path, None, f"the {role} has no query in common with the qrels {qrels.path}",
                         "check that they are for the same topics")
    return system
