"""What the report notebook shows: validated parameters, the evaluated data, checks, tables, outputs."""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ndcg_report.version import __version__
from ndcg_report.stats.paired import compare
from ndcg_report.errors import InputError, ParameterError
from ndcg_report.files import file_sha256, text_line_count
from ndcg_report.core.metrics import (
    GAINS, MISSING_POLICIES, NO_RELEVANT_POLICIES, Evaluation, check_choice, evaluate, parse_cutoffs,
)
from ndcg_report.inputs.trec import Qrels, Run, read_qrels, read_run, read_topics

PACKAGE_PREFIX = "package:"
HEADLINE_K = "10"
LOW_JUDGED = 0.5
COUNT_COLUMNS = frozenset({"n", "wins", "ties", "losses"})


@dataclass(frozen=True)
class ReportParameters:
    """Validated report parameters: absolute paths, parsed cut-offs, checked choices."""

    run: Path
    qrels: Path
    baseline: Path | None  # None until the BM25 baseline of `corpus` is built
    topics: Path | None
    cutoffs: tuple
    gain: str
    missing: str
    no_relevant: str
    title: str
    seed: int
    run_name: str
    baseline_name: str
    command: str = ""
    corpus: Path | None = None  # set when the baseline is a BM25 run built from this corpus
    bm25_settings: str = ""  # how that BM25 run was made (shown in the parameter table)


def resolve_path(value: str, name: str, required: bool = True) -> Path | None:
    """An absolute path; `package:REL` names a file shipped inside ndcg_report/data."""
    if not value:
        if required:
            raise ParameterError(f"{name} is required")
        return None
    if value.startswith(PACKAGE_PREFIX):
        path = Path(str(resources.files("ndcg_report") / "data" / value[len(PACKAGE_PREFIX):]))
    else:
        path = Path(value).expanduser()
    path = path.resolve()
    if not path.is_file():
        raise InputError(path, None, "no such file", f"check the {name} path")
    return path


def validate_parameters(
    run: str, qrels: str, baseline: str = "", topics: str = "", ks: str = "1,3,5,10,20,100,1000",
    gain: str = "linear", missing: str = "zero", no_relevant: str = "skip", title: str = "",
    seed: int = 42, run_name: str = "", baseline_name: str = "", command: str = "",
    corpus: str = "", bm25_settings: str = "",
) -> ReportParameters:
    """Check every report parameter without reading the data; raise ParameterError/InputError.

    The baseline is a run file, or (baseline "") a BM25 run still to be built from corpus + topics.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError(f"seed must be a whole number >= 0; got {seed!r}")
    if not baseline and not corpus:
        raise ParameterError("a baseline is required: give a baseline run, or a corpus (and topics) to build BM25 from")
    if corpus and not topics:
        raise ParameterError("topics are required with a corpus: BM25 needs the query text")
    paths = {
        "run": resolve_path(run, "run"), "qrels": resolve_path(qrels, "qrels"),
        "baseline": resolve_path(baseline, "baseline", required=False),
        "topics": resolve_path(topics, "topics", required=False),
        "corpus": resolve_path(corpus, "corpus", required=False),
    }
    return ReportParameters(
        **paths, cutoffs=parse_cutoffs(ks), gain=check_choice("gain", gain, GAINS),
        missing=check_choice("missing", missing, MISSING_POLICIES),
        no_relevant=check_choice("no_relevant", no_relevant, NO_RELEVANT_POLICIES),
        title=title or "NDCG report", seed=seed, run_name=run_name, baseline_name=baseline_name,
        command=command, bm25_settings=bm25_settings,
    )


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed once from validated parameters."""

    params: ReportParameters
    run: Run
    baseline: Run
    qrels: Qrels
    topics: pd.Series | None
    run_eval: Evaluation
    baseline_eval: Evaluation
    comparison: pd.DataFrame
    files: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    @property
    def run_name(self) -> str:
        return self.params.run_name or self.run.tag or "run"

    @property
    def baseline_name(self) -> str:
        name = self.params.baseline_name or self.baseline.tag or "baseline"
        return name if name != self.run_name else f"{name} (baseline)"


def load_inputs(params: ReportParameters) -> tuple[Run, Run, Qrels, pd.Series | None]:
    """Read and check all input files; raise InputError for bad input or no query in common."""
    if params.baseline is None:
        raise ParameterError("no baseline run: build the corpus BM25 first (baseline.with_bm25_baseline)")
    run, qrels = load_run_and_qrels(params)
    baseline = read_run(params.baseline)
    _check_common_query(baseline, "baseline", qrels)
    topics = read_topics(params.topics) if params.topics else None
    return run, baseline, qrels, topics


def load_run_and_qrels(params: ReportParameters) -> tuple[Run, Qrels]:
    """Read and check the run and the qrels (before a BM25 baseline is built, so typos fail fast)."""
    qrels = read_qrels(params.qrels)
    run = read_run(params.run)
    _check_common_query(run, "run", qrels)
    return run, qrels


def _check_common_query(system: Run, role: str, qrels: Qrels) -> None:
    judged = set(qrels.table["qid"].chunk(0).dictionary.to_pylist())
    if not judged & set(system.table["qid"].chunk(0).dictionary.to_pylist()):
        raise InputError(system.path, None, f"the {role} has no query in common with the qrels {qrels.path}",
                         "check that they are for the same topics")


def load_report(params: ReportParameters) -> Report:
    """Read the inputs, evaluate both systems and compare them."""
    run, baseline, qrels, topics = load_inputs(params)
    options = dict(cutoffs=params.cutoffs, gain=params.gain, missing=params.missing, no_relevant=params.no_relevant)
    run_eval = evaluate(run, qrels, **options)
    baseline_eval = evaluate(baseline, qrels, **options)
    comparison = compare(run_eval, baseline_eval, seed=params.seed)
    files = pd.DataFrame([
        file_record(role, path)
        for role, path in (("run", params.run), ("baseline", params.baseline), ("qrels", params.qrels),
                           ("topics", params.topics), ("corpus", params.corpus))
        if path is not None
    ])
    report = Report(params, run, baseline, qrels, topics, run_eval, baseline_eval, comparison, files)
    report.warnings.extend(data_warnings(report))
    return report


def file_record(role: str, path: Path) -> dict:
    """Role, file name, sha256 of the bytes as stored, and the number of lines of its text."""
    return {"role": role, "file": path.name, "sha256": file_sha256(path), "lines": text_line_count(path)}


def query_checks(report: Report) -> pd.DataFrame:
    """Counts of each kind of query, for the run and the baseline."""
    rows = {}
    for name, evaluation in ((report.run_name, report.run_eval), (report.baseline_name, report.baseline_eval)):
        counts = evaluation.counts
        rows[name] = {
            "queries in run": counts.in_run, "queries in qrels": counts.in_qrels, "in both": counts.in_both,
            "missing from run (relevant in qrels)": counts.missing,
            "without relevant docs in qrels": counts.no_relevant, "run only (ignored)": counts.run_only,
            "averaged": counts.averaged, "lines with tied scores": evaluation.tied_lines,
        }
    return pd.DataFrame(rows)


def label_distribution(report: Report) -> pd.DataFrame:
    """How many qrels lines carry each relevance label."""
    labels = pd.Series(report.qrels.table["rel"].to_numpy()).value_counts().sort_index()
    return pd.DataFrame({"label": [_number(v) for v in labels.index], "qrels lines": labels.to_numpy()})


def judged_table(report: Report) -> pd.DataFrame:
    """Mean judged@k (share of the top k with a qrels label) of both systems."""
    return pd.DataFrame({
        report.run_name: report.run_eval.summary["judged"], report.baseline_name: report.baseline_eval.summary["judged"],
    }).T


def data_warnings(report: Report) -> list[str]:
    """Warnings an analyst should see before trusting the numbers."""
    warnings = []
    for name, system, evaluation in ((report.run_name, report.run, report.run_eval),
                                     (report.baseline_name, report.baseline, report.baseline_eval)):
        summary = evaluation.summary
        if HEADLINE_K in summary.index and summary.at[HEADLINE_K, "judged"] < LOW_JUDGED:
            warnings.append(
                f"{name}: only {summary.at[HEADLINE_K, 'judged']:.0%} of the top 10 is judged; unjudged documents "
                "count as not relevant, so NDCG@10 may understate this system."
            )
        if evaluation.tied_lines:
            warnings.append(
                f"{name}: {evaluation.tied_lines} run lines share a score with another line of their query; "
                "ties are broken by docid, descending (trec_eval's order), which is arbitrary."
            )
        counts = evaluation.counts
        if counts.missing and counts.missing >= 0.05 * counts.in_qrels:
            policy = "scored 0" if report.params.missing == "zero" else "left out of the mean"
            warnings.append(f"{name}: {counts.missing} of {counts.in_qrels} judged queries are missing from the run ({policy}).")
        if counts.run_only:
            warnings.append(f"{name}: {counts.run_only} queries are in the run but not in the qrels (ignored).")
    no_relevant = report.run_eval.counts.no_relevant
    if no_relevant:
        policy = "left out of the mean" if report.params.no_relevant == "skip" else "scored 0"
        warnings.append(f"{no_relevant} judged queries have no relevant document ({policy}).")
    return warnings


def summary_table(report: Report) -> pd.DataFrame:
    """NDCG@k of both systems per cut-off, with the comparison statistics, rounded for display."""
    c = report.comparison
    table = pd.DataFrame({
        "k": c.index, "n": c["n"],
        report.run_name: c["run_mean"], report.baseline_name: c["baseline_mean"],
        "delta": c["delta"], "relative": c["relative_delta"],
        "95% CI of delta": [f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "W/T/L": [f"{w}/{t}/{l}" for w, t, l in zip(c["wins"], c["ties"], c["losses"])],
        "t-test p (Holm)": [_p(p, h) for p, h in zip(c["t_pvalue"], c["holm_t_pvalue"])],
        "Wilcoxon p (Holm)": [_p(p, h) for p, h in zip(c["wilcoxon_pvalue"], c["holm_wilcoxon_pvalue"])],
        "randomization p (Holm)": [_p(p, h) for p, h in zip(c["randomization_pvalue"], c["holm_randomization_pvalue"])],
        "effect size d_z": c["effect_size"],
        f"median {report.run_name}": c["run_median"], f"median {report.baseline_name}": c["baseline_median"],
    })
    return table.round(4).set_index("k")


def wins_and_losses(report: Report, k: str = HEADLINE_K, n: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The n queries the run gains most on and the n it loses most on, at cut-off k."""
    paired = pd.DataFrame({
        report.run_name: report.run_eval.ndcg_table()[k], report.baseline_name: report.baseline_eval.ndcg_table()[k],
    }).dropna()
    paired["delta"] = paired[report.run_name] - paired[report.baseline_name]
    if report.topics is not None:
        paired.insert(0, "query", report.topics.reindex(paired.index).fillna(""))
    paired = paired.rename_axis("qid").reset_index()
    ordered = paired.sort_values(["delta", "qid"], ascending=[False, True], kind="stable")
    wins = ordered[ordered["delta"] > 0].head(n)
    losses = ordered[ordered["delta"] < 0].iloc[::-1].head(n)
    return wins.round(4).reset_index(drop=True), losses.round(4).reset_index(drop=True)


def headline_k(report: Report) -> str:
    """The cut-off the figures focus on: 10 if asked for, else the first one."""
    labels = [str(k) for k in report.params.cutoffs]
    return HEADLINE_K if HEADLINE_K in labels else labels[0]


def per_query_table(report: Report) -> pd.DataFrame:
    """per_query.csv: one row per query, system and cut-off."""
    frames = []
    for system, name, evaluation in (("run", report.run_name, report.run_eval),
                                     ("baseline", report.baseline_name, report.baseline_eval)):
        frame = evaluation.per_query.copy()
        frame.insert(1, "system", system)
        frame.insert(2, "name", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def summary_record(report: Report) -> dict:
    """summary.json: parameters, files, query counts, per-system summaries, comparison, warnings."""
    p = report.params

    def summary(evaluation: Evaluation) -> dict:
        return {k: {c: _json_number(v, c) for c, v in row.items()} for k, row in evaluation.summary.iterrows()}

    return {
        "ndcg_report_version": __version__,
        "title": p.title,
        "parameters": {
            "run": p.run.name, "baseline": p.baseline.name, "qrels": p.qrels.name,
            "topics": p.topics.name if p.topics else None, "cutoffs": [str(k) for k in p.cutoffs],
            "gain": p.gain, "missing": p.missing, "no_relevant": p.no_relevant, "seed": p.seed,
            "corpus": p.corpus.name if p.corpus else None, "bm25": p.bm25_settings or None,
        },
        "files": report.files.to_dict(orient="records"),
        "systems": {
            "run": {"name": report.run_name, "tag": report.run.tag, "queries": vars(report.run_eval.counts),
                    "tied_lines": report.run_eval.tied_lines, "summary": summary(report.run_eval)},
            "baseline": {"name": report.baseline_name, "tag": report.baseline.tag,
                         "queries": vars(report.baseline_eval.counts),
                         "tied_lines": report.baseline_eval.tied_lines, "summary": summary(report.baseline_eval)},
        },
        "comparison": {
            k: {c: _json_number(v, c) for c, v in row.items()} for k, row in report.comparison.iterrows()
        },
        "warnings": report.warnings,
        "command": p.command,
    }


def save_outputs(report: Report, folder: str | Path) -> None:
    """Write per_query.csv and summary.json into folder."""
    folder = Path(folder)
    per_query_table(report).to_csv(folder / "per_query.csv", index=False, lineterminator="\n")
    (folder / "summary.json").write_text(json.dumps(summary_record(report), indent=2, sort_keys=False) + "\n")


# --- HTML for the notebook (everything from an input file is escaped) -----------------------


def table_html(frame: pd.DataFrame, index: bool = True) -> str:
    """A DataFrame as an HTML table with every cell and header escaped; floats with 4 decimals."""
    return frame.to_html(
        escape=True, index=index, border=0, classes="ndcg-table", na_rep="–", float_format="{:.4f}".format,
    )


def text_html(text: str, tag: str = "p") -> str:
    """Plain text in one HTML element, escaped."""
    return f"<{tag}>{html.escape(text)}</{tag}>"


def list_html(items: list[str]) -> str:
    """An escaped bullet list (or a line saying there is nothing to list)."""
    if not items:
        return "<p>No warnings.</p>"
    return "<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>"


def parameters_table(report: Report) -> pd.DataFrame:
    """The parameters the report was built with, as a two-column table."""
    p = report.params
    rows = {
        "run name": report.run_name, "baseline name": report.baseline_name,
        "cut-offs": ", ".join(str(k) for k in p.cutoffs), "gain": p.gain, "missing queries": p.missing,
        "queries without relevant docs": p.no_relevant, "seed": str(p.seed), "ndcg-report version": __version__,
    }
    if p.bm25_settings:
        rows["baseline built from the corpus"] = p.bm25_settings
    return pd.DataFrame({"value": rows})


def _p(value: float, holm: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{_format_p(value)} ({_format_p(holm)})"


def _format_p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _json_number(value, column: str = ""):
    if column in COUNT_COLUMNS and isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def report_figures(report: Report) -> list[tuple[str, bytes]]:
    """The five figures of the report as (caption, PNG bytes), at the headline cut-off."""
    from ndcg_report.report import plots

    k = headline_k(report)
    systems = (report.run_eval, report.baseline_eval)
    names = (report.run_name, report.baseline_name)
    figures = [
        ("Mean NDCG@k against k, with 95% bootstrap bands", plots.ndcg_by_cutoff(*systems, *names, seed=report.params.seed)),
        (f"Distribution of per-query NDCG@{k}", plots.ndcg_distribution(*systems, k, *names)),
        (f"Per-query NDCG@{k}: baseline (x) against run (y)", plots.per_query_scatter(*systems, k, *names)),
        (f"Per-query delta NDCG@{k} (run − baseline), sorted", plots.per_query_delta(*systems, k, *names)),
        (f"ECDF of per-query NDCG@{k}", plots.ndcg_ecdf(*systems, k, *names)),
    ]
    return [(caption, plots.figure_to_png_bytes(figure)) for caption, figure in figures]
