"""Render an Evaluation as trec_eval text, CSV or JSON."""

from __future__ import annotations

import io
import json
import math

from ndcg_report.core.metrics import Evaluation


def trec_measure_name(k: str) -> str:
    """trec_eval's name for a cut-off label: '10' -> 'ndcg_cut_10', 'all' -> 'ndcg'."""
    return "ndcg" if k == "all" else f"ndcg_cut_{k}"


def _trec_order(evaluation: Evaluation) -> list[str]:
    """Cut-off labels in trec_eval's measure order: ndcg first, then ndcg_cut ascending."""
    labels = [str(k) for k in evaluation.cutoffs]
    return (["all"] if "all" in labels else []) + [k for k in labels if k != "all"]


def format_trec(evaluation: Evaluation, per_query: bool, digits: int = 4) -> str:
    """trec_eval's layout (`-q` if per_query): `measure<TAB>qid<TAB>value`, `all` rows last.

    Like trec_eval, per-query rows are printed for averaged queries present in the run; queries
    counted as zero because the run lacks them appear only in the `all` rows.
    """
    order = _trec_order(evaluation)
    columns = [evaluation.labels.index(k) for k in order]
    names = [f"{trec_measure_name(k):<22}" for k in order]
    lines = []
    if per_query:
        shown = evaluation.averaged & evaluation.in_run
        for qid, row in zip(evaluation.qids[shown].tolist(), evaluation.ndcg[shown][:, columns].tolist()):
            lines.extend(f"{name}\t{qid}\t{value:.{digits}f}" for name, value in zip(names, row))
    for name, k in zip(names, order):
        lines.append(f"{name}\tall\t{evaluation.mean(k):.{digits}f}")
    return "\n".join(lines) + "\n"


def format_csv(evaluation: Evaluation, per_query: bool, digits: int | None = 4) -> str:
    """Per-query rows (qid, k, ...) if per_query, else the summary per cut-off."""
    if per_query:
        table = evaluation.per_query
    else:
        table = evaluation.summary.reset_index()
    if digits is not None:
        table = table.round(digits)
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def evaluation_record(evaluation: Evaluation, per_query: bool, digits: int | None = None) -> dict:
    """A JSON-ready dict: parameters, query counts, summary per cut-off, per-query rows if asked."""

    def number(value: float) -> float | None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return round(float(value), digits) if digits is not None else float(value)

    summary = {
        k: {"n": int(row["n"]), **{c: number(row[c]) for c in ("mean", "median", "std", "judged")}}
        for k, row in evaluation.summary.iterrows()
    }
    record = {
        "parameters": {
            "cutoffs": [str(k) for k in evaluation.cutoffs], "gain": evaluation.gain,
            "missing": evaluation.missing, "no_relevant": evaluation.no_relevant,
        },
        "queries": vars(evaluation.counts),
        "tied_lines": evaluation.tied_lines,
        "summary": summary,
    }
    if per_query:
        record["per_query"] = [
            {
                "qid": row.qid, "k": row.k, "num_ret": int(row.num_ret), "num_rel": int(row.num_rel),
                "dcg": number(row.dcg), "idcg": number(row.idcg), "ndcg": number(row.ndcg),
                "judged": number(row.judged), "in_run": bool(row.in_run), "averaged": bool(row.averaged),
            }
            for row in evaluation.per_query.itertuples(index=False)
        ]
    return record


def format_json(evaluation: Evaluation, per_query: bool, digits: int | None = None) -> str:
    """The evaluation as JSON (full precision unless digits is given)."""
    return json.dumps(evaluation_record(evaluation, per_query, digits), indent=2) + "\n"
