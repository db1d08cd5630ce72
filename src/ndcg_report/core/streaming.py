"""Evaluate a run larger than memory: in blocks of whole queries, each evaluated, then merged.

The run is read in blocks of whole queries, each block evaluated by evaluation_pass.evaluate against
the same qrels, the per-query rows merged (partitions.merge). The result equals evaluate() on the
whole run (a test checks it); peak memory is set by the block size and the qrels.

A query's lines must be contiguous: a query seen again after another one is an InputError saying
how to sort the run (or to evaluate it in memory); a block holds whole queries, so one query of more
than MAX_QUERY_LINES lines is an InputError too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa

from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.partitions import Options, QueryRows, absent_queries, merge, rows_of
from ndcg_report.errors import InputError
from ndcg_report.inputs.columns import as_numpy
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.formats.parquet import is_parquet
from ndcg_report.inputs.pair_index import PairIndex
from ndcg_report.inputs.reading import Qrels, Run
from ndcg_report.inputs.run_blocks import (BLOCK_BYTES, MAX_QUERY_LINES, ReadAhead, run_starts, start_reading,
                                           where_in_run)
from ndcg_report.inputs.selection import QrelsByQuery, group_by_query, select_queries
from ndcg_report.inputs.tables import QrelsLike, load_qrels

PreparedBlock = tuple[pa.Table, int, PairIndex, "tuple[int, int] | None", Qrels]


class QueryNotContiguous(InputError):
    """A query's lines are in more than one place of the run, so it cannot be read in blocks of whole queries."""


def evaluate_streaming(
    run: str | Path, qrels: QrelsLike, cutoffs: str | list | tuple | None = None, gain: str = "linear",
    missing: str = "zero", no_relevant: str = "zero", block_bytes: int = BLOCK_BYTES, *,
    measures: object = None, rel_level: object = None, identical_ids: str = "keep", max_retrieved: int | None = None,
    max_query_lines: int = MAX_QUERY_LINES, reading: ReadAhead | None = None,
) -> Evaluation:
    """evaluate() of a run file read block_bytes of text at a time, in blocks of whole queries;
    InputError for a query of more than max_query_lines lines. `reading`: the run's blocks already
    being read (inputs.run_blocks.start_reading of the same run), used and closed instead."""
    options = Options.of(cutoffs, gain, missing, no_relevant, measures, rel_level, identical_ids, max_retrieved)
    # a pipeline of three threads: one reads and parses blocks, one indexes their pairs and picks their
    # queries' qrels, this one evaluates them (three stages of about equal cost, on two cores)
    with closing(reading or start_reading(run, block_bytes, max_query_lines)) as parsed:  # reading starts now
        grouped = group_by_query(load_qrels(qrels))  # while the first blocks are read
        with closing(ReadAhead(map(partial(_prepared, grouped), parsed))) as blocks:
            return _evaluate_blocks(run, blocks, grouped, options)


def _evaluate_blocks(run: str | Path, blocks: Iterator[PreparedBlock],
                     grouped: QrelsByQuery, options: Options) -> Evaluation:
    """Each block checked (a query met again, a repeated pair) and evaluated against its own queries'
    qrels; the rows merged over those of the queries no block holds."""
    parts: list[QueryRows] = []
    seen: set[str] = set()
    for block, rows_before, pairs, found, block_qrels in blocks:
        qids = block["qid"].chunk(0).dictionary
        names = qids.to_pylist()
        row = first_return(as_numpy(block["qid"].chunk(0).indices), np.array([qid in seen for qid in names], dtype=bool))
        if row is not None:
            file, line, at = where_in_run(Path(run), rows_before + row)
            sort = ("write the rows sorted by qid" if is_parquet(Path(run))
                    else "sort the run by query (sort -s -k1,1 RUN > SORTED)")
            raise QueryNotContiguous(file, line, f"{at}query {block['qid'][row].as_py()!r} appears again after other "
                                     "queries, so the run cannot be read in blocks of whole queries",
                                     f"{sort} or evaluate it in memory (--in-memory)")
        seen.update(names)
        if found is not None:
            (first_file, first_line, first_at), (file, line, at) = (where_in_run(Path(run), rows_before + row) for row in found)
            first = f"line {first_line}" if first_line is not None else f"{first_at.rstrip(': ')} of {first_file}"
            raise InputError(file, line, f"{at}duplicate run entry for query {block['qid'][found[1]].as_py()!r}, "
                                         f"document {block['docid'][found[1]].as_py()!r} (first on {first})",
                             "keep one line per (query, document)")
        part = options.evaluate(Run(path=str(run), table=block, tag="", pairs=pairs), block_qrels)
        parts.append(rows_of(part))
    return merge(parts, absent_queries(grouped, seen, options))


def _prepared(grouped: QrelsByQuery, item: tuple[pa.Table, int]) -> PreparedBlock:
    """(block, rows before it, the index of its pairs, its earliest-repeated pair or None, the qrels of
    its queries): only the block's queries of the qrels, so a block costs its own size, not the qrels'."""
    block, rows_before = item
    return (block, rows_before, *index_pairs(block), select_queries(grouped, block["qid"].chunk(0).dictionary))


def first_return(codes: np.ndarray, seen_before: np.ndarray) -> int | None:
    """The first row where a query's lines start again after another query's, or None: a query of an
    earlier block (seen_before[code] True) or one met earlier in these rows (codes: query of each row)."""
    starts = run_starts(codes)
    first_codes = codes[starts]
    order = np.argsort(first_codes, kind="stable")
    again = seen_before[first_codes]
    again[order[1:][first_codes[order][1:] == first_codes[order][:-1]]] = True  # a later start of the same query
    hits = np.flatnonzero(again)
    return int(starts[hits[0]]) if len(hits) else None


