"""A suite's YAML config (`ndcg-report suite CONFIG.yml`, a batch's `suite:`): read and checked as a report's.

The config names the suite's `title`, its measure and averaging options (a batch report's keys, for
every collection) and `collections:`, each `{name, qrels, baseline, runs: {SYSTEM: PATH}, topics}`
with its own options where they differ. Keys, values and messages are a batch report's
(batch.config's checks); relative paths resolve against the config's folder. Whether a file exists is
not checked here (build.suite_parameters does, before anything is built).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ndcg_report.analysis.systems import check_name
from ndcg_report.analysis.options.checks import check
from ndcg_report.analysis.options.table import ALIASES
from ndcg_report.batch.config import (MEASURE_KEYS, check_keys, check_measure_options, check_text, default_options,
                                      given_options, locate)
from ndcg_report.batch.config_yaml import read_config_yaml, shown
from ndcg_report.build.suite_parameters import DEFAULT_BASELINE_NAME, check_collection_name, check_suite_names
from ndcg_report.errors import ParameterError

OPTION_KEYS = (*MEASURE_KEYS, "seed")  # for all, or per collection
ALIAS_KEYS = tuple(alias for alias, name in ALIASES.items() if name in OPTION_KEYS)  # older spellings, still read
TOP_KEYS = ("title", "systems", "baseline_name", "collections", *OPTION_KEYS, *ALIAS_KEYS)
COLLECTION_KEYS = ("name", "qrels", "baseline", "runs", "topics", *OPTION_KEYS, *ALIAS_KEYS)


@dataclass(frozen=True)
class SuiteConfig:
    """A checked suite config: what validate_suite_parameters takes (paths absolute)."""

    path: Path  # the config file, absolute
    title: str
    systems: tuple[str, ...]
    baseline_name: str
    headline: str
    collections: tuple[dict, ...]  # name, runs (SYSTEM -> path), qrels, baseline, topics, validate_parameters' options

    def parameters(self) -> dict:
        """The keyword arguments of build.suite_parameters.validate_suite_parameters."""
        return {"collections": [dict(c) for c in self.collections], "title": self.title, "systems": self.systems,
                "baseline_name": self.baseline_name, "headline": self.headline}

    def files(self) -> dict[str, str]:
        """Every input file by role (`COLLECTION run SYSTEM`, `COLLECTION qrels`, ...), absolute paths."""
        files = {}
        for c in self.collections:
            files.update({f"{c['name']} run {system}": path for system, path in c["runs"].items()})
            files.update({f"{c['name']} {role}": c[role] for role in ("qrels", "baseline", "topics") if c[role]})
        return files


def load_suite_config(path: str | Path, label: str | None = None) -> SuiteConfig:
    """Read and check a suite config; ParameterError (one line naming the file, the collection and the key)."""
    label = label or str(path)
    config_path = Path(path).expanduser().resolve()
    return parse_suite_config(read_config_yaml(config_path, label), config_path, label)


def parse_suite_config(data: object, config_path: Path, label: str) -> SuiteConfig:
    """Check already-parsed YAML; paths are relative to config_path's folder."""
    base = config_path.parent
    if not isinstance(data, dict):
        raise ParameterError(f"{label}: a suite config must be a mapping with at least 'collections' (and 'title', "
                             "'preset' or 'measures')")
    check_keys(data, TOP_KEYS, f"{label}:")
    title = check("title", data["title"], f"{label}: key 'title'") if data.get("title") is not None else ""
    baseline_name = DEFAULT_BASELINE_NAME
    if data.get("baseline_name") is not None:
        baseline_name = check_name(check("baseline_name", data["baseline_name"], f"{label}: key 'baseline_name'") or "",
                                   f"{label}: key 'baseline_name'")
    systems = _systems(data.get("systems"), label)
    defaults = {**default_options(), **_options(data, f"{label}:")}
    listed = data.get("collections")
    if not isinstance(listed, list) or not listed:
        raise ParameterError(f"{label}: key 'collections' must be a non-empty list of collections, each "
                             "{name, qrels, baseline, runs: {SYSTEM: PATH}, topics}")
    collections = tuple(_collection(entry, number, defaults, base, label) for number, entry in enumerate(listed, 1))
    try:
        check_suite_names({c["name"]: list(c["runs"]) for c in collections}, systems, baseline_name)
    except ParameterError as exc:
        raise ParameterError(f"{label}: {exc}") from None
    return SuiteConfig(path=config_path, title=title, systems=systems, baseline_name=baseline_name,
                       headline=defaults["headline"], collections=collections)


def _collection(entry: object, number: int, defaults: dict, base: Path, label: str) -> dict:
    """One collection's validate_suite_parameters mapping, checked as a batch report is."""
    if not isinstance(entry, dict):
        raise ParameterError(f"{label}: collection #{number}: must be a mapping {{name, qrels, baseline, runs, topics}}")
    if "name" not in entry:
        raise ParameterError(f"{label}: collection #{number}: key 'name' is required")
    name = check_collection_name(entry["name"], f"{label}: collection #{number}: key 'name'")
    where = f"{label}: collection '{name}':"
    if "corpus" in entry:
        raise ParameterError(f"{where} key 'corpus': a suite's collection takes a baseline run; make it with "
                             "`ndcg-report bm25 --corpus C --topics T --out RUN` and give it as 'baseline'")
    check_keys(entry, COLLECTION_KEYS, where)
    for key in ("qrels", "baseline", "runs"):
        if key not in entry:
            raise ParameterError(f"{where} key '{key}' is required")
    files = {role: str(locate(check_text(entry[role], f"{where} key '{role}'", path=True), base))
             for role in ("qrels", "baseline", "topics") if role in entry}
    values = {**defaults, **_options(entry, where)}
    check_measure_options(values, where)
    options = {key: values[key] for key in OPTION_KEYS}
    return {"name": name, "runs": _runs(entry["runs"], where, base), "topics": "", **files, **options}


def _options(mapping: dict, where: str) -> dict:
    """The suite options a mapping gives (the measure options and the seed), checked, by name."""
    return given_options({key: mapping[key] for key in (*OPTION_KEYS, *ALIAS_KEYS) if key in mapping},
                         lambda key: f"{where} key '{key}'")


def _runs(value: object, where: str, base: Path) -> dict[str, str]:
    """`runs: {SYSTEM: PATH, ...}`: each system named, each path given once."""
    if not isinstance(value, dict) or not value:
        raise ParameterError(f"{where} key 'runs': give at least one run as a mapping SYSTEM: PATH "
                             f"(got {shown(value)})")
    runs: dict[str, str] = {}
    for system, path_text in value.items():
        at = f"{where} key 'runs' system {shown(system)}"
        if not isinstance(system, str):
            raise ParameterError(f"{at}: a system's name must be text (quote it)")
        system = check_name(system, at)
        path = str(locate(check_text(path_text, at, path=True), base))
        if path in runs.values():
            raise ParameterError(f"{at}: {path} is already the run of another system; give each run once")
        runs[system] = path
    return runs


def _systems(value: object, label: str) -> tuple[str, ...]:
    """`systems: [NAME, ...]`: the systems shown, in order (default: every system of any collection)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise ParameterError(f"{label}: key 'systems': {shown(value)} must be a list of system names, such as "
                             "[monoT5, RRF]")
    return tuple(check_name(item, f"{label}: key 'systems'") for item in value)
