"""`ndcg-report bm25` and the corpus baseline of `build`/`demo cranfield`, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ndcg_report import evaluate, read_qrels, read_run
from tests.helpers import one_line

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
CRANFIELD = Path(str(resources.files("ndcg_report") / "data" / "cranfield"))


def cli(*args, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NDCG_REPORT_CACHE=str(cache))
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)],
                          capture_output=True, text=True, check=False, env=env)


def test_bm25_writes_a_run_then_reuses_the_cache(tmp_path):
    out = tmp_path / "runs" / "bm25.run"
    first = cli("bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv", "--out", out,
                cache=tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    assert "bm25: building run" in first.stderr and "reusing" not in first.stderr
    lines = out.read_text().splitlines()
    assert lines and all(line.split()[5] == "bm25" and len(line.split()) == 6 for line in lines)
    assert read_run(out).table.num_rows == len(lines)
    second = cli("bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv", "--out", out,
                 cache=tmp_path / "cache")
    assert second.returncode == 0 and "bm25: reusing cached run" in second.stderr
    assert out.read_text().splitlines() == lines
    changed = cli("bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv", "--out", out,
                  "--k1", "1.2", cache=tmp_path / "cache")
    assert changed.returncode == 0 and "bm25: building run" in changed.stderr


@pytest.mark.parametrize("name, line, words", [
    ("not_json.jsonl", 3, "not valid JSON"),
    ("no_id.jsonl", 3, "no `_id` field"),
    ("repeated_id.jsonl", 5, "repeats the one on line 2"),
])
def test_bad_corpus_lines_exit_2_with_file_and_line(tmp_path, name, line, words):
    out = tmp_path / "bm25.run"
    result = cli("bm25", "--corpus", CORPUS / name, "--topics", CORPUS / "tiny_topics.tsv", "--out", out,
                 cache=tmp_path / "cache")
    assert result.returncode == 2
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"ndcg-report: error: {CORPUS / name}:{line}: ") and words in message
    assert "Traceback" not in result.stderr and not out.exists()
    assert not list((tmp_path / "cache").rglob("*.run"))


def test_a_corpus_line_nested_too_deeply_is_bad_json_not_an_internal_error(tmp_path):
    corpus = tmp_path / "deep.jsonl"
    corpus.write_text('{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    result = cli("bm25", "--corpus", corpus, "--topics", CORPUS / "tiny_topics.tsv", "--out", tmp_path / "bm25.run",
                 cache=tmp_path / "cache")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"ndcg-report: error: {corpus}:2: not valid JSON (nested too")


def test_build_with_corpus_needs_topics_and_fails_before_any_kernel(tmp_path):
    result = cli("build", "--run", CRANFIELD / "bm25-rm3.run.gz", "--qrels", CRANFIELD / "qrels.txt",
                 "--corpus", CRANFIELD / "corpus.jsonl", "--out", tmp_path / "out", cache=tmp_path / "cache")
    assert result.returncode == 2
    assert result.stderr.strip() == ("ndcg-report: error: topics are required with a corpus: "
                                     "BM25 needs the query text")
    both = cli("build", "--run", CRANFIELD / "bm25-rm3.run.gz", "--qrels", CRANFIELD / "qrels.txt",
               "--corpus", CRANFIELD / "corpus.jsonl", "--baseline", CRANFIELD / "bm25-rm3.run.gz",
               "--out", tmp_path / "out", cache=tmp_path / "cache")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    assert not (tmp_path / "out").exists()


def test_demo_cranfield_builds_bm25_from_the_corpus_and_reuses_it(tmp_path):
    cache = tmp_path / "cache"
    result = cli("demo", "cranfield", "--out", tmp_path / "cranfield", cache=cache)
    assert result.returncode == 0, result.stderr
    assert "bm25: building run" in result.stderr
    summary = json.loads((tmp_path / "cranfield" / "summary.json").read_text())
    at10 = summary["comparisons"]["BM25+RM3"]["nDCG@10"]
    assert at10["n"] == 225
    qrels = read_qrels(CRANFIELD / "qrels.txt").table
    (baseline_run,) = (cache / "bm25").glob("*.run")
    expected = evaluate(read_run(baseline_run).table, qrels, cutoffs=[10]).mean(10)
    assert at10["baseline_mean"] == pytest.approx(expected, abs=1e-12)
    assert round(expected, 4) == 0.3516  # equal to the independent BM25 of tests/baseline/test_bm25.py
    rm3 = evaluate(read_run(CRANFIELD / "bm25-rm3.run.gz").table, qrels, cutoffs=[10]).mean(10)
    assert at10["run_mean"] == pytest.approx(rm3, abs=1e-12)
    assert summary["parameters"]["corpus"] == "corpus.jsonl" and "k1=0.9" in summary["parameters"]["bm25"]
    page = (tmp_path / "cranfield" / "report.html").read_text()
    assert "corpus.jsonl" in page and "k1=0.9, b=0.4" in page
    again = cli("demo", "cranfield", "--out", tmp_path / "cranfield", cache=cache)
    assert again.returncode == 0 and "bm25: reusing cached run" in again.stderr


def test_unusable_out_and_cache_folders_fail_before_building(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    args = ["bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv"]
    bad_out = cli(*args, "--out", afile / "run", cache=tmp_path / "cache")
    assert bad_out.returncode == 2 and "its folder cannot be created" in bad_out.stderr
    assert "building" not in bad_out.stderr and "Traceback" not in bad_out.stderr
    bad_cache = cli(*args, "--out", tmp_path / "run", "--cache-dir", afile, cache=tmp_path / "cache")
    assert bad_cache.returncode == 2 and "BM25 cache folder" in bad_cache.stderr and "Traceback" not in bad_cache.stderr
    written = cli(*args, "--out", tmp_path / "new" / "run", cache=tmp_path / "cache")
    assert written.returncode == 0 and (tmp_path / "new" / "run").stat().st_mode & 0o044 == 0o044


def test_a_run_with_no_hit_at_all_is_an_error_not_an_empty_file(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tthe of and\n")
    result = cli("bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", topics, "--out", tmp_path / "run",
                 cache=tmp_path / "cache")
    assert result.returncode == 2 and "BM25 retrieved no document for any topic" in result.stderr
    assert not (tmp_path / "run").exists() and not list((tmp_path / "cache").rglob("*.run"))


def test_build_refuses_an_out_folder_holding_other_files(tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    (out / "NOTES.txt").write_text("mine")
    result = cli("build", "--run", CRANFIELD / "bm25-rm3.run.gz", "--qrels", CRANFIELD / "qrels.txt",
                 "--corpus", CRANFIELD / "corpus.jsonl", "--topics", CRANFIELD / "topics.tsv", "--out", out,
                 cache=tmp_path / "cache")
    assert result.returncode == 2 and "holds files that are not a report's (NOTES.txt)" in result.stderr
    assert (out / "NOTES.txt").read_text() == "mine" and not (tmp_path / "cache").exists()


def test_build_with_corpus_checks_the_qrels_before_building_bm25(tmp_path):
    result = cli("build", "--run", CRANFIELD / "bm25-rm3.run.gz", "--qrels", tmp_path / "missing.txt",
                 "--corpus", CRANFIELD / "corpus.jsonl", "--topics", CRANFIELD / "topics.tsv",
                 "--out", tmp_path / "out", cache=tmp_path / "cache")
    assert result.returncode == 2 and "missing.txt: no such file" in result.stderr
    assert "bm25: building" not in result.stderr


@pytest.mark.parametrize("option, value", [("--k1", "1.2"), ("--b", "0.75"), ("--top-k", "100"), ("--cache-dir", "c")])
def test_bm25_options_with_a_given_baseline_are_refused(tmp_path, option, value):
    # they would be silently ignored: the baseline is the run given by --baseline
    run = CRANFIELD / "bm25-rm3.run.gz"
    result = cli("build", "--run", run, "--qrels", CRANFIELD / "qrels.txt", "--baseline", run,
                 option, value, "--out", tmp_path / "out", cache=tmp_path / "cache")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"error: {option} applies only with --corpus:" in result.stderr and not (tmp_path / "out").exists()


def test_two_bm25_options_with_a_given_baseline_read_as_a_sentence(tmp_path):
    run = CRANFIELD / "bm25-rm3.run.gz"
    result = cli("build", "--run", run, "--qrels", CRANFIELD / "qrels.txt", "--baseline", run, "--k1", "1",
                 "--b", "0.5", "--out", tmp_path / "out", cache=tmp_path / "cache")
    assert result.returncode == 2 and "error: --k1 and --b apply only with --corpus:" in result.stderr


@pytest.mark.parametrize("target", ["topics", "corpus", "link to topics"])
def test_bm25_out_that_is_an_input_is_refused(tmp_path, target):
    topics, corpus = tmp_path / "topics.tsv", tmp_path / "corpus.jsonl"
    topics.write_bytes((CORPUS / "tiny_topics.tsv").read_bytes())
    corpus.write_bytes((CORPUS / "tiny.jsonl").read_bytes())
    out = {"topics": topics, "corpus": corpus, "link to topics": tmp_path / "link.tsv"}[target]
    if target == "link to topics":
        out.symlink_to(topics)
    result = cli("bm25", "--corpus", corpus, "--topics", topics, "--out", out, cache=tmp_path / "cache")
    one_line(result, 2, "which would be replaced; write the run to another file")
    assert topics.read_bytes() == (CORPUS / "tiny_topics.tsv").read_bytes()
    assert corpus.read_bytes() == (CORPUS / "tiny.jsonl").read_bytes()
