"""Judgment sets side by side: the labels of the pairs both judge, the pairs one alone judges, filling.

A set is a checked Qrels (any format read_qrels takes). `shared_labels` aligns two sets on their
(qid, docid) pairs; `check_comparable_sets` refuses, as an InputError naming the other set's file (exit
2 on the command line), a set that shares no query or no pair with the reference; `fill_unjudged`
makes the reference with its holes filled from another set (umbrela's use).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.reading import Qrels
from ndcg_report.inputs.tables import load_qrels

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, eq=False)
class SharedLabels:
    """Two sets on their shared pairs: qid, docid and both labels of each pair (in qid, docid order),
    how many pairs each set alone judges, and the queries of each set."""

    qids: np.ndarray
    docids: np.ndarray
    reference: np.ndarray
    other: np.ndarray
    only_reference: int
    only_other: int
    reference_queries: frozenset[str]
    other_queries: frozenset[str]

    @property
    def shared_queries(self) -> frozenset[str]:
        return self.reference_queries & self.other_queries


def judgments_frame(qrels: Qrels) -> pd.DataFrame:
    """qid, docid (strings) and rel (float64) of every judgement."""
    import pandas as pd  # here: a build's command checks its judgment sets' names without pandas

    table = qrels.table
    return pd.DataFrame({
        "qid": pc.cast(table["qid"], pa.string()).to_numpy(zero_copy_only=False).astype(object),
        "docid": table["docid"].to_numpy(zero_copy_only=False).astype(object),
        "rel": table["rel"].to_numpy(zero_copy_only=False).astype(np.float64),
    })


def shared_labels(reference: Qrels, other: Qrels) -> SharedLabels:
    """The two sets aligned on the (qid, docid) pairs both judge, sorted by qid then docid."""
    left, right = judgments_frame(reference), judgments_frame(other)
    merged = left.merge(right, on=["qid", "docid"], how="inner", suffixes=("_reference", "_other"))
    merged = merged.sort_values(["qid", "docid"], kind="stable", ignore_index=True)
    return SharedLabels(
        qids=merged["qid"].to_numpy(dtype=object), docids=merged["docid"].to_numpy(dtype=object),
        reference=merged["rel_reference"].to_numpy(np.float64), other=merged["rel_other"].to_numpy(np.float64),
        only_reference=len(left) - len(merged), only_other=len(right) - len(merged),
        reference_queries=frozenset(left["qid"].unique().tolist()), other_queries=frozenset(right["qid"].unique().tolist()),
    )


def check_comparable_sets(sets: Mapping[str, Qrels], reference: str) -> dict[str, SharedLabels]:
    """Each other set aligned with the reference (shared_labels), in the order given; InputError naming
    the other set's file if it shares no query, or no judged (qid, docid) pair, with the reference."""
    if reference not in sets:
        raise ParameterError(f"the reference set {reference!r} is not among the sets {', '.join(map(repr, sets))}")
    if len(sets) < 2:
        raise ParameterError("give at least two judgment sets to compare: the reference and another")
    aligned = {}
    for name, qrels in sets.items():
        if name == reference:
            continue
        shared = shared_labels(sets[reference], qrels)
        where, base = _where(qrels, name), _where(sets[reference], reference)
        if not shared.shared_queries:
            raise InputError(where, None, f"judgment set {name!r} shares no query with the reference {base}",
                             "compare judgments of the same topics (check the qids)")
        if len(shared.reference) == 0:
            raise InputError(where, None, f"judgment set {name!r} judges no (qid, docid) pair that the reference "
                             f"{base} judges ({len(shared.shared_queries):,} queries in common)",
                             "compare judgments of the same documents (check the docids)")
        aligned[name] = shared
    return aligned


def fill_unjudged(reference: Qrels, other: Qrels) -> tuple[Qrels, int]:
    """(the reference with the other's labels added for the pairs it lacks, how many were added).

    Only in the queries the reference judges: a query it lacks stays out, so the filled set averages
    the same queries as the reference. The reference's labels are kept wherever it has one.
    """
    import pandas as pd

    left, right = judgments_frame(reference), judgments_frame(other)
    right = right[right["qid"].isin(frozenset(left["qid"].unique().tolist()))]
    known = pd.MultiIndex.from_frame(left[["qid", "docid"]])
    added = right[~pd.MultiIndex.from_frame(right[["qid", "docid"]]).isin(known)]
    table = pa.table({"qid": pa.array(pd.concat([left["qid"], added["qid"]]).tolist(), pa.string()),
                      "docid": pa.array(pd.concat([left["docid"], added["docid"]]).tolist(), pa.string()),
                      "rel": pa.array(np.concatenate([left["rel"].to_numpy(), added["rel"].to_numpy()]), pa.float64())})
    filled = load_qrels(table)
    return Qrels(path=f"{reference.path or 'the reference'} filled from {other.path or 'the other set'}",
                 table=filled.table, pairs=filled.pairs), len(added)


class JudgmentSets(dict):
    """{name: Qrels} of several judgment sets, the reference first, with `filled`: {set: (filled from, pairs)}."""

    def __init__(self, sets: Mapping[str, Qrels] | None = None, filled: Mapping[str, tuple[str, int]] | None = None):
        super().__init__(sets or {})
        self.filled: dict[str, tuple[str, int]] = dict(filled or {})


def named_judgment_sets(qrels: object, fill_from: str = "") -> JudgmentSets:
    """The judgment sets of compare_runs' `qrels` when it names several ({name: judgements}), each read
    and checked to share queries and pairs with the reference (the first), with fill_from's filled set
    added; empty for one set of judgements (a path, a table, or a pytrec_eval dict {qid: {docid: rel}})."""
    from ndcg_report.analysis.systems import check_name

    if not is_named_sets(qrels):
        if fill_from:
            raise ParameterError("fill_unjudged_from needs several judgment sets: give qrels as {name: judgements}")
        return JudgmentSets()
    sets = {check_name(name, "qrels"): load_qrels(value) for name, value in qrels.items()}
    sets, filled = with_filled_set(sets, fill_from)
    check_comparable_sets(sets, next(iter(sets)))
    return JudgmentSets(sets, filled)


def is_named_sets(qrels: object) -> bool:
    """Whether compare_runs' `qrels` names several judgment sets ({name: judgements}), not one set (a
    path, a table, or a pytrec_eval dict {qid: {docid: rel}})."""
    return isinstance(qrels, Mapping) and bool(qrels) and all(
        isinstance(name, str) and not _one_querys_labels(value) for name, value in qrels.items())


def _one_querys_labels(value: object) -> bool:
    """Whether a mapping's value is one query's {docid: label} (a pytrec_eval qrels dict), not a judgment set."""
    return isinstance(value, Mapping) and all(isinstance(label, (int, float, np.number)) and not isinstance(label, bool)
                                              for label in value.values())


def with_filled_set(sets: dict[str, Qrels], fill_from: str) -> tuple[dict[str, Qrels], dict[str, tuple[str, int]]]:
    """(sets with one more, `REFERENCE+FILL_FROM`: the reference (the first set) filled from the set named
    fill_from (fill_unjudged), {that set's name: (fill_from, pairs filled)}); sets as they are for fill_from
    "". ParameterError unless fill_from names a set other than the reference."""
    if not fill_from:
        return sets, {}
    reference = next(iter(sets))
    if fill_from not in sets or fill_from == reference:
        others = ", ".join(repr(name) for name in sets if name != reference) or "none given"
        raise ParameterError(f"--fill-unjudged-from {fill_from!r}: name a judgment set other than the reference "
                             f"{reference!r}: {others}")
    name = unique_set_name(f"{reference}+{fill_from}", sets)
    filled, count = fill_unjudged(sets[reference], sets[fill_from])
    return {**sets, name: filled}, {name: (fill_from, count)}


def unique_set_name(name: str, taken: Mapping[str, object]) -> str:
    """name, or name-2, name-3, ... : the first not in taken (ignoring case)."""
    used = {key.casefold() for key in taken}
    candidate, number = name, 1
    while candidate.casefold() in used:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


def _where(qrels: Qrels, name: str) -> str:
    """What names a set in an error: its file, else its name."""
    return qrels.path or f"judgment set {name!r}"


def on_queries(qrels: Qrels, qids: frozenset[str]) -> Qrels:
    """The judgements of the given queries only (the same path): a set restricted to the queries every run has."""
    kept = qrels.table.filter(pc.is_in(pc.cast(qrels.table["qid"], pa.string()), pa.array(sorted(qids), pa.string())))
    loaded = load_qrels(pa.table({"qid": pc.cast(kept["qid"], pa.string()), "docid": kept["docid"], "rel": kept["rel"]}))
    return Qrels(path=qrels.path, table=loaded.table, pairs=loaded.pairs)
