"""NDCG@k per query and over queries, exactly as trec_eval's ndcg_cut, all cut-offs in one pass."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.pair_index import PairIndex, candidate_matches
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run

if TYPE_CHECKING:
    import pandas as pd

Cutoff = int | Literal["all"]
DEFAULT_CUTOFFS: tuple[Cutoff, ...] = (1, 3, 5, 10, 20, 100, 1000)
MAX_CUTOFF = 1_000_000_000  # deeper than any run; larger numbers overflow the rank arithmetic
GAINS = ("linear", "exponential")
MISSING_POLICIES = ("zero", "skip")
NO_RELEVANT_POLICIES = ("skip", "zero")


@dataclass(frozen=True)
class QueryCounts:
    """How many queries of each kind the evaluation saw."""

    in_run: int
    in_qrels: int
    in_both: int
    missing: int  # in qrels with something relevant, not in the run
    no_relevant: int  # in qrels with nothing relevant (IDCG = 0)
    run_only: int  # in the run, not in qrels: ignored
    averaged: int


@dataclass(frozen=True, eq=False)
class Evaluation:
    """NDCG@k of one run: arrays per qrels query (rows, in trec_eval's qid order) and cut-off (columns).

    ndcg is NaN for queries left out of the mean. `per_query` and `summary` give the same as
    DataFrames: per_query one row per qid and k (qid, k, num_ret, num_rel, dcg, idcg, ndcg, judged,
    in_run, averaged); summary one row per k (n, mean, median, std of ndcg, sample std with
    ddof=1, and mean judged@k).
    """

    qids: np.ndarray
    num_ret: np.ndarray
    num_rel: np.ndarray
    in_run: np.ndarray
    averaged: np.ndarray
    dcg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray
    judged: np.ndarray
    counts: QueryCounts
    cutoffs: tuple[Cutoff, ...]
    gain: str
    missing: str
    no_relevant: str
    tied_lines: int

    @property
    def labels(self) -> list[str]:
        """The cut-off labels, in column order."""
        return [cutoff_label(k) for k in self.cutoffs]

    def mean(self, k: Cutoff) -> float:
        """Mean NDCG@k over the averaged queries (NaN if there are none)."""
        values = self.ndcg[self.averaged, self.labels.index(cutoff_label(k))]
        return float(values.mean()) if len(values) else float("nan")

    @cached_property
    def per_query(self) -> "pd.DataFrame":
        import pandas as pd

        n_cutoffs = len(self.cutoffs)
        return pd.DataFrame({
            "qid": np.repeat(self.qids, n_cutoffs).astype(str), "k": np.tile(self.labels, len(self.qids)),
            "num_ret": np.repeat(self.num_ret, n_cutoffs), "num_rel": np.repeat(self.num_rel, n_cutoffs),
            "dcg": self.dcg.ravel(), "idcg": self.idcg.ravel(), "ndcg": self.ndcg.ravel(),
            "judged": self.judged.ravel(), "in_run": np.repeat(self.in_run, n_cutoffs),
            "averaged": np.repeat(self.averaged, n_cutoffs),
        })

    @cached_property
    def summary(self) -> "pd.DataFrame":
        import pandas as pd

        rows = []
        for column, label in enumerate(self.labels):
            values = self.ndcg[self.averaged, column]
            judged = self.judged[self.averaged, column]
            rows.append({
                "k": label, "n": len(values),
                "mean": float(values.mean()) if len(values) else np.nan,
                "median": float(np.median(values)) if len(values) else np.nan,
                "std": float(values.std(ddof=1)) if len(values) > 1 else np.nan,
                "judged": float(np.nanmean(judged)) if np.isfinite(judged).any() else np.nan,
            })
        return pd.DataFrame(rows).set_index("k")

    def ndcg_table(self) -> "pd.DataFrame":
        """NDCG of the averaged queries: one row per qid, one column per cut-off label."""
        import pandas as pd

        return pd.DataFrame(
            self.ndcg[self.averaged], index=pd.Index(self.qids[self.averaged].astype(str), name="qid"),
            columns=pd.Index(self.labels, name="k"),
        )


def cutoff_label(k: Cutoff) -> str:
    """`10` -> '10', `all` -> 'all'."""
    return str(k)


def parse_cutoffs(value: str | list | tuple) -> tuple[Cutoff, ...]:
    """Parse '1,3,10,all' (or a list) into sorted unique cut-offs, `all` last; 1 <= k <= MAX_CUTOFF."""
    items = value.split(",") if isinstance(value, str) else list(value)
    cutoffs: set[int] = set()
    has_all = False
    for item in items:
        text = str(item).strip().lower()
        if text == "all":
            has_all = True
            continue
        try:
            k = int(text)
        except ValueError:
            raise ParameterError(f"cut-off {item!r} is not a whole number or 'all'") from None
        if k < 1 or str(k) != text.lstrip("+"):
            raise ParameterError(f"cut-off {item!r} must be a whole number >= 1 or 'all'")
        if k > MAX_CUTOFF:
            raise ParameterError(f"cut-off {item!r} is larger than {MAX_CUTOFF:,}; use 'all' for no cut-off")
        cutoffs.add(k)
    if not cutoffs and not has_all:
        raise ParameterError("give at least one cut-off, e.g. -k 1,3,5,10")
    return tuple(sorted(cutoffs)) + (("all",) if has_all else ())


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


def evaluate(
    run: RunLike,
    qrels: QrelsLike,
    cutoffs: str | list | tuple = DEFAULT_CUTOFFS,
    gain: str = "linear",
    missing: str = "zero",
    no_relevant: str = "skip",
) -> Evaluation:
    """NDCG@k of `run` (qid, docid, score) against `qrels` (qid, docid, rel) for every cut-off.

    Takes paths (read and checked), what read_run / read_qrels return, or tables (pyarrow or
    pandas) with those columns; PyTerrier's `docno` and `label` names are accepted too.
    """
    ks = parse_cutoffs(cutoffs)
    check_choice("gain", gain, GAINS)
    check_choice("missing", missing, MISSING_POLICIES)
    check_choice("no_relevant", no_relevant, NO_RELEVANT_POLICIES)
    qrels_input = load_qrels(qrels)
    run_input = load_run(run)
    run, run_pairs = run_input.table, run_input.pairs
    qrels, qrels_pairs = qrels_input.table, qrels_input.pairs

    qrels_qids, qrels_codes = qid_codes(qrels)
    order = as_numpy(pc.sort_indices(qrels_qids))  # byte order of the ids, as trec_eval prints them
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    qrels_qids, qrels_codes = qrels_qids.take(from_numpy(order)), position[qrels_codes]  # codes in that order
    run_qids, run_codes_local = qid_codes(run)
    n_qrels_q = len(qrels_qids)
    run_to_code = as_numpy_or(pc.index_in(run_qids, value_set=qrels_qids), -1).astype(np.intp)
    run_only = run_to_code < 0
    run_to_code[run_only] = n_qrels_q + np.arange(int(run_only.sum()))

    judged_rows, judged_labels = _judged_run_lines(run_to_code, run_codes_local, run, run_pairs,
                                                   qrels_codes, qrels, qrels_pairs)
    ranks = rank_within_query(run_codes_local, column_numpy(run, "score"), one_array(run["docid"]),
                              judged_rows, n_queries=len(run_qids))
    num_ret = np.zeros(n_qrels_q, dtype=np.int64)
    num_ret[run_to_code[~run_only]] = ranks.lines_per_query[: len(run_qids)][~run_only]
    judged_q = run_to_code[run_codes_local[judged_rows]]
    # Summed in rank order, as trec_eval does: equal gain vectors give bit-identical DCG whatever the file order.
    in_rank_order = np.argsort(judged_q * (int(ranks.rank.max(initial=0)) + 1) + ranks.rank)
    judged_q, judged_labels, judged_rank = judged_q[in_rank_order], judged_labels[in_rank_order], ranks.rank[in_rank_order]
    labels = column_numpy(qrels, "rel")
    # Exponential gains are summed relative to each query's largest label (see gains_of): NDCG is the
    # ratio of two sums with one scale, so it is exact however large the labels; DCG and IDCG are
    # scaled back below and overflow to inf only where 2**label itself does.
    scale = np.zeros(n_qrels_q)
    if gain == "exponential":
        np.maximum.at(scale, qrels_codes, np.where(labels > 0, labels, 0.0))
    judged_discounted = gains_of(judged_labels, gain, scale[judged_q]) / np.log2(judged_rank + 2.0)
    ideal_gain = gains_of(labels, gain, scale[qrels_codes])
    positive = np.flatnonzero(ideal_gain > 0)  # judgements with no gain add nothing to IDCG
    ideal_order = positive[np.lexsort((-ideal_gain[positive], qrels_codes[positive]))]
    ideal_q = qrels_codes[ideal_order]
    ideal_rank = np.arange(len(ideal_q))  # position within the query's block of sorted judgements
    if len(ideal_q):
        block_starts = np.flatnonzero(np.concatenate(([True], ideal_q[1:] != ideal_q[:-1])))
        ideal_rank -= np.repeat(block_starts, np.diff(np.append(block_starts, len(ideal_q))))
    ideal_discounted = ideal_gain[ideal_order] / np.log2(ideal_rank + 2.0)
    num_rel = np.bincount(qrels_codes, weights=labels > 0, minlength=n_qrels_q).astype(np.int64)

    in_run = num_ret > 0
    has_relevant = np.bincount(ideal_q, minlength=n_qrels_q) > 0
    averaged = np.ones(n_qrels_q, dtype=bool)
    if missing == "skip":
        averaged &= in_run | ~has_relevant
    if no_relevant == "skip":
        averaged &= has_relevant
    if missing == "skip" and no_relevant == "zero":
        averaged &= in_run | has_relevant  # trec_eval without -c skips every query absent from the run

    dcg, judged_count = _sums_below_cutoffs(judged_q, judged_rank, judged_discounted, ks, n_qrels_q)
    idcg, _ = _sums_below_cutoffs(ideal_q, ideal_rank, ideal_discounted, ks, n_qrels_q)
    shown = np.minimum(num_ret[:, None], [np.inf if k == "all" else k for k in ks])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ndcg = np.where(idcg > 0, dcg / idcg, 0.0)
        if gain == "exponential":  # back from the per-query scale: exact (a power of two) unless it overflows
            dcg, idcg = dcg * np.exp2(scale)[:, None], idcg * np.exp2(scale)[:, None]
        judged = np.where(shown > 0, judged_count / shown, np.nan)
    columns = {"dcg": dcg, "idcg": idcg, "ndcg": np.where(averaged[:, None], ndcg, np.nan), "judged": judged}

    counts = QueryCounts(
        in_run=len(run_qids), in_qrels=n_qrels_q, in_both=int(in_run.sum()),
        missing=int((~in_run & has_relevant).sum()), no_relevant=int((~has_relevant).sum()),
        run_only=int(run_only.sum()), averaged=int(averaged.sum()),
    )
    return Evaluation(
        qids=np.asarray(qrels_qids.to_pylist(), dtype=object), num_ret=num_ret, num_rel=num_rel, in_run=in_run,
        averaged=averaged, **columns, counts=counts, cutoffs=ks, gain=gain, missing=missing,
        no_relevant=no_relevant, tied_lines=ranks.tied_lines,
    )


def _sums_below_cutoffs(
    query: np.ndarray, rank: np.ndarray, values: np.ndarray, ks: tuple[Cutoff, ...], n_queries: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per query (rows) and cut-off (columns): sum of `values` and count of entries with rank < k.

    Sums run in array order, as np.bincount adds. The largest cut-off goes first and each next
    one keeps a subset of the entries, so small cut-offs cost little.
    """
    sums, counts = [None] * len(ks), [None] * len(ks)
    for column in reversed(range(len(ks))):
        if ks[column] != "all":
            keep = rank < ks[column]
            if not keep.all():
                query, rank, values = query[keep], rank[keep], values[keep]
        sums[column] = np.bincount(query, weights=values, minlength=n_queries)
        counts[column] = np.bincount(query, minlength=n_queries)
    # float64 even without any entry (bincount of no weights gives int64)
    return np.column_stack(sums).astype(np.float64, copy=False), np.column_stack(counts).astype(np.int64, copy=False)


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
    """(run row, qrels label) of every run line that has a judgement.

    Lines whose (query, docid) keys agree are candidates; only those with equal query and docid
    are kept, so a key collision can never attach a wrong label.
    """
    rows, qrows = candidate_matches(run_pairs, qrels_pairs)
    same = run_to_code[run_codes_local[rows]] == qrels_codes[qrows]
    same &= as_numpy(pc.equal(run["docid"].take(from_numpy(rows)), qrels["docid"].take(from_numpy(qrows))))
    return rows[same], column_numpy(qrels, "rel")[qrows[same]]
