"""The notebooks an analyst opens: notebooks/ holds the report notebook (the package's, not a link)
and the exploration notebook (run under nbval by `make test` itself); papermill runs the report
notebook directly with only run, baseline and qrels; the parameter cell is one papermill can read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from ndcg_report import cli
from ndcg_report.build.pipeline import package_file

SHARE_KERNEL_FORKS = True  # its builds fork their kernels from the session's server (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
PARAMETER_LINE = re.compile(r"^(\w+): (\w+) = (.+?)  # (.+)$")


def cells(path: Path) -> list[tuple[str, str, list[str]]]:
    notebook = nbformat.read(path, as_version=4)
    return [(cell.cell_type, cell.source, cell.metadata.get("tags", [])) for cell in notebook.cells]


def parameter_lines() -> list[re.Match]:
    source = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4).cells[0].source
    code = [line for line in source.splitlines() if line and not line.startswith("#")]
    matches = [PARAMETER_LINE.match(line) for line in code]
    assert all(matches), [line for line, match in zip(code, matches) if not match]
    return matches


def test_notebooks_holds_a_copy_of_the_report_notebook_not_a_link():
    copy = ROOT / "notebooks" / "ndcg_report.ipynb"
    assert copy.is_file() and not copy.is_symlink()
    assert cells(copy) == cells(package_file("notebooks", "ndcg_report.ipynb")), (
        "notebooks/ndcg_report.ipynb differs from the notebook build runs: edit "
        "src/ndcg_report/build/notebooks/ndcg_report.ipynb, then copy it to notebooks/")


def test_the_exploration_notebook_is_collected_under_nbval():
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "notebooks/explore_dl19.ipynb"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    collected = re.findall(r"explore_dl19\.ipynb::Cell \d+", result.stdout)
    notebook = nbformat.read(ROOT / "notebooks" / "explore_dl19.ipynb", as_version=4)
    assert len(collected) == sum(cell.cell_type == "code" for cell in notebook.cells) >= 8
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs for cell in code[1:])  # outputs to compare (the first cell imports)


def test_papermill_help_lists_every_parameter_with_type_default_and_help():
    result = subprocess.run([sys.executable, "-m", "papermill", "--help-notebook", "notebooks/ndcg_report.ipynb"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "Unable to parse" not in result.stdout + result.stderr, result.stderr
    text = " ".join(result.stdout.split())
    from ndcg_report.analysis.options.pages import NOTEBOOK_EXTRAS
    from ndcg_report.analysis.options.table import on

    lines = parameter_lines()
    assert [match.group(1) for match in lines] == [option.name for option in on("notebook")] + [
        name for name, *_ in NOTEBOOK_EXTRAS]
    for match in lines:
        name, kind, default, help_text = match.groups()
        shown = default.strip('"') if kind == "str" else default
        assert f'{name}: {kind} (default {"" if kind != "str" else chr(34)}{shown}' in text, name
        assert " ".join(help_text.split()) in text, name


def test_the_notebook_and_batch_docs_name_every_input_format_not_only_trec_qrels_and_tsv_topics():
    """The parameter cell (papermill --help-notebook), docs/notebook.md and the batch config
    table described only TREC qrels and qid<TAB>text topics; every format of docs/inputs.md is taken."""
    comments = {match.group(1): match.group(4) for match in parameter_lines()}
    notebook_doc = (ROOT / "docs" / "notebook.md").read_text(encoding="utf-8")
    batch_doc = (ROOT / "docs" / "scheduled-builds.md").read_text(encoding="utf-8")
    rows = {doc: {re.findall(r"`(\w+)`", line.split("|")[1])[0]: line for line in text.splitlines()
                  if line.startswith("| `")} for doc, text in (("notebook", notebook_doc), ("batch", batch_doc))}
    for said in (comments["qrels"], rows["notebook"]["qrels"], rows["batch"]["qrels"]):
        assert all(name in said for name in ("TREC", "BEIR TSV", "JSON lines", "Parquet")), said
    for said in (comments["topics"], rows["notebook"]["topics"], rows["batch"]["topics"]):
        assert all(name in said for name in ("qid<TAB>text", "queries.jsonl", "TREC topic")), said
    for said in (comments["runs"], rows["notebook"]["runs"], rows["batch"]["run"]):
        assert all(name in said for name in ("JSON lines", "Parquet")), said
    bm25_help = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "bm25", "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "BEIR queries.jsonl or a TREC topic file" in " ".join(bm25_help.split())


def test_papermill_with_only_run_baseline_and_qrels_reports_those_files(tmp_path):
    import papermill

    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "ndcg_report.ipynb"), str(out), kernel_name="python3", progress_bar=False,
        cwd=str(tmp_path), parameters={"run": str(SMALL / "monot5.txt"), "baseline": str(SMALL / "bm25.txt"),
                                       "qrels": str(SMALL / "qrels.txt"), "output_dir": "new/folder"},
    )
    # an output_dir that did not exist is made by the first cell, not a traceback in the last one
    written = tmp_path / "new" / "folder"
    assert sorted(path.name for path in written.iterdir()) == ["figures", "leaderboard.md", "leaderboard.tex", "per_query.csv",
                                                              "summary.json", "unjudged.tsv"]
    shown = json.dumps([output for cell in nbformat.read(out, as_version=4).cells for output in cell.get("outputs", [])])
    assert "<h1>monot5 against bm25</h1>" in shown  # systems given without a name: named by their files
    assert "TREC DL 2019" not in shown and "monoT5" not in shown and "ndcg-report demo" not in shown
    command = re.search(r"<pre[^>]*>(ndcg-report build [^<]*)</pre>", shown).group(1)
    assert f"--run={SMALL / 'monot5.txt'} " in command and f"--baseline={SMALL / 'bm25.txt'} " in command
    assert f"--qrels={SMALL / 'qrels.txt'} " in command and "--name" not in command


def test_the_output_dir_is_settled_in_the_first_cell_made_or_refused_with_one_line(tmp_path, monkeypatch):
    from ndcg_report.build import notebook_io
    from ndcg_report.build.steps.processes import REVALIDATION_ENV
    from ndcg_report.errors import ParameterError

    notebook = nbformat.read(package_file("notebooks", "ndcg_report.ipynb"), as_version=4)
    first_code = next(cell.source for cell in notebook.cells[1:] if cell.cell_type == "code")
    assert "validate_parameters(" in first_code and "notebook_io.output_folder(output_dir)" in first_code
    assert notebook_io.output_folder("") is None
    assert notebook_io.output_folder(tmp_path / "a" / "b") == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("x")
    for bad, said in ((tmp_path / "file", "is a file, not a folder"), (tmp_path / "file" / "below", "cannot be made")):
        with pytest.raises(ParameterError, match=said) as raised:
            notebook_io.output_folder(str(bad))
        assert "\n" not in str(raised.value) and "output_dir" in str(raised.value)
    monkeypatch.setenv(REVALIDATION_ENV, "1")  # nbval's re-execution of a build makes nothing
    assert not notebook_io.output_folder(tmp_path / "c").exists()


def test_a_file_that_is_not_a_run_fails_before_any_kernel(tmp_path, monkeypatch, capsys):
    """DL 2020's trec_eval output given as the baseline: its first line is checked before anything else."""
    from ndcg_report.build import pipeline as build

    (tmp_path / "bm25.eval").write_text("ndcg_cut_10           \t1037798\t0.3057\nrecall_1000\tall\t0.75\n")
    monkeypatch.setattr(build, "_execute", lambda *args, **kwargs: pytest.fail("a kernel was started"))
    code = cli.main(["build", "--run", str(SMALL / "monot5.txt"), "--baseline", str(tmp_path / "bm25.eval"),
                     "--qrels", str(SMALL / "qrels.txt"), "--out", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert f"{tmp_path / 'bm25.eval'}:1: expected 6 columns" in error
    assert not (tmp_path / "out").exists()


def test_conda_files_install_from_pyproject_only():
    analyst = (ROOT / "environment.yml").read_text()
    developer = (ROOT / "environment-dev.yml").read_text()
    assert re.search(r"^\s+- -e \.$", analyst, flags=re.M) and "[dev]" not in analyst
    assert re.search(r"^\s+- -e \.\[dev\]$", developer, flags=re.M)
    for text in (analyst, developer):
        pip_lines = re.findall(r"^\s+- (.+)$", text.split("pip:")[1], flags=re.M)
        assert len(pip_lines) == 1  # no dependency listed twice


def test_make_clean_removes_the_test_caches():
    clean = re.search(r"^clean:\n\t(.+)$", (ROOT / "Makefile").read_text(), flags=re.M).group(1)
    assert {".venv", ".pytest_cache", ".hypothesis"} <= set(clean.replace("$(VENV)", ".venv").split())
