"""Rank run lines within their query in trec_eval's order: score descending, docid descending."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.columns import as_numpy, from_numpy


@dataclass(frozen=True)
class Ranks:
    """0-based rank within its query of each requested run line, lines per query code, tied lines."""

    rank: np.ndarray
    lines_per_query: np.ndarray
    tied_lines: int


def rank_within_query(
    qid_codes: np.ndarray, scores: np.ndarray, docids: pa.Array, rows: np.ndarray | None = None,
    n_queries: int = 0,
) -> Ranks:
    """Rank lines per query by score (float64, descending), ties by docid descending (bytes).

    Returns the ranks of `rows` (default: every line) and the line count of each query code (at
    least `n_queries` of them). A run already grouped by query in score order, as runs are
    written, is ranked without sorting; then only `rows` get a rank.
    """
    n = len(qid_codes)
    rows = np.arange(n, dtype=np.int64) if rows is None else rows
    if n == 0:
        return Ranks(rank=np.zeros(0, dtype=np.int64), lines_per_query=np.zeros(n_queries, dtype=np.int64), tied_lines=0)
    boundary = qid_codes[1:] != qid_codes[:-1]
    if _is_presorted(qid_codes, scores, boundary):
        starts = np.flatnonzero(np.concatenate(([True], boundary)))
        lines_per_query = np.zeros(max(n_queries, int(qid_codes[starts].max()) + 1), dtype=np.int64)
        lines_per_query[qid_codes[starts]] = np.diff(np.append(starts, n))  # one block per query
        rank, tied_lines = _presorted_ranks(scores, boundary, starts, docids, rows)
        return Ranks(rank=rank, lines_per_query=lines_per_query, tied_lines=tied_lines)
    lines_per_query = np.bincount(qid_codes, minlength=n_queries)
    lines = pa.table({"query": from_numpy(qid_codes), "score": from_numpy(scores), "docid": docids})
    order = as_numpy(pc.sort_indices(lines, sort_keys=[("query", "ascending"), ("score", "descending"),
                                                       ("docid", "descending")]))
    q_sorted, s_sorted = qid_codes[order], scores[order]
    boundary = q_sorted[1:] != q_sorted[:-1]
    tie_edge = ~boundary
    tie_edge &= s_sorted[1:] == s_sorted[:-1]
    in_tie = np.zeros(n, dtype=bool)
    in_tie[:-1] |= tie_edge
    in_tie[1:] |= tie_edge
    tied_lines = int(in_tie.sum())
    starts = np.flatnonzero(np.concatenate(([True], boundary)))
    rank_sorted = np.arange(n, dtype=np.int64)
    rank_sorted -= np.repeat(starts, np.diff(np.append(starts, n)))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = rank_sorted
    return Ranks(rank=rank[rows], lines_per_query=lines_per_query, tied_lines=tied_lines)


def _presorted_ranks(
    scores: np.ndarray, boundary: np.ndarray, starts: np.ndarray, docids: pa.Array, rows: np.ndarray
) -> tuple[np.ndarray, int]:
    """(ranks of `rows`, tied lines) in a run grouped by query (blocks at `starts`) in score order."""
    rank = rows - starts[np.searchsorted(starts, rows, side="right") - 1]
    tie_edge = ~boundary
    tie_edge &= scores[1:] == scores[:-1]
    if not tie_edge.any():
        return rank, 0
    positions, lines = _reorder_ties(tie_edge, docids)  # line lines[i] moves to positions[i]
    by_line = np.argsort(lines)
    tied_sorted = lines[by_line]
    slot = np.minimum(np.searchsorted(tied_sorted, rows), len(tied_sorted) - 1)
    moved = tied_sorted[slot] == rows
    new_position = positions[by_line[slot[moved]]]
    rank[moved] = new_position - starts[np.searchsorted(starts, new_position, side="right") - 1]
    return rank, len(positions)


def _is_presorted(qid_codes: np.ndarray, scores: np.ndarray, boundary: np.ndarray) -> bool:
    """True if lines are grouped by query (one block each) with non-increasing scores."""
    block_firsts = qid_codes[np.concatenate(([True], boundary))]
    if len(block_firsts) != len(np.unique(block_firsts)):
        return False
    rising = scores[1:] > scores[:-1]
    rising &= ~boundary
    return not rising.any()


def _reorder_ties(tie_edge: np.ndarray, docids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(tied lines of a presorted run, the lines they hold once each tie group is sorted by docid descending)."""
    in_tie = np.zeros(len(tie_edge) + 1, dtype=bool)
    in_tie[:-1] |= tie_edge
    in_tie[1:] |= tie_edge
    positions = np.flatnonzero(in_tie)
    starts_group = np.concatenate(([True], ~tie_edge[positions[1:] - 1]))
    group = np.cumsum(starts_group)
    subset = pa.table({"group": from_numpy(group), "docid": docids.take(from_numpy(positions))})
    within = pc.sort_indices(subset, sort_keys=[("group", "ascending"), ("docid", "descending")])
    return positions, positions[as_numpy(within)]
