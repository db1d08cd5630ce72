"""What a measure family is: its row of names, cut-offs and kind, and how it is computed.

Each family module (graded/ndcg.py, binary/precision_recall.py, ...) declares a Computation per
family: its Family row, the function that makes its per-query column from one pass's shared arrays
(pass_arrays.PassArrays) and the sums below cut-offs that function reads. registry.py gathers them
into the one table that the name parsing, the presets, `--format trec` and evaluate read. A family's
`all` row is made as its Family.summary says (summarise): the mean over the averaged queries unless
trec_eval makes it otherwise (a geometric mean: average; a sum).

The command line's parser reads the table (the presets' help), and must start without numpy: a
family module imports numpy in the functions that compute, not at its top.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ndcg_report.errors import ParameterError

if TYPE_CHECKING:
    import numpy as np

    from ndcg_report.core.measures.pass_arrays import PassArrays

TREC_EVAL_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default for P, recall, ndcg_cut, map_cut

# graded: the labels as gains, linear or exponential (--gain), with a DCG (nDCG); binary: a label >= the
# relevance level is relevant; count: a number of documents or queries, printed whole; gain: the labels
# as trec_eval's linear gains whatever --gain (G, ndcg_rel, rbp); unjudged: the unjudged documents
# (unj, rbp_resid), whatever is relevant
Kind = Literal["graded", "binary", "count", "gain", "unjudged"]

# How trec_eval makes a family's `all` row from its per-query values (its calc_avg): the mean over the
# averaged queries; their geometric mean, exp(mean(log(max(v, MIN_GEO_MEAN)))) (gm_map, gm_bpref); their
# sum (the counts); or for num_rel, with -c (missing="zero"), the judgements with a label > 0 over every
# qrels query, whatever the relevance level (m_num_rel.c; without -c the sum)
Summary = Literal["mean", "geometric_mean", "sum", "positive_judgements"]
MIN_GEO_MEAN = 0.00001  # trec_eval.h: a value below it counts as it in a geometric mean


@dataclass(frozen=True)
class Family:
    """A measure family: names, cut-offs and what it computes (one row of FAMILIES)."""

    name: str  # ir_measures' name, the key of Measure.measure
    kind: Kind  # what relevant means to it, and how it prints (see Kind)
    cutoff: Literal["optional", "required", "none"]
    trec: str | None  # trec_eval's name without a cut-off ('map'), None if it has none
    trec_cut: str | None  # trec_eval's name of the family with cut-offs ('map_cut'), None if it has none
    trec_eval_has: bool  # False: trec_eval does not compute it (RR@K); its trec name is ours
    trec_defaults: tuple[float, ...]  # the cut-offs trec_eval uses for the bare family name
    aliases: tuple[str, ...]  # other names accepted (case does not matter)
    definition: str  # one line: what a query's value is
    summary: Summary = "mean"  # how its `all` row is made (see Summary)
    per_query: bool = True  # False: trec_eval prints its `all` row only (gm_map, gm_bpref, num_q)
    fractional: bool = False  # its k is a number, not a rank (IPrec's recall level): printed `_0.10`, never -k

    def trec_base(self, with_cutoff: bool, gain: str = "linear") -> str:
        name = self.trec_cut if with_cutoff else self.trec
        if name is None:
            raise ParameterError(f"{self.name} {'takes no' if with_cutoff else 'needs a'} cut-off")
        if self.kind == "graded" and gain == "exponential":  # not trec_eval's ndcg: a name of its own
            return name.replace("ndcg", "ndcg_exp", 1)
        return name


@dataclass(frozen=True)
class Computation:
    """One family of the table: its row, and how its per-query values come from the shared arrays of a pass."""

    family: Family
    value: Callable[[PassArrays, float | None], np.ndarray]  # the value of every query at cut-off k (None: no cut-off)
    sums: tuple[str, ...] = ()  # the sums below cut-offs `value` reads (pass_arrays.SUMS), requested before the pass
    dcg: Callable[[PassArrays, int | None], np.ndarray] | None = None  # graded: the run's DCG@k (Evaluation.dcg)
    judged_only_of: str | None = None  # the family whose judged_only=True twin this is (nDCG_judged: nDCG)


def average(family: Family, values: np.ndarray) -> float:
    """The mean of a family's per-query values as trec_eval averages them: their geometric mean for
    gm_map and gm_bpref (a value below MIN_GEO_MEAN counted as it), else the arithmetic mean; NaN
    for no value."""
    import numpy as np

    if not len(values):
        return float("nan")
    if family.summary == "geometric_mean":
        return float(np.exp(np.log(np.maximum(values, MIN_GEO_MEAN)).mean()))
    return float(values.mean())


def summarise(family: Family, values: np.ndarray, averaged: np.ndarray, positive: np.ndarray, missing: str) -> float:
    """A family's `all` value as trec_eval makes it (family.summary) from its per-query `values`, of
    which the `averaged` ones enter; `positive` per query: the judgements with a label > 0 (num_rel's
    summary with missing="zero", trec_eval's -c). NaN for a mean of no query, 0 for a sum of none."""
    if family.summary == "positive_judgements" and missing == "zero":
        return float(positive[averaged].sum())
    if family.summary in ("sum", "positive_judgements"):
        return float(values[averaged].sum())
    return average(family, values[averaged])
