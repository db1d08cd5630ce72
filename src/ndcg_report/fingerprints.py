"""64-bit fingerprints of docids and (query, docid) pairs: equal inputs, equal keys; callers verify hits."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ROWS_PER_SLICE = 1 << 20
_BYTE_MASKS = np.array([(1 << (8 * kept)) - 1 for kept in range(9)], dtype=np.uint64)  # low `kept` bytes
DOCID_KEY = "docid_key"  # optional uint64 column of a run or qrels table: docid_fingerprints(docid)


def docid_fingerprints(docids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 fingerprint per string, a function of its bytes alone (collisions rare, never misses).

    Mixes the byte length and the string's 8-byte little-endian words, read straight from the
    Arrow data buffer (the last word zero-filled past the end), so any two tables agree.
    """
    if isinstance(docids, pa.ChunkedArray):
        docids = docids.combine_chunks() if docids.num_chunks else pa.array([], docids.type)
    n = len(docids)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(docids.type) or pa.types.is_large_binary(docids.type) else np.int32
    offsets = np.frombuffer(docids.buffers()[1], dtype=offset_type)[docids.offset : docids.offset + n + 1]
    data = docids.buffers()[2]
    padded = np.zeros((data.size if data is not None else 0) + 8, dtype=np.uint8)
    if data is not None:
        padded[: data.size] = np.frombuffer(data, dtype=np.uint8)
    words_at = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))  # 8 bytes from any byte
    fingerprint = np.empty(n, dtype=np.uint64)
    for start in range(0, n, _ROWS_PER_SLICE):  # slices bound the temporary arrays
        stop = min(n, start + _ROWS_PER_SLICE)
        fingerprint[start:stop] = _mix_words(words_at, offsets[start : stop + 1])
    return fingerprint


def _mix_words(words_at: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Fingerprints of the strings between consecutive offsets: length, then each 8-byte word."""
    starts = offsets[:-1].astype(np.int64)
    lengths = np.diff(offsets).astype(np.int64)
    fingerprint = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
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


def pair_keys(qid_codes: np.ndarray, docid_keys: np.ndarray) -> np.ndarray:
    """A uint64 key per (query code, docid fingerprint): the fingerprint xor a scattered query word."""
    n_codes = int(qid_codes.max()) + 1 if len(qid_codes) else 0
    query_words = splitmix64(np.arange(n_codes, dtype=np.uint64) + np.uint64(1))
    return docid_keys ^ query_words[qid_codes]


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: a bijection of uint64 that scatters structured keys."""
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x
