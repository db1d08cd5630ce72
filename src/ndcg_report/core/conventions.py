"""How the queries are averaged: the policies for missing, nothing-relevant and identical-id cases.

A query in the qrels that the run lacks (`missing`), a query with nothing relevant (`no_relevant`:
IDCG = 0 for nDCG, no label >= the relevance level for the binary measures) and a run line whose
docid equals its qid (`identical_ids`, BEIR's `ignore_identical_ids`) change a community's numbers.
Without a preset each is trec_eval's (`trec_eval -c`: missing and nothing-relevant queries score 0,
every line counts); a preset carries its community's and an option given overrides it
(core.presets.averaging resolves them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ndcg_report.errors import ParameterError

if TYPE_CHECKING:  # the parser reads the presets' policies, and must start without pyarrow or numpy
    from ndcg_report.core.evaluation import Evaluation
    from ndcg_report.core.measures.names import Measure
    from ndcg_report.inputs.reading import Run

MISSING_POLICIES = ("zero", "skip")
NO_RELEVANT_POLICIES = ("zero", "skip")
IDENTICAL_ID_POLICIES = ("keep", "drop")
POLICIES = {"missing": MISSING_POLICIES, "no_relevant": NO_RELEVANT_POLICIES, "identical_ids": IDENTICAL_ID_POLICIES}
TREC_EVAL = {"missing": "zero", "no_relevant": "zero", "identical_ids": "keep"}  # trec_eval -c: the default
MEANINGS = {
    ("missing", "zero"): "a query the run lacks scores 0",
    ("missing", "skip"): "a query the run lacks is left out of the mean",
    ("no_relevant", "zero"): "a query with nothing relevant scores 0",
    ("no_relevant", "skip"): "a query with nothing relevant is left out of the mean",
    ("identical_ids", "keep"): "every run line counts",
    ("identical_ids", "drop"): "a run line whose docid equals its qid is dropped",
}


def check_policy(name: str, value: str) -> str:
    """value if it is one of the choices of policy `name`, else ParameterError naming them."""
    choices = POLICIES[name]
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


@dataclass(frozen=True)
class Averaging:
    """The averaging policies in force, where they came from (a preset or trec_eval's default), and
    which of them an option set against that source (`given`)."""

    missing: str = "zero"
    no_relevant: str = "zero"
    identical_ids: str = "keep"
    source: str = ""  # the preset they come from; '' for trec_eval's defaults
    given: tuple[str, ...] = ()  # the policies an option set to other than the source's
    defaults: tuple[str, str, str] = ("zero", "zero", "keep")  # the source's missing, no_relevant, identical_ids

    def describe(self, name: str) -> str:
        """'zero (a query with nothing relevant scores 0; the preset trec-dl's)', or '... given; the
        preset beir uses skip' when an option overrode it."""
        value = getattr(self, name)
        origin = f"the preset {self.source}'s" if self.source else "trec_eval -c's"
        if name in self.given:
            default = dict(zip(POLICIES, self.defaults))[name]
            origin = f"given; {'the preset ' + self.source if self.source else 'trec_eval -c'} uses {default}"
        return f"{value} ({MEANINGS[name, value]}; {origin})"



def without_identical_ids(run: Run) -> tuple[Run, int]:
    """The run without its lines whose docid equals their qid, and how many there were (the run
    itself when none)."""
    import pyarrow.compute as pc

    from ndcg_report.inputs.columns import id_strings
    from ndcg_report.inputs.duplicates import index_pairs
    from ndcg_report.inputs.reading import Run

    same = pc.equal(id_strings(run.table["qid"]), run.table["docid"])
    dropped = pc.sum(same).as_py() or 0
    if not dropped:
        return run, 0
    table = run.table.filter(pc.invert(same)).combine_chunks()
    pairs, _ = index_pairs(table)  # a subset of distinct pairs stays distinct
    return Run(path=run.path, table=table, tag=run.tag, pairs=pairs), int(dropped)


def left_out_counts(evaluation: Evaluation, measures: list[Measure], missing: str, no_relevant: str) -> dict[str, int]:
    """How many judged queries these policies leave out of the means of `measures` that trec_eval -c
    counts as 0, by reason: 'missing' (the run lacks it), 'graded' (no positive label: nDCG and the
    gain measures), 'binary' (no label >= the relevance level), as each family says what is relevant
    to it (Family.relevant); reasons with none are not listed."""
    relevant = {measure.family.relevant for measure in measures} if no_relevant == "skip" else set()
    counts = {"missing": evaluation.counts.missing if missing == "skip" else 0,
              "graded": evaluation.counts.no_relevant if "positive" in relevant else 0,
              "binary": evaluation.counts.below_level if "level" in relevant else 0}
    return {reason: count for reason, count in counts.items() if count}
