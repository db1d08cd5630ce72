"""What a run put where: top k with labels, ranks of the relevant, unjudged pools, rank overlap.

The top k of each judged query with the documents' labels, the rank of every relevant judgement in
the run, the pool of unjudged documents over several runs, and how much two rankings of a query
agree (rank-biased overlap). Ranks are trec_eval's (core/ranking.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.matching import judged_pairs, qid_codes
from ndcg_report.core.number_text import integer_text, text_bytes
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.inputs.columns import as_numpy, as_numpy_or, column_numpy, from_numpy, one_array
from ndcg_report.inputs.fingerprints import string_fingerprints
from ndcg_report.inputs.columns import text as text_scalar
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run

RBO_PERSISTENCE = 0.9  # rank-biased overlap's p: the top 10 carries about 86% of the weight


@dataclass(frozen=True)
class Rankings:
    """One run against the qrels. `top`: the first `depth` documents of every query that is both in the
    run and in the qrels (qid, query: its number in byte order of the qrels' qids, rank from 1, docid,
    label, relevant; label null where the document is unjudged, relevant where label >= the level),
    by qid then rank. `relevant`: every judgement with label >= the level (qid, docid, label, rank in
    the run or null where the run did not retrieve it), by qid then label descending then docid.
    `unjudged_queries`: as `top`, for the run's queries that have no judgement at all (label null,
    query numbered in byte order among them), which a judging pool needs most; see pool_top."""

    top: pa.Table
    relevant: pa.Table
    depth: int
    unjudged_queries: pa.Table | None = None

    def pool_top(self) -> pa.Table:
        """`top` and `unjudged_queries` together: what the run adds to a depth-k judging pool
        (unjudged_pool numbers the queries of all the runs anew)."""
        if self.unjudged_queries is None or self.unjudged_queries.num_rows == 0:
            return self.top
        return pa.concat_tables([self.top, self.unjudged_queries.cast(self.top.schema)])


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
    return Rankings(top=top, relevant=relevant.take(order), depth=depth,
                    unjudged_queries=_unjudged_queries(table, run_qids, run_codes, run_to_code < 0, ranks, depth))


def _unjudged_queries(table: pa.Table, run_qids: pa.Array, run_codes: np.ndarray, outside: np.ndarray,
                      ranks: np.ndarray, depth: int) -> pa.Table:
    """Rankings.unjudged_queries: the top `depth` of the run's queries that are not in the qrels
    (`outside`, per run qid), by qid then rank, with null labels."""
    qids = run_qids.cast(pa.string())
    order = as_numpy(pc.sort_indices(qids))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    shown = np.flatnonzero((ranks < depth) & outside[run_codes])
    shown = shown[np.lexsort((ranks[shown], position[run_codes[shown]]))]
    return pa.table({
        "qid": qids.take(from_numpy(run_codes[shown])),
        "query": from_numpy(position[run_codes[shown]]),
        "rank": from_numpy(ranks[shown] + 1),
        "docid": one_array(table["docid"]).take(from_numpy(shown)).cast(pa.string()),
        "label": pa.nulls(len(shown), pa.float64()),
        "relevant": pa.array(np.zeros(len(shown), dtype=bool)),
    })


def unjudged_pool(tops: Mapping[str, pa.Table]) -> pa.Table:
    """The depth-k pool of unlabelled documents over several runs' `Rankings.top`: one row per (qid,
    docid) that some run put in its top k without a label, with the best rank any run gave it, how
    many runs did and which (a JSON list of names, in the order given; dictionary-encoded); by qid, then the number of
    runs (most first), the best rank, then the first run (in the order given) that ranked it there:
    the order to judge them in."""
    names = list(tops)
    if len(names) > _MAX_POOLED:
        raise ValueError(f"pool at most {_MAX_POOLED} runs at once")
    tables = _numbered_alike(list(tops.values()))
    numbers = [column_numpy(top, "query") for top in tables]
    n_queries = max((int(number.max()) + 1 for number in numbers if len(number)), default=0)
    if n_queries <= _QUERIES_PER_BLOCK:
        return _pool_block(names, tables)
    parts = []  # a block of queries at a time: the working arrays stay a few times the block's lines
    for start in range(0, n_queries, _QUERIES_PER_BLOCK):
        bounds = [np.searchsorted(number, [start, start + _QUERIES_PER_BLOCK]) for number in numbers]
        parts.append(_pool_block(names, [top.slice(lo, hi - lo) for top, (lo, hi) in zip(tables, bounds)]))
    return pa.concat_tables(parts)


_QUERIES_PER_BLOCK = 1 << 15


def _numbered_alike(tops: list[pa.Table]) -> list[pa.Table]:
    """The tops with their `query` numbers made one numbering (byte order of every qid of any of them)
    and their rows by query then rank: a Rankings.top alone is numbered among the qrels' queries, so
    tops holding queries without any judgement (Rankings.pool_top) are numbered again here."""
    if not any(top.num_rows for top in tops):
        return tops
    qids = pc.unique(pa.concat_arrays([one_array(top["qid"]).cast(pa.string()) for top in tops]))
    qids = qids.take(pc.sort_indices(qids))
    numbered = []
    for top in tops:
        query = as_numpy(pc.index_in(one_array(top["qid"]).cast(pa.string()), value_set=qids)).astype(np.int64)
        order = np.lexsort((column_numpy(top, "rank"), query))
        top = top.take(from_numpy(order))
        numbered.append(top.set_column(top.schema.get_field_index("query"), "query", from_numpy(query[order])))
    return numbered


def pool_query_counts(pool: pa.Table, qrels: pa.Table) -> tuple[int, int]:
    """(the queries of an unjudged pool, how many of them have no judgement at all in the qrels)."""
    queries = pc.unique(one_array(pool["qid"]).cast(pa.string()))
    judged = pc.unique(one_array(qrels["qid"]).cast(pa.string()))
    inside = pc.sum(pc.is_in(queries, value_set=judged).cast(pa.int64())).as_py() or 0
    return len(queries), len(queries) - int(inside)


def _pool_block(names: list[str], tables: list[pa.Table]) -> pa.Table:
    """unjudged_pool of `tables` (Rankings.top of the runs `names`, or the same slice of queries of each)."""
    unlabelled = np.flatnonzero(np.concatenate(
        [np.zeros(0, dtype=bool)] + [as_numpy(pc.is_null(one_array(top["label"]))).astype(bool) for top in tables]))
    if len(unlabelled) == 0:
        return pa.table({"qid": pa.array([], pa.string()), "docid": pa.array([], pa.string()),
                         "best_rank": pa.array([], pa.int64()), "n_systems": pa.array([], pa.int64()),
                         "systems": pa.array([], pa.dictionary(pa.int32(), pa.string()))})
    docids = pa.concat_arrays([one_array(top["docid"]) for top in tables])
    query = np.concatenate([column_numpy(top, "query") for top in tables]).astype(np.int64)
    rank = np.concatenate([column_numpy(top, "rank") for top in tables]).astype(np.int64)[unlabelled]
    system = np.concatenate([np.full(top.num_rows, i, dtype=np.int64) for i, top in enumerate(tables)])[unlabelled]
    qid_of_query = _qid_of_query(tables, query)
    query = query[unlabelled]
    order, starts = _pair_groups(query, rank, system, docids, unlabelled)  # groups of equal (query, docid)
    first = order[starts]
    # each group's best rank and, among the runs giving it, the first: rank * 64 + run, least first
    best_key = np.minimum.reduceat(rank[order] * 64 + system[order], starts)
    masks = np.bitwise_or.reduceat(np.left_shift(1, system[order]), starts)
    group_query = query[first]
    if len(names) <= 20:  # a mask's place among the masks present, without sorting them
        present = np.flatnonzero(np.bincount(masks))
        slot = np.zeros(int(present[-1]) + 1, dtype=np.int64)
        slot[present] = np.arange(len(present))
        which = slot[masks]
    else:
        present, which = np.unique(masks, return_inverse=True)
    n_systems = _bit_counts(present)[which]
    within = _judging_order(group_query, n_systems, best_key)
    members = [json.dumps([names[i] for i in range(len(names)) if mask >> i & 1], ensure_ascii=False)
               for mask in present.tolist()]
    return pa.table({
        "qid": qid_of_query.take(from_numpy(group_query[within])),
        "docid": docids.take(from_numpy(unlabelled[first[within]])),
        "best_rank": from_numpy(best_key[within] // 64), "n_systems": from_numpy(n_systems[within]),
        "systems": pa.DictionaryArray.from_arrays(  # a few distinct lists over millions of rows
            from_numpy(which.ravel()[within].astype(np.int32)), pa.array(members, pa.string())),
    })


def _qid_of_query(tops: list[pa.Table], query: np.ndarray) -> pa.Array:
    """The qid of each query number of the tables (Rankings.top, rows by query; null if absent)."""
    numbers, qids, offset = [], [], 0
    for top in tops:
        part = query[offset: offset + top.num_rows]
        firsts = np.flatnonzero(np.concatenate(([True], part[1:] != part[:-1]))) if len(part) else part[:0]
        numbers.append(part[firsts])
        qids.append(one_array(top["qid"]).take(from_numpy(firsts)))
        offset += top.num_rows
    row = np.full(int(query.max(initial=0)) + 1, -1, dtype=np.int64)
    row[np.concatenate(numbers)] = np.arange(sum(len(n) for n in numbers))
    return pa.concat_arrays(qids).take(pa.array(row, mask=row < 0))


_MAX_POOLED = 62  # runs of a pool: one bit each in an int64


def _judging_order(query: np.ndarray, n_systems: np.ndarray, best_key: np.ndarray) -> np.ndarray:
    """The order of the groups by query, then n_systems descending, then best_key ascending."""
    span = int(best_key.max()) + 1
    if (int(query.max()) + 1) * 64 * span < 1 << 63:
        return np.argsort((query * 64 + (_MAX_POOLED - n_systems)) * span + best_key, kind="stable")
    return np.lexsort((best_key, -n_systems, query))


def _pair_groups(query: np.ndarray, rank: np.ndarray, system: np.ndarray, docids: pa.Array,
                 rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(an order of the lines, where each group of equal (query, docid) starts in it), groups by query;
    line i is docids[rows[i]] at query[i], rank[i] of run system[i].

    Each query's lines sit in a row of a grid (a column per run and rank) that is sorted by a
    fingerprint of the docid; every line is then checked against its group's first by its string.
    If two docids of a query ever share a fingerprint, or the grid would be much larger than the
    lines, the lines are sorted by (query, docid) exactly instead."""
    depth = int(rank.max())
    query = query - query.min()  # a block of queries may start anywhere
    n_queries, width = int(query.max()) + 1, (int(system.max()) + 1) * depth
    if n_queries * width <= 4 * len(query) + (1 << 20):
        fingerprint = string_fingerprints(docids)[rows] >> np.uint64(1)  # below the empty cells' value
        cell = query * width + system * depth + rank - 1
        grid = np.full(n_queries * width, np.iinfo(np.uint64).max, dtype=np.uint64)
        grid[cell] = fingerprint
        source = np.full(n_queries * width, -1, dtype=np.int64)
        source[cell] = np.arange(len(query))
        grid = grid.reshape(n_queries, width)
        columns = np.argsort(grid, axis=1)
        keys = np.take_along_axis(grid, columns, axis=1).ravel()
        order = np.take_along_axis(source.reshape(n_queries, width), columns, axis=1).ravel()
        filled = order >= 0
        keys, order = keys[filled], order[filled]
        group_query = query[order]
        new_group = np.concatenate(([True], (keys[1:] != keys[:-1]) | (group_query[1:] != group_query[:-1])))
        starts = np.flatnonzero(new_group)
        repeats = np.flatnonzero(~new_group)
        if len(repeats) == 0:
            return order, starts
        group_first = order[starts][np.cumsum(new_group)[repeats] - 1]
        if pc.all(pc.equal(docids.take(from_numpy(rows[order[repeats]])),
                           docids.take(from_numpy(rows[group_first])))).as_py():
            return order, starts
    lines = docids.take(from_numpy(rows))
    order = as_numpy(pc.sort_indices(pa.table({"query": from_numpy(query), "docid": lines}),
                                     sort_keys=[("query", "ascending"), ("docid", "ascending")]))
    pairs_differ = (query[order][1:] != query[order][:-1]) | ~as_numpy(pc.equal(
        lines.take(from_numpy(order[1:])), lines.take(from_numpy(order[:-1])))).astype(bool)
    return order, np.flatnonzero(np.concatenate(([True], pairs_differ)))


def _bit_counts(masks: np.ndarray) -> np.ndarray:
    """The number of set bits of each int64 mask."""
    counts = np.zeros(len(masks), dtype=np.int64)
    rest = masks.copy()
    while rest.any():
        counts += rest & 1
        rest >>= 1
    return counts


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
                 integer_text(column_numpy(part, "n_systems")), one_array(part["systems"].cast(pa.string()))]
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
    return rank_overlaps(base, {"other": other}, qids, depth, p)["other"]


def rank_overlaps(base: pa.Table, others: Mapping[str, pa.Table], qids: list[str], depth: int,
                  p: float = RBO_PERSISTENCE) -> dict[str, np.ndarray]:
    """rank_biased_overlap of base against each of others, base's grid and codes made once.

    Documents are matched by a 64-bit fingerprint of the docid, and each match is then confirmed by
    its string; if one ever is not, that pair of runs is matched by codes of its distinct docids
    instead (exact, slower). One other run at a time: the working arrays are a few times one run's
    top k of the queries, never all the runs' at once."""
    wanted = pa.array(qids, pa.string())
    base_docids = one_array(base["docid"])
    base_lines = _top_grid(base, wanted, depth)
    base_codes = _codes_at(base_lines, _fingerprint_codes(base_docids))
    found_base = (base_lines >= 0).any(axis=1)
    overlaps = {}
    for name, other in others.items():
        docids = one_array(other["docid"])
        lines = _top_grid(other, wanted, depth)
        place = _places_in(base_codes, _codes_at(lines, _fingerprint_codes(docids)))
        if not _confirmed(base_docids, base_lines, docids, lines, place):
            place = _exact_places(base_docids, base_lines, docids, lines)
        overlaps[name] = np.where(found_base & (lines >= 0).any(axis=1), _rbo(place, p), np.nan)
    return overlaps


def _fingerprint_codes(docids: pa.Array) -> np.ndarray:
    """A non-negative int64 per docid, a function of its bytes alone (string_fingerprints, halved)."""
    return (string_fingerprints(docids) >> np.uint64(1)).view(np.int64)


def _top_grid(top: pa.Table, qids: pa.Array, depth: int) -> np.ndarray:
    """A (len(qids), depth) grid of the rows of a Rankings.top, -1 where it has none."""
    grid = np.full((len(qids), depth), -1, dtype=np.int64)
    if top.num_rows == 0:
        return grid
    query = column_numpy(top, "query").astype(np.int64)
    first = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))  # a row of each query
    place = as_numpy_or(pc.index_in(qids, value_set=one_array(top["qid"]).take(from_numpy(first))), -1)
    row_of_query = np.full(int(query.max()) + 1, -1, dtype=np.int64)
    found = place >= 0
    row_of_query[query[first[place[found]]]] = np.flatnonzero(found)
    row = row_of_query[query]
    rank = column_numpy(top, "rank").astype(np.int64) - 1
    keep = np.flatnonzero((row >= 0) & (rank < depth))
    grid[row[keep], rank[keep]] = keep
    return grid


def _codes_at(lines: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The codes of a grid of lines (-1 stays -1)."""
    return np.where(lines >= 0, codes[np.maximum(lines, 0)], -1)


def _places_in(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each cell of grid b, the column of its code in the same row of grid a (a.shape[1] if absent)."""
    depth = a.shape[1]
    place = np.full(b.shape, depth, dtype=np.int64)
    for i in range(depth):
        place[(b == a[:, [i]]) & (b >= 0)] = i
    return place


def _confirmed(docids_a: pa.Array, a: np.ndarray, docids_b: pa.Array, b: np.ndarray, place: np.ndarray) -> bool:
    """Whether every cell of grid b (lines of docids_b) matched to a cell of grid a (lines of docids_a)
    holds the same docid string."""
    row, column = np.nonzero(place < a.shape[1])
    if len(row) == 0:
        return True
    return bool(pc.all(pc.equal(docids_b.take(from_numpy(b[row, column])),
                                docids_a.take(from_numpy(a[row, place[row, column]])))).as_py())


def _exact_places(docids_a: pa.Array, a: np.ndarray, docids_b: pa.Array, b: np.ndarray) -> np.ndarray:
    """_places_in of grids a and b by codes of the distinct docids of the two runs (no fingerprint)."""
    codes = as_numpy(pa.concat_arrays([docids_a, docids_b]).dictionary_encode().indices).astype(np.int64)
    return _places_in(_codes_at(a, codes[: len(docids_a)]), _codes_at(b, codes[len(docids_a):]))


def _rbo(place: np.ndarray, p: float) -> np.ndarray:
    """RBO_ext at depth of each row, from where each of the second list's documents sits in the first."""
    n, depth = place.shape
    # b's i-th document is in both first d documents from depth d = max(i, its place in a) + 1 on, so
    # a histogram of those depths, summed up, gives the overlap at every depth
    entering = np.maximum(np.arange(depth)[None, :], place)  # depth index (0-based) from which it counts
    counts = np.bincount((np.arange(n)[:, None] * (depth + 1) + entering).ravel(),
                         minlength=n * (depth + 1)).reshape(n, depth + 1)
    overlap = np.cumsum(counts[:, :depth], axis=1)
    d = np.arange(1, depth + 1)
    agreement = overlap / d
    weights = (1 - p) / p * p ** d
    return agreement[:, -1] * p ** depth + (agreement * weights).sum(axis=1)  # RBO_ext at depth
