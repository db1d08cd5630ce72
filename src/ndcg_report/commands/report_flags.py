"""The report options as flags: `build` and `demo`'s, and the measure flags eval and judges share, from the options table."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from ndcg_report.analysis.options.table import BY_NAME, ReportOption


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, names: Iterable[str]) -> None:
    """Add the named options of the table as flags, with their help, metavar, choices and default."""
    add_option_flags(parser, (BY_NAME[name] for name in names))


def add_option_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, options: Iterable[ReportOption]) -> None:
    """Add options (of any table of ReportOption rows: the report's, the gate's) as flags."""
    for option in options:
        parser.add_argument(*([option.short] if option.short else []), option.cli_flag, **_argument(option))


def _argument(option: ReportOption) -> dict:
    """add_argument's keywords for an option: a flag not given is None (bm25's, and text whose '' means
    'not given'; eval and judges read --preset as text), else the table's default."""
    default = option.shown_default
    help_text = option.help + (f" (default: {default})" if default and "(default" not in option.help else "")
    if option.kind == "preset":
        from ndcg_report.core.presets import help_text as presets

        help_text += f": {presets()}"
    if option.kind == "bool":
        return {"action": "store_true", "dest": option.name, "help": help_text}
    unset = option.group == "bm25" or option.default == () or (option.default == "" and option.kind != "preset")
    argument: dict = {"dest": option.name, "help": help_text, "default": None if unset else option.default,
                      "metavar": option.metavar}
    if option.repeat:
        argument["action"] = "append"
    if option.kind in ("int", "number", "open_number"):
        argument["type"] = int if option.kind == "int" else float
    if option.choices:
        argument["choices"] = option.choices
        argument.pop("metavar")
    return argument


def given_values(args: argparse.Namespace, names: Iterable[str]) -> dict[str, object]:
    """The named options given on the command line (not None), by the table's names; a repeated flag's
    values joined by spaces (-m)."""
    values = {}
    for name in names:
        value = getattr(args, name, None)
        if value is None:
            continue
        values[name] = " ".join(value) if BY_NAME[name].repeat and name not in ("runs", "qrels", "baseline") else value
    return values


def add_build_flags(parser: argparse.ArgumentParser) -> None:
    """Every report option of `build`, in the table's order: the runs and qrels required, one of
    --baseline and --corpus, the BM25 options in a group of their own."""
    from ndcg_report.analysis.options.table import on

    source = parser.add_mutually_exclusive_group(required=True)
    bm25 = parser.add_argument_group("BM25 baseline from a corpus (only with --corpus)",
                                     "how the baseline is built from --corpus and --topics; refused with --baseline")
    for option in on("cli"):
        target = source if option.name in ("baseline", "corpus") else bm25 if option.group == "bm25" else parser
        argument = _argument(option)
        if option.name in ("runs", "qrels"):
            argument["required"] = True
        target.add_argument(*([option.short] if option.short else []), option.cli_flag, **argument)


def bm25_names() -> tuple[str, ...]:
    """The options of how a BM25 baseline is built (k1, b, top_k, cache_dir)."""
    from ndcg_report.analysis.options.table import OPTIONS

    return tuple(option.name for option in OPTIONS if option.group == "bm25")
