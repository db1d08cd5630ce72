"""A suite in a batch (a `suite:` entry): its input fingerprint, its build command and its headline numbers.

A suite entry is built by `ndcg-report suite CONFIG --out ROOT/NAME` as a report is by `build`, and
indexed like one: its fingerprint covers the suite config and every collection's files; its record
for the history and the index is the best system's mean over collections against the baseline's over
the same collections, with the Wilcoxon test over collections in place of a report's randomization test.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ndcg_report.batch.config import ReportConfig
from ndcg_report.batch.suite_config import load_suite_config
from ndcg_report.build.parameters import resolve_path
from ndcg_report.files import path_sha256
from ndcg_report.version import __version__

OVER_COLLECTIONS_TEST = "Wilcoxon signed-rank over the collections' means, Holm over the systems"


def suite_fingerprint(report: ReportConfig) -> tuple[str, dict[str, dict[str, str]]]:
    """(sha256 over the suite config's and every collection file's sha256, the entry's timeout and
    with_reports and the version; per-file record). ParameterError for a bad suite config, InputError
    for a missing file: the entry fails at step validate."""
    config_path = resolve_path(str(report.suite), "suite")
    config = load_suite_config(config_path, label=str(config_path))
    files = {"suite": {"path": str(config_path), "sha256": path_sha256(config_path)}}
    for role, path_text in config.files().items():
        path = resolve_path(path_text, role, folder_ok=not role.endswith("topics"))
        files[role] = {"path": str(path), "sha256": path_sha256(path)}
    material = {"files": {role: record["sha256"] for role, record in files.items()},
                "options": {"timeout": report.options.timeout, "with_reports": report.with_reports},
                "version": __version__}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest(), files


def suite_command(report: ReportConfig, out: Path) -> list[str]:
    """The `ndcg-report suite` command of a suite entry (`--flag=value`, so no value is read as a flag)."""
    command = [sys.executable, "-m", "ndcg_report.cli", "suite", str(report.suite), f"--out={out}",
               f"--timeout={report.options.timeout}"]
    return command + (["--with-reports"] if report.with_reports else [])


def suite_headline(summary: dict) -> dict:
    """The numbers the index and history keep of a suite (its summary.json), on its headline measure: per
    system its mean over the collections it is in, the baseline's over the same, the delta, and the
    Wilcoxon test over collections (`over_collections`: pvalue, p_holm, verdict); the best system's (the
    highest mean) at the top level, as a report's record has them. `n` is the number of collections;
    a report's interval and per-query tests are None."""
    label = summary["parameters"]["headline"]
    base = summary["parameters"]["baseline_name"]
    rows = {row["system"]: row for row in summary["table"] if row["measure"] == label}
    tests = {row["system"]: row for row in summary["tests"][label]["wilcoxon"]["systems"]}
    systems = []
    for name in summary["parameters"]["systems"]:
        means, baseline = rows[name]["means"], rows[base]["means"]
        shared = [c for c, value in means.items() if value is not None and baseline.get(c) is not None]
        run_mean = sum(means[c] for c in shared) / len(shared) if shared else None
        baseline_mean = sum(baseline[c] for c in shared) / len(shared) if shared else None
        test = tests[name]
        systems.append({"name": name, "run_mean": run_mean, "baseline_mean": baseline_mean,
                        "delta": None if run_mean is None else run_mean - baseline_mean, "ci_low": None, "ci_high": None,
                        "collections": len(shared), "significantly_above": test["verdict"] == "better",
                        "over_collections": {key: test[key] for key in ("pvalue", "p_holm", "verdict")}})
    best = max(systems, key=lambda system: system["run_mean"] if system["run_mean"] is not None else -1.0)
    unused = ("randomization_pvalue", "holm_randomization_pvalue", "t_pvalue", "holm_t_pvalue", "wilcoxon_pvalue",
              "holm_wilcoxon_pvalue")
    return {
        "kind": "suite", "n": len(summary["parameters"]["collections"]),
        **{key: best[key] for key in ("run_mean", "baseline_mean", "delta", "ci_low", "ci_high", "over_collections")},
        **dict.fromkeys(unused), "largest_loss": None, "measure": label, "run_name": best["name"], "baseline_name": base,
        "systems": [{key: value for key, value in system.items() if key != "baseline_mean"} for system in systems],
        "n_systems": len(systems), "n_above": sum(s["over_collections"]["verdict"] == "better" for s in systems),
        "n_below": sum(s["over_collections"]["verdict"] == "worse" for s in systems),
        "warnings": len(summary.get("warnings", [])), "test": OVER_COLLECTIONS_TEST,
    }
