"""What a report kernel pays on its first calls, paid once in the fork server before it forks the kernels.

matplotlib's fonts, text layout and PNG and SVG writers, the statistics' lazy imports and first-call set-up,
pandas' HTML: a tiny report's worth of each on made-up numbers, nothing read or written, every warning
silenced (and the warnings' registries left stale, so a kernel warns what it would have warned). Both
kernels fork from the warmed server, so neither pays it; a failure here costs only the time it saves.
"""

from __future__ import annotations

import warnings

import numpy as np


def warm_up() -> None:
    """Run each warm-up in turn; an exception in one is dropped (the kernels then pay that first call)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in (_statistics, _figures, _tables):
            try:
                step()
            except Exception:  # noqa: BLE001 - an optimisation only: the kernel does the real work
                pass


def _statistics() -> None:
    """The paired tests, both bootstraps, the randomization test, the Tukey HSD and tau-b's interval."""
    import pandas as pd

    from ndcg_report.core.evaluation_pass import evaluate_pass
    from ndcg_report.inputs.tables import load_qrels, load_run
    from ndcg_report.stats.paired import compare_systems
    from ndcg_report.stats.pairwise import pairwise_test
    from ndcg_report.stats.rank_correlation import tau_b_interval
    from ndcg_report.stats.resampling import mean_interval
    from ndcg_report.core.presets import measure_set

    qids = [f"q{i}" for i in range(6)]
    qrels = load_qrels({qid: {"d1": 1, "d2": 2, "d3": 0} for qid in qids})
    runs = {name: load_run({qid: {"d1": 1.0 + i * shift, "d2": 2.0 - i * shift, "d3": 0.5} for i, qid in enumerate(qids)})
            for name, shift in (("a", 0.3), ("b", -0.2), ("c", 0.1))}
    measures = measure_set("", "nDCG@10 AP", None, None, False).measures
    evaluations = {name: evaluate_pass(run, qrels, measures=measures) for name, run in runs.items()}
    compare_systems({name: evaluations[name] for name in ("a", "b")}, evaluations["c"], "c", n_resamples=50)
    compare_systems({"a": evaluations["a"]}, evaluations["c"], "c", n_resamples=50, verdicts_only=True)
    table = pd.DataFrame({name: e.values[:, 0] for name, e in evaluations.items()}, index=pd.Index(qids, name="qid"))
    pairwise_test(table, measures[0], 42, 50, 0.05, 5_000)
    mean_interval(table["a"].to_numpy(), np.random.default_rng(0), 50, 0.95)
    scores = table.to_numpy().T
    tau_b_interval(scores, scores[::-1], np.random.default_rng(0), 50, 0.95)


def _figures() -> None:
    """A one-panel figure and small multiples with titles, ticks, a legend and a colour map, as PNG and SVG."""
    from ndcg_report.analysis.figure_style import outer_labels, panel_title, panels, rendered, set_title
    from ndcg_report.analysis.figure_style import new_figure

    figure, ax = new_figure()
    ax.plot([0, 1], [0, 1], marker="o", label="a")
    ax.imshow(np.eye(2), cmap="magma_r")
    ax.text(0.5, 0.5, "0.05")
    set_title(ax, "warm-up")
    ax.legend()
    rendered(figure)
    figure, axes = panels(2, square=True)
    for ax in axes:
        ax.scatter([0.1, 0.2], [0.3, 0.4])
        panel_title(ax, "system", "detail")
    outer_labels(axes)
    rendered(figure)


def _tables() -> None:
    """pandas' HTML of a small table, as the report's tables are written."""
    import pandas as pd

    from ndcg_report.analysis.html import table_html

    table_html(pd.DataFrame({"mean": [0.5, 0.25], "n": [3, 4]}, index=["a", "b"]))
