"""One report of a batch: its input fingerprint, its build command and its headline numbers.

The headline numbers are those its summary.json gives the history and index; also why a report is built
and how a failed build is told.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import sys
from pathlib import Path

from ndcg_report.analysis.options.command import input_words, option_words
from ndcg_report.analysis.options.table import on
from ndcg_report.batch.config import BM25_KEYS, ReportConfig
from ndcg_report.analysis.text import format_p
from ndcg_report.batch.suite_entries import suite_command, suite_fingerprint, suite_headline
from ndcg_report.files import path_sha256
from ndcg_report.stats.resampling import MONTE_CARLO, pvalue_floor
from ndcg_report.build.parameters import resolve_path
from ndcg_report.version import __version__


def fingerprint(report: ReportConfig) -> tuple[str, dict[str, dict[str, str]]]:
    """(sha256 over the input files' sha256, the options and the ndcg-report version; per-file record).

    Raises InputError for a missing input file. BM25 options count only for a corpus baseline. A suite
    entry's: batch.suite_entries.suite_fingerprint.
    """
    if report.suite is not None:
        return suite_fingerprint(report)
    files = {}
    for item in report.inputs:
        path = resolve_path(str(item.path), item.role, folder_ok=item.role not in ("corpus", "topics", "docs", "groups"))
        files[item.role] = {"path": str(path), "sha256": path_sha256(path)}
    options = dict(report.options)
    if not report.uses_corpus:
        for key in BM25_KEYS:
            options.pop(key)
    material = {"files": {role: record["sha256"] for role, record in files.items()}, "options": options,
                "version": __version__}
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()
    return digest, files


def build_argv(report: ReportConfig, out: Path, cache_dir: Path | None) -> list[str]:
    """The argv of the process that builds a report: `python -m ndcg_report.cli build` with the report's
    inputs and options as analysis.options.command writes them; of a suite entry, its `suite` command."""
    if report.suite is not None:
        return suite_command(report, out)
    runs = [(item.name, item.path) for item in report.runs]
    qrels = [(item.name, item.path) for item in report.inputs if item.role.startswith("qrels")]
    baselines = [(item.name, item.path) for item in report.inputs if item.role.startswith("baseline ")]  # several
    names = [option.name for option in on("cli", paths=False) if option.group != "bm25" or report.uses_corpus]
    command = [sys.executable, "-m", "ndcg_report.cli", "build", *input_words(runs, qrels, _files(report), baselines),
               *option_words(report.options, names)]
    if report.uses_corpus and cache_dir is not None:
        command.append(f"--cache-dir={cache_dir}")
    command.append(f"--out={out}")
    return command


def _files(report: ReportConfig) -> dict[str, Path]:
    """A report's inputs besides its runs, qrels and several baselines, by role."""
    return {item.role: item.path for item in report.inputs if not item.role.startswith(("run", "qrels", "baseline "))}


def headline(summary: dict) -> dict:
    """The numbers the index and history keep, from a report's summary.json, on its headline measure:
    every system's value and comparison with the (first) baseline, and the best system's at the top level,
    with the smallest p-value its test gives (a suite's: suite_headline). Other baselines are not systems here."""
    if summary.get("kind") == "suite":
        return suite_headline(summary)
    k = summary["parameters"]["headline"]
    keys = ("n", "run_mean", "baseline_mean", "delta", "ci_low", "ci_high", "randomization_pvalue",
            "holm_randomization_pvalue", "t_pvalue", "holm_t_pvalue", "wilcoxon_pvalue", "holm_wilcoxon_pvalue")
    alpha = summary["parameters"].get("alpha", 0.05)
    systems, below = [], []
    other_baselines = set(summary.get("more_baselines") or {})  # baselines too: not a system of the index
    for name, rows in summary["comparisons"].items():
        if name in other_baselines:
            continue
        row = rows[k]
        p = row.get("holm_randomization_pvalue")
        above = isinstance(p, (int, float)) and p < alpha and (row.get("delta") or 0) > 0
        below.append(isinstance(p, (int, float)) and p < alpha and (row.get("delta") or 0) < 0)
        systems.append({"name": name, **{key: row.get(key) for key in keys if key not in ("n", "baseline_mean")},
                        "significantly_above": above})
    best = max(systems, key=lambda system: (system["run_mean"] if system["run_mean"] is not None else -1.0))
    best_row = summary["comparisons"][best["name"]][k]
    record = {key: best_row.get(key) for key in keys}
    drilldown = summary.get("drilldown") or {}
    loss = ((drilldown.get("largest_changes") or {}).get(best["name"]) or {}).get("loss")
    record["largest_loss"] = loss if loss and loss["qid"] in drilldown.get("queries", ()) else None
    record["p_floor"] = _p_floor(summary, best_row)
    record.update(measure=k, run_name=best["name"], baseline_name=summary["baseline"], systems=systems,
                  n_systems=len(systems), n_above=sum(system["significantly_above"] for system in systems),
                  n_below=sum(below),
                  warnings=len(summary.get("warnings", [])))
    return record


def _p_floor(summary: dict, row: dict) -> float | None:
    """The smallest Holm-adjusted randomization p-value the report's Monte Carlo gives (its resamples and
    family: stats.resampling.pvalue_floor), for the index's '≤'; None from the normal limit, or a summary without them."""
    resamples, family = summary["parameters"].get("n_resamples"), (summary.get("comparison_family") or {}).get("size")
    if row.get("randomization_method") != MONTE_CARLO or not isinstance(resamples, int) or not isinstance(family, int):
        return None
    return pvalue_floor(resamples, multiplier=family)


def test_text(record: dict) -> str:
    """The test of a headline record, for the log: a report's Holm randomization p, a suite's Wilcoxon over collections."""
    over = record.get("over_collections")
    if isinstance(over, dict):
        return f"Wilcoxon over {record['n']} collections: Holm p={format_p(over.get('p_holm'))}, {over.get('verdict')}"
    return f"Holm randomization p={format_p(record['holm_randomization_pvalue'], record.get('p_floor'))}"


def build_reason(last_good: dict | None, status: dict, digest: str, files: dict, force: bool) -> str:
    """Why a report is built: what differs from its last good build (for the log)."""
    if last_good is None:
        return "no earlier successful build"
    since = f"since {last_good.get('time', '?')}"
    if last_good.get("fingerprint") == digest:
        if force:
            return f"inputs unchanged {since}, rebuilding (--force)"
        if status.get("status") == "failed":
            return f"retrying: the last attempt failed at step {status.get('step', '?')}"
        return "report.html is missing"
    old = last_good.get("files", {})
    changed = [role for role in files if old.get(role, {}).get("sha256") != files[role]["sha256"]]
    changed += [role for role in old if role not in files]
    if changed:
        return f"{', '.join(changed)} changed {since}"
    if last_good.get("version") != __version__:
        return f"ndcg-report {last_good.get('version')} -> {__version__}"
    return f"options changed {since}"


def failed_step(returncode: int, stderr: str, stopping: int) -> tuple[str, str]:
    """(step, message) of a failed build from its exit code and the last line of its stderr."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "no error output"
    last = last.removeprefix("ndcg-report: error: ")
    if stopping:
        return "interrupted", f"the batch was stopped by signal {stopping}"
    if returncode == 2:
        return "validate", last
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return "crash", f"the build process was killed by {name} ({last})"
    match = re.match(r"step (\w+) failed:?\s*", last)  # build's "step nbval failed in Cell 3: ..."
    return (match[1], last[match.end():] or last) if match else ("build", last)


def short_time(time_text: str) -> str:
    """'2026-11-23T11:40:02Z' -> '2026-11-23 11:40:02 UTC'."""
    return f"{time_text[:10]} {time_text[11:19]} UTC" if len(time_text) >= 19 else time_text
