"""64-bit fingerprints of docids and (query, docid) pairs: equal inputs, equal keys; callers verify hits."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ROWS_PER_SLICE = 1 << 20
DOCID_KEY = "docid_key"  # optional uint64 column of a run or qrels table: docid_fingerprints(docid)


def docid_fingerprints(docids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 fingerprint per string (equal strings, equal fingerprints; collisions rare)."""
    if isinstance(docids, pa.ChunkedArray):
        docids = docids.combine_chunks()
    fingerprints = np.zeros(len(docids), dtype=np.uint64)
    if len(docids) == 0:
        return fingerprints
    width = max(8, -(-int(pc.max(pc.binary_length(docids)).as_py()) // 8) * 8)
    for start in range(0, len(docids), _ROWS_PER_SLICE):  # bounds the padded copy: slice x width bytes
        piece = docids.slice(start, _ROWS_PER_SLICE)
        fingerprints[start : start + len(piece)] = _padded_fingerprints(piece, width)
    return fingerprints


def _padded_fingerprints(docids: pa.Array, width: int) -> np.ndarray:
    """Fingerprints of strings right-padded with NUL to `width` bytes, read as uint64 words."""
    padded = pc.utf8_rpad(docids, width=width, padding="\x00")
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32)[padded.offset : padded.offset + len(padded) + 1]
    words = np.frombuffer(padded.buffers()[2], dtype=np.uint64, count=int(offsets[-1] - offsets[0]) // 8,
                          offset=int(offsets[0]))
    words = words.reshape(len(padded), width // 8)
    fingerprint = words[:, 0].copy()
    with np.errstate(over="ignore"):
        for column in range(1, words.shape[1]):
            fingerprint *= np.uint64(0x9E3779B97F4A7C15)
            fingerprint ^= words[:, column]
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
