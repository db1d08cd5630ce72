"""Report figures: plotted data equals the evaluation's numbers, text is literal, PNGs are reproducible."""

from __future__ import annotations

import ast
import base64
from importlib import resources
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from ndcg_report import ParameterError, evaluate, read_qrels, read_run
from ndcg_report.report import plots
from ndcg_report.core.metrics import Evaluation, QueryCounts

CUTOFFS = [1, 3, 5, 10, 20, 100, 1000, "all"]
LABELS = [str(k) for k in CUTOFFS]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FOLDER = resources.files("ndcg_report") / "data" / "dl19-passage"
RUN_FILE = FOLDER / "monot5.dl19.run.gz"
BASELINE_FILE = FOLDER / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"
QRELS_FILE = FOLDER / "qrels.dl19-passage.txt"


@pytest.fixture(scope="module")
def qrels():
    return read_qrels(QRELS_FILE).table


@pytest.fixture(scope="module")
def dl19(qrels) -> tuple[Evaluation, Evaluation]:
    """(monoT5, BM25) on TREC DL 2019 passage: 43 judged queries in both."""
    return (
        evaluate(read_run(RUN_FILE).table, qrels, cutoffs=CUTOFFS),
        evaluate(read_run(BASELINE_FILE).table, qrels, cutoffs=CUTOFFS),
    )


@pytest.fixture(scope="module")
def pairs10(dl19) -> pd.DataFrame:
    """Expected NDCG@10 pairs, computed here from per_query without the plots module."""
    frames = []
    for evaluation, name in zip(dl19, ("run", "baseline")):
        rows = evaluation.per_query
        rows = rows[(rows["k"] == "10") & rows["averaged"]]
        frames.append(rows.set_index("qid")["ndcg"].rename(name))
    pairs = pd.concat(frames, axis=1, join="inner").sort_index()
    pairs["delta"] = pairs["run"] - pairs["baseline"]
    return pairs


def synthetic(qids: list[str], values: np.ndarray) -> Evaluation:
    """An Evaluation with the given per-query NDCG at every cut-off (all queries averaged)."""
    n, width = len(qids), len(CUTOFFS)
    grid = np.repeat(np.asarray(values, dtype=float)[:, None], width, axis=1)
    return Evaluation(
        qids=np.asarray(qids, dtype=object), num_ret=np.full(n, 1000), num_rel=np.ones(n, dtype=int),
        in_run=np.ones(n, dtype=bool), averaged=np.ones(n, dtype=bool), dcg=grid, idcg=np.ones((n, width)),
        ndcg=grid, judged=np.ones((n, width)), counts=QueryCounts(n, n, n, 0, 0, 0, n), cutoffs=tuple(CUTOFFS),
        gain="linear", missing="zero", no_relevant="skip", tied_lines=0,
    )


def band_limits(collection) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) y of a fill_between band at x = 0, 1, 2, ..."""
    vertices = np.concatenate([path.vertices for path in collection.get_paths()])
    xs = np.unique(np.round(vertices[:, 0], 9))
    low = np.array([vertices[np.isclose(vertices[:, 0], x), 1].min() for x in xs])
    high = np.array([vertices[np.isclose(vertices[:, 0], x), 1].max() for x in xs])
    return low, high


def drawn_text(text) -> str:
    """What matplotlib draws for a Text: fails the caller if the string would be parsed as math."""
    shown, math = text._preprocess_math(text.get_text())
    assert math is False, text.get_text()
    return shown


def test_by_cutoff_lines_are_the_summary_means_with_all_last(dl19):
    run, baseline = dl19
    figure = plots.ndcg_by_cutoff(run, baseline, "monoT5", "BM25")
    ax = figure.axes[0]
    assert isinstance(figure, Figure) and len(figure.axes) == 1
    assert [line.get_label() for line in ax.lines] == ["monoT5", "BM25"]
    for line, evaluation in zip(ax.lines, dl19):
        np.testing.assert_allclose(line.get_ydata(), evaluation.summary.loc[LABELS, "mean"], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(line.get_xdata(), np.arange(len(LABELS)))
    assert [t.get_text() for t in ax.get_xticklabels()] == LABELS
    assert "43 queries" in ax.get_title()
    assert ax.lines[0].get_color() == "#0072B2" and ax.lines[1].get_color() == "#D55E00"
    assert tuple(figure.get_size_inches()) == (7.0, 4.0) and figure.dpi == 100


def test_by_cutoff_bands_are_bootstrap_intervals_of_the_mean(dl19):
    run, baseline = dl19
    bands = {}
    for confidence in (0.8, 0.95, 0.99):
        ax = plots.ndcg_by_cutoff(run, baseline, "r", "b", confidence=confidence, n_resamples=3000).axes[0]
        assert len(ax.collections) == 2
        bands[confidence] = [band_limits(c) for c in ax.collections]
    for system, evaluation in enumerate(dl19):
        table = evaluation.ndcg_table()[LABELS]
        mean, sem = table.mean().to_numpy(), table.std(ddof=0).to_numpy() / np.sqrt(len(table))
        low, high = bands[0.95][system]
        assert np.all(low <= mean) and np.all(mean <= high) and np.all(low >= 0) and np.all(high <= 1)
        # the percentile CI of a mean of 43 values is close to the normal one, mean +- 1.96 SE
        np.testing.assert_allclose(high - low, 2 * 1.959964 * sem, rtol=0.2)
        assert np.all(bands[0.8][system][1] - bands[0.8][system][0] < high - low)
        assert np.all(bands[0.99][system][1] - bands[0.99][system][0] > high - low)


def test_by_cutoff_bands_are_seeded(dl19):
    run, baseline = dl19
    def vertices(seed: int) -> list[np.ndarray]:
        ax = plots.ndcg_by_cutoff(run, baseline, "r", "b", seed=seed, n_resamples=1000).axes[0]
        return [path.vertices for c in ax.collections for path in c.get_paths()]
    first, again, other = vertices(7), vertices(7), vertices(8)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_figures_pair_only_queries_averaged_in_both(qrels):
    run_table = read_run(RUN_FILE).table
    baseline_table = read_run(BASELINE_FILE).table.to_pandas()
    dropped = "19335"
    baseline_table = baseline_table[baseline_table["qid"] != dropped]
    run = evaluate(run_table, qrels, cutoffs=CUTOFFS, missing="skip")
    baseline = evaluate(baseline_table, qrels, cutoffs=CUTOFFS, missing="skip")
    assert run.counts.averaged == 43 and baseline.counts.averaged == 42
    ax = plots.ndcg_by_cutoff(run, baseline, "r", "b", n_resamples=500).axes[0]
    common = run.ndcg_table().drop(index=dropped)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), common[LABELS].mean(), rtol=0, atol=1e-12)
    assert not np.allclose(ax.lines[0].get_ydata(), run.summary.loc[LABELS, "mean"])
    assert "42 queries" in ax.get_title()
    scatter = plots.per_query_scatter(run, baseline, "10", "r", "b").axes[0]
    assert len(scatter.collections[0].get_offsets()) == 42 and "42 queries" in scatter.get_title()


def test_distribution_shows_both_boxes_and_every_query(dl19, pairs10):
    ax = plots.ndcg_distribution(*dl19, "10", "monoT5", "BM25").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["BM25", "monoT5"]
    assert len(ax.patches) == 2  # one box per system
    assert len(ax.collections) == 2
    for collection, column, position in zip(ax.collections, ("baseline", "run"), (1, 2)):
        offsets = collection.get_offsets()
        np.testing.assert_allclose(offsets[:, 1], pairs10[column], rtol=0, atol=1e-12)
        assert np.all(np.abs(offsets[:, 0] - position) <= 0.25) and np.ptp(offsets[:, 0]) > 0.3
    medians = [line for line in ax.lines if line.get_color() == "black" and line.get_linestyle() == "-"]
    median_ys = sorted({float(line.get_ydata()[0]) for line in medians if np.ptp(line.get_ydata()) == 0})
    for column in ("baseline", "run"):
        assert any(abs(y - pairs10[column].median()) < 1e-12 for y in median_ys)
    assert "NDCG@10" in ax.get_title() and "43 queries" in ax.get_title()


def test_scatter_plots_the_pairs_against_the_diagonal(dl19, pairs10):
    ax = plots.per_query_scatter(*dl19, 10, "monoT5", "BM25").axes[0]
    assert len(ax.collections) == 1
    np.testing.assert_allclose(
        ax.collections[0].get_offsets(), pairs10[["baseline", "run"]].to_numpy(), rtol=0, atol=1e-12
    )
    diagonal = ax.lines[0]
    assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1) and ax.get_aspect() == 1
    above, below = int((pairs10["delta"] > 0).sum()), int((pairs10["delta"] < 0).sum())
    assert (above, below) == (33, 9)  # query 131843 ties at NDCG@10 0.9337 (equal gains at equal ranks)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"monoT5 better: {above}", f"BM25 better: {below}", f"equal: {43 - above - below}"]
    assert "NDCG@10" in ax.get_title() and "43 queries" in ax.get_title()
    assert "BM25" in ax.get_xlabel() and "monoT5" in ax.get_ylabel()


def test_delta_bars_are_the_sorted_differences(dl19, pairs10):
    ax = plots.per_query_delta(*dl19, "10", "monoT5", "BM25").axes[0]
    bars = ax.collections[0]
    paths = bars.get_paths()
    assert len(paths) == 43
    heights = np.array([p.vertices[:4, 1].max() + p.vertices[:4, 1].min() for p in paths])  # one end is 0
    assert np.all([np.any(p.vertices[:4, 1] == 0) for p in paths])
    expected = pairs10.sort_values("delta", ascending=False, kind="stable")
    np.testing.assert_allclose(heights, expected["delta"], rtol=0, atol=1e-12)
    centres = np.array([p.vertices[:4, 0].mean() for p in paths])
    np.testing.assert_allclose(centres, np.arange(43))
    colours = bars.get_facecolors()
    assert all(tuple(c) == to_rgba("#009E73") for c in colours[expected["delta"].to_numpy() > 0])
    assert all(tuple(c) == to_rgba("#D55E00") for c in colours[expected["delta"].to_numpy() < 0])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(expected.index)
    assert any(list(line.get_ydata()) == [0, 0] for line in ax.lines)  # zero line
    assert "NDCG@10" in ax.get_title() and "43 queries" in ax.get_title()


def test_delta_labels_qids_only_up_to_60_queries():
    rng = np.random.default_rng(3)
    for n, labelled in ((60, True), (61, False)):
        qids = [f"q{i:03d}" for i in range(n)]
        run, baseline = synthetic(qids, rng.random(n)), synthetic(qids, rng.random(n))
        ax = plots.per_query_delta(run, baseline, "5", "r", "b").axes[0]
        assert len(ax.collections[0].get_paths()) == n
        assert len(ax.get_xticklabels()) == (n if labelled else 0)


def test_ties_are_counted_apart_from_wins_and_losses():
    qids = ["a", "b", "c", "d"]
    run, baseline = synthetic(qids, np.array([0.5, 0.7, 0.2, 0.0])), synthetic(qids, np.array([0.5, 0.3, 0.4, 0.0]))
    scatter = plots.per_query_scatter(run, baseline, "10", "r", "b").axes[0]
    assert [t.get_text() for t in scatter.get_legend().get_texts()] == ["r better: 1", "b better: 1", "equal: 2"]
    delta = plots.per_query_delta(run, baseline, "10", "r", "b").axes[0]
    assert "(2 equal)" in delta.get_title()
    assert [t.get_text() for t in delta.get_legend().get_texts()] == ["r better: 1", "b better: 1"]
    assert [t.get_text() for t in delta.get_xticklabels()] == ["b", "a", "d", "c"]  # ties in qid order


def test_ecdf_has_one_step_per_query_and_ends_at_one(dl19, pairs10):
    ax = plots.ndcg_ecdf(*dl19, "10", "monoT5", "BM25").axes[0]
    assert [line.get_label() for line in ax.lines] == ["monoT5", "BM25"]
    for line, column in zip(ax.lines, ("run", "baseline")):
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert len(x) == 44 and y[0] == 0 and y[-1] == 1
        assert np.count_nonzero(np.diff(y) > 0) == 43
        np.testing.assert_allclose(x[1:], np.sort(pairs10[column]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(y[1:], np.arange(1, 44) / 43)
    assert "NDCG@10" in ax.get_title() and "43 queries" in ax.get_title()


def test_png_is_byte_identical_across_renders_and_carries_no_version(dl19):
    def build() -> Figure:
        return plots.ndcg_by_cutoff(*dl19, "monoT5", "BM25", n_resamples=500)
    first, second = plots.figure_to_png_bytes(build()), plots.figure_to_png_bytes(build())
    assert first.startswith(PNG_SIGNATURE) and len(first) > 10_000
    assert first == second
    assert b"Software" not in first and b"matplotlib" not in first.lower()
    assert matplotlib.__version__.encode() not in first
    uri = plots.figure_to_data_uri(build())
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == first


def test_svg_is_deterministic(dl19):
    first = plots.figure_to_svg(plots.ndcg_ecdf(*dl19, "10", "monoT5", "BM25"))
    second = plots.figure_to_svg(plots.ndcg_ecdf(*dl19, "10", "monoT5", "BM25"))
    assert first == second and first.lstrip().startswith("<?xml") and "<dc:date>" not in first


def test_names_and_qids_from_data_are_drawn_literally(dl19):
    run_name, baseline_name = "$x$ <script>alert(1)</script>", r"BM25 $\notacommand{$ 100%"
    figures = [
        plots.ndcg_by_cutoff(*dl19, run_name, baseline_name, n_resamples=200),
        plots.ndcg_distribution(*dl19, "10", run_name, baseline_name),
        plots.per_query_scatter(*dl19, "10", run_name, baseline_name),
        plots.per_query_delta(*dl19, "10", run_name, baseline_name),
        plots.ndcg_ecdf(*dl19, "10", run_name, baseline_name),
    ]
    for figure in figures:
        figure.draw_without_rendering()  # parses every text: bad math text would raise here
        texts = [t for t in figure.findobj(matplotlib.text.Text) if t.get_text()]
        shown = " | ".join(drawn_text(t) for t in texts)
        assert run_name in shown and baseline_name in shown
    assert plots.figure_to_png_bytes(figures[3]).startswith(PNG_SIGNATURE)
    qids = ["$a$", "$b$ <i>", "c"]
    delta = plots.per_query_delta(synthetic(qids, np.array([0.9, 0.5, 0.1])),
                                  synthetic(qids, np.array([0.1, 0.4, 0.2])), "10", "r", "b")
    delta.draw_without_rendering()
    assert [drawn_text(t) for t in delta.axes[0].get_xticklabels()] == qids


def test_unknown_cutoff_or_mismatched_evaluations_are_rejected(dl19, qrels):
    with pytest.raises(ParameterError, match="'7'"):
        plots.per_query_scatter(*dl19, 7, "r", "b")
    other = evaluate(read_run(BASELINE_FILE).table, qrels, cutoffs=[10])
    with pytest.raises(ParameterError, match="cut-offs differ"):
        plots.ndcg_ecdf(dl19[0], other, "10", "r", "b")
    skip = evaluate(read_run(BASELINE_FILE).table, qrels, cutoffs=CUTOFFS, missing="skip")
    with pytest.raises(ParameterError, match="missing"):
        plots.ndcg_ecdf(dl19[0], skip, "10", "r", "b")
    nobody = synthetic(["elsewhere"], np.array([0.5]))
    with pytest.raises(ParameterError, match="no query"):
        plots.ndcg_ecdf(dl19[0], nobody, "10", "r", "b")


def test_module_does_not_use_pyplot():
    tree = ast.parse(Path(plots.__file__).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [
        f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    assert "matplotlib.figure.Figure" in imported
    assert not [name for name in imported if "pyplot" in name or name == "pylab"]
    assert "plt." not in Path(plots.__file__).read_text(encoding="utf-8")
