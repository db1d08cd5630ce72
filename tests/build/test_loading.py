"""The build's inputs (build/loading.py, build/input_snapshots.py): one changed while they are copied is
refused before any kernel, and nothing is published; once copied, a change is never read (a documents
file, read where it is, that changed is refused at publish)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ndcg_report.errors import InputError
from tests.helpers import BASELINE, QRELS, RUN, TOPICS, build_args, build_in_process, one_stderr_line, working_folders


def swapped_run(tmp_path: Path) -> tuple[Path, Path]:
    """run.txt holding monoT5's run (A) and, beside it, next.txt holding BM25's (B)."""
    run, other = tmp_path / "run.txt", tmp_path / "next.txt"
    run.write_bytes(RUN.read_bytes())
    other.write_bytes(BASELINE.read_bytes())
    return run, other


def parquet_folder(folder: Path, run: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [line.split() for line in run.read_text().splitlines() if line.strip()]
    folder.mkdir()
    table = pa.table({"qid": [r[0] for r in rows], "docid": [r[2] for r in rows], "score": [float(r[4]) for r in rows]})
    pq.write_table(table, folder / "part-0.parquet")
    return folder


SWAP_WHILE_COPIED = """
import os, sys
from ndcg_report.build import input_snapshots

copy, run, other = input_snapshots._copy_file, sys.argv[1], sys.argv[2]

def copy_file(path, target):
    copied = copy(path, target)
    if str(path) == run and os.path.exists(other):
        os.replace(other, run)  # `mv next.txt run.txt` while the build copies its inputs
    return copied

input_snapshots._copy_file = copy_file
from ndcg_report.cli import main
sys.exit(main(sys.argv[3:]))
"""


def test_a_run_moved_over_while_the_inputs_are_copied_is_refused_before_any_kernel(tmp_path, fake_steps, monkeypatch):
    # found: the run was hashed after parsing, so `mv B run.txt` during the parse gave A's numbers B's sha256
    from ndcg_report.build import input_snapshots

    run, other = swapped_run(tmp_path)
    copy = input_snapshots._copy_file

    def copy_file(path, target):
        copied = copy(path, target)
        if Path(path) == run and other.exists():
            os.replace(other, run)  # `mv next.txt run.txt` once A is copied, while the other inputs are
        return copied

    monkeypatch.setattr(input_snapshots, "_copy_file", copy_file)
    executed = []
    fake_steps.append(lambda: executed.append(True))
    with pytest.raises(InputError, match=r"run\.txt: changed during the build \(replaced, or written to\)"):
        build_in_process(tmp_path / "out", run, topics=str(TOPICS))
    assert not executed and not (tmp_path / "out").exists() and working_folders(tmp_path) == []


def test_a_run_moved_over_once_copied_is_not_read_by_the_parse(tmp_path, fake_steps, monkeypatch):
    from ndcg_report.build import loading, pipeline
    from ndcg_report.build.input_cache import INPUT_CACHE_ENV, load_parsed
    from ndcg_report.inputs.access.snapshots import read_manifest
    from ndcg_report.inputs.reading import read_run

    run, other = swapped_run(tmp_path)
    parse = loading.read_run

    def moved_then_read(path):
        if Path(path) == run and other.exists():
            os.replace(other, run)  # `mv next.txt run.txt` once the inputs are copied, before the run is parsed
        return parse(path)

    monkeypatch.setattr(loading, "read_run", moved_then_read)
    execute, seen = pipeline._execute, {}

    def execute_and_look(parameters, template, executed, env, timeout, progress=False):  # what the kernels get
        snapshot = read_manifest(Path(env[INPUT_CACHE_ENV]))[str(run)]
        seen["sha256"], seen["run"] = snapshot.sha256, load_parsed(Path(env[INPUT_CACHE_ENV]), run, "run", snapshot.sha256)
        return execute(parameters, template, executed, env, timeout, progress)

    monkeypatch.setattr(pipeline, "_execute", execute_and_look)
    build_in_process(tmp_path / "out", run)
    assert seen["sha256"] == hashlib.sha256(RUN.read_bytes()).hexdigest()
    assert seen["run"].table.equals(read_run(RUN).table) and seen["run"].path == str(run)


@pytest.mark.parametrize("change", ["qrels written to", "topics moved over", "a file added to a Parquet run",
                                    "documents written to"])
def test_an_input_changed_while_the_kernels_run_is_not_read_unless_it_is_read_in_place(tmp_path, fake_steps, change):
    # the kernels read the build's copies of the inputs it parsed (build/input_snapshots.py), and the documents
    # file where it is: only a change of that one can reach the report, and it is refused at publish
    qrels, topics, docs = tmp_path / "qrels.txt", tmp_path / "topics.txt", tmp_path / "docs.tsv"
    qrels.write_bytes(QRELS.read_bytes())
    topics.write_bytes(TOPICS.read_bytes())
    docs.write_text("8760866\tsome text\n")
    run = parquet_folder(tmp_path / "run.parquet", RUN)
    if change == "qrels written to":
        act = lambda: qrels.write_bytes(QRELS.read_bytes().replace(b" 3\n", b" 2\n"))  # noqa: E731
    elif change == "topics moved over":
        (tmp_path / "new.txt").write_bytes(TOPICS.read_bytes().upper())
        act = lambda: os.replace(tmp_path / "new.txt", topics)  # noqa: E731
    elif change == "a file added to a Parquet run":
        act = lambda: parquet_folder(tmp_path / "more", BASELINE).joinpath("part-0.parquet").rename(  # noqa: E731
            run / "part-1.parquet")
    else:
        act = lambda: docs.write_text("8760866\tother text\n")  # noqa: E731
    fake_steps.append(act)
    if change != "documents written to":
        build_in_process(tmp_path / "out", run, qrels=str(qrels), topics=str(topics), docs=str(docs))
        assert (tmp_path / "out" / "summary.json").is_file() and not (tmp_path / "out" / ".inputs").exists()
    else:
        with pytest.raises(InputError, match=r"docs\.tsv: changed during the build"):
            build_in_process(tmp_path / "out", run, qrels=str(qrels), topics=str(topics), docs=str(docs))
        assert not (tmp_path / "out").exists()
    assert working_folders(tmp_path) == []


def test_the_command_line_refuses_a_run_moved_over_while_the_inputs_are_copied_with_exit_2(tmp_path):
    run, other = swapped_run(tmp_path)
    result = subprocess.run([sys.executable, "-c", SWAP_WHILE_COPIED, str(run), str(other),
                             *build_args(tmp_path / "out", "--topics", TOPICS, run=run)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    one_stderr_line(result.stderr, f"{run}: changed during the build", "run the build again once the file is complete")
    assert not (tmp_path / "out").exists() and working_folders(tmp_path) == []
