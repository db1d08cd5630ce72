"""A built report as the gate reads it: summary.json's parameters and sha256s, per_query.csv's values, unjudged.tsv.

Nothing is recomputed: the values are the report's own. A folder that is not a report, or a report of
an older schema without per-query values, is a ParameterError in one line naming the folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pandas as pd

from ndcg_report.errors import ParameterError
from ndcg_report.files import MAX_SUMMARY_BYTES

PER_QUERY_NEEDED = ("system", "role", "qid", "measure", "k", "value", "averaged")
PARAMETERS_NEEDED = ("measures", "headline", "rel_level", "gain", "missing", "no_relevant", "seed", "n_resamples",
                     "confidence")
AVERAGING = ("rel_level", "gain", "missing", "no_relevant", "identical_ids")  # what changes a mean over the same files
QUERIES_FILE = "queries.json"  # {qid: text} of the topics a report was given


@dataclass(frozen=True)
class BuiltReport:
    """One built report folder, as read: where (its label in messages), its summary.json and per-query values."""

    folder: Path
    label: str  # BEFORE or AFTER, said in messages
    summary: dict
    values: pd.DataFrame  # system, qid, measure (its label: nDCG@10), value: the averaged queries only
    unjudged: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)  # (system, qid) -> unjudged docids
    queries: dict[str, str] = field(default_factory=dict)  # qid -> text, where the report kept it

    @property
    def parameters(self) -> dict:
        return self.summary["parameters"]

    @property
    def title(self) -> str:
        return str(self.summary.get("title") or self.folder.name)

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(self.parameters["measures"])

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system of the report, its baseline last, as summary.json lists them."""
        return tuple(system["name"] for system in self.summary["systems"])

    @property
    def unjudged_depth(self) -> int | None:
        return (self.summary.get("unjudged") or {}).get("depth")

    def sha256(self, role: str) -> str | None:
        """The sha256 of the input of a role ('run: NAME', 'baseline: NAME', 'topics'); None if none."""
        return next((item["sha256"] for item in self.summary["files"] if item["role"] == role), None)

    def run_sha256(self, system: str) -> str | None:
        return self.sha256(f"run: {system}") or self.sha256(f"baseline: {system}")

    def judgments_sha256(self) -> tuple[tuple[str, str], ...]:
        """(role, sha256) of every judgment set: 'qrels', or 'qrels: NAME' for each set compared."""
        return tuple((item["role"], item["sha256"]) for item in self.summary["files"]
                     if item["role"] == "qrels" or item["role"].startswith("qrels: "))


def read_report(folder: str | Path, label: str) -> BuiltReport:
    """The report built into folder (summary.json, per_query.csv; unjudged.tsv and queries.json if there).
    ParameterError naming label and folder if it is not a report folder, or one without per-query values."""
    folder = Path(folder)
    where = f"{label} {folder}"
    if not folder.is_dir():
        raise ParameterError(f"{where} is not a folder; give the folder a report was built into (--out)")
    summary_path, per_query_path = folder / "summary.json", folder / "per_query.csv"
    if not summary_path.is_file():
        raise ParameterError(f"{where} holds no summary.json: not a built report; give the folder a report was built "
                             "into (--out)")
    try:
        if summary_path.stat().st_size > MAX_SUMMARY_BYTES:
            raise ValueError(f"{summary_path.stat().st_size:,} bytes, more than a report's summary.json holds")
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ParameterError(f"{where}: summary.json cannot be read ({exc}); build the report again") from None
    if isinstance(summary, dict) and summary.get("kind") == "suite":
        raise ParameterError(f"{where} is a suite's folder (its means over collections have no per-query values); gate "
                             "each collection's report (suite --with-reports: its collections/NAME folders)")
    parameters = summary.get("parameters") if isinstance(summary, dict) else None
    missing = ([] if isinstance(parameters, dict) else ["parameters"]) + [
        key for key in ("files", "systems") if not isinstance(summary.get(key) if isinstance(summary, dict) else None,
                                                                list)]
    missing += [f"parameters.{key}" for key in PARAMETERS_NEEDED if isinstance(parameters, dict) and key not in parameters]
    if missing:
        raise ParameterError(f"{where}: summary.json lacks {', '.join(missing)} (a report of an older schema); build it "
                             "again with this version to gate it")
    if not per_query_path.is_file():
        raise ParameterError(f"{where} holds no per_query.csv (a report of an older schema without per-query values); "
                             "build it again with this version to gate it")
    return BuiltReport(folder, label, summary, per_query_values(per_query_path, where), _unjudged(folder / "unjudged.tsv"),
                       _queries(folder / QUERIES_FILE))


def per_query_values(path: Path | IO[bytes], where: str) -> pd.DataFrame:
    """per_query.csv's averaged rows (from its file, or its bytes): system, qid, measure (label), value."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[], encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ParameterError(f"{where}: per_query.csv cannot be read ({exc}); build the report again") from None
    lacking = [column for column in PER_QUERY_NEEDED if column not in table.columns]
    if lacking:
        raise ParameterError(f"{where}: per_query.csv lacks the columns {', '.join(lacking)} (a report of an older schema "
                             "without per-query values); build it again with this version to gate it")
    table = table[table["averaged"] == "True"]
    label = table["measure"].where(table["k"] == "", table["measure"] + "@" + table["k"])
    try:
        value = pd.to_numeric(table["value"].replace("", "nan"), errors="raise").astype("float64")
    except ValueError:
        raise ParameterError(f"{where}: per_query.csv holds a value that is not a number; build the report again") from None
    return pd.DataFrame({"system": table["system"].to_numpy(), "qid": table["qid"].to_numpy(),
                         "measure": label.to_numpy(), "value": value.to_numpy()})


def _unjudged(path: Path) -> dict[tuple[str, str], frozenset[str]]:
    """unjudged.tsv as (system, qid) -> the unjudged docids in that system's top k; {} if absent."""
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8", newline="\n") as lines:
        return unjudged_pairs(lines)


def unjudged_pairs(lines: Iterable[str]) -> dict[tuple[str, str], frozenset[str]]:
    """The lines of an unjudged.tsv (its header first) as (system, qid) -> the unjudged docids of that top k."""
    found: dict[tuple[str, str], set[str]] = {}
    lines = iter(lines)
    next(lines, None)  # the header
    for line in lines:
        cells = line.rstrip("\n").split("\t")
        if len(cells) != 5:
            continue
        qid, docid, _, _, systems = cells
        for system in json.loads(systems):
            found.setdefault((system, qid), set()).add(docid)
    return {key: frozenset(docids) for key, docids in found.items()}


def _queries(path: Path) -> dict[str, str]:
    """queries.json (the text of the topics a report was given) as qid -> text; {} if absent or unreadable."""
    try:
        found = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return {str(qid): str(text) for qid, text in found.items()} if isinstance(found, dict) else {}
