"""The plot_* methods of an Experiment: each draws one measure of its systems with analysis.plots.

The measure is the headline unless one is named; each method returns a matplotlib Figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ndcg_report.core.measures.names import Measure, cutoff_text
from ndcg_report.errors import ParameterError

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class ExperimentFigures:
    """The plot_* methods of Experiment, which supplies the tables they draw (scores, deltas,
    intervals_of, comparisons, pairwise) and the measure lookups."""

    def plot_by_cutoff(self, family: str | None = None) -> "Figure":
        """Mean of a measure family (default: the headline's) against its cut-offs for every system, with
        bootstrap bands."""
        from ndcg_report.analysis import plots

        family = self.headline.measure if family is None else family
        if family not in self.families:
            raise ParameterError(f"no {family} measure was computed; have {', '.join(self.families)}")
        measures = self.families[family]
        self._paired_or_refuse(measures[0])
        intervals = self.intervals_of(measures).xs(family, level="measure")
        intervals.index = pd.MultiIndex.from_tuples([(name, "all" if pd.isna(k) else cutoff_text(k))
                                                     for name, k in intervals.index], names=["system", "k"])
        labels = ["all" if m.k is None else cutoff_text(m.k) for m in measures]
        return plots.by_cutoff(intervals, self.systems, labels, self.confidence, len(self.scores(measures[0])),
                               family)

    def plot_ndcg_by_cutoff(self) -> "Figure":
        """plot_by_cutoff of nDCG."""
        return self.plot_by_cutoff("nDCG")

    def plot_distribution(self, measure: Measure | str | int | None = None) -> "Figure":
        """Per-query values of every system: box plot with every query as a point."""
        from ndcg_report.analysis import plots

        return plots.distribution(self._paired_or_refuse(measure), self._label(measure), self.baseline_name)

    def plot_delta_heatmap(self, measure: Measure | str | int | None = None) -> "Figure":
        """Queries x systems heatmap of a measure minus the baseline's, queries sorted by their mean delta."""
        from ndcg_report.analysis import plots

        self._paired_or_refuse(measure)
        return plots.delta_heatmap(self.deltas(measure), self._label(measure), self.baseline_name)

    def plot_wins_ties_losses(self, measure: Measure | str | int | None = None) -> "Figure":
        """Per system, the queries it wins, ties and loses against the baseline on a measure."""
        from ndcg_report.analysis import plots

        chosen = self.measure(measure)
        counts = self.comparisons.xs((chosen.measure, chosen.k), level=("measure", "k"))[["wins", "ties", "losses"]]
        return plots.wins_ties_losses(counts, chosen.label, self.baseline_name)

    def plot_pairwise(self) -> "Figure":
        """The randomized Tukey HSD p-value matrix on the headline measure, with the letter groups."""
        from ndcg_report.analysis import plots

        self._paired_or_refuse(self.headline)
        test = self.pairwise
        return plots.pairwise_matrix(test.pvalues, test.letters, test.label, test.n_queries, test.alpha)

    def plot_scatter(self, measure: Measure | str | int | None = None) -> "Figure":
        """Per system, per-query values of the baseline (x) against the system (y), with the diagonal."""
        from ndcg_report.analysis import plots

        return plots.per_query_scatter(self._paired_or_refuse(measure), self.names, self.baseline_name,
                                       self._label(measure))

    def plot_delta_bars(self, measure: Measure | str | int | None = None) -> "Figure":
        """Per system, the per-query difference from the baseline, sorted (topic-by-topic bars)."""
        from ndcg_report.analysis import plots

        self._paired_or_refuse(measure)
        return plots.per_query_delta(self.deltas(measure), self.baseline_name, self._label(measure))

    def plot_ecdf(self, measure: Measure | str | int | None = None) -> "Figure":
        """Empirical CDF of the per-query values of every system."""
        from ndcg_report.analysis import plots

        return plots.ecdf(self._paired_or_refuse(measure), self._label(measure), self.baseline_name)

