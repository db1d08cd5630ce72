"""The batch's index.html: one row per report with its headline numbers, status and history figure.

The headline measure is nDCG@10 unless the report names another; the history figure shows it across
builds.

Offline and self-contained like the reports: inline CSS, no script, figures as PNG data URIs made
with matplotlib's Figure API (deterministic: figure_style.RC, no PNG metadata). Every text is escaped.
"""

from __future__ import annotations

import datetime as dt
import html
from urllib.parse import quote
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ndcg_report.analysis.text import format_p
from ndcg_report.batch.history_figure import (
    SIGNIFICANCE, history_data_uri, is_significant, measure_label, number, system_mean,
)
from ndcg_report.files import write_own_text

MAX_PLOTTED_BUILDS = 90
CHANGE_SHOWN = 5e-5  # a change below this in size rounds to +0.0000: not coloured
GATE_CLASSES = {"regression": "failed", "warning": "pending", "improved": "built", "pass": "built"}  # the status colours
GATE_NOTE = """ Gate: each gated build against the last good build (or the pinned one), system by system on
the gated measures, paired by query, one-sided randomization test with Holm over the systems x measures (see
docs/gating.md); shown, the most severe status, the system with the largest drop and its Holm-adjusted p. A
regression is marked on the report's history figure."""
INDEX_GENERATOR = '<meta name="generator" content="ndcg-report batch index">'  # how a batch knows its own index


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
    gated: bool = False  # the config gates the report (a `gate:` key)
    gate: dict | None = None  # its gate in this batch (batch.gating.ReportGate.summary); else the last build's


def render_index(states: list[ReportState], *, heading: str, batch_line: str) -> str:
    """The whole index.html as text."""
    gated = any(state.gated for state in states)
    rows = "\n".join(_row(state, gated) for state in states)
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
td.num .detail {{ white-space: normal; max-width: 11rem; margin-left: auto; overflow-wrap: normal; }}
td.gate {{ min-width: 8rem; max-width: 10rem; }}
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
<thead><tr><th>report</th><th>status</th>{"<th>gate</th>" if gated else ""}<th>headline: best system</th><th>baseline</th><th>delta</th>
<th>p (Holm)</th><th>above baseline</th><th>below baseline</th><th>queries</th><th>change since previous build</th><th>last good build</th><th>link</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
<p class="note">Numbers are those of the last good build of each report, on its headline measure (nDCG@10
unless the report names another; shown under each value), for the report's best system there (the only one
in a one-run report). p: paired randomization test against the baseline, Holm-adjusted over the report's
systems on that measure (≤: the smallest its resamples can give, so at most that); <span class="sig up">▲</span> the system is significantly above the baseline (p below
{SIGNIFICANCE}), <span class="sig down">▼</span> significantly below it. Above and below baseline: how many of the
report's systems are significantly above it, and below it, on that measure. The interval under the delta is the
95% bootstrap CI of that one comparison (unadjusted, as in the report's comparison table); in a report of
several systems the verdict at the top gives the same delta a wider interval, Bonferroni-adjusted over its
systems to match the Holm-adjusted test. A suite (<code>ndcg-report suite</code>) shows means over its collections
and, in place of the randomization test, the Wilcoxon signed-rank test over its collections (Holm over its
systems), whose verdict needs at least 5 collections. A failed report keeps its last good report. Change since
previous build: each system (and the baseline) against itself in the previous build; shown, the largest drop
(else the largest rise) and its system; every system's change in the cell's tooltip.{GATE_NOTE if gated else ""}</p>
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


def write_index(root: Path, states: list[ReportState], *, heading: str, batch_line: str) -> Path:
    """Render and write ROOT/index.html atomically (temp file + os.replace), replacing a link there rather
    than what it leads to; PermissionError if index.html belongs to another user."""
    path = root / "index.html"
    write_own_text(path, render_index(states, heading=heading, batch_line=batch_line))
    return path


def _row(state: ReportState, gated: bool = False) -> str:
    last = state.history[-1] if state.history else None
    cells = [
        f'<td class="name"><a href="#history-{_e(state.name)}">{_e(state.name)}</a>'
        + (f'<div class="detail">{_e(state.title)}</div>' if state.title and state.title != state.name else "") + "</td>",
        f'<td class="state">{_status(state)}</td>',
    ]
    if gated:
        cells.append(f'<td class="state gate">{_gate(state, last)}</td>')
    if last is None:
        cells += ['<td class="num">–</td>'] * 8
    else:
        k = _e(measure_label(last))
        direction = _direction(last)  # "up", "down" or "" (not significant)
        over = last.get("over_collections") if last.get("kind") == "suite" else None  # a suite's test over collections
        p_text = _e(format_p(over.get("p_holm")) if over else format_p(last.get("holm_randomization_pvalue"),
                                                                          last.get("p_floor")))
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


def _short_time(time: str) -> str:
    return f"{time[:10]} {time[11:16]} UTC" if len(time) >= 16 else time


def _direction(record: dict) -> str:
    """'up' where the record's best system is significantly above the baseline, 'down' below, else ''."""
    if not is_significant(record):
        return ""
    delta = number(record.get("delta"))
    return "up" if delta > 0 else "down" if delta < 0 else ""


def _below(record: dict) -> str:
    """'1 of 4' systems significantly below the baseline (one-run records: 'yes'/'no'); a record
    written before n_below was kept: counted from its systems."""
    systems = record.get("systems") or ()
    if "n_below" in record:
        below = int(record["n_below"])
    elif systems:
        below = sum(is_significant(system) and number(system.get("delta")) < 0 for system in systems)
    else:
        below = int(_direction(record) == "down")
    if int(record.get("n_systems", 1)) == 1:
        return "yes" if below else "no"
    return f"{below} of {int(record['n_systems'])}"


def _above(record: dict) -> str:
    """'2 of 4' systems significantly above the baseline (one-run records: 'yes'/'no')."""
    if "n_above" not in record:  # written before reports held several systems
        return "yes" if is_significant(record) and number(record.get("delta")) > 0 else "no"
    if int(record.get("n_systems", 1)) == 1:
        return "yes" if record["n_above"] else "no"
    return f"{int(record['n_above'])} of {int(record['n_systems'])}"


def changes(history: tuple[dict, ...]) -> list[tuple[str, float]]:
    """(system, its headline measure now minus its own in the previous build) of every system of the last build
    that the previous one had, then the baseline's (under the same name); [] before a second build."""
    if len(history) < 2:
        return []
    now, before = history[-1], history[-2]
    names = [system.get("name") for system in now.get("systems") or ()] or [now.get("run_name")]
    found = [(str(name), system_mean(now, name) - system_mean(before, name)) for name in names]
    if now.get("baseline_name") == before.get("baseline_name"):
        found.append((f"{now.get('baseline_name') or 'baseline'} (baseline)",
                      number(now.get("baseline_mean")) - number(before.get("baseline_mean"))))
    return [(name, change) for name, change in found if not math.isnan(change)]


def _change(history: tuple[dict, ...]) -> str:
    """The largest drop since the previous build among the systems (each against itself), else the largest rise,
    with its system; every system's change in the tooltip."""
    found = changes(history)
    if not found:
        return "–"
    name, change = min(found, key=lambda item: item[1])
    if change >= -CHANGE_SHOWN:
        name, change = max(found, key=lambda item: item[1])
    css = "down" if change < -CHANGE_SHOWN else "up" if change > CHANGE_SHOWN else ""
    every = "; ".join(f"{system} {value:+.4f}" for system, value in found)
    return (f'<span class="{css}" title="{_e(every)}">{change:+.4f}</span>'
            f'<div class="detail">{_e(name)}{f" (of {len(found)})" if len(found) > 1 else ""}</div>')


def _gate(state: ReportState, last: dict | None) -> str:
    """The gate cell: status (a regression in red), the worst system with its delta and Holm's p, against what."""
    gate = state.gate if state.gate is not None else (last or {}).get("gate")
    if not state.gated and gate is None:
        return '<span class="detail">not gated</span>'
    if not isinstance(gate, dict) or not isinstance(gate.get("status"), str):
        return "–"
    css = GATE_CLASSES.get(gate["status"], "skipped")
    detail = []
    if isinstance(gate.get("system"), str):
        detail.append(f"{gate['system']} {gate.get('measure') or ''}".strip())
        if isinstance(gate.get("delta"), (int, float)) and gate["status"] not in ("new", "unchanged"):
            detail[-1] += f" {format_signed(gate['delta'])}"
        if isinstance(gate.get("p_holm"), (int, float)):
            detail[-1] += f", p (Holm) {format_p(gate['p_holm'])}"
    if gate["status"] in ("new", "unchanged", "not comparable") and gate.get("reason"):
        detail.append(str(gate["reason"]))
    detail.append(f"against the {gate.get('against', 'last')} build")
    return (f'<span class="status {css}">{_e(gate["status"])}</span>'
            f'<div class="detail">{_e("; ".join(detail))}</div>')


def format_number(value: object) -> str:
    """A mean or CI bound with 4 decimals; '–' if it is missing."""
    shown = number(value)
    return "–" if math.isnan(shown) else f"{shown:.4f}"


def format_signed(value: object) -> str:
    """A difference with its sign and 4 decimals; '–' if it is missing."""
    shown = number(value)
    return "–" if math.isnan(shown) else f"{shown:+.4f}"


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
