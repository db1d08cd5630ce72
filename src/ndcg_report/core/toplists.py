"""What a run put where: the top k of each judged query with the documents' labels, the rank of every
relevant judgement in the run, the pool of unjudged documents over several runs, and how much two
rankings of a query agree (rank-biased overlap). Ranks are trec_eval's (core/ranking.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.metrics import judged_pairs, qid_codes
from ndcg_report.core.number_text import integer_text, text_bytes
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.inputs.columns import text as text_scalar
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run

RBO_PERSISTENCE = 0.9  # rank-biased overlap's p: the top 10 carries about 86% of the weight


@dataclass(frozen=True)
class Rankings:
    """One run against the qrels. `top`: the first `depth` documents of every query that is both in the
    run and in the qrels (qid, query: its number in byte order of the qrels' qids, rank from 1, docid,
    label, relevant; label null where the document is unjudged, relevant where label >= the level),
    by qid then rank. `relevant`: every judgement with label >= the level (qid, docid, label, rank in
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
    codes = run_to_code[run_codes[shown]]  # qrels codes: sorted by them, queries come in byte order of their ids
    by_qid = as_numpy(pc.sort_indices(qrels_qids))
    position = np.empty(len(by_qid), dtype=np.int64)
    position[by_qid] = np.arange(len(by_qid))
    shown = shown[np.lexsort((ranks[shown], position[codes]))]
    labels = label_of_row[shown]
    top = pa.table({
        "qid": qrels_qids.take(from_numpy(run_to_code[run_codes[shown]])).cast(pa.string()),
        "query": from_numpy(position[run_to_code[run_codes[shown]]]),  # the qid's place in byte order
        "rank": from_numpy(ranks[shown] + 1),
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
    names = list(tops)
    if len(names) > 62:
        raise ValueError("pool at most 62 runs at once")
    parts = []
    for position, top in enumerate(tops.values()):
        unlabelled = top.filter(pc.is_null(top["label"]))
        parts.append(pa.table({"query": unlabelled["query"], "docid": unlabelled["docid"], "qid": unlabelled["qid"],
                               "rank": unlabelled["rank"],
                               "runs": pa.array(np.full(unlabelled.num_rows, 1 << position, dtype=np.int64))}))
    empty = pa.table({"query": pa.array([], pa.int64()), "docid": pa.array([], pa.string()),
                      "qid": pa.array([], pa.string()), "rank": pa.array([], pa.int64()), "runs": pa.array([], pa.int64())})
    lines = pa.concat_tables(parts) if parts else empty
    rep, best, masks = _group_pairs(lines)
    present = np.flatnonzero(np.bincount(masks, minlength=2)) if len(names) <= 20 else np.unique(masks)
    slot = np.zeros(int(present.max(initial=0)) + 1, dtype=np.int64)  # a mask's row in `present`
    slot[present] = np.arange(len(present))
    which = from_numpy(slot[masks] if len(names) <= 20 else np.searchsorted(present, masks))
    members = [[names[i] for i in range(len(names)) if mask >> i & 1] for mask in present.tolist()]
    rows = from_numpy(rep)
    pool = pa.table({
        "qid": one_array(lines["qid"]).take(rows), "docid": one_array(lines["docid"]).take(rows),
        "best_rank": from_numpy(best),
        "n_systems": from_numpy(np.array([len(found) for found in members], dtype=np.int64)).take(which),
        "systems": pa.array([json.dumps(found, ensure_ascii=False) for found in members], pa.string()).take(which),
        "query": one_array(lines["query"]).take(rows),
    })
    order = pc.sort_indices(pool, sort_keys=[("query", "ascending"), ("n_systems", "descending"),
                                             ("best_rank", "ascending"), ("docid", "ascending")])
    return pool.take(order).drop_columns(["query"])


def _group_pairs(lines: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a line of each distinct (query, docid), its best rank, the sum of its `runs` bits)."""
    grouped = pa.table({"query": lines["query"], "docid": lines["docid"],
                        "line": from_numpy(np.arange(lines.num_rows, dtype=np.int64)),
                        "rank": lines["rank"], "runs": lines["runs"]}).group_by(["query", "docid"], use_threads=False)
    grouped = grouped.aggregate([("line", "min"), ("rank", "min"), ("runs", "sum")])
    return (as_numpy(one_array(grouped["line_min"])), as_numpy(one_array(grouped["rank_min"])),
            as_numpy(one_array(grouped["runs_sum"])))


POOL_HEADER = "qid\tdocid\tbest_rank\tn_systems\tsystems\n"
_ROWS_PER_CHUNK = 500_000


def pool_tsv_chunks(pool: pa.Table) -> Iterator[bytes | memoryview]:
    """unjudged.tsv as byte chunks: a header, then `qid docid best_rank n_systems systems` tab-separated,
    one line each, joined by vectorised Arrow string operations."""
    yield POOL_HEADER.encode("utf-8")
    tab = text_scalar("\t")
    for start in range(0, pool.num_rows, _ROWS_PER_CHUNK):
        part = pool.slice(start, _ROWS_PER_CHUNK)
        cells = [one_array(part["qid"]), one_array(part["docid"]), integer_text(column_numpy(part, "best_rank")),
                 integer_text(column_numpy(part, "n_systems")), one_array(part["systems"])]
        yield text_bytes(_tsv_lines(cells, tab))


def _tsv_lines(cells: list[pa.Array], tab: pa.Scalar) -> pa.Array:
    """The cells joined by tabs, each line ended by a newline."""
    parts = []
    for cell in cells:
        parts += [cell, tab]
    parts[-1] = text_scalar("\n")
    return pc.binary_join_element_wise(*parts, text_scalar(""))


def pool_tsv(pool: pa.Table) -> str:
    """unjudged.tsv as one string (pool_tsv_chunks joined)."""
    return b"".join(bytes(chunk) for chunk in pool_tsv_chunks(pool)).decode("utf-8")


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
    # where each of b's documents sits in a (depth if absent): b's i-th document is in both first d
    # documents from depth d = max(i, its place in a) + 1 on, so a histogram of those depths, summed
    # up, gives the overlap at every depth
    position = np.full(b.shape, depth, dtype=np.int64)
    for i in range(depth):
        hit = (b == a[:, [i]]) & (b >= 0)
        position[hit] = i
    entering = np.maximum(np.arange(depth)[None, :], position)  # depth index (0-based) from which it counts
    counts = np.bincount((np.arange(len(b))[:, None] * (depth + 1) + entering).ravel(),
                         minlength=len(b) * (depth + 1)).reshape(len(b), depth + 1)
    overlap = np.cumsum(counts[:, :depth], axis=1)
    d = np.arange(1, depth + 1)
    agreement = overlap / d
    weights = (1 - p) / p * p ** d
    rbo = agreement[:, -1] * p ** depth + (agreement * weights).sum(axis=1)  # RBO_ext at depth
    return np.where(found, rbo, np.nan)
