"""A batch that gates: nights of real builds end to end (exit 4, gate.json, JUnit, Markdown, the index's gate column
and history mark), a slow drift caught against a pinned build, a failed build before a regression, bad gate keys."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from junitparser import JUnitXml

from ndcg_report.batch.history import read_history
from ndcg_report.batch.runner import run_batch
from tests.batch.test_batch import index_rows
from tests.helpers import SMALL, one_line

REPORT = {"name": "rankers", "run": "tonight.txt", "run_name": "monoT5", "baseline": "bm25.txt", "qrels": "qrels.txt",
          "topics": "topics.txt", "k": 10, "gate": {}}


def batch_cli(folder: Path, *args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ndcg_report.cli", "batch", "c.yml", *map(str, args)], cwd=folder,
                          capture_output=True, text=True, check=False, env={**os.environ, **env}, timeout=600)


def write_config(folder: Path, reports: list[dict], **top) -> Path:
    path = folder / "c.yml"
    path.write_text(yaml.safe_dump({"output": "out", **top, "reports": reports}, sort_keys=False))
    return path


def degraded(lines: list[str]) -> str:
    """The run with every query's top 10 pushed below its rank 90 (scores lowered): nDCG@10 falls on every query.
    (The small set has 8 queries: a drop on half of them could not be significant, p >= 1/16.)"""
    out = []
    for line in lines:
        qid, q0, docid, rank, score, tag = line.split()
        out.append(" ".join([qid, q0, docid, rank, str(float(score) - 1e6) if int(rank) < 10 else score, tag]))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """Four nights of one gated report, real builds: the run, the run degraded on every query, the run again,
    nothing changed. Each night's (result, gate.json, index.html, junit, markdown, the step summary)."""
    folder = tmp_path_factory.mktemp("nights")
    for path in SMALL.iterdir():
        shutil.copy(path, folder / path.name)
    good = (SMALL / "monot5.txt").read_text()
    write_config(folder, [REPORT])
    found = []
    for night, run in enumerate([good, degraded(good.splitlines()), good, good], start=1):
        (folder / "tonight.txt").write_text(run)
        summary = folder / f"step-summary-{night}.md"
        result = batch_cli(folder, "--junit", f"gate-{night}.xml", "--markdown", f"gate-{night}.md",
                           GITHUB_STEP_SUMMARY=str(summary))
        out = folder / "out"
        found.append({"result": result, "gate": json.loads((out / "gate.json").read_text()),
                      "index": (out / "index.html").read_text(), "junit": folder / f"gate-{night}.xml",
                      "markdown": (folder / f"gate-{night}.md").read_text(), "summary": summary.read_text(),
                      "report": (out / "rankers" / "report.html").read_text(),
                      "report_gate": json.loads((out / "rankers" / "gate.json").read_text())
                      if (out / "rankers" / "gate.json").is_file() else None})
        if night == 1:
            shutil.copytree(out / "rankers", folder / "night-1")  # the fabricated builds below start from it
    return folder, found


def statuses(record: dict, report: str = "rankers") -> dict[str, str]:
    return {result["system"]: result["status"] for result in record["reports"][report]["results"]}


def test_a_run_degraded_on_every_query_fails_the_night_with_exit_4_in_every_output(nights):
    folder, found = nights
    night = found[1]
    assert night["result"].returncode == 4, night["result"].stderr
    assert night["gate"]["status"] == "regression" and night["gate"]["failed"] == ["rankers"]
    assert statuses(night["gate"]) == {"monoT5": "regression", "bm25": "unchanged"}
    worse = night["gate"]["reports"]["rankers"]["results"][0]
    assert worse["delta"] < -0.1 and worse["p_holm"] < 0.05 and worse["before"] == pytest.approx(0.6003466215491087)
    assert night["gate"]["reports"]["rankers"]["before"] == str(folder / "out" / ".history" / "rankers.last")
    suite = next(iter(JUnitXml.fromfile(str(night["junit"]))))
    assert (suite.name, suite.tests, suite.failures, suite.skipped) == ("rankers", 2, 1, 0)
    assert "| **regression** | monoT5 | nDCG@10 |" in night["markdown"]
    assert night["summary"] == night["markdown"] + "\n"  # appended to $GITHUB_STEP_SUMMARY, as gate does
    done = [line for line in night["result"].stderr.splitlines() if " done rankers " in line]
    assert len(done) == 1 and f"; gate against the last build: regression: monoT5 nDCG@10 {worse['delta']:+.4f}, " \
                               f"Holm p {worse['p_holm']:.4f}" in done[0]
    cell = index_rows(night["index"])["rankers"][2]
    assert cell == f"regression monoT5 nDCG@10 {worse['delta']:+.4f}, p (Holm) {worse['p_holm']:.4f}; against the " \
                   "last build"
    assert "<th>gate</th>" in night["index"]
    # the report built tonight says it too: built --against the kept build, its section and gate.json
    assert '<h2 id="since-last-build">Since the last build</h2>' in night["report"] and "▼ regression" in night["report"]
    assert night["report_gate"]["results"] == night["gate"]["reports"]["rankers"]["results"]
    assert "Since the last build" not in found[0]["report"]  # the first build: nothing to gate against
    assert "A regression is marked on the report's history figure" in " ".join(night["index"].split())
    history = read_history(folder / "out", "rankers")
    assert [record["gate"]["status"] for record in history] == ["new", "regression", "improved"]
    restored = found[2]["gate"]["reports"]["rankers"]["results"][0]  # an improvement shows the mirror test's p
    assert history[2]["gate"]["p_holm"] == restored["p_better_holm"] < 0.05


def test_the_history_figure_marks_a_regression_build_with_its_own_legend_entry(nights):
    from ndcg_report.batch.history_figure import history_figure

    folder, _ = nights
    history = tuple(read_history(folder / "out", "rankers"))
    labels = [text.get_text() for text in history_figure(history).axes[0].get_legend().get_texts()]
    assert labels[-1] == "gate: regression"
    plain = tuple({key: value for key, value in record.items() if key != "gate"} for record in history)
    assert "gate: regression" not in [t.get_text() for t in history_figure(plain).axes[0].get_legend().get_texts()]


def test_a_first_build_is_new_a_restored_run_improves_and_an_unchanged_night_is_untested(nights):
    _, found = nights
    first, restored, unchanged = found[0], found[2], found[3]
    assert first["result"].returncode == 0 and statuses(first["gate"]) == {"monoT5": "new", "bm25": "new"}
    assert {r["reason"] for r in first["gate"]["reports"]["rankers"]["results"]} == {
        "the first build: no earlier build to gate against"}
    assert restored["result"].returncode == 0, restored["result"].stderr
    assert statuses(restored["gate"])["monoT5"] in ("improved", "pass") and restored["gate"]["failed"] == []
    assert unchanged["result"].returncode == 0 and " skip rankers: " in unchanged["result"].stderr
    assert statuses(unchanged["gate"]) == {"monoT5": "unchanged", "bm25": "unchanged"}
    assert all(r["p"] is None for r in unchanged["gate"]["reports"]["rankers"]["results"])
    suite = next(iter(JUnitXml.fromfile(str(unchanged["junit"]))))
    assert (suite.tests, suite.failures, suite.skipped) == (2, 0, 0)
    # the change column: monoT5 against itself, the night it fell and the night it came back
    fell = found[1]["gate"]["reports"]["rankers"]["results"][0]["delta"]
    assert index_rows(found[1]["index"])["rankers"][10] == f"{fell:+.4f} monoT5 (of 2)"
    assert index_rows(restored["index"])["rankers"][10].startswith("+")


class KeptBuilds:
    """Builds that copy a real build of the small set and lower monoT5's nDCG@10 on the queries a run's bytes name
    (FakeRuns), as if the notebook had scored it so; a run named to fail fails at step papermill."""

    stopping = 0
    description = ""

    def __init__(self, template: Path, runs: dict[str, tuple[str, ...] | None]) -> None:
        self.template, self.runs = template, runs

    def run(self, job):
        from ndcg_report.batch.builds import BuildRun

        run = Path(next(word for word in job.command if word.startswith("--run=")).rsplit("=", 1)[1])
        digest = hashlib.sha256(run.read_bytes()).hexdigest()
        lowered = self.runs[run.read_text()]
        if lowered is None:
            return BuildRun(1, "", "ndcg-report: error: step papermill failed in Cell 3: the kernel died\n")
        staging = job.out.with_name(job.out.name + ".fake")
        shutil.copytree(self.template, staging)
        lines = (staging / "per_query.csv").read_text().splitlines()
        header = lines[0].split(",")
        at = {name: header.index(name) for name in ("system", "qid", "measure", "k", "value")}
        for i, line in enumerate(lines[1:], start=1):
            cells = line.split(",")
            if cells[at["system"]] == "monoT5" and cells[at["qid"]] in lowered and (cells[at["measure"]],
                                                                                    cells[at["k"]]) == ("nDCG", "10"):
                cells[at["value"]] = repr(max(0.0, float(cells[at["value"]]) - 0.1))
                lines[i] = ",".join(cells)
        (staging / "per_query.csv").write_text("\n".join(lines) + "\n")
        summary = json.loads((staging / "summary.json").read_text())
        for item in summary["files"]:
            if item["role"].startswith("run: "):
                item["sha256"] = digest
        (staging / "summary.json").write_text(json.dumps(summary))
        if job.out.exists():
            shutil.rmtree(job.out)
        staging.rename(job.out)
        return BuildRun(0, "", "")

    def stop(self, signum):
        self.stopping = signum


def fake_night(monkeypatch, folder: Path, builds: KeptBuilds, run: str, *args: str) -> tuple[int, str]:
    """One batch of folder/c.yml in this process, tonight's run the text run; (exit code, log)."""
    from ndcg_report.batch import runner

    (folder / "tonight.txt").write_text(run)
    monkeypatch.setenv("NDCG_REPORT_NO_FORKS", "1")
    lines: list[str] = []
    monkeypatch.setattr(runner, "run_batch",
                        lambda *a, **kw: run_batch(*a, **{**kw, "builds": builds, "log": lines.append}))
    outputs = {name: folder / value for name, value in zip(args[::2], args[1::2])}
    return runner.main(str(folder / "c.yml"), gate_outputs=outputs), "\n".join(lines)


def gate_record(folder: Path) -> dict:
    return json.loads((folder / "out" / "gate.json").read_text())


@pytest.fixture
def fabricated(nights, tmp_path):
    """A folder with the small set and a KeptBuilds from the first night's real build; the small set's qids."""
    template = nights[0] / "night-1"
    for path in SMALL.iterdir():
        shutil.copy(path, tmp_path / path.name)
    qids = sorted({line.split()[0] for line in (SMALL / "monot5.txt").read_text().splitlines()})
    return tmp_path, template, qids


def test_a_slow_drift_passes_night_by_night_and_is_caught_against_the_pinned_build(fabricated, monkeypatch):
    folder, template, qids = fabricated
    drift = {f"night {n}": tuple(qids[:2 * n]) for n in range(4)}  # two more queries lower each night
    builds = KeptBuilds(template, drift)
    write_config(folder, [{**REPORT, "name": "by-night", "gate": {"against": "last"}},
                          {**REPORT, "name": "by-pin", "gate": {"against": "pinned"}}])
    assert fake_night(monkeypatch, folder, builds, "night 0")[0] == 0
    pinned = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "batch", "c.yml", "--pin", "by-pin"],
                            cwd=folder, capture_output=True, text=True, check=False)
    assert pinned.returncode == 0 and pinned.stdout.startswith(f"pinned {folder / 'out' / 'by-pin'}"), pinned.stderr
    assert sorted(p.name for p in (folder / "out" / ".history" / "by-pin.pinned").iterdir()) == [
        "per_query.csv", "queries.json", "summary.json", "unjudged.tsv"]
    seen = []
    for night in ("night 1", "night 2", "night 3"):
        code, log = fake_night(monkeypatch, folder, builds, night)
        record = gate_record(folder)
        seen.append((code, statuses(record, "by-night")["monoT5"], statuses(record, "by-pin")["monoT5"]))
        assert "gate against the pinned build: " in log and record["reports"]["by-pin"]["against"] == "pinned"
    # each night two queries fall (p = 1/4 against the last build); against the pin six have by night 3: p = 1/64
    assert seen == [(0, "pass", "pass"), (0, "pass", "pass"), (4, "pass", "regression")]
    assert gate_record(folder)["failed"] == ["by-pin"]


def test_pinned_with_nothing_pinned_gates_against_the_last_build_and_says_so(fabricated, monkeypatch):
    folder, template, qids = fabricated
    builds = KeptBuilds(template, {"night 0": (), "night 1": tuple(qids)})
    write_config(folder, [{**REPORT, "gate": {"against": "pinned"}}])
    fake_night(monkeypatch, folder, builds, "night 0")
    code, log = fake_night(monkeypatch, folder, builds, "night 1")
    record = gate_record(folder)["reports"]["rankers"]
    assert code == 4 and record["against"] == "last" and record["note"] == "nothing pinned yet: gated against the last build"
    assert "gate against the last build: regression: monoT5" in log


def test_a_failed_build_exits_1_before_a_regression_s_4_and_keeps_the_last_good_build(fabricated, monkeypatch):
    folder, template, qids = fabricated
    builds = KeptBuilds(template, {"night 0": (), "night 1": tuple(qids), "broken": None})
    write_config(folder, [REPORT, {**REPORT, "name": "second", "run": "second.txt"}])
    (folder / "second.txt").write_text("night 0")
    assert fake_night(monkeypatch, folder, builds, "night 0")[0] == 0
    kept = (folder / "out" / "second" / "summary.json").read_bytes()
    (folder / "second.txt").write_text("broken")
    code, log = fake_night(monkeypatch, folder, builds, "night 1", "junit", "gate.xml", "markdown", "gate.md")
    assert code == 1 and "FAILED second " in log
    record = gate_record(folder)
    assert record["status"] == "regression" and list(record["reports"]) == ["rankers"]  # no verdict of a failed build
    assert (folder / "out" / ".history" / "second.last" / "summary.json").read_bytes() == kept
    assert (folder / "out" / "second" / "summary.json").read_bytes() == kept
    assert [suite.name for suite in JUnitXml.fromfile(str(folder / "gate.xml"))] == ["rankers"]
    assert "### rankers: regression" in (folder / "gate.md").read_text()


def test_a_batch_without_gate_keys_writes_no_gate_json_and_no_gate_column(fabricated, monkeypatch):
    folder, template, _ = fabricated
    write_config(folder, [{key: value for key, value in REPORT.items() if key != "gate"}])
    assert fake_night(monkeypatch, folder, KeptBuilds(template, {"night 0": ()}), "night 0")[0] == 0
    page = (folder / "out" / "index.html").read_text()
    assert not (folder / "out" / "gate.json").exists() and "<th>gate</th>" not in page and "Gate:" not in page
    assert not (folder / "out" / ".history" / "rankers.last").exists()


@pytest.mark.parametrize(("reports", "defaults", "message"), [
    ([{**REPORT, "gate": {"margn": 0.01}}], {},
     "c.yml: report 'rankers': key 'gate: margn': not a gate option (known: measures, margin, alpha, fail_on, against)"),
    ([REPORT], {"gate": {"alpha": 1}}, "c.yml: defaults: key 'gate: alpha': 1 must be a number above 0 and below 1"),
    ([{**REPORT, "gate": {"measures": ["RR"]}}], {},
     "c.yml: report 'rankers': key 'gate: measures': RR is not a measure of this report (it computes nDCG@10)"),
    ([{**REPORT, "gate": "yes"}], {}, "c.yml: report 'rankers': key 'gate': 'yes' must be a mapping of gate options"),
    ([{"name": "s", "suite": "suite.yml", "gate": {}}], {}, "c.yml: report 's': unknown key 'gate'"),
])
def test_bad_gate_keys_exit_2_with_one_line_naming_the_file_and_the_key(tmp_path, reports, defaults, message):
    write_config(tmp_path, reports, **({"defaults": defaults} if defaults else {}))
    one_line(batch_cli(tmp_path), 2, message)
    assert not (tmp_path / "out").exists()


def test_pin_refuses_a_name_that_is_not_a_report_or_has_no_build(tmp_path):
    write_config(tmp_path, [REPORT])
    one_line(batch_cli(tmp_path, "--pin", "nope"), 2, "--pin nope: not a report of c.yml (its reports: rankers)")
    one_line(batch_cli(tmp_path, "--pin", "rankers"), 2, "--pin rankers: ")
    assert "holds no build yet; run the batch first" in batch_cli(tmp_path, "--pin", "rankers").stderr
    one_line(batch_cli(tmp_path, "--pin", "rankers", "--force"), 2, "--pin builds nothing")


def test_the_change_column_compares_each_system_with_itself_not_the_best_with_the_best():
    """Another system becomes the best while the former best falls: the fall is shown, in red, with its name."""
    from ndcg_report.batch.index_page import ReportState, render_index

    def record(time, a, b, best):
        return {"time": time, "measure": "nDCG@10", "run_mean": max(a, b), "baseline_mean": 0.5, "delta": 0.1,
                "run_name": best, "baseline_name": "BM25", "n_systems": 2, "n_above": 0,
                "systems": [{"name": "A", "run_mean": a}, {"name": "B", "run_mean": b}]}

    history = (record("2026-11-20T02:30:00Z", 0.7215, 0.70, "A"), record("2026-11-21T02:30:00Z", 0.6372, 0.75, "B"))
    page = render_index([ReportState(name="r", title="r", status="built", history=history, has_report=True)],
                        heading="h", batch_line="b")
    assert index_rows(page)["r"][9] == "-0.0843 A (of 3)"
    assert '<span class="down" title="A -0.0843; B +0.0500; BM25 (baseline) +0.0000">-0.0843</span>' in page


def test_the_gating_example_config_is_valid_and_gates_every_report():
    from ndcg_report.batch.config import load_config

    config = load_config(Path(__file__).resolve().parents[2] / "examples" / "nightly-gate.yml")
    assert [(r.name, r.gate["against"], r.gate["margin"]) for r in config.reports] == [
        ("dl19-rerankers", "last", 0.01), ("dl19-pinned", "pinned", 0.01)]
    assert config.reports[0].gate["measures"] == "nDCG@10 nDCG@100"
    assert all(item.path.is_file() for report in config.reports for item in report.inputs)
