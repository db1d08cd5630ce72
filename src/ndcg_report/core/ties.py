"""Where tied scores can change a measure: each query in the worst and the best order of its ties.

Each query is evaluated with its tied lines in the worst and in the best order (relevance ascending
and descending within a tie), as McSherry and Najork's tie-aware measures bound them. trec_eval's
order (docid descending) lies between the two.

Only a query with a tie that holds a relevant line (label > 0, relevant to nDCG and to the binary
measures at any level >= it) can change: the rest are taken
from trec_eval's order as they are, and the two orders are evaluated on those queries alone, so
a run of millions of lines with a few ties costs little more than finding its ties.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.evaluation_pass import evaluate_pass
from ndcg_report.core.matching import qid_codes
from ndcg_report.core.ranking import is_presorted, tie_members
from ndcg_report.inputs.columns import as_numpy, column_numpy, from_numpy
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run


@dataclass(frozen=True)
class TieRange:
    """Per measure (index: measure labels, 'nDCG@10'): the mean with ties in the worst and the best
    order, and how many averaged queries have a value that depends on the order of their tied lines."""

    worst: pd.Series
    best: pd.Series
    queries: pd.Series

    @property
    def affected(self) -> list[str]:
        """The measures (labels) at which some query's value depends on how ties are broken."""
        return [k for k, count in self.queries.items() if count > 0]


def tie_range(run: RunLike, qrels: QrelsLike, evaluation: Evaluation) -> TieRange:
    """Every measure of `evaluation` (the run evaluated against these qrels, in trec_eval's order) with
    the run's ties broken against and in favour of relevance (see the module)."""
    run_read, qrels_read = load_run(run), load_qrels(qrels)
    options = dict(gain=evaluation.gain, missing=evaluation.missing, no_relevant=evaluation.no_relevant,
                   measures=evaluation.measures, rel_level=evaluation.rel_level, identical_ids=evaluation.identical_ids,
                   max_retrieved=evaluation.max_retrieved)
    orders = {False: evaluation.values.copy(), True: evaluation.values.copy()}  # relevant last (worst), first (best)
    movable = _queries_with_relevant_ties(run_read.table, qrels_read.table)
    if movable.num_rows:
        for relevant_first, values in orders.items():
            part = evaluate_pass(_ties_ordered(movable, qrels_read.table, relevant_first), qrels_read, **options)
            values[part.in_run] = part.values[part.in_run]  # the same qrels: the same queries, in the same order
    worst, best = replace(evaluation, values=orders[False]), replace(evaluation, values=orders[True])
    moved = (worst.values != best.values) & evaluation.averaged
    return TieRange(worst=_means(worst), best=_means(best),
                    queries=pd.Series(moved.sum(axis=0), index=evaluation.labels, name="queries"))


def _queries_with_relevant_ties(run: pa.Table, qrels: pa.Table) -> pa.Table:
    """The lines of the run's queries in which a line with label > 0 shares its score with another line."""
    _, codes = qid_codes(run)
    tied = np.flatnonzero(_tied_lines(codes, column_numpy(run, "score")))
    if len(tied) == 0:
        return run.slice(0, 0)
    rows = from_numpy(tied)
    lines = pa.table({"qid": run["qid"].take(rows).cast(pa.string()), "docid": run["docid"].take(rows), "row": rows})
    relevant = qrels.filter(pc.greater(qrels["rel"], 0.0))
    relevant = pa.table({"qid": relevant["qid"].cast(pa.string()), "docid": relevant["docid"]})
    matched = as_numpy(lines.join(relevant, keys=["qid", "docid"], join_type="inner")["row"].combine_chunks())
    return run.filter(pa.array(np.isin(codes, np.unique(codes[matched]))))


def _tied_lines(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Mask of the lines that share their query code and score with another line."""
    if not len(codes):
        return np.zeros(0, dtype=bool)
    boundary = codes[1:] != codes[:-1]
    if is_presorted(codes, scores, boundary):  # grouped by query in rank order, as runs are written
        return tie_members(~boundary & (scores[1:] == scores[:-1]))
    order = np.lexsort((scores, codes))
    tied = np.empty(len(codes), dtype=bool)
    tied[order] = tie_members((codes[order[1:]] == codes[order[:-1]]) & (scores[order[1:]] == scores[order[:-1]]))
    return tied


def _ties_ordered(run: pa.Table, qrels: pa.Table, relevant_first: bool) -> pa.Table:
    """The run with scores replaced by its rank order (query, score descending, then label ascending or
    descending, unjudged as 0): evaluate() then ranks tied lines by relevance instead of by docid."""
    keys = pa.table({"qid": run["qid"].cast(pa.string()), "docid": run["docid"], "row": pa.array(np.arange(len(run)))})
    judged = pa.table({"qid": qrels["qid"].cast(pa.string()), "docid": qrels["docid"], "rel": qrels["rel"]})
    joined = keys.join(judged, keys=["qid", "docid"], join_type="left outer")
    label = np.zeros(len(run))
    rows = joined["row"].to_numpy()
    label[rows] = np.maximum(pc.fill_null(joined["rel"], 0.0).to_numpy(), 0.0)
    order = pc.sort_indices(
        pa.table({"qid": keys["qid"], "score": run["score"], "label": pa.array(label)}),
        sort_keys=[("qid", "ascending"), ("score", "descending"),
                   ("label", "descending" if relevant_first else "ascending")],
    ).to_numpy()
    rank_score = np.empty(len(run))
    rank_score[order] = np.arange(len(run), 0, -1, dtype=np.float64)  # strictly decreasing along the order
    return run.set_column(run.schema.get_field_index("score"), "score", from_numpy(rank_score))


def _means(evaluation: Evaluation) -> pd.Series:
    return pd.Series([evaluation.mean(m) for m in evaluation.measures], index=evaluation.labels, name="mean")
