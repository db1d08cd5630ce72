"""`ndcg-report eval` end to end: trec_eval's -q layout, CSV, JSON, digits; qrels changed between two runs
refused."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import pytrec_eval

from ndcg_report.cli import main
from tests.helpers import BASELINE as SMALL_BASELINE, QRELS as SMALL_QRELS, RUN as SMALL_RUN
from tests.helpers import one_stderr_line

CUTOFFS = "1,3,5,10,20,100,1000,all"
DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS, RUN = DL19 / "qrels.dl19-passage.txt", DL19 / "monot5.dl19.run.gz"


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def trec_eval_lines(qrels_path, run_path) -> list[str]:
    """What `trec_eval -c -q -m ndcg_cut.1,3,5,10,20,100,1000 -m ndcg` prints, from trec_eval's
    own code (pytrec_eval): per query in qid byte order, ndcg before ndcg_cut, `all` rows last."""
    import gzip

    def lines(path):
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as handle:
            return handle.read().splitlines()

    qrels: dict = {}
    for line in lines(qrels_path):
        qid, _, docid, rel = line.split()
        qrels.setdefault(qid, {})[docid] = int(rel)
    run: dict = {}
    for line in lines(run_path):
        qid, _, docid, _, score, _ = line.split()
        run.setdefault(qid, {})[docid] = float(score)
    results = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.1,3,5,10,20,100,1000"}).evaluate(run)
    names = ["ndcg"] + [f"ndcg_cut_{k}" for k in (1, 3, 5, 10, 20, 100, 1000)]
    out = []
    for qid in sorted(results, key=lambda q: q.encode()):
        out += [f"{name:<22}\t{qid}\t{results[qid][name]:.4f}" for name in names]
    for name in names:  # -c: every qrels query counts; all of them are in these runs
        values = [results.get(q, {}).get(name, 0.0) for q in qrels]
        out.append(f"{name:<22}\tall\t{sum(values) / len(values):.4f}")
    return out


@pytest.mark.parametrize("system", ["bm25", "monot5"])
def test_trec_format_matches_trec_eval_line_for_line(capsys, dl19, system):
    code, out, err = run_cli(capsys, "eval", dl19["qrels"], dl19[system], "--format", "trec", "-k", CUTOFFS,
                             "--missing", "zero", "--no-relevant", "zero", "-q")
    assert code == 0 and err == ""
    assert out.splitlines() == trec_eval_lines(dl19["qrels"], dl19[system])


def test_trec_format_lines_equal_real_trec_eval_output(capsys, dl19):
    code, out, _ = run_cli(capsys, "eval", dl19["qrels"], dl19["bm25"], "-k", "10,100", "-q")
    real = {line for line in dl19["bm25_eval"].read_text().splitlines() if line.startswith("ndcg")}
    assert code == 0 and set(out.splitlines()) == real


def test_summary_only_and_digits(capsys, dl19):
    code, out, _ = run_cli(capsys, "eval", dl19["qrels"], dl19["monot5"], "-k", "10,all", "--digits", "6")
    assert code == 0
    assert out.splitlines() == ["ndcg                  \tall\t0.661903", "ndcg_cut_10           \tall\t0.721458"]


def test_csv_formats(capsys, dl19):
    code, out, _ = run_cli(capsys, "eval", dl19["qrels"], dl19["monot5"], "-k", "10,100", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [(r["measure"], r["k"]) for r in rows] == [("nDCG", "10"), ("nDCG", "100")]
    assert rows[0]["mean"] == "0.7215" and rows[0]["n"] == "43"
    code, out, _ = run_cli(capsys, "eval", dl19["qrels"], dl19["monot5"], "-k", "10", "--format", "csv", "-q")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 43 and list(rows[0]) == ["qid", "measure", "k", "value", "num_ret", "num_rel", "dcg", "idcg",
                                                 "judged", "in_run", "averaged"]


def test_json_format(capsys, dl19):
    code, out, _ = run_cli(capsys, "eval", dl19["qrels"], dl19["monot5"], "-k", "10", "--format", "json", "-q")
    record = json.loads(out)
    assert code == 0
    assert round(record["summary"]["nDCG@10"]["mean"], 4) == 0.7215
    assert record["summary"]["nDCG@10"]["measure"] == "nDCG" and record["summary"]["nDCG@10"]["k"] == 10
    assert record["queries"]["in_both"] == 43 and len(record["per_query"]) == 43
    assert record["parameters"] == {"measures": ["nDCG@10"], "rel_level": 1, "gain": "linear", "missing": "zero",
                                    "no_relevant": "zero", "identical_ids": "keep"}
    per_query_mean = sum(r["value"] for r in record["per_query"]) / 43
    assert per_query_mean == pytest.approx(record["summary"]["nDCG@10"]["mean"], abs=1e-12)


def test_console_script_installed(dl19):
    result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", dl19["qrels"], dl19["bm25"], "-k", "10"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout == "ndcg_cut_10           \tall\t0.5058\n"


@pytest.mark.parametrize("reading", ["--stream", "--in-memory"])
def test_eval_imports_no_pandas(tmp_path, reading):
    """pyarrow's pa.array()/pa.scalar() of Python values import pandas (a quarter of a second of each
    eval); the eval path builds its Arrow values from buffers instead."""
    code = ("import sys, io, contextlib\nfrom ndcg_report.cli import main\n"
            "for fmt in ('trec', 'csv'):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            f"        assert main(['eval', '{reading}', '-q', '--format', fmt, '-k', '1,10,all', sys.argv[1], sys.argv[2]]) == 0\n"
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'pandas'))")
    result = subprocess.run([sys.executable, "-c", code, str(QRELS), str(RUN)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_several_runs_print_one_table(capsys, dl19):
    """eval QRELS RUN RUN: trec_eval's lines of each run in turn (as trec_eval prints one), csv with a
    leading run column, json a list of named records; every number the run's own."""
    single = {name: run_cli(capsys, "eval", "-m", "map", "-m", "P.10", "-q", fmt, dl19["qrels"], dl19[name])[1]
              for name in ("monot5", "bm25") for fmt in ("--format=trec",)}
    code, out, err = run_cli(capsys, "eval", "-m", "map", "-m", "P.10", "-q", dl19["qrels"], dl19["monot5"], dl19["bm25"])
    assert code == 0 and err == "" and out == single["monot5"] + single["bm25"]
    code, out, _ = run_cli(capsys, "eval", "-m", "map", "--format", "csv", dl19["qrels"], f"mono={dl19['monot5']}",
                           f"bm25={dl19['bm25']}")
    rows = list(csv.DictReader(io.StringIO(out)))
    own = {name: list(csv.DictReader(io.StringIO(run_cli(capsys, "eval", "-m", "map", "--format", "csv", dl19["qrels"],
                                                            dl19[path])[1])))
           for name, path in (("mono", "monot5"), ("bm25", "bm25"))}
    assert [row.pop("run") for row in rows] == ["mono", "bm25"]
    assert rows == own["mono"] + own["bm25"]
    code, out, _ = run_cli(capsys, "eval", "-m", "map", "--format", "csv", "-q", dl19["qrels"], dl19["monot5"],
                           dl19["bm25"])
    assert out.splitlines()[0] == "run,qid,measure,k,value,num_ret,num_rel,dcg,idcg,judged,in_run,averaged"
    assert len(out.splitlines()) == 1 + 2 * 43
    code, out, _ = run_cli(capsys, "eval", "-m", "map", "--format", "json", dl19["qrels"], dl19["monot5"], dl19["bm25"])
    records = json.loads(out)["runs"]
    assert [record["run"] for record in records] == ["monot5.dl19", "run.msmarco-v1-passage.bm25-default.dl19"]
    assert [round(record["summary"]["AP"]["mean"], 4) for record in records] == [
        float(row["mean"]) for row in own["mono"] + own["bm25"]]


def test_one_named_run_is_evaluated_as_the_same_run_unnamed(capsys):
    """eval QRELS NAME=RUN with one run: the run's own output (one run's output names no run), as with two."""
    unnamed = run_cli(capsys, "eval", SMALL_QRELS, SMALL_RUN)
    assert unnamed[0] == 0 and unnamed[1].startswith("ndcg_cut_1")
    assert run_cli(capsys, "eval", SMALL_QRELS, f"mono={SMALL_RUN}") == unnamed
    code, out, err = run_cli(capsys, "eval", SMALL_QRELS, f"={SMALL_RUN}")
    assert code == 2 and out == "" and err.count("\n") == 1 and "RUN '=" in err and "the system name is empty" in err


def test_a_run_given_twice_is_refused(capsys, dl19):
    code, out, err = run_cli(capsys, "eval", dl19["qrels"], dl19["bm25"], dl19["bm25"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "is given twice (as run 1 and as run 2)" in err


def test_eval_refuses_qrels_changed_between_two_runs(tmp_path, monkeypatch, capsys):
    # eval reads the qrels once per run: the two runs must be scored against one version of them
    from ndcg_report.cli import main
    from ndcg_report.inputs import reading

    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(SMALL_QRELS.read_bytes())
    read = reading.read_qrels

    def read_qrels(path):
        parsed = read(path)
        qrels.write_bytes(SMALL_QRELS.read_bytes().replace(b" 3\n", b" 0\n"))  # rewritten after the first read
        return parsed

    monkeypatch.setattr(reading, "read_qrels", read_qrels)
    code = main(["eval", str(qrels), str(SMALL_RUN), str(SMALL_BASELINE)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    one_stderr_line(captured.err, f"{qrels}: changed during the evaluation")
