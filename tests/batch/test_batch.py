"""`ndcg-report batch`: config validation, failure isolation, index, history, skipping, lock, SIGKILL."""

from __future__ import annotations

import fcntl
import hashlib
import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import yaml

from ndcg_report.batch.reports import failed_step, fingerprint
from ndcg_report.batch.config import load_config
from ndcg_report.errors import ParameterError
from ndcg_report.batch.history import append_history, history_file, read_history
from tests.helpers import InProcessBuilds, small_config, wait_for, working_folders

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OUTPUTS = ["figures", "leaderboard.md", "leaderboard.tex", "per_query.csv", "report.html", "report.ipynb", "summary.json",
           "unjudged.tsv"]
def outputs_of(name: str) -> list[str]:
    """The files of a report of the batch below: good-a was given topics, so it keeps their text (queries.json)."""
    return sorted(OUTPUTS + (["queries.json"] if name == "good-a" else []))


TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def batch_cli(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", "batch", *map(str, args)],
                          capture_output=True, text=True, check=False, cwd=cwd)


def write_config(path: Path, reports: list[dict], **top) -> Path:
    path.write_text(yaml.safe_dump({"output": "out", **top, "reports": reports}, sort_keys=False))
    return path


def copy_inputs(folder: Path) -> Path:
    """The small fixtures under folder/inputs, plus bad.txt: the run with one NaN score."""
    inputs = folder / "inputs"
    shutil.copytree(SMALL, inputs)
    lines = (inputs / "monot5.txt").read_text().splitlines()
    fields = lines[5].split()
    fields[4] = "nan"
    lines[5] = " ".join(fields)
    (inputs / "bad.txt").write_text("\n".join(lines) + "\n")
    return inputs


GOOD_A = {"name": "good-a", "run": "inputs/monot5.txt", "baseline": "inputs/bm25.txt", "qrels": "inputs/qrels.txt",
          "topics": "inputs/topics.txt", "run_name": "monoT5", "baseline_name": "BM25"}
GOOD_B = {"name": "good-b", "run": "inputs/bm25.txt", "baseline": "inputs/monot5.txt", "qrels": "inputs/qrels.txt",
          "k": "10,100", "gain": "exponential", "title": "swapped <b>&</b> systems"}
BAD = {"name": "bad-nan", "run": "inputs/bad.txt", "baseline": "inputs/bm25.txt", "qrels": "inputs/qrels.txt"}


def snapshot(out: Path) -> dict:
    return {
        "index": (out / "index.html").read_text(),
        "history": {name: read_history(out, name) for name in ("good-a", "good-b", "bad-nan")},
        "files": {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
                  and p.parent.name in ("good-a", "good-b")},
    }


@pytest.fixture(scope="module")
def first_batch(tmp_path_factory):
    """Three reports, one with a NaN score in its run, built at -j 2: (folder, result, snapshot)."""
    folder = tmp_path_factory.mktemp("batch")
    copy_inputs(folder)
    config = write_config(folder / "nightly.yml", [GOOD_A, GOOD_B, BAD], defaults={"k": [1, 5, 10, 100, "all"]})
    result = batch_cli(config, "-j", "2")
    return folder, result, snapshot(folder / "out")


@pytest.fixture(scope="module")
def second_batch(first_batch):
    """The same config again, nothing changed."""
    folder = first_batch[0]
    result = batch_cli(folder / "nightly.yml", "-j", "2")
    return folder, result, snapshot(folder / "out")


@pytest.fixture(scope="module")
def forced_batch(second_batch):
    """A one-report config on the same root, with --force."""
    folder = second_batch[0]
    config = write_config(folder / "one.yml", [GOOD_A], defaults={"k": [1, 5, 10, 100, "all"]})
    result = batch_cli(config, "--force")
    return folder, result, snapshot(folder / "out")


class _Page(html.parser.HTMLParser):
    """Rows of the index table as lists of cell texts, and every src/href."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.links += [value for key, value in attrs if key in ("src", "href") and value]
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join(" ".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def index_rows(page: str) -> dict[str, list[str]]:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return {row[0].split()[0]: row for row in parser.rows if row}


def test_one_bad_report_fails_alone_and_the_index_shows_it(first_batch):
    folder, result, snap = first_batch
    out = folder / "out"
    assert result.returncode == 1, result.stderr
    for name in ("good-a", "good-b"):
        assert sorted(p.name for p in (out / name).iterdir()) == outputs_of(name)
        comparisons = json.loads((out / name / "summary.json").read_text())["comparisons"]
        assert next(iter(comparisons.values()))["nDCG@10"]["n"] > 0
    assert not (out / "bad-nan").exists()
    assert not [p.name for p in out.iterdir() if ".staging" in p.name or p.name.endswith(".tmp")]
    lines = result.stderr.splitlines()
    assert all(re.match(TIME + " ", line) for line in lines), result.stderr
    assert any(re.search(r"start good-a \(1/3\): no earlier successful build$", line) for line in lines)
    assert any(re.search(r"done good-a in \d+\.\d s: nDCG@10 0\.\d{4} vs 0\.\d{4} \([+-]0\.\d{4}, Holm randomization "
                         r"p=0\.\d{4}\)$", line) for line in lines), result.stderr
    failed = [line for line in lines if " FAILED bad-nan in " in line]
    assert len(failed) == 1 and "step validate:" in failed[0] and "bad.txt:6:" in failed[0], result.stderr
    assert re.search(r"batch: 2 built, 0 skipped, 1 failed in \d+\.\d s; index .*out/index\.html$", lines[-1])
    assert "\r" not in result.stderr and "%|" not in result.stderr  # no progress bars
    rows = index_rows(snap["index"])
    assert set(rows) == {"good-a", "good-b", "bad-nan"}
    assert rows["bad-nan"][1].startswith("FAILED step validate:") and "bad.txt:6" in rows["bad-nan"][1]
    assert rows["bad-nan"][-1] == "–"  # no earlier good report to link to
    assert rows["good-a"][1].startswith("built in") and rows["good-a"][-1] == "report.html"
    summary = json.loads((out / "good-a" / "summary.json").read_text())["comparisons"]["monoT5"]["nDCG@10"]
    above = summary["holm_randomization_pvalue"] < 0.05 and summary["delta"] > 0  # 8 queries: it is not
    assert rows["good-a"][6] == ("yes" if above else "no")
    below = summary["holm_randomization_pvalue"] < 0.05 and summary["delta"] < 0
    assert rows["good-a"][7] == ("yes" if below else "no")
    assert rows["good-a"][2].startswith(f"{summary['run_mean']:.4f}")
    assert rows["good-a"][4].startswith(
        f"{summary['delta']:+.4f} 95% CI [{summary['ci_low']:+.4f}, {summary['ci_high']:+.4f}] largest loss: ")
    assert '<a href="good-a/report.html">' in snap["index"] and '<a href="bad-nan/report.html">' not in snap["index"]
    assert (out / ".history" / "bad-nan.log").read_text().count("bad.txt:6") == 1


def test_history_has_one_line_per_good_report_with_hashes_and_numbers(first_batch):
    folder, _, snap = first_batch
    history = snap["history"]
    assert len(history["good-a"]) == 1 and len(history["good-b"]) == 1 and history["bad-nan"] == []
    record = history["good-a"][0]
    summary = json.loads((folder / "out" / "good-a" / "summary.json").read_text())["comparisons"]["monoT5"]["nDCG@10"]
    assert record["run_name"] == "monoT5" and record["n_systems"] == 1
    above = summary["holm_randomization_pvalue"] < 0.05 and summary["delta"] > 0
    below = summary["holm_randomization_pvalue"] < 0.05 and summary["delta"] < 0
    assert record["n_above"] == int(above) and record["n_below"] == int(below)
    assert record["systems"] == [{"name": "monoT5", "significantly_above": above, **{
        key: summary[key] for key in ("run_mean", "delta", "ci_low", "ci_high", "randomization_pvalue",
                                      "holm_randomization_pvalue", "t_pvalue", "holm_t_pvalue", "wilcoxon_pvalue",
                                      "holm_wilcoxon_pvalue")}}]
    for key in ("run_mean", "baseline_mean", "delta", "ci_low", "ci_high", "randomization_pvalue",
                "holm_randomization_pvalue", "n"):
        assert record[key] == summary[key]
    assert re.fullmatch(TIME, record["time"]) and record["duration_s"] > 0 and record["measure"] == "nDCG@10"
    for role, name in (("run", "monot5.txt"), ("baseline", "bm25.txt"), ("qrels", "qrels.txt"), ("topics", "topics.txt")):
        assert record["files"][role]["sha256"] == hashlib.sha256((SMALL / name).read_bytes()).hexdigest()
    assert history["good-b"][0]["fingerprint"] != record["fingerprint"]
    # good-b is exponential gain with k = 10,100 and its own title
    assert json.loads((folder / "out" / "good-b" / "summary.json").read_text())["parameters"]["gain"] == "exponential"


def test_unchanged_rerun_skips_and_force_rebuilds(second_batch, forced_batch):
    _, result, snap = second_batch
    assert result.returncode == 1  # bad-nan is retried (its last attempt failed) and fails again
    for name in ("good-a", "good-b"):
        assert re.search(rf"{TIME} skip {name}: inputs unchanged since {TIME} \(use --force to rebuild\)", result.stderr)
        assert f"start {name}" not in result.stderr
        assert len(snap["history"][name]) == 1
    assert "start bad-nan (3/3): no earlier successful build" in result.stderr and "FAILED bad-nan" in result.stderr
    assert "batch: 0 built, 2 skipped, 1 failed" in result.stderr.splitlines()[-1]
    rows = index_rows(snap["index"])
    assert rows["good-a"][1].startswith("skipped inputs unchanged since")
    _, forced, forced_snap = forced_batch
    assert forced.returncode == 0, forced.stderr
    assert re.search(rf"start good-a \(1/1\): inputs unchanged since {TIME}, rebuilding \(--force\)$", forced.stderr,
                     re.M), forced.stderr
    assert " skip good-a" not in forced.stderr
    # a forced rebuild of unchanged inputs is built, but adds no point to the history
    assert len(forced_snap["history"]["good-a"]) == 1 and len(forced_snap["history"]["good-b"]) == 1
    assert forced_snap["history"]["good-a"] == snap["history"]["good-a"]
    assert set(index_rows(forced_snap["index"])) == {"good-a"}  # the index lists the reports of its config


def test_index_is_offline_escaped_and_embeds_the_history_plots(first_batch):
    page = first_batch[2]["index"]
    parser = _Page()
    parser.feed(page)
    assert not re.search(r"https?://", page)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert all(link.startswith(("data:image/png;base64,", "#"))
               or re.fullmatch(r"[\w.-]+/report\.html(#q-[\w%.-]+)?", link) for link in parser.links), parser.links
    assert any(re.fullmatch(r"good-a/report\.html#q-\w+", link) for link in parser.links)  # the largest loss
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2  # good-a and good-b have a history; bad-nan has none yet
    import base64

    assert all(base64.b64decode(image)[:8] == b"\x89PNG\r\n\x1a\n" for image in images)
    assert "swapped &lt;b&gt;&amp;&lt;/b&gt; systems" in page and "<b>&</b>" not in page


def test_sigkill_mid_build_leaves_published_reports_and_index_intact(first_batch, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(first_batch[0], folder)
    out = folder / "out"
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
              and p.parent.name in ("good-a", "good-b")}
    history_before = {name: history_file(out, name).read_bytes() for name in ("good-a", "good-b")}
    config = write_config(folder / "good.yml", [GOOD_A, GOOD_B], defaults={"k": [1, 5, 10, 100, "all"]})
    log = (tmp_path / "batch.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config), "--force"],
                               stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not list(out.glob(".good-a.staging-*")):
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "batch.log").read_text()
            time.sleep(0.05)
        # a second batch on the same root, at the same time: the first is held (SIGSTOP, its builds too) until
        # the second has been refused, since on a loaded machine the second's start can outlast the whole
        # batch; then the first is killed inside papermill, once a cell has run (its snapshot in the staging),
        # not after a fixed time (a build on a fast machine had published by then)
        os.killpg(process.pid, signal.SIGSTOP)
        try:
            second = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            second.wait(timeout=60)
        finally:
            os.killpg(process.pid, signal.SIGCONT)
        while not list(out.glob(".good-a.staging-*/**/cell-*.json")):
            assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "batch.log").read_text()
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        log.close()
    _, second_err = second.communicate(timeout=60)
    second = subprocess.CompletedProcess(second.args, second.returncode, "", second_err)
    assert second.returncode == 3
    assert second.stderr.count("\n") == 1
    assert f"another batch is running on {out} (pid {process.pid} on " in second.stderr
    assert "start good-a (1/2)" in (tmp_path / "batch.log").read_text()
    for name in ("good-a", "good-b"):  # every published report: all four files, readable, unchanged
        assert sorted(p.name for p in (out / name).iterdir()) == outputs_of(name)
        assert (out / name / "report.html").read_text().rstrip().endswith("</html>")
        json.loads((out / name / "summary.json").read_text())
        nbformat.read(out / name / "report.ipynb", as_version=4)
        assert len(pd.read_csv(out / name / "per_query.csv")) > 0
        assert history_file(out, name).read_bytes() == history_before[name]
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
            and p.parent.name in ("good-a", "good-b")} == before
    rows = index_rows((out / "index.html").read_text())
    assert set(rows) == {"good-a", "good-b"} and rows["good-b"][1].startswith("pending")
    assert rows["good-a"][-1] == "report.html"
    assert list(out.glob(".good-a.staging-*"))  # what the killed build left ...
    again = batch_cli(config)
    assert again.returncode == 0, again.stderr
    assert "removed .good-a.staging-" in again.stderr, (again.stderr, _processes(out))  # ... cleaned by the next batch
    assert "good-a: interrupted: the batch" in again.stderr  # the build it killed is retried, the other skipped
    assert "batch: 1 built, 1 skipped, 0 failed" in again.stderr
    assert history_file(out, "good-a").read_bytes() == history_before["good-a"]  # same inputs: no new point
    assert not [p for p in out.iterdir() if ".staging" in p.name or ".old" in p.name or p.name.endswith(".tmp")]


def test_sigterm_stops_the_builds_and_finishes_the_index(first_batch, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(first_batch[0], folder)
    out = folder / "out"
    before = (out / "good-a" / "report.html").read_bytes()
    config = write_config(folder / "a.yml", [GOOD_A], defaults={"k": [1, 5, 10, 100, "all"]})
    process = subprocess.Popen([sys.executable, "-m", "ndcg_report.cli", "batch", str(config), "--force"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not list(out.glob(".good-a.staging-*")):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)  # the batch alone, as `kill PID` or a CI cancel would
        _, stderr = process.communicate(timeout=60)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # what the stopped build may have left running
        except ProcessLookupError:
            pass
    assert process.returncode == 143  # 128 + SIGTERM, as a shell reports it; one line after the signal
    assert "FAILED" not in stderr and re.search(r" start good-a \(1/1\).*\n.* batch: interrupted by SIGTERM after "
                                                r"\d+\.\d s: 0 built, 0 skipped, 0 failed, 1 stopped, 0 not started; "
                                                r"index .*index.html\n$", stderr), stderr
    assert (out / "good-a" / "report.html").read_bytes() == before
    assert index_rows((out / "index.html").read_text())["good-a"][1].startswith(
        "interrupted the batch was stopped by signal 15")


def _processes(out: Path) -> list[str]:
    """Diagnostics: the state of the processes named by leftover staging folders."""
    states = []
    for folder in out.glob(".*.staging-*"):
        pid = folder.name.split("staging-")[1].split("-")[0]
        stat = Path(f"/proc/{pid}/stat")
        states.append(f"{folder.name}: {stat.read_text()[:80] if stat.exists() else 'gone'}")
    return states


def test_lock_held_by_another_batch_exits_3_with_one_line(tmp_path):
    config = write_config(tmp_path / "lock.yml", [{**BAD, "run": "inputs/missing.txt"}])
    (tmp_path / "out").mkdir()
    with open(tmp_path / "out" / ".batch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(json.dumps({"pid": 4242, "host": "nightly-box", "started": "2026-11-23T01:00:00Z",
                               "config": "other.yml"}))
        lock.flush()
        result = batch_cli(config)
    assert result.returncode == 3
    assert result.stderr == (
        f"ndcg-report: error: another batch is running on {tmp_path / 'out'} (pid 4242 on nightly-box, started "
        f"2026-11-23T01:00:00Z, config other.yml); this one stops without building (lock {tmp_path / 'out'}/.batch.lock)\n"
    )
    assert not (tmp_path / "out" / "index.html").exists()
    released = batch_cli(config)  # the lock is free again: the batch runs (and its one report fails)
    assert released.returncode == 1
    assert re.search(r"FAILED bad-nan in \d+\.\d s: step validate: .*inputs/missing\.txt: no such file or folder; "
                     r"check the run path$", released.stderr.splitlines()[-2])
    assert "FAILED" in index_rows((tmp_path / "out" / "index.html").read_text())["bad-nan"][1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gain": "expo"}, "nightly.yml: report 'msmarco-dev': key 'gain': 'expo' is not one of linear, exponential"),
        ({"gian": "linear"}, "nightly.yml: report 'msmarco-dev': unknown key 'gian' (did you mean 'gain'?)"),
        ({"k": "0,10"}, "nightly.yml: report 'msmarco-dev': key 'k': cut-off '0' must be a whole number >= 1 or 'all'"),
        ({"seed": -1}, "nightly.yml: report 'msmarco-dev': key 'seed': -1 must be a whole number >= 0"),
        ({"corpus": "c.jsonl"}, "nightly.yml: report 'msmarco-dev': give exactly one of 'baseline' (a run) and 'corpus'"),
        ({"baseline": None, "corpus": "c.jsonl", "topics": None},
         "nightly.yml: report 'msmarco-dev': key 'topics' is required with 'corpus'"),
        ({"k1": 1.2}, "nightly.yml: report 'msmarco-dev': key 'k1' applies only to a BM25 baseline built from a 'corpus'"),
        ({"run": None}, "nightly.yml: report 'msmarco-dev': give exactly one of 'run' (one run) and 'runs'"),
        ({"runs": ["a.txt"]}, "nightly.yml: report 'msmarco-dev': give exactly one of 'run' (one run) and 'runs'"),
        ({"run": None, "runs": []}, "nightly.yml: report 'msmarco-dev': key 'runs': give a non-empty list"),
        ({"run": None, "runs": "a.txt"}, "nightly.yml: report 'msmarco-dev': key 'runs': give a non-empty list"),
        ({"run": None, "runs": [{"nme": "x", "path": "a"}]},
         "nightly.yml: report 'msmarco-dev': key 'runs' item 1: unknown key 'nme' (known keys: name, path)"),
        ({"run": None, "runs": [{"name": "x"}]}, "nightly.yml: report 'msmarco-dev': key 'runs' item 1: key 'path' is required"),
        ({"run": None, "runs": [{"name": "x", "path": "a"}, {"name": "X", "path": "b"}]},
         "nightly.yml: report 'msmarco-dev': key 'runs' item 2: the name 'X' is already used by item 1"),
        ({"run": None, "runs": ["a.txt", {"path": "./a.txt"}]},
         "nightly.yml: report 'msmarco-dev': key 'runs' item 2:"),
        ({"run": None, "runs": ["a.txt"], "run_name": "x"}, "nightly.yml: report 'msmarco-dev': key 'run_name' names a single"),
        ({"run": None, "runs": [{"name": "k=10", "path": "a"}]},
         "nightly.yml: report 'msmarco-dev': key 'runs' item 1: the system name 'k=10' holds one of = / \\"),
        ({"run": None, "runs": [{"name": "RM3 / v2", "path": "a"}]},
         "nightly.yml: report 'msmarco-dev': key 'runs' item 1: the system name 'RM3 / v2' holds one of"),
        ({"run": None, "runs": [5]}, "nightly.yml: report 'msmarco-dev': key 'runs' item 1: 5 must be a path"),
        ({"run_name": "a=b"}, "nightly.yml: report 'msmarco-dev': key 'run_name': the system name 'a=b' holds"),
        ({"run": None, "runs": [{"name": "BM25", "path": "a"}], "baseline_name": "bm25"},
         "nightly.yml: report 'msmarco-dev': key 'baseline_name': 'bm25' is also a run's name"),
        ({"run": ""}, "nightly.yml: report 'msmarco-dev': key 'run': '' must be a path"),
        ({"name": "../up"}, "nightly.yml: report #1: key 'name': '../up' is not a safe folder name"),
        ({"timeout": 0}, "nightly.yml: report 'msmarco-dev': key 'timeout': 0 must be a whole number of seconds from 1"),
        ({"timeout": 2147484}, "nightly.yml: report 'msmarco-dev': key 'timeout': 2147484 must be a whole number of"),
        ({"k": 18446744073709551616},
         "nightly.yml: report 'msmarco-dev': key 'k': cut-off '18446744073709551616' is larger than 1,000,000,000"),
    ],
)
def test_config_errors_name_the_report_and_the_key(tmp_path, monkeypatch, change, message):
    report = {"name": "msmarco-dev", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt", "topics": "t.txt"}
    report.update(change)
    report = {key: value for key, value in report.items() if value is not None}
    write_config(tmp_path / "nightly.yml", [report])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError) as error:
        load_config("nightly.yml")
    assert str(error.value).startswith(message), str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reports: []\n", "nightly.yml: key 'output' is required"),
        ("output: out\nreports: []\n", "nightly.yml: key 'reports' must be a non-empty list"),
        ("output: out\ndefaults: {missing: maybe}\nreports: [{name: a}]\n",
         "nightly.yml: defaults: key 'missing': 'maybe' is not one of zero, skip"),
        ("output: out\nouput: x\n", "nightly.yml: unknown key 'ouput' (did you mean 'output'?)"),
        ("output: out\nreports:\n  - name: a\n    name: b\n", "nightly.yml: not valid YAML: line 4: key 'name' appears twice"),
        ("output: [out\n", "nightly.yml: not valid YAML: line 2:"),
        ("output: out\nreports:\n  - {name: a, run: r, baseline: b, qrels: q}\n  - {name: A, run: r, baseline: b, qrels: q}\n",
         "nightly.yml: report 'A': key 'name': 'A' is already used by report 'a'"),
    ],
)
def test_config_file_level_errors(tmp_path, monkeypatch, text, message):
    (tmp_path / "nightly.yml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParameterError) as error:
        load_config("nightly.yml")
    assert str(error.value).startswith(message), str(error.value)


def test_config_error_exits_2_with_one_line_before_building(tmp_path):
    write_config(tmp_path / "nightly.yml", [{**GOOD_A, "gain": "expo"}])
    result = batch_cli("nightly.yml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ("ndcg-report: error: nightly.yml: report 'good-a': key 'gain': 'expo' is not one of "
                             "linear, exponential\n")
    assert not (tmp_path / "out").exists()
    assert batch_cli("nightly.yml", "-j", "0", cwd=tmp_path).returncode == 2


def test_paths_are_relative_to_the_config_and_package_paths_resolve(tmp_path):
    (tmp_path / "conf").mkdir()
    config = write_config(tmp_path / "conf" / "c.yml", [
        {"name": "x", "run": "../inputs/run.txt", "qrels": "package:cranfield/qrels.txt",
         "corpus": "package:cranfield/corpus.jsonl", "topics": "package:cranfield/topics.tsv", "k1": 1.2},
    ], output="../reports", cache_dir="cache", defaults={"k": 10, "b": 0.75})
    loaded = load_config(config)
    assert loaded.output == tmp_path / "reports" and loaded.cache_dir == tmp_path / "conf" / "cache"
    report = loaded.reports[0]
    assert report.path("run") == tmp_path / "inputs" / "run.txt" and report.path("baseline") is None
    assert report.path("corpus").is_file() and report.path("corpus").name == "corpus.jsonl"
    assert (report.options.cutoffs, report.options.k1, report.options.b, report.options.title) == ("10", 1.2, 0.75, "x")


def test_a_default_run_name_names_one_run_reports_only(tmp_path):
    one = {"name": "one", "run": "r.txt", "baseline": "b.txt", "qrels": "q.txt"}
    many = {"name": "many", "runs": ["r.txt", "s.txt"], "baseline": "b.txt", "qrels": "q.txt"}
    config = load_config(write_config(tmp_path / "c.yml", [one, many], defaults={"run_name": "X"}))
    assert [report.options.run_name for report in config.reports] == ["X", ""]


def test_example_config_is_valid_and_its_inputs_exist():
    config = load_config(EXAMPLES / "nightly.yml")
    assert [r.name for r in config.reports] == ["dl19-rerankers", "cranfield-rm3"]
    assert [run.name for run in config.reports[0].runs] == ["monoT5", "RRF BM25+monoT5", "Interpolation BM25+monoT5",
                                                              "monoT5 top 20 + BM25"]
    for report in config.reports:
        assert all(item.path.is_file() for item in report.inputs)
    assert config.reports[1].uses_corpus and not config.reports[0].uses_corpus


def test_a_report_of_several_runs_keeps_every_system_in_history_and_index(tmp_path):
    inputs = copy_inputs(tmp_path)
    lines = [line.split() for line in (inputs / "monot5.txt").read_text().splitlines()]
    (inputs / "reversed.txt").write_text("".join(f"{q} Q0 {d} {r} {-float(s)!r} reversed\n" for q, _, d, r, s, _ in lines))
    runs = ["inputs/monot5.txt", {"name": "upside down", "path": "inputs/reversed.txt"}]
    config = write_config(tmp_path / "c.yml", [{**GOOD_A, "name": "many", "runs": runs, "run": None, "run_name": None}])
    text = (tmp_path / "c.yml").read_text().replace("  run: null\n", "").replace("  run_name: null\n", "")
    config.write_text(text)
    result = batch_cli(config)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "out" / "many" / "summary.json").read_text())
    at10 = {name: rows["nDCG@10"] for name, rows in summary["comparisons"].items()}
    above = sum(row["holm_randomization_pvalue"] < 0.05 and row["delta"] > 0 for row in at10.values())
    assert at10["monot5"]["run_mean"] > at10["upside down"]["run_mean"]  # a run without a name: its file name
    assert re.search(rf"done many in .*; best of 2: monot5; {above} of 2 significantly above the baseline$",
                     result.stderr, re.M), result.stderr
    assert [s["name"] for s in summary["systems"]] == ["monot5", "upside down", "BM25"]
    (record,) = read_history(tmp_path / "out", "many")
    assert [s["name"] for s in record["systems"]] == ["monot5", "upside down"]
    for system in record["systems"]:
        assert system["run_mean"] == summary["comparisons"][system["name"]]["nDCG@10"]["run_mean"]
    assert record["run_name"] == "monot5" and record["n_above"] == above and record["n_systems"] == 2
    assert set(record["files"]) == {"run 1", "run 2", "baseline", "qrels", "topics"}
    row = index_rows((tmp_path / "out" / "index.html").read_text())["many"]
    assert row[2].startswith(f"{record['run_mean']:.4f}") and "monot5" in row[2] and row[6] == f"{above} of 2"


def test_index_draws_histories_that_mix_one_run_and_many_run_records():
    from ndcg_report.batch.history_figure import system_mean
    from ndcg_report.batch.index_page import ReportState, render_index

    old = {"time": "2026-11-20T02:30:00Z", "k": "10", "run_mean": 0.6, "baseline_mean": 0.5, "delta": 0.1,
           "ci_low": 0.05, "ci_high": 0.15, "holm_randomization_pvalue": 0.01, "run_name": "A", "baseline_name": "B"}
    new = {**old, "time": "2026-11-21T02:30:00Z", "run_mean": 0.7, "run_name": "C", "n_systems": 2, "n_above": 1,
           "systems": [{"name": "A", "run_mean": 0.62, "delta": 0.12, "ci_low": 0.1, "ci_high": 0.2,
                        "holm_randomization_pvalue": 0.2},
                       {"name": "C", "run_mean": 0.7, "delta": 0.2, "ci_low": 0.1, "ci_high": 0.3,
                        "holm_randomization_pvalue": 0.001}]}
    assert system_mean(old, "A") == 0.6 and system_mean(new, "A") == 0.62 and np.isnan(system_mean(new, "Z"))
    page = render_index([ReportState(name="r", title="r", status="built", history=(old, new), has_report=True)],
                        heading="h", batch_line="b")
    row = index_rows(page)["r"]
    assert row[2].startswith("0.7000") and "C" in row[2] and row[6] == "1 of 2" and row[7] == "0 of 2"
    assert row[9] == "+0.0200 A (of 2)"  # each system against itself: C was not in the previous build, A rose, B stayed
    assert page.count("data:image/png;base64,") == 1


@pytest.mark.parametrize(("value", "text"), [
    (None, "–"), (float("nan"), "–"), (np.float64("nan"), "–"), ("0.01", "–"), (True, "–"),  # no number
    (0, "<0.0001"), (5e-5, "<0.0001"), (-np.inf, "<0.0001"), (1e-4, "0.0001"), (0.00012345, "0.0001"),
    (0.0123, "0.0123"), (0.99995, "1.0000"), (1, "1.0000"), (np.float64(0.03), "0.0300"), (np.float32(0.5), "0.5000"),
])
def test_a_p_value_reads_the_same_in_the_report_and_the_batch_index_and_log(value, text):
    from ndcg_report.analysis.text import format_p
    from ndcg_report.batch.index_page import ReportState, render_index
    from ndcg_report.batch.reports import test_text

    assert format_p(value) == text
    if isinstance(value, np.floating):
        return  # a report's tables hold numpy numbers; the index and the log read JSON
    record = {"time": "2026-11-21T02:30:00Z", "measure": "nDCG@10", "run_mean": 0.5, "baseline_mean": 0.5,
              "delta": 0.0, "ci_low": -0.1, "ci_high": 0.1, "holm_randomization_pvalue": value, "run_name": "A",
              "baseline_name": "B"}
    page = render_index([ReportState(name="r", title="r", status="built", history=(record,), has_report=True)],
                        heading="h", batch_line="b")
    assert index_rows(page)["r"][5] == text
    assert test_text(record) == f"Holm randomization p={text}"


def test_a_p_value_at_the_randomization_floor_reads_as_at_most_in_the_index_and_log():
    """18 systems x 2 / 10,001 flips: the smallest Holm p the test gives is 0.0036, printed '≤0.0036'."""
    from ndcg_report.batch.index_page import ReportState, render_index
    from ndcg_report.batch.reports import headline, test_text

    floor = 18 * 2 / 10_001
    row = {"n": 43, "run_mean": 0.7, "baseline_mean": 0.5, "delta": 0.2, "ci_low": 0.1, "ci_high": 0.3,
           "holm_randomization_pvalue": floor, "randomization_method": "monte carlo"}
    summary = {"parameters": {"headline": "nDCG@10", "alpha": 0.05, "n_resamples": 10_000}, "baseline": "BM25",
               "comparison_family": {"size": 18}, "comparisons": {f"s{i}": {"nDCG@10": row} for i in range(18)}}
    record = {**headline(summary), "time": "2026-11-21T02:30:00Z"}
    assert record["p_floor"] == pytest.approx(floor) and test_text(record) == "Holm randomization p=≤0.0036"
    page = render_index([ReportState(name="r", title="r", status="built", history=(record,), has_report=True)],
                        heading="h", batch_line="b")
    assert index_rows(page)["r"][5].startswith("≤0.0036")
    above = {**row, "holm_randomization_pvalue": 0.0072}  # twice the floor: a value
    summary["comparisons"] = {f"s{i}": {"nDCG@10": above} for i in range(18)}
    assert test_text(headline(summary)) == "Holm randomization p=0.0072"
    summary["more_baselines"] = {"s0": {}}  # another baseline is not one of the index's systems
    assert headline(summary)["n_systems"] == 17


def test_index_marks_a_significant_loss_apart_from_a_win_and_counts_the_systems_below():
    """A significant loss is not bold with * like a win, and the systems below are counted as well as those above."""
    from ndcg_report.batch.index_page import ReportState, render_index

    def record(delta, p, **more):
        return {"time": "2026-11-21T02:30:00Z", "measure": "nDCG@10", "run_mean": 0.5 + delta, "baseline_mean": 0.5,
                "delta": delta, "ci_low": delta - 0.05, "ci_high": delta + 0.05, "holm_randomization_pvalue": p,
                "run_name": "A", "baseline_name": "B", **more}

    systems = [{"name": "A", "run_mean": 0.4, "delta": -0.1, "holm_randomization_pvalue": 0.001},
               {"name": "C", "run_mean": 0.3, "delta": -0.2, "holm_randomization_pvalue": 0.0001}]
    states = [ReportState(name=name, title=name, status="built", history=(history,), has_report=True) for name, history in (
        ("win", record(0.1, 0.001)), ("loss", record(-0.1, 0.001)), ("plain", record(-0.1, 0.3)),
        ("many", record(-0.1, 0.001, n_systems=2, n_above=0, n_below=2, systems=systems)),
        ("older", record(-0.1, 0.001, n_systems=2, n_above=0, systems=systems)))]  # written before n_below
    page = render_index(states, heading="h", batch_line="b")
    rows = index_rows(page)
    assert '<td class="num sig up">0.0010 ▲</td>' in page and '<td class="num sig down">0.0010 ▼</td>' in page
    assert rows["win"][5] == "0.0010 ▲" and rows["loss"][5] == "0.0010 ▼" and rows["plain"][5] == "0.3000"
    assert "*" not in rows["win"][5] + rows["loss"][5]
    assert [rows[name][6:8] for name in ("win", "loss", "plain", "many", "older")] == [
        ["yes", "no"], ["no", "yes"], ["no", "no"], ["0 of 2", "2 of 2"], ["0 of 2", "2 of 2"]]
    assert "<th>above baseline</th><th>below baseline</th>" in page
    assert '<span class="sig up">▲</span> the system is significantly above' in page
    assert '<span class="sig down">▼</span> significantly below it' in page
    # the interval's level and why: unadjusted, beside the report's family-adjusted verdict
    assert rows["many"][4].startswith("-0.1000 95% CI [-0.1500, -0.0500], unadjusted")
    assert rows["loss"][4].startswith("-0.1000 95% CI [-0.1500, -0.0500]") and "unadjusted" not in rows["loss"][4]
    assert "95% bootstrap CI of that one comparison (unadjusted" in " ".join(page.split())


def test_fingerprint_covers_bytes_and_options_but_not_unused_bm25_options(tmp_path):
    copy_inputs(tmp_path)
    config = write_config(tmp_path / "c.yml", [GOOD_A, {**GOOD_A, "name": "seeded", "seed": 7}])
    first, seeded = (fingerprint(r)[0] for r in load_config(config).reports)
    assert first != seeded
    write_config(tmp_path / "c.yml", [GOOD_A], defaults={"k1": 2.0})  # a default that baseline reports ignore
    assert fingerprint(load_config(config).reports[0])[0] == first
    with open(tmp_path / "inputs" / "qrels.txt", "a") as qrels:
        qrels.write("\n")
    assert fingerprint(load_config(config).reports[0])[0] != first


def test_history_skips_a_torn_line(tmp_path):
    append_history(tmp_path, "r", {"time": "2026-11-25T00:00:00Z", "run_mean": 0.5})
    with open(history_file(tmp_path, "r"), "ab") as stream:
        stream.write(b'{"time": "2026-11-26T00:00:00Z", "run_me')  # a write cut by a crash
    assert read_history(tmp_path, "r") == [{"time": "2026-11-25T00:00:00Z", "run_mean": 0.5}]


@pytest.mark.parametrize("exchange", [True, False])
def test_publish_swaps_folders_and_never_leaves_out_dir_missing(tmp_path, monkeypatch, exchange):
    from ndcg_report.build import publish

    if not exchange:
        real_rename = publish._rename
        monkeypatch.setattr(publish, "_rename", lambda source, target, flags: False if flags == publish._RENAME_EXCHANGE
                            else real_rename(source, target, flags))
    out, staging = tmp_path / "out", tmp_path / ".out.staging-1-abcdef01"
    out.mkdir()
    (out / "report.html").write_text("old")
    (out / "summary.json").write_text('{"schema_version": 2, "ndcg_report_version": "0.1.0"}')
    staging.mkdir()
    (staging / "report.html").write_text("new")
    assert publish.publish(staging, out) == []
    assert (out / "report.html").read_text() == "new" and sorted(os.listdir(out)) == ["report.html"]
    assert not staging.exists()  # the old report's own files removed, and its folder
    assert not list(tmp_path.glob(".out.old-*"))


def test_failure_step_comes_from_the_exit_code_and_the_last_line():
    assert failed_step(2, "bm25: ...\nndcg-report: error: r.txt:3: score 'nan' is not finite; fix\n", 0) == (
        "validate", "r.txt:3: score 'nan' is not finite; fix")
    assert failed_step(1, "ndcg-report: error: step nbval failed in Cell 3: outputs differ\n", 0) == (
        "nbval", "in Cell 3: outputs differ")
    assert failed_step(1, "ndcg-report: error: step papermill failed: cell 4 (`x`): KeyError: 'a'\n", 0) == (
        "papermill", "cell 4 (`x`): KeyError: 'a'")
    assert failed_step(-11, "", 0) == ("crash", "the build process was killed by SIGSEGV (no error output)")
    assert failed_step(-15, "", signal.SIGTERM)[0] == "interrupted"


def test_the_start_line_says_why_a_report_is_built():
    from ndcg_report.batch.reports import build_reason

    files = {"run": {"sha256": "new"}, "qrels": {"sha256": "q"}}
    good = {"time": "T", "fingerprint": "f", "version": "0.1.0", "files": {"run": {"sha256": "old"}, "qrels": {"sha256": "q"}}}
    assert build_reason(None, {}, "f", files, False) == "no earlier successful build"
    assert build_reason(good, {}, "g", files, False) == "run changed since T"
    assert build_reason(good, {}, "f", files, True) == "inputs unchanged since T, rebuilding (--force)"
    assert build_reason(good, {"status": "failed", "step": "nbval"}, "f", files, False) == (
        "retrying: the last attempt failed at step nbval")


def test_unusable_output_root_and_odd_yaml_keys_are_one_line_errors(tmp_path):
    (tmp_path / "rootfile").write_text("x")
    config = tmp_path / "c.yml"
    config.write_text("output: rootfile\nreports:\n  - name: a\n    run: r\n    qrels: q\n    baseline: b\n")
    result = batch_cli(config)
    assert result.returncode == 2 and "output root" in result.stderr and "Traceback" not in result.stderr
    config.write_text("? [a, b]\n: 1\n")
    result = batch_cli(config)
    assert result.returncode == 2 and "a mapping key must be a plain name" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_values_take_every_input_format_with_the_same_checks(tmp_path):
    """A batch reads runs, qrels and topics in any format, with the readers' checks (here
    each report fails at validation, before any kernel, naming the file and line)."""
    copy_inputs(tmp_path)
    inputs = tmp_path / "inputs"
    (inputs / "run.jsonl").write_text('{"qid": "1037798", "retrieved": ["8760866"]}\n{"qid": "q2", "retrieved": "x"}\n')
    (inputs / "qrels.json").write_text('{"1037798": {"8760866": null}}')
    (inputs / "queries.jsonl").write_text('{"_id": "1037798"}\n')
    config = write_config(tmp_path / "formats.yml", [
        {**BAD, "name": "jsonl-run", "run": "inputs/run.jsonl"},
        {**BAD, "name": "json-qrels", "run": "inputs/monot5.txt", "qrels": "inputs/qrels.json"},
        {**BAD, "name": "beir-topics", "run": "inputs/monot5.txt", "topics": "inputs/queries.jsonl"},
    ])
    result = batch_cli(config)
    assert result.returncode == 1
    failures = "\n".join(line for line in result.stderr.splitlines() if "FAILED" in line)
    assert "run.jsonl:2: 'retrieved' is a string, where a list belongs" in failures
    assert "qrels.json:1: query '1037798', document '8760866': relevance label is null, not a number" in failures
    assert "queries.jsonl:1: no `text`" in failures


def test_ctrl_c_on_a_batch_is_one_line_and_exit_130(tmp_path, capsys, monkeypatch):
    from ndcg_report.batch.builds import BuildRun
    from ndcg_report.batch.runner import main as batch_main

    class StoppedBuilds(InProcessBuilds):
        def run(self, job):
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the build runs: the batch stops it
            wait_for(lambda: self.stopping, 5)
            return BuildRun(-signal.SIGTERM, "", "")

    from ndcg_report.batch import runner

    original = runner.run_batch
    monkeypatch.setattr(runner, "run_batch", lambda *args, **kwargs: original(*args, **{**kwargs, "builds": StoppedBuilds()}))
    capsys.readouterr()
    code = batch_main(str(small_config(tmp_path)))
    err = capsys.readouterr().err.splitlines()
    assert code == 130
    after = err[[i for i, line in enumerate(err) if " start r1 " in line][0] + 1:]
    assert len(after) == 1 and "batch: interrupted by SIGINT after" in after[0], err
    assert "0 built, 0 skipped, 0 failed, 1 stopped, 0 not started" in after[0]



CRASHING_BUILD = """
import os, signal, sys
from pathlib import Path
from ndcg_report.working_folders import new_owned_folder

out = Path(sys.argv[1])
new_owned_folder(out.parent, f".{out.name}.staging")
os.kill(os.getpid(), signal.SIGKILL)  # killed mid-build (out of memory): no clean-up of its own
"""

def test_a_batch_removes_the_staging_of_a_build_it_saw_crash_and_only_that(tmp_path, monkeypatch):
    from ndcg_report.batch import runner
    from ndcg_report.batch.config import load_config
    from ndcg_report.working_folders import new_owned_folder

    monkeypatch.setattr(runner, "build_argv", lambda report, out, cache_dir: [sys.executable, "-c", CRASHING_BUILD,
                                                                                  str(out)])
    (tmp_path / "out").mkdir()
    other = new_owned_folder(tmp_path / "out", ".r1.staging")  # this process's, alive: never the batch's to remove
    lines: list[str] = []
    result = runner.run_batch(load_config(small_config(tmp_path)), log=lines.append)
    assert [(o.status, o.step) for o in result.outcomes] == [("failed", "crash")]
    assert working_folders(tmp_path / "out") == [other.name]
    assert [line for line in lines if line.startswith("removed .r1.staging-")], lines
