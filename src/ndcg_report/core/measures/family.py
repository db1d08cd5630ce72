"""What a measure family is: its row of names, cut-offs and kind, and how it is computed.

Each family module (ndcg.py, precision_recall.py, ...) declares a Computation per family: its
Family row, the function that makes its per-query column from one pass's shared arrays
(pass_arrays.PassArrays) and the sums below cut-offs that function reads. registry.py gathers them
into the one table that the name parsing, the presets, `--format trec` and evaluate read.

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

Kind = Literal["graded", "binary", "count"]


@dataclass(frozen=True)
class Family:
    """A measure family: names, cut-offs and what it computes (one row of FAMILIES)."""

    name: str  # ir_measures' name, the key of Measure.measure
    kind: Kind  # graded: uses the labels as gains; binary: label >= the relevance level; count: a number of documents
    cutoff: Literal["optional", "required", "none"]
    trec: str | None  # trec_eval's name without a cut-off ('map'), None if it has none
    trec_cut: str | None  # trec_eval's name of the family with cut-offs ('map_cut'), None if it has none
    trec_eval_has: bool  # False: trec_eval does not compute it (RR@K); its trec name is ours
    trec_defaults: tuple[int, ...]  # the cut-offs trec_eval uses for the bare family name
    aliases: tuple[str, ...]  # other names accepted (case does not matter)
    definition: str  # one line: what a query's value is

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
    value: Callable[[PassArrays, int | None], np.ndarray]  # the value of every query at cut-off k (None: no cut-off)
    sums: tuple[str, ...] = ()  # the sums below cut-offs `value` reads (pass_arrays.SUMS), requested before the pass
    dcg: Callable[[PassArrays, int | None], np.ndarray] | None = None  # graded: the run's DCG@k (Evaluation.dcg)
    judged_only_of: str | None = None  # the family whose judged_only=True twin this is (nDCG_judged: nDCG)
