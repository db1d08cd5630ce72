"""`ndcg-report suite`: a suite of three collections built end to end through the report's pipeline; its
table.csv and summary.json hold each collection's own report numbers and the tests over collections; a
system missing from a collection is missing, never 0; bad configs are exit 2, one line, nothing written;
--with-reports builds each collection's report and links it; a rebuild replaces only the tool's files."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ndcg_report import compare_runs, compare_suite
from ndcg_report.core.relevance_level import RelevanceLevelWarning

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

TESTS = Path(__file__).resolve().parents[1]
SMALL = TESTS / "data" / "small"
JUDGES = TESTS / "data" / "judges"
SYSTEMS = ("monoT5", "RRF", "Interpolation")
MEASURES = ("nDCG@10", "nDCG@100", "RR", "AP", "R@100", "R@1000")  # trec-dl's


def cli(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False, cwd=cwd)


def write_generated(folder: Path, seed: int = 1, n_queries: int = 30) -> None:
    """A generated collection as TREC files: per query 3 judged documents (labels 0-2) among 12
    retrieved; a system of higher quality scores the relevant ones higher; BM25 is the baseline."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    qids = [f"g{seed}-{i}" for i in range(n_queries)]
    labels = {qid: [int(rng.choice([0, 1, 2])) if j < 3 else 0 for j in range(12)] for qid in qids}
    (folder / "qrels.txt").write_text("".join(f"{q} 0 d{j} {labels[q][j]}\n" for q in qids for j in range(3)))
    shared = {qid: rng.standard_normal(12) for qid in qids}
    for name, quality in {"monoT5": 1.5, "RRF": 1.0, "Interpolation": 0.2, "BM25": 0.5}.items():
        lines = []
        for qid in qids:
            scores = quality * np.array(labels[qid]) + shared[qid] + rng.standard_normal(12)
            lines += [f"{qid} Q0 d{j} {rank} {scores[j]:.6f} {name}\n" for rank, j in enumerate(np.argsort(-scores), 1)]
        (folder / f"{name}.txt").write_text("".join(lines))


def suite_config(folder: Path) -> str:
    """Three collections: DL 2019's first 8 queries under NIST's labels, the same under the simulated LLM
    judge (Interpolation missing there), and a generated one (paths relative to the config's folder)."""
    return f"""\
title: Rerankers on three collections
preset: trec-dl
baseline_name: BM25
collections:
  - name: dl19-small
    qrels: {SMALL / "qrels.txt"}
    baseline: {SMALL / "bm25.txt"}
    topics: {SMALL / "topics.txt"}
    runs: {{monoT5: {SMALL / "monot5.txt"}, RRF: {JUDGES / "rrf.txt"}, Interpolation: {JUDGES / "interp.txt"}}}
  - name: dl19-llm
    qrels: {JUDGES / "llm.txt"}
    baseline: {SMALL / "bm25.txt"}
    runs: {{monoT5: {SMALL / "monot5.txt"}, RRF: {JUDGES / "rrf.txt"}}}
  - name: generated
    qrels: gen/qrels.txt
    baseline: gen/BM25.txt
    runs: {{monoT5: gen/monoT5.txt, RRF: gen/RRF.txt, Interpolation: gen/Interpolation.txt}}
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("suite-config")
    write_generated(folder / "gen")
    path = folder / "suite.yml"
    path.write_text(suite_config(folder))
    return path


@pytest.fixture(scope="module")
def built(config, tmp_path_factory) -> Path:
    """The suite built with --with-reports, from another working folder (relative paths are the config's)."""
    out = tmp_path_factory.mktemp("suite-out") / "suite"
    result = cli("suite", config, "--out", out, "--with-reports", cwd=TESTS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"built {out / 'report.html'} in ")
    return out


@pytest.fixture(scope="module")
def experiments(config) -> dict:
    """Each collection's own compare_runs, as its report makes it (preset trec-dl, the default seed)."""
    gen = config.parent / "gen"
    given = {
        "dl19-small": ({"monoT5": SMALL / "monot5.txt", "RRF": JUDGES / "rrf.txt", "Interpolation": JUDGES / "interp.txt"},
                       SMALL / "qrels.txt", SMALL / "bm25.txt"),
        "dl19-llm": ({"monoT5": SMALL / "monot5.txt", "RRF": JUDGES / "rrf.txt"}, JUDGES / "llm.txt", SMALL / "bm25.txt"),
        "generated": ({name: gen / f"{name}.txt" for name in SYSTEMS}, gen / "qrels.txt", gen / "BM25.txt"),
    }
    with warnings.catch_warnings():  # the generated labels leave some queries nothing relevant at level 2
        warnings.simplefilter("ignore", RelevanceLevelWarning)
        return {name: compare_runs(runs, qrels, baseline, baseline_name="BM25", preset="trec-dl")
                for name, (runs, qrels, baseline) in given.items()}


def table_rows(out: Path) -> dict[tuple[str, str, str], dict]:
    with open(out / "table.csv", newline="", encoding="utf-8") as handle:
        return {(row["collection"], row["system"], row["measure"]): row for row in csv.DictReader(handle)}


def test_the_suite_writes_its_files_and_each_collections_report(built):
    assert sorted(p.name for p in built.iterdir()) == ["collections", "report.html", "report.ipynb", "summary.json",
                                                       "table.csv"]
    assert sorted(p.name for p in (built / "collections").iterdir()) == ["dl19-llm", "dl19-small", "generated"]
    for report in (built / "collections").iterdir():
        topics = ["queries.json"] if (report / "queries.json").exists() else []  # the collections given topics
        assert sorted(p.name for p in report.iterdir()) == ["figures", "leaderboard.md", "leaderboard.tex", "per_query.csv",
                                                            *topics, "report.html", "report.ipynb", "summary.json",
                                                            "unjudged.tsv"]
    assert (built / "collections" / "dl19-small" / "queries.json").is_file()


def test_table_csv_cells_are_each_collections_own_numbers(built, experiments):
    rows = table_rows(built)
    assert list(next(iter(rows.values()))) == ["collection", "system", "role", "measure", "n", "mean", "delta", "ci_low",
                                               "ci_high", "ci_level", "p_holm", "significant"]
    assert len(rows) == 3 * 4 * len(MEASURES)
    checked = 0
    for collection, experiment in experiments.items():
        own_report = json.loads((built / "collections" / collection / "summary.json").read_text())
        for label in MEASURES:
            base = rows[(collection, "BM25", label)]
            assert float(base["mean"]) == experiment.leaderboard.at["BM25", label]
            assert base["role"] == "baseline" and base["delta"] == base["p_holm"] == base["significant"] == ""
            for name in experiment.names:
                row, own = rows[(collection, name, label)], experiment.comparison_row(name, label)
                assert float(row["mean"]) == experiment.leaderboard.at[name, label]
                assert int(row["n"]) == own["n"]
                assert (float(row["delta"]), float(row["ci_low"]), float(row["ci_high"]), float(row["p_holm"])) == (
                    own["delta"], own["family_ci_low"], own["family_ci_high"], own["holm_randomization_pvalue"])
                assert row["significant"] == ("true" if own["holm_randomization_pvalue"] < experiment.alpha else "false")
                reported = own_report["comparisons"][name][label]  # the collection's report, built beside the suite
                assert (reported["run_mean"], reported["delta"], reported["holm_randomization_pvalue"]) == (
                    float(row["mean"]), float(row["delta"]), float(row["p_holm"]))
                checked += 1
    assert checked == 8 * len(MEASURES)
    assert {row["significant"] for row in rows.values() if row["role"] == "run" and row["mean"]} == {"true", "false"}


def test_a_missing_system_is_missing_never_zero(built):
    rows = table_rows(built)
    for label in MEASURES:
        row = rows[("dl19-llm", "Interpolation", label)]
        assert row["role"] == "run" and all(row[key] == "" for key in ("n", "mean", "delta", "p_holm", "significant"))
    summary = json.loads((built / "summary.json").read_text())
    table = {(r["measure"], r["system"]): r for r in summary["table"]}
    interpolation = table[("nDCG@10", "Interpolation")]
    assert interpolation["means"]["dl19-llm"] is None and interpolation["collections"] == 2
    present = [float(rows[(c, "Interpolation", "nDCG@10")]["mean"]) for c in ("dl19-small", "generated")]
    assert interpolation["mean"] == pytest.approx(sum(present) / 2, abs=1e-15)
    assert table[("nDCG@10", "monoT5")]["collections"] == 3
    page = (built / "report.html").read_text(encoding="utf-8")
    cells = re.search(r"<th class=\"text\">Interpolation</th>(.*?)</tr>", page, re.S)[1]
    assert re.findall(r"<td[^>]*>([^<]*)</td>", cells)[1] == "–"  # dl19-llm's column
    assert any("Interpolation is missing from dl19-llm" in line for line in summary["warnings"])


def test_summary_json_holds_the_table_the_tests_and_each_collections_files(built, experiments):
    summary = json.loads((built / "summary.json").read_text())
    assert list(summary) == ["schema_version", "kind", "ndcg_report_version", "title", "parameters", "collections",
                             "table", "tests", "warnings", "command"]
    assert summary["kind"] == "suite" and summary["title"] == "Rerankers on three collections"
    assert summary["parameters"]["collections"] == ["dl19-small", "dl19-llm", "generated"]
    assert summary["parameters"]["systems"] == list(SYSTEMS) and summary["parameters"]["headline"] == "nDCG@10"
    assert summary["command"].startswith("ndcg-report suite ") and summary["command"].endswith("--with-reports")
    small = summary["collections"][0]
    assert small["report"] == "collections/dl19-small/report.html" and small["queries"] == 8
    assert [(f["role"], f["file"]) for f in small["files"]][:4] == [
        ("run: monoT5", "monot5.txt"), ("run: RRF", "rrf.txt"), ("run: Interpolation", "interp.txt"),
        ("baseline: BM25", "bm25.txt")]
    import hashlib
    assert small["files"][0]["sha256"] == hashlib.sha256((SMALL / "monot5.txt").read_bytes()).hexdigest()
    assert small["parameters"]["preset"] == "trec-dl" and small["parameters"]["rel_level"] == 2
    suite = compare_suite(experiments)  # the same tests, computed here from the collections' experiments
    assert set(summary["tests"]) == set(MEASURES)
    for label in MEASURES:
        assert summary["tests"][label] == json.loads(json.dumps(suite.across(label).record()))
    tests = summary["tests"]["nDCG@10"]
    assert tests["friedman"]["verdict"] == "no power" and tests["friedman"]["collections"] == ["dl19-small", "generated"]
    assert {row["system"]: row["verdict"] for row in tests["wilcoxon"]["systems"]} == dict.fromkeys(SYSTEMS, "no power")
    ranks = tests["posthoc"]["mean_ranks"]
    assert math.isclose(sum(ranks.values()), 4 * 5 / 2)  # ranks over 4 systems average to (k + 1) / 2


def test_the_page_shows_every_measures_table_the_tests_and_the_figures(built):
    page = (built / "report.html").read_text(encoding="utf-8")
    for label in MEASURES:
        assert f"<h4>{label}" in page
    assert page.count('class="ndcg-table suite-table"') == len(MEASURES)
    assert "▲" in page and "significantly above/below BM25 in that collection" in page
    assert "mean (collections)" in page and "mean rank" in page and "W/T/L" in page
    assert "Wilcoxon signed-rank" in page and "Friedman" in page and "Nemenyi" in page
    assert "the tests over collections have no power" in page
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', page)) == 2  # deltas and the CD diagram
    assert "critical-difference diagram" in page
    assert "ndcg-report suite" in page and "How to reproduce" in page
    assert "<script" not in page.split("</head>", 1)[1]


def test_with_reports_the_collections_link_to_their_built_reports(built):
    page = (built / "report.html").read_text(encoding="utf-8")
    links = set(re.findall(r'href="(collections/[^"]+)"', page))
    assert links == {f"collections/{name}/report.html" for name in ("dl19-small", "dl19-llm", "generated")}
    for link in links:
        report = (built / link).read_text(encoding="utf-8")
        assert "<h1" in report and json.loads((built / link).with_name("summary.json").read_text())["schema_version"]


def test_without_reports_no_links_and_a_rebuild_keeps_a_users_notes_only(built, config, tmp_path):
    import shutil

    out = tmp_path / "suite"
    shutil.copytree(built, out)
    note = out / "collections" / "dl19-small" / "notes.txt"
    note.write_text("mine")
    result = cli("suite", config, "--out", out)
    assert result.returncode == 0, result.stderr
    assert 'href="collections/' not in (out / "report.html").read_text(encoding="utf-8")
    assert note.read_text() == "mine"  # the old collections folder held a user's file: kept, not removed
    assert sorted(p.name for p in out.iterdir()) == ["collections", "report.html", "report.ipynb", "summary.json",
                                                     "table.csv"]
    again = tmp_path / "again"
    shutil.copytree(built, again)  # collections/ of the tool's reports alone: a rebuild without them removes it
    result = cli("suite", config, "--out", again)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in again.iterdir()) == ["report.html", "report.ipynb", "summary.json", "table.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "suite"]  # no staging or old folder left


BAD = {
    "a collection with no runs": (("runs: {monoT5: gen/monoT5.txt, RRF: gen/RRF.txt, Interpolation: gen/Interpolation.txt}",
                                   "runs: {}"),
                                  "suite.yml: collection 'generated': key 'runs': give at least one run as a mapping "
                                  "SYSTEM: PATH"),
    "a system in no collection": (("baseline_name: BM25", "baseline_name: BM25\nsystems: [monoT5, ColBERT]"),
                                  "suite.yml: system 'ColBERT' is in no collection"),
    "a missing file": (("gen/RRF.txt", "gen/RRF-missing.txt"),
                       "RRF-missing.txt: no such file or folder; check the path of system 'RRF' in collection 'generated'"),
    "an unknown key": (("    topics:", "    topic:"), "suite.yml: collection 'dl19-small': unknown key 'topic' (did you mean "
                                                     "'topics'?)"),
    "a bad value": (("preset: trec-dl", "preset: trec-dl\ngain: expo"),
                    "suite.yml: key 'gain': 'expo' is not one of linear, exponential"),
    "a headline no collection computes": (("preset: trec-dl", "preset: trec-dl\nheadline: P@5"),
                                          "suite.yml: collection 'dl19-small': headline P@5: P@5 was not computed"),
    "two collections with one name": (("name: generated", "name: DL19-small"),
                                      "suite.yml: collection 'DL19-small': the name is already used by collection "
                                      "'dl19-small'"),
    "a system named like the baseline": (("RRF: gen/RRF.txt", "BM25: gen/RRF.txt"),
                                         "suite.yml: collection 'generated': system 'BM25' is named like the suite's "
                                         "baseline 'BM25'"),
    "a corpus instead of a baseline run": (("    baseline: gen/BM25.txt", "    corpus: gen/BM25.txt"),
                                           "suite.yml: collection 'generated': key 'corpus': a suite's collection takes "
                                           "a baseline run"),
    "a collection name that is no folder name": (("name: generated", "name: ../up"),
                                                 "suite.yml: collection #3: key 'name': '../up' is not a safe collection "
                                                 "name"),
    "a bad run file": (("gen/RRF.txt", "gen/qrels.txt"), "qrels.txt:1: expected 6 columns"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_is_exit_2_one_line_nothing_written(case, config, tmp_path):
    (old, new), message = BAD[case]
    text = config.read_text()
    assert old in text
    bad = config.parent / "suite.yml"
    bad_copy = tmp_path / "suite.yml"
    bad_copy.write_text(text.replace(old, new, 1))
    (tmp_path / "gen").symlink_to(config.parent / "gen")
    out = tmp_path / "out" / "suite"
    result = cli("suite", "suite.yml", "--out", out, cwd=tmp_path)
    assert result.returncode == 2, (case, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcg-report: error: ") and message in lines[0], lines
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (tmp_path / "out").exists() and bad.read_text() == text


def test_a_batch_builds_and_indexes_a_suite_entry_like_a_report(config, tmp_path):
    batch = tmp_path / "nightly.yml"
    batch.write_text(f"""\
output: root
reports:
  - name: small
    run: {SMALL / "monot5.txt"}
    qrels: {SMALL / "qrels.txt"}
    baseline: {SMALL / "bm25.txt"}
  - name: rerankers
    suite: {config}
    title: Rerankers across collections
  - name: broken-suite
    suite: missing.yml
""")
    result = cli("batch", batch)
    assert result.returncode == 1, result.stderr  # the broken suite fails alone, at step validate
    assert "done rerankers in" in result.stderr and "Wilcoxon over 3 collections: Holm p=0.7500, no power" in result.stderr
    assert re.search(r"FAILED broken-suite in [\d.]+ s: step validate: \S*missing\.yml: no such file", result.stderr)
    root = tmp_path / "root"
    assert sorted(p.name for p in (root / "rerankers").iterdir()) == ["report.html", "report.ipynb", "summary.json",
                                                                      "table.csv"]
    record = json.loads((root / ".history" / "rerankers.jsonl").read_text().splitlines()[-1])
    summary = json.loads((root / "rerankers" / "summary.json").read_text())
    monot5 = next(row for row in summary["table"] if row["measure"] == "nDCG@10" and row["system"] == "monoT5")
    assert record["kind"] == "suite" and record["n"] == 3 and record["run_name"] == "monoT5"
    assert record["run_mean"] == pytest.approx(monot5["mean"], abs=1e-15)
    assert record["over_collections"]["verdict"] == "no power" and record["n_above"] == 0
    assert {"suite", "generated run RRF", "dl19-small qrels"} <= set(record["files"])
    index = (root / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr><td class="name"><a href="#history-rerankers">.*?</tr>', index, re.S)[0]
    assert "Rerankers across collections" in row and "3 collections" in row and "Wilcoxon over 3 collections" in row
    assert '<a href="rerankers/report.html">report.html</a>' in row
    again = cli("batch", batch)
    assert "skip rerankers: inputs unchanged" in again.stderr
    (config.parent / "gen" / "RRF.txt").touch()  # same bytes: still unchanged
    assert "skip rerankers" in cli("batch", batch).stderr


def test_a_batch_suite_entry_takes_only_its_own_keys(config, tmp_path):
    batch = tmp_path / "nightly.yml"
    batch.write_text(f"output: root\nreports:\n  - name: rerankers\n    suite: {config}\n    preset: trec-dl\n")
    result = cli("batch", batch)
    assert result.returncode == 2
    assert result.stderr.strip() == ("ndcg-report: error: " + str(batch) + ": report 'rerankers': unknown key 'preset' "
                                     "(known keys: name, suite, title, timeout, with_reports)")
    assert not (tmp_path / "root").exists()


def test_table_of_a_suite_is_its_table_csv_s_numbers_and_marks(built):
    import csv

    with (built / "table.csv").open(newline="") as source:
        rows = [row for row in csv.DictReader(source) if row["measure"] == "AP"]
    markdown = cli("table", built, "--format", "markdown", "-m", "AP")
    assert markdown.returncode == 0, markdown.stderr
    lines = [line.split(" | ") for line in markdown.stdout.splitlines() if line.startswith("| ") and ":--" not in line]
    header, body = lines[0], {cells[0].lstrip("| "): cells[1:] for cells in lines[1:]}
    collections = [name.strip(" |") for name in header[1:-1]]
    for row in rows:
        shown = body[row["system"] + (" (baseline)" if row["role"] == "baseline" else "")][
            collections.index(row["collection"])].strip(" |")
        if not row["mean"]:
            assert shown == "–"
            continue
        assert shown.strip("*").startswith(f"{float(row['mean']):.4f}")
        assert ("▲" in shown) == (row["significant"] == "true" and float(row["delta"]) > 0), (row, shown)
    latex = cli("table", built, "-m", "AP", "nDCG@10")
    assert latex.returncode == 0 and latex.stdout.count(r"\begin{table}") == 2, latex.stderr
    as_csv = cli("table", built, "--format", "csv", "-m", "AP")
    assert as_csv.returncode == 0 and list(csv.DictReader(as_csv.stdout.splitlines())) == rows
    bad = cli("table", built, "-m", "P@3")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "the suite has no measure 'P@3'; it has" in bad.stderr


@pytest.mark.parametrize("damage", ["missing", "not the suite's columns", "a mean that is not a number", "binary",
                                    "a named pipe"])
def test_table_of_a_suite_with_a_damaged_table_csv_is_one_line_and_exit_2(built, tmp_path, damage):
    import os
    import shutil

    folder = tmp_path / "suite"
    shutil.copytree(built, folder)
    cells = folder / "table.csv"
    text = cells.read_text()
    cells.unlink()
    if damage == "not the suite's columns":
        cells.write_text("a,b\n1,2\n")
    elif damage == "a mean that is not a number":
        header, first, *rest = text.splitlines()
        fields = first.split(",")
        fields[header.split(",").index("mean")] = "abc"
        cells.write_text("\n".join([header, ",".join(fields), *rest]) + "\n")
    elif damage == "binary":
        cells.write_bytes(bytes(range(256)) * 4)
    elif damage == "a named pipe":
        os.mkfifo(cells)
    result = cli("table", folder, "--format", "markdown")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and not result.stdout, result.stderr
    assert "table.csv" in result.stderr and "give the suite's folder as built" in result.stderr
