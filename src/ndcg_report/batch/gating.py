"""The batch's gate: each gated report's build against the last good one (or the pinned one), kept under .history.

Before a gated report is rebuilt, what the gate reads of its published build (GATE_FILES) is kept in
ROOT/.history/NAME.last/; a build is published only when it succeeded, so what is kept is always a good
build. Once the new build is published it is gated against that (`against: pinned`: against
NAME.pinned/, made by `batch --pin NAME`; with nothing pinned yet, against the last build, and said).
A first build's systems are `new`; a report not rebuilt (inputs unchanged) is `unchanged`, untested.
Kept folders are replaced whole (written beside as .new, then renamed) as this user's files, never
through a link.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from ndcg_report.analysis.gate.built import QUERIES_FILE, read_report
from ndcg_report.analysis.gate.formats import overall_status
from ndcg_report.analysis.gate.since_last import GATE_FILE
from ndcg_report.analysis.gate.verdict import STATUSES, GateResult, GateVerdict, gate, gated_measures, untested_verdict
from ndcg_report.analysis.text import format_p, signed
from ndcg_report.batch.config import BatchConfig, ReportConfig
from ndcg_report.batch.history import kept_folder, own_bytes
from ndcg_report.batch.lock import batch_lock
from ndcg_report.errors import ParameterError
from ndcg_report.files import write_own_text
from ndcg_report.owners import owner_name, this_users

GATE_FILES = ("summary.json", "per_query.csv", "unjudged.tsv", QUERIES_FILE)  # what analysis.gate.built reads
GATE_JSON = "gate.json"  # ROOT/gate.json: every gated report's verdict of the last batch
FIRST_BUILD = "the first build: no earlier build to gate against"


@dataclass(frozen=True)
class ReportGate:
    """One report's gate in a batch: its verdict, what it was gated against, and what fails it (fail_on)."""

    name: str
    verdict: GateVerdict
    against: str  # last or pinned: the build gated against
    fail_on: str  # regression, or warning (a warning fails too)
    note: str = ""  # e.g. "nothing pinned yet: gated against the last build"

    @property
    def failed(self) -> bool:
        """Whether this gate fails the batch (exit 4): a regression, or with fail_on warning a warning too."""
        failing = ("regression", "warning") if self.fail_on == "warning" else ("regression",)
        return any(result.status in failing for result in self.verdict.results)

    def worst(self) -> GateResult | None:
        """The result to show: the most severe status, then the largest drop, then the smallest p."""
        def severity(result: GateResult) -> tuple:
            return (STATUSES.index(result.status), result.delta if result.delta is not None else 0.0,
                    result.p_holm if result.p_holm is not None else 1.0)
        return min(self.verdict.results, key=severity, default=None)

    def summary(self) -> dict:
        """What the history line, the status file and the index keep: status, against, the worst system's
        measure, delta and Holm's p (of the test its status says: 'better' for an improvement), whether it
        failed the batch."""
        worst = self.worst()
        p_holm = None if worst is None else worst.p_better_holm if worst.status == "improved" else worst.p_holm
        return {"status": self.verdict.status, "against": self.against, "failed": self.failed,
                "system": worst.system if worst else None, "measure": worst.measure if worst else None,
                "delta": worst.delta if worst else None, "p_holm": p_holm,
                "reason": worst.reason if worst else ""}

    def to_dict(self) -> dict:
        """gate.json's object of this report: the verdict's (GateVerdict.to_dict), against, fail_on, failed."""
        return {**self.verdict.to_dict(), "against": self.against, "fail_on": self.fail_on, "failed": self.failed,
                **({"note": self.note} if self.note else {})}


def gate_text(summary: dict) -> str:
    """A gate summary for the log: 'gate against the last build: regression: monoT5 nDCG@10 -0.0843, Holm p 0.0002'
    (an untested status: its reason)."""
    text = f"gate against the {summary.get('against', 'last')} build: {summary.get('status')}"
    if summary.get("status") in ("new", "unchanged", "not comparable") and summary.get("reason"):
        return f"{text} ({summary['reason']})"
    if summary.get("system") is not None:
        text += f": {summary['system']} {summary.get('measure')}"
        if isinstance(summary.get("delta"), (int, float)):
            text += f" {signed(summary['delta'])}"
        if isinstance(summary.get("p_holm"), (int, float)):
            text += f", Holm p {format_p(summary['p_holm'])}"
    return text


def keep_build(root: Path, name: str, which: str = "last") -> Path | None:
    """Copy the gate files of the build published in ROOT/NAME to ROOT/.history/NAME.WHICH, replacing what was
    kept there; None (nothing kept or changed) if ROOT/NAME holds no build. OSError (PermissionError) for a
    file of another user's or a link where a file is read or a folder replaced."""
    source, target = root / name, kept_folder(root, name, which)
    if source.is_symlink() or not (source / "summary.json").is_file():
        return None
    new, old = target.with_name(target.name + ".new"), target.with_name(target.name + ".old")
    for leftover in (new, old):
        _remove_own_folder(leftover)
    new.mkdir()
    for file in GATE_FILES:
        try:
            data = own_bytes(source / file)
        except FileNotFoundError:
            continue
        fd = os.open(new / file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
    if os.path.lexists(target):
        _own_folder(target)
        os.rename(target, old)
    os.rename(new, target)
    _remove_own_folder(old)
    return target


def _own_folder(path: Path) -> None:
    """PermissionError unless path is a folder of this user's (not a link)."""
    if path.is_symlink() or not path.is_dir() or not this_users(path):
        raise PermissionError(f"{path} is not a folder of yours (it belongs to {owner_name(path)}); remove it")


def _remove_own_folder(path: Path) -> None:
    """Remove a folder the batch made under .history (a leftover of a killed batch); PermissionError for another's."""
    if os.path.lexists(path):
        _own_folder(path)
        shutil.rmtree(path)


def pin_build(root: Path, report: ReportConfig) -> Path:
    """`batch --pin NAME`: keep ROOT/NAME's build as the one gated against with `against: pinned`;
    ParameterError if ROOT/NAME holds no build the gate can read."""
    if not (root / report.name / "summary.json").is_file():
        raise ParameterError(f"--pin {report.name}: {root / report.name} holds no build yet; run the batch first, "
                             "then pin the build it made")
    read_report(root / report.name, "the build to pin")  # ParameterError if the gate could not read it
    kept = keep_build(root, report.name, "pinned")
    assert kept is not None  # checked above
    return kept


def _report_verdict(out: Path, before: Path, measures: tuple[str, ...], margin: float,
                    alpha: float) -> GateVerdict | None:
    """The verdict the report built --against `before` wrote (its gate.json: against_words), as the batch's own
    for out; None if the report has none of those measures, margin and alpha (the batch then tests itself)."""
    try:
        record = json.loads((out / GATE_FILE).read_text(encoding="utf-8"))
        verdict = GateVerdict.from_dict(record)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (verdict.before, verdict.measures, verdict.margin, verdict.alpha) != (str(before), measures, margin, alpha):
        return None
    return replace(verdict, after=str(out))


def against_words(root: Path, report: ReportConfig) -> list[str]:
    """The build's words that give its report the section "Since the last build" (build --against the kept
    build, with the gate's measures, margin and alpha), when the kept build can be read and holds the
    measures gated; [] otherwise (the batch's own verdict then says why)."""
    options = report.gate or {}
    folder = _against_folder(root, report.name, str(options["against"]))
    try:
        before = read_report(folder, "the build kept")
        gated_measures(before, before, str(options["measures"]))
    except ParameterError:
        return []
    words = [f"--against={folder}", f"--gate-margin={float(options['margin'])!r}", f"--gate-alpha={float(options['alpha'])!r}"]
    return words + ([f"--gate-measure={options['measures']}"] if options["measures"] else [])


def _against_folder(root: Path, name: str, against: str) -> Path:
    """The kept build gated against: NAME.pinned with `against: pinned` if there is one, else NAME.last."""
    folder = kept_folder(root, name, against)
    return folder if against != "pinned" or folder.is_dir() else kept_folder(root, name, "last")


def gate_report(root: Path, report: ReportConfig, rebuilt: bool, since: str = "") -> ReportGate:
    """The gate of a gated report once its build is published (rebuilt) or was skipped as unchanged (since:
    the time of the build kept). A kept build the gate cannot read, or a measure it lacks, is `not comparable`
    with the reason; never a pass."""
    options = report.gate or {}
    margin, alpha, asked = float(options["margin"]), float(options["alpha"]), str(options["measures"])
    against, note = str(options["against"]), ""
    folder = kept_folder(root, report.name, against)
    if against == "pinned" and not folder.is_dir():
        against, note, folder = "last", "nothing pinned yet: gated against the last build", kept_folder(
            root, report.name, "last")
    after = read_report(root / report.name, "this build")
    if not rebuilt:
        verdict = untested_verdict(str(root / report.name), after, gated_measures(after, after, asked), "unchanged",
                                   f"inputs unchanged since {since}: not rebuilt" if since else "inputs unchanged",
                                   margin, alpha)
    elif not folder.is_dir():
        verdict = untested_verdict("", after, gated_measures(after, after, asked), "new", FIRST_BUILD, margin, alpha)
    else:
        try:
            before = read_report(folder, f"the {against} build")
            measures = gated_measures(before, after, asked)
            verdict = (_report_verdict(root / report.name, folder, measures, margin, alpha)
                       or gate(before, after, measures, margin, alpha))
        except ParameterError as exc:
            verdict = untested_verdict(str(folder), after, gated_measures(after, after, asked), "not comparable",
                                       f"the {against} build cannot be gated against: {exc}", margin, alpha)
    return ReportGate(report.name, verdict, against, str(options["fail_on"]), note)


def gate_json(gates: list[ReportGate]) -> str:
    """ROOT/gate.json: the top status (the most severe), the reports that failed the gate, every report's verdict."""
    named = [(item.name, item.verdict) for item in gates]
    record = {"status": overall_status(named), "failed": [item.name for item in gates if item.failed],
              "reports": {item.name: item.to_dict() for item in gates}}
    return json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_gate_json(root: Path, gates: list[ReportGate]) -> Path:
    """Write ROOT/gate.json atomically, as this user's file."""
    return write_own_text(root / GATE_JSON, gate_json(gates))


def pin(config: BatchConfig, name: str) -> Path:
    """`batch --pin NAME`: keep the build of ROOT/NAME as the one `against: pinned` gates against, holding the
    root's lock; ParameterError if NAME is not a report of the config or has no build; BatchBusy."""
    report = next((report for report in config.reports if report.name == name), None)
    if report is None or report.suite is not None:
        names = ", ".join(report.name for report in config.reports if report.suite is None)
        raise ParameterError(f"--pin {name}: not a report of {config.path.name} (its reports: {names})")
    with batch_lock(config.output, config.path):
        return pin_build(config.output, report)


def check_gate_outputs(config: BatchConfig, outputs: dict[str, Path]) -> None:
    """ParameterError, before anything is built, for a --junit or --markdown file that cannot be written or
    would replace a file of the output root (its index, gate.json, a report's file)."""
    from ndcg_report.analysis.gate.outputs import check_outputs

    root = config.output
    kept = [root / "index.html", root / GATE_JSON] + [
        path for report in config.reports if (root / report.name).is_dir() for path in (root / report.name).iterdir()]
    check_outputs(outputs, kept, "a file of the batch's output root")


def write_gate_outputs(gates: list[ReportGate], outputs: dict[str, Path]) -> None:
    """The --junit and --markdown files of every gated report, the Markdown appended to $GITHUB_STEP_SUMMARY."""
    from ndcg_report.analysis.gate.formats import junit_xml, markdown_summary
    from ndcg_report.analysis.gate.outputs import append_step_summary, write_outputs

    named = [(gate.name, gate.verdict) for gate in gates]
    write_outputs(outputs, {"junit": lambda: junit_xml(named), "markdown": lambda: markdown_summary(named)})
    if named:
        append_step_summary(markdown_summary(named))
