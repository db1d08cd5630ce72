"""Repeated (query, document) pairs: a table's pair index, its first repeat, the error naming it.

The pairs are fingerprinted (inputs.fingerprints) and sorted with their rows (inputs.pair_index);
rows whose keys agree are only candidates, confirmed by comparing the strings, so a key collision
never makes a repeat. The same index serves the join of a run with its qrels.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from ndcg_report.errors import InputError
from ndcg_report.inputs.columns import as_numpy, from_numpy
from ndcg_report.inputs.fingerprints import pair_keys
from ndcg_report.inputs.pair_index import PairIndex, build_pair_index, rows_sharing_a_key


def first_duplicate_pair(qid_codes: np.ndarray, docids: pa.Array, pairs: PairIndex) -> tuple[int, int] | None:
    """(first row, repeating row) of the earliest-repeated (qid, docid) pair, or None."""
    rows = rows_sharing_a_key(pairs)
    seen: dict[tuple[int, str], int] = {}
    for row, code, docid in zip(rows.tolist(), qid_codes[rows].tolist(), docids.take(from_numpy(rows)).to_pylist()):
        first = seen.setdefault((code, docid), row)
        if first != row:
            return first, row
    return None


def index_pairs(table: pa.Table) -> tuple[PairIndex, tuple[int, int] | None]:
    """The index of a table's (qid, docid) pairs (one-chunk qid dictionary and docid columns), and
    its earliest-repeated pair as (first row, repeating row), or None."""
    qids, docids = table["qid"].chunk(0), table["docid"].chunk(0)
    pairs = build_pair_index(pair_keys(qids, docids))
    return pairs, first_duplicate_pair(as_numpy(qids.indices), docids, pairs)


def duplicate_line_error(path: str | Path, line_of_row: Callable[[int], int | None], table: pa.Table, kind: str,
                         first: int, second: int) -> InputError:
    """The error for a (qid, docid) pair on rows first and second of a text format, at the second's line."""
    return InputError(
        path, line_of_row(second),
        f"duplicate {kind} entry for query {table['qid'][second].as_py()!r}, "
        f"document {table['docid'][second].as_py()!r} (first on line {line_of_row(first)})",
        "keep one line per (query, document)",
    )
