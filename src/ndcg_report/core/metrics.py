"""Every measure of a run per query and over queries, exactly as trec_eval 10 computes them
(`trec_eval -c -q -l N`), all measures and cut-offs in one pass over the judged lines of the run.

The ranking is trec_eval's (core/ranking.py). NDCG takes the graded labels as gains whatever the
relevance level; the binary measures (P, R, AP, RR, Rprec, Success) count a document relevant when
its label >= the relevance level. Only the run lines that have a judgement are ranked and summed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.measures.names import (
    DEFAULT_CUTOFFS, MAX_CUTOFF, Measure, MeasureSet, level_text, measure_of, parse_cutoffs, resolve_measures,
)
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.inputs.pair_index import PairIndex, candidate_matches
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_CUTOFFS", "MAX_CUTOFF", "Evaluation", "QueryCounts", "evaluate", "parse_cutoffs", "qid_codes"]

Cutoff = int | Literal["all"]
GAINS = ("linear", "exponential")
MISSING_POLICIES = ("zero", "skip")
NO_RELEVANT_POLICIES = ("skip", "zero")


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
        """Mean of one measure over its averaged queries (NaN if there are none)."""
        j = self.column(value)
        values = self.values[self.averaged[:, j], j]
        return float(values.mean()) if len(values) else float("nan")

    # --- tables ----------------------------------------------------------------------------

    @cached_property
    def per_query(self) -> "pd.DataFrame":
        """One row per qid and measure: qid, measure, k (an integer, NA for no cut-off), value,
        num_ret, num_rel, dcg and idcg (nDCG only), judged (judged@k), in_run, averaged."""
        import pandas as pd

        n_measures, n_queries = len(self.measures), len(self.qids)
        ks = pd.array([m.k for m in self.measures], dtype="Int64")
        dcg = np.full((n_queries, n_measures), np.nan)
        idcg = np.full((n_queries, n_measures), np.nan)
        dcg[:, self.ndcg_columns], idcg[:, self.ndcg_columns] = self.dcg, self.idcg
        judged = self.judged[:, [self.depths.index(m.k) for m in self.measures]] if n_measures else dcg
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
            judged = self.judged_at(measure.k)[self.averaged[:, j]]
            rows.append({
                "n": len(values),
                "mean": float(values.mean()) if len(values) else np.nan,
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
            mean = f"{values.mean():.4f}" if len(values) else "nan"
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


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """Return value if it is one of choices, else raise ParameterError naming them."""
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def gains_of(labels: np.ndarray, gain: str, scale: np.ndarray | float = 0.0) -> np.ndarray:
    """Gain of each label: linear `rel`, exponential `2**rel - 1`; labels <= 0 give 0.

    Exponential gains are returned divided by 2**scale (a per-label exponent, the largest label of
    its query): `2**(rel - scale) - 2**-scale`, exactly the scaled gain for labels up to 53 and
    finite for any label, where `2**rel` alone overflows past 1023.
    """
    positive = np.where(labels > 0, labels, 0.0)
    if gain == "linear":
        return positive
    return np.where(labels > 0, np.exp2(positive - scale) - np.exp2(-np.asarray(scale, dtype=np.float64)), 0.0)


@dataclass(frozen=True)
class _Judged:
    """The run lines that have a judgement, sorted by query code then rank, and per-query counts."""

    query: np.ndarray  # qrels query code
    label: np.ndarray
    rank: np.ndarray  # 0-based, trec_eval's order
    num_ret: np.ndarray  # per qrels query


def evaluate(
    run: RunLike,
    qrels: QrelsLike,
    cutoffs: str | list | tuple | None = None,
    gain: str = "linear",
    missing: str = "zero",
    no_relevant: str = "skip",
    *,
    measures: "str | Measure | list | tuple | None" = None,
    rel_level: object = None,
) -> Evaluation:
    """Every measure of `run` (qid, docid, score) against `qrels` (qid, docid, rel).

    Parameters
    ----------
    run
        The run: a path (read and checked as `read_run` does), what `read_run` returns, a pyarrow
        Table or pandas DataFrame with `qid`, `docid` (or PyTerrier's `docno`) and `score`, a
        pytrec_eval/ranx dict `{qid: {docid: score}}`, a ranked `{qid: [docid, ...]}`, a ranx `Run`
        or a list of ir_measures `ScoredDoc`.
    qrels
        The judgements, in the same forms: `rel` (or PyTerrier's `label`) as the label column,
        `{qid: {docid: label}}`, a ranx `Qrels` or a list of ir_measures `Qrel`.
    cutoffs
        Without `measures`: the cut-offs of nDCG, `"1,10,all"` or a list (default
        1,3,5,10,20,100,1000; `all` is no cut-off). With `measures`: the cut-offs of a trec_eval
        family named without one (`P`, `recall`).
    gain
        `"linear"` (trec_eval's, the label) or `"exponential"` (`2**rel - 1`).
    missing
        A query in the qrels with something relevant that the run lacks scores 0 (`"zero"`,
        trec_eval's `-c`) or is left out (`"skip"`).
    no_relevant
        A query with nothing relevant (IDCG = 0 for nDCG; no label >= `rel_level` for the binary
        measures) is left out (`"skip"`) or scores 0 (`"zero"`, trec_eval's). The counts are
        always averaged.
    measures
        trec_eval or ir_measures names (`"nDCG@10 AP R@1000"`, `["ndcg_cut.10", "map"]`), `Measure`
        objects or ir_measures measure objects; None: nDCG at `cutoffs`.
    rel_level
        A label at or above it is relevant to the binary measures (default 1, trec_eval's `-l`;
        any number >= 0).

    Returns
    -------
    Evaluation
        Every measure of every qrels query, with its `summary` and `per_query` tables.

    Raises
    ------
    InputError
        A file that is not a valid run or qrels (naming the file and line).
    ParameterError
        A bad option value, or a bad value in a table or dict (naming the query and document).

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> result = evaluate("monot5.txt", "qrels.txt", measures="nDCG@10 AP", rel_level=2)
    >>> round(result.mean("nDCG@10"), 4), round(result.mean("AP"), 4)
    (0.6003, 0.2006)
    >>> result.counts.averaged
    8
    """
    asked = resolve_measures(measures, cutoffs, rel_level)
    check_choice("gain", gain, GAINS)
    check_choice("missing", missing, MISSING_POLICIES)
    check_choice("no_relevant", no_relevant, NO_RELEVANT_POLICIES)
    qrels_input = load_qrels(qrels)
    run_input = load_run(run)
    run, run_pairs = run_input.table, run_input.pairs
    qrels, qrels_pairs = qrels_input.table, qrels_input.pairs

    qrels_qids, qrels_codes = _qrels_queries(qrels)
    run_qids, run_codes_local = qid_codes(run)
    n_queries = len(qrels_qids)
    run_to_code, run_only = _run_to_qrels(run_qids, qrels_qids)

    judged_rows, judged_labels = _judged_run_lines(run_to_code, run_codes_local, run, run_pairs,
                                                   qrels_codes, qrels, qrels_pairs)
    ranks = rank_within_query(run_codes_local, column_numpy(run, "score"), one_array(run["docid"]),
                              judged_rows, n_queries=len(run_qids))
    num_ret = np.zeros(n_queries, dtype=np.int64)
    num_ret[run_to_code[~run_only]] = ranks.lines_per_query[: len(run_qids)][~run_only]
    judged_q = run_to_code[run_codes_local[judged_rows]]
    # Summed in rank order, as trec_eval does: equal gain vectors give bit-identical sums whatever the file order.
    in_rank_order = np.argsort(judged_q * (int(ranks.rank.max(initial=0)) + 1) + ranks.rank)
    judged = _Judged(judged_q[in_rank_order], judged_labels[in_rank_order], ranks.rank[in_rank_order], num_ret)
    labels = column_numpy(qrels, "rel")

    graded = [m for m in asked.measures if m.kind == "graded"]
    depths = tuple(sorted({m.k for m in asked.measures if m.k is not None})) + (None,)
    dcg, idcg, ndcg, judged_share = _graded_columns(judged, labels, qrels_codes, n_queries, gain, graded, depths)
    num_rel, num_rel_graded = _relevant_counts(labels, qrels_codes, n_queries, asked.rel_level)
    binary = _binary_columns(judged, num_rel, asked)

    in_run = num_ret > 0
    relevant = {"graded": num_rel_graded > 0, "binary": num_rel > 0, "count": np.ones(n_queries, dtype=bool)}
    values = np.empty((n_queries, len(asked.measures)))
    averaged = np.empty((n_queries, len(asked.measures)), dtype=bool)
    for j, measure in enumerate(asked.measures):
        values[:, j] = ndcg[:, graded.index(measure)] if measure.kind == "graded" else binary[measure]
        averaged[:, j] = _averaged(in_run, relevant[measure.kind], missing, no_relevant)

    has_graded = relevant["graded"]
    counts = QueryCounts(
        in_run=len(run_qids), in_qrels=n_queries, in_both=int(in_run.sum()),
        missing=int((~in_run & has_graded).sum()), no_relevant=int((~has_graded).sum()),
        run_only=int(run_only.sum()), averaged=int(averaged.any(axis=1).sum()),
        below_level=int((num_rel == 0).sum()),
    )
    return Evaluation(
        qids=np.asarray(qrels_qids.to_pylist(), dtype=object), num_ret=num_ret, num_rel=num_rel,
        num_rel_graded=num_rel_graded, in_run=in_run, measures=asked.measures, values=values, averaged=averaged,
        dcg=dcg, idcg=idcg, depths=depths, judged=judged_share, counts=counts, gain=gain, missing=missing,
        no_relevant=no_relevant, rel_level=asked.rel_level, tied_lines=ranks.tied_lines,
    )


def _graded_columns(
    judged: _Judged, labels: np.ndarray, qrels_codes: np.ndarray, n_queries: int, gain: str,
    graded: list[Measure], depths: tuple[int | None, ...],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(DCG, IDCG, NDCG) per query of each graded measure (columns), and judged@k at each of depths.

    nDCG_judged ranks the judged lines alone (the condensed list: unjudged ones dropped, the rest
    ranked again in the same order), against the same ideal.
    """
    # Exponential gains are summed relative to each query's largest label (see gains_of): NDCG is the
    # ratio of two sums with one scale, so it is exact however large the labels; DCG and IDCG are
    # scaled back below and overflow to inf only where 2**label itself does.
    scale = np.zeros(n_queries)
    if gain == "exponential":
        np.maximum.at(scale, qrels_codes, np.where(labels > 0, labels, 0.0))
    gains = gains_of(judged.label, gain, scale[judged.query])
    ideal_gain = gains_of(labels, gain, scale[qrels_codes])
    positive = np.flatnonzero(ideal_gain > 0)  # judgements with no gain add nothing to IDCG
    ideal_order = positive[np.lexsort((-ideal_gain[positive], qrels_codes[positive]))]
    ideal_q = qrels_codes[ideal_order]
    ideal_rank = _rank_in_block(ideal_q)  # position within the query's block of sorted judgements
    ideal_discounted = ideal_gain[ideal_order] / np.log2(ideal_rank + 2.0)

    plain_ks = {m.k for m in graded if m.measure == "nDCG"}
    together = tuple(sorted(plain_ks | set(depths), key=_depth_key))
    sums, judged_count = _sums_below_cutoffs(judged.query, judged.rank, gains / np.log2(judged.rank + 2.0),
                                             together, n_queries)
    condensed_ks = tuple(sorted({m.k for m in graded if m.measure == "nDCG_judged"}, key=_depth_key))
    if condensed_ks:
        condensed = _rank_in_block(judged.query)  # rank among the query's judged lines, which are in rank order
        condensed_sums, _ = _sums_below_cutoffs(judged.query, condensed, gains / np.log2(condensed + 2.0),
                                                condensed_ks, n_queries)
    dcg = np.zeros((n_queries, len(graded)))
    for j, measure in enumerate(graded):
        dcg[:, j] = (sums[:, together.index(measure.k)] if measure.measure == "nDCG"
                     else condensed_sums[:, condensed_ks.index(measure.k)])
    ideal_ks = tuple(sorted({m.k for m in graded}, key=_depth_key))
    idcg, _ = _sums_below_cutoffs(ideal_q, ideal_rank, ideal_discounted, ideal_ks, n_queries)
    idcg = idcg[:, [ideal_ks.index(m.k) for m in graded]]
    shown = np.minimum(judged.num_ret[:, None], [np.inf if k is None else k for k in depths])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ndcg = np.where(idcg > 0, dcg / idcg, 0.0)
        if gain == "exponential":  # back from the per-query scale: exact (a power of two) unless it overflows
            dcg, idcg = dcg * np.exp2(scale)[:, None], idcg * np.exp2(scale)[:, None]
        judged_share = np.where(shown > 0, judged_count[:, [together.index(k) for k in depths]] / shown, np.nan)
    return dcg, idcg, ndcg, judged_share


def _binary_columns(judged: _Judged, num_rel: np.ndarray, asked: MeasureSet) -> dict[Measure, np.ndarray]:
    """The value per query of every binary and count measure asked for (trec_eval's m_*.c)."""
    wanted = [m for m in asked.measures if m.kind != "graded"]
    if not wanted:
        return {}
    n_queries = len(num_rel)
    relevant = judged.label >= asked.rel_level
    query, rank = judged.query[relevant], judged.rank[relevant]  # relevant retrieved, by query then rank
    found = _rank_in_block(query)  # relevant documents before this one in its query
    precision = (found + 1.0) / (rank + 1.0)  # trec_eval's rel_so_far / (i + 1)
    ks = tuple(sorted({m.k for m in wanted if m.measure in ("P", "R", "AP", "Success")} | {None}, key=_depth_key))
    ap_sums, retrieved = _sums_below_cutoffs(query, rank, precision, ks, n_queries)
    first = np.full(n_queries, -1)  # rank of the first relevant document retrieved, -1 if none is
    first[query[found == 0]] = rank[found == 0]
    values = {}
    for measure in wanted:
        name, k = measure
        column = ks.index(k) if k in ks else None
        if name == "P":
            values[measure] = retrieved[:, column] / k
        elif name == "R":
            values[measure] = _divide(retrieved[:, column], num_rel)
        elif name == "AP":
            values[measure] = _divide(ap_sums[:, column], num_rel)
        elif name == "Success":
            values[measure] = (retrieved[:, column] > 0).astype(np.float64)
        elif name == "RR":
            reached = (first >= 0) & ((first < k) if k is not None else True)
            values[measure] = np.divide(1.0, first + 1.0, out=np.zeros(n_queries), where=reached)
        elif name == "Rprec":
            within = np.bincount(query, weights=rank < num_rel[query], minlength=n_queries)
            values[measure] = _divide(within, num_rel)
        elif name == "NumRet":
            values[measure] = judged.num_ret.astype(np.float64)
        elif name == "NumRel":
            values[measure] = num_rel.astype(np.float64)
        elif name == "NumRelRet":
            values[measure] = retrieved[:, ks.index(None)].astype(np.float64)
        else:  # pragma: no cover - FAMILIES and this function list the same families
            raise AssertionError(f"no computation for {measure.label}")
    return values


def _divide(sums: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """sums / num_rel, 0 where nothing is relevant (trec_eval's value for such a query)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(num_rel > 0, sums / np.maximum(num_rel, 1), 0.0)


def _rank_in_block(query: np.ndarray) -> np.ndarray:
    """0-based position of each entry within its run of equal `query` codes (entries grouped by query)."""
    position = np.arange(len(query))
    if len(query):
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        position -= np.repeat(starts, np.diff(np.append(starts, len(query))))
    return position


def _depth_key(k: int | None) -> int:
    """Sort key of cut-offs: ascending, None (the whole ranking) last."""
    return MAX_CUTOFF + 1 if k is None else k


def _sums_below_cutoffs(
    query: np.ndarray, rank: np.ndarray, values: np.ndarray, ks: tuple, n_queries: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per query (rows) and cut-off (columns): sum of `values` and count of entries with rank < k.

    ks ascending, None (or 'all': no cut-off) last. Sums run in array order, as np.bincount adds.
    The largest cut-off goes first and each next one keeps a subset of the entries, so small
    cut-offs cost little.
    """
    sums, counts = [None] * len(ks), [None] * len(ks)
    for column in reversed(range(len(ks))):
        if ks[column] not in (None, "all"):
            keep = rank < ks[column]
            if not keep.all():
                query, rank, values = query[keep], rank[keep], values[keep]
        sums[column] = np.bincount(query, weights=values, minlength=n_queries)
        counts[column] = np.bincount(query, minlength=n_queries)
    if not ks:
        return np.zeros((n_queries, 0)), np.zeros((n_queries, 0), dtype=np.int64)
    # float64 even without any entry (bincount of no weights gives int64)
    return np.column_stack(sums).astype(np.float64, copy=False), np.column_stack(counts).astype(np.int64, copy=False)


def averaged_queries(run: RunLike, qrels: QrelsLike, measure: "Measure | str", missing: str = "zero",
                     no_relevant: str = "skip", rel_level: object = None) -> np.ndarray:
    """Per qrels query (the rows of evaluate's Evaluation), whether the run's value of `measure` enters
    its mean: `evaluate(run, qrels, measures=[measure], ...).averaged[:, 0]`, from which queries the
    run has and the qrels' labels alone, without ranking anything (only the run's qid column is read)."""
    asked = resolve_measures([measure], None, rel_level)
    check_choice("missing", missing, MISSING_POLICIES)
    check_choice("no_relevant", no_relevant, NO_RELEVANT_POLICIES)
    qrels_table, run_table = load_qrels(qrels).table, load_run(run).table
    qrels_qids, qrels_codes = _qrels_queries(qrels_table)
    run_qids, run_codes_local = qid_codes(run_table)
    n_queries = len(qrels_qids)
    run_to_code, run_only = _run_to_qrels(run_qids, qrels_qids)
    in_run = np.zeros(n_queries, dtype=bool)
    has_lines = np.bincount(run_codes_local, minlength=len(run_qids)) > 0
    in_run[run_to_code[~run_only & has_lines]] = True
    num_rel, num_rel_graded = _relevant_counts(column_numpy(qrels_table, "rel"), qrels_codes, n_queries,
                                               asked.rel_level)
    kind = asked.measures[0].kind
    relevant = {"graded": num_rel_graded > 0, "binary": num_rel > 0}.get(kind, np.ones(n_queries, dtype=bool))
    return _averaged(in_run, relevant, missing, no_relevant)


def _qrels_queries(qrels: pa.Table) -> tuple[pa.Array, np.ndarray]:
    """(the qrels' distinct qids in byte order, as trec_eval prints them; each row's code into them)."""
    qrels_qids, qrels_codes = qid_codes(qrels)
    order = as_numpy(pc.sort_indices(qrels_qids))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    return qrels_qids.take(from_numpy(order)), position[qrels_codes]  # codes in that order


def _run_to_qrels(run_qids: pa.Array, qrels_qids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(the qrels code of each of the run's qids, a run-only qid numbered after the qrels' queries;
    which qids are run-only)."""
    n_queries = len(qrels_qids)
    run_to_code = as_numpy_or(pc.index_in(run_qids, value_set=qrels_qids), -1).astype(np.intp)
    run_only = run_to_code < 0
    run_to_code[run_only] = n_queries + np.arange(int(run_only.sum()))
    return run_to_code, run_only


def _relevant_counts(labels: np.ndarray, qrels_codes: np.ndarray, n_queries: int,
                     rel_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per query: (num_rel, judgements with label >= rel_level; num_rel_graded, with label > 0)."""
    num_rel = np.bincount(qrels_codes, weights=labels >= rel_level, minlength=n_queries).astype(np.int64)
    num_rel_graded = np.bincount(qrels_codes, weights=labels > 0, minlength=n_queries).astype(np.int64)
    return num_rel, num_rel_graded


def _averaged(in_run: np.ndarray, relevant: np.ndarray, missing: str, no_relevant: str) -> np.ndarray:
    """Whether each query's value enters the mean: a query the run lacks only with missing='zero', one
    with nothing relevant (to the measure's kind) only with no_relevant='zero'."""
    averaged = np.ones(len(in_run), dtype=bool)
    if missing == "skip":
        averaged &= in_run
    if no_relevant == "skip":
        averaged &= relevant
    return averaged


def qid_codes(table: pa.Table) -> tuple[pa.Array, np.ndarray]:
    """(the distinct qids, an Arrow string array; the code of each row into it)."""
    column = one_array(table["qid"])
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    return column.dictionary, as_numpy(column.indices)


def _judged_run_lines(
    run_to_code: np.ndarray, run_codes_local: np.ndarray, run: pa.Table, run_pairs: PairIndex,
    qrels_codes: np.ndarray, qrels: pa.Table, qrels_pairs: PairIndex,
) -> tuple[np.ndarray, np.ndarray]:
    """(run row, qrels label) of every run line that has a judgement (see judged_pairs)."""
    rows, qrows = judged_pairs(run_to_code, run_codes_local, run, run_pairs, qrels_codes, qrels, qrels_pairs)
    return rows, column_numpy(qrels, "rel")[qrows]


def judged_pairs(
    run_to_code: np.ndarray, run_codes_local: np.ndarray, run: pa.Table, run_pairs: PairIndex,
    qrels_codes: np.ndarray, qrels: pa.Table, qrels_pairs: PairIndex,
) -> tuple[np.ndarray, np.ndarray]:
    """(run row, qrels row) of every run line that has a judgement. run_to_code maps the run's qid
    codes to the qrels' (a run-only query to a code no judgement has).

    Lines whose (query, docid) keys agree are candidates; only those with equal query and docid
    are kept, so a key collision can never attach a wrong label.
    """
    rows, qrows = candidate_matches(run_pairs, qrels_pairs)
    same = run_to_code[run_codes_local[rows]] == qrels_codes[qrows]
    same &= as_numpy(pc.equal(run["docid"].take(from_numpy(rows)), qrels["docid"].take(from_numpy(qrows))))
    return rows[same], qrows[same]
