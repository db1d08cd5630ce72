"""What one evaluation pass shares among the families: judged lines, sums below cut-offs, IDCG.

core/evaluation_pass.py ranks the run once and builds one PassArrays; each family's `value` (its
Computation in registry.py) turns it into its per-query column. The sums at cut-offs that a family
reads (its `sums`, names from SUMS) are requested for every measure before the pass, so each is
made once over all the cut-offs asked for: the entries below the deepest cut-off are summed first
and each smaller one keeps a subset of them. Sums run in trec_eval's rank order, as np.bincount
adds in array order: equal gain vectors give bit-identical sums whatever the order of the file.
Everything else (gains, the ideal ranking, the relevant lines) is computed on first use and kept.

The run lines here are the judged ones only (an unjudged line adds nothing to any sum), sorted by
qrels query code, then by rank (0-based, trec_eval's order); queries are the qrels' queries. As
trec_eval reads a label, a negative one is a document in the pool but not judged (bpref, infAP and
unj tell it from a judged one; every other measure counts it as not relevant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from typing import TypeVar

import numpy as np

T = TypeVar("T")

# The sums below cut-offs a family can ask for: name -> (the entries summed, what is summed)
SUMS = {
    "judged_count": ("judged", "count"),  # judged run lines in the top k
    "dcg": ("judged", "sum"),  # the run's DCG@k: gain / log2(rank + 1) of the judged lines in the top k
    "condensed_dcg": ("condensed", "sum"),  # DCG@k of the judged lines ranked among themselves (unjudged dropped)
    "ideal_dcg": ("ideal", "sum"),  # IDCG@k: the query's judgements by gain, descending
    "relevant_count": ("relevant", "count"),  # relevant documents in the top k
    "precision_sum": ("relevant", "sum"),  # sum of the precision at each relevant document in the top k
    "pool_unjudged_count": ("pool_unjudged", "count"),  # lines with a negative label (in the pool, not judged)
}


def gains_of(labels: np.ndarray, gain: str, scale: np.ndarray | float = 0.0) -> np.ndarray:
    """Gain of each label: linear `rel`, exponential `2**rel - 1`; labels <= 0 give 0.

    Exponential gains are returned divided by 2**scale (a per-label exponent, the largest label of
    its query): `2**(rel - scale) - 2**-scale`, exactly the scaled gain for labels up to 53 and
    finite for any label, where `2**rel` alone overflows past 1023.
    """
    positive = np.where(labels > 0, labels, 0.0)
    if gain == "linear":
        return positive
    return np.where(labels > 0, np.exp2(positive - scale) - np.exp2(-np.asarray(scale, dtype=np.float64)), 0.0)


class PassArrays:
    """The judged run lines of one evaluation and what the families compute from them, each made once.

    Parameters
    ----------
    query, label, rank
        Per judged run line, sorted by query then rank: the qrels query code, the label, the rank.
    num_ret, num_rel
        Per qrels query: the lines retrieved; the judgements with label >= rel_level.
    qrels_labels, qrels_codes
        Per judgement: its label and its query code (for the ideal ranking).
    gain
        `linear` or `exponential`.
    rel_level
        A label at or above it is relevant to the binary measures.
    requested
        Per name of SUMS: the cut-offs (None: the whole ranking) at which it is read.
    """

    def __init__(self, query: np.ndarray, label: np.ndarray, rank: np.ndarray, num_ret: np.ndarray,
                 num_rel: np.ndarray, qrels_labels: np.ndarray, qrels_codes: np.ndarray, gain: str,
                 rel_level: float, requested: Mapping[str, Iterable[int | None]]):
        unknown = set(requested) - set(SUMS)
        if unknown:
            raise AssertionError(f"no such sums: {sorted(unknown)}")
        self.query, self.label, self.rank = query, label, rank
        self.num_ret, self.num_rel = num_ret, num_rel
        self.qrels_labels, self.qrels_codes = qrels_labels, qrels_codes
        self.gain, self.rel_level = gain, rel_level
        self.n_queries = len(num_ret)
        self.requested = {name: frozenset(ks) for name, ks in requested.items()}
        self._kept: dict[object, object] = {}

    # --- the sums below cut-offs -------------------------------------------------------------

    def below(self, name: str, k: int | None) -> np.ndarray:
        """Per query: the sum `name` (one of SUMS) over its entries in the top k (None: all of them).

        Its cut-offs must have been requested; the first read of any sum of a kind of entries
        makes all of that kind's sums, at all of their cut-offs, at once.
        """
        if k not in self.requested.get(name, ()):
            raise AssertionError(f"{name} at cut-off {k} was not requested before the pass")
        entries = SUMS[name][0]
        if entries not in self._kept:
            self._kept[entries] = self._sums_of(entries)
        return self._kept[entries][name][k]

    def _sums_of(self, entries: str) -> dict[str, dict[int | None, np.ndarray]]:
        """Every requested sum over one kind of entries, per name and cut-off."""
        wanted = {name: self.requested.get(name, frozenset()) for name, (kind, _) in SUMS.items() if kind == entries}
        summed = [name for name in wanted if SUMS[name][1] == "sum" and wanted[name]]
        if entries == "judged":
            query, rank = self.query, self.rank
            values = self.gains / np.log2(self.rank + 2.0) if summed else None
        elif entries == "condensed":
            query, rank = self.query, self.condensed_rank
            values = self.gains / np.log2(rank + 2.0)
        elif entries == "ideal":
            query, rank, values = self.ideal
        elif entries == "pool_unjudged":
            query, rank, values = self.query[self.label < 0], self.rank[self.label < 0], None
        else:
            query, rank, found = self.relevant
            values = (found + 1.0) / (rank + 1.0) if summed else None  # trec_eval's rel_so_far / (i + 1)
        sum_ks = frozenset().union(*(wanted[name] for name in summed))
        count_ks = frozenset().union(*(ks for name, ks in wanted.items() if SUMS[name][1] == "count"))
        sums, counts = _sums_below_cutoffs(query, rank, values, sum_ks, count_ks, self.n_queries)
        return {name: sums if SUMS[name][1] == "sum" else counts for name in wanted}

    # --- what the sums are made of -----------------------------------------------------------

    @cached_property
    def scale(self) -> np.ndarray:
        """Per query, the exponent exponential gains are divided by (2**scale): its largest label; 0 for linear.

        NDCG is the ratio of two sums with one scale, so it is exact however large the labels; DCG
        and IDCG are scaled back (unscaled) and overflow to inf only where 2**label itself does.
        """
        scale = np.zeros(self.n_queries)
        if self.gain == "exponential":
            np.maximum.at(scale, self.qrels_codes, np.where(self.qrels_labels > 0, self.qrels_labels, 0.0))
        return scale

    def unscaled(self, sums: np.ndarray) -> np.ndarray:
        """Per-query gain sums back from the per-query scale: exact (a power of two) unless they overflow."""
        if self.gain != "exponential":
            return sums
        with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 where the gains overflow
            return sums * np.exp2(self.scale)

    @cached_property
    def gains(self) -> np.ndarray:
        """The gain of each judged run line (scaled, see scale)."""
        return gains_of(self.label, self.gain, self.scale[self.query])

    @cached_property
    def condensed_rank(self) -> np.ndarray:
        """Each judged line's rank among its query's judged lines (which are in rank order)."""
        return _rank_in_block(self.query)

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ideal ranking of the judgements with a gain: (query, rank, gain / log2(rank + 2)) in query
        order, gains descending within a query (a judgement without gain adds nothing to IDCG)."""
        ideal_gain = gains_of(self.qrels_labels, self.gain, self.scale[self.qrels_codes])
        positive = np.flatnonzero(ideal_gain > 0)
        order = positive[np.lexsort((-ideal_gain[positive], self.qrels_codes[positive]))]
        query = self.qrels_codes[order]
        rank = _rank_in_block(query)
        return query, rank, ideal_gain[order] / np.log2(rank + 2.0)

    @cached_property
    def relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The relevant lines retrieved (label >= the relevance level), by query then rank: (query, rank,
        how many relevant lines of the query come before it)."""
        relevant = self.label >= self.rel_level
        query, rank = self.query[relevant], self.rank[relevant]
        return query, rank, _rank_in_block(query)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """Per query: the relevant lines retrieved."""
        return np.bincount(self.relevant[0], minlength=self.n_queries)

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Per query: the judgements not relevant, 0 <= label < the relevance level (bpref's nonrelevant)."""
        judged = (self.qrels_labels >= 0) & (self.qrels_labels < self.rel_level)
        return np.bincount(self.qrels_codes[judged], minlength=self.n_queries)

    @cached_property
    def before_relevant(self) -> tuple[np.ndarray, np.ndarray]:
        """Per relevant line (in the order of `relevant`): the judged lines above it in its query that are
        not relevant (0 <= label < the level), and those with a negative label (in the pool, not judged)."""
        nonrel = (self.label >= 0) & (self.label < self.rel_level)
        pooled = self.label < 0
        relevant = self.label >= self.rel_level
        return tuple(_before_in_block(self.query, flags)[relevant] for flags in (nonrel, pooled))  # type: ignore[return-value]

    @cached_property
    def ideal_labels(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The positive labels of each query's judgements, largest first: (query, position, label) in
        query order, trec_eval's ideal ranking of linear gains (G, ndcg_rel, Rndcg) whatever the gain."""
        positive = np.flatnonzero(self.qrels_labels > 0)
        order = positive[np.lexsort((-self.qrels_labels[positive], self.qrels_codes[positive]))]
        query = self.qrels_codes[order]
        return query, _rank_in_block(query), self.qrels_labels[order]

    @cached_property
    def ideal_dcg_so_far(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Over ideal_labels: each place's label / log2(place + 2), their running sum per query (its IDCG
        through that place, added as trec_eval adds it), and per query where its places start in them
        (n_queries + 1 offsets: a query's K positive labels are start[q] to start[q + 1])."""
        query, place, label = self.ideal_labels
        terms = label / np.log2(place + 2.0)
        return terms, prefix_sums(query, terms), block_starts(query, self.n_queries)

    @cached_property
    def gaining(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The lines with a positive label, trec_eval's linear gain whatever the gain (G, ndcg_rel, Rndcg):
        (query, rank, label, label / log2(rank + 2)), by query then rank."""
        positive = self.label > 0
        query, rank, label = self.query[positive], self.rank[positive], self.label[positive]
        return query, rank, label, label / np.log2(rank + 2.0)

    # --- helpers for the families ------------------------------------------------------------

    def over_num_rel(self, sums: np.ndarray) -> np.ndarray:
        """sums / num_rel, 0 where nothing is relevant (trec_eval's value for such a query)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.num_rel > 0, sums / np.maximum(self.num_rel, 1), 0.0)

    def once(self, make: Callable[[PassArrays], T]) -> T:
        """make(self), computed on the first call and kept: what several columns of a family share."""
        if make not in self._kept:
            self._kept[make] = make(self)
        return self._kept[make]  # type: ignore[return-value]


def block_starts(query: np.ndarray, n_queries: int) -> np.ndarray:
    """Where each query's entries begin in an array grouped by query code (n_queries + 1 offsets)."""
    return np.searchsorted(query, np.arange(n_queries + 1))


def prefix_sums(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The running sum of `values` within each query's block (entries grouped by query), inclusive,
    added one after another as trec_eval adds them: each block a row of a 2-D cumulative sum, the
    blocks padded in groups of similar length (a row at most twice its block)."""
    sums = np.zeros(len(values))
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1]))) if len(query) else np.zeros(0, int)
    lengths = np.diff(np.append(starts, len(query)))
    width_class = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    for width in np.unique(width_class):
        blocks = np.flatnonzero(width_class == width)
        columns = np.arange(1 << int(width))
        inside = columns[None, :] < lengths[blocks, None]
        index = np.where(inside, starts[blocks, None] + columns[None, :], 0)
        sums[index[inside]] = np.cumsum(np.where(inside, values[index], 0.0), axis=1)[inside]
    return sums


def group_max(query: np.ndarray, values: np.ndarray, n_queries: int) -> np.ndarray:
    """Per query: the largest of its `values` (entries grouped by query), 0 for a query without any."""
    best = np.zeros(n_queries)
    if len(query):
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        best[query[starts]] = np.maximum.reduceat(values, starts)
    return best


def _before_in_block(query: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Per entry: how many entries before it in its query's block have the flag."""
    counts = np.cumsum(flags) - flags
    if len(query):
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        counts -= np.repeat(counts[starts], np.diff(np.append(starts, len(query))))
    return counts


def _rank_in_block(query: np.ndarray) -> np.ndarray:
    """0-based position of each entry within its run of equal `query` codes (entries grouped by query)."""
    position = np.arange(len(query))
    if len(query):
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        position -= np.repeat(starts, np.diff(np.append(starts, len(query))))
    return position


def _sums_below_cutoffs(
    query: np.ndarray, rank: np.ndarray, values: np.ndarray | None, sum_ks: frozenset, count_ks: frozenset,
    n_queries: int,
) -> tuple[dict[int | None, np.ndarray], dict[int | None, np.ndarray]]:
    """Per query: the sum of `values` below each cut-off of sum_ks, the count of entries below each of
    count_ks (None: no cut-off, every entry). Sums run in array order, as np.bincount adds.

    The largest cut-off goes first and each next one keeps a subset of the entries, so small
    cut-offs cost little.
    """
    sums: dict[int | None, np.ndarray] = {}
    counts: dict[int | None, np.ndarray] = {}
    for k in sorted(sum_ks | count_ks, key=lambda k: (k is None, k or 0), reverse=True):
        if k is not None:
            keep = rank < k
            if not keep.all():
                query, rank = query[keep], rank[keep]
                values = None if values is None else values[keep]
        if k in sum_ks:  # float64 even without any entry
            sums[k] = np.bincount(query, weights=values, minlength=n_queries).astype(np.float64, copy=False)
        if k in count_ks:
            counts[k] = np.bincount(query, minlength=n_queries).astype(np.int64, copy=False)
    return sums, counts
