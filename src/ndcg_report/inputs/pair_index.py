"""(query, docid) keys sorted with their row numbers: finds repeated pairs and run lines' judgements.

One sort serves both jobs. Each entry packs the high bits of a row's 64-bit pair key above the
row number, so equal pairs sit side by side and a lookup gives rows directly. Entries that share
their high bits are only candidates: callers confirm them by comparing the strings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class PairIndex:
    """`packed` (sorted uint64): pair key with its low `row_bits` bits replaced by the row number."""

    packed: np.ndarray
    row_bits: int

    def rows(self, entries: np.ndarray) -> np.ndarray:
        """The row numbers (uint64) held by the given entries."""
        return self.packed[entries] & np.uint64((1 << self.row_bits) - 1)


def build_pair_index(keys: np.ndarray) -> PairIndex:
    """Index uint64 pair keys (one per row); `keys` is overwritten and becomes the index."""
    row_bits = max(1, (len(keys) - 1).bit_length())
    low = np.uint64((1 << row_bits) - 1)
    keys &= ~low
    keys |= np.arange(len(keys), dtype=np.uint64)
    keys.sort()  # NumPy's SIMD sort (x86-simd-sort, Highway): 3.6x faster than dealing into buckets first
    return PairIndex(packed=keys, row_bits=row_bits)


def rows_sharing_a_key(index: PairIndex) -> np.ndarray:
    """Sorted rows whose entry has the same high bits as another entry's (candidate repeats)."""
    packed = index.packed
    if len(packed) < 2:
        return np.zeros(0, dtype=np.int64)
    same = packed[1:] ^ packed[:-1]
    same = same < np.uint64(1 << index.row_bits)
    if not same.any():
        return np.zeros(0, dtype=np.int64)
    at = np.flatnonzero(same)
    entries = np.union1d(at, at + 1)
    return np.sort(index.rows(entries).astype(np.int64))


def candidate_matches(left: PairIndex, right: PairIndex) -> tuple[np.ndarray, np.ndarray]:
    """(left row, right row) of every pair of entries whose keys agree above both indexes' row bits.

    Sorted by left row. One binary search per right entry, with sorted needles, finds the first
    left entry with the same high bits; the following entries are checked while they agree.
    """
    bits = max(left.row_bits, right.row_bits)
    low = np.uint64((1 << bits) - 1)
    high = right.packed & ~low
    entries = np.searchsorted(left.packed, high)
    owners = np.arange(len(high))
    found_left, found_right = [entries[:0]], [owners[:0]]
    while len(entries):
        inside = entries < len(left.packed)
        entries, owners = entries[inside], owners[inside]
        agree = (left.packed[entries] & ~low) == high[owners]
        entries, owners = entries[agree], owners[agree]
        found_left.append(entries)
        found_right.append(owners)
        entries = entries + 1
    left_rows, right_rows = left.rows(np.concatenate(found_left)), right.rows(np.concatenate(found_right))
    if left.row_bits + right.row_bits <= 64:  # sort both rows packed in one word: faster than argsort
        left_rows <<= np.uint64(right.row_bits)
        left_rows |= right_rows
        left_rows.sort()
        right_rows = left_rows & np.uint64((1 << right.row_bits) - 1)
        left_rows >>= np.uint64(right.row_bits)
    else:
        by_left = np.argsort(left_rows, kind="stable")
        left_rows, right_rows = left_rows[by_left], right_rows[by_left]
    return left_rows.astype(np.int64), right_rows.astype(np.int64)
