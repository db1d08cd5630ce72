"""Input formats are a registry: a format registered in this process (a throwaway CSV run reader) is read by
eval and build like a built-in one, and the docs' format table is the registry's."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pytest

import ndcg_report
from ndcg_report.cli import main
from ndcg_report.errors import InputError
from ndcg_report.inputs.formats.registry import FORMATS, Format, Parsed, parsed_by_lines
from ndcg_report.inputs.reading import read_run, run_pieces

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


def _read_tcsv(path: Path, kind: str) -> Parsed:
    """`qid,docid,score` rows, no header: the whole reader of the test's format."""
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    table = pa.table({"qid": pa.array([row[0] for row in rows], pa.string()).dictionary_encode(),
                      "docid": pa.array([row[1] for row in rows], pa.string()),
                      "score": pa.array([float(row[2]) for row in rows], pa.float64())})
    return parsed_by_lines(path, kind, table, lambda row: row + 1)


TCSV = Format("tcsv", "TCSV", (".tcsv",), ("run",), None, _read_tcsv,
              line_of_row=lambda path, kind, row: row + 1, examples=(("run", "TCSV", "`q1,d7,14.2`"),))


@pytest.fixture
def tcsv_run(tmp_path) -> Path:
    """SMALL's monot5 run written as TCSV, registered for the test's length only."""
    table = read_run(SMALL / "monot5.txt").table
    path = tmp_path / "monot5.tcsv"
    path.write_text("".join(f"{qid},{docid},{score!r}\n" for qid, docid, score in
                            zip(*(table[name].to_pylist() for name in ("qid", "docid", "score")))), encoding="utf-8")
    with FORMATS.registered(TCSV):
        yield path
    assert FORMATS.get("tcsv") is None


def eval_output(capfdbinary, *args: str | Path) -> tuple[int, bytes, bytes]:
    code = main(["eval", *map(str, args)])
    captured = capfdbinary.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("options", [[], ["--format", "csv"], ["-q", "--format", "json"], ["-q", "--stream"], ["--in-memory", "-m", "all_trec"]])
def test_eval_reads_a_registered_format_as_it_reads_trec_text(tcsv_run, capfdbinary, options):
    trec = eval_output(capfdbinary, *options, SMALL / "qrels.txt", SMALL / "monot5.txt")
    assert trec[0] == 0 and b"0.6003" in trec[1]  # monoT5's nDCG@10
    assert eval_output(capfdbinary, *options, SMALL / "qrels.txt", tcsv_run) == trec


def test_build_report_reads_a_registered_format_as_it_reads_trec_text(tcsv_run, tmp_path):
    reports = {}
    for name, run in (("trec", SMALL / "monot5.txt"), ("tcsv", tcsv_run)):
        ndcg_report.build_report({"runs": {"monoT5": run}, "qrels": SMALL / "qrels.txt", "baseline": SMALL / "bm25.txt"},
                                 tmp_path / name, drilldown=0, seed=7)
        reports[name] = json.loads((tmp_path / name / "summary.json").read_text())
    trec, tcsv = reports["trec"], reports["tcsv"]
    assert [{key: value for key, value in system.items() if key not in ("file", "tag")} for system in tcsv["systems"]] == \
        [{key: value for key, value in system.items() if key not in ("file", "tag")} for system in trec["systems"]]
    assert tcsv["comparisons"] == trec["comparisons"]
    assert round(tcsv["systems"][0]["summary"]["nDCG@10"]["mean"], 4) == 0.6003  # eval's, above
    assert (tmp_path / "tcsv" / "per_query.csv").read_bytes() == (tmp_path / "trec" / "per_query.csv").read_bytes()
    assert [record["file"] for record in tcsv["files"]] == ["monot5.tcsv", "bm25.txt", "qrels.txt"]


def test_a_report_names_the_registered_format_a_run_was_read_in(tcsv_run, tmp_path):
    # found: the kernels, which lack a format registered at run time, showed "" for it in the files table
    ndcg_report.build_report({"runs": {"monoT5": tcsv_run}, "qrels": SMALL / "qrels.txt", "baseline": SMALL / "bm25.txt"},
                             tmp_path / "out", drilldown=0)
    files = json.loads((tmp_path / "out" / "summary.json").read_text())["files"]
    assert [(record["file"], record["format"], record["lines"]) for record in files] == [
        ("monot5.tcsv", "TCSV", 800), ("bm25.txt", "TREC text", 800), ("qrels.txt", "TREC text", 1749)]


def test_a_registered_format_is_in_the_lists_of_accepted_formats_and_refused_for_other_kinds(tcsv_run):
    assert FORMATS.accepted("run") == "TREC text (.txt, .run), JSON (.json), JSON lines (.jsonl), Parquet (.parquet) or TCSV (.tcsv)"
    with pytest.raises(InputError, match=r"unknown qrels format \(\.tcsv\); give TREC text \(\.txt, \.qrels\), BEIR TSV"):
        ndcg_report.read_qrels(tcsv_run)


def test_a_registered_format_without_chunks_streams_as_one_piece(tcsv_run):
    pieces = list(run_pieces(tcsv_run, 4096))
    assert [(table.num_rows, before, whole) for table, before, whole in pieces] == [(800, 0, False)]


def test_a_format_once_unregistered_is_read_no_more(tmp_path):
    path = tmp_path / "run.tcsv"
    path.write_text("q1,d1,1.0\n", encoding="utf-8")
    with FORMATS.registered(TCSV):
        assert read_run(path).table.num_rows == 1
    assert FORMATS.get("tcsv") is None
    with pytest.raises(InputError, match="expected 6 columns"):  # told by its content now: TREC text
        read_run(path)


def test_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="'trec' is already registered"):
        FORMATS.register(Format("trec", "Other", (".other",), ("run",), None, _read_tcsv))
    assert FORMATS["trec"].label == "TREC text"


def test_the_docs_format_table_is_the_registry_s():
    spec = importlib.util.spec_from_file_location("formats_table", ROOT / "scripts" / "formats_table.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = script.PAGE.read_text(encoding="utf-8")
    assert script.page_with_table(text) == text, "run scripts/formats_table.py"
    assert "| qrels | BEIR TSV (`qrels/test.tsv`, with its header) |" in text
    with FORMATS.registered(TCSV):
        assert "| run | TCSV | `q1,d7,14.2` |\n| qrels |" in script.table()
