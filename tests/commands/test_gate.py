"""`ndcg-report gate` on real builds of DL 2019: each status, the exit codes, the files, and bad input refused."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from junitparser import JUnitXml
from scipy import stats

from ndcg_report.stats.streams import stream
from tests.helpers import cli, one_line

DATA = Path(__file__).resolve().parents[2] / "src" / "ndcg_report" / "data" / "dl19-passage"
RUNS = {"monoT5": "monot5.dl19.run.gz", "RRF": "rrf.bm25-monot5.dl19.run.gz", "top20": "monot5-top20-bm25.dl19.run.gz",
        "interp": "interp.bm25-monot5.dl19.run.gz"}
BM25, QRELS, TOPICS = DATA / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz", DATA / "qrels.dl19-passage.txt", \
    DATA / "topics.dl19-passage.txt"


def run_lines(name: str) -> list[list[str]]:
    with gzip.open(DATA / RUNS[name], "rt", encoding="utf-8") as lines:
        return [line.split() for line in lines if line.strip()]


def write_run(path: Path, rows: list[list[str]]) -> Path:
    path.write_text("".join(" ".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


def degraded(rows: list[list[str]]) -> list[list[str]]:
    """Every other query's top 10 pushed below its rank 990 (scores lowered): nDCG@10 falls on half the queries."""
    qids = sorted({row[0] for row in rows})[::2]
    out = []
    for row in rows:
        row = list(row)
        if row[0] in qids and int(row[3]) <= 10:
            row[4] = str(float(row[4]) - 1e6)
        out.append(row)
    return out


def swapped_at_900(rows: list[list[str]]) -> list[list[str]]:
    """One query's documents at ranks 900 and 901 swapped (their docids exchanged)."""
    qid = rows[0][0]
    at = {int(row[3]): i for i, row in enumerate(rows) if row[0] == qid}
    rows = [list(row) for row in rows]
    rows[at[900]][2], rows[at[901]][2] = rows[at[901]][2], rows[at[900]][2]
    return rows


def build(out: Path, runs: dict[str, Path], qrels: Path = QRELS) -> Path:
    args = ["build", *[a for name, path in runs.items() for a in ("--run", f"{name}={path}")], "--baseline", BM25,
            "--baseline-name", "BM25", "--qrels", qrels, "--topics", TOPICS, "-k", "10", "--out", out]
    result = cli(*args, timeout=300)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    plain = {name: write_run(root / f"{name}.txt", run_lines(name)) for name in RUNS}
    before = build(root / "before", {name: plain[name] for name in ("monoT5", "RRF", "top20")})
    after = build(root / "after", {"monoT5": write_run(root / "worse.txt", degraded(run_lines("monoT5"))),
                                   "RRF": write_run(root / "swapped.txt", swapped_at_900(run_lines("RRF"))),
                                   "interp": plain["interp"]})
    labels = QRELS.read_text(encoding="utf-8").splitlines()
    first = labels[0].split()
    labels[0] = " ".join([*first[:3], str((int(first[3]) + 1) % 4)])
    (root / "qrels-changed.txt").write_text("\n".join(labels) + "\n", encoding="utf-8")
    relabelled = build(root / "relabelled", {name: plain[name] for name in ("monoT5", "RRF", "top20")},
                       root / "qrels-changed.txt")
    return root, before, after, relabelled


def gated(tmp_path, before, after, *extra):
    files = {kind: tmp_path / f"gate.{kind}" for kind in ("json", "junit", "markdown")}
    result = cli("gate", before, after, *[a for kind, path in files.items() for a in (f"--{kind}", path)], *extra,
                 timeout=120)
    record = json.loads(files["json"].read_text()) if files["json"].exists() else None
    return result, record, files


def test_a_run_degraded_on_half_the_queries_is_a_regression_exit_4(builds, tmp_path):
    _, before, after, _ = builds
    result, record, files = gated(tmp_path, before, after)
    assert result.returncode == 4, result.stderr
    statuses = {r["system"]: r["status"] for r in record["results"]}
    assert statuses == {"monoT5": "regression", "RRF": "pass", "interp": "new", "BM25": "unchanged", "top20": "gone"}
    assert record["status"] == "regression"
    worse = record["results"][0]
    assert worse["delta"] < -0.1 and worse["p_holm"] < 0.05
    assert len(worse["losers"]) == 17 and worse["losers_beyond"] == 0  # of 22 queries degraded, 17 scored above 0
    assert [loser["delta"] for loser in worse["losers"]] == sorted(loser["delta"] for loser in worse["losers"])
    assert all(loser["query"] for loser in worse["losers"])  # the topics' text, from queries.json
    assert result.stdout.startswith("gate ") and "regression: monoT5 nDCG@10" in result.stdout
    suite = next(iter(JUnitXml.fromfile(str(files["junit"]))))
    assert (suite.tests, suite.failures, suite.skipped) == (5, 1, 0)
    assert "| **regression** | monoT5 | nDCG@10 |" in files["markdown"].read_text()


def test_p_and_interval_are_scipy_s_on_the_report_s_seed_and_holm_over_the_tested(builds, tmp_path):
    _, before, after, _ = builds
    _, record, _ = gated(tmp_path, before, after)
    def values(folder):
        table = pd.read_csv(folder / "per_query.csv", dtype={"qid": str, "k": str})
        rows = table[(table.system == "monoT5") & (table.measure == "nDCG") & (table.k == "10") & table.averaged]
        return rows.set_index("qid")["value"]
    old, new = values(before), values(after)
    common = sorted(set(old.index) & set(new.index), key=str.encode)
    d = (new[common] - old[common]).to_numpy()
    moved = d[d != 0]
    p = stats.permutation_test((moved,), np.mean, permutation_type="samples", vectorized=True, n_resamples=10_000,
                               alternative="less", rng=stream(42, "gate", "worse", "monoT5", "nDCG@10")).pvalue
    ci = stats.bootstrap((d,), np.mean, n_resamples=10_000, vectorized=True, method="percentile",
                         rng=stream(42, "gate", "bootstrap", "monoT5", "nDCG@10")).confidence_interval
    worse, swapped = record["results"][0], record["results"][1]
    assert len(worse["losers"]) == int(np.sum(d < 0))
    assert worse["p"] == p and (worse["ci_low"], worse["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert swapped["p"] == 1.0 and swapped["delta"] == 0.0  # nothing moved in the top 10
    assert worse["p_holm"] == min(1.0, 2 * p)  # Holm over the two systems tested


def test_the_same_bytes_are_unchanged_exit_0(builds, tmp_path):
    _, before, _, _ = builds
    copy = tmp_path / "copy"
    shutil.copytree(before, copy)
    result, record, _ = gated(tmp_path, before, copy)
    assert result.returncode == 0, result.stderr
    assert {r["status"] for r in record["results"]} == {"unchanged"} and record["status"] == "unchanged"


def test_one_label_changed_is_not_comparable_exit_0_and_skipped(builds, tmp_path):
    _, before, _, relabelled = builds
    result, record, files = gated(tmp_path, before, relabelled)
    assert result.returncode == 0, result.stderr
    assert {(r["status"], r["reason"]) for r in record["results"]} == {("not comparable", "the qrels differ (sha256)")}
    suite = next(iter(JUnitXml.fromfile(str(files["junit"]))))
    assert (suite.tests, suite.failures, suite.skipped) == (4, 0, 4)


@pytest.mark.parametrize("extra, message", [
    (("--margin", "-0.1"), "--margin: -0.1 must be a number >= 0"),
    (("--alpha", "1"), "--alpha: 1.0 must be a number above 0 and below 1"),
    (("--alpha", "0"), "--alpha: 0.0 must be a number above 0 and below 1"),
    (("-m", "AP"), "-m AP: not a measure of BEFORE"),
])
def test_a_bad_option_is_exit_2_one_line_and_nothing_written(builds, tmp_path, extra, message):
    _, before, after, _ = builds
    result, record, files = gated(tmp_path, before, after, *extra)
    one_line(result, 2, message)
    assert record is None and not any(path.exists() for path in files.values())


def test_a_folder_that_is_not_a_report_or_an_older_one_is_exit_2(builds, tmp_path):
    _, before, after, _ = builds
    result, _, files = gated(tmp_path, tmp_path / "nothing", after)
    one_line(result, 2, "BEFORE ")
    assert "is not a folder" in result.stderr and not any(path.exists() for path in files.values())
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line(gated(tmp_path, before, empty)[0], 2, "holds no summary.json: not a built report")
    older = tmp_path / "older"
    shutil.copytree(after, older)
    (older / "per_query.csv").unlink()
    one_line(gated(tmp_path, before, older)[0], 2, "holds no per_query.csv (a report of an older schema")
