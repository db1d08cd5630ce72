"""Several baselines: every system compared with each, each baseline its own Holm family, the first the headline's.

The oracle is the one-baseline Experiment run once per baseline (the others given as runs): every statistic
against a baseline, its Holm-adjusted p-values included, must be that Experiment's, to the last bit.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ndcg_report.analysis.compare import compare_runs
from ndcg_report.analysis.paper.leaderboard import leaderboard_csv, leaderboard_latex, leaderboard_markdown
from ndcg_report.analysis.paper.record import experiment_record
from ndcg_report.analysis.tables.comparisons import compared_pairs
from ndcg_report.errors import ParameterError
from ndcg_report.stats.paired import COLUMNS

DL19 = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"
QRELS = DL19 / "qrels.dl19-passage.txt"
BM25 = DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"
TOP20 = DL19 / "monot5-top20-bm25.dl19.run.gz"
RUNS = {"monoT5": DL19 / "monot5.dl19.run.gz", "rrf": DL19 / "rrf.bm25-monot5.dl19.run.gz"}
OPTIONS = dict(measures="nDCG@10 AP R@100", rel_level=2, n_resamples=2_000)


@pytest.fixture(scope="module")
def several():
    return compare_runs(RUNS, QRELS, baseline=[("BM25", BM25), ("top20", TOP20)], **OPTIONS)


@pytest.fixture(scope="module")
def alone():
    """The one-baseline Experiments: BM25 with top20 as a run, and top20 with BM25 as a run."""
    return {"BM25": compare_runs({**RUNS, "top20": TOP20}, QRELS, baseline=BM25, baseline_name="BM25", **OPTIONS),
            "top20": compare_runs({**RUNS, "BM25": BM25}, QRELS, baseline=TOP20, baseline_name="top20", **OPTIONS)}


def test_each_baseline_s_comparisons_are_those_of_the_report_with_it_alone(several, alone):
    assert several.baselines == ("BM25", "top20") and several.names == ("monoT5", "rrf", "top20")
    for base, experiment in alone.items():
        mine, theirs = several.comparisons_with(base), experiment.comparisons
        assert list(mine.index) == list(theirs.index)  # the same systems, in the same order: the same family
        pd.testing.assert_frame_equal(mine[list(COLUMNS)], theirs[list(COLUMNS)], check_exact=True)
        assert set(mine["family_size"]) == {3}
    pvalues = several.comparisons_with("top20")["holm_randomization_pvalue"]
    assert pvalues.loc[("rrf", "nDCG", 10)] < 0.05 < pvalues.loc[("monoT5", "nDCG", 10)]  # rrf below top20, monoT5 not


def test_the_first_baseline_keeps_every_view_the_single_baseline_report_has(several, alone):
    one = alone["BM25"]
    assert several.baseline_name == "BM25" and several.comparisons is several.comparisons_with()
    pd.testing.assert_frame_equal(several.leaderboard, one.leaderboard)
    pd.testing.assert_frame_equal(several.significance, one.significance)
    assert several.pairwise.pvalues.equals(one.pairwise.pvalues)
    pd.testing.assert_frame_equal(several.deltas(), one.deltas())  # the figures' deltas: against the first


def test_the_marks_against_a_baseline_are_the_signs_of_its_significant_deltas(several):
    table = several.comparisons_with("top20")
    expected = np.sign(table["delta"]) * (table["holm_randomization_pvalue"] < several.alpha)
    marks = several.significance_with("top20")
    assert list(marks.index) == ["monoT5", "rrf", "BM25"]
    assert marks.to_numpy().ravel().tolist() == expected.astype(int).tolist()
    assert marks.at["rrf", "nDCG@10"] == -1 and marks.at["BM25", "nDCG@10"] == -1


def test_the_comparison_tables_pair_every_system_with_every_baseline_but_itself(several):
    assert compared_pairs(several) == [("monoT5", "BM25"), ("monoT5", "top20"), ("rrf", "BM25"), ("rrf", "top20"),
                                       ("top20", "BM25"), ("BM25", "top20")]


@pytest.mark.parametrize("baseline", [
    {"BM25": BM25, "top20": TOP20},
    [("BM25", BM25), ("top20", TOP20)],
    iter([("BM25", BM25), ("top20", TOP20)]),
], ids=["mapping", "pairs", "iterator"])
def test_several_baselines_are_taken_as_runs_are_given(baseline, several):
    experiment = compare_runs(RUNS, QRELS, baseline=baseline, **OPTIONS)
    assert experiment.baselines == ("BM25", "top20")
    pd.testing.assert_frame_equal(experiment.comparisons_with("top20"), several.comparisons_with("top20"))


def test_baseline_name_names_the_first_baseline_given_without_a_name():
    experiment = compare_runs(RUNS, QRELS, baseline=[BM25, ("top20", TOP20)], baseline_name="BM25", **OPTIONS)
    assert experiment.baselines == ("BM25", "top20")
    unnamed = compare_runs(RUNS, QRELS, baseline=[BM25, TOP20], **OPTIONS)
    assert unnamed.baselines == ("run.msmarco-v1-passage.bm25-default.dl19", "monot5-top20-bm25.dl19")


@pytest.mark.parametrize("baseline, name, message", [
    ([("BM25", BM25), ("monoT5", TOP20)], "", "run 1 and baseline 2 are named 'monoT5'"),
    ([("BM25", BM25), ("again", RUNS["rrf"])], "", "given twice .as run 2 and as baseline 2"),
    ([("BM25", BM25), ("again", BM25)], "", "given twice"),
    ([("BM25", BM25), ("bm25", TOP20)], "", "like the baseline"),
    ([("BM25", BM25), ("top20", TOP20)], "other", "the first baseline is named twice"),
    ([], "", "give a baseline run"),
], ids=["a run's name", "a run's file", "the first's file", "the first's name", "named twice", "none"])
def test_a_baseline_that_is_also_a_system_is_refused(baseline, name, message):
    with pytest.raises(ParameterError, match=message):
        compare_runs(RUNS, QRELS, baseline=baseline, baseline_name=name, **OPTIONS)


def test_the_paper_tables_mark_each_baseline_by_its_number(several):
    record = experiment_record(several)
    latex, markdown = leaderboard_latex(record), leaderboard_markdown(record)
    marks = several.significance_with("top20")
    assert marks.at["rrf", "nDCG@10"] == -1 and several.significance.at["rrf", "nDCG@10"] == 1
    rrf_latex = next(line for line in latex.splitlines() if line.strip().startswith("rrf &"))
    assert r"$^{\uparrow_{1}\,\downarrow_{2}}$" in rrf_latex.split("&")[1]
    rrf_markdown = next(line for line in markdown.splitlines() if line.startswith("| rrf |"))
    assert rrf_markdown.split("|")[2].strip().endswith("▲₁ ▼₂")
    rows = [line.split("&")[0].strip() for line in latex.splitlines() if "(baseline" in line]
    assert rows == ["BM25 (baseline 1)", "top20 (baseline 2)"]  # the baselines last, in order, each numbered
    assert "baseline n (1: BM25, 2: top20" in markdown and "each baseline its own family" in markdown
    table = list(csv.DictReader(io.StringIO(leaderboard_csv(record))))
    rrf = next(row for row in table if row["system"] == "rrf" and row["measure"] == "nDCG" and row["k"] == "10")
    against = several.comparisons_with("top20").loc[("rrf", "nDCG", 10)]
    assert float(rrf["p_holm vs top20"]) == pytest.approx(against["holm_randomization_pvalue"], abs=5e-5)
    assert rrf["significance vs top20"] == "-1" and rrf["significance"] == "1"


def test_one_baseline_tables_are_as_they_were(alone):
    markdown = leaderboard_markdown(experiment_record(alone["BM25"]))
    assert "₁" not in markdown and "(baseline 1)" not in markdown and "| BM25 (baseline) |" in markdown
