"""The measures beside NDCG (design section 11): trec_eval's semantics per query and mean, checked
against trec_eval's own code (pytrec_eval), ir_measures, trec_eval's output on DL 2019 and a plain
reference implementation on hypothesis-generated runs with ties, float and negative labels."""

from __future__ import annotations

import json

import gzip
import math
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.build import notebook_io
from ndcg_report import ParameterError, evaluate
from ndcg_report.core.measures.names import Measure, resolve_measures, trec_sorted
from ndcg_report.core.presets import choose_headline, measure_set, presets
from tests.conftest import pytrec_dicts

TREC_MEASURES = ("ndcg_cut.1,3,10,100 ndcg map map_cut.5,10,1000 recip_rank P.1,5,10,100 recall.5,100,1000 Rprec "
                 "success.1,5,10 num_ret num_rel num_rel_ret")


def trec_dicts(path) -> dict[str, dict[str, float]]:
    """qrels (int labels) or run (float scores) of a TREC file as pytrec_eval takes them."""
    opener = gzip.open if str(path).endswith(".gz") else open
    found: dict[str, dict[str, float]] = {}
    with opener(path, "rt") as lines:
        for line in lines:
            parts = line.split()
            if len(parts) == 4:
                found.setdefault(parts[0], {})[parts[2]] = int(parts[3])
            else:
                found.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return found


@pytest.fixture(scope="module")
def dl19_dicts(dl19):
    return {name: trec_dicts(dl19[name]) for name in ("qrels", "bm25", "monot5")}


# --- trec_eval's code: pytrec_eval --------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("system", ["bm25", "monot5"])
def test_every_measure_equals_pytrec_eval_on_dl19(dl19, dl19_dicts, level, system):
    names = set(TREC_MEASURES.split())
    expected = pytrec_eval.RelevanceEvaluator(dl19_dicts["qrels"], names, relevance_level=level).evaluate(
        dl19_dicts[system])
    evaluation = evaluate(dl19[system], dl19["qrels"], measures=TREC_MEASURES, rel_level=level, no_relevant="zero")
    assert len(evaluation.measures) == 24
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            assert evaluation.values[i, j] == expected[qid][measure.trec_name()], (qid, measure.label)


def test_trec_eval_output_on_dl19_bm25(dl19):
    """trec_eval's own per-query output for the BM25 run (shipped with the data: recall_1000, map_cut
    at level 2, the TREC DL convention) equals ours to its 4 decimals."""
    expected: dict[tuple[str, str], str] = {}
    for line in dl19["bm25_eval"].read_text().splitlines():
        name, qid, value = line.split()
        expected[name, qid] = value
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures="recall.1000 map_cut.10,100 ndcg_cut.10,100",
                          rel_level=2)
    compared = 0
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            if (measure.trec_name(), qid) in expected:
                assert f"{evaluation.values[i, j]:.4f}" == expected[measure.trec_name(), qid], (qid, measure.label)
                compared += 1
    assert compared == 5 * 43


def test_published_dl19_bm25_figures(dl19):
    # Anserini's DL19 passage regression (BM25 default, trec_eval -c -l 2): AP 0.3013, R@1000 0.7501;
    # RR (level 2) 0.7036 as the TREC DL 2019 overview's bm25base_p row prints it
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures="map recall.1000 recip_rank ndcg_cut.10", rel_level=2)
    assert f"{evaluation.mean('AP'):.4f}" == "0.3013"
    assert f"{evaluation.mean('R@1000'):.4f}" == "0.7501"
    assert f"{evaluation.mean('RR'):.4f}" == "0.7036"
    assert f"{evaluation.mean('nDCG@10'):.4f}" == "0.5058"


# --- ir_measures --------------------------------------------------------------------------------


def test_ir_measures_names_and_values_on_dl19(dl19):
    qrels = list(ir_measures.read_trec_qrels(str(dl19["qrels"])))
    run = list(ir_measures.read_trec_run(str(dl19["monot5"])))
    names = "nDCG@10 nDCG AP(rel=2) AP(rel=2)@100 RR(rel=2) RR(rel=2)@10 P(rel=2)@10 R(rel=2)@1000 Success(rel=2)@5 Rprec(rel=2)"
    wanted = [ir_measures.parse_measure(name) for name in names.split()]
    expected = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(wanted, qrels, run)}
    evaluation = evaluate(dl19["monot5"], dl19["qrels"], measures=[str(m) for m in wanted])
    assert evaluation.rel_level == 2
    for j, measure in enumerate(evaluation.measures):
        name = str(wanted[j])
        for i, qid in enumerate(evaluation.qids):
            assert evaluation.values[i, j] == pytest.approx(expected[qid, name], abs=1e-12), (qid, name)


# --- a plain reference on generated runs ----------------------------------------------------------


def reference(run: pd.DataFrame, qrels: pd.DataFrame, level: float, ks: list[int]) -> dict:
    """trec_eval's m_*.c, one query at a time in plain Python: {(qid, trec name): value}."""
    values = {}
    for qid, lines in run.groupby("qid", sort=False):
        judged = dict(zip(qrels.loc[qrels["qid"] == qid, "docid"], qrels.loc[qrels["qid"] == qid, "rel"]))
        if not judged:
            continue
        docs = sorted(lines.itertuples(), key=lambda row: row.docid, reverse=True)
        docs = sorted(docs, key=lambda row: -row.score)  # stable: ties stay in docid descending order
        relevant = [judged.get(row.docid, -math.inf) >= level for row in docs]
        num_rel = sum(label >= level for label in judged.values())
        positions = [i for i, hit in enumerate(relevant) if hit]
        values[qid, "num_ret"] = len(docs)
        values[qid, "num_rel"] = num_rel
        values[qid, "num_rel_ret"] = len(positions)
        ap = sum((n + 1) / (i + 1) for n, i in enumerate(positions))
        values[qid, "map"] = ap / num_rel if num_rel else 0.0
        values[qid, "recip_rank"] = 1 / (positions[0] + 1) if positions else 0.0
        values[qid, "Rprec"] = sum(i < num_rel for i in positions) / num_rel if num_rel else 0.0
        for k in ks:
            top = [i for i in positions if i < k]
            values[qid, f"P_{k}"] = len(top) / k
            values[qid, f"recall_{k}"] = len(top) / num_rel if num_rel else 0.0
            values[qid, f"map_cut_{k}"] = sum((n + 1) / (i + 1) for n, i in enumerate(top)) / num_rel if num_rel else 0.0
            values[qid, f"success_{k}"] = 1.0 if top else 0.0
            values[qid, f"recip_rank_cut_{k}"] = 1 / (top[0] + 1) if top else 0.0
    return values


@st.composite
def tied_runs(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries with tied scores, float and negative labels, queries with nothing relevant, runs
    shorter than the cut-offs, unjudged and unretrieved documents, run-only and qrels-only queries."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    runs, qrels = [], []
    for q in range(draw(st.integers(1, 6))):
        qid = ["7", "007", "q\u00e9", "Q", "10", "9"][q]
        pool = list(dict.fromkeys(f"d{rng.integers(0, 40)}" for _ in range(50)))
        n_ret = int(rng.integers(1, len(pool)))
        scores = rng.integers(0, 4, size=n_ret).astype(float)  # few values: many ties
        runs.append(pd.DataFrame({"qid": qid, "docid": pool[:n_ret], "score": scores}))
        if q == 4:
            continue  # run only
        judged = [d for d in pool if rng.random() < 0.5] or pool[:1]
        labels = rng.choice([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0], size=len(judged))
        if q == 2:
            labels = np.minimum(labels, 0.0)  # nothing relevant
        qrels.append(pd.DataFrame({"qid": qid, "docid": judged, "rel": labels}))
    return pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True)


@settings(max_examples=60, deadline=None)
@given(tied_runs(), st.sampled_from([0.5, 1, 1.5, 2, 3]))
def test_agrees_with_a_plain_reference_on_ties_and_float_labels(data, level):
    run, qrels = data
    ks = [1, 3, 10, 100]
    names = "num_ret num_rel num_rel_ret map recip_rank Rprec " + " ".join(
        f"P@{k} R@{k} AP@{k} Success@{k} RR@{k}" for k in ks)
    evaluation = evaluate(run, qrels, measures=names, rel_level=level, no_relevant="zero")
    expected = reference(run, qrels, level, ks)
    checked = 0
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            if evaluation.in_run[i]:
                assert evaluation.values[i, j] == pytest.approx(expected[qid, measure.trec_name()], abs=1e-12), (
                    qid, measure.label)
                checked += 1
            else:  # missing from the run: every measure 0, as trec_eval -c counts it
                assert evaluation.values[i, j] == (evaluation.num_rel[i] if measure.measure == "NumRel" else 0.0)
    assert checked == len(evaluation.measures) * int(evaluation.in_run.sum())


@settings(max_examples=40, deadline=None)
@given(tied_runs())
def test_integer_labels_agree_with_pytrec_eval(data):
    run, qrels = data
    qrels = qrels.assign(rel=np.floor(qrels["rel"]))
    qrel_dict, run_dict = pytrec_dicts(run, qrels)
    expected = pytrec_eval.RelevanceEvaluator(qrel_dict, set(TREC_MEASURES.split()), relevance_level=2).evaluate(run_dict)
    evaluation = evaluate(run, qrels, measures=TREC_MEASURES, rel_level=2)
    for j, measure in enumerate(evaluation.measures):
        for i, qid in enumerate(evaluation.qids):
            if evaluation.in_run[i]:
                assert evaluation.values[i, j] == pytest.approx(expected[qid][measure.trec_name()], abs=1e-12)


# --- which queries are averaged ----------------------------------------------------------------------


def test_binary_measures_skip_queries_with_nothing_at_the_level():
    run = pd.DataFrame({"qid": ["a", "a", "b", "b"], "docid": ["x", "y", "x", "y"], "score": [2.0, 1.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["a", "a", "b", "c"], "docid": ["x", "y", "y", "z"], "rel": [1.0, 2.0, 1.0, 2.0]})
    evaluation = evaluate(run, qrels, measures="nDCG@2 AP P@1", rel_level=2, no_relevant="skip")
    # b: relevant to nDCG (label 1), nothing at level 2 for AP and P; c: missing from the run (zero)
    assert evaluation.averaged.tolist() == [[True, True, True], [True, False, False], [True, True, True]]
    assert evaluation.mean("AP") == pytest.approx((0.5 + 0.0) / 2)
    assert evaluation.counts.below_level == 1
    zero = evaluate(run, qrels, measures="nDCG@2 AP P@1", rel_level=2, no_relevant="zero")
    assert zero.mean("AP") == pytest.approx(0.5 / 3)  # trec_eval -c -l 2
    assert zero.mean("P@1") == 0.0


def test_nDCG_ignores_the_relevance_level(dl19):
    one = evaluate(dl19["bm25"], dl19["qrels"], measures="nDCG@10", rel_level=1)
    three = evaluate(dl19["bm25"], dl19["qrels"], measures="nDCG@10", rel_level=3)
    assert np.array_equal(one.values, three.values)


def test_per_query_and_summary_are_keyed_by_measure_and_integer_k(dl19):
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures="nDCG@10 RR AP@100")
    rows = evaluation.per_query
    assert len(rows.query("k == 10")) == 43
    assert set(rows.loc[rows["k"].isna(), "measure"]) == {"RR"}
    assert evaluation.summary.loc[("AP", 100), "n"] == 43
    assert evaluation.summary.loc[("RR", None), "mean"] == pytest.approx(evaluation.mean("RR"))
    assert rows.loc[rows["measure"] != "nDCG", "dcg"].isna().all()


# --- names and presets ------------------------------------------------------------------------------


@pytest.mark.parametrize(("trec", "ir"), [
    ("ndcg_cut.10,100", "nDCG@10 nDCG@100"), ("ndcg", "nDCG"), ("recall.1000", "R@1000"), ("P.10", "P@10"),
    ("map", "AP"), ("map_cut.100", "AP@100"), ("recip_rank", "RR"), ("success.5", "Success@5"), ("Rprec", "Rprec"),
    ("num_rel_ret", "NumRelRet"), ("ndcg_cut_10", "NDCG@10"), ("P_5", "p@5"), ("recip_rank", "MRR"),
])
def test_trec_eval_and_ir_measures_spellings_name_the_same_measures(trec, ir):
    assert resolve_measures(trec).measures == resolve_measures(ir).measures


def test_a_bare_family_takes_the_cutoffs_given_else_trec_evals():
    assert [m.k for m in resolve_measures("P").measures] == [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    assert [m.k for m in resolve_measures("success").measures] == [1, 5, 10]
    assert [m.k for m in resolve_measures("P", cutoffs="3,10").measures] == [3, 10]
    assert resolve_measures(None, cutoffs="10,all").measures == (Measure("nDCG", 10), Measure("nDCG", None))


def test_trec_order_is_trec_evals():
    measures = resolve_measures("RR@10 success.1 ndcg_cut.10 recall.5 P.5 ndcg map_cut.5 Rprec map num_ret").measures
    assert [m.trec_name() for m in trec_sorted(measures)] == [
        "num_ret", "map", "Rprec", "P_5", "recall_5", "ndcg", "ndcg_cut_10", "map_cut_5", "success_1",
        "recip_rank_cut_10"]
    assert Measure("nDCG", 10).trec_name("exponential") == "ndcg_exp_cut_10"


@pytest.mark.parametrize("bad", ["ndcg_cutt.10", "P@0", "Rprec@10", "nDCG(gains={0:0})@10", "AP(rel=2) RR(rel=1)",
                                 "P@x", "map_10", "", "P@all"])
def test_bad_measure_names_are_refused(bad):
    with pytest.raises(ParameterError):
        resolve_measures(bad)


def test_a_level_given_twice_must_agree():
    assert resolve_measures("AP(rel=2)").rel_level == 2
    with pytest.raises(ParameterError, match="level given is 1"):
        resolve_measures("AP(rel=2)", rel_level=1)
    for bad in ("abc", "nan", "-1", "inf", True):
        with pytest.raises(ParameterError):
            resolve_measures("AP", rel_level=bad)


def test_presets_are_data_and_resolve():
    assert set(presets()) == {"trec-dl", "msmarco", "beir", "rag"}
    dl = measure_set("trec-dl")
    assert [m.label for m in dl.measures] == ["nDCG@10", "nDCG@100", "RR", "AP", "R@100", "R@1000"]
    assert dl.rel_level == 2
    assert measure_set("trec-dl", rel_level=1).rel_level == 1
    assert measure_set("trec-dl", measures="P@10").measures[-1] == Measure("P", 10)
    assert choose_headline(None, "msmarco", measure_set("msmarco").measures) == Measure("RR", 10)
    assert len(measure_set("rag").measures) == 16
    with pytest.raises(ParameterError, match="no preset 'nope'"):
        measure_set("nope")


def test_headline_must_be_computed_and_not_a_count():
    measures = resolve_measures("nDCG@10 NumRet RR").measures
    assert choose_headline(None, "", measures) == Measure("nDCG", 10)
    assert choose_headline("RR", "", measures) == Measure("RR", None)
    with pytest.raises(ParameterError, match="was not computed"):
        choose_headline("AP", "", measures)
    with pytest.raises(ParameterError, match="count"):
        choose_headline("NumRet", "", measures)


# --- the command line ---------------------------------------------------------------------------------

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False)


def test_eval_prints_trec_evals_names_order_and_counts(dl19, dl19_dicts):
    result = cli("eval", "-q", "-l", "2", "-m", "RR@10 ndcg_cut.10", "-m", "num_rel_ret", "-m", "map", "-m", "P.10",
                 dl19["qrels"], dl19["bm25"])
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    names = [line.split("\t")[0].strip() for line in lines]
    assert names[:5] == ["num_rel_ret", "map", "P_10", "ndcg_cut_10", "recip_rank_cut_10"]
    expected = pytrec_eval.RelevanceEvaluator(dl19_dicts["qrels"], {"num_rel_ret"}, relevance_level=2).evaluate(
        dl19_dicts["bm25"])
    assert lines[0] == f"num_rel_ret           \t1037798\t{int(expected['1037798']['num_rel_ret'])}"  # a count
    assert len(lines) == 5 * 43 + 5 and all(line.split("\t")[1] == "all" for line in lines[-5:])
    evaluation = evaluate(dl19["bm25"], dl19["qrels"], measures="num_rel_ret", rel_level=2)
    assert lines[-5] == f"num_rel_ret           \tall\t{int(evaluation.values[:, 0].sum())}"
    assert lines[-4] == "map                   \tall\t0.3013"


def test_every_format_averages_as_trec_eval_and_says_when_told_otherwise(tmp_path):
    (tmp_path / "qrels").write_text("a 0 x 2\na 0 y 1\nb 0 x 1\nb 0 z 0\n")
    (tmp_path / "run").write_text("a Q0 x 1 2 t\na Q0 y 2 1 t\nb Q0 x 1 2 t\n")
    trec = cli("eval", "-l", "2", "-m", "map", tmp_path / "qrels", tmp_path / "run")
    assert trec.stdout == "map                   \tall\t0.5000\n" and trec.stderr == ""  # b: 0, as trec_eval -c
    csv_out = cli("eval", "-l", "2", "-m", "map", "--format", "csv", tmp_path / "qrels", tmp_path / "run")
    assert csv_out.stdout.splitlines()[1] == "AP,,2,0.5000,0.5000,0.7071,1.0000" and csv_out.stderr == ""
    json_out = cli("eval", "-l", "2", "-m", "map", "--format", "json", tmp_path / "qrels", tmp_path / "run")
    assert json.loads(json_out.stdout)["summary"]["AP"]["mean"] == 0.5  # one input, one number in every format
    skip = cli("eval", "-l", "2", "-m", "map", "--no-relevant", "skip", tmp_path / "qrels", tmp_path / "run")
    assert skip.stdout == "map                   \tall\t1.0000\n"
    assert skip.stderr == ("ndcg-report: note: as the options given average, the means leave out the judged queries "
                           "1 with no label >= 2 (binary measures), so they differ from trec_eval -c's, which counts "
                           "them as 0\n")
    zero = cli("eval", "-l", "2", "-m", "map", "--no-relevant", "zero", tmp_path / "qrels", tmp_path / "run")
    assert zero.stdout == trec.stdout and zero.stderr == ""


def test_exponential_gain_has_a_name_of_its_own(dl19):
    result = cli("eval", "--gain", "exponential", "-k", "10,all", dl19["qrels"], dl19["bm25"])
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["ndcg_exp", "ndcg_exp_cut_10"]


def test_preset_is_in_help_and_eval(dl19):
    help_text = " ".join(cli("eval", "--help").stdout.split())
    assert "trec-dl: nDCG@10 nDCG@100 RR AP R@100 R@1000 at relevance level 2 (headline nDCG@10)" in help_text
    result = cli("eval", "--preset", "msmarco", "--format", "csv", dl19["qrels"], dl19["bm25"])
    assert [line.split(",")[:2] for line in result.stdout.splitlines()[1:]] == [["RR", "10"], ["R", "1000"],
                                                                               ["nDCG", "10"]]


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "ndcg_cutt.10"], "unknown measure 'ndcg_cutt.10'"),
    (["-m", "P@0"], "cut-off '0' must be a whole number >= 1"),
    (["-l", "two"], "the relevance level must be a number >= 0, e.g. 1 or 2; got 'two'"),
    (["-l", "nan"], "the relevance level must be a finite number >= 0"),
    (["--preset", "trec"], "there is no preset 'trec'; the presets are trec-dl, msmarco, beir, rag"),
    (["-m", "AP(rel=2)", "-l", "1"], "AP(rel=2) asks for relevance level 2 but the level given is 1"),
])
def test_bad_measure_options_are_one_line_and_exit_2(dl19, args, message):
    result = cli("eval", *args, dl19["qrels"], dl19["bm25"])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr and message in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "nDCG@10 foo"], "unknown measure 'foo'"),
    (["-l", "x"], "the relevance level must be a number"),
    (["--preset", "nope"], "there is no preset 'nope'"),
    (["-m", "nDCG@10 RR", "--headline", "AP"], "headline AP: AP was not computed; have nDCG@10, RR"),
    (["--headline", "nDCG@7"], "headline nDCG@7: nDCG@7 was not computed"),
    (["-m", "nDCG@10 NumRet", "--headline", "NumRet"], "is a count of documents"),
])
def test_bad_measure_options_of_a_build_write_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                 SMALL / "qrels.txt", *args, "--out", out)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_batch_config_takes_measures_and_refuses_bad_ones(tmp_path):
    import yaml

    from ndcg_report.batch.config import load_config

    def config(**options) -> Path:
        path = tmp_path / "c.yml"
        path.write_text(yaml.safe_dump({"output": "out", "reports": [{
            "name": "r", "run": str(SMALL / "monot5.txt"), "baseline": str(SMALL / "bm25.txt"),
            "qrels": str(SMALL / "qrels.txt"), **options}]}))
        return path

    report = load_config(config(preset="trec-dl", measures=["P@10"], headline="RR", rel_level=3)).reports[0]
    assert (report.options.preset, report.options.measures, report.options.headline) == ("trec-dl", "P@10", "RR")
    for options, message in ((dict(measures="nope"), "key 'measures': unknown measure 'nope'"),
                             (dict(preset="x"), "key 'preset': there is no preset 'x'"),
                             (dict(rel_level="high"), "key 'rel_level'"),
                             (dict(measures="RR", headline="AP"), "headline AP")):
        with pytest.raises(ParameterError, match=re.escape(message)):
            load_config(config(**options))


# --- the report ------------------------------------------------------------------------------------


def test_missing_skip_compares_means_over_the_queries_every_system_shares(tmp_path):
    """A run equal to the baseline on its 5 queries (of 8): the leaderboard shows equal means over those
    5, not the run's mean over 5 beside the baseline's over 8; the own-query means are in the note."""
    from types import SimpleNamespace

    from ndcg_report import compare_runs
    from ndcg_report.analysis.results import leaderboard_note

    bm25 = read_lines(SMALL / "bm25.txt")
    qids = sorted({line.split()[0] for line in bm25})
    same = [line for line in bm25 if line.split()[0] in qids[:5]]
    experiment = compare_runs({"subset": pd.DataFrame([(l.split()[0], l.split()[2], float(l.split()[4])) for l in same],
                                                      columns=["qid", "docid", "score"])},
                              SMALL / "qrels.txt", SMALL / "bm25.txt", baseline_name="BM25", missing="skip",
                              cutoffs="10", n_resamples=200)
    board = experiment.leaderboard
    assert board.at["subset", "nDCG@10"] == board.at["BM25", "nDCG@10"]
    row = experiment.comparison_row("subset")
    assert (row["n"], row["wins"], row["ties"], row["losses"]) == (5, 0, 5, 0)
    note = leaderboard_note(SimpleNamespace(experiment=experiment))
    own = experiment.baseline.mean(10)
    assert f"BM25 nDCG@10 {own:.4f} over 8" in note and board.at["BM25", "nDCG@10"] != own


def read_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def test_binary_labels_are_named_in_the_data_checks(tmp_path):
    from ndcg_report.build.parameters import validate_parameters

    binary = tmp_path / "qrels.txt"
    binary.write_text("".join(f"{q} 0 {d} {min(int(r), 1)}\n" for q, _, d, r in
                              (line.split() for line in read_lines(SMALL / "qrels.txt"))))
    params = validate_parameters(runs=[str(SMALL / "monot5.txt")], baseline=str(SMALL / "bm25.txt"),
                                 qrels=str(binary), measures="nDCG@10 R@10 RR")
    warnings = notebook_io.load_report(params).warnings
    assert any(w.startswith("Every judgement is 0 or 1 (binary labels): nDCG@k then reduces to a discounted count")
               for w in warnings)
    graded = notebook_io.load_report(validate_parameters(runs=[str(SMALL / "monot5.txt")], baseline=str(SMALL / "bm25.txt"),
                                                     qrels=str(SMALL / "qrels.txt"), measures="nDCG@10 R@10 RR",
                                                     rel_level=9)).warnings
    assert not any("binary labels" in w for w in graded)
    assert any(w.startswith("No judgement reaches the relevance level 9") for w in graded)


def test_the_table_gives_trec_eval_printing_order_and_all_trec():
    """--format trec's order and -m all_trec come from the one table (registry.py), in trec_eval's measures.c
    order; every family there is computed, and its names have a place in that order."""
    from ndcg_report.core.measures.pass_arrays import SUMS
    from ndcg_report.core.measures.registry import COMPUTATIONS, FAMILIES, JUDGED_ONLY, TREC_NICKNAMES, TREC_ORDER

    assert TREC_ORDER == ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                          "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult",
                          "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_exp", "ndcg_rel", "Rndcg", "ndcg_cut",
                          "ndcg_exp_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
                          "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj", "recip_rank_cut",
                          "ndcg_judged", "ndcg_exp_judged", "ndcg_judged_cut", "ndcg_exp_judged_cut")
    assert TREC_NICKNAMES == {"all_trec": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
                                           "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "infAP",
                                           "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg",
                                           "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
                                           "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                                           "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj")}
    assert JUDGED_ONLY == {"nDCG": "nDCG_judged"}
    assert list(FAMILIES) == ["nDCG", "nDCG_judged", "P", "R", "AP", "RR", "Rprec", "Success", "NumRet", "NumRel",
                              "NumRelRet", "NumQ", "gm_map", "Bpref", "IPrec", "infAP", "gm_bpref", "Rprec_mult",
                              "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "relative_P", "SetP",
                              "SetRelP", "SetR", "SetAP", "SetF", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"]
    for name, computation in COMPUTATIONS.items():
        assert computation.family is FAMILIES[name] and set(computation.sums) <= set(SUMS)
        assert (computation.dcg is not None) == (computation.family.kind == "graded"), name


def test_the_names_and_presets_load_without_numpy():
    """The command line's parser reads the presets (--help), so the table of measures must not import numpy."""
    code = ("import sys; from ndcg_report.cli import build_parser; build_parser(); "
            "from ndcg_report.core.measures.names import resolve_measures; resolve_measures('all_trec nDCG@10'); "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas') if m in sys.modules))")
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert imported.stdout == "[]\n"


def test_exponential_gain_is_exact_for_labels_past_2_to_the_1023(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 a 1023\nq1 0 b 1023\nq1 0 c 1023\nq1 0 d 1022\nq2 0 a 1025\nq2 0 b 3\n")
    (tmp_path / "run").write_text("q1 Q0 d 1 4 t\nq1 Q0 a 2 3 t\nq1 Q0 b 3 2 t\nq2 Q0 b 1 4 t\nq2 Q0 a 2 3 t\n")
    evaluation = evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="3", gain="exponential")

    def exact(gained: list[int], ideal: list[int]) -> float:
        discount = [Fraction(1 / math.log2(rank + 2)) for rank in range(3)]
        dcg = sum(Fraction(2 ** label - 1) * d for label, d in zip(gained, discount))
        return float(dcg / sum(Fraction(2 ** label - 1) * d for label, d in zip(ideal, discount)))

    ndcg = evaluation.table(3)["nDCG@3"]
    assert ndcg["q1"] == pytest.approx(exact([1022, 1023, 1023], [1023, 1023, 1023]), rel=1e-14)  # 0.7654
    assert ndcg["q2"] == pytest.approx(exact([3, 1025], [1025, 3]), rel=1e-14)
    assert round(ndcg["q1"], 4) == 0.7654
