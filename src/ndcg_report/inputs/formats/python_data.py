"""Runs and qrels held in Python as other IR tools hold them: dicts, ranx objects, namedtuples.

pytrec_eval/ranx dicts ({qid: {docid: value}}), a mapping of qid to a ranked list of docids (first
is best: score = -rank), a ranx Run or Qrels (duck-typed: nothing of ranx is imported), or a list
of ir_measures-style namedtuples (query_id, doc_id, score or relevance; a run's rank without a score:
score = -rank). Errors name the query and document at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

import numpy as np
import pyarrow as pa

from ndcg_report.errors import ParameterError
from ndcg_report.inputs.columns import from_numpy, strings
from ndcg_report.inputs.mappings import mapping_table
from ndcg_report.inputs.records import RecordProblem, identifier, number

_NAMEDTUPLE_VALUES = {"run": ("score",), "qrels": ("relevance", "rel", "label")}


def python_table(data: object, kind: str) -> pa.Table | None:
    """The table (qid dictionary, docid, score or rel) of a run or qrels held in Python, or None if
    `data` is none of the shapes above (a path, a table: the caller's)."""
    if _is_ranx(data):
        data = data.to_dict()  # type: ignore[attr-defined]
    elif _is_namedtuples(data):
        return _namedtuple_table(data, kind)  # type: ignore[arg-type]
    if not isinstance(data, Mapping):
        return None

    def fail(problem: str, fix: str, qid: str | None, docid: str | None) -> NoReturn:
        where = " ".join(part for part in (f"query {qid!r}" if qid is not None else "",
                                           f"document {docid!r}" if docid is not None else "") if part)
        raise ParameterError(f"the {kind} {'at ' + where if where else ''}: {problem}; {fix}".replace(" :", ":"))

    return mapping_table(data, kind, fail)


def is_one_run(data: object) -> bool:
    """True if `data` is one run held in Python (not a mapping of names to runs): a ranx Run, a list
    of namedtuples, or a mapping whose every value is {docid: score} or a list of docids."""
    if _is_ranx(data) or _is_namedtuples(data):
        return True
    if not isinstance(data, Mapping) or not data:
        return False
    return all((isinstance(inner, Mapping) and not any(isinstance(value, (Mapping, list, tuple, str))
                                                       for value in list(inner.values())[:5]))
               or (isinstance(inner, (list, tuple)) and all(isinstance(item, (str, int)) for item in inner[:5]))
               for inner in data.values())


def python_tag(data: object) -> str:
    """The run's name where the object carries one (a ranx Run's `name`), else ''."""
    name = getattr(data, "name", None) if _is_ranx(data) else None
    return name if isinstance(name, str) else ""


def _is_ranx(data: object) -> bool:
    return (type(data).__name__ in ("Run", "Qrels") and type(data).__module__.split(".")[0] == "ranx"
            and callable(getattr(data, "to_dict", None)))


def _is_namedtuples(data: object) -> bool:
    return isinstance(data, (list, tuple)) and bool(data) and hasattr(data[0], "_fields") and hasattr(data[0], "query_id")


def _namedtuple_table(records: list, kind: str) -> pa.Table:
    """ir_measures' Qrel(query_id, doc_id, relevance, ...) or ScoredDoc(query_id, doc_id, score) records."""
    qids, docids, values = [], [], np.empty(len(records), dtype=np.float64)
    fields = records[0]._fields
    value_field = next((name for name in _NAMEDTUPLE_VALUES[kind] if name in fields), None)
    if value_field is None and kind == "run" and "rank" in fields:
        value_field = "rank"  # no score: ordered by the rank, score = -rank (as a table's rank column)
    if value_field is None or "doc_id" not in fields:
        raise ParameterError(f"the {kind}'s records have fields {', '.join(fields)}; give query_id, doc_id and "
                             f"{' or '.join(_NAMEDTUPLE_VALUES[kind])}" + (" (or rank)" if kind == "run" else ""))
    for position, record in enumerate(records):
        try:
            qid = identifier(getattr(record, "query_id", None), "query_id")
            docid = identifier(getattr(record, "doc_id", None), "doc_id")
            values[position] = number(getattr(record, value_field, None), kind)
        except RecordProblem as exc:
            raise ParameterError(f"the {kind}'s record {position} ({record!r:.120}): {exc.problem}; {exc.fix}") from None
        qids.append(qid)
        docids.append(docid)
    column = "score" if kind == "run" else "rel"
    if value_field == "rank":
        values = -values
    return pa.table({"qid": strings(qids).dictionary_encode(), "docid": strings(docids), column: from_numpy(values)})
