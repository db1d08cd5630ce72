"""Where tied scores can change NDCG@k: each query evaluated with its tied lines in the worst and
in the best order (relevance ascending and descending within a tie), as McSherry and Najork's
tie-aware measures bound them. trec_eval's order (docid descending) lies between the two."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.metrics import Evaluation, evaluate
from ndcg_report.inputs.columns import from_numpy
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run


@dataclass(frozen=True)
class TieRange:
    """Per cut-off (index: k labels): mean NDCG@k with ties in the worst and the best order, and how
    many averaged queries have an NDCG@k that depends on the order of their tied lines."""

    worst: pd.Series
    best: pd.Series
    queries: pd.Series

    @property
    def affected(self) -> list[str]:
        """The cut-offs at which some query's NDCG@k depends on how ties are broken."""
        return [k for k, count in self.queries.items() if count > 0]


def tie_range(run: RunLike, qrels: QrelsLike, cutoffs: str | list | tuple, gain: str = "linear",
              missing: str = "zero", no_relevant: str = "skip") -> TieRange:
    """NDCG@k of `run` with its ties broken against and in favour of relevance (see the module)."""
    run_read, qrels_read = load_run(run), load_qrels(qrels)
    options = dict(cutoffs=cutoffs, gain=gain, missing=missing, no_relevant=no_relevant)
    worst, best = (evaluate(_ties_ordered(run_read.table, qrels_read.table, descending), qrels_read, **options)
                   for descending in (False, True))
    moved = (worst.ndcg != best.ndcg) & worst.averaged[:, None]
    return TieRange(worst=_means(worst), best=_means(best),
                    queries=pd.Series(moved.sum(axis=0), index=worst.labels, name="queries"))


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
    return pd.Series([evaluation.mean(k) for k in evaluation.cutoffs], index=evaluation.labels, name="mean")
