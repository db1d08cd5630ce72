"""HTML of the tables across blocks: systems x blocks with each block's marks, and the tests over collections.

Every name and number is escaped (analysis.html); a missing cell shows as '–', never as 0.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ndcg_report.analysis.html import ABOVE, BELOW, escape, table_html, text_html
from ndcg_report.analysis.tables.blocks import wide_marks, wide_means
from ndcg_report.stats.across_collections import AcrossCollections

MISSING = "–"
PARTIAL = "*"  # beside a mean over collections taken over fewer collections than the suite has


def marked_table(rows: pd.DataFrame, key: str, measure: str) -> pd.DataFrame:
    """Systems x blocks of one measure as text, from a block table (a suite's cells, key "collection",
    or group_table's rows, key "group"): each mean with 4 decimals, ▲/▼ where significantly above/below
    the baseline in that block's own family, '–' where missing. table_html() makes it HTML."""
    return marked_cells(wide_means(rows, key, measure), wide_marks(rows, key, measure))


def marked_cells(means: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """Means (systems x blocks) as text with the marks of the same shape (+1, -1, 0, NA)."""
    def cell(mean: float, mark: object) -> str:
        if pd.isna(mean):
            return MISSING
        sign = "" if pd.isna(mark) or mark == 0 else f" {ABOVE if mark > 0 else BELOW}"
        return f"{mean:.4f}{sign}"

    return pd.DataFrame([[cell(means.iat[i, j], marks.iat[i, j]) for j in range(means.shape[1])]
                         for i in range(means.shape[0])], index=means.index, columns=means.columns)


def suite_table_html(means: pd.DataFrame, marks: pd.DataFrame, over: pd.DataFrame) -> str:
    """The systems x collections table of one measure (means and marks as Suite.means and
    Suite.significance give them) with the columns over collections of Suite.table: mean (over how
    many; PARTIAL and a note below where fewer than all: not comparable with a mean over all), mean rank,
    wins/ties/losses against the baseline."""
    cells = marked_cells(means, marks)
    total = means.shape[1]
    cells["mean (collections)"] = [MISSING if pd.isna(m) else f"{m:.4f} ({int(n)})" if n == total
                                   else f"{m:.4f} ({int(n)} of {total}) {PARTIAL}"
                                   for m, n in zip(over["mean"], over["collections"])]
    cells["mean rank"] = [MISSING if pd.isna(r) else f"{r:.2f}" for r in over["mean_rank"]]
    cells["W/T/L"] = [MISSING if pd.isna(w) else f"{int(w)}/{int(t)}/{int(l)}"
                      for w, t, l in zip(over["wins"], over["ties"], over["losses"])]
    cells.index.name = "system"
    partial = [str(name) for name, n in zip(over.index, over["collections"]) if not pd.isna(n) and n < total]
    note = text_html(f"{PARTIAL} {', '.join(partial)}: the mean over the collections the system is in, fewer than "
                     f"the {total}; not comparable with a mean over all {total} (a collection it lacks may be harder "
                     "or easier than the others).", "p", "note") if partial else ""
    return table_html(cells, classes="ndcg-table suite-table") + note


def wilcoxon_html(test: AcrossCollections) -> str:
    """Each system against the baseline over the collections: Wilcoxon signed-rank, Holm over the systems."""
    w = test.wilcoxon
    frame = pd.DataFrame({
        "collections": w["collections"].astype(int),
        "W/T/L": [f"{a}/{b}/{c}" for a, b, c in zip(w["wins"], w["ties"], w["losses"])],
        "T": [MISSING if pd.isna(v) else f"{v:g}" for v in w["statistic"]],
        "p": [MISSING if pd.isna(v) else f"{v:.4f}" for v in w["pvalue"]],
        "p (Holm)": [MISSING if pd.isna(v) else f"{v:.4f}" for v in w["p_holm"]],
        "verdict": list(w["verdict"]),
    }, index=w.index)
    return table_html(frame, text_columns=("verdict",))


def marks_note(test: AcrossCollections, alphas: Iterable[float]) -> str:
    """The legend of a suite table's marks (`alphas`: the collections' significance levels) and of its
    columns over collections (text, to escape)."""
    levels = ", ".join(f"α = {alpha:g}" for alpha in sorted(set(alphas)))
    return (f"{ABOVE}/{BELOW}: significantly above/below {test.baseline_name} in that collection (its report's verdict: "
            f"randomization test, Holm over that collection's systems, {levels}); {MISSING}: the system or the "
            f"measure is missing there. Mean (collections): over the collections the system is in, and how many; "
            f"mean rank (1 = best) over the {len(test.ranked)} collection(s) that have every system; W/T/L: the "
            f"collections where the system's mean is above/equal to/below {test.baseline_name}'s.")


def suite_html(means: pd.DataFrame, marks: pd.DataFrame, over: pd.DataFrame, test: AcrossCollections,
               alphas: Iterable[float]) -> str:
    """What Jupyter shows for a Suite: one measure's table (suite_table_html), what the marks mean
    (`alphas`: the collections' significance levels), and the tests over collections."""
    base = test.baseline_name
    note = marks_note(test, alphas)
    ranks = ", ".join(f"{escape(name)} {rank:.2f}" for name, rank in test.mean_ranks.sort_values().items()
                      if np.isfinite(rank))
    return "".join([
        f"<h4>{escape(test.measure)}: {len(means.index) - 1} system(s) against {escape(base)} on "
        f"{len(means.columns)} collection(s)</h4>",
        suite_table_html(means, marks, over), text_html(note, "p", "note"),
        f"<h4>Over collections (Wilcoxon signed-rank against {escape(base)}, Holm over the systems; a verdict "
        f"needs at least {test.min_collections} collections)</h4>",
        wilcoxon_html(test), text_html(test.summary(), "p"),
        f"<p>Mean ranks (1 = best): {ranks or MISSING}</p>",
    ])
