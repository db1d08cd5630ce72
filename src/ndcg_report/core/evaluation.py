"""What evaluate returns: every measure per query and over queries (Evaluation), query counts.

Made by core/evaluation_pass.py's evaluate (and merged from parts by core/partitions.py); read by
the output formats, the statistics and the report. Arrays hold one row per qrels query, in
trec_eval's qid order, and one column per measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from ndcg_report.core.measures.names import Measure, cutoff_dtype, level_text, measure_of

if TYPE_CHECKING:
    import pandas as pd

Cutoff = int | Literal["all"]


@dataclass(frozen=True)
class QueryCounts:
    """How many queries of each kind the evaluation saw (`Evaluation.counts`).

    Parameters
    ----------
    in_run
        Queries in the run.
    in_qrels
        Queries in the qrels.
    in_both
        Queries in both.
    missing
        In the qrels with something relevant (label > 0), not in the run.
    no_relevant
        In the qrels with nothing relevant (IDCG = 0).
    run_only
        In the run, not in the qrels: ignored.
    averaged
        Averaged in at least one measure.
    below_level
        In the qrels with no label >= the relevance level (the binary measures' "nothing relevant").

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> counts = evaluate("monot5.txt", "qrels.txt").counts
    >>> counts.in_qrels, counts.missing, counts.run_only
    (8, 0, 0)
    """

    in_run: int
    in_qrels: int
    in_both: int
    missing: int  # in qrels with something relevant (label > 0), not in the run
    no_relevant: int  # in qrels with nothing relevant (IDCG = 0)
    run_only: int  # in the run, not in qrels: ignored
    averaged: int  # averaged in at least one measure
    below_level: int = 0  # in qrels with no label >= the relevance level (the binary measures' "nothing relevant")


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Every measure of one run, as `evaluate` returns it.

    Arrays per qrels query (rows, in trec_eval's qid order) and measure (columns, `measures`).
    `values[q, j]` is the value of measures[j] for query q; `averaged[q, j]` says whether it enters
    the mean (see `evaluate` for which queries do). dcg and idcg have one column per nDCG measure
    (ndcg_columns), judged one per cut-off in `depths` (share of the top k with a label; None: of
    all retrieved). `per_query` and `summary` give the same as DataFrames. Made by `evaluate`, not
    by hand.

    Parameters
    ----------
    qids
        The qrels queries (rows), in trec_eval's qid order.
    num_ret
        Per query: documents retrieved.
    num_rel
        Per query: documents judged relevant at the relevance level (trec_eval's num_rel).
    num_rel_graded
        Per query: documents judged with a positive label (gain > 0).
    in_run
        Per query: whether the run has it.
    measures
        The measures, one per column of `values`.
    values
        Per query and measure: the value.
    averaged
        Per query and measure: whether the value enters the mean.
    dcg
        Per query and nDCG measure (`ndcg_columns`): DCG@k.
    idcg
        Per query and nDCG measure: IDCG@k.
    depths
        The cut-offs of `judged` (None: all retrieved).
    judged
        Per query and depth: the share of the top k that has a label.
    counts
        How many queries of each kind (`QueryCounts`).
    gain
        The gain it was computed with (`linear` or `exponential`).
    missing
        The `missing` policy it was computed with.
    no_relevant
        The `no_relevant` policy it was computed with.
    rel_level
        The relevance level of the binary measures.
    tied_lines
        Run lines whose score ties another line's in the same query.
    identical_ids
        The `identical_ids` policy it was computed with (`keep` or `drop`).
    identical_dropped
        Run lines dropped because their docid is their qid (with `identical_ids="drop"`).
    max_retrieved
        The lines of a query that counted (trec_eval's -M), None for all of them.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> result = evaluate("monot5.txt", "qrels.txt", cutoffs="10,all")
    >>> result.labels
    ['nDCG@10', 'nDCG']
    >>> int(result.summary.loc[("nDCG", 10), "n"])
    8
    >>> result.table("nDCG@10").shape
    (8, 1)
    """

    qids: np.ndarray
    num_ret: np.ndarray
    num_rel: np.ndarray  # judged relevant at the relevance level (trec_eval's num_rel)
    num_rel_graded: np.ndarray  # judged with a positive label (gain > 0)
    in_run: np.ndarray
    measures: tuple[Measure, ...]
    values: np.ndarray
    averaged: np.ndarray
    dcg: np.ndarray
    idcg: np.ndarray
    depths: tuple[int | None, ...]
    judged: np.ndarray
    counts: QueryCounts
    gain: str
    missing: str
    no_relevant: str
    rel_level: float
    tied_lines: int
    identical_ids: str = "keep"  # run lines whose docid is their qid: kept, or dropped (BEIR's convention)
    identical_dropped: int = 0  # how many such lines were dropped
    max_retrieved: int | None = None

    # --- columns ---------------------------------------------------------------------------

    @property
    def labels(self) -> list[str]:
        """The measure labels ('nDCG@10', 'AP'), in column order."""
        return [measure.label for measure in self.measures]

    @property
    def ndcg_columns(self) -> list[int]:
        """The columns of the graded measures (nDCG, nDCG_judged), in the order of the dcg and idcg columns."""
        return [j for j, measure in enumerate(self.measures) if measure.kind == "graded"]

    @property
    def cutoffs(self) -> tuple[Cutoff, ...]:
        """The cut-offs of the nDCG measures ('all' for nDCG without one): the -k of an nDCG-only evaluation."""
        return tuple("all" if m.k is None else m.k for m in self.measures if m.measure == "nDCG")

    def measure(self, value: "Measure | str | int | None") -> Measure:
        """The measure `value` names (a Measure, 'RR@10', 'ndcg_cut_10', or an nDCG cut-off such as 10)."""
        return measure_of(self.measures[0] if value is None else value, self.measures)

    def column(self, value: "Measure | str | int | None") -> int:
        """The column of the measure `value` names (see `measure`)."""
        return self.measures.index(self.measure(value))

    def column_values(self, value: "Measure | str | int | None") -> np.ndarray:
        """The values of one measure for every query, NaN where the query is not averaged."""
        j = self.column(value)
        return np.where(self.averaged[:, j], self.values[:, j], np.nan)

    def judged_at(self, k: int | None) -> np.ndarray:
        """judged@k of every query (NaN where nothing was retrieved)."""
        return self.judged[:, self.depths.index(k)]

    def mean(self, value: "Measure | str | int | None" = None) -> float:
        """Mean of one measure over its averaged queries as its family averages (Family.mean; NaN if there
        are none): their geometric mean for gm_map and gm_bpref, as trec_eval, else the arithmetic mean
        (of a count too)."""
        j = self.column(value)
        return self.measures[j].family.mean(self.values[:, j], self.averaged[:, j])

    def overall(self, value: "Measure | str | int | None" = None) -> float:
        """One measure over all queries as trec_eval's `all` row gives it (Family.overall): the mean over
        the averaged queries (geometric for gm_map and gm_bpref), or for a count their sum (num_rel with
        missing="zero", trec_eval's -c: the judgements with a label > 0 of every query)."""
        j = self.column(value)
        return self.measures[j].family.overall(self.values[:, j], self.averaged[:, j], self.num_rel_graded,
                                               self.missing)

    def averaged_with(self, value: "Measure | str | int | None", missing: str | None = None,
                      no_relevant: str | None = None) -> np.ndarray:
        """Which queries would enter the mean of one measure under other policies (None: this
        evaluation's): every query's value is known, so no evaluation again."""
        relevant = self.measure(value).family.has_relevant(self.num_rel, self.num_rel_graded)
        return averaged_mask(self.in_run, relevant, missing or self.missing, no_relevant or self.no_relevant)

    def mean_with(self, value: "Measure | str | int | None" = None, missing: str | None = None,
                  no_relevant: str | None = None) -> float:
        """Mean of one measure had the queries been averaged under other policies (see averaged_with), as
        its family averages (geometric for gm_map and gm_bpref)."""
        j = self.column(value)
        return self.measures[j].family.mean(self.values[:, j], self.averaged_with(value, missing, no_relevant))

    # --- tables ----------------------------------------------------------------------------

    @cached_property
    def per_query(self) -> "pd.DataFrame":
        """One row per qid and measure: qid, measure, k (an integer, NA for no cut-off), value,
        num_ret, num_rel, dcg and idcg (nDCG only), judged (judged@k), in_run, averaged."""
        import pandas as pd

        n_measures, n_queries = len(self.measures), len(self.qids)
        ks = pd.array([m.k for m in self.measures], dtype=cutoff_dtype(self.measures))
        dcg = np.full((n_queries, n_measures), np.nan)
        idcg = np.full((n_queries, n_measures), np.nan)
        dcg[:, self.ndcg_columns], idcg[:, self.ndcg_columns] = self.dcg, self.idcg
        judged = self.judged[:, [self.depths.index(m.depth) for m in self.measures]] if n_measures else dcg
        return pd.DataFrame({
            "qid": np.repeat(self.qids, n_measures).astype(str),
            "measure": np.tile(np.asarray([m.measure for m in self.measures], dtype=object), n_queries),
            "k": ks.take(np.tile(np.arange(n_measures), n_queries)),
            "value": np.where(self.averaged, self.values, np.nan).ravel(),
            "num_ret": np.repeat(self.num_ret, n_measures), "num_rel": np.repeat(self.num_rel, n_measures),
            "dcg": dcg.ravel(), "idcg": idcg.ravel(), "judged": judged.ravel(),
            "in_run": np.repeat(self.in_run, n_measures), "averaged": self.averaged.ravel(),
        })

    @cached_property
    def summary(self) -> "pd.DataFrame":
        """One row per measure, index (measure, k): n, mean, median, std (ddof=1) over the averaged
        queries and the mean judged@k of those queries."""
        import pandas as pd

        rows = []
        for j, measure in enumerate(self.measures):
            values = self.values[self.averaged[:, j], j]
            judged = self.judged_at(measure.depth)[self.averaged[:, j]]
            rows.append({
                "n": len(values),
                "mean": self.mean(measure),
                "median": float(np.median(values)) if len(values) else np.nan,
                "std": float(values.std(ddof=1)) if len(values) > 1 else np.nan,
                "judged": float(np.nanmean(judged)) if np.isfinite(judged).any() else np.nan,
            })
        index = pd.MultiIndex.from_tuples(list(self.measures), names=["measure", "k"])
        return pd.DataFrame(rows, index=index)

    def table(self, value: "Measure | str | int | None" = None) -> "pd.DataFrame":
        """One measure over its averaged queries: one row per qid, column named by the measure's label."""
        import pandas as pd

        j = self.column(value)
        keep = self.averaged[:, j]
        return pd.DataFrame({self.measures[j].label: self.values[keep, j]},
                            index=pd.Index(self.qids[keep].astype(str), name="qid"))

    def _repr_html_(self) -> str:
        """What Jupyter shows: the query counts and the summary as a small table (no array dumps)."""
        import html

        counts = self.counts
        head = (f"<p>{counts.in_qrels:,} qrels queries, {counts.in_both:,} in the run, {counts.averaged:,} averaged; "
                f"relevance level {html.escape(level_text(self.rel_level))}, {html.escape(self.gain)} gain</p>")
        rows = []
        for j, measure in enumerate(self.measures):
            values = self.values[self.averaged[:, j], j]
            mean = f"{self.mean(measure):.4f}" if len(values) else "nan"
            median = f"{np.median(values):.4f}" if len(values) else "nan"
            rows.append(f"<tr><th>{html.escape(measure.label)}</th><td>{len(values):,}</td><td>{mean}</td>"
                        f"<td>{median}</td></tr>")
        return (head + "<table><thead><tr><th>measure</th><th>n</th><th>mean</th><th>median</th></tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")

    def __repr__(self) -> str:
        shown = ", ".join(f"{label} {self.mean(m):.4f}" for label, m in zip(self.labels[:6], self.measures))
        more = f", … {len(self.measures) - 6} more" if len(self.measures) > 6 else ""
        return (f"Evaluation({self.counts.in_qrels} qrels queries, {self.counts.in_both} in the run; {shown}{more}; "
                f"relevance level {level_text(self.rel_level)})")


def averaged_mask(in_run: np.ndarray, relevant: np.ndarray, missing: str, no_relevant: str) -> np.ndarray:
    """Whether each query's value enters the mean: a query the run lacks only with missing='zero', one
    with nothing relevant (to the measure's kind) only with no_relevant='zero'."""
    averaged = np.ones(len(in_run), dtype=bool)
    if missing == "skip":
        averaged &= in_run
    if no_relevant == "skip":
        averaged &= relevant
    return averaged
