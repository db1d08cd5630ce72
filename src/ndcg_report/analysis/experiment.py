"""The Experiment: systems against one baseline on the same qrels, with every table and test a report shows.

`analysis.compare.compare_runs` makes it (the public entry point; the notebook calls it): each run is
evaluated and ranked once, and the experiment keeps what it derived, never the runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING


import numpy as np
import pandas as pd
import pyarrow as pa

from ndcg_report.core.conventions import Averaging
from ndcg_report.core.measures.names import Measure, cutoff_dtype, measure_of, shallow_measures
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.presets import HEADLINE
from ndcg_report.errors import ParameterError
from ndcg_report.core.ties import TieRange
from ndcg_report.core.toplists import Rankings, rank_overlaps, unjudged_pool
from ndcg_report.inputs.reading import Qrels
from ndcg_report.analysis.experiment_figures import ExperimentFigures
from ndcg_report.analysis.paper.record import experiment_table, with_options_of

if TYPE_CHECKING:
    from pathlib import Path

    from ndcg_report.analysis.judgments.comparison import JudgmentComparison
    from ndcg_report.analysis.sources import Sources
    from ndcg_report.build.from_objects import BuildResult  # the page's one import upward, as report() below
from ndcg_report.stats.paired import significance_signs, stream_label
from ndcg_report.stats.resampling import LARGE_N, mean_interval
from ndcg_report.stats.streams import stream
from ndcg_report.stats.pairwise import PairwiseTest, pairwise_test



@dataclass(frozen=True)
class RunInfo:
    """What an experiment keeps of a run once it is evaluated: its file (`path`, '' for a run given as
    a table or as Python data) and run `tag` (the last column of TREC text, '' where there is none).
    The run's lines are not kept: compare_runs derives from each run everything shown (its evaluation,
    its top k, its tie range) before it reads the next."""

    path: str
    tag: str


@dataclass(frozen=True, eq=False)
class Experiment(ExperimentFigures):
    """Systems against one baseline on the same qrels: evaluations, comparisons, pairwise tests.

    Tables are DataFrames keyed by (measure, k), k an integer or NA (no cut-off), or by the
    measure's label: `leaderboard` (systems x measures, columns labelled `nDCG@10`, `RR`: each
    Measure's `.label`), `summary` and `comparisons` (index (system, measure, k)), `per_query` (one
    row per system, query and measure), `pairwise.pvalues`. Each `plot_*` method returns a matplotlib
    Figure of the headline measure (or the one named). In Jupyter the object shows its leaderboard.
    Made by `compare_runs`, not by hand.

    Parameters
    ----------
    names
        The systems under test, in the order given.
    baseline_name
        The baseline's name.
    evaluations
        Every system's `Evaluation`, then the baseline's.
    runs
        Each system's file and run tag (`RunInfo`); the parsed runs themselves are not kept.
    qrels
        The judgements as read.
    comparisons
        Index (system, measure, k): the paired statistics against the baseline.
    tie_ranges
        Per system with tied scores: the mean of every measure with its ties in the worst and the
        best order, and how many queries the order of ties can change (core.ties.TieRange).
    rankings
        Per system (the baseline too): its top drilldown_depth of every judged query, with labels, and
        the rank of every relevant judgement (core.toplists.Rankings).
    topics
        The query text by qid, if given.
    seed
        The seed of the resampling statistics.
    n_resamples
        Resamples of each Monte Carlo statistic.
    confidence
        The confidence of the intervals.
    alpha
        The significance level of the verdicts and the letters.
    headline
        The measure of the verdicts, the pairwise test and the figures.
    preset
        The preset the measures came from, if any.
    drilldown_depth
        The top k of the drill-downs, the unjudged pool and the rank overlap.
    large_n
        Above this many paired queries, the resampling statistics use their limits where accurate.
    averaging
        The averaging policies (missing, no_relevant, identical_ids), the preset they come from and
        those an option overrode (core.conventions.Averaging).
    judgments
        With several judgment sets: every other set compared with the reference (`qrels`), on the
        labels and on the systems (analysis.judgments.JudgmentComparison); else None.
    groups
        With query groups: the group of each qid (index qid); `group_table(experiment)` tests each
        system against the baseline within each group.
    sources
        The inputs compare_runs was given, as it keeps them (analysis.sources: paths, objects weakly):
        what `report(out_dir)` builds the HTML report from.
    more_baselines
        With several baselines: per baseline other than the first (each also among `names`, after the
        runs), every other system against it, as `comparisons` (its own Holm family).

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> experiment = compare_runs({"monoT5": "monot5.txt"}, "qrels.txt", baseline="bm25.txt",
    ...                           baseline_name="BM25", measures="nDCG@10 AP", rel_level=2)
    >>> list(experiment.leaderboard.index)
    ['monoT5', 'BM25']
    >>> list(experiment.leaderboard.columns)
    ['nDCG@10', 'AP']
    >>> round(float(experiment.leaderboard.at["monoT5", "nDCG@10"]), 4)
    0.6003
    >>> experiment.scores().shape
    (8, 2)
    >>> figure = experiment.plot_distribution()
    """

    names: tuple[str, ...]  # the systems under test, in the order given
    baseline_name: str
    evaluations: Mapping[str, Evaluation]  # every system, then the baseline
    runs: Mapping[str, RunInfo]  # each system's file and run tag; the parsed runs are not kept
    qrels: Qrels
    comparisons: pd.DataFrame  # index (system, measure, k): paired statistics against the baseline
    tie_ranges: Mapping[str, TieRange]  # per system with tied scores (core.ties), systems then the baseline
    rankings: Mapping[str, Rankings]  # per system, the baseline last: top drilldown_depth and relevant ranks
    topics: pd.Series | None
    seed: int
    n_resamples: int
    confidence: float
    alpha: float
    headline: Measure = HEADLINE  # the measure of the verdicts, the pairwise test and the figures
    preset: str = ""  # the preset the measures came from, if any
    drilldown_depth: int = 10  # the top k of the drill-downs, the unjudged pool and the rank overlap
    large_n: int = LARGE_N  # above this many queries, resampling statistics use their limits where accurate
    averaging: Averaging = Averaging()  # how the queries are averaged, and where that came from (core.conventions)
    judgments: JudgmentComparison | None = None  # other judgment sets compared with qrels (analysis.judgments)
    groups: pd.Series | None = None  # the group of each qid (query groups: analysis.tables.groups.group_table)
    sources: Sources | None = None  # compare_runs' inputs as kept, for report() (analysis.sources)
    more_baselines: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # other baseline: comparisons with it

    # --- shape -----------------------------------------------------------------------------

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system, the baseline last."""
        return (*self.names, self.baseline_name)

    @property
    def baseline(self) -> Evaluation:
        return self.evaluations[self.baseline_name]

    @property
    def baselines(self) -> tuple[str, ...]:
        """Every baseline, the first (the headline's: `baseline_name`) first."""
        return (self.baseline_name, *self.more_baselines)

    def comparisons_with(self, baseline: str | None = None) -> pd.DataFrame:
        """The paired statistics of every other system against one baseline (default: the first), index
        (system, measure, k), Holm-adjusted over the systems compared with it."""
        if baseline in (None, self.baseline_name):
            return self.comparisons
        if baseline not in self.more_baselines:
            raise ParameterError(f"no baseline is named {baseline!r}; the baselines are {', '.join(map(repr, self.baselines))}")
        return self.more_baselines[baseline]

    def significance_with(self, baseline: str | None = None) -> pd.DataFrame:
        """`significance` against one baseline (default: the first): its compared systems x measures."""
        table = self.comparisons_with(baseline)
        return pd.DataFrame(significance_signs(table, self.alpha, len(self.measures)),
                            index=list(table.index.get_level_values(0).unique()),
                            columns=pd.Index(self.labels, name="measure"))

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The measures computed, in the order asked for."""
        return self.baseline.measures

    @property
    def labels(self) -> list[str]:
        """The measures' labels ('nDCG@10', 'AP'), in order."""
        return self.baseline.labels

    @property
    def rel_level(self) -> float:
        return self.baseline.rel_level

    @property
    def family_size(self) -> int:
        """How many comparisons with the baseline Holm's adjustment runs over: the systems, for one (measure, k)."""
        return len(self.names)

    # --- tables ----------------------------------------------------------------------------

    @cached_property
    def summary(self) -> pd.DataFrame:
        """Per (system, measure, k), the baseline last: n, mean, median, std and judged of each
        evaluation, each over its own averaged queries."""
        return pd.concat({name: self.evaluations[name].summary for name in self.systems}, names=["system"])

    @cached_property
    def leaderboard(self) -> pd.DataFrame:
        """Mean of every measure (rows: systems, the baseline last; columns: the measures' labels,
        'nDCG@10', 'RR', in order) over the queries every system is averaged on for that measure
        (see own_means for each system's own), as each family averages (Family.mean: geometric for gm_map
        and gm_bpref, as trec_eval averages them)."""
        tables = [self.scores(measure) for measure in self.measures]
        means = np.array([[measure.family.mean(table[name].to_numpy()) for measure, table in zip(self.measures, tables)]
                          for name in self.systems])
        return pd.DataFrame(means.reshape(len(self.systems), len(self.measures)), index=list(self.systems),
                            columns=pd.Index(self.labels, name="measure"))

    @cached_property
    def own_means(self) -> pd.DataFrame:
        """Each system's mean over its own averaged queries and how many (columns mean, n), index (system,
        measure, k): it differs from the leaderboard's where the systems cover different queries."""
        return self.summary[["mean", "n"]]

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """One row per (system, query, measure): system, role, qid, measure, k, value, num_ret, num_rel,
        dcg, idcg, judged, in_run, averaged."""
        frames = []
        for name in self.systems:
            frame = self.evaluations[name].per_query.copy()
            frame.insert(0, "system", name)
            frame.insert(1, "role", "baseline" if name == self.baseline_name else "run")
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def comparison(self, name: str) -> pd.DataFrame:
        """The paired statistics of one system against the baseline, one row per (measure, k)."""
        if name not in self.names:
            raise ParameterError(f"no system is named {name!r}; the systems are {', '.join(map(repr, self.names))}")
        return self.comparisons.loc[name]

    def comparison_row(self, name: str, measure: Measure | str | int | None = None) -> pd.Series:
        """The paired statistics of one system against the baseline on one measure (default: the headline)."""
        table = self.comparison(name)
        return table.iloc[self.measures.index(self.measure(measure))]

    def measure(self, value: Measure | str | int | None = None) -> Measure:
        """The measure `value` names ('RR@10', Measure('AP', None), an nDCG cut-off); None: the headline."""
        return self.headline if value is None else measure_of(value, self.measures)

    def _paired_or_refuse(self, measure: Measure | str | int | None) -> pd.DataFrame:
        """scores(measure) for a figure; ParameterError if no query is averaged in every system."""
        table = self.scores(measure)
        if table.empty:
            raise ParameterError("no query is averaged in every system (missing='skip' and runs of different "
                                 "queries): there is nothing to draw per query")
        return table

    def scores(self, measure: Measure | str | int | None = None) -> pd.DataFrame:
        """One measure (default: the headline), queries x systems (the baseline last), over the queries
        every system is averaged on for it."""
        measure = self.measure(measure)
        if measure not in self._scores:
            column = self.baseline.column(measure)
            averaged = np.logical_and.reduce([self.evaluations[name].averaged[:, column] for name in self.systems])
            qids = pd.Index(self.baseline.qids[averaged].astype(str), name="qid")
            self._scores[measure] = pd.DataFrame(
                {name: self.evaluations[name].values[averaged, column] for name in self.systems}, index=qids)
        return self._scores[measure].copy()

    @cached_property
    def _scores(self) -> dict[Measure, pd.DataFrame]:
        """scores() of each measure asked for so far (a copy goes out: callers may change theirs)."""
        return {}

    def deltas(self, measure: Measure | str | int | None = None) -> pd.DataFrame:
        """One measure of each system minus the baseline's, queries x systems under test."""
        table = self.scores(measure)
        return table[list(self.names)].sub(table[self.baseline_name], axis=0)

    def ndcg_at(self, k: str | int | None = None) -> pd.DataFrame:
        """scores() named by an nDCG cut-off (10, 'all') or any measure: kept from before other measures."""
        return self.scores(k)

    def deltas_at(self, k: str | int | None = None) -> pd.DataFrame:
        """deltas() named by an nDCG cut-off or any measure: kept from before other measures."""
        return self.deltas(k)

    @cached_property
    def pairwise(self) -> PairwiseTest:
        """Randomized Tukey HSD between all systems (baseline included) on the headline measure."""
        return pairwise_test(self.scores(self.headline), self.headline, self.seed, self.n_resamples, self.alpha,
                             self.large_n)

    @cached_property
    def mean_intervals(self) -> pd.DataFrame:
        """Bootstrap interval of each system's mean over the paired queries: index (system, measure, k),
        columns mean, low, high, method (its normal limit over many queries, see stats.resampling).

        The mean is the family's (Family.mean), and so is the interval: of a geometric mean (gm_map,
        gm_bpref), the interval of the mean of the logs taken back (Family.on_mean_scale). Each (system,
        measure) draws from its own stream, derived from (seed, system, measure).
        """
        return self.intervals_of([measure for measure in self.measures if measure.kind != "count"])

    def intervals_of(self, measures: list[Measure]) -> pd.DataFrame:
        """mean_intervals' rows of these measures (counts have none): the same numbers, as each draws from its
        own stream, taken from mean_intervals if it is known, else computed for these measures alone."""
        if "mean_intervals" in self.__dict__:
            wanted = {(measure.measure, measure.k) for measure in measures}
            return self.mean_intervals[[(measure, None if pd.isna(k) else int(k)) in wanted
                                        for _, measure, k in self.mean_intervals.index]]
        rows = []
        for measure in measures:
            if measure.kind == "count":
                continue
            table, family = self.scores(measure), measure.family
            for name in self.systems:
                values = table[name].to_numpy()
                low, high, method = mean_interval(
                    family.on_mean_scale(values), stream(self.seed, "mean-interval", name, stream_label(measure)),
                    self.n_resamples, self.confidence, self.large_n,
                )
                rows.append({"system": name, "measure": measure.measure, "k": measure.k, "mean": family.mean(values),
                             "low": family.from_mean_scale(low), "high": family.from_mean_scale(high),
                             "method": method})
        frame = pd.DataFrame(rows, columns=["system", "measure", "k", "mean", "low", "high", "method"])
        frame["k"] = pd.array(frame["k"], dtype=cutoff_dtype(self.measures))
        return frame.set_index(["system", "measure", "k"])

    def depth(self) -> pd.DataFrame:
        """Retrieval depth of each system: lines per judged query it retrieved for (min, median, max)."""
        rows = {}
        for name in self.systems:
            evaluation = self.evaluations[name]
            lines = evaluation.num_ret[evaluation.in_run]
            rows[name] = {"min": int(lines.min()) if len(lines) else 0,
                          "median": float(np.median(lines)) if len(lines) else 0.0,
                          "max": int(lines.max()) if len(lines) else 0}
        return pd.DataFrame(rows).T

    def shallow_measures(self) -> dict[str, list[Measure]]:
        """Per system, the measures it is measured at a depth it does not reach, where the ranks it never
        retrieved count as not relevant: a cut-off k above its median lines per judged query, and, when
        another system retrieves deeper (its median below core.measures.names.DEPTH_RATIO of the deepest),
        every measure without a cut-off (AP, RR, R-prec, nDCG, ...). Counts of documents are never listed."""
        median = self.depth()["median"]
        return shallow_measures(self.measures, {name: float(median[name]) for name in self.systems})

    def rank_overlap(self) -> pd.DataFrame:
        """How much each system's ranking of a query differs from the baseline's: rank-biased overlap of
        the two top drilldown_depth lists (1: the same list, 0: nothing in common), queries of scores() x
        systems under test."""
        return self._rank_overlap

    @cached_property
    def _rank_overlap(self) -> pd.DataFrame:
        qids = list(self.scores().index)
        overlaps = rank_overlaps(self.rankings[self.baseline_name].top,
                                 {name: self.rankings[name].top for name in self.names}, qids, self.drilldown_depth)
        return pd.DataFrame(overlaps, index=pd.Index(qids, name="qid"))

    def unjudged_pool(self) -> pa.Table:
        """Every (qid, docid) without a label in the top drilldown_depth of any system or the baseline, for
        the next judging round (core.toplists.unjudged_pool), queries without any judgement included."""
        return self._unjudged_pool

    @cached_property
    def _unjudged_pool(self) -> pa.Table:
        return unjudged_pool({name: self.rankings[name].pool_top() for name in self.systems})

    @cached_property
    def families(self) -> dict[str, list[Measure]]:
        """The measures by family ('nDCG': [nDCG@10, nDCG@100]), families and cut-offs in the order asked."""
        found: dict[str, list[Measure]] = {}
        for measure in self.measures:
            found.setdefault(measure.measure, []).append(measure)
        return found

    # --- display ---------------------------------------------------------------------------

    @cached_property
    def significance(self) -> pd.DataFrame:
        """Systems under test x measures (labelled as the leaderboard's columns): +1 significantly above
        the baseline, -1 below, 0 neither (randomization test, Holm-adjusted over the systems for that
        (measure, k), at alpha)."""
        return self.significance_with(None)

    @with_options_of("latex")
    def to_latex(self, **options: object) -> str:
        """The leaderboard as a booktabs LaTeX table: analysis.paper.leaderboard.leaderboard_latex and its options."""
        return experiment_table(self, "latex", **options)

    @with_options_of("markdown")
    def to_markdown(self, **options: object) -> str:
        """The leaderboard as a GitHub Markdown table: analysis.paper.leaderboard.leaderboard_markdown and its options."""
        return experiment_table(self, "markdown", **options)

    @with_options_of("csv")
    def to_csv(self, path: str | None = None, **options: object) -> str | None:
        """The leaderboard as CSV (analysis.paper.leaderboard.leaderboard_csv): the text, or None once written to path."""
        return experiment_table(self, "csv", path, **options)

    def report(self, out_dir: str | Path, **options: object) -> BuildResult:
        """Build this Experiment's HTML report into out_dir as `ndcg-report build` would: build.from_objects.build_report."""
        from ndcg_report.build.from_objects import build_report  # the one call from analysis into build

        return build_report(self, out_dir, **options)

    def _repr_html_(self) -> str:
        """The leaderboard, every name escaped: what Jupyter shows for the object."""
        from ndcg_report.analysis.html import leaderboard_html

        return leaderboard_html(self.leaderboard, self.significance, self.baseline_name, self.headline,
                                self.pairwise.letters if len(self.names) > 1 else None, measures=self.measures,
                                others={name: self.significance_with(name) for name in self.more_baselines})

    def __repr__(self) -> str:
        return (f"Experiment({len(self.names)} system(s) against {self.baseline_name!r}, "
                f"{len(self.scores(self.headline))} paired queries, headline {self.headline.label}, "
                f"measures {', '.join(self.labels)})")

    def _label(self, measure: Measure | str | int | None) -> str:
        return self.measure(measure).label
