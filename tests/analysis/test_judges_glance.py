"""The judges comparison at a glance: the summary's numbers are `judges --format json`'s, the verdict grid's
marks and flips are the per-set verdicts, and the system-means scatter names points without overprinting."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ndcg_report.analysis.judgments.comparison import compare_judgments
from ndcg_report.analysis.judgments.figures import means_scatter
from ndcg_report.analysis.judgments.glance import MARKS, parts, summary_table, verdict_grid, verdicts_html
from ndcg_report.cli import main
from ndcg_report.core.evaluation_pass import evaluate
from ndcg_report.inputs.reading import read_qrels

DATA = Path(__file__).resolve().parents[1] / "data"
SMALL, JUDGES = DATA / "small", DATA / "judges"
RUNS = {"bm25": SMALL / "bm25.txt", "monot5": SMALL / "monot5.txt", "rrf": JUDGES / "rrf.txt",
        "interp": JUDGES / "interp.txt", "monot5-top20": JUDGES / "monot5-top20.txt"}
SETS = {"qrels": SMALL / "qrels.txt", "llm": JUDGES / "llm.txt", "llm-float": JUDGES / "llm-float.txt"}
MEASURES = "nDCG@10 AP"


@pytest.fixture(scope="module")
def comparison():
    sets = {name: read_qrels(path) for name, path in SETS.items()}
    evaluations = {name: {run: evaluate(path, qrels, measures=MEASURES, rel_level=2) for run, path in RUNS.items()}
                   for name, qrels in sets.items()}
    return compare_judgments(evaluations, sets, baseline="bm25")


@pytest.fixture(scope="module")
def printed():
    """`ndcg-report judges --format json` on the same inputs."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["judges", *map(str, SETS.values()), *[f"{n}={p}" for n, p in RUNS.items()], "--baseline", "bm25",
                     "-m", MEASURES, "-l", "2", "--format", "json"])
    assert code == 0
    return json.loads(out.getvalue())


def test_the_summarys_numbers_are_the_judges_commands(comparison, printed):
    table = summary_table(comparison, "nDCG@10").set_index("set")
    assert list(table.index) == ["llm", "llm-float"]
    for name, row in table.iterrows():
        expected = printed["comparisons"][name]
        measure = expected["measures"]["nDCG@10"]
        assert row["Cohen's kappa"] == expected["cohen_kappa"]
        assert row["Krippendorff's alpha (ordinal)"] == expected["krippendorff_alpha"]["ordinal"]
        assert row["tau-b (nDCG@10)"] == measure["kendall_tau"]
        assert row["tau_AP"] == measure["tau_ap"]
        low, high = measure["kendall_tau_interval"]
        assert row["tau-b interval"] == f"[{low:.4f}, {high:.4f}]"
        differing = [v for v in expected["verdicts"] if v["differs"]]
        on_headline = [v for v in differing if v["measure"] == "nDCG@10"]
        assert row["flips (nDCG@10)"] == f"{len(on_headline)} of {len(printed['systems']) - 1}"
        assert row["flips (every measure)"] == f"{len(differing)} of {len(expected['verdicts'])}"
    assert table.loc["llm", "Cohen's kappa"] == pytest.approx(0.5890342, abs=1e-6)


def test_the_grid_is_the_verdicts_under_each_set_and_its_flips_the_differing_ones(comparison, printed):
    grid = verdict_grid(comparison, ["nDCG@10", "AP"])
    assert list(grid.index) == ["monot5", "rrf", "interp", "monot5-top20"]
    assert list(grid.columns) == [f"{m} {s}" for m in ("nDCG@10", "AP") for s in SETS] + ["flips"]
    words = {v: k for k, v in {"better": "▲", "worse": "▼", "no difference": "–"}.items()}
    flips = {}
    for name, expected in printed["comparisons"].items():
        for verdict in expected["verdicts"]:
            system, measure = verdict["system"], verdict["measure"]
            for set_name, said, p in ((printed["reference"], verdict["reference"], verdict["reference_p"]),
                                      (name, verdict["other"], verdict["other_p"])):
                mark, shown = grid.loc[system, f"{measure} {set_name}"].split(" ", 1)
                assert words[mark] == said
                assert shown == ("< 0.0001" if p < 1e-4 else f"{p:.4f}")
            if verdict["differs"]:
                flips.setdefault(system, []).append(f"{name} on {measure}")
    assert flips, "the test data has verdicts that flip"
    assert {s: f for s, f in grid["flips"].items() if f} == {s: ", ".join(f) for s, f in flips.items()}
    headline = summary_table(comparison, "nDCG@10").set_index("set")
    for name in ("llm", "llm-float"):
        changed = [v for v in printed["comparisons"][name]["verdicts"] if v["differs"] and v["measure"] == "nDCG@10"]
        assert headline.loc[name, "which"] == (", ".join(
            f"{v['system']} {MARKS[v['reference']]}→{MARKS[v['other']]}" for v in changed) or "none")


def test_one_set_gives_no_summary_and_the_verdicts_as_they_were():
    report = SimpleNamespace(experiment=SimpleNamespace(judgments=None))
    assert parts(report) == []
    assert verdicts_html(report, "<ul><li>x</li></ul>") == "<ul><li>x</li></ul>"


def boxes(figure):
    figure.draw_without_rendering()
    renderer = figure._get_renderer()
    ax = figure.axes[0]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts], ax.get_window_extent(renderer)


def test_scatter_names_do_not_overlap_with_nineteen_crowded_systems():
    rng = np.random.default_rng(7)
    systems = [f"system-{i:02d}" for i in range(19)]
    reference = dict(zip(systems, 0.55 + 0.2 * rng.random(19)))
    means = {"nist": reference, "sim": {s: v * 0.9 + 0.03 * rng.random() for s, v in reference.items()},
             "strict": {s: v * 0.8 for s, v in reference.items()}}
    figure = means_scatter(means, "nist", "nDCG@10")
    texts, frame = boxes(figure)
    names = [(text, box) for text, box in texts if text.startswith("system")]
    assert len(names) >= 12  # most points named
    for i, (first, a) in enumerate(names):
        assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1, first
        for second, b in names[i + 1:]:
            assert not a.overlaps(b), (first, second)
    unnamed = 19 - len(names)
    notes = [text for text, _ in texts if "unnamed" in text]
    assert notes == ([f"{unnamed} crowded point{'s' if unnamed > 1 else ''} unnamed"] if unnamed else [])


def test_scatter_names_the_systems_whose_rank_moves_first():
    systems = [f"s{i}" for i in range(12)]
    reference = {s: 0.6 + 0.001 * i for i, s in enumerate(systems)}  # one crowded cluster
    other = dict(reference, s0=0.6115, s11=0.5995)  # the lowest and the highest swap ends
    figure = means_scatter({"ref": reference, "other": other}, "ref", "AP")
    named = {text for text, _ in boxes(figure)[0]}
    assert {"s0", "s11"} <= named


def test_a_grid_p_value_at_the_resampling_floor_is_written_as_at_most():
    from ndcg_report.analysis.judgments.glance import _cell

    floor = 4 * 2 / 10_001  # Holm over 4 systems of 2 / (10,000 + 1)
    assert _cell("better", floor, floor) == "▲ ≤0.0008"
    assert _cell("worse", 0.0123, floor) == "▼ 0.0123" and _cell("better", 0.00001, floor) == "▲ <0.0001"
