"""The report's baseline: a given run, or a BM25 run built (and cached) from a corpus and topics."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from ndcg_report.baseline.cache import cached_bm25_run
from ndcg_report.baseline.settings import BM25_DEFAULTS
from ndcg_report.analysis.report_model import ReportParameters
from ndcg_report.analysis.systems import CORPUS_BASELINE_NAME



def bm25_settings(k1: float, b: float, top_k: int) -> str:
    """How a corpus BM25 baseline is made, as shown in the report's parameter table."""
    return f"bm25s Lucene BM25, k1={k1:g}, b={b:g}, top {top_k}, English stop words and Snowball stems"


def with_bm25_baseline(
    params: ReportParameters,
    *,
    k1: float = BM25_DEFAULTS["k1"],
    b: float = BM25_DEFAULTS["b"],
    top_k: int = BM25_DEFAULTS["top_k"],
    cache_dir: str | Path | None = None,
    progress: bool | None = None,
    log: Callable[[str], object] | None = None,
) -> ReportParameters:
    """params with `baseline` set to the cached BM25 run of params.corpus over params.topics.

    Unchanged if params already has a baseline run. progress=None shows bars only on a terminal.
    """
    if params.corpus is None or params.baseline is not None:
        return params
    if params.topics is None:
        from ndcg_report.errors import ParameterError

        raise ParameterError("topics are required to build a BM25 baseline from a corpus")
    if progress is None:
        progress = sys.stderr.isatty()
    run_path, _ = cached_bm25_run(
        params.corpus, params.topics, k1=k1, b=b, top_k=top_k, cache_dir=cache_dir, progress=progress, log=log,
    )
    return dataclasses.replace(
        params, baseline=run_path.resolve(), bm25_settings=bm25_settings(k1, b, top_k),
        baseline_name=params.baseline_name or CORPUS_BASELINE_NAME,
    )
