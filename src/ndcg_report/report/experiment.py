"""An experiment: one or more systems against one baseline, evaluated on the same qrels, with every
comparison the report shows. `compare_runs` is the public entry point; the notebook calls it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ndcg_report.core.metrics import DEFAULT_CUTOFFS, Evaluation, evaluate, parse_cutoffs
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.python_data import is_one_run
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run
from ndcg_report.core.ties import TieRange, tie_range
from ndcg_report.inputs.trec import Qrels, Run
from ndcg_report.report.systems import check_distinct_paths, check_name, derived_name, unique_names
from ndcg_report.stats.letters import compact_letters
from ndcg_report.stats.paired import CONFIDENCE, N_RESAMPLES, compare_systems
from ndcg_report.stats.resampling import LARGE_N, mean_interval
from ndcg_report.stats.streams import stream
from ndcg_report.stats.tukey_hsd import tukey_hsd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HEADLINE_K = "10"
ALPHA = 0.05


@dataclass(frozen=True, eq=False)
class PairwiseTest:
    """Randomized Tukey HSD between every pair of systems (the baseline included) at one cut-off."""

    k: str
    names: tuple[str, ...]  # by mean NDCG@k, best first
    means: pd.Series  # mean NDCG@k over the queries every system is averaged on
    pvalues: pd.DataFrame  # names x names, symmetric, diagonal 1
    letters: pd.Series  # compact letter display: same letter = not significantly different
    n_queries: int
    n_resamples: int
    alpha: float
    method: str = "monte carlo"  # or, over many queries, "studentized range limit" (stats.tukey_hsd)

    def significant(self, first: str, second: str) -> bool:
        return bool(self.pvalues.at[first, second] < self.alpha)


@dataclass(frozen=True, eq=False)
class Experiment:
    """Systems against one baseline on the same qrels: evaluations, comparisons, pairwise tests.

    Tables are DataFrames: `leaderboard` (systems x k), `summary` and `comparisons` (index
    (system, k)), `per_query` (one row per system, query and k), `pairwise.pvalues`. Each
    `plot_*` method returns a matplotlib Figure. In Jupyter the object shows its leaderboard.
    """

    names: tuple[str, ...]  # the systems under test, in the order given
    baseline_name: str
    evaluations: Mapping[str, Evaluation]  # every system, then the baseline
    runs: Mapping[str, Run]  # what was read, for tags, paths and retrieval depth
    qrels: Qrels
    comparisons: pd.DataFrame  # index (system, k): paired statistics against the baseline, Holm over the family
    topics: pd.Series | None
    seed: int
    n_resamples: int
    confidence: float
    alpha: float
    large_n: int = LARGE_N  # above this many queries, resampling statistics use their limits where accurate

    # --- shape -----------------------------------------------------------------------------

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system, the baseline last."""
        return (*self.names, self.baseline_name)

    @property
    def baseline(self) -> Evaluation:
        return self.evaluations[self.baseline_name]

    @property
    def labels(self) -> list[str]:
        return self.baseline.labels

    @property
    def headline_k(self) -> str:
        """The cut-off the verdicts, figures and pairwise tests focus on: 10 if evaluated, else the first."""
        return HEADLINE_K if HEADLINE_K in self.labels else self.labels[0]

    @property
    def family_size(self) -> int:
        """How many comparisons with the baseline Holm's adjustment runs over (systems x cut-offs)."""
        return len(self.comparisons)

    # --- tables ----------------------------------------------------------------------------

    @cached_property
    def summary(self) -> pd.DataFrame:
        """Per (system, k), the baseline last: n, mean, median, std and judged of each evaluation."""
        return pd.concat({name: self.evaluations[name].summary for name in self.systems}, names=["system", "k"])

    @cached_property
    def leaderboard(self) -> pd.DataFrame:
        """Mean NDCG@k (rows: systems, the baseline last; columns: cut-offs), each over its own averaged queries."""
        table = self.summary["mean"].unstack("k").loc[list(self.systems), self.labels]
        table.columns.name = None
        return table

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """One row per (system, query, k): system, role, qid, k, num_ret, num_rel, dcg, idcg, ndcg, judged, in_run, averaged."""
        frames = []
        for name in self.systems:
            frame = self.evaluations[name].per_query.copy()
            frame.insert(0, "system", name)
            frame.insert(1, "role", "baseline" if name == self.baseline_name else "run")
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def comparison(self, name: str) -> pd.DataFrame:
        """The paired statistics of one system against the baseline, one row per cut-off."""
        if name not in self.names:
            raise ParameterError(f"no system is named {name!r}; the systems are {', '.join(map(repr, self.names))}")
        return self.comparisons.loc[name]

    def _paired_or_refuse(self, k: str | int | None) -> pd.DataFrame:
        """ndcg_at(k) for a figure; ParameterError if no query is averaged in every system."""
        table = self.ndcg_at(k)
        if table.empty:
            raise ParameterError("no query is averaged in every system (missing='skip' and runs of different "
                                 "queries): there is nothing to draw per query")
        return table

    def ndcg_at(self, k: str | int | None = None) -> pd.DataFrame:
        """NDCG@k, queries x systems (the baseline last), over the queries every system is averaged on."""
        column = self._column(k)
        averaged = np.logical_and.reduce([self.evaluations[name].averaged for name in self.systems])
        qids = pd.Index(self.baseline.qids[averaged].astype(str), name="qid")
        return pd.DataFrame(
            {name: self.evaluations[name].ndcg[averaged, column] for name in self.systems}, index=qids,
        )

    def deltas_at(self, k: str | int | None = None) -> pd.DataFrame:
        """NDCG@k of each system minus the baseline's, queries x systems under test."""
        table = self.ndcg_at(k)
        return table[list(self.names)].sub(table[self.baseline_name], axis=0)

    @cached_property
    def pairwise(self) -> PairwiseTest:
        """Randomized Tukey HSD between all systems (baseline included) at the headline cut-off."""
        k = self.headline_k
        table = self.ndcg_at(k)
        rng = stream(self.seed, "tukey-hsd", k, *sorted(table.columns))
        means = table.mean()
        table = table[sorted(table.columns, key=lambda name: (-means[name], name))]  # not the given order: the
        # permutations are drawn over the columns, so the same systems must always stand in the same order
        method = "monte carlo"
        if len(table):
            pvalues, method = tukey_hsd(table.to_numpy(), rng, self.n_resamples, self.large_n)
        else:  # no query is averaged in every system (missing="skip" and runs of different queries)
            pvalues = np.full((table.shape[1],) * 2, np.nan)
            np.fill_diagonal(pvalues, 1.0)
        names = tuple(table.columns)
        means = table.mean()
        return PairwiseTest(
            k=k, names=names, means=means,
            pvalues=pd.DataFrame(pvalues, index=pd.Index(names), columns=pd.Index(names)),
            letters=pd.Series(compact_letters(means.to_numpy(), pvalues, self.alpha) if len(table) else [""] * len(names),
                              index=pd.Index(names)),
            n_queries=len(table), n_resamples=self.n_resamples, alpha=self.alpha, method=method,
        )

    @cached_property
    def mean_intervals(self) -> pd.DataFrame:
        """Bootstrap interval of each system's mean NDCG@k over the paired queries: index (system, k),
        mean, low, high, method (its normal limit over many queries, see stats.resampling).

        Each (system, k) draws from its own stream, derived from (seed, system, k).
        """
        rows = []
        for column, label in enumerate(self.labels):
            table = self.ndcg_at(label)
            for name in self.systems:
                low, high, method = mean_interval(
                    table[name].to_numpy(), stream(self.seed, "mean-interval", name, label),
                    self.n_resamples, self.confidence, self.large_n,
                )
                rows.append({"system": name, "k": label, "mean": float(table[name].mean()), "low": low, "high": high,
                             "method": method})
        return pd.DataFrame(rows).set_index(["system", "k"])

    def depth(self) -> pd.DataFrame:
        """Retrieval depth of each system: lines per query of the judged queries it retrieved for (min, median, max)."""
        rows = {}
        for name in self.systems:
            evaluation = self.evaluations[name]
            lines = evaluation.num_ret[evaluation.in_run]
            rows[name] = {"min": int(lines.min()) if len(lines) else 0,
                          "median": float(np.median(lines)) if len(lines) else 0.0,
                          "max": int(lines.max()) if len(lines) else 0}
        return pd.DataFrame(rows).T

    def shallow_cutoffs(self) -> dict[str, list[str]]:
        """Per system, the cut-offs deeper than its retrieval: k above its median lines per judged
        query, where the ranks it never retrieved count as not relevant ('all' is never listed)."""
        depth = self.depth()
        return {name: [label for label in self.labels if label != "all" and int(label) > depth.at[name, "median"]]
                for name in self.systems}

    @cached_property
    def tie_ranges(self) -> dict[str, TieRange]:
        """Per system with tied scores: mean NDCG@k with its ties in the worst and the best order, and
        how many queries the order of ties can change (see core.ties)."""
        ranges = {}
        for name in self.systems:
            evaluation = self.evaluations[name]
            if evaluation.tied_lines:
                ranges[name] = tie_range(self.runs[name], self.qrels, evaluation.cutoffs, evaluation.gain,
                                         evaluation.missing, evaluation.no_relevant, evaluation)
        return ranges

    # --- figures ---------------------------------------------------------------------------

    def plot_ndcg_by_cutoff(self) -> "Figure":
        """Mean NDCG@k against k for every system, with bootstrap bands."""
        from ndcg_report.report import plots

        self._paired_or_refuse(self.labels[0])
        return plots.ndcg_by_cutoff(self.mean_intervals, self.systems, self.labels, self.confidence,
                                    len(self.ndcg_at(self.labels[0])))

    def plot_distribution(self, k: str | int | None = None) -> "Figure":
        """Per-query NDCG@k of every system: box plot with every query as a point."""
        from ndcg_report.report import plots

        return plots.ndcg_distribution(self._paired_or_refuse(k), self._label(k), self.baseline_name)

    def plot_delta_heatmap(self, k: str | int | None = None) -> "Figure":
        """Queries x systems heatmap of NDCG@k minus the baseline's, queries sorted by their mean delta."""
        from ndcg_report.report import plots

        self._paired_or_refuse(k)
        return plots.delta_heatmap(self.deltas_at(k), self._label(k), self.baseline_name)

    def plot_wins_ties_losses(self, k: str | int | None = None) -> "Figure":
        """Per system, the queries it wins, ties and loses against the baseline at k."""
        from ndcg_report.report import plots

        label = self._label(k)
        counts = self.comparisons.xs(label, level="k")[["wins", "ties", "losses"]]
        return plots.wins_ties_losses(counts, label, self.baseline_name)

    def plot_pairwise(self) -> "Figure":
        """The randomized Tukey HSD p-value matrix at the headline cut-off, with the letter groups."""
        from ndcg_report.report import plots

        self._paired_or_refuse(self.headline_k)
        test = self.pairwise
        return plots.pairwise_matrix(test.pvalues, test.letters, test.k, test.n_queries, test.alpha)

    def plot_scatter(self, k: str | int | None = None) -> "Figure":
        """Per system, per-query NDCG@k of the baseline (x) against the system (y), with the diagonal."""
        from ndcg_report.report import plots

        return plots.per_query_scatter(self._paired_or_refuse(k), self.names, self.baseline_name, self._label(k))

    def plot_delta_bars(self, k: str | int | None = None) -> "Figure":
        """Per system, the per-query NDCG@k difference from the baseline, sorted (topic-by-topic bars)."""
        from ndcg_report.report import plots

        self._paired_or_refuse(k)
        return plots.per_query_delta(self.deltas_at(k), self.baseline_name, self._label(k))

    def plot_ecdf(self, k: str | int | None = None) -> "Figure":
        """Empirical CDF of per-query NDCG@k of every system."""
        from ndcg_report.report import plots

        return plots.ndcg_ecdf(self._paired_or_refuse(k), self._label(k), self.baseline_name)

    # --- display ---------------------------------------------------------------------------

    @cached_property
    def significance(self) -> pd.DataFrame:
        """Systems under test x cut-offs: +1 significantly above the baseline, -1 below, 0 neither
        (Holm-adjusted randomization test over the whole family, at alpha)."""
        table = self.comparisons
        signs = np.sign(table["delta"].to_numpy()) * (table["holm_randomization_pvalue"].to_numpy() < self.alpha)
        frame = pd.Series(signs.astype(int), index=table.index).unstack("k").loc[list(self.names), self.labels]
        frame.columns.name = None
        return frame

    def _repr_html_(self) -> str:
        """The leaderboard, every name escaped: what Jupyter shows for the object."""
        from ndcg_report.report.html import leaderboard_html

        return leaderboard_html(self.leaderboard, self.significance, self.baseline_name, self.headline_k,
                                self.pairwise.letters if len(self.names) > 1 else None)

    def __repr__(self) -> str:
        return (f"Experiment({len(self.names)} system(s) against {self.baseline_name!r}, "
                f"{len(self.ndcg_at(self.headline_k))} paired queries, cut-offs {', '.join(self.labels)})")

    def _label(self, k: str | int | None) -> str:
        label = self.headline_k if k is None else str(k)
        if label not in self.labels:
            raise ParameterError(f"cut-off {label!r} was not evaluated; have {', '.join(self.labels)}")
        return label

    def _column(self, k: str | int | None) -> int:
        return self.labels.index(self._label(k))


def compare_runs(
    runs: Mapping[str, RunLike] | Sequence[RunLike | tuple[str, RunLike]] | RunLike,
    qrels: QrelsLike,
    baseline: RunLike,
    *,
    cutoffs: str | Sequence = DEFAULT_CUTOFFS,
    gain: str = "linear",
    missing: str = "zero",
    no_relevant: str = "skip",
    seed: int = 42,
    baseline_name: str = "",
    topics: pd.Series | None = None,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    alpha: float = ALPHA,
    large_n: int = LARGE_N,
) -> Experiment:
    """Evaluate every run and the baseline on qrels and compare each run with the baseline.

    runs maps display names to runs (paths, what read_run returned, pyarrow Tables or pandas
    DataFrames with qid, docid or docno, score), or is a list of runs or of (name, run) pairs
    (a run without a name, or named '', is named by its run tag, made unique), or a single run.
    The baseline is named baseline_name, else by its tag, else 'baseline'. topics (query text by
    qid, as read_topics returns) labels the per-query tables. Over more than large_n paired
    queries, the resampling statistics use their large-sample limits where those are accurate
    (stats.resampling, stats.tukey_hsd).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number >= 0; got {seed!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ParameterError(f"n_resamples must be a whole number >= 1; got {n_resamples!r}")
    for label, value in (("confidence", confidence), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < value < 1:
            raise ParameterError(f"{label} must be a number between 0 and 1; got {value!r}")
    topics = _topics(topics)
    given_names, given_runs = _named_runs(runs)
    ks = parse_cutoffs(cutoffs)
    if isinstance(large_n, bool) or not isinstance(large_n, (int, np.integer)) or large_n < 1:
        raise ParameterError(f"large_n must be a whole number >= 1; got {large_n!r}")
    qrels_read = load_qrels(qrels)
    baseline_run = load_run(baseline)
    loaded = [load_run(run) for run in given_runs]
    given_paths = [(Path(run.path), f"run {position}") for position, run in enumerate(loaded, start=1) if run.path]
    if baseline_run.path:
        given_paths.append((Path(baseline_run.path), "the baseline"))
    check_distinct_paths([path for path, _ in given_paths], [role for _, role in given_paths])
    derived = [derived_name(run.tag, run.path, position) for position, run in enumerate(loaded, start=1)]
    base_name = check_name(baseline_name, "baseline_name") if baseline_name else ""
    names = unique_names(given_names, derived, reserved=[base_name] if base_name else [])
    if not base_name:
        base_name = derived_name(baseline_run.tag, None, 0) if baseline_run.tag.strip() else "baseline"
        while base_name.casefold() in {name.casefold() for name in names}:
            base_name = f"{base_name} (baseline)"
    options = dict(cutoffs=ks, gain=gain, missing=missing, no_relevant=no_relevant)
    read = dict(zip(names, loaded)) | {base_name: baseline_run}
    evaluations = {name: evaluate(run, qrels_read, **options) for name, run in read.items()}
    for name, evaluation in evaluations.items():
        if evaluation.counts.in_both == 0:
            raise ParameterError(f"{name!r} has no query in common with the qrels; check that they are for the same topics")
    comparisons = compare_systems({name: evaluations[name] for name in names}, evaluations[base_name],
                                  base_name, seed, n_resamples, confidence, large_n)
    return Experiment(
        names=tuple(names), baseline_name=base_name, evaluations=evaluations, runs=read, qrels=qrels_read,
        comparisons=comparisons, topics=topics, seed=int(seed), n_resamples=int(n_resamples),
        confidence=confidence, alpha=alpha, large_n=int(large_n),
    )


def _topics(topics: "pd.Series | str | Path | None") -> pd.Series | None:
    """Query text by qid: a Series as read_topics returns, or a topics file to read."""
    if topics is None or isinstance(topics, pd.Series):
        return topics
    if isinstance(topics, (str, Path)):
        from ndcg_report.inputs.trec import read_topics

        return read_topics(topics)
    raise ParameterError(f"topics must be a path or a pandas Series of query text by qid; got {type(topics).__name__}")


def _named_runs(runs: Mapping[str, RunLike] | Sequence | RunLike) -> tuple[list[str], list[RunLike]]:
    """(given names, '' where none; the runs) in the order given."""
    if is_one_run(runs):  # a pytrec_eval/ranx dict of one run, not a mapping of names to runs
        pairs = [("", runs)]
    elif isinstance(runs, Mapping):
        if any(not isinstance(name, str) for name in runs):
            raise ParameterError("the names of runs (the mapping's keys) must be text")
        pairs = list(runs.items())
    elif isinstance(runs, (list, tuple)):
        pairs = [item if isinstance(item, tuple) else ("", item) for item in runs]
    else:
        pairs = [("", runs)]
    if not pairs:
        raise ParameterError("give at least one run to compare with the baseline")
    if any(len(pair) != 2 or not isinstance(pair[0], str) for pair in pairs):
        raise ParameterError("give each named run as a (name, run) pair, the name as text")
    return [check_name(str(name), "runs") if name else "" for name, _ in pairs], [run for _, run in pairs]
