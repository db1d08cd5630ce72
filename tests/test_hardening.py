"""Hostile inputs, kills and odd machines: one regression test each."""

from __future__ import annotations

import glob
import json
import math
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report import InputError, ParameterError, evaluate
from ndcg_report.batch.config import load_config
from ndcg_report.batch.history import read_history, read_status
from ndcg_report.core.number_text import fixed, shortest
from ndcg_report.files import OWNED_MARKER
from ndcg_report.inputs.formats import trec_parsing, trec_text
from ndcg_report.inputs.reading import read_run

SMALL = Path(__file__).parent / "data" / "small"


def cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", *map(str, args)], capture_output=True, text=True,
                          check=False, **kwargs)


def one_line(result: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert message in result.stderr, result.stderr


def small_config(folder: Path, names: tuple[str, ...] = ("r1",), **extra) -> Path:
    reports = [{"name": name, "run": str(SMALL / "monot5.txt"), "baseline": str(SMALL / "bm25.txt"),
                "qrels": str(SMALL / "qrels.txt"), "k": "5,10", **extra} for name in names]
    path = folder / "c.yml"
    path.write_text(yaml.safe_dump({"output": "out", "reports": reports}))
    return path


def start_batch(config: Path) -> subprocess.Popen:
    """A batch in a session of its own (so that killing it does not kill its children by group)."""
    return subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, cwd=config.parent)


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def children_of(pid: int) -> list[int]:
    found = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        found += [int(child) for child in Path(task).read_text().split()]
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


# --- data loss and orphans ------------------------------------------------------------------------


def test_01_04_a_batch_killed_alone_takes_its_build_along_and_shows_as_interrupted(tmp_path):
    config = small_config(tmp_path, ("r1",))
    reports = yaml.safe_load(config.read_text())
    reports["reports"].append({**reports["reports"][0], "name": "r2", "run": str(tmp_path / "missing.txt")})
    config.write_text(yaml.safe_dump(reports))  # r2 fails at once when its turn comes
    batch = start_batch(config)
    assert wait_for(lambda: glob.glob(str(tmp_path / "out" / ".r1.staging-*")), 60), batch.stderr.read().decode()
    builds = children_of(batch.pid)
    assert builds
    assert ">building</span>" in (tmp_path / "out" / "index.html").read_text()
    batch.kill()  # the batch process alone, not its group (as an OOM killer may)
    batch.wait()
    assert wait_for(lambda: not any(running(pid) for pid in builds), 20), "the build outlived its batch"
    time.sleep(2)
    assert not (tmp_path / "out" / "r1" / "report.html").exists()
    for left in glob.glob(str(tmp_path / "out" / ".r1.staging-*")):  # gone, or marked for the next clean-up
        assert (Path(left) / OWNED_MARKER).is_file(), sorted(p.name for p in Path(left).iterdir())
    assert read_status(tmp_path / "out", "r1")["status"] == "running"  # what the dead batch left
    result = cli("batch", config, "--index", cwd=tmp_path)  # rewrite the index only: no batch holds the lock
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "out" / "index.html").read_text()
    assert ">interrupted</span>" in page and "was killed before it finished" in page and "not built yet" in page
    assert read_status(tmp_path / "out", "r1")["step"] == "interrupted"
    result = cli("batch", config, cwd=tmp_path)  # the next batch retries and records what it publishes
    assert result.returncode == 1 and "FAILED r2" in result.stderr, result.stderr
    assert len(read_history(tmp_path / "out", "r1")) == 1 and (tmp_path / "out" / "r1" / "report.html").is_file()
    assert read_status(tmp_path / "out", "r1")["status"] == "built"
    assert not glob.glob(str(tmp_path / "out" / ".*staging*"))
    assert ">interrupted</span>" not in (tmp_path / "out" / "index.html").read_text()


def test_02_a_batch_removes_only_what_it_made(tmp_path):
    config = small_config(tmp_path, run=str(tmp_path / "missing.txt"))
    out = tmp_path / "out"
    (out / ".history").mkdir(parents=True)
    foreign = [out / ".notes.tmp", out / ".history" / ".cmds.tmp", out / ".cache.staging-999999-abcdef12" / "mine.txt",
               out / ".index.html.notes.tmp"]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("the user's")
    ours = out / ".r1.staging-999999-0123abcd"  # a dead process's staging, with the marker
    ours.mkdir()
    (ours / OWNED_MARKER).write_text("made by ndcg-report")
    our_temp = out / ".index.html.ndcg-999999.abcd1234.tmp"
    our_temp.write_text("half an index")
    result = cli("batch", config, cwd=tmp_path)  # r1's run is missing: it fails at once, after the clean-up
    assert result.returncode == 1 and "FAILED r1" in result.stderr, result.stderr
    assert all(path.read_text() == "the user's" for path in foreign)
    assert not ours.exists() and not our_temp.exists()
    (out / "index.html").write_text("<html>the user's own page</html>")
    one_line(cli("batch", config, cwd=tmp_path), 2, "index.html was not written by ndcg-report")
    assert (out / "index.html").read_text() == "<html>the user's own page</html>"


def test_03_build_never_replaces_an_input_or_a_folder_it_did_not_make(tmp_path):
    out = tmp_path / "OUT"
    out.mkdir()
    topics = out / "summary.json"
    topics.write_text((SMALL / "topics.txt").read_text())
    args = ["build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt"]
    one_line(cli(*args, "--topics", topics, "--out", out), 2, f"holds the input {topics}")
    assert topics.read_text() == (SMALL / "topics.txt").read_text()
    other = tmp_path / "OUT2"
    (other / "report.html").mkdir(parents=True)
    (other / "report.html" / "mine.txt").write_text("keep")
    one_line(cli(*args, "--out", other), 2, "report.html is a folder or a link, not a report's file")
    assert (other / "report.html" / "mine.txt").read_text() == "keep"


def test_05_build_removes_its_own_stale_staging_and_nothing_else(tmp_path):
    stale = tmp_path / ".out.staging-999999-0123abcd"
    stale.mkdir()
    (stale / OWNED_MARKER).write_text("made by ndcg-report")
    foreign = tmp_path / ".out.staging-999998-0123abce"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep")
    import nbformat

    failing = tmp_path / "failing.ipynb"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise SystemExit('stop')")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, failing)
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                 SMALL / "qrels.txt", "-k", "10", "--notebook", failing, "--out", tmp_path / "out")
    assert result.returncode == 1 and "step papermill failed" in result.stderr, result.stderr
    assert not stale.exists() and (foreign / "mine.txt").read_text() == "keep"
    assert not glob.glob(str(tmp_path / ".out.staging-*[!e]"))  # its own staging is gone too


# (a forced rebuild of unchanged inputs adds no history point: tests/batch/test_batch.py, the forced batch)


# --- memory and time on bad or large input ----------------------------------------------------------


def test_07_per_query_output_in_every_format_equals_the_evaluation(tmp_path):
    import csv
    import io

    n = 120_001  # past one chunk of QUERIES_PER_CHUNK
    lines = [f"q{i} Q0 d{i} 1 1.5 t" for i in range(n)]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d{i} {1 + i % 3}\n" for i in range(n)) + "qx 0 d 1\n")
    evaluation = evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="1,all")
    result = cli("eval", "-q", "-k", "1,all", "--format", "csv", tmp_path / "qrels", tmp_path / "run")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 2 * (n + 1) and rows[-1]["qid"] == "qx" and rows[-1]["in_run"] == "False"
    assert rows[2] == {"qid": "q1", "measure": "nDCG", "k": "1", "value": "1.0000", "num_ret": "1", "num_rel": "1",
                       "dcg": "2.0000", "idcg": "2.0000", "judged": "1.0000", "in_run": "True", "averaged": "True"}
    record = json.loads(cli("eval", "-q", "-k", "1,all", "--format", "json", tmp_path / "qrels", tmp_path / "run").stdout)
    assert len(record["per_query"]) == 2 * (n + 1) and record["per_query"][-2]["value"] == 0
    assert [r["qid"] for r in record["per_query"][::2]] == evaluation.qids.tolist()
    trec_lines = cli("eval", "-q", "-k", "1,all", tmp_path / "qrels", tmp_path / "run").stdout.splitlines()
    assert len(trec_lines) == 2 * (n + 1) + 2 and trec_lines[0] == "ndcg                  \tq0\t1.0000"
    assert trec_lines[-4:-2] == ["ndcg                  \tqx\t0.0000", "ndcg_cut_1            \tqx\t0.0000"]  # as -c -q


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.integers(0, 10**6).map(lambda n: n / 10**5 + 5e-6),
                          st.integers(0, 10**4).map(lambda n: n / 10**4 + 0.00005)), min_size=1, max_size=50),
       st.integers(0, 8))
def test_07_vectorised_numbers_are_pythons_own_text(values, digits):
    assert fixed(np.array(values), digits).to_pylist() == [f"{v:.{digits}f}" for v in values]


def test_08_a_file_wrong_from_its_start_fails_on_a_bounded_prefix(tmp_path, monkeypatch):
    garbage = tmp_path / "ab.txt"
    garbage.write_bytes(b"ab\n" * 5_000_000)  # 15 MB
    bomb = tmp_path / "bomb.gz"
    import gzip

    with gzip.open(bomb, "wb") as handle:
        for _ in range(64):
            handle.write(b"x\n" * (1 << 20))  # 128 MiB of text from a small file

    def no_full_read(*args, **kwargs):
        raise AssertionError("the whole file was parsed")

    parse = trec_parsing.parse_text

    def prefix_only(source, layout):  # the prefix check parses at most _PREFIX_BYTES of text
        if not isinstance(source, bytes) or len(source) > trec_text._PREFIX_BYTES:
            no_full_read()
        return parse(source, layout)

    monkeypatch.setattr(trec_parsing, "parse_text", prefix_only)
    monkeypatch.setattr(trec_text, "_parse_in_chunks", no_full_read)
    for path in (garbage, bomb):
        with pytest.raises(InputError, match=r":1: expected 6 columns"):
            read_run(path)


def test_08_a_bad_line_deep_in_a_file_is_found_reading_it_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_text, "_CHUNK_BYTES", 1000)  # many chunks, lines cut across them
    lines = [f"q{i // 10}\tQ0\td{i}\t{i}\t{-i}\tt" for i in range(5000)]  # tabs: not the fast path
    lines[4321] = "q1 Q0 dx 1 oops t"
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    with pytest.raises(InputError, match=r"run.txt:4322: score 'oops' is not a number"):
        read_run(path)
    lines[4321] = "q1 Q0 dx 1 1.0 t"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    run = read_run(path)
    assert run.table.num_rows == 5000 and run.table["docid"][4999].as_py() == "d4999"


def test_09_yaml_aliases_that_expand_past_a_bound_are_refused_quickly(tmp_path):
    text = "output: out\nx0: &l0 [1,1,1,1,1,1,1,1,1]\n"
    for i in range(1, 10):
        text += f"x{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n"
    text += "defaults:\n  k: *l9\nreports: [{name: a, run: r, baseline: b, qrels: q}]\n"
    (tmp_path / "laughs.yml").write_text(text)
    result = cli("batch", tmp_path / "laughs.yml")
    one_line(result, 2, "the document expands to more than 100,000 values")
    assert len(result.stderr) < 1000


def test_09_every_message_is_capped(tmp_path):
    (tmp_path / "c.yml").write_text("output: out\nreports:\n  - {name: a, run: r, baseline: b, qrels: q, gain: "
                                    + "x" * 100_000 + "}\n")
    result = cli("batch", tmp_path / "c.yml")
    one_line(result, 2, "key 'gain'")
    assert len(result.stderr) < 1000


def test_10_a_line_with_a_10_mb_docid_is_read(tmp_path):
    docid = "D" * (10 << 20)
    (tmp_path / "run").write_text(f"q1 Q0 d1 1 3.0 t\nq1 Q0 {docid} 2 2.0 t\nq1 Q0 d2 3 1.0 t\n")
    (tmp_path / "qrels").write_text(f"q1 0 d1 1\nq1 0 {docid} 2\n")
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="3").mean(3) == pytest.approx(expected, abs=1e-15)


def test_10_a_line_past_the_limit_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_text, "_MAX_BLOCK", 1 << 16)
    monkeypatch.setattr(trec_text, "_CHUNK_BYTES", 1 << 12)
    path = tmp_path / "run"
    path.write_text("\tq1 Q0 d1 1 3.0 t\nq1 Q0 " + "D" * (1 << 17) + " 2 2.0 t\n")
    with pytest.raises(InputError, match=r"run:2: a line longer than"):
        read_run(path)


# --- clean errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("out", ["/proc/x", "FILE/x"])
def test_11_an_out_that_cannot_be_made_is_one_line(tmp_path, out):
    (tmp_path / "FILE").write_text("x")
    out = out.replace("FILE", str(tmp_path / "FILE"))
    result = cli("build", "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels",
                 SMALL / "qrels.txt", "--out", out)
    one_line(result, 2, f"--out {out}")


def test_12_a_lock_owned_by_another_user_is_one_line(tmp_path, monkeypatch, capsys):
    from ndcg_report import cli as cli_module
    from ndcg_report.batch import runner

    config = small_config(tmp_path)
    real_open = os.open

    def open_as_another_user(path, flags, *args):  # the lock file belongs to someone else
        if str(path).endswith(".batch.lock"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(runner.os, "open", open_as_another_user)
    monkeypatch.chdir(tmp_path)
    assert cli_module.main(["batch", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot open the lock" in err and "Permission denied" in err


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "-k", "18446744073709551616"], "is larger than 1,000,000,000"),
    (["build", "--timeout", "2147484"], "--timeout: 2147484 must be a whole number of seconds from 1 to 604,800"),
])
def test_13_ranges_are_checked_before_any_kernel(tmp_path, args, message):
    if args[0] == "eval":
        args = [*args, SMALL / "qrels.txt", SMALL / "monot5.txt"]
    else:
        args = [*args, "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                "--out", tmp_path / "out"]
    one_line(cli(*args), 2, message)


def test_14_exponential_gain_is_exact_for_labels_past_2_to_the_1023(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 a 1023\nq1 0 b 1023\nq1 0 c 1023\nq1 0 d 1022\nq2 0 a 1025\nq2 0 b 3\n")
    (tmp_path / "run").write_text("q1 Q0 d 1 4 t\nq1 Q0 a 2 3 t\nq1 Q0 b 3 2 t\nq2 Q0 b 1 4 t\nq2 Q0 a 2 3 t\n")
    evaluation = evaluate(tmp_path / "run", tmp_path / "qrels", cutoffs="3", gain="exponential")

    def exact(gained: list[int], ideal: list[int]) -> float:
        discount = [Fraction(1 / math.log2(rank + 2)) for rank in range(3)]
        dcg = sum(Fraction(2 ** label - 1) * d for label, d in zip(gained, discount))
        return float(dcg / sum(Fraction(2 ** label - 1) * d for label, d in zip(ideal, discount)))

    ndcg = evaluation.table(3)["nDCG@3"]
    assert ndcg["q1"] == pytest.approx(exact([1022, 1023, 1023], [1023, 1023, 1023]), rel=1e-14)  # 0.7654
    assert ndcg["q2"] == pytest.approx(exact([3, 1025], [1025, 3]), rel=1e-14)
    assert round(ndcg["q1"], 4) == 0.7654


def test_15_input_and_output_errors_are_one_line():
    one_line(cli("eval", SMALL / "qrels.txt", "/proc/self/mem"), 2, "/proc/self/mem: cannot be read")
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", SMALL / "qrels.txt", SMALL / "monot5.txt"],
                                stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    one_line(result, 1, "cannot write the output (No space left on device)")
    result = subprocess.run(f"{sys.executable} -m ndcg_report.cli eval {SMALL / 'qrels.txt'} {SMALL / 'monot5.txt'} >&-",
                            shell=True, stderr=subprocess.PIPE, text=True, check=False)
    one_line(result, 1, "cannot write the output")


@pytest.mark.parametrize("field", ["run", "title"])
def test_16_a_nul_in_a_config_value_is_refused_at_load(tmp_path, field):
    report = {"name": "a", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt"}
    report[field] = "x\x00y"
    (tmp_path / "c.yml").write_text(yaml.safe_dump({"output": "out", "reports": [report]}))
    with pytest.raises(ParameterError, match=f"key '{field}'.*(NUL|control character)"):
        load_config(tmp_path / "c.yml")


def test_17_yaml_merge_keys_work(tmp_path):
    (tmp_path / "c.yml").write_text("output: out\ndefaults: &d {gain: exponential, k: [10]}\n"
                                    "reports:\n  - {<<: *d, name: a, run: r.txt, baseline: b.txt, qrels: q.txt, k: [5]}\n")
    options = load_config(tmp_path / "c.yml").reports[0].options
    assert (options.gain, options.cutoffs) == ("exponential", "5")  # merged, and the report's own key wins


def test_18_ctrl_c_during_a_build_is_one_line_and_removes_the_staging(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "ndcg_report.cli", "build", "--run", str(SMALL / "monot5.txt"), "--baseline",
         str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert wait_for(lambda: glob.glob(str(tmp_path / ".out.staging-*")), 60)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr == "ndcg-report: interrupted\n", stderr
    assert not glob.glob(str(tmp_path / ".out.staging-*")) and not (tmp_path / "out").exists()


def test_19_a_score_in_other_digits_names_its_line(tmp_path):
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 \u0661 t\n")
    one_line(cli("eval", SMALL / "qrels.txt", tmp_path / "run"), 2, "run:2: score '\u0661' is not a number")


@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.integers(-10**6, 10**6).map(float), st.floats(min_value=1e-6, max_value=1e-3),
                          st.floats(min_value=1e8, max_value=1e17), st.floats(min_value=1e-4, max_value=1.0),
                          st.sampled_from([0.0, -0.0, 1.0, 99999.0, 1e5, 1e10, 1e16, 1e-4, 1e-5])),
                min_size=1, max_size=50))
def test_07_shortest_numbers_are_pythons_repr(values):
    reprs = [repr(float(v)) if math.isfinite(v) else "null" for v in values]
    assert shortest(np.array(values), "null").to_pylist() == reprs
    bare = [r[:-2] if r.endswith(".0") else r for r in reprs]
    assert shortest(np.array(values), "null", whole_dot=False).to_pylist() == bare
