"""Render an Evaluation (every measure) as trec_eval text, CSV or JSON.

Each format is a stream of byte chunks (`*_chunks`), QUERIES_PER_CHUNK queries at a time, built
by vectorised Arrow string operations: per-query output for millions of queries runs in bounded
memory and costs less than the evaluation. `format_trec` joins trec_eval's chunks into one string.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.core.measures.names import trec_sorted
from ndcg_report.core.evaluation import Evaluation
from ndcg_report.core.number_text import fixed, integer_text, shortest, text_bytes
from ndcg_report.inputs.columns import bools, from_numpy, strings
from ndcg_report.inputs.columns import text as text_scalar

QUERIES_PER_CHUNK = 25_000  # ~175,000 lines of per_query.csv at 7 measures: the text of a chunk, not of the file
PER_QUERY_COLUMNS = ("qid", "measure", "k", "value", "num_ret", "num_rel", "dcg", "idcg", "judged", "in_run", "averaged")
SUMMARY_COLUMNS = ("measure", "k", "n", "mean", "median", "std", "judged")
_PLAIN_JSON = r"^[\x20\x21\x23-\x5b\x5d-\x7e]*$"  # printable ASCII but '"' and '\': needs no JSON escape
_CSV_SPECIAL = r'[,"\r\n]'


# --- trec_eval's layout ---------------------------------------------------------------------


def trec_chunks(evaluation: Evaluation, per_query: bool, digits: int = 4) -> Iterator[bytes | memoryview]:
    """trec_eval's layout (`-q` if per_query): `measure<TAB>qid<TAB>value`, measures in trec_eval's
    order and named as it names them, counts as whole numbers, `all` rows last.

    Like trec_eval, per-query rows are printed for the queries each measure averages: with
    missing='zero' (trec_eval's -c) a judged query the run lacks has its rows too, its values 0 (as
    trec_eval -c -q prints them); with 'skip' only the run's queries. A family trec_eval prints
    overall only (gm_map, gm_bpref, num_q) has no per-query rows.
    The `all` rows are made as trec_eval makes them (Evaluation.overall): a count's is its sum.
    """
    order = trec_sorted(evaluation.measures, evaluation.gain)
    columns = [evaluation.measures.index(measure) for measure in order]
    is_count = np.array([measure.kind == "count" for measure in order], dtype=bool)
    printed = np.array([measure.family.per_query for measure in order], dtype=bool)
    names = strings([f"{measure.trec_name(evaluation.gain):<22}" for measure in order])
    tab = text_scalar("\t")
    if per_query:
        for rows in _chunks(np.flatnonzero(evaluation.in_run | evaluation.averaged.any(axis=1))):
            keep = (evaluation.averaged[rows][:, columns] & printed).ravel()
            column = np.tile(np.arange(len(order)), len(rows))[keep]
            values = evaluation.values[rows][:, columns].ravel()[keep]
            text = fixed(values, digits)
            if is_count.any():
                whole = is_count[column]
                text = pc.if_else(bools(whole), _integers(np.where(whole, values, 0)), text)
            qid = _qids(evaluation, rows).take(from_numpy(np.repeat(np.arange(len(rows)), len(order))[keep]))
            yield text_bytes(pc.binary_join_element_wise(names.take(from_numpy(column)), tab, qid, tab, text,
                                                         text_scalar("\n"), text_scalar("")))
    lines = []
    for name, measure, count in zip(names.to_pylist(), order, is_count):
        value = evaluation.overall(measure)
        lines.append(f"{name}\tall\t{int(value)}\n" if count else f"{name}\tall\t{value:.{digits}f}\n")
    yield "".join(lines).encode("utf-8")


def format_trec(evaluation: Evaluation, per_query: bool, digits: int = 4) -> str:
    """trec_chunks as one string."""
    return b"".join(trec_chunks(evaluation, per_query, digits)).decode("utf-8")


# --- CSV --------------------------------------------------------------------------------------


def csv_chunks(evaluation: Evaluation, per_query: bool, digits: int | None = 4, *, lead: str = "",
               header: bool = True, infinity: bool = False) -> Iterator[bytes | memoryview]:
    """Per-query rows (PER_QUERY_COLUMNS, one per query and measure) if per_query, else the summary
    per measure (SUMMARY_COLUMNS). Numbers with `digits` decimals (all of them if None); a missing
    number (a value not averaged, dcg of a measure other than nDCG) is an empty field, and so is
    the k of a measure without a cut-off; text fields are quoted where CSV needs it.

    Per-query rows only: `lead` is put before every row (CSV fields with their commas), the header
    line is left out unless `header`, and with `infinity` an infinite number is `inf` or `-inf`
    (as pandas writes it) instead of an empty field.
    """
    if not per_query:
        lines = [",".join(SUMMARY_COLUMNS)]
        for (measure, k), row in zip(evaluation.measures, evaluation.summary.itertuples(index=False)):
            cells = [_csv_number(getattr(row, c), digits) for c in ("mean", "median", "std", "judged")]
            lines.append(",".join([csv_text(measure), "" if k is None else str(k), str(int(row.n)), *cells]))
        yield ("\n".join(lines) + "\n").encode("utf-8")
        return
    if header:
        yield (",".join(PER_QUERY_COLUMNS) + "\n").encode("utf-8")
    n_measures = len(evaluation.measures)
    keys = strings([f"{csv_text(m.measure)},{'' if m.k is None else m.k}" for m in evaluation.measures])
    flags = strings([f",{a},{b}\n" for a in ("False", "True") for b in ("False", "True")])
    comma = text_scalar(",")
    dcg, idcg, judged = _per_measure(evaluation)
    for rows in _chunks(np.arange(len(evaluation.qids))):
        qid = _csv_fields(_qids(evaluation, rows))  # per query, then repeated once per measure
        counts = pc.binary_join_element_wise(_integers(evaluation.num_ret[rows]), _integers(evaluation.num_rel[rows]),
                                             text_scalar(","))
        in_run = np.repeat(evaluation.in_run[rows], n_measures)
        flag = flags.take(from_numpy(in_run.astype(np.int64) * 2 + evaluation.averaged[rows].ravel()))
        value = np.where(evaluation.averaged[rows], evaluation.values[rows], np.nan).ravel()
        cells = [
            text_scalar(lead), _repeat(qid, n_measures), comma, keys.take(from_numpy(np.tile(np.arange(n_measures), len(rows)))),
            comma, _numbers(value, digits, "", infinity=infinity), comma, _repeat(counts, n_measures), comma,
            pc.binary_join_element_wise(*(_numbers(array[rows].ravel(), digits, "", infinity=infinity)
                                          for array in (dcg, idcg, judged)), comma),
            flag,
        ]
        yield text_bytes(pc.binary_join_element_wise(*cells, text_scalar("")))


def _per_measure(evaluation: Evaluation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dcg, idcg (NaN outside nDCG) and judged@k, one column per measure."""
    shape = (len(evaluation.qids), len(evaluation.measures))
    dcg, idcg = np.full(shape, np.nan), np.full(shape, np.nan)
    dcg[:, evaluation.ndcg_columns], idcg[:, evaluation.ndcg_columns] = evaluation.dcg, evaluation.idcg
    judged = evaluation.judged[:, [evaluation.depths.index(m.depth) for m in evaluation.measures]]
    return dcg, idcg, judged


# --- JSON -------------------------------------------------------------------------------------


def evaluation_record(evaluation: Evaluation, digits: int | None = None) -> dict:
    """A JSON-ready dict of parameters, query counts and the summary per measure (keyed by its label,
    e.g. "nDCG@10"; no per-query rows)."""

    def number(value: float) -> float | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return round(float(value), digits) if digits is not None else float(value)

    summary = {
        measure.label: {"measure": measure.measure, "k": measure.k, "n": int(row.n),
                        **{c: number(getattr(row, c)) for c in ("mean", "median", "std", "judged")}}
        for measure, row in zip(evaluation.measures, evaluation.summary.itertuples(index=False))
    }
    level = float(evaluation.rel_level)
    return {
        "parameters": {
            "measures": evaluation.labels, "rel_level": int(level) if level.is_integer() else level,
            "gain": evaluation.gain, "missing": evaluation.missing, "no_relevant": evaluation.no_relevant,
            "identical_ids": evaluation.identical_ids,
            **({} if evaluation.max_retrieved is None else {"max_retrieved": evaluation.max_retrieved}),
        },
        "queries": vars(evaluation.counts),
        "tied_lines": evaluation.tied_lines,
        "summary": summary,
    }


def json_chunks(evaluation: Evaluation, per_query: bool, digits: int | None = None) -> Iterator[bytes | memoryview]:
    """The evaluation as one JSON object (full precision unless digits is given); with per_query,
    a `per_query` list holds one object per query and measure, one per line, its numbers as the
    shortest text that reads back exactly (`1` for 1.0), null where there is none."""
    head = json.dumps(evaluation_record(evaluation, digits), indent=2)
    if not per_query:
        yield (head + "\n").encode("utf-8")
        return
    yield (head[: head.rindex("}")].rstrip() + ',\n  "per_query": [').encode("utf-8")
    n_measures = len(evaluation.measures)
    keys = strings([f', "measure": {json.dumps(m.measure)}, "k": {"null" if m.k is None else m.k}'
                    for m in evaluation.measures])
    first = True
    flags = strings([f', "in_run": {a}, "averaged": {b}}},\n' for a in ("false", "true") for b in ("false", "true")])
    dcg, idcg, judged = _per_measure(evaluation)
    for rows in _chunks(np.arange(len(evaluation.qids))):
        head = pc.binary_join_element_wise(  # per query, then repeated once per measure
            text_scalar('    {"qid": '), _json_strings(_qids(evaluation, rows)), text_scalar(""))
        counts = pc.binary_join_element_wise(text_scalar(', "num_ret": '), _integers(evaluation.num_ret[rows]),
                                             text_scalar(', "num_rel": '), _integers(evaluation.num_rel[rows]), text_scalar(""))
        in_run = np.repeat(evaluation.in_run[rows], n_measures)
        flag = flags.take(from_numpy(in_run.astype(np.int64) * 2 + evaluation.averaged[rows].ravel()))
        value = np.where(evaluation.averaged[rows], evaluation.values[rows], np.nan).ravel()
        parts = [_repeat(head, n_measures), keys.take(from_numpy(np.tile(np.arange(n_measures), len(rows)))),
                 text_scalar(', "value": '), _numbers(value, digits, "null", whole_dot=False), _repeat(counts, n_measures)]
        for name, array in (("dcg", dcg), ("idcg", idcg), ("judged", judged)):
            parts += [text_scalar(f', "{name}": '),  # shortest text: 1 for 1.0 (a '.0' on millions of whole numbers costs seconds)
                      _numbers(array[rows].ravel(), digits, "null", whole_dot=False)]
        parts.append(flag)
        text = text_bytes(pc.binary_join_element_wise(*parts, text_scalar("")))  # every row ends with ",\n"
        yield b"\n" if first else b",\n"
        yield text[:-2]
        first = False
    yield b"\n  ]\n}\n"


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
