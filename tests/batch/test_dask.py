"""Dask: `batch --dask` and `eval --dask` on a LocalCluster of two worker processes
give exactly what one machine gives; a worker killed mid-build fails its report only; the lock still
refuses a second batch; a build whose batch is gone (seen through the shared filesystem) never
publishes; a scheduler that cannot be reached is one line, and Dask logs nothing itself; without --dask
nothing of Dask is imported."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.core.partitions import Options, evaluate_partitioned
from ndcg_report.errors import BuildError, ParameterError
from ndcg_report.working_folders import OWNED_MARKER
from ndcg_report.inputs.reading import read_qrels, read_run
from ndcg_report.build import supervisor
from tests.batch.test_batch import GOOD_A, GOOD_B, batch_cli, copy_inputs, index_rows, write_config
from tests.helpers import cli, one_line, small_config

DL19 = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS, MONOT5 = DL19 / "qrels.dl19-passage.txt", DL19 / "monot5.dl19.run.gz"
ARRAYS = ("num_ret", "num_rel", "num_rel_graded", "in_run", "values", "averaged", "dcg", "idcg", "judged")
BUILD_TIME = re.compile(r"<!-- build-time -->.*?<!-- /build-time -->", re.S)
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 worker processes with one thread each: (scheduler address, client)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as local, Client(local) as client:
        yield local.scheduler_address, client


def outputs(root: Path) -> dict:
    """What a batch leaves that must not depend on where builds ran: report files (the build-time line
    of report.html aside), history records and statuses (times aside), index rows (times aside)."""
    files = {}
    for name in ("good-a", "good-b"):
        files[f"{name}/report.html"] = BUILD_TIME.sub("", (root / name / "report.html").read_text())
        for file in ("summary.json", "per_query.csv"):
            files[f"{name}/{file}"] = (root / name / file).read_bytes()
    history = {name: [{k: v for k, v in json.loads(line).items() if k not in ("time", "duration_s")}
                      for line in (root / ".history" / f"{name}.jsonl").read_text().splitlines()]
               for name in ("good-a", "good-b")}
    statuses = {name: {k: v for k, v in json.loads((root / ".history" / f"{name}.status.json").read_text()).items()
                       if k not in ("time", "seconds")} for name in ("good-a", "good-b")}
    rows = {name: [re.sub(r"\d+(\.\d+)? s|\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?( UTC)?", "T", cell) for cell in row]
            for name, row in index_rows((root / "index.html").read_text()).items()}
    return {"files": files, "history": history, "statuses": statuses, "index": rows}


@pytest.fixture(scope="module")
def on_cluster(cluster, tmp_path_factory):
    """Two reports built by a batch at -j 2, then by a batch on the cluster on the same root (moved
    aside in between: the reports name their --out): (folder, what one machine left, the cluster
    batch's result)."""
    address, _ = cluster
    folder = tmp_path_factory.mktemp("dask-batch")
    copy_inputs(folder)
    config = write_config(folder / "nightly.yml", [GOOD_A, GOOD_B], defaults={"k": [5, 10]})
    local = batch_cli(config, "-j", "2")
    assert local.returncode == 0, local.stderr
    expected = outputs(folder / "out")
    (folder / "out").rename(folder / "out-local")
    return folder, expected, batch_cli(config, "--dask", address)


def builds_of(parents: set[int]) -> set[int]:
    """Pids of the `ndcg_report.cli build` processes whose parent is one of parents."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rpartition(")")[2].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid in parents and b"ndcg_report.cli" in command and b"build" in command:
            found.add(int(stat.parent.name))
    return found


def wait_until_gone(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2][:3]
                   for pid in pids):
            return True
        time.sleep(0.1)
    return False


def assert_staging_gone_or_marked(out: Path) -> None:
    """A stopped build removes its staging, or leaves it marked for the next clean-up (as on one machine)."""
    for left in out.glob(".good-*.staging-*"):
        assert (left / OWNED_MARKER).is_file(), sorted(path.name for path in left.iterdir())


def test_batch_on_the_cluster_builds_what_one_machine_builds(cluster, on_cluster):
    address, _ = cluster
    folder, expected, result = on_cluster
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert re.fullmatch(rf"{TIME} dask: scheduler {address} with 2 workers \(2 threads\); up to 2 reports at a time",
                        lines[0]), lines[0]
    assert "batch: 2 built, 0 skipped, 0 failed" in lines[-1]
    got = outputs(folder / "out")
    assert got["files"].keys() == expected["files"].keys()
    for name, content in expected["files"].items():
        assert got["files"][name] == content, name
    assert got["history"] == expected["history"] and len(got["history"]["good-a"]) == 1
    assert got["statuses"] == expected["statuses"] and got["statuses"]["good-a"]["status"] == "built"
    assert got["index"] == expected["index"]
    log = (folder / "out" / ".history" / "good-a.log").read_text()
    assert re.match(rf"# on worker tcp://127\.0\.0\.1:\d+ on .+ \(pid \d+, {re.escape(sys.executable)}\)\n"
                    r"\$ \S+python\S* -m ndcg_report\.cli build ", log), log[:300]
    assert not list((folder / "out" / ".history").glob("*attempt*"))  # the batch removed its tasks' markers


def test_a_killed_worker_fails_its_report_only_and_the_lock_still_holds(cluster, on_cluster):
    address, client = cluster
    folder = on_cluster[0]
    config, out, log = folder / "nightly.yml", folder / "out", folder / "killed.log"
    published = (out / "good-a" / "report.html").read_bytes()
    marker = out / ".history" / "good-a.attempt.json"
    with open(log, "w") as stream:
        batch = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config), "--dask", address,
                                  "--force"], stdout=stream, stderr=stream, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (marker.is_file() and list(out.glob(".good-a.staging-*"))):  # good-a runs papermill on a worker
            assert batch.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        second = batch_cli(config, "--dask", address)
        worker = json.loads(marker.read_text())["worker"]
        pid = int(re.search(r"\(pid (\d+), ", worker)[1])
        assert pid in client.run(os.getpid).values()
        build = builds_of({pid})
        assert len(build) == 1
        os.kill(pid, signal.SIGKILL)
        assert batch.wait(timeout=240) == 1, log.read_text()
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    one_line(second, 3, f"another batch is running on {out} (pid {batch.pid} on ")
    text = log.read_text()
    failed = re.search(r"FAILED good-a in \d+\.\d s: step worker: (.*)$", text, re.M)
    assert failed and failed[1].startswith(f"{worker} died while building this report (started "), text
    assert failed[1].endswith("which does not build a report twice in one batch")
    assert re.search(r"done good-b in \d+\.\d s: nDCG@10 ", text) and "batch: 1 built, 0 skipped, 1 failed" in text
    assert (out / "good-a" / "report.html").read_bytes() == published  # the failed build did not touch it
    assert BUILD_TIME.sub("", (out / "good-b" / "report.html").read_text()) == on_cluster[1]["files"]["good-b/report.html"]
    status = json.loads((out / ".history" / "good-a.status.json").read_text())
    assert (status["status"], status["step"]) == ("failed", "worker")
    assert index_rows((out / "index.html").read_text())["good-a"][1].startswith("FAILED step worker:")
    assert not marker.exists()
    assert wait_until_gone(build, 20), "the build outlived its worker"  # SIGTERM from PR_SET_PDEATHSIG
    assert_staging_gone_or_marked(out)


def test_builds_of_a_killed_batch_stop_on_the_workers_and_publish_nothing(cluster, on_cluster):
    """The workers' builds are not the batch's children: they learn through the shared filesystem
    (the batch's lock is no longer held) that their batch is gone."""
    address, client = cluster
    folder = on_cluster[0]
    out = folder / "out"
    workers = set(client.run(os.getpid).values())
    for left in out.glob(".good-*.staging-*"):  # what the killed worker's build may have left
        shutil.rmtree(left)
    published = [*out.glob("good-*/**/*.*"), *out.glob(".history/*.jsonl")]  # files: a report holds figures/ too
    before = {path: path.read_bytes() for path in published}
    batch = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(folder / "nightly.yml"), "--dask",
                              address, "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob(".good-a.staging-*")):
            assert batch.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        builds = builds_of(workers)
    finally:
        batch.kill()
        batch.wait()
    assert builds and wait_until_gone(builds, 30), "a build of the killed batch still runs"
    assert_staging_gone_or_marked(out)
    for left in out.glob(".good-*.staging-*"):
        shutil.rmtree(left)
    assert sorted([*out.glob("good-*/**/*.*"), *out.glob(".history/*.jsonl")]) == sorted(published)
    assert {path: path.read_bytes() for path in published} == before  # nothing published, no history point
    assert json.loads((out / ".history" / "good-a.status.json").read_text())["status"] == "running"  # as it was left


def test_a_worker_that_does_not_see_the_output_root_says_so(cluster, tmp_path):
    from ndcg_report.batch.dask_builds import build_on_worker

    _, client = cluster
    lock = tmp_path / "elsewhere" / ".batch.lock"
    env = {supervisor.BATCH_LOCK_ENV: str(lock), supervisor.BATCH_TOKEN_ENV: "t"}
    returncode, stdout, stderr, where = client.submit(build_on_worker, ["python", "-c", "0"], env,
                                                      str(tmp_path / "r.attempt.json"), pure=False).result()
    assert (returncode, stdout) == (1, "") and where.startswith("worker tcp://127.0.0.1:")
    assert stderr == (f"ndcg-report: error: step worker failed: the batch is gone: its lock {lock} cannot be opened "
                      f"(No such file or directory) ({where} does not see the batch's output root: the workers must "
                      "share it); the build did not start\n")
    assert not (tmp_path / "r.attempt.json").exists()


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory) -> Path:
    """The monoT5 DL 2019 run as a dataset of 4 files partitioned by query (plus an empty file and _SUCCESS)."""
    folder = tmp_path_factory.mktemp("partitioned") / "monot5"
    folder.mkdir()
    table = read_run(MONOT5).table
    table = pa.table({"qid": table["qid"].cast(pa.string()), "docid": table["docid"], "score": table["score"]})
    qids = sorted(set(table["qid"].to_pylist()))
    for part in range(4):
        mine = pa.array(qids[part::4], pa.string())
        pq.write_table(table.filter(pc.is_in(table["qid"], value_set=mine)), folder / f"part-{part}.parquet")
    pq.write_table(table.slice(0, 0), folder / "part-9-empty.parquet")
    (folder / "_SUCCESS").touch()
    return folder


@pytest.mark.parametrize("options", [
    ["--format", "trec"], ["--format", "trec", "-q"], ["--format", "csv", "-q", "--missing", "skip", "--no-relevant", "zero"],
    ["--format", "json", "-q", "--gain", "exponential"],
])
def test_eval_on_the_cluster_prints_what_eval_prints(cluster, partitioned, options):
    address, _ = cluster
    args = ["eval", *options, "-k", "1,3,5,10,20,100,1000,all", QRELS, partitioned]
    here, there = cli(*args), cli(*args, "--dask", address)
    assert here.returncode == there.returncode == 0, there.stderr
    assert there.stdout == here.stdout and there.stderr == here.stderr == ""
    if options == ["--format", "trec"]:
        assert re.search(r"ndcg_cut_10 *\tall\t0\.7215", there.stdout), there.stdout


def test_eval_on_the_cluster_prints_every_trec_eval_measure_with_M(cluster, partitioned):
    address, _ = cluster
    args = ["eval", "--format", "trec", "-q", "-m", "all_trec", "-l", "2", "-M", "100", QRELS, partitioned]
    here, there = cli(*args), cli(*args, "--dask", address)
    assert here.returncode == there.returncode == 0, there.stderr
    assert there.stdout == here.stdout and "infAP                 \tall\t" in there.stdout


def test_partitions_merge_into_the_whole_run_s_evaluation(partitioned):
    options = dict(measures="nDCG@1 nDCG@10 nDCG@100 nDCG AP RR@10 R@100 P@10", rel_level=2, missing="zero",
                   no_relevant="zero")
    with ThreadPoolExecutor(2) as pool:
        merged = evaluate_partitioned(partitioned, read_qrels(QRELS), pool, Options.of(**options))
    whole = evaluate(partitioned, QRELS, **options)
    assert list(merged.qids) == list(whole.qids)
    for name in ARRAYS:
        assert np.array_equal(getattr(merged, name), getattr(whole, name), equal_nan=True), name
    assert merged.counts == whole.counts and merged.tied_lines == whole.tied_lines > 0


def test_a_query_in_two_files_names_both(cluster, partitioned, tmp_path):
    address, _ = cluster
    folder = tmp_path / "run"
    shutil.copytree(partitioned, folder)
    first = pq.read_table(folder / "part-1.parquet")
    qid = first["qid"][0].as_py()
    pq.write_table(first.filter(pc.equal(first["qid"], qid)).slice(0, 1), folder / "part-3b.parquet")
    result = cli("eval", QRELS, folder, "--dask", address)
    one_line(result, 2, f"error: {folder / 'part-3b.parquet'}: query {qid!r} is also in {folder / 'part-1.parquet'}: "
                        "the dataset is not partitioned by query")
    assert result.stdout == ""
    (folder / "part-3b.parquet").write_bytes(b"PAR1 not really")  # a bad file: the worker's error, one line
    one_line(cli("eval", QRELS, folder, "--dask", address), 2, f"{folder / 'part-3b.parquet'}: cannot be read as Parquet")


def test_bad_addresses_and_text_runs_are_one_line_before_anything_is_done(tmp_path):
    one_line(cli("eval", QRELS, MONOT5, "--dask", "tcp://127.0.0.1:8786"), 2,
             f"--dask evaluates a Parquet run (a folder of files partitioned by query, one task per file); {MONOT5} "
             "is a text run")
    one_line(cli("eval", QRELS, MONOT5, "--dask", "no address"), 2, "--dask evaluates a Parquet run")
    config = write_config(tmp_path / "c.yml", [GOOD_A])
    result = cli("batch", config, "--dask", "scheduler")
    one_line(result, 2, "error: --dask 'scheduler' is not a scheduler address (missing port number in address "
                        "'scheduler'); start one with `dask scheduler`")
    assert not (tmp_path / "out").exists()
    one_line(cli("batch", config, "--dask", "tcp://h:1", "--index"), 2, "--index builds nothing, so it takes no --dask")
    from ndcg_report.dask_cluster import connect

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ParameterError, match=rf"--dask tcp://127\.0\.0\.1:{port}: no Dask scheduler answered within "
                                             r"1 s \(Timed out trying to connect"):
        connect(f"tcp://127.0.0.1:{port}", timeout=1)
    assert time.monotonic() - started < 5


def test_a_build_publishes_only_while_its_batch_holds_the_lock_and_waits(tmp_path, monkeypatch):
    lock, attempt = tmp_path / ".batch.lock", tmp_path / "r.attempt.json"
    monkeypatch.setenv(supervisor.BATCH_LOCK_ENV, str(lock))
    monkeypatch.setenv(supervisor.BATCH_TOKEN_ENV, "t1")
    monkeypatch.delenv(supervisor.SUPERVISOR_ENV, raising=False)
    assert supervisor.batch_problem(lock, "t1") == f"is gone: its lock {lock} cannot be opened (No such file or directory)"
    lock.write_text(json.dumps({"pid": 1, "token": "t1"}) + "\n")
    with pytest.raises(BuildError, match=f"step publish: the batch that started this build is gone: nothing holds its "
                                         f"lock {lock}; nothing is published"):
        supervisor.check_supervisor()
    with open(lock, "r+") as held:  # the batch's flock: another open file conflicts with it, even in one process
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        supervisor.check_supervisor()
        assert supervisor.batch_problem(lock, "t2") == f"is gone: its lock {lock} no longer names it"
        monkeypatch.setenv(supervisor.BATCH_ATTEMPT_ENV, str(attempt))  # started by a Dask task
        with pytest.raises(BuildError, match="the batch that started this build no longer waits for it"):
            supervisor.check_supervisor()
        attempt.write_text(json.dumps({"token": "t1", "worker": "w"}))
        supervisor.check_supervisor()
        lock.write_text(json.dumps({"pid": 1, "token": "t1", "stopping": 15}) + "\n")
        assert supervisor.batch_problem(lock, "t1") == "was stopped by signal 15"
        fcntl.flock(held, fcntl.LOCK_UN)


def test_without_dask_nothing_of_dask_is_imported(tmp_path):
    config = write_config(tmp_path / "c.yml", [GOOD_A])
    code = f"""
import contextlib, io, sys
from ndcg_report import cli
import ndcg_report.batch.runner, ndcg_report.build.pipeline, ndcg_report.core.partitions
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    codes = [cli.main(["eval", "-q", {str(QRELS)!r}, {str(MONOT5)!r}]), cli.main(["batch", {str(config)!r}, "--index"]),
             cli.main(["build", "--run", "missing.txt", "--qrels", {str(QRELS)!r}, "--baseline", {str(MONOT5)!r},
                       "--out", {str(tmp_path / "r")!r}])]
print(codes, sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.stdout == "[0, 0, 2] []\n", result.stderr


def test_dask_failures_are_one_line_and_dask_says_nothing_itself(tmp_path, monkeypatch):
    import logging

    from ndcg_report.dask_cluster import connect

    for name in ["distributed", "tornado", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        monkeypatch.setattr(logging.getLogger(name), "level", logging.getLogger(name).level)  # restored after

    config = small_config(tmp_path)
    one_line(cli("batch", config, "--dask", "tls://127.0.0.1:9"), 2, "--dask tls://127.0.0.1:9: cannot connect (TypeError")
    one_line(cli("batch", config, "--dask", f"tcp://{'a' * 300}:1"), 2, "no Dask scheduler answered")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ParameterError):
        connect("tcp://127.0.0.1:9", timeout=0.5)
    for name in ("distributed", "distributed.client", "distributed.utils", "tornado"):
        assert not logging.getLogger(name).isEnabledFor(logging.CRITICAL), name  # a lost scheduler logs nothing
