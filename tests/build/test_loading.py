"""The build's inputs (build/loading.py): one changed while it is parsed or while the kernels read it is
refused, before any kernel or at publish, and nothing is published."""

from __future__ import annotations

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


SWAP_WHILE_PARSED = """
import os, sys
from ndcg_report.build import loading

parse, run, other = loading.read_run, sys.argv[1], sys.argv[2]

def read_run(path):
    parsed = parse(path)
    if str(path) == run and os.path.exists(other):
        os.replace(other, run)  # `mv next.txt run.txt` while the build parses run.txt
    return parsed

loading.read_run = read_run
from ndcg_report.cli import main
sys.exit(main(sys.argv[3:]))
"""


def test_a_run_moved_over_while_it_is_parsed_is_refused_before_any_kernel(tmp_path, fake_steps, monkeypatch):
    # found: the run was hashed after parsing, so `mv B run.txt` during the parse gave A's numbers B's sha256
    from ndcg_report.build import loading

    run, other = swapped_run(tmp_path)
    parse = loading.read_run

    def read_run(path):
        parsed = parse(path)
        if Path(path) == run and other.exists():
            os.replace(other, run)  # `mv next.txt run.txt` while A is parsed
        return parsed

    monkeypatch.setattr(loading, "read_run", read_run)
    executed = []
    fake_steps.append(lambda: executed.append(True))
    with pytest.raises(InputError, match=r"run\.txt: changed during the build \(replaced, or written to\)"):
        build_in_process(tmp_path / "out", run)
    assert not executed and not (tmp_path / "out").exists() and working_folders(tmp_path) == []


@pytest.mark.parametrize("change", ["qrels written to", "topics moved over", "a file added to a Parquet run"])
def test_an_input_changed_while_the_kernels_read_it_is_refused_at_publish(tmp_path, fake_steps, change):
    qrels, topics = tmp_path / "qrels.txt", tmp_path / "topics.txt"
    qrels.write_bytes(QRELS.read_bytes())
    topics.write_bytes(TOPICS.read_bytes())
    run = parquet_folder(tmp_path / "run.parquet", RUN)
    if change == "qrels written to":
        changed, act = qrels, lambda: qrels.write_bytes(QRELS.read_bytes().replace(b" 3\n", b" 2\n"))
    elif change == "topics moved over":
        (tmp_path / "new.txt").write_bytes(TOPICS.read_bytes().upper())
        changed, act = topics, lambda: os.replace(tmp_path / "new.txt", topics)
    else:
        changed, act = run, lambda: parquet_folder(tmp_path / "more", BASELINE).joinpath("part-0.parquet").rename(
            run / "part-1.parquet")
    fake_steps.append(act)
    with pytest.raises(InputError, match=rf"{changed.name}: changed during the build"):
        build_in_process(tmp_path / "out", run, qrels=str(qrels), topics=str(topics))
    assert not (tmp_path / "out").exists() and working_folders(tmp_path) == []


def test_the_command_line_refuses_a_run_moved_over_mid_parse_with_exit_2(tmp_path):
    run, other = swapped_run(tmp_path)
    result = subprocess.run([sys.executable, "-c", SWAP_WHILE_PARSED, str(run), str(other),
                             *build_args(tmp_path / "out", run=run)], capture_output=True, text=True, check=False)
    assert result.returncode == 2, result.stderr
    one_stderr_line(result.stderr, f"{run}: changed during the build", "run the build again once the file is complete")
    assert not (tmp_path / "out").exists() and working_folders(tmp_path) == []
