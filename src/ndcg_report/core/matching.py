"""Match a run to its qrels: query codes in trec_eval's order, the run lines with a judgement.

Query ids become integer codes (qid_codes); the qrels' queries are numbered in byte order of their
ids, as trec_eval prints them (qrels_queries), and a run's queries are mapped onto those numbers
(run_to_qrels). A run line is judged when the qrels hold its exact (query, docid): judged_pairs
finds the pairs by their keys and keeps only exact matches.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.inputs.pair_index import PairIndex, candidate_matches


def qid_codes(table: pa.Table) -> tuple[pa.Array, np.ndarray]:
    """(the distinct qids, an Arrow string array; the code of each row into it)."""
    column = one_array(table["qid"])
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    return column.dictionary, as_numpy(column.indices)


def qrels_queries(qrels: pa.Table) -> tuple[pa.Array, np.ndarray]:
    """(the qrels' distinct qids in byte order, as trec_eval prints them; each row's code into them)."""
    qrels_qids, qrels_codes = qid_codes(qrels)
    order = as_numpy(pc.sort_indices(qrels_qids))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    return qrels_qids.take(from_numpy(order)), position[qrels_codes]  # codes in that order


def run_to_qrels(run_qids: pa.Array, qrels_qids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(the qrels code of each of the run's qids, a run-only qid numbered after the qrels' queries;
    which qids are run-only)."""
    n_queries = len(qrels_qids)
    run_to_code = as_numpy_or(pc.index_in(run_qids, value_set=qrels_qids), -1).astype(np.intp)
    run_only = run_to_code < 0
    run_to_code[run_only] = n_queries + np.arange(int(run_only.sum()))
    return run_to_code, run_only


def judged_run_lines(
    run_to_code: np.ndarray, run_codes_local: np.ndarray, run: pa.Table, run_pairs: PairIndex,
    qrels_codes: np.ndarray, qrels: pa.Table, qrels_pairs: PairIndex,
) -> tuple[np.ndarray, np.ndarray]:
    """(run row, qrels label) of every run line that has a judgement (see judged_pairs)."""
    rows, qrows = judged_pairs(run_to_code, run_codes_local, run, run_pairs, qrels_codes, qrels, qrels_pairs)
    return rows, column_numpy(qrels, "rel")[qrows]


def judged_pairs(
    run_to_code: np.ndarray, run_codes_local: np.ndarray, run: pa.Table, run_pairs: PairIndex,
    qrels_codes: np.ndarray, qrels: pa.Table, qrels_pairs: PairIndex,
) -> tuple[np.ndarray, np.ndarray]:
    """(run row, qrels row) of every run line that has a judgement. run_to_code maps the run's qid
    codes to the qrels' (a run-only query to a code no judgement has).

    Lines whose (query, docid) keys agree are candidates; only those with equal query and docid
    are kept, so a key collision can never attach a wrong label.
    """
    rows, qrows = candidate_matches(run_pairs, qrels_pairs)
    same = run_to_code[run_codes_local[rows]] == qrels_codes[qrows]
    same &= as_numpy(pc.equal(run["docid"].take(from_numpy(rows)), qrels["docid"].take(from_numpy(qrows))))
    return rows[same], qrows[same]
