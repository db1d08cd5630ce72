"""Report figures: plotted data equals the experiment's numbers, text is literal, PNGs are reproducible."""

from __future__ import annotations

import ast
import base64
import dataclasses
import warnings
from importlib import resources
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from scipy import stats

from ndcg_report import compare_runs
from ndcg_report.inputs.tables import load_run
from ndcg_report.analysis import figure_style, plots
from ndcg_report.stats.streams import stream
from tests.helpers import ids_of_every_length

CUTOFFS = [1, 3, 5, 10, 20, 100, 1000, "all"]
LABELS = [str(k) for k in CUTOFFS]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FOLDER = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
QRELS_FILE = FOLDER / "qrels.dl19-passage.txt"
BASELINE_FILE = FOLDER / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz"


@pytest.fixture(scope="module")
def one():
    """monoT5 against BM25 on TREC DL 2019 passage: 43 judged queries."""
    return compare_runs({"monoT5": FOLDER / "monot5.dl19.run.gz"}, QRELS_FILE, BASELINE_FILE, baseline_name="BM25",
                        cutoffs=CUTOFFS, n_resamples=500)


@pytest.fixture(scope="module")
def three():
    runs = {"monoT5": FOLDER / "monot5.dl19.run.gz", "RRF": FOLDER / "rrf.bm25-monot5.dl19.run.gz",
            "Interpolation": FOLDER / "interp.bm25-monot5.dl19.run.gz"}
    return compare_runs(runs, QRELS_FILE, BASELINE_FILE, baseline_name="BM25", cutoffs="5,10", n_resamples=500)


@pytest.fixture(scope="module")
def pairs10(one) -> pd.DataFrame:
    """Expected NDCG@10 pairs, computed here from per_query without the plotting code."""
    rows = one.per_query[(one.per_query["k"] == 10) & one.per_query["averaged"]]
    pairs = rows.pivot(index="qid", columns="system", values="value").rename(columns={"monoT5": "run", "BM25": "baseline"})
    pairs = pairs.loc[sorted(pairs.index, key=lambda q: q.encode())]
    pairs["delta"] = pairs["run"] - pairs["baseline"]
    return pairs


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


def test_by_cutoff_lines_are_the_means_and_bands_the_intervals(one, three):
    for experiment in (one, three):
        figure = experiment.plot_ndcg_by_cutoff()
        ax = figure.axes[0]
        ks = ["all" if m.k is None else str(m.k) for m in experiment.measures]
        assert [t.get_text() for t in ax.get_xticklabels()] == ks
        lines = [line for line in ax.lines if line.get_label() in experiment.systems]
        assert [line.get_label() for line in lines] == list(experiment.systems)  # the baseline last
        for line, band, name in zip(lines, ax.collections, experiment.systems):
            rows = experiment.mean_intervals.loc[name].loc["nDCG"]
            np.testing.assert_allclose(line.get_ydata(), rows["mean"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(line.get_ydata(), experiment.leaderboard.loc[name], rtol=0, atol=1e-12)
            low, high = band_limits(band)
            np.testing.assert_allclose(low, rows["low"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(high, rows["high"], rtol=0, atol=1e-12)
        assert lines[-1].get_linestyle() == "--"  # the baseline is dashed
        assert "43 queries" in ax.get_title()


def test_mean_intervals_are_seeded_percentile_bootstraps_of_their_own_stream(one):
    values = one.ndcg_at("10")["monoT5"].to_numpy()
    expected = stats.bootstrap((values,), np.mean, n_resamples=500, method="percentile", vectorized=True,
                               rng=stream(42, "mean-interval", "monoT5", "10")).confidence_interval
    row = one.mean_intervals.loc[("monoT5", "nDCG", 10)]
    assert (row["low"], row["high"]) == pytest.approx((expected.low, expected.high), abs=1e-12)
    assert row["low"] < row["mean"] < row["high"]


def test_distribution_shows_every_system_and_every_query(one, three, pairs10):
    ax = one.plot_distribution("10").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["BM25", "monoT5"]  # the baseline first
    assert len(ax.patches) == 2 and len(ax.collections) == 2
    for collection, column, position in zip(ax.collections, ("baseline", "run"), (1, 2)):
        offsets = collection.get_offsets()
        np.testing.assert_allclose(offsets[:, 1], pairs10[column], rtol=0, atol=1e-12)
        assert np.all(np.abs(offsets[:, 0] - position) <= 0.25) and np.ptp(offsets[:, 0]) > 0.3
    medians = [line for line in ax.lines if line.get_color() == "black" and line.get_linestyle() == "-"]
    median_ys = sorted({float(line.get_ydata()[0]) for line in medians if np.ptp(line.get_ydata()) == 0})
    for column in ("baseline", "run"):
        assert any(abs(y - pairs10[column].median()) < 1e-12 for y in median_ys)
    assert "nDCG@10" in ax.get_title() and "43 queries" in ax.get_title()
    many = three.plot_distribution().axes[0]
    assert [t.get_text() for t in many.get_xticklabels()] == ["BM25", "monoT5", "RRF", "Interpolation"]
    assert len(many.patches) == 4


def test_scatter_plots_the_pairs_against_the_diagonal(one, pairs10):
    ax = one.plot_scatter(10).axes[0]
    assert len(ax.collections) == 1
    np.testing.assert_allclose(ax.collections[0].get_offsets(), pairs10[["baseline", "run"]].to_numpy(), rtol=0, atol=1e-12)
    diagonal = ax.lines[0]
    assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1) and ax.get_aspect() == 1
    above, below = int((pairs10["delta"] > 0).sum()), int((pairs10["delta"] < 0).sum())
    assert (above, below) == (33, 9)  # query 131843 ties at NDCG@10 0.9337 (equal gains at equal ranks)
    assert ax.get_title() == f"monoT5\n{above} better, {below} worse, {43 - above - below} equal"
    assert "BM25" in ax.get_xlabel()


def test_small_multiples_have_one_panel_per_system(three):
    for figure in (three.plot_scatter(), three.plot_delta_bars()):
        visible = [ax for ax in figure.axes if ax.get_visible()]
        assert [ax.get_title().split("\n")[0] for ax in visible] == ["monoT5", "RRF", "Interpolation"]
    scatter = three.plot_scatter()
    table = three.ndcg_at("10")
    for ax, name in zip(scatter.axes, three.names):
        np.testing.assert_allclose(ax.collections[0].get_offsets(), table[["BM25", name]].to_numpy(), rtol=0, atol=1e-12)


def test_delta_bars_are_the_sorted_differences(one, pairs10):
    ax = one.plot_delta_bars("10").axes[0]
    bars = ax.collections[0]
    paths = bars.get_paths()
    assert len(paths) == 43
    heights = np.array([p.vertices[:4, 1].max() + p.vertices[:4, 1].min() for p in paths])  # one end is 0
    assert np.all([np.any(p.vertices[:4, 1] == 0) for p in paths])
    expected = pairs10.sort_values("delta", ascending=False, kind="stable")
    np.testing.assert_allclose(heights, expected["delta"], rtol=0, atol=1e-12)
    np.testing.assert_allclose([p.vertices[:4, 0].mean() for p in paths], np.arange(43))
    colours = bars.get_facecolors()
    assert all(tuple(c) == to_rgba("#009E73") for c in colours[expected["delta"].to_numpy() > 0])
    assert all(tuple(c) == to_rgba("#D55E00") for c in colours[expected["delta"].to_numpy() < 0])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(expected.index)
    assert any(list(line.get_ydata()) == [0, 0] for line in ax.lines)  # zero line
    assert "nDCG@10" in ax.get_ylabel() and "33 better, 9 worse, 1 equal" in ax.get_title()


def deltas(n: int, systems: int = 1, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.random((n, systems)) - 0.5, index=pd.Index([f"q{i:03d}" for i in range(n)], name="qid"),
                        columns=[f"s{j}" for j in range(systems)])


def test_delta_labels_qids_only_for_one_system_up_to_60_queries():
    for n, labelled in ((60, True), (61, False)):
        ax = plots.per_query_delta(deltas(n), "b", "5").axes[0]
        assert len(ax.collections[0].get_paths()) == n
        assert len(ax.get_xticklabels()) == (n if labelled else 0)
    many = plots.per_query_delta(deltas(20, 2), "b", "5")
    assert all(len(ax.get_xticklabels()) == 0 for ax in many.axes if ax.get_visible())


def test_a_qid_tick_label_is_the_id_or_its_two_ends_for_ids_of_every_length():
    limit = figure_style.MAX_QID_LABEL
    for qid in ids_of_every_length():
        shown = figure_style.qid_label(qid)
        if len(qid) <= limit:
            assert shown == qid
        else:
            head, tail = shown.split("…")
            assert len(shown) == limit and qid.startswith(head) and qid.endswith(tail), (qid, shown)
            assert len(head) - len(tail) in (0, 1)
    assert figure_style.qid_label("$" * 40) == figure_style.literal("$" * 12 + "…" + "$" * 11)


def test_long_qids_leave_the_labelled_figures_their_axes():
    """Query ids of 1 to 4,096 characters, hex and not (a sha256 has 64), under the bars and the heatmap:
    the constrained layout fits (it would warn that the axes collapsed), the labels are qid_label's."""
    ids = ids_of_every_length()
    few, more = ([ids[i] for i in np.linspace(0, len(ids) - 1, count).round().astype(int)] for count in (60, 120))
    for figure, shown in ((plots.per_query_delta(deltas(60).set_axis(few), "b", "5"), few),
                          (plots.delta_heatmap(deltas(120, 2).set_axis(more), "5", "b"), more)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            figure.get_layout_engine().execute(figure)
        ax = figure.axes[0]
        assert ax.get_position().width > 0.5 and ax.get_position().height > 0.2
        assert sorted(t.get_text() for t in ax.get_xticklabels()) == sorted(map(figure_style.qid_label, shown))


def test_ties_are_counted_apart_from_wins_and_losses():
    table = pd.DataFrame({"r": [0.5, 0.7, 0.2, 0.0], "b": [0.5, 0.3, 0.4, 0.0]}, index=pd.Index(list("abcd"), name="qid"))
    scatter = plots.per_query_scatter(table, ["r"], "b", "10").axes[0]
    assert scatter.get_title() == "r\n1 better, 1 worse, 2 equal"
    delta = plots.per_query_delta(table[["r"]].sub(table["b"], axis=0), "b", "10").axes[0]
    assert "1 better, 1 worse, 2 equal" in delta.get_title()
    assert [t.get_text() for t in delta.get_legend().get_texts()] == ["r better: 1", "b better: 1"]
    assert [t.get_text() for t in delta.get_xticklabels()] == ["b", "a", "d", "c"]  # ties in qid order


def test_heatmap_is_the_deltas_with_queries_sorted_by_mean_delta(three):
    figure = three.plot_delta_heatmap("10")
    ax = figure.axes[0]
    image = ax.images[0].get_array()
    expected = three.deltas_at("10")
    order = sorted(range(len(expected)), key=lambda i: (-expected.iloc[i].mean(), i))
    np.testing.assert_allclose(np.asarray(image), expected.iloc[order].to_numpy().T, rtol=0, atol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(three.names)
    assert [t.get_text() for t in ax.get_xticklabels()] == list(expected.index[order])
    assert len(figure.axes) == 2  # the colour bar
    big = plots.delta_heatmap(deltas(500, 3), "10", "b").axes[0]
    assert len(big.get_xticklabels()) == 0 and "500 queries" in big.get_xlabel()


def test_wins_ties_losses_bars_are_the_shares(three):
    ax = three.plot_wins_ties_losses("10").axes[0]
    counts = three.comparisons.xs(("nDCG", 10), level=("measure", "k"))[["wins", "ties", "losses"]]
    names = list(counts.index)[::-1]
    widths = np.array([patch.get_width() for patch in ax.patches]).reshape(3, len(names))  # wins, ties, losses
    np.testing.assert_allclose(widths.T, counts.loc[names].to_numpy() / 43, rtol=0, atol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == names


def test_pairwise_matrix_shows_every_p_value_and_the_letters(three):
    test = three.pairwise
    ax = three.plot_pairwise().axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{name} ({test.letters[name]})" for name in test.names]
    shown = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    for i, a in enumerate(test.names):
        for j, b in enumerate(test.names):
            if i != j:
                p = test.pvalues.at[a, b]
                assert shown[(i, j)] == ("<.0001" if p < 1e-4 else "1" if p == 1 else f"{p:.4f}".lstrip("0"))


def test_ecdf_has_one_step_per_query_and_ends_at_one(one, pairs10):
    ax = one.plot_ecdf("10").axes[0]
    assert [line.get_label() for line in ax.lines] == ["monoT5", "BM25"]
    for line, column in zip(ax.lines, ("run", "baseline")):
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert len(x) == 44 and y[0] == 0 and y[-1] == 1
        assert np.count_nonzero(np.diff(y) > 0) == 43
        np.testing.assert_allclose(x[1:], np.sort(pairs10[column]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(y[1:], np.arange(1, 44) / 43)
    assert "nDCG@10" in ax.get_title() and "43 queries" in ax.get_title()


def test_png_is_byte_identical_across_renders_and_carries_no_version(three):
    def build() -> Figure:
        return three.plot_pairwise()
    first, second = figure_style.figure_to_png_bytes(build()), figure_style.figure_to_png_bytes(build())
    assert first.startswith(PNG_SIGNATURE) and len(first) > 10_000
    assert first == second
    assert b"Software" not in first and b"matplotlib" not in first.lower()
    assert matplotlib.__version__.encode() not in first
    uri = figure_style.figure_to_data_uri(build())
    assert uri.startswith("data:image/png;base64,") and base64.b64decode(uri.split(",", 1)[1]) == first


def savefig_png(figure: Figure) -> bytes:
    """matplotlib's own PNG of figure (savefig drawing it twice), as figure_to_png_bytes promises to equal."""
    import io

    buffer = io.BytesIO()
    with matplotlib.rc_context(figure_style.RC):
        figure.savefig(buffer, format="png", dpi=figure.dpi, metadata={"Software": None})
    return buffer.getvalue()


@pytest.fixture(scope="module")
def many_queries():
    """3,000 random queries, 2 systems and a baseline: the binned heatmap, the sampled points, the 2-D histogram."""
    rng = np.random.default_rng(5)
    qids = [f"q{i}" for i in range(3_000)]
    qrels = pd.DataFrame({"qid": qids, "docid": ["d1"] * 3_000, "rel": rng.integers(1, 3, 3_000)})

    def run(seed: int) -> pd.DataFrame:
        ranks = np.random.default_rng(seed).integers(1, 12, 3_000)
        rows = [(q, f"d{k}", -float(k)) for q, rank in zip(qids, ranks) for k in {1: [1, 2], 11: [2, 3]}.get(rank, [2, 1])]
        return pd.DataFrame(rows, columns=["qid", "docid", "score"])

    return compare_runs({"A": run(1), "B": run(2)}, qrels, run(3), cutoffs="1,3", n_resamples=200)


@pytest.mark.parametrize("name", ["three", "many_queries"])
def test_png_bytes_are_savefig_s_own(name, request):
    """figure_to_png_bytes draws once where savefig draws twice: the bytes must not change for it."""
    experiment = request.getfixturevalue(name)
    methods = ("plot_ndcg_by_cutoff", "plot_distribution", "plot_delta_heatmap", "plot_wins_ties_losses",
               "plot_pairwise", "plot_scatter", "plot_delta_bars", "plot_ecdf")
    for method in methods:
        ours = figure_style.figure_to_png_bytes(getattr(experiment, method)())
        assert ours == savefig_png(getattr(experiment, method)()), method
    figure = experiment.plot_delta_heatmap()  # the layout engine is the figure's again afterwards
    engine = figure.get_layout_engine()
    figure_style.figure_to_png_bytes(figure)
    assert figure.get_layout_engine() is engine


def test_the_resolved_patch_colour_draws_the_same_pixels(three, monkeypatch):
    """figure_style.rc resolves patches' "C0" once per figure instead of once per patch: same bytes as without."""
    methods = ("plot_ndcg_by_cutoff", "plot_distribution", "plot_delta_heatmap", "plot_wins_ties_losses",
               "plot_pairwise", "plot_scatter", "plot_delta_bars", "plot_ecdf")
    resolved = [figure_style.figure_to_png_bytes(getattr(three, method)()) for method in methods]
    monkeypatch.setattr(figure_style, "rc", lambda: dict(figure_style.RC))
    assert matplotlib.rcParams["patch.facecolor"] == "C0"
    assert [figure_style.figure_to_png_bytes(getattr(three, method)()) for method in methods] == resolved


def test_svg_is_deterministic(one):
    first, second = (figure_style.figure_to_svg(one.plot_ecdf()) for _ in range(2))
    assert first == second and first.lstrip().startswith("<?xml") and "<dc:date>" not in first


def test_names_and_qids_from_data_are_drawn_literally():
    hostile = "$x$ <script>alert(1)<script> 100%"  # a given name: no '/', '=' or backslash
    baseline = r"BM25 $\notacommand{$ </b>"  # a name taken from a run tag may hold them
    qids = ["$a$", "$b$ <i>", "c", "d"]
    runs = {hostile: pd.DataFrame({"qid": qids, "docid": ["x"] * 4, "score": [1.0] * 4}),
            "other $y$": pd.DataFrame({"qid": qids, "docid": ["y"] * 4, "score": [1.0] * 4})}
    qrels = pd.DataFrame({"qid": qids * 2, "docid": ["x"] * 4 + ["y"] * 4, "rel": [1, 0, 2, 1, 0, 1, 1, 2]})
    base = load_run(pd.DataFrame({"qid": qids * 2, "docid": ["y"] * 4 + ["x"] * 4, "score": [2.0] * 4 + [1.0] * 4}))
    base = dataclasses.replace(base, tag=baseline)
    experiment = compare_runs(runs, qrels, base, cutoffs="1,10", n_resamples=200)
    assert experiment.baseline_name == baseline
    for method in ("plot_ndcg_by_cutoff", "plot_distribution", "plot_delta_heatmap", "plot_wins_ties_losses",
                   "plot_pairwise", "plot_scatter", "plot_delta_bars", "plot_ecdf"):
        figure = getattr(experiment, method)()
        figure.draw_without_rendering()  # parses every text: bad math text would raise here
        shown = " | ".join(drawn_text(t) for t in figure.findobj(matplotlib.text.Text) if t.get_text())
        assert hostile in shown or hostile[:20] in shown, method
        assert baseline in shown or method == "plot_delta_heatmap", method
        assert figure_style.figure_to_png_bytes(figure).startswith(PNG_SIGNATURE)
    heatmap = experiment.plot_delta_heatmap()
    heatmap.draw_without_rendering()
    assert sorted(drawn_text(t) for t in heatmap.axes[0].get_xticklabels()) == sorted(qids)


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


# --- many queries: aggregates above a threshold (lowered here through the functions' parameters) ---


def ndcg_table(n: int, systems: int = 2, seed: int = 5) -> pd.DataFrame:
    """n queries x systems of NDCG-like values (a third of them 0), the baseline 'b' last."""
    rng = np.random.default_rng(seed)
    values = rng.random((n, systems + 1)) * (rng.random((n, systems + 1)) > 0.33)
    return pd.DataFrame(values, index=pd.Index([f"q{i:04d}" for i in range(n)], name="qid"),
                        columns=[*[f"s{j}" for j in range(systems)], "b"])


def test_distribution_points_are_an_even_sample_above_max_points_and_the_boxes_every_query():
    table = ndcg_table(250)
    ax = plots.distribution(table, "10", "b", max_points=40).axes[0]
    shown = plots.even_sample(250, 40)
    assert len(shown) == 40 and shown[0] == 0 and shown[-1] == 249
    for collection, column in zip(ax.collections, ["b", "s0", "s1"]):
        np.testing.assert_array_equal(collection.get_offsets()[:, 1], table[column].to_numpy()[shown])
    medians = {round(float(line.get_ydata()[0]), 12) for line in ax.lines
               if line.get_color() == "black" and np.ptp(line.get_ydata()) == 0}
    assert all(round(float(table[column].median()), 12) in medians for column in table)  # boxes: all 250
    assert "250 queries" in ax.get_title() and "even sample of 40 queries" in ax.get_title()
    assert len(plots.distribution(table, "10", "b", max_points=250).axes[0].collections[0].get_offsets()) == 250


def test_heatmap_bins_the_sorted_queries_above_max_queries():
    table = deltas(130, 3)
    ax = plots.delta_heatmap(table, "10", "b", max_queries=100, bins=10).axes[0]
    image = np.asarray(ax.images[0].get_array())
    order = sorted(range(130), key=lambda i: (-table.iloc[i].mean(), i))
    expected = [table.iloc[order[start:start + 13]].mean().to_numpy() for start in range(0, 130, 13)]
    np.testing.assert_allclose(image, np.array(expected).T, rtol=0, atol=1e-12)
    assert "130 queries" in ax.get_xlabel() and "10 bins of 13" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0%", "25%", "50%", "75%", "100%"]
    uneven = plots.heatmap_bins(np.arange(7.0)[:, None], 3)  # sizes 3, 2, 2
    np.testing.assert_array_equal(uneven[:, 0], [1.0, 3.5, 5.5])


def test_scatter_is_a_2d_histogram_of_every_query_above_max_points():
    table = ndcg_table(300, systems=1)
    figure = plots.per_query_scatter(table, ["s0"], "b", "10", max_points=100)
    ax = figure.axes[0]
    counts = np.histogram2d(table["b"], table["s0"], bins=np.linspace(0, 1, plots.SCATTER_BINS + 1))[0]
    image = np.asarray(ax.images[0].get_array().filled(0))
    np.testing.assert_array_equal(np.nan_to_num(image), counts.T)  # rows: the system, columns: the baseline
    assert image.sum() == 300 and not ax.collections  # no point per query
    delta = table["s0"] - table["b"]
    assert ax.get_title() == f"s0\n{(delta > 0).sum()} better, {(delta < 0).sum()} worse, {(delta == 0).sum()} equal"
    assert "300 queries" in figure.get_suptitle() and "2-D histogram" in figure.get_suptitle()


def test_delta_bars_become_the_sorted_area_above_max_bars():
    table = deltas(300, 2)
    table.iloc[:20] = 0.0  # ties: a flat stretch at 0
    figure = plots.per_query_delta(table, "b", "10", max_bars=100)
    for ax, name in zip(figure.axes, table.columns):
        curve = ax.lines[0]
        ranks = np.asarray(curve.get_xdata()).astype(int)
        ordered = np.sort(table[name].to_numpy())[::-1]
        np.testing.assert_array_equal(np.asarray(curve.get_ydata()), ordered[ranks])
        assert ranks[0] == 0 and ranks[-1] == 299
        assert all(len(collection.get_paths()) < 10 for collection in ax.collections)  # no bar per query
        wins, losses = int((ordered > 0).sum()), int((ordered < 0).sum())
        assert ax.get_title() == f"{name}\n{wins} better, {losses} worse, {300 - wins - losses} equal"
        assert [tuple(c.get_facecolor()[0]) for c in ax.collections[:2]] == [to_rgba("#009E73"), to_rgba("#D55E00")]
    ranks, values = plots.sorted_curve(np.array([3.0, 2.0, 1.0, 0.0, 0.0, -1.0, -2.0]), points=2)
    assert list(ranks) == [0, 2, 3, 4, 5, 6] and list(values) == [3, 1, 0, 0, -1, -2]  # both sides of each sign change


def test_report_captions_say_when_a_figure_aggregates(monkeypatch, three):
    from ndcg_report.analysis import content

    report = type("Report", (), {"experiment": three})()  # all figure_drawers reads
    captions = [caption for caption, _ in content.figure_drawers(report)]
    assert not any("queries:" in caption or "binned" in caption for caption in captions)  # 43 queries: as before
    for name, value in (("MAX_POINTS", 20), ("MAX_HEATMAP_QUERIES", 30), ("MAX_BARS", 30)):
        monkeypatch.setattr(plots, name, value)
    drawers = content.figure_drawers(report)
    captions = [caption for caption, _ in drawers]
    assert "points for an even sample of 20" in captions[1] and "binned: 43 bins of about 1" in captions[2]
    assert "2-D histogram" in captions[5] and "drawn as an area" in captions[6]
    assert drawers[5][1]().axes[0].images and drawers[6][1]().axes[0].lines  # and the figures do it
