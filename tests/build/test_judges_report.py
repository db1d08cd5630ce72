"""Several judgment sets in one report: compare_runs(qrels={...}), `build --qrels NAME=PATH`,
a batch's `qrels:` mapping, the report's section and summary.json's `judgments`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ndcg_report import compare_runs, evaluate, read_qrels

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

DATA = Path(__file__).resolve().parents[1] / "data"
SMALL, JUDGES = DATA / "small", DATA / "judges"
CONSOLE = Path(sys.executable).parent / "ndcg-report"
RUNS = {"monoT5": SMALL / "monot5.txt", "rrf": JUDGES / "rrf.txt"}
SETS = {"human": SMALL / "qrels.txt", "llm": JUDGES / "llm.txt"}


@pytest.fixture(scope="module")
def experiment():
    return compare_runs(RUNS, SETS, SMALL / "bm25.txt", baseline_name="BM25", preset="trec-dl",
                        fill_unjudged_from="llm")


def test_the_reference_is_what_every_table_uses(experiment):
    alone = compare_runs(RUNS, SETS["human"], SMALL / "bm25.txt", baseline_name="BM25", preset="trec-dl")
    pd.testing.assert_frame_equal(experiment.leaderboard, alone.leaderboard)
    pd.testing.assert_frame_equal(experiment.comparisons, alone.comparisons)
    assert alone.judgments is None


def test_a_systems_mean_under_a_set_is_what_eval_prints_on_that_set(experiment):
    means = experiment.judgments.means["llm"]
    for name, path in {**RUNS, "BM25": SMALL / "bm25.txt"}.items():
        evaluation = evaluate(path, SETS["llm"], measures="nDCG@10 AP RR", rel_level=2)  # trec-dl: -c -l 2
        for label in ("nDCG@10", "AP", "RR"):
            assert means[label][name] == pytest.approx(evaluation.overall(label), abs=1e-12), (name, label)


def test_the_filled_set_counts_the_pairs_only_the_other_set_judges_in_the_references_queries(experiment):
    human, llm = read_qrels(SETS["human"]).table.to_pandas(), read_qrels(SETS["llm"]).table.to_pandas()
    known = set(zip(human["qid"].astype(str), human["docid"]))
    queries = set(human["qid"].astype(str))
    added = {(q, d) for q, d in zip(llm["qid"].astype(str), llm["docid"]) if q in queries and (q, d) not in known}
    [filled] = [s for s in experiment.judgments.sets if s.filled_from]
    assert (filled.name, filled.filled_from, filled.filled_pairs) == ("human+llm", "llm", len(added))
    assert filled.judgments == len(known) + len(added)


def test_a_pytrec_eval_dict_is_one_set_not_named_sets():
    qrels = {qid: {docid: int(rel) for docid, rel in zip(group["docid"], group["rel"])}
             for qid, group in read_qrels(SETS["human"]).table.to_pandas().groupby("qid", observed=True)}
    one = compare_runs(RUNS, qrels, SMALL / "bm25.txt", preset="trec-dl")
    assert one.judgments is None
    assert one.leaderboard.loc["monoT5", "nDCG@10"] == pytest.approx(0.6003, abs=5e-5)


def build(out: Path, *qrels: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    command = [str(CONSOLE), "build", "--run", f"monoT5={RUNS['monoT5']}", "--run", f"rrf={RUNS['rrf']}",
               "--baseline", str(SMALL / "bm25.txt"), "--baseline-name", "BM25", "--preset", "trec-dl",
               *[part for value in qrels for part in ("--qrels", value)], *extra, "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ})


@pytest.mark.parametrize("sets", [2, 3], ids=["two sets", "three sets"])
def test_a_report_with_several_sets_has_the_section_and_the_summary(tmp_path, sets):
    given = [f"human={SETS['human']}", f"llm={SETS['llm']}", f"float={JUDGES / 'llm-float.txt'}"][:sets]
    result = build(tmp_path / "out", *given)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    judgments = summary["judgments"]
    others = [name for name in ("llm", "float")[:sets - 1]]
    assert judgments["reference"] == "human" and list(judgments["comparisons"]) == others
    assert summary["parameters"]["judgment_sets"] == [
        {"name": name, "file": Path(value.split("=", 1)[1]).name} for name, value in zip(["human", *others], given)]
    llm = judgments["comparisons"]["llm"]
    assert llm["pairs"] == {"shared": 1665, "only_reference": 84, "only_other": 29}
    assert llm["cohen_kappa"] == pytest.approx(0.5890342, abs=1e-6)
    assert set(llm["measures"]) >= {"nDCG@10", "AP", "RR"}
    assert judgments["means"]["nDCG@10"]["monoT5"]["human"] == summary["systems"][0]["summary"]["nDCG@10"]["mean"]
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count('id="judges"') == 1
    assert page.count("Labels: human (rows) against") == sets - 1  # a confusion matrix per other set
    assert "Verdicts against BM25 under each set, every measure" in page
    glance = page.index("Judges at a glance")  # the summary comes before the report's first numbered section
    assert page.index("<details><summary>Verdicts under human only, in words") < glance < page.index("1. What was evaluated")
    assert "Verdicts on nDCG@10 against BM25 under each set" in page[glance:page.index("1. What was evaluated")]
    for qid in re.findall(r'<a href="#q-(\d+)">\d+</a></td><td class="num">', page):  # every link lands on a drill-down
        assert f'id="q-{qid}"' in page
    assert "--qrels human=" in summary["command"] and f"--qrels {others[-1]}=" in summary["command"]


def test_the_filled_set_in_a_report_and_one_set_has_no_section(tmp_path):
    result = build(tmp_path / "filled", f"human={SETS['human']}", f"llm={SETS['llm']}",
                   extra=("--fill-unjudged-from", "llm"))
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "filled" / "summary.json").read_text())
    assert [s["name"] for s in summary["judgments"]["sets"]] == ["human", "llm", "human+llm"]
    assert summary["judgments"]["sets"][2]["filled_pairs"] > 0
    assert "--fill-unjudged-from llm" in summary["command"]
    result = build(tmp_path / "one", str(SETS["human"]))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["judgments"] is None
    page = (tmp_path / "one" / "report.html").read_text()
    assert 'id="judges"' not in page and "Judges at a glance" not in page and "<details><summary>Verdicts" not in page


@pytest.mark.parametrize("second, fill, message", [
    ("empty", "", "empty file"),
    ("disjoint", "", "shares no query with the reference"),
    ("llm", "nope", "name a judgment set other than the reference"),
    ("human", "", "given twice"),
], ids=["empty set", "no shared query", "unknown fill set", "the same file twice"])
def test_a_bad_second_set_is_exit_2_one_line_nothing_written(tmp_path, second, fill, message):
    files = {"empty": tmp_path / "empty.txt", "disjoint": tmp_path / "disjoint.txt", "llm": SETS["llm"],
             "human": SETS["human"]}
    files["empty"].write_text("")
    files["disjoint"].write_text("zz 0 d1 1\n")
    result = build(tmp_path / "out", f"human={SETS['human']}", f"other={files[second]}",
                   extra=("--fill-unjudged-from", fill) if fill else ())
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted({"empty.txt", "disjoint.txt"})


def test_a_batch_takes_qrels_as_a_mapping(tmp_path):
    from ndcg_report.batch.config import load_config
    from ndcg_report.batch.reports import build_argv
    from ndcg_report.errors import ParameterError

    config = tmp_path / "batch.yml"
    entry = (f"  - name: judged\n    run: {RUNS['monoT5']}\n    baseline: {SMALL / 'bm25.txt'}\n"
             f"    qrels:\n      human: {SETS['human']}\n      llm: {SETS['llm']}\n")
    config.write_text(f"output: {tmp_path / 'out'}\nreports:\n{entry}    fill_unjudged_from: llm\n")
    [report] = load_config(config).reports
    command = build_argv(report, tmp_path / "out" / "judged", None)
    assert [part for part in command if part.startswith(("--qrels", "--fill"))] == [
        f"--qrels=human={SETS['human']}", f"--qrels=llm={SETS['llm']}", "--fill-unjudged-from=llm"]
    config.write_text(f"output: {tmp_path / 'out'}\nreports:\n{entry}    fill_unjudged_from: human\n")
    with pytest.raises(ParameterError, match="fill_unjudged_from.*'human' is not one of the judgment sets"):
        load_config(config)


def test_the_orders_table_gives_tau_b_with_its_interval_as_the_comparison_holds_it(experiment):
    from ndcg_report.analysis.judgments.section import orders_table

    table = orders_table(experiment.judgments)
    orders = [order for other in experiment.judgments.comparisons for order in other.orders]
    assert len(table) == len(orders) and list(table.columns[2:4]) == ["Kendall's tau-b", "tau-b 95% interval"]
    for (_, row), order in zip(table.iterrows(), orders):
        low, high = order.kendall_tau_interval
        assert row["tau-b 95% interval"] == (f"[{low:.4f}, {high:.4f}]" if np.isfinite(low) else "–")
