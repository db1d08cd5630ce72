"""The qrels lines of some queries, to evaluate a part of a run at the cost of that part.

A part is a streamed block or a partition: its qrels cost that part, not the whole qrels each time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy, from_numpy, one_array, strings
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.reading import Qrels


@dataclass(frozen=True, eq=False)
class QrelsByQuery:
    """Qrels with their rows grouped by query: rows `order[starts[c]:starts[c + 1]]` are those of
    the query with dictionary code c, in file order."""

    qrels: Qrels
    order: np.ndarray
    starts: np.ndarray


def group_by_query(qrels: Qrels) -> QrelsByQuery:
    """The qrels' rows grouped by query (one stable sort of the query codes, done once)."""
    column = one_array(qrels.table["qid"])
    codes = as_numpy(column.indices)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(len(column.dictionary) + 1))
    return QrelsByQuery(qrels=qrels, order=order, starts=starts)


def select_queries(qrels: Qrels | QrelsByQuery, qids: pa.Array) -> Qrels:
    """The qrels lines whose query is in `qids` (strings), in file order, indexed: what read_qrels
    gives for a file of just those lines. Costs the selection's size when given grouped qrels."""
    grouped = qrels if isinstance(qrels, QrelsByQuery) else group_by_query(qrels)
    table = grouped.qrels.table
    dictionary = table["qid"].chunk(0).dictionary if table.num_rows else strings([])
    wanted = np.flatnonzero(as_numpy(pc.is_in(dictionary, value_set=qids.cast(dictionary.type))))
    sizes = grouped.starts[wanted + 1] - grouped.starts[wanted]
    positions = np.arange(int(sizes.sum())) + np.repeat(grouped.starts[wanted] - np.cumsum(sizes) + sizes, sizes)
    rows = np.sort(grouped.order[positions])
    selected = table.take(from_numpy(rows))
    qid = one_array(selected["qid"]).dictionary_decode().dictionary_encode()  # only the selected queries
    selected = selected.set_column(selected.column_names.index("qid"), "qid", qid).combine_chunks()
    pairs, _ = index_pairs(selected)  # the qrels have no repeated pair: read_qrels checked them
    return Qrels(path=grouped.qrels.path, table=selected, pairs=pairs)
