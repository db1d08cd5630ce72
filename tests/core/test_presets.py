"""A preset is a whole convention: its numbers equal its community's reference in every output path
(eval's three formats, the API, a report's summary.json and per_query.csv); an option given overrides
it and the report says so; where two averaging rules differ the data checks show both; and a
comparison of systems retrieved to different depths is flagged for every measure that depends on it."""

from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import pytrec_eval

from ndcg_report.analysis.checks import averaging_warnings
from ndcg_report.analysis.compare import compare_runs
from ndcg_report.analysis.results import verdicts
from ndcg_report.core.evaluation_pass import evaluate

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

DATA = Path(__file__).resolve().parents[1] / "data" / "presets"
DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS_BELOW_2 = DATA / "qrels.dl19-1121709-below-2.txt"
RUNS = {"bm25": DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", "monot5": DL19 / "monot5.dl19.run.gz"}
TREC_DL = {"map": "AP", "recip_rank": "RR", "recall_100": "R@100", "recall_1000": "R@1000", "ndcg_cut_10": "nDCG@10",
           "ndcg_cut_100": "nDCG@100"}


def cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False)


def trec_eval_all(name: str) -> dict[str, float]:
    """The `all` rows of the checked-in trec_eval output, by ir_measures label."""
    rows = (line.split("\t") for line in (DATA / f"trec_eval.trec-dl.{name}.txt").read_text().splitlines())
    return {TREC_DL[measure.strip()]: float(value) for measure, qid, value in rows if qid == "all"}


@pytest.mark.parametrize("name", RUNS)
def test_trec_dl_equals_trec_eval_in_every_eval_format(name):
    expected = trec_eval_all(name)
    assert expected["RR"] != pytest.approx(evaluate(RUNS[name], QRELS_BELOW_2, preset="trec-dl",
                                                    no_relevant="skip").mean("RR"), abs=1e-4)  # the rules differ here
    trec = cli("eval", "--preset", "trec-dl", "-q", QRELS_BELOW_2, RUNS[name])
    assert trec.returncode == 0 and trec.stderr == ""
    assert trec.stdout == (DATA / f"trec_eval.trec-dl.{name}.txt").read_text()  # trec_eval's lines, per query too
    table = list(csv.DictReader(io.StringIO(cli("eval", "--preset", "trec-dl", "--format", "csv", QRELS_BELOW_2,
                                                RUNS[name]).stdout)))
    assert {f"{r['measure']}@{r['k']}" if r["k"] else r["measure"]: float(r["mean"]) for r in table} == expected
    summary = json.loads(cli("eval", "--preset", "trec-dl", "--format", "json", QRELS_BELOW_2, RUNS[name]).stdout)
    assert {label: round(record["mean"], 4) for label, record in summary["summary"].items()} == expected
    api = evaluate(RUNS[name], QRELS_BELOW_2, preset="trec-dl")
    assert {label: round(api.mean(label), 4) for label in expected} == expected


def test_trec_dl_equals_trec_eval_in_the_api_experiment_and_a_report(tmp_path):
    experiment = compare_runs({"monot5": RUNS["monot5"]}, QRELS_BELOW_2, baseline=RUNS["bm25"], baseline_name="bm25",
                              preset="trec-dl")
    for name in RUNS:
        assert {m.label: round(experiment.evaluations[name].mean(m), 4) for m in experiment.measures} == trec_eval_all(name)
    out = tmp_path / "report"
    built = cli("build", "--run", f"monot5={RUNS['monot5']}", "--baseline", RUNS["bm25"], "--baseline-name", "bm25",
                "--qrels", QRELS_BELOW_2, "--preset", "trec-dl", "--out", out)
    assert built.returncode == 0, built.stderr
    summary = json.loads((out / "summary.json").read_text())
    for system in summary["systems"]:
        assert {label: round(record["mean"], 4) for label, record in system["summary"].items()} == \
            trec_eval_all(system["name"])
    comparison = summary["comparisons"]["monot5"]
    assert {label: round(record["run_mean"], 4) for label, record in comparison.items()} == trec_eval_all("monot5")
    assert {label: round(record["baseline_mean"], 4) for label, record in comparison.items()} == trec_eval_all("bm25")
    per_query = list(csv.DictReader((out / "per_query.csv").open()))
    rows = [r for r in per_query if r["system"] == "bm25" and r["measure"] == "RR" and r["averaged"] == "True"]
    assert len(rows) == 43 and round(sum(float(r["value"]) for r in rows) / 43, 4) == trec_eval_all("bm25")["RR"]
    assert summary["parameters"]["no_relevant"] == "zero" and summary["parameters"]["averaging_given"] == []
    html = (out / "report.html").read_text()
    assert "RR 0.7036 and " in html  # the data checks give both means where the rules differ


def beir_reference(qrels_path: Path, run_lines: list[list[str]], k_ndcg: int = 10, k_recall: int = 100) -> dict:
    """BEIR's EvaluateRetrieval.evaluate, written out: identical ids popped, pytrec_eval per query, the
    mean over the queries it returns."""
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, docid, rel in (line.split() for line in qrels_path.read_text().splitlines()):
        qrels.setdefault(qid, {})[docid] = int(rel)
    results: dict[str, dict[str, float]] = {}
    for qid, _, docid, _, score, _ in run_lines:
        results.setdefault(qid, {})[docid] = float(score)
    for qid, docs in results.items():
        docs.pop(qid, None)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k_ndcg}", f"recall.{k_recall}"})
    scores = evaluator.evaluate(results)
    return {f"nDCG@{k_ndcg}": sum(s[f"ndcg_cut_{k_ndcg}"] for s in scores.values()) / len(scores),
            f"R@{k_recall}": sum(s[f"recall_{k_recall}"] for s in scores.values()) / len(scores)}


@pytest.fixture(scope="module")
def beir_run(tmp_path_factory) -> tuple[Path, list[list[str]]]:
    """DL 2019's BM25 run without one query (BEIR averages over the queries the run has) and with a
    document named like its query at rank 1 of another (BEIR drops it)."""
    lines = [line.split() for line in gzip.open(RUNS["bm25"], "rt").read().splitlines()]
    kept = [line for line in lines if line[0] != "1121709"]
    kept.insert(0, ["1037798", "Q0", "1037798", "0", "999.0", "bm25"])
    path = tmp_path_factory.mktemp("beir") / "bm25-beir.run"
    path.write_text("".join(" ".join(line) + "\n" for line in kept))
    return path, kept


def test_beir_equals_beirs_evaluation_in_every_output_path(beir_run, tmp_path):
    run, lines = beir_run
    qrels = DL19 / "qrels.dl19-passage.txt"
    expected = {label: round(value, 4) for label, value in beir_reference(qrels, lines).items()}
    as_trec_eval = evaluate(run, qrels, measures="nDCG@10 R@100")
    assert round(as_trec_eval.mean("nDCG@10"), 4) != expected["nDCG@10"]  # the conventions differ here
    api = evaluate(run, qrels, preset="beir")
    assert api.identical_dropped == 1 and api.counts.missing == 1
    assert {label: round(api.mean(label), 4) for label in expected} == expected
    table = list(csv.DictReader(io.StringIO(cli("eval", "--preset", "beir", "--format", "csv", qrels, run).stdout)))
    assert {f"{r['measure']}@{r['k']}": float(r["mean"]) for r in table} == expected
    summary = json.loads(cli("eval", "--preset", "beir", "--format", "json", qrels, run).stdout)
    assert {label: round(record["mean"], 4) for label, record in summary["summary"].items()} == expected
    trec = cli("eval", "--preset", "beir", qrels, run)
    assert {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in trec.stdout.splitlines()} == \
        {"ndcg_cut_10": expected["nDCG@10"], "recall_100": expected["R@100"]}
    assert "as the preset beir" in trec.stderr and "1 run line(s) whose docid is their qid were dropped" in trec.stderr
    experiment = compare_runs({"bm25 again": run}, qrels, baseline=RUNS["bm25"], preset="beir")
    assert {label: round(experiment.evaluations["bm25 again"].mean(label), 4) for label in expected} == expected


def test_an_option_overrides_the_preset_and_the_report_says_so(tmp_path):
    out = tmp_path / "report"
    built = cli("build", "--run", f"monot5={RUNS['monot5']}", "--baseline", RUNS["bm25"], "--qrels", QRELS_BELOW_2,
                "--preset", "trec-dl", "--no-relevant", "skip", "--headline", "RR", "--out", out)
    assert built.returncode == 0, built.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["no_relevant"] == "skip" and summary["parameters"]["averaging_given"] == ["no_relevant"]
    monot5 = next(system for system in summary["systems"] if system["name"] == "monot5")
    skip = evaluate(RUNS["monot5"], QRELS_BELOW_2, preset="trec-dl", no_relevant="skip")
    assert monot5["summary"]["RR"]["mean"] == skip.mean("RR") != trec_eval_all("monot5")["RR"]
    html = (out / "report.html").read_text()
    assert "given; the preset trec-dl uses zero" in html and "--no-relevant skip" in html


def test_the_data_checks_give_both_means_where_the_rules_differ():
    experiment = compare_runs({"monot5": RUNS["monot5"]}, QRELS_BELOW_2, baseline=RUNS["bm25"], baseline_name="bm25",
                              preset="trec-dl")
    skip = evaluate(RUNS["bm25"], QRELS_BELOW_2, preset="trec-dl", no_relevant="skip")
    text = {line.split(":")[0]: line for line in averaging_warnings(experiment)}
    expected = trec_eval_all("bm25")
    assert text["bm25"].startswith("bm25: 1 judged query has no label >= 2 (the binary measures). Means as trec_eval -c "
                                   "counts them (scored 0; the means this report shows) and leaving them out: ")
    assert f"RR {expected['RR']:.4f} and {skip.mean('RR'):.4f}" in text["bm25"]
    assert f"AP {expected['AP']:.4f} and {skip.mean('AP'):.4f}" in text["bm25"]
    assert "nDCG@10" not in text["bm25"]  # its graded labels are positive: nDCG counts the query either way
    no_change = compare_runs({"monot5": RUNS["monot5"]}, DL19 / "qrels.dl19-passage.txt", baseline=RUNS["bm25"],
                             preset="trec-dl")
    assert averaging_warnings(no_change) == []  # every DL 2019 query has a label >= 2: one rule, one number


@pytest.fixture(scope="module")
def top30(tmp_path_factory) -> Path:
    queries: dict[str, list[list[str]]] = {}
    for line in gzip.open(RUNS["monot5"], "rt").read().splitlines():
        queries.setdefault(line.split()[0], []).append(line.split())
    kept = [" ".join(line) + "\n" for lines in queries.values()  # each query's 30 best-scored lines
            for line in sorted(lines, key=lambda f: (-float(f[4]), [-b for b in f[2].encode()]))[:30]]
    path = tmp_path_factory.mktemp("depth") / "monot5-top30.run"
    path.write_text("".join(kept))
    return path


def test_a_shallow_run_is_flagged_on_every_measure_that_depends_on_depth(top30):
    experiment = compare_runs({"top30": top30}, DL19 / "qrels.dl19-passage.txt", baseline=RUNS["bm25"],
                              baseline_name="BM25", preset="trec-dl", headline="AP")
    flagged = {m.label for m in experiment.shallow_measures()["top30"]}
    assert {"AP", "RR", "R@100", "R@1000", "nDCG@100"} <= flagged and "nDCG@10" not in flagged
    assert experiment.shallow_measures()["BM25"] == []
    line = verdicts(experiment)[0]
    assert line.startswith("top30: AP ") and "top30 was retrieved to depth 30 and BM25 to 1000" in line
    deep = compare_runs({"monot5": RUNS["monot5"]}, DL19 / "qrels.dl19-passage.txt", baseline=RUNS["bm25"],
                        preset="trec-dl")
    assert deep.shallow_measures() == {"monot5": [], "run.msmarco-v1-passage.bm25-default.dl19": []}
    assert "retrieved to depth" not in verdicts(deep)[0]
