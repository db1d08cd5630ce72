"""Why a query moved: each query's top k of the baseline and of every system, side by side.

Each top k shows labels, unjudged ones marked, rank moves against the baseline and a short text when a
corpus is given; below it, the relevant documents each system left out of its top k, and how much its
ranking changed (RBO). Offline
HTML: <details> blocks, no script, every text escaped, each block at a stable anchor `#q-<qid>`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from urllib.parse import quote

import numpy as np

from ndcg_report.core.measures.names import level_text
from ndcg_report.inputs.documents import document_texts
from ndcg_report.analysis.html import escape, text_html
from ndcg_report.analysis.text import signed

if TYPE_CHECKING:
    import pandas as pd

    from ndcg_report.analysis.experiment import Experiment
    from ndcg_report.analysis.report_model import Report

MAX_DRILLDOWNS = 200  # queries with a drill-down block; above it the largest wins, losses and spreads
# Ranked documents of one system the drill-downs may show (queries x depth), checked with the parameters:
# 200 queries at depth 250, or 5,000 at depth 10; each is a table row in both kernels and the HTML
# (200,000 of them took 1.3 GB more in a build); a deeper pool is `ndcg-report pool`.
MAX_DRILLDOWN_ROWS = 50_000
SNIPPET_CHARACTERS = 140
MISSED_SHOWN = 20  # relevant documents a system left out of its top k named in a block; the rest counted
MAX_DRILL_SYSTEMS = 6  # systems side by side in a block: above it, those that moved most on that query


def anchor(qid: str) -> str:
    """The id of a query's drill-down block: `q-` and the qid, percent-encoded (stable, one token)."""
    return "q-" + quote(str(qid), safe="")


def drilldown_queries(experiment: "Experiment", limit: int = MAX_DRILLDOWNS) -> tuple[list[str], str]:
    """(the queries that get a block, in the per-query table's order; a sentence saying which). All
    paired queries up to `limit`; above it, in turn, each system's largest loss and largest win against
    the baseline and the query with the largest spread across the systems, until `limit` are chosen."""
    table = experiment.scores()
    if limit <= 0 or table.empty:
        return [], "No query has a drill-down (--drilldown 0)." if limit <= 0 else ""
    deltas = experiment.deltas()
    order = np.lexsort((np.arange(len(table)), -deltas.mean(axis=1).to_numpy()))  # positions, the table's order
    if len(order) <= limit:
        return list(table.index[order]), f"Every one of the {len(order):,} queries has its rankings below, in the table's order."
    candidates = []  # positions of queries, most telling first
    for name in experiment.names:
        ranked = np.argsort(deltas[name].to_numpy(), kind="stable")
        candidates += [ranked, ranked[::-1]]  # largest losses, largest wins
    values = table.to_numpy()
    candidates.append(np.argsort(-(values.max(axis=1) - values.min(axis=1)), kind="stable"))
    chosen = np.zeros(len(table), dtype=bool)
    count, position = 0, 0
    while count < limit:
        for candidate in candidates:
            if count < limit and not chosen[candidate[position]]:
                chosen[candidate[position]] = True
                count += 1
        position += 1
    shown = list(table.index[order[chosen[order]]])
    return shown, (f"{len(shown):,} of the {len(order):,} queries have their rankings below: each system's largest "
                   "wins and losses against the baseline and the queries with the largest spread across the "
                   "systems (--drilldown sets how many).")


def section_html(report: "Report") -> str:
    """The report's drill-down section: which queries got one, then their blocks, with document text
    from --docs (or the BM25 corpus) for the documents shown."""
    experiment = report.experiment
    qids, note = drilldown_queries(experiment, report.params.drilldown)
    if not qids:
        return text_html(note, "p", "note") if note else ""
    source = report.params.document_source
    texts = document_texts(source, shown_documents(experiment, qids)) if source is not None else {}
    note += (f" Document text from {source.name} ({len(texts):,} of the documents shown)." if source is not None
             else " Give --docs CORPUS (BEIR corpus.jsonl or docid<TAB>text) to see each document's text.")
    return text_html(note, "p", "note") + drilldown_html(experiment, qids, texts)


def shown_documents(experiment: "Experiment", qids: list[str]) -> set[str]:
    """The docids a drill-down of `qids` shows: every system's top k and the relevant ones left out."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.array(qids, pa.string())
    found: set[str] = set()
    for ranked in experiment.rankings.values():
        for table in (ranked.top, ranked.relevant):
            found.update(table.filter(pc.is_in(table["qid"], value_set=wanted))["docid"].to_pylist())
    return found


def drilldown_html(experiment: "Experiment", qids: list[str], texts: dict[str, str] | None = None) -> str:
    """The drill-down blocks of `qids`, one <details> each (collapsed)."""
    if not qids:
        return ""
    texts = texts or {}
    systems = [experiment.baseline_name, *experiment.names]
    ranked = experiment.rankings
    overlap = experiment.rank_overlap()
    scores = experiment.scores()
    side_by_side = {qid: moved_most(systems, scores.loc[qid]) for qid in qids}
    sides = {name for shown in side_by_side.values() for name in shown}  # the lists some block shows
    top = {name: _by_query(ranked[name].top, qids) for name in systems if name in sides}
    relevant = {name: _by_query(ranked[name].relevant, qids) for name in systems if name in sides}
    depth, level = experiment.drilldown_depth, level_text(experiment.rel_level)
    topics = experiment.topics
    blocks = []
    for qid in qids:
        blocks.append(_block(qid, topics.get(qid, "") if topics is not None else "", systems, side_by_side[qid],
                             scores.loc[qid], {name: top[name].get(qid) for name in top},
                             {name: relevant[name].get(qid) for name in relevant},
                             overlap.loc[qid] if qid in overlap.index else None, texts, depth,
                             experiment.headline.label))
    legend = (f'<p class="note">In each block: labels <b class="l">2</b> on green are relevant (label {escape(level)} '
              'or above), on grey judged but not relevant, <b class="l u">?</b> unjudged (counted as not relevant); '
              f"↑n / ↓n: the document's move against {escape(experiment.baseline_name)}'s list, new: not in its top "
              f"{depth}; the documents' text under the table, where given.</p>")
    return legend + "".join(blocks)


def moved_most(systems: list[str], values: pd.Series, limit: int = MAX_DRILL_SYSTEMS) -> list[str]:
    """The baseline (systems[0]) and, of the others, all if at most `limit`, else the `limit` whose value on the
    query is furthest from the baseline's (the first given of a tie), in the order given."""
    base, others = systems[0], systems[1:]
    if len(others) <= limit:
        return list(systems)
    moves = {name: abs(float(values[name]) - float(values[base])) for name in others}
    kept = set(sorted(others, key=lambda name: (-moves[name], others.index(name)))[:limit])
    return [base, *(name for name in others if name in kept)]


def _block(qid: str, text: str, systems: list[str], shown: list[str], values: pd.Series,
           tops: dict[str, list[dict] | None], relevants: dict[str, list[dict] | None],
           overlap: pd.Series | None, texts: dict[str, str], depth: int, label: str) -> str:
    """One query's block: every system's value (systems, the baseline first), the lists of those shown side by
    side (moved_most)."""
    base = systems[0]
    head = " · ".join(f"{escape(name)} {values[name]:.4f}" + (f" ({signed(values[name] - values[base])})"
                                                               if name != base else "") for name in systems)
    summary = (f'<summary><span class="qid">{escape(qid)}</span>'
               + (f' <span class="qtext">{escape(text)}</span>' if text else "")
               + f' <span class="heads">{escape(label)}: {head}</span></summary>')
    every, systems = systems, shown
    chosen = "" if len(systems) == len(every) else (
        f'<p class="note">Side by side: {escape(base)} and the {len(systems) - 1} of the {len(every) - 1} systems whose '
        f"{escape(label)} on this query is furthest from {escape(base)}'s; every system's value is in the line above and "
        "its rank overlap with the baseline's list below.</p>")
    base_ranks = {row["docid"]: row["rank"] for row in tops[base] or []}
    header = '<th class="num">rank</th>' + "".join(
        f'<th class="text">{escape(name)}' + (" <small>(baseline)</small>" if name == base else "") + "</th>"
        for name in systems)
    rows, shown = [], {}
    for rank in range(1, depth + 1):
        cells = [f'<td class="num">{rank}</td>']
        for name in systems:
            cells.append(_document_cell(tops[name], rank, base_ranks if name != base else None, shown))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    missed = "".join(_missed(name, tops[name], relevants[name], depth) for name in systems)
    changed = ""
    if overlap is not None:
        changed = ("<p class=\"note\">Rank-biased overlap with " + escape(base) + "'s top " + str(depth) + ": "
                   + ", ".join(f"{escape(name)} {_number(overlap[name])}" for name in every[1:]) + ".</p>")
    documents = [f"<tr><td><code>{escape(docid)}</code></td><td>{escape(_short(texts[docid]))}</td></tr>"
                 for docid in shown if docid in texts]
    listed = f'<table class="texts"><tbody>{"".join(documents)}</tbody></table>' if documents else ""
    return (f'<details class="drill" id="{anchor(qid)}">{summary}<div class="drill-body">{chosen}'
            f'<table class="ndcg-table drill"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'{listed}{missed}{changed}</div></details>')


def _document_cell(top: list[dict] | None, rank: int, base_ranks: dict | None, shown: dict) -> str:
    """One document of a top k: its label (`?` unjudged), its id and its move against the baseline;
    the cell's class says relevant (r), judged (j) or unjudged (u). Adds the docid to `shown`."""
    if top is None or rank > len(top):
        return '<td class="d e">–</td>'
    row = top[rank - 1]
    docid, label = row["docid"], row["label"]
    shown.setdefault(docid, None)
    if label is None or (isinstance(label, float) and math.isnan(label)):
        badge, css = '<b class="l u">?</b>', "u"
    else:
        badge, css = f'<b class="l">{_number(label)}</b>', "r" if row["relevant"] else "j"
    move = ""
    if base_ranks is not None:
        before = base_ranks.get(docid)
        if before is None:
            move = ' <i class="mv new">new</i>'
        elif before != rank:
            up = before - rank
            move = f' <i class="mv {"up" if up > 0 else "down"}">{"↑" if up > 0 else "↓"}{abs(up)}</i>'
    return f'<td class="d {css}">{badge} <code>{escape(docid)}</code>{move}</td>'


def _missed(name: str, top: list[dict] | None, relevant: list[dict] | None, depth: int) -> str:
    """The relevant documents a system left out of its top k, with their labels and ranks."""
    if not relevant:
        return ""
    in_top = {row["docid"] for row in top or []}
    left = [row for row in relevant if row["docid"] not in in_top]
    if not left:
        return f'<p class="missed"><b>{escape(name)}</b>: every relevant document is in its top {depth}.</p>'
    shown = [f'<code>{escape(d)}</code> ({_number(l)}, '  # the first MISSED_SHOWN; the others counted
             + (f"rank {int(r)}" if r is not None and not (isinstance(r, float) and math.isnan(r)) else "not retrieved")
             + ")" for d, l, r in ((row["docid"], row["label"], row["rank"]) for row in left[:MISSED_SHOWN])]
    more = f" and {len(left) - MISSED_SHOWN} more" if len(left) > MISSED_SHOWN else ""
    return (f'<p class="missed"><b>{escape(name)}</b> left {len(left)} relevant document'
            f'{"s" if len(left) != 1 else ""} out of its top {depth}: {", ".join(shown)}{more}.</p>')


def _by_query(table, qids: list[str]) -> dict[str, list[dict]]:
    """The rows of `qids` in a Rankings table, split by qid (a list of row dicts per query, in the table's order)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    grouped: dict[str, list[dict]] = {}
    columns = table.filter(pc.is_in(table["qid"], value_set=pa.array(qids, pa.string()))).to_pydict()
    names = list(columns)
    for values in zip(*columns.values()):  # to_pylist's rows, built from the columns: several times faster
        row = dict(zip(names, values))
        grouped.setdefault(row["qid"], []).append(row)
    return grouped


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= SNIPPET_CHARACTERS else text[: SNIPPET_CHARACTERS - 1] + "…"


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.2f}"
