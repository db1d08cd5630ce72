"""64-bit fingerprints of strings and (query, docid) pairs: equal inputs give equal keys.

Keys are not unique: callers verify their hits.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from ndcg_report.inputs.columns import as_numpy, one_array

_ROWS_PER_SLICE = 1 << 20  # bounds the temporaries; slices run on threads (NumPy releases the GIL)
_MAX_THREADS = 4
_BYTE_MASKS = np.array([(1 << (8 * kept)) - 1 for kept in range(9)], dtype=np.uint64)  # low `kept` bytes
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LONG = 4096  # strings longer than this are hashed whole by blake2b: the word chain below loops per word


def string_fingerprints(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 per string, a function of its bytes alone (collisions rare, never misses).

    Mixes the byte length and the string's 8-byte little-endian words, read straight from the
    Arrow data buffer (the last word zero-filled past the end), so any two tables agree; a string
    longer than _LONG bytes is hashed whole (blake2b), which is as much a function of its bytes.
    """
    return _fingerprints(strings, None, None)


def pair_keys(qids: pa.Array | pa.ChunkedArray, docids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 key per row of (qid, docid) strings: the docid's fingerprint seeded by the qid's."""
    if isinstance(qids, pa.ChunkedArray):
        qids = one_array(qids) if qids.num_chunks else pa.array([], qids.type)
    if not pa.types.is_dictionary(qids.type):
        qids = qids.dictionary_encode()
    return _fingerprints(docids, string_fingerprints(qids.dictionary), as_numpy(qids.indices))


def _fingerprints(strings: pa.Array | pa.ChunkedArray, seed_words: np.ndarray | None, seed_codes: np.ndarray | None) -> np.ndarray:
    """Fingerprints of strings, row i seeded by seed_words[seed_codes[i]] (no seed if None)."""
    if isinstance(strings, pa.ChunkedArray):
        strings = one_array(strings) if strings.num_chunks else pa.array([], strings.type)
    n = len(strings)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(strings.type) or pa.types.is_large_binary(strings.type) else np.int32
    offsets = np.frombuffer(strings.buffers()[1], dtype=offset_type)[strings.offset : strings.offset + n + 1]
    data = strings.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    # Strings ending 8 bytes or more before the buffer's end are read in place (an empty one reads
    # the 8 bytes at its offset); the last few strings from a padded copy.
    in_place = int(np.searchsorted(offsets[1:], len(data) - 8, side="right"))
    tail_start = int(offsets[in_place])
    tail = np.zeros(len(data) - tail_start + 8, dtype=np.uint8)
    tail[: len(data) - tail_start] = data[tail_start:]
    fingerprint = np.empty(n, dtype=np.uint64)

    def mix_slice(start: int) -> None:
        stop = min(in_place, start + _ROWS_PER_SLICE)
        seed = None if seed_words is None else seed_words[seed_codes[start:stop]]
        fingerprint[start:stop] = _mix_words(data, offsets[start : stop + 1], seed)

    slice_starts = range(0, in_place, _ROWS_PER_SLICE)
    threads = min(len(slice_starts), _MAX_THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if threads <= 1:
        for start in slice_starts:
            mix_slice(start)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(mix_slice, slice_starts))
    if in_place < n:
        seed = None if seed_words is None else seed_words[seed_codes[in_place:]]
        fingerprint[in_place:] = _mix_words(tail, offsets[in_place:] - tail_start, seed)
    return fingerprint


def _words_at(data: np.ndarray) -> np.ndarray:
    """The little-endian 8-byte word starting at each byte that has 7 more after it (a view, no copy)."""
    return np.ndarray((max(len(data) - 7, 0),), dtype="<u8", buffer=data, strides=(1,))


def _mix_words(data: np.ndarray, offsets: np.ndarray, seed: np.ndarray | None) -> np.ndarray:
    """Fingerprints of the strings of data between consecutive offsets: seed, length and first word,
    then each next word; strings over _LONG bytes from their blake2b digest instead."""
    words_at = _words_at(data)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    fingerprint = words_at[starts]
    fingerprint &= _BYTE_MASKS[np.minimum(lengths, 8)]  # zero the bytes past the string's end
    long_rows = np.flatnonzero(lengths > _LONG)
    for row in long_rows.tolist():
        digest = hashlib.blake2b(data[starts[row]: starts[row] + lengths[row]].tobytes(), digest_size=8).digest()
        fingerprint[row] = np.frombuffer(digest, dtype="<u8")[0]
    scratch = lengths.astype(np.uint64)
    scratch *= _GOLDEN
    fingerprint ^= scratch
    if seed is not None:
        fingerprint ^= seed
    splitmix64(fingerprint, scratch)
    rows = np.flatnonzero((lengths > 8) & (lengths <= _LONG))
    word = 1
    while len(rows):
        left = lengths[rows] - 8 * word  # bytes from this word on, > 0
        values = words_at[starts[rows] + 8 * word]
        values &= _BYTE_MASKS[np.minimum(left, 8)]
        values ^= fingerprint[rows]
        fingerprint[rows] = splitmix64(values)
        rows = rows[left > 8]
        word += 1
    return fingerprint


def splitmix64(x: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
    """splitmix64's finaliser, in place: a bijection of uint64 that scatters structured keys.

    `scratch`, a uint64 array of x's shape, saves allocating temporaries.
    """
    scratch = np.empty_like(x) if scratch is None else scratch
    with np.errstate(over="ignore"):
        for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            np.right_shift(x, np.uint64(shift), out=scratch)
            x ^= scratch
            x *= np.uint64(multiplier)
        np.right_shift(x, np.uint64(31), out=scratch)
        x ^= scratch
    return x
