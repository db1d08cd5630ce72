"""The `ndcg-report batch` config: YAML loaded and validated into frozen dataclasses.

Every structural problem (unknown key, bad value, duplicate name) is a ParameterError naming the
config file, the report and the key; nothing is built until the whole config is valid. Whether an
input FILE exists is not checked here: a missing file fails only its own report (step validate).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any


from ndcg_report.baseline.settings import BM25_DEFAULTS
from ndcg_report.errors import ParameterError
from ndcg_report.core.measures.names import parse_cutoffs, parse_rel_level, resolve_measures
from ndcg_report.core.conventions import POLICIES
from ndcg_report.core.evaluation_pass import GAINS
from ndcg_report.core.presets import choose_headline, measure_set, preset as find_preset
from ndcg_report.build.pipeline import MAX_TIMEOUT
from ndcg_report.build.parameters import PACKAGE_PREFIX
from ndcg_report.analysis.systems import check_name, check_title
from ndcg_report.inputs.ids import control_character
from ndcg_report.batch.config_yaml import read_config_yaml, shown as _shown

TOP_KEYS = ("output", "cache_dir", "defaults", "reports")
FILE_KEYS = ("qrels", "baseline", "corpus", "topics", "docs", "groups")  # the inputs besides the runs
BM25_KEYS = ("k1", "b", "top_k")
MEASURE_KEYS = ("measures", "preset", "k", "rel_level", "headline", "judged_only")
OPTION_KEYS = (*MEASURE_KEYS, "gain", "missing", "no_relevant", "identical_ids", "drilldown", "drilldown_depth", "title", "run_name",
               "baseline_name", "seed", "timeout", "fill_unjudged_from",
               *BM25_KEYS)
REPORT_KEYS = ("name", "run", "runs", *FILE_KEYS, *OPTION_KEYS)
SUITE_ENTRY_KEYS = ("name", "suite", "title", "timeout", "with_reports")  # a suite's other keys are in its own file
DEFAULT_OPTIONS: dict[str, Any] = {
    "measures": "", "preset": "", "k": "", "rel_level": "", "headline": "", "judged_only": False, "gain": "linear", "missing": "", "no_relevant": "", "identical_ids": "", "title": "",
    "run_name": "", "baseline_name": "", "seed": 42, "timeout": 600, "drilldown": 200, "drilldown_depth": 10,
    "fill_unjudged_from": "",
    **BM25_DEFAULTS,
}
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
RESERVED_NAMES = frozenset({"index.html"})


@dataclass(frozen=True)
class ReportOptions:
    """The options of `ndcg-report build` for one report (defaults applied, values checked)."""

    measures: str  # measure names as given, space-separated ('' = nDCG at the cut-offs)
    preset: str
    cutoffs: str  # canonical, e.g. "1,3,5,10,all" ('' = the default)
    rel_level: str  # '' = 1 or the preset's
    headline: str  # '' = the preset's, else nDCG@10 if computed
    judged_only: bool
    gain: str
    missing: str  # '' = the preset's, else trec_eval -c's (zero)
    no_relevant: str  # '' = the preset's, else trec_eval -c's (zero)
    identical_ids: str  # '' = the preset's, else keep
    title: str  # default: the report name
    run_name: str
    baseline_name: str
    seed: int
    timeout: int
    drilldown: int
    drilldown_depth: int
    k1: float
    b: float
    top_k: int
    fill_unjudged_from: str = ""  # with several judgment sets: the one filling the reference's holes


@dataclass(frozen=True)
class InputFile:
    """One input of a report: its role, absolute path and, for a run, its display name."""

    role: str  # run (`run 1`, `run 2`, ... with several), qrels (`qrels NAME` of several sets), baseline, ...
    path: Path  # absolute; may not exist (checked when the report builds)
    name: str = ""  # a run's display name ('' = its file name), a judgment set's name


@dataclass(frozen=True)
class ReportConfig:
    name: str
    inputs: tuple[InputFile, ...]  # the runs, qrels, then baseline or corpus, then topics if given; a suite's config
    options: ReportOptions
    with_reports: bool = False  # a suite: build its collections' reports too (suite --with-reports)

    @property
    def suite(self) -> Path | None:
        """The suite config of a `suite:` entry (built by `ndcg-report suite`), else None."""
        return self.path("suite")

    def path(self, role: str) -> Path | None:
        return next((item.path for item in self.inputs if item.role == role), None)

    @property
    def runs(self) -> tuple[InputFile, ...]:
        return tuple(item for item in self.inputs if item.role.startswith("run"))

    @property
    def uses_corpus(self) -> bool:
        return self.path("corpus") is not None


@dataclass(frozen=True)
class BatchConfig:
    path: Path  # the config file, absolute
    output: Path  # the output root, absolute
    cache_dir: Path | None  # BM25 cache folder passed to every build (None: the build's default)
    reports: tuple[ReportConfig, ...]


def load_config(path: str | Path) -> BatchConfig:
    """Read and validate a batch config; raise ParameterError (one line) on any problem."""
    label = str(path)
    config_path = Path(path).expanduser().resolve()
    return parse_config(read_config_yaml(config_path, label), config_path, label)


def parse_config(data: object, config_path: Path, label: str) -> BatchConfig:
    """Validate already-parsed YAML; paths are relative to config_path's folder."""
    base = config_path.parent
    if not isinstance(data, dict):
        raise ParameterError(f"{label}: the config must be a mapping with keys {', '.join(TOP_KEYS)}")
    _check_keys(data, TOP_KEYS, f"{label}:")
    if "output" not in data:
        raise ParameterError(f"{label}: key 'output' is required (the folder the reports and index.html go to)")
    output = _locate(_text(data["output"], f"{label}: key 'output'", path=True), base)
    cache_dir = None
    if data.get("cache_dir") is not None:
        cache_dir = _locate(_text(data["cache_dir"], f"{label}: key 'cache_dir'", path=True), base)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ParameterError(f"{label}: key 'defaults' must be a mapping of report options")
    _check_keys(defaults, OPTION_KEYS, f"{label}: defaults:")
    merged_defaults = dict(DEFAULT_OPTIONS)
    for key, value in defaults.items():
        merged_defaults[key] = _option(key, value, f"{label}: defaults: key '{key}'")
    reports = data.get("reports")
    if not isinstance(reports, list) or not reports:
        raise ParameterError(f"{label}: key 'reports' must be a non-empty list of reports")
    parsed: list[ReportConfig] = []
    seen: dict[str, str] = {}
    for number, entry in enumerate(reports, start=1):
        report = _parse_report(entry, number, merged_defaults, base, label)
        folded = report.name.casefold()
        if folded in seen:
            raise ParameterError(f"{label}: report '{report.name}': key 'name': {_shown(report.name)} is already used by "
                                 f"report '{seen[folded]}' (names must be unique, ignoring case)")
        seen[folded] = report.name
        parsed.append(report)
    return BatchConfig(path=config_path, output=output, cache_dir=cache_dir, reports=tuple(parsed))


def _parse_report(entry: object, number: int, defaults: dict, base: Path, label: str) -> ReportConfig:
    if not isinstance(entry, dict):
        raise ParameterError(f"{label}: report #{number}: must be a mapping with at least name, run, qrels "
                             "and baseline (or corpus and topics)")
    if "name" not in entry:
        raise ParameterError(f"{label}: report #{number}: key 'name' is required")
    name = entry["name"]
    if not isinstance(name, str):
        raise ParameterError(f"{label}: report #{number}: key 'name': {_shown(name)} must be a string (quote it)")
    if not NAME_PATTERN.fullmatch(name) or name in RESERVED_NAMES:
        raise ParameterError(
            f"{label}: report #{number}: key 'name': {_shown(name)} is not a safe folder name (letters, digits, '.', '_', "
            "'-'; starting with a letter or digit; at most 80 characters; not index.html)"
        )
    where = f"{label}: report '{name}':"
    if "suite" in entry:
        return _parse_suite_entry(entry, name, defaults, base, where)
    _check_keys(entry, REPORT_KEYS, where)
    if ("run" in entry) == ("runs" in entry):
        raise ParameterError(f"{where} give exactly one of 'run' (one run) and 'runs' (a list of runs)")
    if "qrels" not in entry:
        raise ParameterError(f"{where} key 'qrels' is required")
    if ("baseline" in entry) == ("corpus" in entry):
        raise ParameterError(f"{where} give exactly one of 'baseline' (a run) and 'corpus' (to build BM25 from)")
    if "corpus" in entry and "topics" not in entry:
        raise ParameterError(f"{where} key 'topics' is required with 'corpus' (BM25 needs the query text)")
    if "baseline" in entry:
        for key in BM25_KEYS:
            if key in entry:
                raise ParameterError(f"{where} key '{key}' applies only to a BM25 baseline built from a 'corpus'")
    if "runs" in entry and "run_name" in entry:
        raise ParameterError(f"{where} key 'run_name' names a single 'run'; give each of 'runs' as {{name, path}}")
    runs = _parse_runs(entry, where, base)
    inputs = runs + _parse_judgment_sets(entry["qrels"], where, base) + tuple(
        InputFile(role, _locate(_text(entry[role], f"{where} key '{role}'", path=True), base))
        for role in FILE_KEYS if role in entry and role != "qrels"
    )
    values = dict(defaults)
    if "runs" in entry:
        values["run_name"] = ""  # a default run_name names one-run reports only; runs carry their own names
    for key in OPTION_KEYS:
        if key in entry:
            values[key] = _option(key, entry[key], f"{where} key '{key}'")
    if values["run_name"]:
        values["run_name"] = check_name(values["run_name"], f"{where} key 'run_name'")
    if values["baseline_name"]:
        values["baseline_name"] = check_name(values["baseline_name"], f"{where} key 'baseline_name'")
    check_measure_options(values, where)
    options = _report_options(values, name)
    sets = [item.name for item in inputs if item.role.startswith("qrels ")]
    if options.fill_unjudged_from and options.fill_unjudged_from not in sets[1:]:
        raise ParameterError(f"{where} key 'fill_unjudged_from': {options.fill_unjudged_from!r} is not one of the "
                             f"judgment sets compared with the reference: give 'qrels' as a mapping NAME: PATH "
                             f"and name one of its sets after the first ({', '.join(sets[1:]) or 'none given'})")
    given = [item.name for item in runs] + [options.run_name]
    if options.baseline_name and options.baseline_name.casefold() in {n.casefold() for n in given if n}:
        raise ParameterError(f"{where} key 'baseline_name': {options.baseline_name!r} is also a run's name; "
                             "give the baseline another name")
    return ReportConfig(name=name, inputs=inputs, options=options)


def _report_options(values: dict, name: str) -> ReportOptions:
    return ReportOptions(
        measures=values["measures"], preset=values["preset"], cutoffs=values["k"], rel_level=values["rel_level"],
        headline=values["headline"], judged_only=values["judged_only"], gain=values["gain"], missing=values["missing"], no_relevant=values["no_relevant"],
        identical_ids=values["identical_ids"],
        title=values["title"] or name, run_name=values["run_name"], baseline_name=values["baseline_name"],
        seed=values["seed"], timeout=values["timeout"], drilldown=values["drilldown"],
        drilldown_depth=values["drilldown_depth"], k1=values["k1"], b=values["b"], top_k=values["top_k"],
        fill_unjudged_from=values["fill_unjudged_from"],
    )


def _parse_suite_entry(entry: dict, name: str, defaults: dict, base: Path, where: str) -> ReportConfig:
    """A `suite:` entry: its suite config (read when it builds, as a report's inputs are), title, timeout
    and with_reports; of `defaults` only the timeout applies (the suite's options are in its config)."""
    _check_keys(entry, SUITE_ENTRY_KEYS, where)
    values = dict(defaults)
    for key in ("title", "timeout"):
        if key in entry:
            values[key] = _option(key, entry[key], f"{where} key '{key}'")
    with_reports = entry.get("with_reports", False)
    if not isinstance(with_reports, bool):
        raise ParameterError(f"{where} key 'with_reports': {_shown(with_reports)} must be true or false")
    path = _locate(_text(entry["suite"], f"{where} key 'suite'", path=True), base)
    return ReportConfig(name=name, inputs=(InputFile("suite", path),), options=_report_options(values, name),
                        with_reports=with_reports)


def check_measure_options(values: dict, where: str) -> None:
    """The measure options of checked values (preset, measures, k, rel_level, headline, judged_only)
    together: what a build would refuse (a headline that is not among the measures), a ParameterError
    prefixed by where."""
    try:
        asked = measure_set(values["preset"], values["measures"] or None, values["k"] or None,
                            values["rel_level"] or None, values["judged_only"])
        choose_headline(values["headline"] or None, values["preset"], asked.measures)
    except ParameterError as exc:
        raise ParameterError(f"{where} {exc}") from None


def _parse_judgment_sets(value: object, where: str, base: Path) -> tuple[InputFile, ...]:
    """`qrels: PATH` (one set), or `qrels:` a mapping NAME: PATH of judgment sets to compare, the first
    the reference (InputFiles `qrels NAME`)."""
    if not isinstance(value, dict):
        return (InputFile("qrels", _locate(_text(value, f"{where} key 'qrels'", path=True), base)),)
    if not value:
        raise ParameterError(f"{where} key 'qrels': give a path, or a mapping NAME: PATH of judgment sets")
    sets, paths = [], {}
    for name, path_text in value.items():
        at = f"{where} key 'qrels' set {_shown(name)}"
        name = check_name(_option("run_name", name, at), at)
        path = _locate(_text(path_text, at, path=True), base)
        if path in paths:
            raise ParameterError(f"{at}: {path} is already set {paths[path]!r}; give each judgment set once")
        paths[path] = name
        sets.append(InputFile(f"qrels {name}", path, name))
    return tuple(sets)


def _parse_runs(entry: dict, where: str, base: Path) -> tuple[InputFile, ...]:
    """The report's runs: `run: PATH` or `runs:` a list of paths or {name, path} mappings."""
    if "run" in entry:
        return (InputFile("run", _locate(_text(entry["run"], f"{where} key 'run'", path=True), base)),)
    listed = entry["runs"]
    if not isinstance(listed, list) or not listed:
        raise ParameterError(f"{where} key 'runs': give a non-empty list of paths or {{name, path}} mappings")
    runs, names, paths = [], {}, {}
    for position, item in enumerate(listed, start=1):
        at = f"{where} key 'runs' item {position}"
        if isinstance(item, dict):
            unknown = set(item) - {"name", "path"}
            if unknown:
                raise ParameterError(f"{at}: unknown key {_shown(sorted(map(str, unknown))[0])} (known keys: name, path)")
            if "path" not in item:
                raise ParameterError(f"{at}: key 'path' is required")
            name = _option("run_name", item.get("name", ""), f"{at}: key 'name'") if item.get("name") is not None else ""
            path = _locate(_text(item["path"], f"{at}: key 'path'", path=True), base)
        else:
            name, path = "", _locate(_text(item, at, path=True), base)
        if name:
            name = check_name(name, at)
            if name.casefold() in names:
                raise ParameterError(f"{at}: the name {name!r} is already used by item {names[name.casefold()]}; "
                                     "give each run its own name")
            names[name.casefold()] = position
        if path in paths:
            raise ParameterError(f"{at}: {path} is already item {paths[path]}; give each run once")
        paths[path] = position
        runs.append(InputFile(f"run {position}", path, name))
    return tuple(runs)


def _option(key: str, value: object, where: str) -> Any:
    """The checked (and normalised) value of one report option."""
    if key == "k":
        if isinstance(value, bool) or not isinstance(value, (str, int, list)) or (
                isinstance(value, list) and not all(isinstance(item, (str, int)) for item in value)):
            raise ParameterError(f"{where}: {_shown(value)} must be cut-offs such as '1,10,100' or [1, 10, all]")
        try:
            return ",".join(str(k) for k in parse_cutoffs(str(value) if isinstance(value, int) else value))
        except ParameterError as exc:
            raise ParameterError(f"{where}: {exc}") from None
    if key in ("measures", "preset", "rel_level", "headline"):
        return _measure_option(key, value, where)
    if key == "judged_only":
        if not isinstance(value, bool):
            raise ParameterError(f"{where}: {_shown(value)} must be true or false")
        return value
    if key in ("gain", "missing", "no_relevant", "identical_ids"):
        choices = {"gain": GAINS, **POLICIES}[key]
        if value not in choices:
            raise ParameterError(f"{where}: {_shown(value)} is not one of {', '.join(choices)}")
        return value
    if key in ("title", "run_name", "baseline_name", "fill_unjudged_from"):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ParameterError(f"{where}: {_shown(value)} must be text")
        if key == "title":  # a name is checked where it is used (check_name), a title here, as `build --name` is
            return check_title(str(value), where)
        return str(value)
    if key == "timeout":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TIMEOUT:
            raise ParameterError(f"{where}: {_shown(value)} must be a whole number of seconds from 1 to {MAX_TIMEOUT:,}")
        return value
    if key in ("seed", "timeout", "top_k", "drilldown", "drilldown_depth"):
        lowest = {"seed": 0, "timeout": 1, "top_k": 1, "drilldown": 0, "drilldown_depth": 1}[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            raise ParameterError(f"{where}: {_shown(value)} must be a whole number >= {lowest}")
        return value
    if key in ("k1", "b"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ParameterError(f"{where}: {_shown(value)} must be a number")
        if key == "k1" and value < 0:
            raise ParameterError(f"{where}: {value!r} must be >= 0")
        if key == "b" and not 0 <= value <= 1:
            raise ParameterError(f"{where}: {value!r} must be between 0 and 1")
        return float(value)
    raise AssertionError(key)  # pragma: no cover - keys are checked before


def _measure_option(key: str, value: object, where: str) -> str:
    """measures (names, or a list of them), preset, rel_level (a number) and headline (a name), as text."""
    if key == "measures" and isinstance(value, list):
        if not value or not all(isinstance(item, str) for item in value):
            raise ParameterError(f"{where}: {_shown(value)} must be measure names such as [nDCG@10, RR, R@1000]")
        value = " ".join(value)
    if key == "rel_level":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ParameterError(f"{where}: {_shown(value)} must be a number such as 2")
        try:
            parse_rel_level(value)
        except ParameterError as exc:
            raise ParameterError(f"{where}: {exc}") from None
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{where}: {_shown(value)} must be text (a non-empty string)")
    try:
        if key == "measures":
            resolve_measures(value)
        elif key == "preset":
            find_preset(value)
        else:
            resolve_measures(value)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None
    return value.strip()


def _check_keys(mapping: dict, known: tuple[str, ...], where: str) -> None:
    for key in mapping:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(known)})"
            raise ParameterError(f"{where} unknown key {_shown(str(key))}{hint}")


def _text(value: object, where: str, path: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        kind = "a path" if path else "text"
        raise ParameterError(f"{where}: {_shown(value)} must be {kind} (a non-empty string)")
    if "\x00" in value:
        raise ParameterError(f"{where}: {_shown(value)} holds a NUL character; remove it")
    control = control_character(value)
    if control:
        raise ParameterError(f"{where}: {_shown(value)} holds a control character ({control}); remove it")
    return value


def _locate(spec: str, base: Path) -> Path:
    """Absolute path of spec: `package:REL` inside ndcg_report/data, else relative to base (the config's folder)."""
    if spec.startswith(PACKAGE_PREFIX):
        return Path(str(resources.files("ndcg_report") / "data" / spec[len(PACKAGE_PREFIX):])).resolve()
    path = Path(spec).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


# The checks a suite's config (batch/suite_config.py) shares with a report's, under public names.
check_keys = _check_keys
check_option = _option
check_text = _text
locate = _locate
