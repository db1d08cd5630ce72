"""The qrels lines of some queries, for evaluating a part of a run (a streamed block, a partition)
without paying for every query of the qrels each time."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy, from_numpy
from ndcg_report.inputs.pair_index import PairIndex
from ndcg_report.inputs.trec import Qrels


def select_queries(qrels: Qrels, qids: pa.Array) -> Qrels:
    """The qrels lines whose query is in `qids` (strings), in file order, with their pair index.

    The index is the qrels' own, filtered and renumbered (no new sort): rows keep their order, so
    entries with equal keys stay in row order and lookups give what they give on the whole qrels.
    """
    column = qrels.table["qid"].combine_chunks()
    wanted = as_numpy(pc.is_in(column.dictionary, value_set=qids.cast(column.dictionary.type)))
    keep = wanted[as_numpy(column.indices)]
    rows = np.flatnonzero(keep)
    selected = qrels.table.take(from_numpy(rows))
    qid = selected["qid"].combine_chunks().dictionary_decode().dictionary_encode()  # only the selected queries
    table = selected.set_column(selected.column_names.index("qid"), "qid", qid).combine_chunks()

    index = qrels.pairs
    entry_rows = index.rows(np.arange(len(index.packed))).astype(np.intp)
    entries = keep[entry_rows]
    new_row = np.cumsum(keep, dtype=np.uint64) - np.uint64(1)  # row of each kept line in the selection
    packed = index.packed[entries] & ~np.uint64((1 << index.row_bits) - 1)
    packed |= new_row[entry_rows[entries]]
    return Qrels(path=qrels.path, table=table, pairs=PairIndex(packed=packed, row_bits=index.row_bits))
