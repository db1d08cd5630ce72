"""Success at cut-off k: 1 if a relevant document is in the top k, else 0.

trec_eval 10's `success` (m_success.c), defaults 1, 5 and 10 for a bare `success`; a document is
relevant when its label >= the relevance level. A query with nothing judged relevant has 0
(`no_relevant="skip"` leaves it out of the mean); a cut-off past the end of the run looks at what
was retrieved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ndcg_report.core.measures.family import Computation, Family

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays


def success_at(arrays: PassArrays, k: int | None) -> np.ndarray:
    """Success@k of every query, 1.0 or 0.0."""
    return (arrays.below("relevant_count", k) > 0).astype(float)


SUCCESS = Computation(
    Family(name="Success", kind="binary", cutoff="required", trec_cut="success", trec_defaults=(1, 5, 10),
           aliases=("success",),
           definition="1 if a relevant document is in the top k, else 0"),
    success_at, sums=("relevant_count",),
)
