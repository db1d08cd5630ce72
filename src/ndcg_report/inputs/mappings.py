"""Runs and qrels as nested mappings, as pytrec_eval and ranx take them, made into a table.

{qid: {docid: value}}, or for a run {qid: [docid, ...]} (a ranked list, first is best: score =
-rank). Shared by JSON documents and Python dicts; `fail` says where a problem is (a file's line,
or the query).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn

import numpy as np
import pyarrow as pa

from ndcg_report.inputs.columns import from_numpy, strings
from ndcg_report.inputs.records import RecordProblem, identifier, kind_of, number

Fail = Callable[[str, str, "str | None", "str | None"], NoReturn]  # (problem, fix, qid, docid)
SHAPE = {"run": "{qid: {docid: score}} or {qid: [docid, ...]} (ranked, best first)",
         "qrels": "{qid: {docid: grade}}"}


def mapping_table(data: object, kind: str, fail: Fail, empty_ok: bool = False) -> pa.Table:
    """The table (qid dictionary, docid, score or rel) of a nested mapping; `fail` is called (and
    raises) with the first problem: a list where a mapping belongs, a bad id or value, no rows
    (unless empty_ok: a part of a larger mapping may have none)."""
    if not isinstance(data, Mapping):
        fail(f"{kind_of(data)} where a mapping {SHAPE[kind]} belongs", f"give the {kind} as {SHAPE[kind]}", None, None)
    names: list[str] = []
    counts: list[int] = []
    docids: list[str] = []
    values: list[np.ndarray] = []
    for key, inner in data.items():
        try:
            qid = identifier(key, "qid")
        except RecordProblem as exc:
            fail(exc.problem, exc.fix, str(key), None)
        before = len(docids)
        if isinstance(inner, Mapping):
            values.append(_values(inner, qid, kind, docids, fail))
        elif isinstance(inner, (list, tuple)) and kind == "run":
            values.append(_ranked(inner, qid, docids, fail))
        else:
            wanted = "a mapping {docid: score} or a ranked list of docids" if kind == "run" else "a mapping {docid: grade}"
            fail(f"{kind_of(inner)} where {wanted} belongs", f"give the {kind} as {SHAPE[kind]}", qid, None)
        names.append(qid)
        counts.append(len(docids) - before)
    if not docids and not empty_ok:
        fail(f"no {'documents' if kind == 'run' else 'judgments'} in any query", f"give the {kind} as {SHAPE[kind]}",
             None, None)
    codes = np.repeat(np.arange(len(names), dtype=np.int32), counts)
    qids = pa.DictionaryArray.from_arrays(from_numpy(codes), strings(names))
    column = "score" if kind == "run" else "rel"
    return pa.table({"qid": qids, "docid": strings(docids),
                     column: from_numpy(np.concatenate(values) if values else np.zeros(0))})


def _values(inner: Mapping, qid: str, kind: str, docids: list[str], fail: Fail) -> np.ndarray:
    """A query's {docid: value}: the docids appended, the values returned; fast where every key is a
    string and every value a plain number, else item by item (which names the bad one)."""
    keys, items = list(inner.keys()), list(inner.values())
    if set(map(type, keys)) <= {str} and set(map(type, items)) <= {float, int} and "" not in inner:
        try:
            "".join(keys).encode("utf-8")
            result = np.array(items, dtype=np.float64)
        except (UnicodeEncodeError, OverflowError):
            result = None
        if result is not None and np.isfinite(result).all():
            docids.extend(keys)
            return result
    result = np.empty(len(items), dtype=np.float64)
    for position, (key, value) in enumerate(zip(keys, items)):
        try:
            docid = identifier(key, "docid")
        except RecordProblem as exc:
            fail(exc.problem, exc.fix, qid, str(key))
        try:
            result[position] = number(value, kind)
        except RecordProblem as exc:
            fail(exc.problem, exc.fix, qid, docid)
        docids.append(docid)
    return result


def _ranked(ranking: list | tuple, qid: str, docids: list[str], fail: Fail) -> np.ndarray:
    """A query's ranked list of docids (first is best): the docids appended, scores -1, -2, ... returned."""
    seen: dict[str, int] = {}
    for position, item in enumerate(ranking, start=1):
        try:
            docid = identifier(item, "docid")
        except RecordProblem as exc:
            fail(f"item {position} of the ranked list: {exc.problem}", exc.fix, qid, None)
        if docid in seen:
            fail(f"listed twice in the ranked list (at {seen[docid]} and {position})", "list each document once",
                 qid, docid)
        seen[docid] = position
        docids.append(docid)
    return -np.arange(1, len(ranking) + 1, dtype=np.float64)
