"""Evaluate a run in parts that hold whole queries, and merge the parts into one Evaluation.

The parts are blocks of a streamed file or the files of a Parquet dataset partitioned by query:
each part is evaluated against the same qrels, its own queries' rows kept, then merged into one
Evaluation equal to evaluate() of the whole run.

The evaluation of one Parquet file (evaluate_partition) runs anywhere the files are readable, as a
task of any concurrent.futures.Executor (a Dask client's, see cli `eval --dask`): it returns only
the rows of the queries it retrieved and its query ids, and the merge checks no query is in two files.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.measures.names import Measure, resolve_measures
from ndcg_report.core.evaluation import Evaluation, QueryCounts
from ndcg_report.core.evaluation_pass import check_max_retrieved, evaluate_pass
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.inputs.columns import as_numpy, from_numpy, strings
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.formats.parquet import no_rows_error, parquet_files, parquet_row_count
from ndcg_report.inputs.reading import Qrels, Run, read_qrels, read_run
from ndcg_report.inputs.selection import QrelsByQuery, select_queries

PER_QUERY = ("num_ret", "num_rel", "num_rel_graded", "in_run", "values", "averaged", "dcg", "idcg", "judged")


@dataclass(frozen=True)
class Options:
    """What every part is evaluated with: evaluate()'s arguments besides the run and the qrels."""

    measures: tuple[Measure, ...]
    rel_level: float
    gain: str = "linear"
    missing: str = "zero"
    no_relevant: str = "zero"
    identical_ids: str = "keep"
    max_retrieved: int | None = None  # trec_eval's -M: only a query's first N lines count

    @classmethod
    def of(cls, cutoffs: str | Sequence | None = None, gain: str = "linear", missing: str = "zero",
           no_relevant: str = "zero", measures: object = None, rel_level: object = None,
           identical_ids: str = "keep", max_retrieved: int | None = None) -> "Options":
        """evaluate()'s arguments, the measures resolved once (see core.measures.names.resolve_measures)."""
        asked = resolve_measures(measures, cutoffs, rel_level)
        check_max_retrieved(max_retrieved)
        return cls(asked.measures, asked.rel_level, gain, missing, no_relevant, identical_ids, max_retrieved)

    def evaluate(self, run: object, qrels: object) -> Evaluation:
        return evaluate_pass(run, qrels, None, self.gain, self.missing, self.no_relevant, measures=self.measures,
                             rel_level=self.rel_level, identical_ids=self.identical_ids,
                             max_retrieved=self.max_retrieved)


@dataclass(frozen=True)
class QueryRows:
    """What one part of a run adds to the whole: the rows (PER_QUERY arrays) of the qrels queries it
    retrieved, in `qids` order, and its counts."""

    qids: np.ndarray  # object array of str
    values: dict[str, np.ndarray]
    run_queries: int  # queries of the part, in the qrels or not
    run_only: int
    tied_lines: int
    identical_dropped: int = 0


@dataclass(frozen=True)
class Partition:
    """One file of a run dataset, evaluated: its rows and every query id it holds."""

    file: str
    run_qids: np.ndarray  # object array of str
    rows: QueryRows


def rows_of(evaluation: Evaluation) -> QueryRows:
    """The rows of the queries an evaluation's run retrieved (the rest depend on the qrels only)."""
    present = evaluation.in_run
    return QueryRows(qids=evaluation.qids[present], values={name: getattr(evaluation, name)[present] for name in PER_QUERY},
                     run_queries=evaluation.counts.in_run, run_only=evaluation.counts.run_only,
                     tied_lines=evaluation.tied_lines, identical_dropped=evaluation.identical_dropped)


def merge(parts: Iterable[QueryRows], absent: Evaluation) -> Evaluation:
    """One Evaluation from parts whose queries are disjoint and `absent` (see absent_queries): the
    evaluation against the same qrels, with the same options, of the qrels queries no part retrieved.
    Rows in trec_eval's qid order, as evaluate() of the whole run gives them."""
    parts = list(parts)
    holding = [part for part in parts if len(part.qids)]  # a part may hold only queries not in the qrels
    qids = np.concatenate([part.qids for part in holding] + [absent.qids])
    order = as_numpy(pc.sort_indices(strings(qids.tolist())))  # byte order of the ids, as evaluate sorts them
    arrays = {name: np.concatenate([part.values[name] for part in holding] + [getattr(absent, name)])[order]
              for name in PER_QUERY}
    in_run, averaged, has_relevant = arrays["in_run"], arrays["averaged"], arrays["num_rel_graded"] > 0
    counts = QueryCounts(
        in_run=sum(part.run_queries for part in parts), in_qrels=len(qids), in_both=int(in_run.sum()),
        missing=int((~in_run & has_relevant).sum()), no_relevant=int((~has_relevant).sum()),
        run_only=sum(part.run_only for part in parts), averaged=int(averaged.any(axis=1).sum()),
        below_level=int((arrays["num_rel"] == 0).sum()),
    )
    return Evaluation(qids=qids[order], **arrays, measures=absent.measures, depths=absent.depths, counts=counts,
                      gain=absent.gain, missing=absent.missing, no_relevant=absent.no_relevant,
                      rel_level=absent.rel_level, tied_lines=sum(part.tied_lines for part in parts),
                      identical_ids=absent.identical_ids,
                      identical_dropped=sum(part.identical_dropped for part in parts),
                      max_retrieved=absent.max_retrieved)


def absent_queries(qrels: Qrels | QrelsByQuery, retrieved: Collection[str], options: Options) -> Evaluation:
    """evaluate() of a run that retrieved nothing against the qrels of the queries not in `retrieved`:
    their rows depend on the qrels only."""
    table = (qrels.qrels if isinstance(qrels, QrelsByQuery) else qrels).table
    dictionary = table["qid"].chunk(0).dictionary.to_pylist() if table.num_rows else []
    empty = pa.table({"qid": strings([]).dictionary_encode(), "docid": strings([]),
                      "score": from_numpy(np.zeros(0))}).combine_chunks()
    pairs, _ = index_pairs(empty)
    absent = select_queries(qrels, strings([qid for qid in dictionary if qid not in retrieved]))
    return options.evaluate(Run(path="", table=empty, tag="", pairs=pairs), absent)


def evaluate_partition(file: str, qrels: str, options: Options) -> Partition:
    """One Parquet file of a run (read and checked as read_run does; errors name the file and its
    row) evaluated against the qrels file: its own queries' rows and its query ids."""
    try:
        empty = parquet_row_count(Path(file)) == 0  # a dataset may hold empty files; the whole may not be empty
    except (pa.ArrowInvalid, OSError):
        empty = False  # read_run says what is wrong with the file
    if empty:
        return Partition(file, np.array([], dtype=object), QueryRows(np.array([], dtype=object), {}, 0, 0, 0))
    run = read_run(file)
    queries = run.table["qid"].chunk(0).dictionary
    evaluation = options.evaluate(run, select_queries(read_qrels(qrels), queries))
    run_qids = np.asarray(queries.to_pylist(), dtype=object)
    return Partition(file, run_qids, rows_of(evaluation))


def evaluate_partitioned(run: str | Path, qrels: Qrels, executor: Executor, options: Options) -> Evaluation:
    """evaluate() of a Parquet run, one executor task per file, each reading its file and the qrels
    file again (both paths must be readable where tasks run); InputError if a query is in two files
    (the dataset is not partitioned by query)."""
    if not qrels.path:
        raise ParameterError("the qrels must be a file the tasks can read, not a table")
    files = [os.path.abspath(file) for file in parquet_files(Path(run))]  # tasks may run in another folder
    task = partial(evaluate_partition, qrels=os.path.abspath(qrels.path), options=options)
    partitions = list(executor.map(task, files))
    check_partitioned_by_query(partitions)
    if not any(len(partition.run_qids) for partition in partitions):
        raise no_rows_error(Path(run), len(files), "run")
    retrieved = set().union(*(partition.run_qids.tolist() for partition in partitions))
    return merge([partition.rows for partition in partitions], absent_queries(qrels, retrieved, options))


def check_partitioned_by_query(partitions: Sequence[Partition]) -> None:
    """InputError naming the first query found in two files, and both files."""
    sizes = [len(partition.run_qids) for partition in partitions]
    if not sum(sizes):
        return
    qids = pa.array(np.concatenate([partition.run_qids for partition in partitions]), pa.string()).dictionary_encode()
    codes = as_numpy(qids.indices)
    counts = np.bincount(codes, minlength=len(qids.dictionary))
    if counts.max() < 2:
        return
    owner = np.repeat(np.arange(len(partitions)), sizes)
    repeated = np.flatnonzero(counts[codes] > 1)
    code = codes[repeated[0]]
    first, second = owner[codes == code][:2]
    qid = qids.dictionary[code].as_py()
    raise InputError(partitions[second].file, None,
                     f"query {qid!r} is also in {partitions[first].file}: the dataset is not partitioned by query, "
                     "so its files cannot be evaluated one task each",
                     "write each query's rows to one file (partition by qid), or evaluate without --dask")
