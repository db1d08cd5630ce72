"""What is written from the options table: the notebook's parameters cell and the docs' options table."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ndcg_report.analysis.options.table import ALIASES, OPTIONS, ReportOption, on

# the notebook's parameters that are not report options: set by the build, or a single run
NOTEBOOK_EXTRAS = (
    ("run", "str", "", "one system under test, instead of runs (any run format, as runs)"),
    ("bm25_settings", "str", "", "how a corpus BM25 baseline was made (set by the CLI; shown in the report)"),
    ("command", "str", "", "the command that rebuilds this report; empty: an ndcg-report build command"),
    ("inputs_folder", "str", "", "set by build_report: the report's folder of the inputs it was given as Python objects"),
    ("output_dir", "str", "", "folder for per_query.csv, summary.json and unjudged.tsv, made if missing; empty writes "
                              "nothing"),
)
NOTEBOOK_HEAD = """# Parameters: papermill injects new values in a cell after this one. With no run, qrels, baseline
# or corpus given, the report is the embedded demo (TREC DL 2019 passage, five systems).
# Paths are absolute, relative to the working folder, or package:<file> for data shipped in ndcg_report.
# Written from ndcg_report.analysis.options.table by scripts/options_pages.py: change the table, not this cell."""
CHOICE_SEPARATOR = " \\| "  # a | inside a Markdown table's cell
TYPES = {"runs": "list", "int": "int", "number": "float", "open_number": "float", "bool": "bool"}


def python_type(option: ReportOption) -> str:
    return TYPES.get(option.kind, "str")


def _default(option: ReportOption) -> object:
    return [] if option.default == () else option.default


def notebook_parameters_cell() -> str:
    """The source of the report notebook's cell tagged `parameters`."""
    lines = [NOTEBOOK_HEAD]
    rows = [(option.name, python_type(option), _default(option), _meaning(option)) for option in on("notebook")]
    for name, kind, default, meaning in [*rows, *NOTEBOOK_EXTRAS]:
        lines.append(f"{name}: {kind} = {json.dumps(default) if not isinstance(default, bool) else default}  # {meaning}")
    return "\n".join(lines)


def _meaning(option: ReportOption) -> str:
    """The notebook's comment on an option: its help and what empty means; never a '=' (papermill's
    --help-notebook cannot read a line holding a second one)."""
    default = option.default_text if option.default == "" or option.default_text else ""
    text = (option.notebook_help or option.help) + (f"; empty: {default}" if default else "")
    if "=" in text:
        raise ValueError(f"{option.name}: the notebook's comment holds '=': give the option a notebook_help")
    return text


def notebook_options(namespace: Mapping[str, object]) -> dict[str, object]:
    """The report options among a notebook's variables, for validate_parameters: each by its name, or by
    an older spelling papermill injected (`ks`) where the name still holds its default."""
    values = {}
    for option in on("notebook", paths=False):
        spelled = [alias for alias, name in ALIASES.items() if name == option.name and alias in namespace]
        key = spelled[0] if spelled and namespace.get(option.name, option.default) == option.default else option.name
        if key in namespace:
            values[key] = namespace[key]
    return values


def options_table_markdown() -> str:
    """The docs' table of every report option: its name, type, default and spelling on each surface."""
    rows = ["| option | type | default | `build` flag | batch YAML key | `build_report` keyword | notebook | meaning |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for option in OPTIONS:
        aliases = f" (older: {', '.join(f'`{alias}`' for alias in option.aliases)})" if option.aliases else ""
        flag = " ".join(f"`{flag}`" for flag in (option.short, option.cli_flag) if flag)

        def on_surface(surface: str, text: str) -> str:
            return text if surface in option.surfaces else "-"

        kind = f"{option.kind}: {CHOICE_SEPARATOR.join(option.choices)}" if option.choices else option.kind
        bounds = _bounds_text(option)
        rows.append(f"| `{option.name}`{aliases} | {kind}{bounds} | {_escaped(option.shown_default) or '-'} | "
                    f"{on_surface('cli', flag)} | {on_surface('yaml', f'`{option.name}`')} | "
                    f"{on_surface('python', f'`{option.name}`')} | {on_surface('notebook', f'`{option.name}`')} | "
                    f"{_escaped(option.help)} |")
    return "\n".join(rows)


def _bounds_text(option: ReportOption) -> str:
    if option.low is None and option.high is None:
        return ""
    if option.high is None:
        return f", >= {option.low:g}"
    return f", {option.low:g} to {option.high:,g}"


def _escaped(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


