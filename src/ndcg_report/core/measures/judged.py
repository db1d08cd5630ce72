"""Unjudged documents: nDCG of the run without them (nDCG_judged) and the share of the top k judged.

nDCG_judged (Sakai's nDCG', ir_measures' `nDCG(judged_only=True)`; not trec_eval's: its names
`ndcg_judged`, `ndcg_judged_cut` are ours) is nDCG of the condensed list: the run with its unjudged
documents dropped and the rest ranked again in the same order, against the same ideal as nDCG
(see ndcg.py for the gains, the discount and the edge cases: nothing relevant gives 0; a cut-off
past the condensed list sums what is there).

judged@k, reported beside every measure at its cut-off (`Evaluation.judged`, not a measure one
asks for): the share of the top min(k, num_ret) documents that have a qrels label, whatever the
label; NaN (no value) for a query that retrieved nothing.
"""

from __future__ import annotations

from ndcg_report.core.measures.family import Family

NDCG_JUDGED = Family("nDCG_judged", "graded", "optional", "ndcg_judged", "ndcg_judged_cut", False, (), ("ndcg'",),
                     "nDCG of the condensed list: the run without its unjudged documents, ranked again (Sakai's nDCG')")
