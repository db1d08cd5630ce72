"""Data checks an analyst needs next to the numbers: retrieval depth against the cut-offs, ties only
where they change a number, readable file names; and the CLI's help."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.build import notebook_io
from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.core.ties import _ties_ordered, tie_range
from ndcg_report.inputs.tables import load_qrels, load_run
from ndcg_report.analysis import checks as data_checks, content, results
from ndcg_report.build.parameters import validate_parameters
from ndcg_report.version import __version__

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
BM25 = DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"


def truncated(path: Path, depth: int, out: Path) -> Path:
    """The run with only its first `depth` lines per query (the file is in rank order)."""
    kept, seen = [], {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            qid = line.split()[0]
            seen[qid] = seen.get(qid, 0) + 1
            if seen[qid] <= depth:
                kept.append(line)
    out.write_text("".join(kept))
    return out


# --- ties ----------------------------------------------------------------------------------------


def ties_at(run, qrels, cutoffs: str):
    """tie_range of an nDCG evaluation at `cutoffs`, its Series indexed by cut-off ('1', 'all')."""
    ties = tie_range(run, qrels, evaluate(run, qrels, cutoffs))
    labels = {label: "all" if label == "nDCG" else label.removeprefix("nDCG@") for label in ties.worst.index}
    return type(ties)(*(series.rename(index=labels) for series in (ties.worst, ties.best, ties.queries)))


def test_ties_are_bounded_by_the_worst_and_the_best_order():
    run = pd.DataFrame({"qid": ["1"] * 4 + ["2"] * 3, "docid": list("abcdxyz"), "score": [3, 2, 2, 1, 5, 5, 4]})
    qrels = pd.DataFrame({"qid": ["1", "1", "2", "2"], "docid": ["b", "d", "x", "y"], "rel": [1, 1, 1, 1]})
    ties = ties_at(run, qrels, "1,2,3,all")
    # query 1: b (relevant) and c tie at ranks 2-3; docid descending puts c first, the worst order
    d = [1 / np.log2(r + 1) for r in range(1, 5)]
    idcg = d[0] + d[1]
    q1_worst = {"1": 0, "2": 0, "3": d[2] / idcg, "all": (d[2] + d[3]) / idcg}
    q1_best = {"1": 0, "2": d[1] / idcg, "3": d[1] / idcg, "all": (d[1] + d[3]) / idcg}
    for k in ("1", "2", "3", "all"):  # query 2: x and y tie, both relevant: their order changes nothing
        assert ties.worst[k] == pytest.approx((q1_worst[k] + 1) / 2, abs=1e-15)
        assert ties.best[k] == pytest.approx((q1_best[k] + 1) / 2, abs=1e-15)
    assert ties.queries.to_dict() == {"1": 0, "2": 1, "3": 1, "all": 1} and ties.affected == ["2", "3", "all"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9), st.integers(-1, 3)), min_size=1, max_size=30))
def test_trec_eval_s_order_lies_between_the_worst_and_the_best(run_lines, qrels_lines):
    run = pd.DataFrame(list({(q, d): s for q, d, s in run_lines}.items()), columns=["key", "score"])
    run = pd.DataFrame({"qid": [str(q) for q, _ in run["key"]], "docid": [f"d{d}" for _, d in run["key"]],
                        "score": run["score"].astype(float)})
    qrels = pd.DataFrame(list({(q, d): r for q, d, r in qrels_lines}.items()), columns=["key", "rel"])
    qrels = pd.DataFrame({"qid": [str(q) for q, _ in qrels["key"]], "docid": [f"d{d}" for _, d in qrels["key"]],
                          "rel": qrels["rel"].astype(float)})
    if not (qrels["rel"] > 0).any():
        return
    ties = ties_at(run, qrels, "1,3,all")
    as_trec_eval = evaluate(run, qrels, "1,3,all")
    for k in ("1", "3", "all"):
        assert ties.worst[k] - 1e-12 <= as_trec_eval.mean(k) <= ties.best[k] + 1e-12
    if run.groupby(["qid", "score"]).size().max() == 1:  # no tie at all: nothing moves
        assert ties.queries.sum() == 0 and ties.worst.equals(ties.best)


def reordered_whole_run(run, qrels, cutoffs: str) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(worst means, best means, queries moved) from evaluating the whole run in both orders."""
    run, qrels = load_run(run), load_qrels(qrels)
    worst, best = (evaluate(_ties_ordered(run.table, qrels.table, first), qrels, cutoffs) for first in (False, True))
    labels = [str(k) for k in worst.cutoffs]
    means = [pd.Series([e.mean(m) for m in e.measures], index=labels) for e in (worst, best)]
    return means[0], means[1], pd.Series(((worst.values != best.values) & worst.averaged).sum(axis=0), index=labels)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(-1, 2)), min_size=1, max_size=30),
       st.booleans())
def test_only_queries_with_a_relevant_tie_are_reordered_and_the_numbers_are_the_whole_run_s(run_lines, qrels_lines, grouped):
    run = pd.DataFrame([(str(q), f"d{d}", float(s)) for (q, d), s in {(q, d): s for q, d, s in run_lines}.items()],
                       columns=["qid", "docid", "score"])
    if grouped:  # as runs are written: each query's lines together, in rank order
        run = run.sort_values(["qid", "score"], ascending=[True, False], kind="stable")
    qrels = pd.DataFrame([(str(q), f"d{d}", float(r)) for (q, d), r in {(q, d): r for q, d, r in qrels_lines}.items()],
                         columns=["qid", "docid", "rel"])
    ties = ties_at(run, qrels, "1,3,all")
    worst, best, moved = reordered_whole_run(run, qrels, "1,3,all")
    assert ties.worst.to_dict() == worst.to_dict() or (ties.worst.isna() & worst.isna()).all()  # bit for bit
    assert ties.best.to_dict() == best.to_dict() or (ties.best.isna() & best.isna()).all()
    assert ties.queries.to_dict() == moved.to_dict()


def test_ties_warn_only_where_a_printed_mean_changes(tmp_path):
    params = validate_parameters(runs=[{"name": "RRF", "path": str(DL19 / "rrf.bm25-monot5.dl19.run.gz")}],
                                 baseline=str(BM25), qrels=str(DL19 / "qrels.dl19-passage.txt"), baseline_name="BM25")
    report = notebook_io.load_report(params)
    checks = data_checks.query_checks(report)
    assert checks.at["lines with tied scores", "BM25"] == 208 and checks.at["lines with tied scores", "RRF"] == 10293
    # BM25's ties move NDCG@100 of 2 queries, but its printed mean stays 0.5018 either way: counted, not warned
    assert report.experiment.tie_ranges["BM25"].queries["nDCG@100"] == 2
    assert not any(warning.startswith("BM25:") for warning in report.warnings)
    rrf = [warning for warning in report.warnings if warning.startswith("RRF: the order of tied scores")]
    assert len(rrf) == 1 and "nDCG@10 of 0.6692; tied documents ordered worst first give 0.6689, best first 0.6694" in rrf[0]
    assert checks.at["queries whose nDCG@10 the order of ties changes", "RRF"] == 1


# --- depth ---------------------------------------------------------------------------------------


def test_cutoffs_deeper_than_a_system_retrieves_are_marked(tmp_path):
    shallow = truncated(BM25, 30, tmp_path / "bm25-30.txt")
    params = validate_parameters(runs=[{"name": "monoT5", "path": str(DL19 / "monot5.dl19.run.gz")}],
                                 baseline=str(shallow), qrels=str(DL19 / "qrels.dl19-passage.txt"),
                                 baseline_name="BM25 top 30")
    report = notebook_io.load_report(params)
    experiment = report.experiment
    assert experiment.depth().loc["BM25 top 30"].tolist() == [30, 30, 30]
    assert {name: [m.label for m in measures] for name, measures in experiment.shallow_measures().items()} == {
        "monoT5": [], "BM25 top 30": ["nDCG@100", "nDCG@1000"]}
    depth_warnings = [w for w in report.warnings if w.startswith("BM25 top 30 retrieves 30 lines")]
    assert len(depth_warnings) == 1 and "nDCG@100, nDCG@1000" in depth_warnings[0]
    board = results.leaderboard(report)
    baseline_row = re.search(r'<tr class="baseline">(.*?)</tr>', board).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", baseline_row)
    assert ["†" in cell for cell in cells] == [False, False, False, False, False, True, True]
    assert "†" not in board.split('<tr class="baseline">')[0].split("</thead>")[1]  # monoT5 reaches every k
    table = results.comparison_table(report, "monoT5")
    assert [text.replace("\u00a0", " ") for text in table["depth"]] == ["", "", "", "", "", "† baseline 30 deep",
                                                                        "† baseline 30 deep"]
    assert "†: k is deeper than" in results.leaderboard_note(report)


def test_a_full_depth_report_has_no_depth_marks():
    params = validate_parameters(runs=[str(DL19 / "rrf.bm25-monot5.dl19.run.gz")], baseline=str(BM25),
                                 qrels=str(DL19 / "qrels.dl19-passage.txt"), ks="10,1000")
    report = notebook_io.load_report(params)
    assert "depth" not in results.comparison_table(report, report.experiment.names[0]).columns
    assert "†" not in results.leaderboard(report) and "†" not in results.leaderboard_note(report)


# --- files ----------------------------------------------------------------------------------------


def test_the_file_table_shows_short_hashes_and_full_ones_stay_in_the_summary():
    params = validate_parameters(runs=[str(DL19 / "monot5.dl19.run.gz")], baseline=str(BM25),
                                 qrels=str(DL19 / "qrels.dl19-passage.txt"), ks="10")
    report = notebook_io.load_report(params)
    shown = content.files_table(report)
    assert list(shown.columns) == ["role", "file", "format", "sha256 (first 12)", "lines"]
    assert shown["format"].tolist() == ["TREC text (gzip)", "TREC text (gzip)", "TREC text"]
    assert all(len(digest) == 12 for digest in shown["sha256 (first 12)"])
    assert [full[:12] for full in report.files["sha256"]] == shown["sha256 (first 12)"].tolist()
    assert all(len(full) == 64 for full in report.files["sha256"])


# --- command line ---------------------------------------------------------------------------------


def help_text(*command: str) -> str:
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", *command, "--help"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())


@pytest.mark.parametrize("command, defaults", [
    ("eval", ["(default: 1,3,5,10,20,100,1000)", "(default: linear)", "(default: zero, or the preset's)",
              "(default: keep, or the preset's: drop for beir)", "(default: trec)", "(default: 1, or the preset's)"]),
    ("build", ["(default: 1,3,5,10,20,100,1000)", "(default: linear)", "(default: zero, or the preset's)",
               "(default: 42)", "(default: 600)", "(default: made from the system names)", "(default: its file name)",
               "(default: 0.9, as Anserini)", "(default: 1,000)"]),
    ("demo", ["(default: dl19)", "(default: 600)", "(default: reports/demo, reports/demo- judges, reports/demo-cranfield, reports/demo-rag)",
              "(default: $NDCG_REPORT_CACHE/bm25 or the user cache)"]),
    ("batch", ["(default 1, at most the CPU count)"]),
])
def test_help_shows_defaults_and_exit_codes(command, defaults):
    text = help_text(command)
    for default in defaults:
        assert default in text, default
    assert "exit codes: 0 done 1 a step failed" in text and "2 bad input or usage" in text and "130 interrupted" in text
    assert "(default: )" not in text and "(default: None)" not in text and "(default: False)" not in text


def test_build_help_groups_the_corpus_only_options():
    text = help_text("build")
    group = text.split("BM25 baseline from a corpus (only with --corpus):")[1]
    assert all(option in group for option in ("--k1", "--b", "--top-k", "--cache-dir"))
    assert "--seed" not in group


def test_version():
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "--version"], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0 and result.stdout == f"ndcg-report {__version__}\n"
