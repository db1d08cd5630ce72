"""What the commands' parsers share: one-line usage errors, defaults and exit codes in --help, shared options.

The measure options (eval, build, judges) and the BM25 options (build, bm25) are the report options
table's (commands.report_flags); a help text's `{KIND formats}` is the formats the registry takes.
"""

from __future__ import annotations

import argparse
import re
import sys

from ndcg_report.analysis.options.table import names as table_names
from ndcg_report.commands.output import error_line, one_line, silence_stdout
from ndcg_report.commands.report_flags import add_flags, bm25_names
from ndcg_report.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, MEANINGS

EXIT_CODES = "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in MEANINGS.items())


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's help ends with its default, unless it has none (empty, off) or says it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = _with_formats(action.help or "")
        shown = action.default not in (None, "", False, argparse.SUPPRESS) and "default" not in text
        if shown and (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE)):
            text += " (default: %(default)s)"
        return text


def _with_formats(text: str) -> str:
    """A help text with `{KIND formats}` as the formats KIND takes (inputs.formats.registry, imported for --help only)."""
    if "formats}" not in text:
        return text
    from ndcg_report.inputs.formats.registry import FORMATS

    return re.sub(r"\{(\w+) formats\}", lambda match: FORMATS.help(match.group(1)), text)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr and exit code 2; help shows the defaults
    and the exit codes."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, one_line(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")

    def _print_message(self, message: str, file: object = None) -> None:
        """Write and flush (argparse swallows a failed write: --help to a full disk would exit 0)."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)  # type: ignore[union-attr]
            stream.flush()  # type: ignore[union-attr]
        except (OSError, ValueError, AttributeError) as exc:
            if stream is not sys.stdout:
                return
            silence_stdout()
            error_line(f"cannot write the output ({getattr(exc, 'strerror', None) or exc})")
            sys.exit(EXIT_FAILED)


def _add_metric_options(parser: argparse.ArgumentParser, report: bool = False) -> None:
    """The measure options, as the report options table has them (--headline only for a report)."""
    add_flags(parser, [name for name in table_names("cli", "measure") if report or name != "headline"])


def _add_bm25_options(parser: argparse.ArgumentParser) -> None:
    """How a BM25 run is built from a corpus: k1, b, top_k and the cache, as the options table has them."""
    add_flags(parser, bm25_names())
