"""What a measure family is: its row of names, cut-offs and kind, how it is computed and averaged.

Each family module (graded/ndcg.py, binary/precision_recall.py, ...) declares a Computation per
family: its Family row, the function that makes its per-query column from one pass's shared arrays
(pass_arrays.PassArrays) and the sums below cut-offs that function reads. registry.py gathers them
into the one table that the name parsing, the presets, `--format trec` and evaluate read. The
Family owns its averaging, as trec_eval's calc_avg does: which queries have something relevant to
it (`has_relevant`, for the no_relevant policy), its mean (`mean`: arithmetic, or geometric for
gm_map and gm_bpref) and its `all` row (`overall`: the mean, or a count's sum); every mean of the
package calls them.

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

# What a query needs to have something relevant to a family of each kind (a query without it is what
# the no_relevant policy scores 0 or leaves out): a label > 0 (positive), a label >= the relevance level
# (level); a count or the unjudged share does not depend on what is relevant (any: every query has it)
Relevant = Literal["positive", "level", "any"]
RELEVANT_OF_KIND: dict[str, Relevant] = {"graded": "positive", "gain": "positive", "binary": "level", "count": "any",
                                         "unjudged": "any"}


@dataclass(frozen=True, kw_only=True)
class Family:
    """A measure family: names, cut-offs, what it computes and how it is averaged (one row of FAMILIES)."""

    name: str  # ir_measures' name, the key of Measure.measure
    kind: Kind  # what relevant means to it, and how it prints (see Kind)
    definition: str  # one line: what a query's value is (eval --list and docs/measures.md print it)
    cutoff: Literal["optional", "required", "none"] = "none"
    trec: str | None = None  # trec_eval's name without a cut-off ('map'), None if it has none
    trec_cut: str | None = None  # trec_eval's name of the family with cut-offs ('map_cut'), None if it has none
    trec_eval_has: bool = True  # False: trec_eval does not compute it (RR@K); its trec name is ours
    trec_defaults: tuple[float, ...] = ()  # the cut-offs trec_eval uses for the bare family name
    aliases: tuple[str, ...] = ()  # other names accepted (case does not matter)
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

    @property
    def relevant(self) -> Relevant:
        """What a query needs to have something relevant to this family (RELEVANT_OF_KIND)."""
        return RELEVANT_OF_KIND[self.kind]

    def has_relevant(self, num_rel: np.ndarray, num_rel_graded: np.ndarray) -> np.ndarray:
        """Per query, whether it has something relevant to this family, from its judgements with a label
        >= the relevance level (num_rel) and with a label > 0 (num_rel_graded)."""
        import numpy as np

        if self.relevant == "positive":
            return num_rel_graded > 0
        if self.relevant == "level":
            return num_rel > 0
        return np.ones(len(num_rel), dtype=bool)

    def on_mean_scale(self, values: np.ndarray) -> np.ndarray:
        """The values on the scale whose arithmetic mean is this family's mean (from_mean_scale takes a mean
        back): log(max(v, MIN_GEO_MEAN)) for a geometric mean, as trec_eval sums them; else as they are."""
        import numpy as np

        if self.summary == "geometric_mean":
            return np.log(np.maximum(values, MIN_GEO_MEAN))
        return np.asarray(values, dtype=np.float64)

    def from_mean_scale(self, value: float) -> float:
        """A mean (or a bound of its interval) on the scale of on_mean_scale, back on the values' scale."""
        import numpy as np

        return float(np.exp(value)) if self.summary == "geometric_mean" else float(value)

    def mean(self, values: np.ndarray, averaged: np.ndarray | None = None) -> float:
        """The mean of the per-query values (those `averaged`, if given) as trec_eval averages this family:
        their geometric mean for gm_map and gm_bpref, else the arithmetic mean (a count's too); NaN for none."""
        values = values if averaged is None else values[averaged]
        if not len(values):
            return float("nan")
        return self.from_mean_scale(self.on_mean_scale(values).mean())

    def overall(self, values: np.ndarray, averaged: np.ndarray, positive: np.ndarray, missing: str) -> float:
        """This family's `all` value as trec_eval makes it (summary) from its per-query `values`, of which the
        `averaged` ones enter; `positive` per query: the judgements with a label > 0 (num_rel's `all` with
        missing="zero", trec_eval's -c). NaN for a mean of no query, 0 for a sum of none."""
        if self.summary == "positive_judgements" and missing == "zero":
            return float(positive[averaged].sum())
        if self.summary in ("sum", "positive_judgements"):
            return float(values[averaged].sum())
        return self.mean(values, averaged)


@dataclass(frozen=True)
class Computation:
    """One family of the table: its row, and how its per-query values come from the shared arrays of a pass."""

    family: Family
    value: Callable[[PassArrays, float | None], np.ndarray]  # the value of every query at cut-off k (None: no cut-off)
    sums: tuple[str, ...] = ()  # the sums below cut-offs `value` reads (pass_arrays.SUMS), requested before the pass
    dcg: Callable[[PassArrays, int | None], np.ndarray] | None = None  # graded: the run's DCG@k (Evaluation.dcg)
    judged_only_of: str | None = None  # the family whose judged_only=True twin this is (nDCG_judged: nDCG)
