"""select_queries: the qrels of some queries give every number evaluate() gives with the whole
qrels, also when every pair key collides, whether the qrels come grouped by query or not."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.inputs import duplicates
from ndcg_report.inputs.duplicates import index_pairs
from ndcg_report.inputs.reading import Run, read_qrels, read_run
from ndcg_report.inputs.selection import group_by_query, select_queries

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
ARRAYS = ("num_ret", "num_rel", "num_rel_graded", "in_run", "values", "averaged", "dcg", "idcg", "judged")


def run_of(table: pa.Table) -> Run:
    qid = table["qid"].combine_chunks().dictionary_decode().dictionary_encode()
    table = table.set_column(0, "qid", qid).combine_chunks()
    return Run(path="", table=table, tag="", pairs=index_pairs(table)[0])


@pytest.mark.parametrize("collide", [False, True])
def test_selected_qrels_evaluate_a_part_of_the_run_exactly_as_the_whole_qrels(monkeypatch, tmp_path, collide):
    if collide:  # every pair gets the same key: only the string checks tell pairs apart
        monkeypatch.setattr(duplicates, "pair_keys", lambda qids, docids: np.zeros(len(docids), np.uint64))
    qrels = read_qrels(DL19 / "qrels.dl19-passage.txt")
    run = read_run(DL19 / "monot5.dl19.run.gz").table
    if collide:  # equal keys make every lookup walk all entries: keep it small
        run = run.slice(0, 3000)  # three queries
        queries = set(run["qid"].combine_chunks().dictionary_decode().to_pylist())
        keep = [line for line in (DL19 / "qrels.dl19-passage.txt").read_text().splitlines()
                if line.split()[0] in queries or line.startswith("19335 ")]  # and one query the part lacks
        (tmp_path / "qrels.txt").write_text("\n".join(keep) + "\n")
        qrels = read_qrels(tmp_path / "qrels.txt")
    qids = run["qid"].combine_chunks().dictionary_decode().unique()
    rng = np.random.default_rng(3)
    for size in (1, 3, 8) if collide else (1, 5, 20):
        chosen = pa.array(sorted(rng.choice(qids.to_pylist(), size=min(size, len(qids)), replace=False)) + ["not-a-query"])
        rows = np.flatnonzero(np.isin(np.asarray(run["qid"].to_pylist(), dtype=object), chosen.to_pylist()))
        part = run_of(run.take(pa.array(rows)))
        selected = select_queries(qrels, chosen)
        judged = set(qrels.table["qid"].chunk(0).dictionary.to_pylist())
        assert set(selected.table["qid"].chunk(0).dictionary.to_pylist()) == set(chosen.to_pylist()) & judged
        assert selected.table.num_rows == int(np.isin(np.asarray(qrels.table["qid"].to_pylist(), dtype=object),
                                                      chosen.to_pylist()).sum())
        assert selected.table.equals(select_queries(group_by_query(qrels), chosen).table)
        assert list(selected.table["docid"].to_pylist()) == [  # file order kept
            d for q, d in zip(qrels.table["qid"].to_pylist(), qrels.table["docid"].to_pylist()) if q in chosen.to_pylist()]
        whole, alone = evaluate(part, qrels, "1,10,100,all"), evaluate(part, selected, "1,10,100,all")
        at = np.isin(whole.qids, alone.qids)
        assert list(whole.qids[at]) == list(alone.qids) and alone.in_run.all() and (alone.num_ret > 0).all()
        assert (alone.dcg[:, -1] > 0).any()  # judged lines were found
        for name in ARRAYS:
            assert np.array_equal(getattr(whole, name)[at], getattr(alone, name), equal_nan=True), name
