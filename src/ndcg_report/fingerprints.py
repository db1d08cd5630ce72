"""64-bit fingerprints of strings and (query, docid) pairs: equal inputs, equal keys; callers verify hits."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from ndcg_report.columns import as_numpy

_ROWS_PER_SLICE = 1 << 20  # bounds the temporaries; slices run on threads (NumPy releases the GIL)
_MAX_THREADS = 4
_BYTE_MASKS = np.array([(1 << (8 * kept)) - 1 for kept in range(9)], dtype=np.uint64)  # low `kept` bytes
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def string_fingerprints(strings: pa.Array | pa.ChunkedArray, seeds: np.ndarray | None = None) -> np.ndarray:
    """A uint64 per string, a function of its bytes (and its seed) alone; collisions rare, never misses.

    Mixes the seed, the byte length and the string's 8-byte little-endian words, read straight
    from the Arrow data buffer (the last word zero-filled past the end), so any two tables agree.
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks() if strings.num_chunks else pa.array([], strings.type)
    n = len(strings)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type) else np.int32
    offsets = np.frombuffer(strings.buffers()[1], dtype=offset_type)[strings.offset : strings.offset + n + 1]
    data = strings.buffers()[2]
    padded = np.zeros((data.size if data is not None else 0) + 8, dtype=np.uint8)
    if data is not None:
        padded[: data.size] = np.frombuffer(data, dtype=np.uint8)
    words_at = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))  # 8 bytes from any byte
    fingerprint = np.empty(n, dtype=np.uint64)

    def mix_slice(start: int) -> None:
        stop = min(n, start + _ROWS_PER_SLICE)
        seed = None if seeds is None else seeds[start:stop]
        fingerprint[start:stop] = _mix_words(words_at, offsets[start : stop + 1], seed)

    slice_starts = range(0, n, _ROWS_PER_SLICE)
    threads = min(len(slice_starts), _MAX_THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if threads <= 1:
        for start in slice_starts:
            mix_slice(start)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(mix_slice, slice_starts))
    return fingerprint


def pair_keys(qids: pa.Array | pa.ChunkedArray, docids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 key per row of (qid, docid) strings: the docid's fingerprint seeded by the qid's."""
    if isinstance(qids, pa.ChunkedArray):
        qids = qids.combine_chunks() if qids.num_chunks else pa.array([], qids.type)
    if not pa.types.is_dictionary(qids.type):
        qids = qids.dictionary_encode()
    query_words = string_fingerprints(qids.dictionary)
    return string_fingerprints(docids, query_words[as_numpy(qids.indices)])


def _mix_words(words_at: np.ndarray, offsets: np.ndarray, seed: np.ndarray | None) -> np.ndarray:
    """Fingerprints of the strings between consecutive offsets: seed and length, then each 8-byte word."""
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    fingerprint = lengths.astype(np.uint64)
    fingerprint *= _GOLDEN
    if seed is not None:
        fingerprint ^= seed
    rows = np.flatnonzero(lengths > 0) if len(lengths) and lengths.min() == 0 else None  # None: every row
    word = 0
    while rows is None or len(rows):
        left = (lengths if rows is None else lengths[rows]) - 8 * word  # bytes from this word on, > 0
        values = words_at[(starts if rows is None else starts[rows]) + 8 * word]
        values &= _BYTE_MASKS[np.minimum(left, 8)]  # zero the bytes past the string's end
        values ^= fingerprint if rows is None else fingerprint[rows]
        if rows is None:
            fingerprint = splitmix64(values)
            rows = np.flatnonzero(left > 8)
        else:
            fingerprint[rows] = splitmix64(values)
            rows = rows[left > 8]
        word += 1
    return fingerprint


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: a bijection of uint64 that scatters structured keys."""
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x
