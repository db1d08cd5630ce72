"""NDCG@k per query and over queries, exactly as trec_eval's ndcg_cut, all cut-offs in one pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ndcg_report.errors import ParameterError
from ndcg_report.ranking import rank_within_query

Cutoff = int | Literal["all"]
DEFAULT_CUTOFFS: tuple[Cutoff, ...] = (1, 3, 5, 10, 20, 100, 1000)
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


@dataclass(frozen=True)
class Evaluation:
    """Per-query rows (one per qrels query and cut-off) and the summary over averaged queries.

    per_query columns: qid, k, num_ret, num_rel, dcg, idcg, ndcg, judged, in_run, averaged.
    ndcg is NaN for queries left out of the mean. summary: one row per k with n, mean, median,
    std (sample, ddof=1) of ndcg and mean judged@k.
    """

    per_query: pd.DataFrame
    summary: pd.DataFrame
    counts: QueryCounts
    cutoffs: tuple[Cutoff, ...]
    gain: str
    missing: str
    no_relevant: str
    tied_lines: int

    def ndcg_table(self) -> pd.DataFrame:
        """NDCG of the averaged queries: one row per qid, one column per cut-off label."""
        rows = self.per_query[self.per_query["averaged"]]
        table = rows.pivot(index="qid", columns="k", values="ndcg")
        return table[[cutoff_label(k) for k in self.cutoffs]]


def cutoff_label(k: Cutoff) -> str:
    """`10` -> '10', `all` -> 'all'."""
    return str(k)


def parse_cutoffs(value: str | list | tuple) -> tuple[Cutoff, ...]:
    """Parse '1,3,10,all' (or a list) into sorted unique cut-offs, `all` last; k must be >= 1."""
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
        cutoffs.add(k)
    if not cutoffs and not has_all:
        raise ParameterError("give at least one cut-off, e.g. -k 1,3,5,10")
    return tuple(sorted(cutoffs)) + (("all",) if has_all else ())


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """Return value if it is one of choices, else raise ParameterError naming them."""
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def gains_of(labels: np.ndarray, gain: str) -> np.ndarray:
    """Gain of each label: linear `rel`, exponential `2**rel - 1`; labels <= 0 give 0."""
    positive = np.where(labels > 0, labels, 0.0)
    if gain == "linear":
        return positive
    return np.exp2(positive) - 1.0


def evaluate(
    run: pa.Table | pd.DataFrame,
    qrels: pa.Table | pd.DataFrame,
    cutoffs: str | list | tuple = DEFAULT_CUTOFFS,
    gain: str = "linear",
    missing: str = "zero",
    no_relevant: str = "skip",
) -> Evaluation:
    """NDCG@k of `run` (qid, docid, score) against `qrels` (qid, docid, rel) for every cut-off."""
    ks = parse_cutoffs(cutoffs)
    check_choice("gain", gain, GAINS)
    check_choice("missing", missing, MISSING_POLICIES)
    check_choice("no_relevant", no_relevant, NO_RELEVANT_POLICIES)
    run = _as_table(run, "score")
    qrels = _as_table(qrels, "rel")

    qrels_qids, qrels_codes = _qid_codes(qrels)
    run_qids, run_codes_local = _qid_codes(run)
    n_qrels_q = len(qrels_qids)
    run_to_code = pd.Index(qrels_qids).get_indexer(run_qids)
    run_only = run_to_code < 0
    run_to_code[run_only] = n_qrels_q + np.arange(int(run_only.sum()))
    run_codes = run_to_code.astype(np.int32)[run_codes_local]
    n_codes = n_qrels_q + int(run_only.sum())

    ranks = rank_within_query(run_codes, run["score"].to_numpy(), run["docid"].combine_chunks())
    num_ret = np.bincount(run_codes, minlength=n_codes)[:n_qrels_q]

    judged_rows, judged_labels = _judged_run_lines(run_codes, run, qrels_codes, qrels)
    judged_q = run_codes[judged_rows]
    judged_rank = ranks.rank[judged_rows]
    judged_discounted = gains_of(judged_labels, gain) / np.log2(judged_rank + 2.0)

    labels = qrels["rel"].to_numpy()
    ideal_gain = gains_of(labels, gain)
    ideal_order = np.lexsort((-ideal_gain, qrels_codes))
    ideal_q = qrels_codes[ideal_order]
    ideal_rank = np.arange(len(ideal_q)) - np.searchsorted(ideal_q, ideal_q, side="left")
    ideal_discounted = ideal_gain[ideal_order] / np.log2(ideal_rank + 2.0)
    num_rel = np.bincount(qrels_codes, weights=labels > 0, minlength=n_qrels_q).astype(np.int64)

    in_run = num_ret > 0
    has_relevant = np.bincount(qrels_codes, weights=ideal_gain > 0, minlength=n_qrels_q) > 0
    averaged = np.ones(n_qrels_q, dtype=bool)
    if missing == "skip":
        averaged &= in_run | ~has_relevant
    if no_relevant == "skip":
        averaged &= has_relevant
    if missing == "skip" and no_relevant == "zero":
        averaged &= in_run | has_relevant  # trec_eval without -c skips every query absent from the run

    frames = []
    for k in ks:
        limit = np.inf if k == "all" else k
        dcg = np.bincount(judged_q, weights=judged_discounted * (judged_rank < limit), minlength=n_qrels_q)
        idcg = np.bincount(ideal_q, weights=ideal_discounted * (ideal_rank < limit), minlength=n_qrels_q)
        judged_count = np.bincount(judged_q, weights=judged_rank < limit, minlength=n_qrels_q)
        shown = np.minimum(num_ret, limit)
        with np.errstate(invalid="ignore", divide="ignore"):
            ndcg = np.where(idcg > 0, dcg / idcg, 0.0)
            judged = np.where(shown > 0, judged_count / shown, np.nan)
        frames.append(
            pd.DataFrame({
                "qid": qrels_qids, "k": cutoff_label(k), "num_ret": num_ret, "num_rel": num_rel,
                "dcg": dcg, "idcg": idcg, "ndcg": np.where(averaged, ndcg, np.nan), "judged": judged,
                "in_run": in_run, "averaged": averaged,
            })
        )
    per_query = pd.concat(frames, ignore_index=True)
    per_query["qid"] = per_query["qid"].astype(str)
    per_query = per_query.iloc[_qid_major_order(qrels_qids, len(ks))].reset_index(drop=True)

    counts = QueryCounts(
        in_run=len(run_qids), in_qrels=n_qrels_q, in_both=int(in_run.sum()),
        missing=int((~in_run & has_relevant).sum()), no_relevant=int((~has_relevant).sum()),
        run_only=int(run_only.sum()), averaged=int(averaged.sum()),
    )
    return Evaluation(
        per_query=per_query, summary=summarise(per_query, ks), counts=counts, cutoffs=ks,
        gain=gain, missing=missing, no_relevant=no_relevant, tied_lines=ranks.tied_lines,
    )


def summarise(per_query: pd.DataFrame, cutoffs: tuple[Cutoff, ...]) -> pd.DataFrame:
    """Mean, median, sample std of NDCG over averaged queries, and mean judged@k, per cut-off."""
    rows = []
    for k in cutoffs:
        label = cutoff_label(k)
        at_k = per_query[per_query["k"] == label]
        values = at_k.loc[at_k["averaged"], "ndcg"].to_numpy()
        judged = at_k.loc[at_k["averaged"], "judged"].to_numpy()
        rows.append({
            "k": label, "n": len(values),
            "mean": float(values.mean()) if len(values) else np.nan,
            "median": float(np.median(values)) if len(values) else np.nan,
            "std": float(values.std(ddof=1)) if len(values) > 1 else np.nan,
            "judged": float(np.nanmean(judged)) if np.isfinite(judged).any() else np.nan,
        })
    return pd.DataFrame(rows).set_index("k")


def _as_table(data: pa.Table | pd.DataFrame, value_column: str) -> pa.Table:
    """Accept a pyarrow Table or a DataFrame with qid, docid and the value column."""
    if isinstance(data, pd.DataFrame):
        data = pa.table({
            "qid": pa.array(data["qid"].astype(str).to_numpy(), pa.string()),
            "docid": pa.array(data["docid"].astype(str).to_numpy(), pa.string()),
            value_column: pa.array(data[value_column].to_numpy(dtype=np.float64), pa.float64()),
        })
    missing_columns = {"qid", "docid", value_column} - set(data.column_names)
    if missing_columns:
        raise ParameterError(f"table lacks columns {sorted(missing_columns)}")
    return data


def _qid_codes(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(unique qids as a string array, code of each row into it)."""
    column = table["qid"].combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    return (
        np.asarray(column.dictionary.to_pylist(), dtype=object),
        column.indices.to_numpy(zero_copy_only=False),
    )


def _judged_run_lines(
    run_codes: np.ndarray, run: pa.Table, qrels_codes: np.ndarray, qrels: pa.Table
) -> tuple[np.ndarray, np.ndarray]:
    """(run row, qrels label) of every run line that has a judgement, in run row order."""
    left = pa.table({"q": run_codes, "docid": run["docid"].combine_chunks(), "row": np.arange(len(run_codes), dtype=np.int32)})
    right = pa.table({"q": qrels_codes.astype(np.int32), "docid": qrels["docid"].combine_chunks(), "rel": qrels["rel"].combine_chunks()})
    joined = left.join(right, keys=["q", "docid"], join_type="inner", use_threads=True)
    rows = joined["row"].to_numpy()
    order = np.argsort(rows, kind="stable")
    return rows[order], joined["rel"].to_numpy()[order]


def _qid_major_order(qids: np.ndarray, n_cutoffs: int) -> np.ndarray:
    """Row order of k-major stacked frames that lists qids in byte order (trec_eval's), then k."""
    by_bytes = np.array(sorted(range(len(qids)), key=lambda i: qids[i].encode("utf-8")), dtype=np.int64)
    return (by_bytes[:, None] + len(qids) * np.arange(n_cutoffs)[None, :]).ravel()
