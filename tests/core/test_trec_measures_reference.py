"""trec_eval's other measures (bpref, infAP, iprec_at_recall, G, rbp, set_*, ...) on generated runs:
against trec_eval's own code through pytrec_eval (integer labels, negative ones included) and
against a plain port of trec_eval 10's m_*.c loops, one query at a time (float labels and
fractional levels too), with ties, queries with nothing relevant and runs shorter than the
cut-offs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report import evaluate
from tests.conftest import pytrec_dicts

NEW = ("num_q gm_map bpref gm_bpref infAP iprec_at_recall Rprec_mult utility 11pt_avg binG G ndcg_rel Rndcg "
       "relative_P.1,3,10,100 set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid "
       "unj.1,5,20")
# trec_eval 9 (pytrec_eval) puts the recall level x at the (long)(x * R + 0.9)-th relevant document, trec_eval 10
# at lround(x * R); rbp, rbp_resid and unj are newer than trec_eval 9
NOT_IN_PYTREC_EVAL = ("iprec_at_recall", "11pt_avg", "rbp", "rbp_resid", "unj")
MIN_GEO_MEAN = 0.00001


@st.composite
def judged_runs(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries with tied scores, graded, float and negative labels (in the pool, not judged), one with
    nothing relevant, one with only negative labels, runs shorter and longer than the cut-offs,
    unjudged lines, a run-only and a qrels-only query."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    floats = draw(st.booleans())
    runs, qrels = [], []
    for q in range(draw(st.integers(1, 7))):
        qid = ["7", "007", "q\u00e9", "Q", "10", "9", "a"][q]
        pool = list(dict.fromkeys(f"d{rng.integers(0, 60)}" for _ in range(80)))
        n_ret = int(rng.integers(1, len(pool)))
        scores = rng.integers(0, 5, size=n_ret).astype(float)  # few values: many ties
        if q != 5:  # qrels only
            runs.append(pd.DataFrame({"qid": qid, "docid": pool[:n_ret], "score": scores}))
        if q == 4:
            continue  # run only
        judged = [d for d in pool if rng.random() < 0.6] or pool[:1]
        choices = [-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0] if floats else [-1.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]
        labels = rng.choice(choices, size=len(judged))
        if q == 2:
            labels = np.minimum(labels, 0.0)  # nothing relevant
        if q == 6:
            labels = np.full(len(judged), -1.0)  # nothing judged: all in the pool only
        qrels.append(pd.DataFrame({"qid": qid, "docid": judged, "rel": labels}))
    return pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True)


def ranked_labels(lines: pd.DataFrame, judged: dict[str, float], depth: int | None) -> list[float | None]:
    """The labels of a query's run lines in trec_eval's order (score descending, docid descending), None
    for a document the qrels lack; its first `depth` lines only (trec_eval's -M)."""
    docs = sorted(lines.itertuples(), key=lambda row: row.docid, reverse=True)
    docs = sorted(docs, key=lambda row: -row.score)[:depth]
    return [judged.get(row.docid) for row in docs]


def lround(x: float) -> int:
    return math.floor(x) + (x - math.floor(x) >= 0.5)


def reference(ranked: list[float | None], qrels: list[float], level: float) -> dict[str, float]:
    """trec_eval 10's m_*.c for one query, loop for loop: {trec name: value}."""
    out: dict[str, float] = {}
    rel = [label is not None and label >= level for label in ranked]
    num_ret, num_rel, num_rel_ret = len(ranked), sum(label >= level for label in qrels), sum(rel)
    num_nonrel = sum(0 <= label < level for label in qrels)
    out["num_q"] = 1.0
    out["num_nonrel_judged_ret"] = sum(label is not None and 0 <= label < level for label in ranked)
    ap = sum((n + 1) / (i + 1) for n, i in enumerate(i for i, hit in enumerate(rel) if hit))
    out["gm_map"] = ap / num_rel if num_rel else 0.0
    # m_bpref.c, m_infap.c
    bpref = inf_ap = 0.0
    nonrel = relevant = pooled = 0
    for j, label in enumerate(ranked):
        if label is None:
            continue
        if label < 0:
            pooled += 1
            continue
        if label < level:
            nonrel += 1
            continue
        relevant += 1
        bpref += 1.0 - min(nonrel, num_rel) / min(num_nonrel, num_rel) if nonrel else 1.0
        inf_ap += 1.0 if j == 0 else 1.0 / (j + 1) + (j / (j + 1)) * ((relevant - 1 + nonrel + pooled) / j) * (
            (relevant - 1 + 0.00001) / (relevant - 1 + nonrel + 2 * 0.00001))
    out["bpref"] = out["gm_bpref"] = bpref / num_rel if num_rel else bpref
    out["infAP"] = inf_ap / num_rel if num_rel else inf_ap
    # m_iprec_at_recall.c, m_11pt_avg.c
    levels = [i / 10 for i in range(11)]
    cuts = [lround(x * num_rel) for x in levels]
    iprec = [0.0] * 11
    current = 10
    while current >= 0 and cuts[current] > num_rel_ret:
        current -= 1
    best = num_rel_ret / num_ret if num_ret else 0.0
    so_far = num_rel_ret
    i = num_ret
    while i > 0 and so_far > 0:
        best = max(best, so_far / i)
        if rel[i - 1]:
            while current >= 0 and so_far == cuts[current]:
                iprec[current] = best
                current -= 1
            so_far -= 1
        i -= 1
    for c in range(current, -1, -1):
        iprec[c] = best
    eleven = 0.0
    for c in range(10, -1, -1):
        eleven += iprec[c] if cuts[c] <= num_rel_ret else 0.0
    for x, value in zip(levels, iprec):
        out[f"iprec_at_recall_{x:.2f}"] = value
    out["11pt_avg"] = eleven / 11
    # m_Rprec_mult.c: the precision at the (long)(m * R + 0.9)-th document
    for m in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0):
        cut = int(m * num_rel + 0.9)
        out[f"Rprec_mult_{m:.2f}"] = sum(rel[:cut]) / cut if cut else 0.0
    for k in (1, 3, 10, 100):
        out[f"relative_P_{k}"] = sum(rel[:k]) / min(k, num_rel) if num_rel else 0.0
    for k in (1, 5, 20):
        out[f"unj_{k}"] = sum(label is None or label < 0 for label in ranked[:k]) / k
    # the set measures and utility
    out["set_P"] = num_rel_ret / num_ret if num_ret else 0.0
    out["set_relative_P"] = num_rel_ret / min(num_ret, num_rel) if num_ret and num_rel else 0.0
    out["set_recall"] = num_rel_ret / num_rel if num_rel else 0.0
    out["set_map"] = num_rel_ret * num_rel_ret / (num_ret * num_rel) if num_ret and num_rel else 0.0
    p, r = (num_rel_ret / num_ret, num_rel_ret / num_rel) if num_rel_ret else (0, 0)
    out["set_F"] = 2 * p * r / (p + r) if num_rel_ret else 0.0
    out["utility"] = num_rel_ret - (num_ret - num_rel_ret)
    # m_binG.c
    so_far, total = 0, 0.0
    for i, hit in enumerate(rel):
        if hit:
            so_far += 1
            total += 1.0 / math.log2(3 + i - so_far)
    out["binG"] = total / num_rel if so_far else 0.0
    out.update(gain_measures(ranked, qrels, num_rel))
    # m_rbp.c, m_rbp_resid.c at p = 0.9, gains over the largest label when it is above 1
    largest = max([label for label in qrels if label >= 0], default=0.0)
    scale = largest if largest > 1 else 1.0
    rbp = resid = 0.0
    power, unjudged = 1.0, 0
    for label in ranked:
        if label is not None and label > 0:
            rbp += label / scale * power
        if label is None or label < 0:
            unjudged += 1
            resid += power
        power *= 0.9
    out["rbp"] = 0.1 * rbp
    out["rbp_resid"] = power + 0.1 * resid if unjudged else 0.0
    return out


def gain_measures(ranked: list[float | None], qrels: list[float], num_rel: int) -> dict[str, float]:
    """m_G.c, m_ndcg_rel.c and m_Rndcg.c: the labels as gains, the ideal walked down its gain levels."""
    gains = [label if label is not None and label > 0 else 0.0 for label in ranked]
    ideal = sorted((label for label in qrels if label > 0), reverse=True)
    at = [ideal[i] if i < len(ideal) else 0.0 for i in range(max(len(ranked), len(ideal)) + 2)]
    out = {}
    # G
    cost = got = g = 0.0
    for i, gain in enumerate(gains):
        got += gain
        cost += max(at[i], 1.0)
        if gain:
            g += gain / math.log2(2 + cost - got)
    out["G"] = g / sum(ideal) if ideal else 0.0
    # ndcg_rel
    dcg = idcg = total = 0.0
    found = 0
    for i, gain in enumerate(gains):
        dcg += gain / math.log2(i + 2) if gain else 0.0
        if i < len(ideal):
            idcg += ideal[i] / math.log2(i + 2)
        if gain > 0:
            total += dcg / idcg
            found += 1
    full_ideal = sum(value / math.log2(i + 2) for i, value in enumerate(ideal))
    if ideal:
        total += (len(ideal) - found) * dcg / full_ideal
    out["ndcg_rel"] = total / len(ideal) if total > 0 else 0.0
    out["Rndcg"] = r_ndcg(gains, at, num_rel) if num_rel else 0.0
    return out


def r_ndcg(gains: list[float], at: list[float], num_rel: int) -> float:
    """m_Rndcg.c's three loops: nDCG taken where the ideal gain (at[i], after i's advance) changes."""
    dcg = idcg = total = 0.0
    points = 0
    old = at[0]
    i = 0
    while i < len(gains) and (at[i - 1] if i else at[0]) > 0:  # for (...; i < num_ret && ideal_gain > 0; i++)
        if at[i] != old:
            if idcg > 0:
                total, points = total + dcg / idcg, points + 1
            old = at[i]
        dcg += gains[i] / math.log2(i + 2) if gains[i] else 0.0
        idcg += at[i] / math.log2(i + 2) if at[i] > 0 else 0.0
        i += 1
    if i < len(gains):
        for j in range(i, len(gains)):
            dcg += gains[j] / math.log2(j + 2) if gains[j] else 0.0
        if idcg > 0:
            total, points = total + dcg / idcg, points + 1
    while (at[i - 1] if i else at[0]) > 0:  # while (ideal_gain > 0)
        if at[i] != old:
            if idcg > 0:
                total, points = total + dcg / idcg, points + 1
            old = at[i]
        idcg += at[i] / math.log2(i + 2) if at[i] > 0 else 0.0
        i += 1
    return total / points if points else 0.0  # trec_eval: 0 / 0 (-nan) where no point is taken


def expected_values(run: pd.DataFrame, qrels: pd.DataFrame, level: float, depth: int | None = None) -> dict:
    values = {}
    for qid, lines in run.groupby("qid", sort=False):
        rows = qrels[qrels["qid"] == qid]
        if len(rows):
            judged = dict(zip(rows["docid"], rows["rel"]))
            for name, value in reference(ranked_labels(lines, judged, depth), list(rows["rel"]), level).items():
                values[qid, name] = value
    return values


@settings(max_examples=60, deadline=None)
@given(judged_runs(), st.sampled_from([0, 0.5, 1, 1.5, 2, 3]), st.sampled_from([None, 1, 4, 30]))
def test_every_new_measure_agrees_with_a_plain_port_of_trec_eval(data, level, depth):
    run, qrels = data
    evaluation = evaluate(run, qrels, measures=NEW, rel_level=level, no_relevant="zero", max_retrieved=depth)
    expected = expected_values(run, qrels, level, depth)
    assert len(evaluation.measures) == 47
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            if evaluation.in_run[i]:
                assert evaluation.values[i, j] == pytest.approx(expected[qid, measure.trec_name()], abs=1e-12), (
                    qid, measure.label, level)
            else:  # trec_eval -c: a query the run lacks is 0 (1 for num_q)
                assert evaluation.values[i, j] == (1.0 if measure.measure == "NumQ" else 0.0), (qid, measure.label)
    assert len(expected) == len(evaluation.measures) * int(evaluation.in_run.sum())


@settings(max_examples=40, deadline=None)
@given(judged_runs(), st.sampled_from([1, 2, 3]))
def test_integer_labels_agree_with_pytrec_eval(data, level):
    run, qrels = data
    qrels = qrels.assign(rel=np.floor(qrels["rel"]))
    qrel_dict, run_dict = pytrec_dicts(run, qrels)
    names = [name for name in NEW.split() if name.split(".")[0] not in NOT_IN_PYTREC_EVAL]
    expected = pytrec_eval.RelevanceEvaluator(qrel_dict, set(names), relevance_level=level).evaluate(run_dict)
    asked = " ".join(names)
    evaluation = evaluate(run, qrels, measures=asked, rel_level=level)
    checked = 0
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            if evaluation.in_run[i] and qid in expected:
                value = expected[qid][measure.trec_name()]
                if measure.measure in ("gm_map", "gm_bpref"):  # pytrec_eval gives log(max(v, MIN_GEO_MEAN))
                    assert math.log(max(evaluation.values[i, j], MIN_GEO_MEAN)) == pytest.approx(value, abs=1e-12)
                else:
                    assert evaluation.values[i, j] == pytest.approx(value, abs=1e-12), (qid, measure.label)
                checked += 1
    assert checked == len(evaluation.measures) * len(set(expected) & set(evaluation.qids[evaluation.in_run]))
