"""NDCG@k of a run larger than memory: read in blocks of whole queries, each block evaluated by
metrics.evaluate against the same qrels, the per-query rows merged (partitions.merge). The result equals
evaluate() on the whole run (a test checks it); peak memory is set by the block size and the qrels.

A query's lines must be contiguous: a query seen again after another one is an InputError saying
how to sort the run (or to evaluate it in memory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from ndcg_report.core.metrics import DEFAULT_CUTOFFS, Evaluation, evaluate, parse_cutoffs
from ndcg_report.core.partitions import QueryRows, merge, rows_of
from ndcg_report.errors import InputError
from ndcg_report.inputs.columns import as_numpy
from ndcg_report.inputs.tables import QrelsLike, load_qrels
from ndcg_report.inputs.trec import Run, index_pairs, line_of_row, run_chunks

BLOCK_BYTES = 256 << 20  # text read per block: about 6M run lines, ~1 GB of peak memory
_IN_MEMORY_FACTOR = 4  # peak memory of an in-memory evaluation, as a multiple of the run's text size
_GZIP_RATIO = 4  # how much larger a gzip run's text is than the file, for the estimate


def evaluate_streaming(
    run: str | Path, qrels: QrelsLike, cutoffs: str | list | tuple = DEFAULT_CUTOFFS, gain: str = "linear",
    missing: str = "zero", no_relevant: str = "skip", block_bytes: int = BLOCK_BYTES,
) -> Evaluation:
    """evaluate() of a run file read block_bytes of text at a time, in blocks of whole queries."""
    ks = parse_cutoffs(cutoffs)
    qrels_read = load_qrels(qrels)
    options = dict(cutoffs=ks, gain=gain, missing=missing, no_relevant=no_relevant)
    base: Evaluation | None = None
    parts: list[QueryRows] = []
    seen: set[str] = set()
    for block, rows_before in _query_blocks(run, block_bytes):
        qids = block["qid"].chunk(0).dictionary.to_pylist()
        again = seen.intersection(qids)
        if again:
            first = sorted(again)[0]
            row = int(np.flatnonzero(block["qid"].to_numpy(zero_copy_only=False) == first)[0])
            raise InputError(run, line_of_row(run, rows_before + row),
                             f"query {first!r} appears again after other queries, so the run cannot be read in "
                             "blocks of whole queries", "sort the run by query (sort -s -k1,1 RUN > SORTED) "
                             "or evaluate it in memory (--in-memory)")
        seen.update(qids)
        pairs, found = index_pairs(block)
        if found is not None:
            first_row, second_row = (line_of_row(run, rows_before + row) for row in found)
            raise InputError(run, second_row,
                             f"duplicate run entry for query {block['qid'][found[1]].as_py()!r}, document "
                             f"{block['docid'][found[1]].as_py()!r} (first on line {first_row})",
                             "keep one line per (query, document)")
        part = evaluate(Run(path=str(run), table=block, tag="", pairs=pairs), qrels_read, **options)
        if base is None:  # its rows of queries absent from every block depend on the qrels only
            base = part
        parts.append(rows_of(part))
    assert base is not None  # run_chunks raises on a run without data lines
    return merge(base, parts)


def _query_blocks(run: str | Path, block_bytes: int) -> Iterator[tuple[pa.Table, int]]:
    """(table of whole queries, rows before it): each chunk of the file without its last query's
    lines, which go to the front of the next chunk."""
    carry: pa.Table | None = None
    carry_start = 0
    for table, rows_before in run_chunks(run, block_bytes):
        if carry is not None:
            table = pa.concat_tables([carry, table]).unify_dictionaries().combine_chunks()
            rows_before = carry_start
        codes = as_numpy(table["qid"].chunk(0).indices)
        changes = np.flatnonzero(codes[1:] != codes[:-1])
        split = int(changes[-1]) + 1 if len(changes) else 0  # where the last query's trailing lines begin
        if split:
            yield _compact(table.slice(0, split)), rows_before
        carry, carry_start = table.slice(split), rows_before + split
    if carry is not None and carry.num_rows:
        yield _compact(carry), carry_start


def _compact(table: pa.Table) -> pa.Table:
    """The table in one chunk, its qid dictionary holding only the qids of its rows (as read_run's)."""
    qids = table["qid"].combine_chunks().dictionary_decode().dictionary_encode()
    return table.set_column(0, "qid", qids).combine_chunks()


def fits_in_memory(run: str | Path, available: int | None = None) -> bool:
    """True if an in-memory evaluation of the run file is likely to use under half the memory
    available (MemAvailable of /proc/meminfo, else the physical memory)."""
    size = Path(run).stat().st_size
    with open(run, "rb") as handle:
        if handle.read(2) == b"\x1f\x8b":
            size *= _GZIP_RATIO
    return size * _IN_MEMORY_FACTOR < (available if available is not None else _available_memory()) / 2


def _available_memory() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
