"""What the suite notebook shows of a SuiteReport: verdicts, the tables of every measure, the tests, figures.

Each function takes the SuiteReport and returns HTML (every name from an input escaped, a collection's
name linked to its report where one was built) or figures as (caption, PNG bytes).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ndcg_report.analysis import content
from ndcg_report.analysis.html import details_html, escape, list_html, table_html, text_html
from ndcg_report.analysis.tables.blocks import mark_interval_disagreements
from ndcg_report.analysis.tables.display import MISSING, marks_note, suite_table_html, wilcoxon_html
from ndcg_report.analysis.tables.suite_report import SuiteReport
from ndcg_report.stats.across_collections import NO_POWER


def verdicts(report: SuiteReport) -> list[str]:
    """One line per system on the headline: its mean over the collections it is in against the
    baseline's over the same, wins/ties/losses over them, and the Wilcoxon verdict over collections."""
    suite, test = report.suite, report.suite.tests
    label, base = suite.headline.label, suite.baseline_name
    means = suite.means()
    lines = []
    for name in suite.names:
        present = means.loc[name].notna()
        row = test.wilcoxon.loc[name]
        if row["verdict"] == NO_POWER:
            verdict = (f"too few collections for a test over collections (a verdict needs at least "
                       f"{test.min_collections})")
        else:
            verdict = (f"Wilcoxon over collections, Holm p {row['p_holm']:.4f}: "
                       + ({"better": f"better than {base}", "worse": f"worse than {base}"}
                          .get(row["verdict"], f"not significantly different from {base}")))
        lines.append(
            f"{name}: {label} {means.loc[name][present].mean():.4f} over {int(present.sum())} of "
            f"{len(suite.collections)} collection(s), against {base}'s {means.loc[base][present].mean():.4f} over "
            f"the same; above {base} in {row['wins']}, equal in {row['ties']}, below in {row['losses']}; {verdict}.")
    return lines


def warnings_html(report: SuiteReport) -> str:
    """The suite's own warnings, then each collection's data warnings (its report's), folded."""
    parts = [list_html(report.warnings)]
    for name, collection in report.reports.items():
        if collection.warnings:
            count = len(collection.warnings)
            parts.append(details_html(f"{name}: {count} warning{'' if count == 1 else 's'} of its data checks",
                                      list_html(collection.warnings)))
    return "".join(parts)


def collections_table(report: SuiteReport) -> str:
    """One row per collection: its name (linked to its report if built), systems, queries, qrels and baseline."""
    rows = []
    for name, collection in report.reports.items():
        experiment, p = collection.experiment, collection.params
        rows.append({"collection": _linked(name, report.links), "systems": ", ".join(experiment.names),
                     "queries": len(experiment.scores(experiment.headline)), "qrels": p.qrels.name,
                     "baseline": p.baseline.name if p.baseline else MISSING, "measures": ", ".join(experiment.labels)})
    return table_html(pd.DataFrame(rows), index=False, html_columns=("collection",),
                      text_columns=("collection", "systems", "qrels", "baseline", "measures"))


def files_table(report: SuiteReport) -> pd.DataFrame:
    """Every collection's input files (analysis.content.files_table), a collection column first."""
    return pd.concat([content.files_table(collection).assign(collection=name)
                      .loc[:, lambda f: ["collection", *[c for c in f.columns if c != "collection"]]]
                      for name, collection in report.reports.items()], ignore_index=True)


def parameters_table(report: SuiteReport) -> pd.DataFrame:
    """Parameters x collections: each collection's report parameters (analysis.content.parameters_table)."""
    table = pd.concat({name: content.parameters_table(collection)["value"]
                       for name, collection in report.reports.items()}, axis=1)
    table.index.name = "parameter"
    return table.fillna(MISSING)


def measure_tables(report: SuiteReport) -> str:
    """The systems x collections table of every measure, the headline first, and the legend of the marks."""
    suite = report.suite
    measures = [suite.headline, *[m for m in suite.measures if m != suite.headline]]
    parts = []
    for measure in measures:
        label = measure.label
        caption = f"{label} (headline)" if measure == suite.headline else label
        table = suite_table_html(suite.means(measure), suite.significance.loc[label], suite.table.loc[label])
        parts += [text_html(caption, "h4"), _linked_headers(table, report.links)]
    alphas = [e.alpha for e in suite.experiments.values()]
    parts.append(text_html(marks_note(suite.tests, alphas), "p", "note"))
    return "".join(parts)


def tests_html(report: SuiteReport) -> str:
    """The tests over collections of the headline: Wilcoxon per system against the baseline, Friedman,
    the Nemenyi post-hoc's mean ranks and critical difference, and what 'no power' means."""
    suite, test = report.suite, report.suite.tests
    base = escape(suite.baseline_name)
    ranks = test.mean_ranks.sort_values().map(lambda rank: MISSING if pd.isna(rank) else f"{rank:.2f}")
    ranks = ranks.rename("mean rank").to_frame()
    ranks.index.name = "system"
    groups = "; ".join(", ".join(group) for group in test.groups)
    power = (f"With {len(suite.collections)} collection(s) the tests over collections have no power: a Wilcoxon "
             f"verdict needs at least {test.min_collections} collections (and 6 at α = 0.05, where 5 give at best p = "
             "0.0625), so no verdict is printed; the table's marks are each collection's own tests over its queries.")
    return "".join([
        f"<h4>Each system against {base} over the collections ({escape(suite.headline.label)}): Wilcoxon "
        f"signed-rank on the collections' means, Holm over the systems</h4>",
        wilcoxon_html(test),
        text_html("collections: those with both the system and the baseline; T: Demšar's min(R+, R-), a tie split "
                  "between the signs (zero_method zsplit); verdict 'no power' where even every collection on one "
                  "side could not reach the level.", "p", "note"),
        text_html(f"All systems over the collections: Friedman, post-hoc {test.posthoc}", "h4"),
        text_html(test.summary(), "p"),
        table_html(ranks),
        text_html(f"Systems the post-hoc does not tell apart (mean ranks within the critical difference): "
                  f"{groups or 'none'}." if test.has_power else power, "p", "note"),
    ])


def figures(report: SuiteReport) -> list[tuple[str, bytes]]:
    """The delta per collection of the headline (every system, with its collection's interval) and the
    critical-difference diagram, as (caption, PNG bytes)."""
    from ndcg_report.analysis.figure_style import figure_to_png_bytes

    suite = report.suite
    label = suite.headline.label
    odd = mark_interval_disagreements(suite.cells, "collection", label)
    note = (f". Where a marker and its interval seem to disagree ({', '.join(odd)}: filled with an interval that "
            "includes 0, or hollow with one that excludes it), they come from two procedures: the marker is the "
            "collection's verdict (randomization test, Holm's step-down over its systems), the interval the "
            "family-adjusted bootstrap interval (Bonferroni over its systems); near the threshold they can differ "
            "either way, and the verdict follows the test") if odd else ""
    return [
        (f"{label}: each system's delta against {suite.baseline_name} per collection, with the interval of its "
         f"collection's verdict{note}", figure_to_png_bytes(suite.plot_deltas())),
        (f"{label}: critical-difference diagram of the mean ranks over collections ({suite.tests.posthoc})",
         figure_to_png_bytes(suite.plot_critical_difference())),
    ]


def _linked(name: str, links: Mapping[str, str]) -> str:
    """A collection's name as HTML: a link to its report if it has one."""
    link = links.get(name)
    return f'<a href="{escape(link)}">{escape(name)}</a>' if link else escape(name)


def _linked_headers(table: str, links: Mapping[str, str]) -> str:
    """A table's header cells naming a collection, linked to its report."""
    for name in links:
        for kind in ("num", "text"):
            table = table.replace(f'<th class="{kind}">{escape(name)}</th>',
                                  f'<th class="{kind}">{_linked(name, links)}</th>', 1)
    return table

