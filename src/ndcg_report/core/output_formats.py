"""Render an Evaluation as trec_eval text, CSV or JSON.

Each format is a stream of byte chunks (`*_chunks`), QUERIES_PER_CHUNK queries at a time, built
by vectorised Arrow string operations: per-query output for millions of queries runs in bounded
memory and costs less than the evaluation. `format_*` join the chunks into one string.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.metrics import Evaluation
from ndcg_report.core.number_text import fixed, integer_text, shortest, text_bytes
from ndcg_report.inputs.columns import bools, from_numpy, strings
from ndcg_report.inputs.columns import text as text_scalar

QUERIES_PER_CHUNK = 100_000
PER_QUERY_COLUMNS = ("qid", "k", "num_ret", "num_rel", "dcg", "idcg", "ndcg", "judged", "in_run", "averaged")
_PLAIN_JSON = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"  # printable ASCII but '"' and '\': needs no JSON escape
_CSV_SPECIAL = r'[,"\r\n]'


def trec_measure_name(k: str) -> str:
    """trec_eval's name for a cut-off label: '10' -> 'ndcg_cut_10', 'all' -> 'ndcg'."""
    return "ndcg" if k == "all" else f"ndcg_cut_{k}"


def _trec_order(evaluation: Evaluation) -> list[str]:
    """Cut-off labels in trec_eval's measure order: ndcg first, then ndcg_cut ascending."""
    labels = [str(k) for k in evaluation.cutoffs]
    return (["all"] if "all" in labels else []) + [k for k in labels if k != "all"]


# --- trec_eval's layout ---------------------------------------------------------------------


def trec_chunks(evaluation: Evaluation, per_query: bool, digits: int = 4) -> Iterator[bytes | memoryview]:
    """trec_eval's layout (`-q` if per_query): `measure<TAB>qid<TAB>value`, `all` rows last.

    Like trec_eval, per-query rows are printed for averaged queries present in the run; queries
    counted as zero because the run lacks them appear only in the `all` rows.
    """
    order = _trec_order(evaluation)
    columns = [evaluation.labels.index(k) for k in order]
    names = strings([f"{trec_measure_name(k):<22}" for k in order])
    if per_query:
        shown = np.flatnonzero(evaluation.averaged & evaluation.in_run)
        for rows in _chunks(shown):
            measure = names.take(from_numpy(np.tile(np.arange(len(order)), len(rows))))
            qid = _repeat(_qids(evaluation, rows), len(order))
            value = fixed(evaluation.ndcg[rows][:, columns].ravel(), digits)
            tab = text_scalar("\t")
            yield text_bytes(pc.binary_join_element_wise(measure, tab, qid, tab, value, text_scalar("\n"), text_scalar("")))
    yield "".join(f"{name}\tall\t{evaluation.mean(k):.{digits}f}\n"
                  for name, k in zip(names.to_pylist(), order)).encode("utf-8")


def format_trec(evaluation: Evaluation, per_query: bool, digits: int = 4) -> str:
    """trec_chunks as one string."""
    return b"".join(trec_chunks(evaluation, per_query, digits)).decode("utf-8")


# --- CSV --------------------------------------------------------------------------------------


def csv_chunks(evaluation: Evaluation, per_query: bool, digits: int | None = 4, *, lead: str = "",
               header: bool = True, infinity: bool = False) -> Iterator[bytes | memoryview]:
    """Per-query rows (PER_QUERY_COLUMNS, one per query and k) if per_query, else the summary per
    cut-off (k, n, mean, median, std, judged). Numbers with `digits` decimals (all of them if None);
    a missing number is an empty field; text fields are quoted where CSV needs it.

    Per-query rows only: `lead` is put before every row (CSV fields with their commas), the header
    line is left out unless `header`, and with `infinity` an infinite number is `inf` or `-inf`
    (as pandas writes it) instead of an empty field.
    """
    if not per_query:
        lines = ["k,n,mean,median,std,judged"]
        for k, row in evaluation.summary.iterrows():
            cells = [_csv_number(row[c], digits) for c in ("mean", "median", "std", "judged")]
            lines.append(",".join([csv_text(str(k)), str(int(row["n"])), *cells]))
        yield ("\n".join(lines) + "\n").encode("utf-8")
        return
    if header:
        yield (",".join(PER_QUERY_COLUMNS) + "\n").encode("utf-8")
    n_labels = len(evaluation.labels)
    labels = strings([csv_text(label) for label in evaluation.labels])
    flags = strings([f",{a},{b}\n" for a in ("False", "True") for b in ("False", "True")])
    comma = text_scalar(",")
    for rows in _chunks(np.arange(len(evaluation.qids))):
        qid = _csv_fields(_qids(evaluation, rows))  # per query, then repeated once per cut-off
        counts = pc.binary_join_element_wise(_integers(evaluation.num_ret[rows]), _integers(evaluation.num_rel[rows]),
                                             text_scalar(","))
        flag = flags.take(from_numpy(evaluation.in_run[rows].astype(np.int64) * 2 + evaluation.averaged[rows]))
        cells = [
            text_scalar(lead), _repeat(qid, n_labels), comma, labels.take(from_numpy(np.tile(np.arange(n_labels), len(rows)))),
            comma, _repeat(counts, n_labels), comma,
            pc.binary_join_element_wise(*(_numbers(getattr(evaluation, name)[rows].ravel(), digits, "", infinity=infinity)
                                          for name in ("dcg", "idcg", "ndcg", "judged")), comma),
            _repeat(flag, n_labels),
        ]
        yield text_bytes(pc.binary_join_element_wise(*cells, text_scalar("")))


def format_csv(evaluation: Evaluation, per_query: bool, digits: int | None = 4) -> str:
    """csv_chunks as one string."""
    return b"".join(csv_chunks(evaluation, per_query, digits)).decode("utf-8")


# --- JSON -------------------------------------------------------------------------------------


def evaluation_record(evaluation: Evaluation, digits: int | None = None) -> dict:
    """A JSON-ready dict of parameters, query counts and the summary per cut-off (no per-query rows)."""

    def number(value: float) -> float | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return round(float(value), digits) if digits is not None else float(value)

    summary = {
        k: {"n": int(row["n"]), **{c: number(row[c]) for c in ("mean", "median", "std", "judged")}}
        for k, row in evaluation.summary.iterrows()
    }
    return {
        "parameters": {
            "cutoffs": [str(k) for k in evaluation.cutoffs], "gain": evaluation.gain,
            "missing": evaluation.missing, "no_relevant": evaluation.no_relevant,
        },
        "queries": vars(evaluation.counts),
        "tied_lines": evaluation.tied_lines,
        "summary": summary,
    }


def json_chunks(evaluation: Evaluation, per_query: bool, digits: int | None = None) -> Iterator[bytes | memoryview]:
    """The evaluation as one JSON object (full precision unless digits is given); with per_query,
    a `per_query` list holds one object per query and k, one per line, its numbers as the shortest
    text that reads back exactly (`1` for 1.0)."""
    head = json.dumps(evaluation_record(evaluation, digits), indent=2)
    if not per_query:
        yield (head + "\n").encode("utf-8")
        return
    yield (head[: head.rindex("}")].rstrip() + ',\n  "per_query": [').encode("utf-8")
    n_labels = len(evaluation.labels)
    labels = strings([json.dumps(label) for label in evaluation.labels])
    first = True
    flags = strings([f', "in_run": {a}, "averaged": {b}}},\n' for a in ("false", "true") for b in ("false", "true")])
    for rows in _chunks(np.arange(len(evaluation.qids))):
        head = pc.binary_join_element_wise(  # per query, then repeated once per cut-off
            text_scalar('    {"qid": '), _json_strings(_qids(evaluation, rows)), text_scalar(', "k": '), text_scalar(""))
        counts = pc.binary_join_element_wise(text_scalar(', "num_ret": '), _integers(evaluation.num_ret[rows]),
                                             text_scalar(', "num_rel": '), _integers(evaluation.num_rel[rows]), text_scalar(""))
        flag = flags.take(from_numpy(evaluation.in_run[rows].astype(np.int64) * 2 + evaluation.averaged[rows]))
        parts = [_repeat(head, n_labels), labels.take(from_numpy(np.tile(np.arange(n_labels), len(rows)))),
                 _repeat(counts, n_labels)]
        for name in ("dcg", "idcg", "ndcg", "judged"):
            parts += [text_scalar(f', "{name}": '),  # shortest text: 1 for 1.0 (a '.0' on millions of whole numbers costs seconds)
                      _numbers(getattr(evaluation, name)[rows].ravel(), digits, "null", whole_dot=False)]
        parts.append(_repeat(flag, n_labels))
        text = text_bytes(pc.binary_join_element_wise(*parts, text_scalar("")))  # every row ends with ",\n"
        yield b"\n" if first else b",\n"
        yield text[:-2]
        first = False
    yield b"\n  ]\n}\n"


def format_json(evaluation: Evaluation, per_query: bool, digits: int | None = None) -> str:
    """json_chunks as one string."""
    return b"".join(json_chunks(evaluation, per_query, digits)).decode("utf-8")


# --- columns as text ----------------------------------------------------------------------------


def _chunks(rows: np.ndarray) -> Iterator[np.ndarray]:
    for start in range(0, len(rows), QUERIES_PER_CHUNK):
        yield rows[start: start + QUERIES_PER_CHUNK]


def _qids(evaluation: Evaluation, rows: np.ndarray) -> pa.Array:
    return strings(evaluation.qids[rows].tolist())


def _repeat(values: pa.Array, times: int) -> pa.Array:
    """Each value `times` times in a row (one per cut-off)."""
    return values if times == 1 else values.take(from_numpy(np.repeat(np.arange(len(values)), times)))


def _integers(values: np.ndarray) -> pa.Array:
    return integer_text(np.asarray(values, dtype=np.int64))


def _numbers(values: np.ndarray, digits: int | None, missing: str, whole_dot: bool = True,
             infinity: bool = False) -> pa.Array:
    """Numbers with digits decimals (shortest round-trip text if None; a whole number as `1.0`
    unless whole_dot is False: `1`); NaN and inf as `missing` (inf as `inf` and `-inf` with infinity)."""
    text = shortest(values, missing, whole_dot) if digits is None else fixed(values, digits)
    finite = np.isfinite(values)
    if finite.all():
        return text
    text = pc.if_else(bools(finite), text, text_scalar(missing))
    if infinity and np.isinf(values).any():
        text = pc.if_else(bools(np.isinf(values)), strings(np.where(values > 0, "inf", "-inf").tolist()), text)
    return text


def _json_strings(values: pa.Array) -> pa.Array:
    """JSON string literals: plain ones quoted as they are, the rest escaped by json.dumps."""
    plain = pc.match_substring_regex(values, _PLAIN_JSON)
    quoted = pc.binary_join_element_wise(text_scalar('"'), values, text_scalar('"'), text_scalar(""))
    if pc.all(plain).as_py():
        return quoted
    escaped = [json.dumps(value) for value in values.filter(pc.invert(plain)).to_pylist()]
    return pc.replace_with_mask(quoted, pc.invert(plain), strings(escaped))


def _csv_fields(values: pa.Array) -> pa.Array:
    """CSV fields: quoted (inner quotes doubled) where they hold a comma, a quote or a line end."""
    special = pc.match_substring_regex(values, _CSV_SPECIAL)
    if not pc.any(special).as_py():
        return values
    quoted = pc.binary_join_element_wise(text_scalar('"'), pc.replace_substring(values, '"', '""'), text_scalar('"'),
                                         text_scalar(""))
    return pc.if_else(special, quoted, values)


def csv_text(value: str) -> str:
    """One CSV field: quoted (inner quotes doubled) if it holds a comma, a quote or a line end."""
    return f'"{value.replace(chr(34), chr(34) * 2)}"' if any(c in value for c in ',"\r\n') else value


def _csv_number(value: float, digits: int | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.{digits}f}" if digits is not None else shortest(np.array([value])).to_pylist()[0]
