"""Randomized Tukey HSD between every pair of systems on one measure, with its compact letter display."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ndcg_report.core.measures.names import Measure
from ndcg_report.stats.letters import compact_letters
from ndcg_report.stats.paired import stream_label
from ndcg_report.stats.streams import stream
from ndcg_report.stats.tukey_hsd import tukey_hsd


@dataclass(frozen=True, eq=False)
class PairwiseTest:
    """Randomized Tukey HSD between every pair of systems (the baseline included) on one measure."""

    measure: Measure
    names: tuple[str, ...]  # by mean, best first
    means: pd.Series  # mean over the queries every system is averaged on
    pvalues: pd.DataFrame  # names x names, symmetric, diagonal 1
    letters: pd.Series  # compact letter display: same letter = not significantly different
    n_queries: int
    n_resamples: int
    alpha: float
    method: str = "monte carlo"  # or, over many queries, "studentized range limit" (stats.tukey_hsd)

    @property
    def label(self) -> str:
        return self.measure.label

    def significant(self, first: str, second: str) -> bool:
        return bool(self.pvalues.at[first, second] < self.alpha)


def pairwise_test(table: pd.DataFrame, measure: Measure, seed: int, n_resamples: int, alpha: float,
                  large_n: int) -> PairwiseTest:
    """The test over a queries x systems table of one measure (the queries every system is averaged on):
    permutations from a stream of (seed, the measure, the systems' names sorted), so the same systems give
    the same p-values in whatever order they are given."""
    rng = stream(seed, "tukey-hsd", stream_label(measure), *sorted(table.columns))
    means = table.mean()
    table = table[sorted(table.columns, key=lambda name: (-means[name], name))]  # not the given order: the
    # permutations are drawn over the columns, so the same systems must always stand in the same order
    method = "monte carlo"
    if len(table):
        pvalues, method = tukey_hsd(table.to_numpy(), rng, n_resamples, large_n)
    else:  # no query is averaged in every system (missing="skip" and runs of different queries)
        pvalues = np.full((table.shape[1],) * 2, np.nan)
        np.fill_diagonal(pvalues, 1.0)
    names = tuple(table.columns)
    means = table.mean()
    return PairwiseTest(
        measure=measure, names=names, means=means,
        pvalues=pd.DataFrame(pvalues, index=pd.Index(names), columns=pd.Index(names)),
        letters=pd.Series(compact_letters(means.to_numpy(), pvalues, alpha) if len(table) else [""] * len(names),
                          index=pd.Index(names)),
        n_queries=len(table), n_resamples=n_resamples, alpha=alpha, method=method,
    )
