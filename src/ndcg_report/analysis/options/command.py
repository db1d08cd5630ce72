"""The `ndcg-report build` command line of a report's inputs and options: the one way one is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ndcg_report.analysis.options.table import BY_NAME

FILE_ROLES = ("baseline", "corpus", "topics", "docs", "groups", "against")  # the paths besides the runs and qrels, in order


def input_words(runs: Sequence[tuple[str, object]], qrels: Sequence[tuple[str, object]],
                files: Mapping[str, object], baselines: Sequence[tuple[str, object]] = ()) -> list[str]:
    """`--run=[NAME=]PATH` for each run, `--qrels=[NAME=]PATH` for each judgment set (the reference first),
    `--baseline=[NAME=]PATH` for each of several baselines (the first first), then `--baseline=PATH` or
    `--corpus=PATH` and the other files given (None: not given)."""
    words = [f"--run={name}={path}" if name else f"--run={path}" for name, path in runs]
    words += [f"--qrels={name}={path}" if name else f"--qrels={path}" for name, path in qrels]
    words += [f"--baseline={name}={path}" if name else f"--baseline={path}" for name, path in baselines]
    return words + [f"{BY_NAME[role].cli_flag}={files[role]}" for role in FILE_ROLES if files.get(role) is not None]


def option_words(values: Mapping[str, object], names: Iterable[str]) -> list[str]:
    """A flag for each named option whose value is not the table's default (`--flag=value`, so that no
    value is read as a flag; a true switch alone), in the table's order."""
    words = []
    for option in (BY_NAME[name] for name in sorted(names, key=list(BY_NAME).index)):
        value = values.get(option.name, option.default)
        if value is None or value == option.default or value is False or value == "":
            continue
        words.append(option.cli_flag if value is True else f"{option.cli_flag}={value!r}" if isinstance(value, float)
                     else f"{option.cli_flag}={value}")
    return words
