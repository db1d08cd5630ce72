"""The batch's index.html: one row per report with its headline numbers, status and history figure.

The headline measure is nDCG@10 unless the report names another; the history figure shows it across
builds.

Offline and self-contained like the reports: inline CSS, no script, figures as PNG data URIs made
with matplotlib's Figure API (deterministic: figure_style.RC, no PNG metadata). Every text is escaped.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
from urllib.parse import quote
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ndcg_report.analysis.text import format_p
from ndcg_report.files import write_own_text

MAX_PLOTTED_BUILDS = 90
INDEX_GENERATOR = '<meta name="generator" content="ndcg-report batch index">'  # how a batch knows its own index
SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class ReportState:
    """What the index shows for one report."""

    name: str
    title: str
    status: str  # built, skipped, failed, building (now, in this batch) or pending (not started yet)
    step: str = ""  # failed: the failing step
    message: str = ""  # failed: the error; skipped: why
    seconds: float | None = None
    finished: str = ""  # UTC ISO time this batch finished the report
    has_report: bool = False  # NAME/report.html exists (the last good report)
    history: tuple[dict, ...] = field(default_factory=tuple)
    previous: dict | None = None  # pending: the status of the previous batch, if any


def render_index(states: list[ReportState], *, heading: str, batch_line: str) -> str:
    """The whole index.html as text."""
    rows = "\n".join(_row(state) for state in states)
    sections = "\n".join(_history_section(state) for state in states)
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{INDEX_GENERATOR}
<title>{html.escape(heading)}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1rem; color: #222; }}
main {{ max-width: 1250px; }}
h1 {{ font-size: 1.5rem; margin-bottom: 0.3rem; }}
h2 {{ font-size: 1.2rem; margin-top: 2rem; }}
h3 {{ font-size: 1.05rem; margin-bottom: 0.2rem; }}
p.batch, p.note, p.generated {{ color: #555; margin: 0.2rem 0; }}
table {{ border-collapse: collapse; margin-top: 1rem; font-size: 0.92rem; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 0.3rem 0.45rem; text-align: left; vertical-align: top; }}
th {{ background: #f4f4f4; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.state {{ min-width: 6.5rem; max-width: 19rem; }}
td.name {{ min-width: 8rem; max-width: 12rem; overflow-wrap: anywhere; }}
td.num .detail {{ white-space: normal; max-width: 11rem; margin-left: auto; }}
.status {{ font-weight: 600; white-space: nowrap; }}
.built {{ color: #1a7f37; }}
.skipped {{ color: #555; }}
.failed {{ color: #b42318; }}
.pending, .building {{ color: #9a6700; }}
.detail {{ font-weight: normal; color: #555; font-size: 0.85rem; max-width: 28rem; overflow-wrap: anywhere; }}
.sig {{ font-weight: 700; }}
.down {{ color: #b42318; }}
.up {{ color: #1a7f37; }}
.sig.up, .sig.down {{ font-weight: 700; }}
img {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<main>
<h1>{html.escape(heading)}</h1>
<p class="batch">{html.escape(batch_line)}</p>
<table>
<thead><tr><th>report</th><th>status</th><th>headline: best system</th><th>baseline</th><th>delta</th>
<th>p (Holm)</th><th>above baseline</th><th>below baseline</th><th>queries</th><th>best vs previous build</th><th>last good build</th><th>link</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
<p class="note">Numbers are those of the last good build of each report, on its headline measure (nDCG@10
unless the report names another; shown under each value), for the report's best system there (the only one
in a one-run report). p: paired randomization test against the baseline, Holm-adjusted over the report's
systems on that measure; <span class="sig up">▲</span> the system is significantly above the baseline (p below
{SIGNIFICANCE}), <span class="sig down">▼</span> significantly below it. Above and below baseline: how many of the
report's systems are significantly above it, and below it, on that measure. The interval under the delta is the
95% bootstrap CI of that one comparison (unadjusted, as in the report's comparison table); in a report of
several systems the verdict at the top gives the same delta a wider interval, Bonferroni-adjusted over its
systems to match the Holm-adjusted test. A suite (<code>ndcg-report suite</code>) shows means over its collections
and, in place of the randomization test, the Wilcoxon signed-rank test over its collections (Holm over its
systems), whose verdict needs at least 5 collections. A failed report keeps its last good report.</p>
<h2>Headline measure across builds</h2>
{sections}
<p class="generated">Generated {generated}.</p>
</main>
</body>
</html>
"""


def _largest_loss(name: str, record: dict) -> str:
    """A link to the drill-down of the best system's largest loss, if the report has one."""
    loss = record.get("largest_loss")
    if not isinstance(loss, dict) or not isinstance(loss.get("qid"), str):
        return ""
    target = f"{quote(name)}/report.html#q-{quote(loss['qid'], safe='')}"
    return (f'<div class="detail">largest loss: <a href="{_e(target)}">{_e(loss["qid"])}</a> '
            f'({format_signed(loss.get("delta"))})</div>')


def measure_label(record: dict) -> str:
    """The headline measure of a history record: its label ('nDCG@10', 'RR@10'); a record written
    before other measures existed names only its nDCG cut-off."""
    return str(record.get("measure") or f"nDCG@{record.get('k', '10')}")


def write_index(root: Path, states: list[ReportState], *, heading: str, batch_line: str) -> Path:
    """Render and write ROOT/index.html atomically (temp file + os.replace), replacing a link there rather
    than what it leads to; PermissionError if index.html belongs to another user."""
    path = root / "index.html"
    write_own_text(path, render_index(states, heading=heading, batch_line=batch_line))
    return path


def _row(state: ReportState) -> str:
    last = state.history[-1] if state.history else None
    cells = [
        f'<td class="name"><a href="#history-{_e(state.name)}">{_e(state.name)}</a>'
        + (f'<div class="detail">{_e(state.title)}</div>' if state.title and state.title != state.name else "") + "</td>",
        f'<td class="state">{_status(state)}</td>',
    ]
    if last is None:
        cells += ['<td class="num">–</td>'] * 8
    else:
        k = _e(measure_label(last))
        direction = _direction(last)  # "up", "down" or "" (not significant)
        over = last.get("over_collections") if last.get("kind") == "suite" else None  # a suite's test over collections
        p_text = _e(format_p(over.get("p_holm") if over else last.get("holm_randomization_pvalue")))
        p_text += {"up": " ▲", "down": " ▼"}.get(direction, "")
        if over:
            p_text += f'<div class="detail">Wilcoxon over {_e(last.get("n"))} collections: {_e(over.get("verdict"))}</div>'
        unadjusted = ", unadjusted" if int(last.get("n_systems", 1)) > 1 else ""
        interval = ("means over the collections both are in" if over else
                    f'95% CI [{format_signed(last.get("ci_low"))}, {format_signed(last.get("ci_high"))}]{unadjusted}')
        cells += [
            f'<td class="num">{format_number(last.get("run_mean"))}<div class="detail">{_e(last.get("run_name", ""))}, {k}</div></td>',
            f'<td class="num">{format_number(last.get("baseline_mean"))}<div class="detail">{_e(last.get("baseline_name", ""))}</div></td>',
            f'<td class="num">{format_signed(last.get("delta"))}<div class="detail">{interval}</div>'
            f'{_largest_loss(state.name, last)}</td>',
            f'<td class="num{" sig " + direction if direction else ""}">{p_text}</td>',
            f'<td class="num">{_above(last)}</td>',
            f'<td class="num">{_below(last)}</td>',
            f'<td class="num">{_e(str(last.get("n", "–")))}{" collections" if over else ""}</td>',
            f'<td class="num">{_change(state.history)}</td>',
        ]
    when = f'{_e(last["time"][:10])}<div class="detail">{_e(last["time"][11:16])} UTC</div>' if last else "never"
    cells.append(f'<td class="num">{when}</td>')
    cells.append(f'<td><a href="{_e(state.name)}/report.html">report.html</a></td>' if state.has_report else "<td>–</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _status(state: ReportState) -> str:
    if state.status == "built":
        detail = f"in {state.seconds:.1f} s" if state.seconds is not None else ""
    elif state.status == "skipped":
        detail = state.message or "inputs unchanged"
    elif state.status == "failed" and state.step == "interrupted":
        detail = state.message + (" (the last good report is kept)" if state.has_report else "")
    elif state.status == "failed":
        detail = f"step {state.step}: {state.message}"
        if state.has_report:
            detail += " (the last good report is kept)"
    elif state.status == "building":
        detail = f"building since {_short_time(state.finished)}" if state.finished else "building"
    else:
        previous = state.previous or {}
        detail = state.message or "not finished in this batch"
        if previous.get("status"):
            detail += f"; previous batch: {previous['status']}"
            if previous.get("status") == "failed":
                detail += f" at step {previous.get('step', '?')}"
    label = "interrupted" if state.status == "failed" and state.step == "interrupted" else \
        {"failed": "FAILED"}.get(state.status, state.status)
    return f'<span class="status {_e(state.status)}">{_e(label)}</span><div class="detail">{_e(detail)}</div>'


def _history_section(state: ReportState) -> str:
    anchor = f'id="history-{_e(state.name)}"'
    if not state.history:
        return f'<section {anchor}><h3>{_e(state.name)}</h3><p class="note">No successful build yet.</p></section>'
    shown = state.history[-MAX_PLOTTED_BUILDS:]
    uri = history_data_uri(tuple(shown))
    k = measure_label(shown[-1])
    first, last = shown[0], shown[-1]
    note = (f"{len(state.history)} successful build{'s' if len(state.history) != 1 else ''}"
            + (f", the last {len(shown)} plotted" if len(shown) < len(state.history) else "")
            + f"; first {_short_time(first['time'])}, last {_short_time(last['time'])}.")
    if state.status == "failed":
        note += f" The last attempt failed at step {state.step}; the numbers and the report are those of the last good build."
    alt = f"{k} of run and baseline, and their delta with its 95% CI, across the builds of {state.name}"
    return (f'<section {anchor}><h3>{_e(state.name)}</h3>'
            f'<img src="{uri}" alt="{_e(alt)}" width="760" height="260">'
            f'<p class="note">{_e(note)}</p></section>')


def history_data_uri(history: tuple[dict, ...]) -> str:
    """PNG data URI of the history figure (memoised: the index is rewritten after every report)."""
    return _history_data_uri(json.dumps(history, sort_keys=True, default=str))


@functools.lru_cache(maxsize=256)
def _history_data_uri(history_json: str) -> str:
    from ndcg_report.analysis.figure_style import figure_to_data_uri

    return figure_to_data_uri(history_figure(tuple(json.loads(history_json))))


def history_figure(history: tuple[dict, ...]):
    """Left: the headline measure of every system of the latest build and of the baseline per build; right: the
    best system's delta with its 95% CI (filled = significant) per build."""
    import matplotlib
    from matplotlib.figure import Figure

    from ndcg_report.analysis.figure_style import RC, BASELINE_COLOUR, MARKERS, RUN_COLOUR, literal, system_colour

    x = list(range(1, len(history) + 1))
    k = literal(measure_label(history[-1]))
    best = history[-1].get("run_name") or "run"
    names = [system.get("name") for system in history[-1].get("systems") or ()] or [best]
    base = [_number(r.get("baseline_mean")) for r in history]
    best_delta = [_delta_of(r, best) for r in history]
    delta = [d[0] for d in best_delta]
    low = [d[0] - d[1] for d in best_delta]
    high = [d[2] - d[0] for d in best_delta]
    ticks = _tick_positions(len(history))
    labels = tick_labels([history[i - 1].get("time", "") for i in ticks])
    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(9.6, 2.8), dpi=100, layout="constrained")
        left, right = figure.subplots(1, 2, width_ratios=(3, 2))
        values = [v for v in base if not math.isnan(v)]
        handles, legend_labels = [], []
        for position, name in enumerate(names):
            means = [system_mean(r, name) for r in history]
            values += [v for v in means if not math.isnan(v)]
            handles += left.plot(x, means, marker=MARKERS[position % len(MARKERS)], color=system_colour(position),
                                 linewidth=1.6 if name == best else 1.0)
            legend_labels.append(literal(_short_name(str(name))))
        handles += left.plot(x, base, marker="s", color=BASELINE_COLOUR, linestyle="--")
        legend_labels.append(literal(_short_name(str(history[-1].get("baseline_name") or "baseline"))))
        if values:
            span = max(values) - min(values)
            pad = max(0.02, 0.15 * span)
            left.set_ylim(max(0.0, min(values) - pad), min(1.0, max(values) + pad))
        left.set_ylabel(k)
        left.set_title(f"Mean {k} per build", fontsize=10)
        # beside the axes, never over the points; handles and labels explicit: a name starting with '_' stays
        left.legend(handles, legend_labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                    fontsize=7 if len(legend_labels) > 4 else 8)
        right.axhline(0.0, color="#999999", linewidth=0.8)
        for i, (xi, d, r) in enumerate(zip(x, delta, history)):
            significant = best_delta[i][3]
            right.errorbar([xi], [d], yerr=[[low[i]], [high[i]]], fmt="o", color=RUN_COLOUR, capsize=3,
                           markerfacecolor=RUN_COLOUR if significant else "white")
        right.set_ylabel(f"delta of {literal(_short_name(best))}", fontsize=8)
        right.set_title("Best system's delta over collections\n(filled: Wilcoxon over collections, Holm)"
                        if history[-1].get("kind") == "suite" else
                        "Best system's delta, 95% CI (unadjusted)\n(filled: p < 0.05, Holm)", fontsize=9)
        for ax in (left, right):
            ax.set_xticks(ticks, labels, fontsize=7, rotation=30, ha="right")
            ax.set_xlim(0.5, len(history) + 0.5)
            ax.set_xlabel("build", fontsize=8)
            ax.grid(axis="y", alpha=0.3)
    return figure


def _delta_of(record: dict, name: str) -> tuple[float, float, float, bool]:
    """(delta, CI low, CI high, significant) of the named system in a history record (NaN if absent)."""
    for system in record.get("systems") or ():
        if system.get("name") == name:
            return (_number(system.get("delta")), _number(system.get("ci_low")), _number(system.get("ci_high")),
                    _is_significant(system))
    if record.get("systems") and record.get("run_name") != name:
        return math.nan, math.nan, math.nan, False
    return (_number(record.get("delta")), _number(record.get("ci_low")), _number(record.get("ci_high")),
            _is_significant(record))


def _short_name(name: str, most: int = 24) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def _tick_positions(n: int, most: int = 8) -> list[int]:
    if n <= most:
        return list(range(1, n + 1))
    step = math.ceil(n / most)
    positions = list(range(n, 0, -step))[::-1]
    return positions


def _tick_label(time: str, seconds: bool = False) -> str:
    """'2026-11-23T11:40:02Z' -> '11-23 11:40' (with seconds: '11-23 11:40:02')."""
    return f"{time[5:10]} {time[11:19 if seconds else 16]}" if len(time) >= 16 else time


def tick_labels(times: list[str]) -> list[str]:
    """The builds' tick labels: to the minute, to the second where two builds share a minute, and
    numbered (`#2`) where they share even that, so no two ticks read alike."""
    labels = [_tick_label(time) for time in times]
    if len(set(labels)) < len(labels):
        labels = [_tick_label(time, seconds=True) for time in times]
    seen: dict[str, int] = {}
    unique = []
    for text in labels:
        seen[text] = seen.get(text, 0) + 1
        unique.append(text if seen[text] == 1 else f"{text} #{seen[text]}")
    return unique


def _short_time(time: str) -> str:
    return f"{time[:10]} {time[11:16]} UTC" if len(time) >= 16 else time


def _is_significant(record: dict) -> bool:
    """Whether a record's (or a system's) comparison is significant: Holm randomization p below SIGNIFICANCE;
    a suite's, its verdict over collections."""
    over = record.get("over_collections")
    if isinstance(over, dict):
        return over.get("verdict") in ("better", "worse")
    p = record.get("holm_randomization_pvalue")
    return isinstance(p, (int, float)) and p < SIGNIFICANCE


def _direction(record: dict) -> str:
    """'up' where the record's best system is significantly above the baseline, 'down' below, else ''."""
    if not _is_significant(record):
        return ""
    delta = _number(record.get("delta"))
    return "up" if delta > 0 else "down" if delta < 0 else ""


def _below(record: dict) -> str:
    """'1 of 4' systems significantly below the baseline (one-run records: 'yes'/'no'); a record
    written before n_below was kept: counted from its systems."""
    systems = record.get("systems") or ()
    if "n_below" in record:
        below = int(record["n_below"])
    elif systems:
        below = sum(_is_significant(system) and _number(system.get("delta")) < 0 for system in systems)
    else:
        below = int(_direction(record) == "down")
    if int(record.get("n_systems", 1)) == 1:
        return "yes" if below else "no"
    return f"{below} of {int(record['n_systems'])}"


def _above(record: dict) -> str:
    """'2 of 4' systems significantly above the baseline (one-run records: 'yes'/'no')."""
    if "n_above" not in record:  # written before reports held several systems
        return "yes" if _is_significant(record) and _number(record.get("delta")) > 0 else "no"
    if int(record.get("n_systems", 1)) == 1:
        return "yes" if record["n_above"] else "no"
    return f"{int(record['n_above'])} of {int(record['n_systems'])}"


def system_mean(record: dict, name: str) -> float:
    """The headline measure of the named system in a history record (a one-run record: its run_mean if it is that run); NaN if absent."""
    for system in record.get("systems") or ():
        if system.get("name") == name:
            return _number(system.get("run_mean"))
    return _number(record.get("run_mean")) if record.get("run_name") == name else math.nan


def _change(history: tuple[dict, ...]) -> str:
    """The best system's headline measure now minus the same system's in the previous build."""
    if len(history) < 2:
        return "–"
    name = history[-1].get("run_name")
    now, before = system_mean(history[-1], name), system_mean(history[-2], name)
    if math.isnan(now) or math.isnan(before):
        return "–"
    change = now - before
    css = "down" if change < -5e-5 else "up" if change > 5e-5 else ""
    return f'<span class="{css}">{change:+.4f}</span>'


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def format_number(value: object) -> str:
    """A mean or CI bound with 4 decimals; '–' if it is missing."""
    number = _number(value)
    return "–" if math.isnan(number) else f"{number:.4f}"


def format_signed(value: object) -> str:
    """A difference with its sign and 4 decimals; '–' if it is missing."""
    number = _number(value)
    return "–" if math.isnan(number) else f"{number:+.4f}"


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
