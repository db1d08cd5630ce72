"""`ndcg-report judges` with named sets (--set NAME=PATH), paper tables (--format latex|markdown), runs
that lack queries (the lacks line) and --shared-queries; each bad input exit 2 with one line."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

from tests.helpers import SMALL, cli, run_on_queries

JUDGES = SMALL.parent / "judges"
KEPT = ("1037798", "104861", "1063750", "1103812")


@pytest.fixture(scope="module")
def part(tmp_path_factory):
    return run_on_queries(SMALL / "bm25.txt", KEPT, tmp_path_factory.mktemp("runs") / "part.txt")


def _sets(*extra):
    return ("judges", "--set", f"NIST={SMALL / 'qrels.txt'}", "--set", f"GPT_4={JUDGES / 'llm.txt'}",
            f"bm25={SMALL / 'bm25.txt'}", f"monot5={SMALL / 'monot5.txt'}", *extra)


def test_set_names_the_sets_in_text_json_and_csv():
    text = cli(*_sets())
    assert text.returncode == 0, text.stderr
    assert "  NIST: " in text.stdout and "== GPT_4 against NIST ==" in text.stdout
    record = json.loads(cli(*_sets("--format", "json")).stdout)
    assert record["reference"] == "NIST" and [s["name"] for s in record["sets"]] == ["NIST", "GPT_4"]
    assert list(record["comparisons"]) == ["GPT_4"] and record["systems"] == ["bm25", "monot5"]
    rows = list(csv.DictReader(io.StringIO(cli(*_sets("--format", "csv")).stdout)))
    assert {row["set"] for row in rows if row["section"] == "sets"} == {"NIST", "GPT_4"}


def test_set_without_a_name_is_named_by_its_file_as_the_positional_sets_are():
    named = cli("judges", "--set", str(SMALL / "qrels.txt"), "--set", str(JUDGES / "llm.txt"), "--format", "json")
    positional = cli("judges", str(SMALL / "qrels.txt"), str(JUDGES / "llm.txt"), "--format", "json")
    assert named.returncode == 0 and named.stdout == positional.stdout


def test_a_run_lacking_queries_is_named_in_every_format(part):
    text = cli(*_sets(f"part={part}"))
    assert "  part lacks 4 of 8 judged queries\n" in text.stdout
    assert "  part lacks 4 of 8 judged queries of GPT_4\n" in text.stdout
    assert "bm25 lacks" not in text.stdout
    record = json.loads(cli(*_sets(f"part={part}", "--format", "json")).stdout)
    assert record["lacking"] == [{"system": "part", "set": "NIST", "lacking": 4, "judged": 8},
                                 {"system": "part", "set": "GPT_4", "lacking": 4, "judged": 8}]
    assert [s["n_queries"] for s in record["comparisons"]["GPT_4"]["per_system"]] == [8, 8, 4]
    rows = list(csv.DictReader(io.StringIO(cli(*_sets(f"part={part}", "--format", "csv")).stdout)))
    assert [(r["set"], r["system"], r["statistic"], r["value"]) for r in rows if r["section"] == "lacking"] == [
        ("NIST", "part", "lacking", "4"), ("NIST", "part", "judged", "8"),
        ("GPT_4", "part", "lacking", "4"), ("GPT_4", "part", "judged", "8")]


def test_shared_queries_evaluates_every_run_on_the_queries_all_have(part):
    text = cli(*_sets(f"part={part}", "--shared-queries"))
    assert text.returncode == 0, text.stderr
    assert "only the 4 queries all the runs have" in text.stdout and "lacks" not in text.stdout
    record = json.loads(cli(*_sets(f"part={part}", "--shared-queries", "--format", "json")).stdout)
    restricted = json.loads(cli("judges", "--set", f"NIST={SMALL / 'qrels.txt'}", "--set", f"GPT_4={JUDGES / 'llm.txt'}",
                                f"part={part}", "--format", "json").stdout)
    assert record["runs_shared_queries"] == 4
    assert record["means"]["nDCG@10"]["part"] == record["means"]["nDCG@10"]["bm25"]  # part is bm25 on its 4 queries
    assert record["means"]["nDCG@10"]["part"]["NIST"] == pytest.approx(restricted["means"]["nDCG@10"]["part"]["NIST"] * 2)
    assert record["comparisons"]["GPT_4"]["pairs"] == restricted["comparisons"]["GPT_4"]["pairs"]  # labels: every pair


def test_the_paper_tables_in_latex_and_markdown_escape_the_names():
    latex = cli(*_sets("--format", "latex"))
    assert latex.returncode == 0, latex.stderr
    assert latex.stdout.count("\\begin{table}") == 2 and latex.stdout.count("\\end{tabular}") == 2
    assert "\\label{tab:judgment-means}" in latex.stdout and "\\label{tab:judgment-agreement}" in latex.stdout
    assert "GPT\\_4" in latex.stdout and "GPT_4" not in latex.stdout.replace("GPT\\_4", "")
    assert "\\toprule" in latex.stdout and "Kendall's tau-b of the systems' nDCG@10" in latex.stdout
    markdown = cli(*_sets("--format", "markdown"))
    assert markdown.stdout.count("| System |") == 1 and markdown.stdout.count("| Statistic |") == 1
    assert "| System | nDCG@10 (NIST) | nDCG@10 (GPT\\_4) |" in markdown.stdout
    assert "| monot5 | **0.6003** | **0.4361** |" in markdown.stdout
    record = json.loads(cli(*_sets("--format", "json")).stdout)
    low, high = record["comparisons"]["GPT_4"]["measures"]["nDCG@10"]["kendall_tau_interval"]
    row = next(line for line in markdown.stdout.splitlines() if line.startswith("| tau-b's bootstrap interval"))
    assert row == f"| tau-b's bootstrap interval over queries, nDCG@10 | \\[{low:.4f}, {high:.4f}\\] |"
    assert f"tau-b's bootstrap interval over queries, nDCG@10 & [{low:.4f}, {high:.4f}]" in latex.stdout


def test_the_positional_sets_keep_working_with_the_interval_in_the_order_table():
    text = cli("judges", SMALL / "qrels.txt", JUDGES / "llm.txt", f"bm25={SMALL / 'bm25.txt'}",
               f"monot5={SMALL / 'monot5.txt'}", f"rrf={JUDGES / 'rrf.txt'}")
    assert text.returncode == 0 and "== llm against qrels ==" in text.stdout
    assert "tau-b 95% interval" in text.stdout


@pytest.mark.parametrize("arguments, message", [
    (("--set", f"bm25={SMALL / 'qrels.txt'}", "--set", f"llm={JUDGES / 'llm.txt'}", f"bm25={SMALL / 'bm25.txt'}"),
     "'bm25' names both a judgment set and a run"),
    (("--set", f"NIST={SMALL / 'qrels.txt'}", "--set", f"BM25={JUDGES / 'llm.txt'}", f"bm25={SMALL / 'bm25.txt'}"),
     "'BM25' names both a judgment set and a run"),
    (("--set", f"A={SMALL / 'qrels.txt'}", "--set", f"a={JUDGES / 'llm.txt'}"), "two judgment sets are named 'a'"),
    (("--set", f"A={SMALL / 'qrels.txt'}", "--set", f"B={JUDGES / 'llm.txt'}", str(SMALL / "bm25.txt")),
     "with --set every argument is a run"),
    (("--set", f"A={SMALL / 'qrels.txt'}"), "give at least two judgment sets"),
    ((), "give at least two judgment sets"),
])
def test_bad_set_arguments_are_exit_2_with_one_line(arguments, message):
    done = cli("judges", *arguments)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr


def test_shared_queries_refuses_runs_sharing_no_query(tmp_path, part):
    other = tmp_path / "other.txt"
    lines = (SMALL / "bm25.txt").read_text().splitlines()
    other.write_text("".join(line + "\n" for line in lines if line.split()[0] not in KEPT))
    done = cli(*_sets(f"part={part}", f"other={other}", "--shared-queries"))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "--shared-queries: the runs share no query that judgment set 'NIST' judges" in done.stderr
