"""The gate's options, declared once: `gate`'s flags, the batch's `gate:` keys, their checks and the docs' table.

The rows are analysis.options.table's GATE_OPTIONS (a report built `--against` an earlier one takes three of
them, as gate_NAME). Each row is a ReportOption, checked by the one check of its kind
(analysis.options.checks.CHECKS); a row whose surfaces hold "cli" is a flag of `ndcg-report gate`, one
whose surfaces hold "yaml" a key of a batch's `gate:` mapping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ndcg_report.analysis.options.checks import CHECKS
from ndcg_report.analysis.options.table import GATE_OPTIONS, Surface
from ndcg_report.errors import ParameterError

CHOICE_SEPARATOR = " \\| "  # a | inside a Markdown table's cell
GATE_BY_NAME: dict[str, ReportOption] = {option.name: option for option in GATE_OPTIONS}


def gate_options(surface: Surface) -> tuple[ReportOption, ...]:
    """The gate options a surface takes ("cli": the flags of `gate`; "yaml": the keys of `gate:`)."""
    return tuple(option for option in GATE_OPTIONS if surface in option.surfaces)


def checked_gate_options(given: Mapping[str, object], surface: Surface = "cli",
                         where: Callable[[str], str] = str) -> dict[str, object]:
    """Every gate option of the surface: as given (checked by its kind's check), else its default.
    ParameterError in one line for a key that is not a gate option, or a bad value; where(key) says
    where a key was given (`--margin`, a YAML key)."""
    known = {option.name: option for option in gate_options(surface)}
    values = {}
    for key, value in given.items():
        option = known.get(key)
        if option is None:
            raise ParameterError(f"{where(key)}: not a gate option (known: {', '.join(known)})")
        values[key] = CHECKS[option.kind](option, value, where(key))
    return {name: values.get(name, option.default) for name, option in known.items()}


def gate_options_markdown() -> str:
    """The docs' table of the gate's options: each one's type, default, flag, batch key and meaning."""
    rows = ["| option | type | default | `gate` flag | batch `gate:` key | meaning |", "| --- | --- | --- | --- | --- | --- |"]
    for option in GATE_OPTIONS:
        kind = f"{option.kind}: {CHOICE_SEPARATOR.join(option.choices)}" if option.choices else \
            "number" if option.kind == "open_number" else option.kind
        bounds = "" if option.low is None else f", > {option.low:g} and < {option.high:g}" if option.kind == "open_number" \
            else f", >= {option.low:g}"
        flag = " ".join(f"`{flag}`" for flag in (option.short, option.cli_flag) if flag) if "cli" in option.surfaces else "-"
        help_text = option.help.replace("|", "\\|")
        rows.append(f"| `{option.name}` | {kind}{bounds} | {option.shown_default or '-'} | {flag} | `{option.name}` | "
                    f"{help_text} |")
    return "\n".join(rows)
