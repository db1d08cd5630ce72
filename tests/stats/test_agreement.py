"""Properties of NDCG (hypothesis) and agreement with pytrec_eval (trec_eval's own code)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report import evaluate, read_qrels, read_run
from tests.conftest import pytrec_dicts

CUTOFFS = [1, 3, 5, 10, 20, "all"]


@st.composite
def run_and_qrels(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random queries with distinct scores (no near-ties), graded labels incl. negatives,
    unjudged retrieved docs, judged unretrieved docs, run-only and qrels-only queries."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_queries = draw(st.integers(1, 6))
    runs, qrels = [], []
    for q in range(n_queries):
        qid = f"{q:03d}" if q % 2 else str(q)
        pool = [f"d{rng.integers(0, 10**6)}" for _ in range(60)]
        pool = list(dict.fromkeys(pool))
        n_ret = int(rng.integers(0 if q == 0 else 1, min(40, len(pool))))
        retrieved = pool[:n_ret]
        scores = rng.permutation(n_ret) * 0.5 + rng.uniform(-3, 3)
        runs.append(pd.DataFrame({"qid": qid, "docid": retrieved, "score": scores}))
        judged = [d for d in pool if rng.random() < 0.4]
        labels = rng.choice([-1, 0, 0, 1, 2, 3], size=len(judged))
        if q == n_queries - 1 and n_queries > 1:
            continue  # run-only query
        qrels.append(pd.DataFrame({"qid": qid, "docid": judged, "rel": labels.astype(float)}))
    run = pd.concat(runs, ignore_index=True)
    qrel = pd.concat(qrels, ignore_index=True) if qrels else pd.DataFrame(columns=["qid", "docid", "rel"])
    return run, qrel


def pytrec_values(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, dict[str, float]]:
    qrel_dict, run_dict = pytrec_dicts(run, qrels)
    measures = {"ndcg", "ndcg_cut." + ",".join(str(k) for k in CUTOFFS if k != "all")}
    return pytrec_eval.RelevanceEvaluator(qrel_dict, measures).evaluate(run_dict)


@settings(max_examples=60, deadline=None)
@given(run_and_qrels())
def test_agrees_with_pytrec_eval_per_query(data):
    run, qrels = data
    if qrels.empty or run.empty:
        return
    expected = pytrec_values(run, qrels)
    evaluation = evaluate(run, qrels, cutoffs=CUTOFFS, missing="zero", no_relevant="zero")
    rows = evaluation.per_query[evaluation.per_query["in_run"]]
    assert set(rows["qid"]) == set(expected)
    for row in rows.itertuples():
        name = "ndcg" if pd.isna(row.k) else f"ndcg_cut_{row.k}"
        assert row.value == pytest.approx(expected[row.qid][name], abs=1e-9), (row.qid, name)


@settings(max_examples=80, deadline=None)
@given(run_and_qrels(), st.sampled_from(["linear", "exponential"]))
def test_ndcg_between_zero_and_one(data, gain):
    run, qrels = data
    if qrels.empty or run.empty:
        return
    values = evaluate(run, qrels, cutoffs=CUTOFFS, gain=gain).per_query["value"].dropna()
    assert ((values >= 0) & (values <= 1 + 1e-12)).all()


@settings(max_examples=80, deadline=None)
@given(run_and_qrels(), st.sampled_from(["linear", "exponential"]))
def test_ideal_ordering_scores_one(data, gain):
    _, qrels = data
    if qrels.empty:
        return
    ideal = qrels.sort_values(["qid", "rel"], ascending=[True, False]).copy()
    ideal["score"] = -ideal.groupby("qid").cumcount().astype(float)
    evaluation = evaluate(ideal[["qid", "docid", "score"]], qrels, cutoffs=CUTOFFS, gain=gain)
    rows = evaluation.per_query[evaluation.per_query["averaged"]]
    assert np.allclose(rows["value"], 1.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(run_and_qrels(), st.integers(0, 2**32 - 1), st.booleans())
def test_shuffled_lines_and_rewritten_ranks_change_nothing(data, seed, gzipped):
    run, qrels = data
    if qrels.empty or run.empty:
        return
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as folder:
        qrels_path = Path(folder) / "qrels"
        qrels_path.write_text("".join(f"{r.qid} 0 {r.docid} {int(r.rel)}\n" for r in qrels.itertuples()))
        ordered = Path(folder) / "ordered"
        ordered.write_text("".join(f"{r.qid} Q0 {r.docid} {i + 1} {r.score!r} t\n" for i, r in enumerate(run.itertuples())))
        shuffled = run.iloc[rng.permutation(len(run))]
        lines = "".join(f"{r.qid} Q0 {r.docid} {rng.integers(0, 9)} {r.score!r} t\n" for r in shuffled.itertuples())
        moved = Path(folder) / ("shuffled.gz" if gzipped else "shuffled")
        if gzipped:
            import gzip

            moved.write_bytes(gzip.compress(lines.encode()))
        else:
            moved.write_text(lines)
        qrels_table = read_qrels(qrels_path).table
        first = evaluate(read_run(ordered).table, qrels_table, cutoffs=CUTOFFS).per_query
        second = evaluate(read_run(moved).table, qrels_table, cutoffs=CUTOFFS).per_query
    pd.testing.assert_frame_equal(first, second)


def test_ties_follow_trec_eval_order_like_pytrec_eval():
    run = pd.DataFrame({"qid": "q", "docid": ["d1", "d3", "d2", "d10"], "score": [1.0, 1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": "q", "docid": ["d1", "d3", "d10"], "rel": [3.0, 1.0, 2.0]})
    expected = pytrec_values(run, qrels)["q"]
    evaluation = evaluate(run, qrels, cutoffs=CUTOFFS, no_relevant="zero")
    for row in evaluation.per_query.itertuples():
        name = "ndcg" if pd.isna(row.k) else f"ndcg_cut_{row.k}"
        assert row.value == pytest.approx(expected[name], abs=1e-12)
