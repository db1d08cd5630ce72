"""What a run put where: the top k of each judged query with the documents' labels, the rank of every
relevant judgement in the run, the pool of unjudged documents over several runs, and how much two
rankings of a query agree (rank-biased overlap). Ranks are trec_eval's (core/ranking.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.metrics import judged_pairs, qid_codes
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run

RBO_PERSISTENCE = 0.9  # rank-biased overlap's p: the top 10 carries about 86% of the weight


@dataclass(frozen=True)
class Rankings:
    """One run against the qrels. `top`: the first `depth` documents of every query that is both in the
    run and in the qrels (qid, rank from 1, docid, label, relevant; label null where the document is
    unjudged, relevant where label >= the level), by qid then rank. `relevant`: every judgement with label >= the level (qid, docid, label, rank in
    the run or null where the run did not retrieve it), by qid then label descending then docid."""

    top: pa.Table
    relevant: pa.Table
    depth: int


def rankings(run: RunLike, qrels: QrelsLike, depth: int = 10, rel_level: float = 1.0) -> Rankings:
    """The top `depth` of each judged query of the run and the rank of each relevant judgement (see Rankings)."""
    run_read, qrels_read = load_run(run), load_qrels(qrels)
    table, judgements = run_read.table, qrels_read.table
    qrels_qids, qrels_codes = qid_codes(judgements)
    run_qids, run_codes = qid_codes(table)
    run_to_code = as_numpy_or(pc.index_in(run_qids, value_set=qrels_qids), -1).astype(np.intp)
    judged_rows, judged_qrows = judged_pairs(
        np.where(run_to_code >= 0, run_to_code, len(qrels_qids) + np.arange(len(run_to_code))), run_codes, table,
        run_read.pairs, qrels_codes, judgements, qrels_read.pairs)
    ranks = rank_within_query(run_codes, column_numpy(table, "score"), one_array(table["docid"]),
                              n_queries=len(run_qids)).rank
    labels_all = column_numpy(judgements, "rel")
    label_of_row = np.full(table.num_rows, np.nan)
    label_of_row[judged_rows] = labels_all[judged_qrows]

    shown = np.flatnonzero((ranks < depth) & (run_to_code[run_codes] >= 0))
    qids = run_qids.take(from_numpy(run_codes[shown]))
    order = as_numpy(pc.sort_indices(pa.table({"qid": qids, "rank": from_numpy(ranks[shown])}),
                                     sort_keys=[("qid", "ascending"), ("rank", "ascending")]))
    shown = shown[order]
    labels = label_of_row[shown]
    top = pa.table({
        "qid": qids.take(from_numpy(order)), "rank": from_numpy(ranks[shown] + 1),
        "docid": one_array(table["docid"]).take(from_numpy(shown)).cast(pa.string()),
        "label": pa.array(labels, mask=np.isnan(labels)),
        "relevant": pa.array(np.nan_to_num(labels, nan=-np.inf) >= rel_level),
    })

    wanted = np.flatnonzero(labels_all >= rel_level)
    rank_of_judgement = np.full(judgements.num_rows, -1, dtype=np.int64)
    rank_of_judgement[judged_qrows] = ranks[judged_rows]
    relevant = pa.table({
        "qid": qrels_qids.take(from_numpy(qrels_codes[wanted])),
        "docid": one_array(judgements["docid"]).take(from_numpy(wanted)).cast(pa.string()),
        "label": from_numpy(labels_all[wanted]),
        "rank": pa.array(rank_of_judgement[wanted] + 1, mask=rank_of_judgement[wanted] < 0),
    })
    order = pc.sort_indices(relevant, sort_keys=[("qid", "ascending"), ("label", "descending"), ("docid", "ascending")])
    return Rankings(top=top, relevant=relevant.take(order), depth=depth)


def unjudged_pool(tops: Mapping[str, pa.Table]) -> pa.Table:
    """The depth-k pool of unlabelled documents over several runs' `Rankings.top`: one row per (qid,
    docid) that some run put in its top k without a label, with the best rank any run gave it, how
    many runs did and which (a JSON list of names, in the order given); by qid, then the number of
    runs (most first), the best rank and the docid: the order to judge them in."""
    parts = []
    for position, (name, top) in enumerate(tops.items()):
        unlabelled = top.filter(pc.is_null(top["label"]))
        parts.append(pa.table({"qid": unlabelled["qid"], "docid": unlabelled["docid"], "rank": unlabelled["rank"],
                               "system": pa.array(np.full(unlabelled.num_rows, position, dtype=np.int64))}))
    names = list(tops)
    lines = pa.concat_tables(parts) if parts else pa.table({"qid": [], "docid": [], "rank": [], "system": []})
    grouped = lines.group_by(["qid", "docid"], use_threads=False).aggregate(
        [("rank", "min"), ("system", "count"), ("system", "list")])
    systems = [json.dumps([names[i] for i in sorted(found)], ensure_ascii=False)
               for found in grouped["system_list"].to_pylist()]
    pool = pa.table({"qid": grouped["qid"], "docid": grouped["docid"], "best_rank": grouped["rank_min"],
                     "n_systems": grouped["system_count"], "systems": pa.array(systems, pa.string())})
    order = pc.sort_indices(pool, sort_keys=[("qid", "ascending"), ("n_systems", "descending"),
                                             ("best_rank", "ascending"), ("docid", "ascending")])
    return pool.take(order)


def pool_tsv(pool: pa.Table) -> str:
    """unjudged.tsv: a header, then `qid docid best_rank n_systems systems` tab-separated, one line each."""
    lines = ["qid\tdocid\tbest_rank\tn_systems\tsystems"]
    lines += [f"{q}\t{d}\t{r}\t{n}\t{s}" for q, d, r, n, s in zip(*(pool[c].to_pylist() for c in pool.column_names))]
    return "\n".join(lines) + "\n"


def rank_biased_overlap(base: pa.Table, other: pa.Table, qids: list[str], depth: int,
                        p: float = RBO_PERSISTENCE) -> np.ndarray:
    """Extrapolated rank-biased overlap (Webber, Moffat and Zobel, TOIS 2010) of two runs' top `depth`
    (Rankings.top) for each of `qids`: 1 for the same list, 0 for no document in common; NaN where
    either run has nothing for the query. Vectorised over the queries."""
    codes = pa.concat_arrays([one_array(base["docid"]), one_array(other["docid"])]).dictionary_encode()
    doc_codes = as_numpy(codes.indices)
    lists = []
    for table, offset in ((base, 0), (other, base.num_rows)):
        grid = np.full((len(qids), depth), -1, dtype=np.int64)
        row = as_numpy_or(pc.index_in(one_array(table["qid"]), value_set=pa.array(qids, pa.string())), -1)
        rank = as_numpy(one_array(table["rank"])) - 1
        keep = (row >= 0) & (rank < depth)
        grid[row[keep], rank[keep]] = doc_codes[offset: offset + table.num_rows][keep]
        lists.append(grid)
    a, b = lists
    found = (a >= 0).any(axis=1) & (b >= 0).any(axis=1)
    # where each of b's documents sits in a (depth if absent), so overlap at depth d counts b's first d
    # documents that a has in its first d
    position = np.full(b.shape, depth, dtype=np.int64)
    for i in range(depth):
        hit = (b == a[:, [i]]) & (b >= 0)
        position[hit] = np.minimum(position[hit], i)
    d = np.arange(1, depth + 1)
    overlap = np.stack([((np.arange(depth) < k)[None, :] & (position < k)).sum(axis=1) for k in d], axis=1)
    agreement = overlap / d
    weights = (1 - p) / p * p ** d
    rbo = agreement[:, -1] * p ** depth + (agreement * weights).sum(axis=1)  # RBO_ext at depth
    return np.where(found, rbo, np.nan)
