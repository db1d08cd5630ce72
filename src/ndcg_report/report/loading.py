"""Reading and checking a report's input files, before any kernel starts (no pandas, scipy or
matplotlib needed, so bad input fails fast)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ndcg_report.core.metrics import evaluate
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.trec import Qrels, Run, read_qrels, read_run, read_topics
from ndcg_report.report.input_cache import load_parsed
from ndcg_report.report.parameters import ReportParameters

if TYPE_CHECKING:
    import pandas as pd


def load_run_and_qrels(params: ReportParameters, cache: Path | None = None,
                       digests: dict[Path, str] | None = None) -> tuple[list[Run], Qrels]:
    """Read and check the runs and the qrels (before a BM25 baseline is built, so typos fail fast);
    cache: a build's folder of parsed inputs (report.input_cache), used where a file is unchanged;
    digests: path_sha256 of inputs already hashed."""
    digests = digests or {}
    qrels = load_parsed(cache, params.qrels, "qrels", digests.get(params.qrels)) or read_qrels(params.qrels)
    runs = []
    for item in params.runs:
        run = load_parsed(cache, item.path, "run", digests.get(item.path)) or read_run(item.path)
        _check_common_query(run, "run", qrels)
        runs.append(run)
    return runs, qrels


def load_inputs(params: ReportParameters, cache: Path | None = None,
                digests: dict[Path, str] | None = None) -> tuple[list[Run], Run, Qrels, pd.Series | None]:
    """Read and check every input file; raise InputError for bad input or no query in common. cache,
    digests: as in load_run_and_qrels."""
    if params.baseline is None:
        raise ParameterError("no baseline run: build the corpus BM25 first (corpus_baseline.with_bm25_baseline)")
    runs, qrels = load_run_and_qrels(params, cache, digests)
    baseline = load_parsed(cache, params.baseline, "run", (digests or {}).get(params.baseline)) or read_run(params.baseline)
    _check_common_query(baseline, "baseline", qrels)
    _check_paired_queries(runs, baseline, qrels, params)
    topics = read_topics(params.topics) if params.topics else None
    return runs, baseline, qrels, topics


def _check_paired_queries(runs: list[Run], baseline: Run, qrels: Qrels, params: ReportParameters) -> None:
    """InputError unless every run has a query averaged together with the baseline on the headline
    measure (with missing=skip, runs and baseline may cover different queries)."""
    options = dict(gain=params.gain, missing=params.missing, no_relevant=params.no_relevant,
                   measures=(params.headline,), rel_level=params.rel_level)
    base = evaluate(baseline, qrels, **options)
    if not base.averaged.any():
        left_out = [reason for policy, reason in (
            (params.no_relevant == "skip", "queries without a relevant document (--no-relevant skip)"),
            (params.missing == "skip", "queries the baseline did not retrieve for (--missing skip)"),
        ) if policy]
        raise InputError(
            qrels.path, None, f"no judged query is averaged for the baseline {baseline.path}: left out are "
            + " and ".join(left_out), "check the qrels' labels and the baseline, or average those queries as 0",
        )
    for run in runs:
        if not (evaluate(run, qrels, **options).averaged & base.averaged).any():
            raise InputError(
                run.path, None,
                f"no query is averaged in both this run and the baseline {baseline.path} "
                f"(missing={params.missing}, no_relevant={params.no_relevant})",
                "give runs of the same queries, or --missing zero to count a query a run lacks as 0",
            )


def _check_common_query(system: Run, role: str, qrels: Qrels) -> None:
    judged = set(qrels.table["qid"].chunk(0).dictionary.to_pylist())
    if not judged & set(system.table["qid"].chunk(0).dictionary.to_pylist()):
        raise InputError(system.path, None, f"the {role} has no query in common with the qrels {qrels.path}",
                         "check that they are for the same topics")
