"""Parsed inputs kept for a build's kernels as Arrow IPC, read and checked once before any kernel.

Every run and qrels file is saved in the build's folder of inputs (beside the copies the build parses,
build/input_snapshots.py), named by the SHA-256 of the input's path and of its bytes. papermill's and
nbval's kernels are told the folder (INPUT_CACHE_ENV); in a build they take each input's sha256 from
its snapshot and read the input from its copy, so a saved file always matches; outside a build an
input is hashed, and a saved file used only if the input still hashes the same. Only parsed inputs are
kept; every number is computed again in each kernel.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from ndcg_report.inputs.access.snapshots import INPUT_CACHE_ENV, input_sha256
from ndcg_report.inputs.pair_index import PairIndex
from ndcg_report.inputs.reading import Qrels, Run

_FORMAT = b"ndcg-report parsed input 1\0"  # changes whenever what is saved changes
_PAIRS = "__pairs"  # the column holding the pair index (a uint64 per row, in index order)


def cache_folder() -> Path | None:
    """The folder a build named for this process's kernel (None outside a build)."""
    folder = os.environ.get(INPUT_CACHE_ENV, "")
    return Path(folder) if folder else None


def cache_file(folder: Path, path: str | Path, kind: str, digest: str) -> Path:
    """Where the parsed `kind` ('run', 'qrels') of the input at path, of content digest, is kept."""
    named = hashlib.sha256(_FORMAT + str(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return folder / f"{kind}-{named}-{digest}.arrow"


def save_parsed(folder: Path, parsed: Run | Qrels, digest: str | None = None) -> Path:
    """Save a parsed run or qrels into folder; digest: its input's sha256 (inputs.access.snapshots.input_sha256)
    if already known."""
    folder.mkdir(parents=True, exist_ok=True)
    kind = "run" if isinstance(parsed, Run) else "qrels"
    metadata = {b"kind": kind.encode(), b"row_bits": str(parsed.pairs.row_bits).encode()}
    if isinstance(parsed, Run):
        metadata[b"tag"] = parsed.tag.encode("utf-8", "surrogateescape")
    packed = np.ascontiguousarray(parsed.pairs.packed, dtype=np.uint64)  # its buffer as it is (pa.array imports pandas)
    table = parsed.table.append_column(_PAIRS, pa.Array.from_buffers(pa.uint64(), len(packed), [None, pa.py_buffer(packed)]))
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    target = cache_file(folder, parsed.path, kind, digest or input_sha256(parsed.path))
    partial = target.with_suffix(".partial")
    with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)  # a stream: each chunk may have its own qid dictionary
    partial.replace(target)
    return target


def load_parsed(folder: Path | None, path: str | Path, kind: str, digest: str | None = None) -> Run | Qrels | None:
    """The run or qrels of path saved in folder, if the input still hashes as when it was saved (digest:
    its input_sha256 if already known); else None."""
    if folder is None:
        return None
    try:
        target = cache_file(folder, path, kind, digest or input_sha256(path))
    except OSError:  # missing or unreadable: the reader says so, in its words
        return None
    if not target.is_file():
        return None
    table = pa.ipc.open_stream(pa.memory_map(str(target))).read_all()  # the bytes stay in the mapped file
    metadata = table.schema.metadata or {}
    column = table[_PAIRS]  # one chunk as saved: a view of the mapped file, no copy (a PairIndex is only read)
    pairs = PairIndex(packed=(column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()).to_numpy(),
                      row_bits=int(metadata[b"row_bits"]))
    table = table.drop_columns([_PAIRS]).replace_schema_metadata(
        {key: value for key, value in metadata.items() if key not in (b"kind", b"row_bits", b"tag")} or None)
    if kind == "run":
        return Run(path=str(path), table=table, tag=metadata.get(b"tag", b"").decode("utf-8", "surrogateescape"),
                   pairs=pairs)
    return Qrels(path=str(path), table=table, pairs=pairs)
