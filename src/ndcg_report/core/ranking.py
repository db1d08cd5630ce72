"""Rank run lines within their query in trec_eval's order: score descending, docid descending."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy, from_numpy


_MIN_SCORE_BITS = 8  # below this, a run not in rank order is sorted by pyarrow alone


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
    if n == 0:
        return Ranks(rank=np.zeros(0, dtype=np.int64), lines_per_query=np.zeros(n_queries, dtype=np.int64), tied_lines=0)
    boundary = qid_codes[1:] != qid_codes[:-1]
    if is_presorted(qid_codes, scores, boundary):
        starts = np.flatnonzero(np.concatenate(([True], boundary)))
        lines_per_query = np.zeros(max(n_queries, int(qid_codes[starts].max()) + 1), dtype=np.int64)
        lines_per_query[qid_codes[starts]] = np.diff(np.append(starts, n))  # one block per query
        rank, tied_lines = _presorted_ranks(qid_codes, scores, boundary, starts, docids, rows)
        return Ranks(rank=rank, lines_per_query=lines_per_query, tied_lines=tied_lines)
    rows = np.arange(n, dtype=np.int64) if rows is None else rows
    lines_per_query = np.bincount(qid_codes, minlength=n_queries)
    order, tied_lines = _trec_eval_order(qid_codes, scores, docids, lines_per_query)
    position = np.empty(n, dtype=np.int64)  # where each line lands in that order
    position[order] = np.arange(n)
    query_starts = np.cumsum(lines_per_query) - lines_per_query
    rank = position[rows] - query_starts[qid_codes[rows]]
    return Ranks(rank=rank, lines_per_query=lines_per_query, tied_lines=tied_lines)


def _presorted_ranks(
    qid_codes: np.ndarray, scores: np.ndarray, boundary: np.ndarray, starts: np.ndarray, docids: pa.Array,
    rows: np.ndarray | None,
) -> tuple[np.ndarray, int]:
    """(ranks of `rows` (None: every line), tied lines) in a run grouped by query (blocks at `starts`)
    in score order."""
    n = len(qid_codes)
    every_line = rows is None  # a line's rank is then its place in its block
    if every_line:
        rank = np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, n)))
    else:
        rank = rows - starts[np.searchsorted(starts, rows, side="right") - 1]
    tie_edge = ~boundary
    tie_edge &= scores[1:] == scores[:-1]
    if not tie_edge.any():
        return rank, 0
    positions, group = _tie_groups(tie_edge)
    tied_lines = len(positions)
    if not every_line:  # only the ties holding a line asked for move one: the others are not sorted
        positions, group = _groups_holding(positions, group, rows)
        if not len(positions):
            return rank, tied_lines
    lines = _exact_order(qid_codes, scores, docids, positions, group)  # line lines[i] moves to positions[i]
    if every_line:
        rank[lines] = rank[positions].copy()  # ties stay within a block: a move keeps the block's start
        return rank, tied_lines
    by_line = np.argsort(lines)
    tied_sorted = lines[by_line]
    slot = np.minimum(np.searchsorted(tied_sorted, rows), len(tied_sorted) - 1)
    moved = tied_sorted[slot] == rows
    new_position = positions[by_line[slot[moved]]]
    rank[moved] = new_position - starts[np.searchsorted(starts, new_position, side="right") - 1]
    return rank, tied_lines


def _groups_holding(positions: np.ndarray, group: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, group) of the tie groups that hold at least one of `rows` (sorted or not)."""
    sorted_rows = np.sort(rows)
    slot = np.minimum(np.searchsorted(sorted_rows, positions), max(len(sorted_rows) - 1, 0))
    asked = sorted_rows[slot] == positions if len(sorted_rows) else np.zeros(len(positions), dtype=bool)
    holding = np.zeros(int(group[-1]) + 1, dtype=bool)
    holding[group[asked]] = True
    kept = holding[group]
    return positions[kept], group[kept]


def _trec_eval_order(
    qid_codes: np.ndarray, scores: np.ndarray, docids: pa.Array, lines_per_query: np.ndarray
) -> tuple[np.ndarray, int]:
    """(line numbers sorted by query code, score descending, docid descending; lines in score ties).

    One sort of packed words (query code, the score's leading bits over the run's score range,
    line number); lines whose words tie (equal scores, or scores too close for those bits) are
    then put in exact order by pyarrow.
    """
    n = len(qid_codes)
    query_bits = max(1, (len(lines_per_query) - 1).bit_length())
    line_bits = max(1, (n - 1).bit_length())
    score_bits = 64 - query_bits - line_bits
    if score_bits < _MIN_SCORE_BITS:  # too few bits left for the score to help: pyarrow sorts every line
        lines = _exact_order(qid_codes, scores, docids, np.arange(n), np.zeros(n, dtype=np.int64))
        return lines, _lines_in_ties(qid_codes, scores, lines, np.zeros(n, dtype=np.int64))
    words = _descending_score_words(scores)
    words -= words.min()
    spare = int(words.max()).bit_length() - score_bits
    if spare > 0:
        words >>= np.uint64(spare)
    words <<= np.uint64(line_bits)
    words |= np.arange(n, dtype=np.uint64)
    words |= qid_codes.astype(np.uint64) << np.uint64(64 - query_bits)
    words.sort()
    order = (words & np.uint64((1 << line_bits) - 1)).astype(np.int64)
    words >>= np.uint64(line_bits)
    tie_edge = words[1:] == words[:-1]
    if not tie_edge.any():
        return order, 0
    positions, group = _tie_groups(tie_edge)
    lines = _exact_order(qid_codes, scores, docids, order[positions], group)
    order[positions] = lines
    return order, _lines_in_ties(qid_codes, scores, lines, group)


def _lines_in_ties(qid_codes: np.ndarray, scores: np.ndarray, lines: np.ndarray, group: np.ndarray) -> int:
    """How many of `lines` (sorted, in groups) share their query and score with a neighbour."""
    same = (group[1:] == group[:-1]) & (qid_codes[lines[1:]] == qid_codes[lines[:-1]])
    same &= scores[lines[1:]] == scores[lines[:-1]]
    return len(_tie_groups(same)[0])


def tie_members(tie_edge: np.ndarray) -> np.ndarray:
    """Mask of the positions on either side of a true `tie_edge[i]` (an edge between i and i + 1)."""
    in_tie = np.zeros(len(tie_edge) + 1, dtype=bool)
    in_tie[:-1] |= tie_edge
    in_tie[1:] |= tie_edge
    return in_tie


def _tie_groups(tie_edge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions on either side of a true `tie_edge[i]` (between i and i + 1), each one's tie group)."""
    positions = np.flatnonzero(tie_members(tie_edge))
    return positions, np.cumsum(np.concatenate(([True], ~tie_edge[positions[1:] - 1])))


def _exact_order(
    qid_codes: np.ndarray, scores: np.ndarray, docids: pa.Array, lines: np.ndarray, group: np.ndarray
) -> np.ndarray:
    """`lines` sorted by group, query code, score descending and docid descending (pyarrow sort)."""
    table = pa.table({
        "group": from_numpy(group), "query": from_numpy(qid_codes[lines]), "score": from_numpy(scores[lines]),
        "docid": docids.take(from_numpy(lines)),
    })
    keys = [("group", "ascending"), ("query", "ascending"), ("score", "descending"), ("docid", "descending")]
    return lines[as_numpy(pc.sort_indices(table, sort_keys=keys))]


def _descending_score_words(scores: np.ndarray) -> np.ndarray:
    """uint64 words whose ascending order is the scores' descending order (-0.0 equal to 0.0)."""
    words = (scores + 0.0).view(np.uint64)  # a new array; -0.0 + 0.0 is 0.0
    flip = words >> np.uint64(63)  # 1 for negative scores
    with np.errstate(over="ignore"):
        flip -= np.uint64(1)  # all ones for positive scores, 0 for negative ones
    flip &= np.uint64((1 << 63) - 1)
    words ^= flip  # positives: low 63 bits inverted (larger first); negatives: as they are, after
    return words


def is_presorted(qid_codes: np.ndarray, scores: np.ndarray, boundary: np.ndarray) -> bool:
    """True if lines are grouped by query (one block each) with non-increasing scores."""
    block_firsts = qid_codes[np.concatenate(([True], boundary))]
    if len(block_firsts) and np.bincount(block_firsts).max() > 1:  # a query in two blocks (codes are small ints)
        return False
    rising = scores[1:] > scores[:-1]
    rising &= ~boundary
    return not rising.any()
