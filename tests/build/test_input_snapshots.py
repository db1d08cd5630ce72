"""A build copies each input it parses once, hashed as it is copied (build/input_snapshots.py), and reads
only the copy from then on: a report's sha256 is of the bytes whose numbers it shows, whatever happens
to the file after the copy."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ndcg_report.cli import main
from tests.helpers import BASELINE, QRELS, RUN, TOPICS, build_in_process


def reversed_scores(run: bytes) -> bytes:
    """run (TREC text, one space between columns) with each query's scores in reverse order: as many
    bytes, another ranking."""
    lines = [line.split(b" ") for line in run.splitlines()]
    by_query: dict[bytes, list[int]] = {}
    for number, fields in enumerate(lines):
        by_query.setdefault(fields[0], []).append(number)
    scores = [fields[4] for fields in lines]
    for numbers in by_query.values():
        for number, score in zip(numbers, reversed([scores[n] for n in numbers])):
            lines[number][4] = score
    return b"".join(b" ".join(fields) + b"\n" for fields in lines)


def eval_ndcg10(qrels: Path, run: Path, capfd) -> float:
    """nDCG@10 of run as `ndcg-report eval` computes it (trec_eval's)."""
    capfd.readouterr()
    assert main(["eval", "-m", "ndcg_cut.10", str(qrels), str(run)]) == 0
    return float(capfd.readouterr().out.split()[-1])


@pytest.mark.parametrize("change", ["written through a memory map", "written in place, its times put back",
                                    "moved away"])
def test_a_report_is_of_its_inputs_as_copied_whatever_happens_to_them_after(tmp_path, monkeypatch, capfd, change):
    # found: a run written through a memory map while a build ran (a page dirtied before, so its size and times
    # stay) published A's sha256 with B's nDCG@10: the kernels hashed and parsed the file again
    import mmap

    from ndcg_report.build import pipeline

    inputs = {}
    for name, source in (("run.txt", RUN), ("bm25.txt", BASELINE), ("qrels.txt", QRELS), ("topics.txt", TOPICS)):
        inputs[name] = tmp_path / name
        inputs[name].write_bytes(source.read_bytes())
    run, version_a = inputs["run.txt"], RUN.read_bytes()
    (tmp_path / "b.txt").write_bytes(reversed_scores(version_a))
    assert len(reversed_scores(version_a)) == len(version_a)
    expected = eval_ndcg10(QRELS, RUN, capfd)
    assert expected != eval_ndcg10(QRELS, tmp_path / "b.txt", capfd)  # B's numbers would show
    environment = pipeline._kernel_environment

    with open(run, "r+b") as handle:
        mapped = mmap.mmap(handle.fileno(), 0)
    mapped[:] = version_a  # its pages dirty before the build stamps the run: writing them again changes no time

    def change_then_start_the_kernels(staging):  # once the inputs are copied and parsed, before any kernel
        if change == "moved away":
            for path in inputs.values():
                path.rename(path.with_suffix(".gone"))
        elif change == "written through a memory map":
            mapped[:] = reversed_scores(version_a)
        else:
            before = os.stat(run)
            with open(run, "r+b") as handle:  # the same inode, the same size
                handle.write(reversed_scores(version_a))
            os.utime(run, ns=(before.st_atime_ns, before.st_mtime_ns))
            assert os.stat(run).st_size == before.st_size
        return environment(staging)

    monkeypatch.setattr(pipeline, "_kernel_environment", change_then_start_the_kernels)
    try:
        build_in_process(tmp_path / "out", run, baseline=str(inputs["bm25.txt"]), qrels=str(inputs["qrels.txt"]),
                         topics=str(inputs["topics.txt"]))
    finally:
        mapped.close()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    sha256 = {record["file"]: record["sha256"] for record in summary["files"]}
    assert sha256 == {name: hashlib.sha256(source.read_bytes()).hexdigest()
                      for name, source in (("run.txt", RUN), ("bm25.txt", BASELINE), ("qrels.txt", QRELS),
                                           ("topics.txt", TOPICS))}
    system = next(item for item in summary["systems"] if item["name"] == "run")
    assert round(system["summary"]["nDCG@10"]["mean"], 4) == round(expected, 4)
    assert [path.name for path in (tmp_path / "out").rglob("*.txt")] == []  # no copy is published


def test_a_parquet_folder_is_copied_and_hashed_as_it_is_hashed_in_place(tmp_path):
    from ndcg_report.build.input_snapshots import take_snapshots
    from ndcg_report.files import path_sha256
    from tests.build.test_loading import parquet_folder

    run = parquet_folder(tmp_path / "run.parquet", RUN)
    (run / "nested").mkdir()
    parquet_folder(tmp_path / "more", BASELINE).joinpath("part-0.parquet").rename(run / "nested" / "part-1.parquet")
    (run / "_SUCCESS").write_text("")
    taken = take_snapshots({run: "run", QRELS: "qrels"}, tmp_path / "inputs")
    copy = Path(taken[str(run)].copy)
    assert taken[str(run)].sha256 == path_sha256(run) == path_sha256(copy)
    assert sorted(str(path.relative_to(copy)) for path in copy.rglob("*")) == ["nested", "nested/part-1.parquet",
                                                                              "part-0.parquet"]
    assert taken[str(QRELS)].sha256 == path_sha256(QRELS) and Path(taken[str(QRELS)].copy).name == "qrels.txt"


@pytest.mark.parametrize("saved", [True, False], ids=["parses saved", "none saved"])
def test_a_build_s_kernel_hashes_nothing_and_reads_only_the_copies(tmp_path, monkeypatch, saved):
    from ndcg_report.build import loading, notebook_io
    from ndcg_report.build.input_cache import save_parsed
    from ndcg_report.build.input_snapshots import take_snapshots, with_formats
    from ndcg_report.build.loading import parsed_inputs
    from ndcg_report import files
    from ndcg_report.build.parameters import validate_parameters
    from ndcg_report.inputs.access import snapshots

    given = {}
    for name, source in (("runs", RUN), ("baseline", BASELINE), ("qrels", QRELS), ("topics", TOPICS)):
        given[name] = tmp_path / source.name
        given[name].write_bytes(source.read_bytes())
    values = {name: [str(path)] if name == "runs" else str(path) for name, path in given.items()}
    params = validate_parameters(**values, ks="5,10")
    expected = notebook_io.load_report(params)
    folder = tmp_path / "inputs"
    taken = with_formats(take_snapshots(parsed_inputs(params), folder), parsed_inputs(params))
    snapshots.write_manifest(folder, taken)
    if saved:  # as the build's process saves them: read from the copies, named by the inputs' paths
        with snapshots.registered(taken):
            loading.check_inputs(params, keep=lambda parsed: save_parsed(folder, parsed))
    monkeypatch.setenv(snapshots.INPUT_CACHE_ENV, str(folder))  # as a build's kernel has it
    for path in given.values():
        path.rename(path.with_suffix(".gone"))

    def hashed(path):
        raise AssertionError(f"{path} was hashed")

    def parsed_again(path):
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(files, "path_sha256", hashed)
    if saved:
        monkeypatch.setattr(loading, "read_run", parsed_again)
        monkeypatch.setattr(loading, "read_qrels", parsed_again)
    report = notebook_io.load_report(validate_parameters(**values, ks="5,10"))
    assert report.files.equals(expected.files) and report.experiment.leaderboard.equals(expected.experiment.leaderboard)
    assert report.experiment.topics.equals(expected.experiment.topics)
