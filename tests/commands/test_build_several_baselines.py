"""`build --baseline NAME=PATH --baseline NAME=PATH`: the second baseline's numbers are those of the report
built against it alone (the others given as runs), end to end (the first's: tests/analysis/
test_several_baselines.py, on compare_runs, which the report runs); a second baseline that is also a system: exit 2."""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

import pytest

from ndcg_report.analysis.report_model import build_command
from ndcg_report.build.parameters import validate_parameters
from tests.helpers import cli, one_line

DL19 = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"
QRELS = DL19 / "qrels.dl19-passage.txt"
BM25 = DL19 / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"
TOP20 = DL19 / "monot5-top20-bm25.dl19.run.gz"
MONOT5, RRF = DL19 / "monot5.dl19.run.gz", DL19 / "rrf.bm25-monot5.dl19.run.gz"
COMMON = ["--qrels", QRELS, "-m", "nDCG@10 AP", "-l", "2", "--drilldown", "0"]


def build(out: Path, *args) -> dict:
    result = cli("build", *args, *COMMON, "--out", out)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("baselines")
    return {
        "both": build(folder / "both", "--run", f"monoT5={MONOT5}", "--run", f"rrf={RRF}",
                      "--baseline", f"BM25={BM25}", "--baseline", f"top20={TOP20}"),
        "top20": build(folder / "top20", "--run", f"monoT5={MONOT5}", "--run", f"rrf={RRF}", "--run", f"BM25={BM25}",
                       "--baseline", f"top20={TOP20}"),
        "folder": folder / "both",
    }


def test_each_baseline_s_p_values_are_the_one_baseline_report_s(built):
    both = built["both"]
    assert both["baseline"] == "BM25" and list(both["more_baselines"]) == ["top20"]
    top20 = both["more_baselines"]["top20"]  # the first baseline's: tests/analysis/test_several_baselines.py
    assert top20["comparisons"] == built["top20"]["comparisons"]
    assert top20["family"]["systems"] == ["monoT5", "rrf", "BM25"] == list(built["top20"]["comparisons"])
    assert top20["family"]["size"] == built["top20"]["comparison_family"]["size"] == 3
    rrf = top20["comparisons"]["rrf"]["nDCG@10"]
    assert rrf["delta"] < 0 and rrf["holm_randomization_pvalue"] < 0.05  # rrf is below top20, and above BM25
    assert both["comparisons"]["rrf"]["nDCG@10"]["delta"] > 0
    assert all(line.split(": ")[1].count("against BM25's") == 1 for line in both["verdicts"])  # against the first
    assert both["parameters"]["more_baselines"] == [{"name": "top20", "file": TOP20.name}]


def test_the_report_shows_each_system_against_each_baseline(built):
    folder = built["folder"]
    page = (folder / "report.html").read_text(encoding="utf-8")
    for heading in ("monoT5 against BM25", "monoT5 against top20", "rrf against top20", "top20 against BM25",
                    "BM25 against top20"):
        assert f"<h4>{heading}</h4>" in page, heading
    assert "<h4>top20 against top20</h4>" not in page
    assert "(baseline 2)" in page and "▲n/▼n: significantly above/below baseline n (1 BM25, 2 top20)" in page
    assert "each baseline is its own Holm family" in page
    assert "<h1>monoT5 and rrf against BM25 and top20</h1>" in page
    markdown = (folder / "leaderboard.md").read_text(encoding="utf-8")
    assert "| top20 (baseline 2) |" in markdown and "▼₂" in markdown
    with open(folder / "per_query.csv", newline="", encoding="utf-8") as handle:
        roles = {(row["system"], row["role"]) for row in csv.DictReader(handle)}
    assert roles == {("monoT5", "run"), ("rrf", "run"), ("top20", "run"), ("BM25", "baseline")}
    files = {record["role"] for record in built["both"]["files"]}
    assert {"baseline: BM25", "baseline: top20", "run: monoT5", "run: rrf"} <= files
    assert f"--baseline BM25={BM25} --baseline top20={TOP20}" in built["both"]["command"]  # as given


def test_the_rebuild_command_names_each_baseline_once():
    params = validate_parameters(runs=[f"monoT5={MONOT5}"], qrels=str(QRELS), baseline=[BM25, f"top20={TOP20}"],
                                 baseline_name="BM25")
    words = shlex.split(build_command(params))
    assert words[words.index(f"--baseline=BM25={BM25}") + 1] == f"--baseline=top20={TOP20}"
    assert not [word for word in words if word.startswith("--baseline-name")]
    again = validate_parameters(runs=[f"monoT5={MONOT5}"], qrels=str(QRELS),
                                baseline=[word.split("=", 1)[1] for word in words if word.startswith("--baseline=")])
    assert (again.baseline, again.baseline_name, again.more_baselines) == (
        params.baseline, params.baseline_name, params.more_baselines)


@pytest.mark.parametrize("args, message", [
    (["--baseline", f"BM25={BM25}", "--baseline", f"again={MONOT5}"], "is given twice (as run 1 and as baseline 2)"),
    (["--baseline", f"BM25={BM25}", "--baseline", f"monoT5={TOP20}"], "run 1 and baseline 2 are named 'monoT5'"),
    (["--baseline", f"BM25={BM25}", "--baseline", f"bm25={TOP20}"], "baseline 2 is named 'bm25' like the baseline"),
    (["--baseline", f"BM25={BM25}", "--baseline", f"top20={TOP20}", "--baseline-name", "other"],
     "the first baseline is named twice ('BM25' and --baseline-name 'other')"),
    (["--baseline", f"BM25={BM25}", "--baseline", f"top20={DL19 / 'missing.txt'}"], "baseline 2"),
], ids=["a run's file", "a run's name", "the first's name", "named twice", "missing file"])
def test_a_second_baseline_equal_to_a_system_is_one_line_and_exit_2(tmp_path, args, message):
    result = cli("build", "--run", f"monoT5={MONOT5}", *args, *COMMON, "--out", tmp_path / "out")
    one_line(result, 2, message)
    assert not (tmp_path / "out").exists()
