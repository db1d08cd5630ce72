"""Long names keep every figure and table readable, one colour has one
meaning, many systems get small multiples, the page titles and reprs say what they show."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import matplotlib.colors
from matplotlib.backends.backend_agg import FigureCanvasAgg
import numpy as np

import ndcg_report
from ndcg_report import compare_runs, evaluate
from ndcg_report.batch.history_figure import history_figure, tick_labels
from ndcg_report.batch.index_page import render_index
from ndcg_report.analysis import figure_style

SMALL = Path(__file__).resolve().parents[1] / "data" / "small"
LONG = "a system with a very long descriptive name that goes on and on for eighty characters!!"[:80]


def small_experiment(names: list[str], **options):
    """Systems made from the small monoT5 run, each with its own noise on the scores, against BM25."""
    frame = ndcg_report.read_run(SMALL / "monot5.txt").table.to_pandas()
    runs = {name: frame.assign(score=frame["score"] + np.random.default_rng(i).normal(0, 0.01, len(frame)))
            for i, name in enumerate(names)}
    return compare_runs(runs, SMALL / "qrels.txt", SMALL / "bm25.txt", baseline_name="B" * 80, cutoffs="5,10",
                        n_resamples=100, **options)


def test_figures_with_80_character_names_draw_without_layout_warnings_and_shorten_the_names():
    experiment = small_experiment([LONG, LONG[:79] + "2"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a 'constrained_layout not applied' warning would land in report.html
        for method in ("plot_by_cutoff", "plot_distribution", "plot_delta_heatmap", "plot_wins_ties_losses",
                       "plot_pairwise", "plot_scatter", "plot_delta_bars", "plot_ecdf"):
            figure = getattr(experiment, method)()
            figure_style.figure_to_png_bytes(figure)
            texts = [text.get_text() for ax in figure.axes for text in (*ax.get_xticklabels(), *ax.get_yticklabels())]
            assert all(len(text) <= figure_style.MAX_LABEL + 4 for text in texts if "a system" in text or "BBB" in text), method
            renderer = FigureCanvasAgg(figure).get_renderer()  # the layout was made at savefig: measure it as drawn
            page = figure.bbox.padded(1)
            for ax in figure.axes:  # what each panel draws (title, labels, ticks, legend) is inside the figure
                box = ax.get_tightbbox(renderer)
                assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, (
                    method, ax.get_title())


def test_one_colour_means_one_thing():
    colours = figure_style.DELTA_COLOURS
    assert matplotlib.colors.to_hex(colours(1.0)) == figure_style.WIN_COLOUR.lower()
    assert matplotlib.colors.to_hex(colours(0.0)) == figure_style.LOSS_COLOUR.lower()
    experiment = small_experiment(["x", "y"])
    heatmap = experiment.plot_delta_heatmap()
    assert "green: system better" in heatmap.axes[0].get_title()
    scatter = experiment.plot_scatter()
    legend = [text.get_text() for text in scatter.legends[0].get_texts()] if scatter.legends else []
    handles = scatter.legends[0].legend_handles if scatter.legends else []
    shown = {text: matplotlib.colors.to_hex(handle.get_color()) for text, handle in zip(legend, handles)}
    assert shown.get("system better") == figure_style.WIN_COLOUR.lower()


def test_many_systems_get_small_multiples_of_the_mean_against_k():
    few = small_experiment(["a", "b", "c"]).plot_by_cutoff()
    many = small_experiment(["a", "b", "c", "d", "e", "f"]).plot_by_cutoff()
    assert len(few.axes) == 1
    visible = [ax for ax in many.axes if ax.get_visible()]
    assert len(visible) == 6 and all(len(ax.lines) == 2 for ax in visible)  # the system and the baseline


def test_evaluation_shows_a_short_repr_and_a_table():
    evaluation = evaluate(SMALL / "monot5.txt", SMALL / "qrels.txt", measures="nDCG@10 RR")
    assert len(repr(evaluation)) < 300 and "array" not in repr(evaluation)
    page = evaluation._repr_html_()
    assert "<table>" in page and "<th>nDCG@10</th>" in page and "array" not in page


def test_the_api_is_in_dir():
    assert {"compare_runs", "Experiment", "evaluate", "Measure"} <= set(dir(ndcg_report))


def test_index_ticks_are_unique_and_the_legend_sits_beside_the_points():
    same_minute = ["2026-11-25T10:00:01Z", "2026-11-25T10:00:40Z", "2026-11-25T10:00:40Z", "2026-11-25T11:00:00Z"]
    labels = tick_labels(same_minute)
    assert len(set(labels)) == 4 and labels[0] == "11-25 10:00:01" and labels[2] == "11-25 10:00:40 #2"
    assert tick_labels(["2026-11-25T10:00:01Z", "2026-11-25T11:00:00Z"]) == ["11-25 10:00", "11-25 11:00"]
    record = {"time": "2026-11-25T10:00:01Z", "measure": "nDCG@10", "run_name": "A", "run_mean": 0.6,
              "baseline_mean": 0.5, "baseline_name": "B", "delta": 0.1, "ci_low": 0.0, "ci_high": 0.2,
              "holm_randomization_pvalue": 0.01, "systems": [{"name": "A", "run_mean": 0.6, "delta": 0.1}]}
    figure = history_figure(tuple(dict(record, time=time) for time in same_minute))
    legend = figure.axes[0].get_legend()
    assert legend.get_bbox_to_anchor().x0 >= figure.axes[0].get_window_extent().x1 - 1  # outside the axes


def test_a_long_name_does_not_push_the_index_columns_out():
    from ndcg_report.batch.index_page import ReportState

    page = render_index([ReportState(name="r" * 80, title="t", status="built")], heading="h", batch_line="b")
    assert "td.num .detail" in page and "overflow-wrap: anywhere" in page
    assert re.search(r"td\.name \{[^}]*overflow-wrap: anywhere", page)
