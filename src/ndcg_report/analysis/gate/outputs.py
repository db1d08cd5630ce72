"""The gate's output files (`gate` and `batch`): checked before any work, written whole once the verdicts are made.

The Markdown summary is also appended to the file $GITHUB_STEP_SUMMARY names, where GitHub Actions shows
it on the job's page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ndcg_report.errors import ParameterError

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def check_outputs(outputs: dict[str, Path], kept: Iterable[Path], whose: str) -> None:
    """ParameterError, before any work, for an output (`--NAME` FILE) that cannot be written, is a folder, is one
    of the files kept (whose: what they are, said in the message) or is another output's file."""
    from ndcg_report.files import OUTPUT_ROOM, overwritten_input, shown_path, unusable_path

    kept = list(kept)
    seen: dict[Path, str] = {}
    for name, path in outputs.items():
        problem = unusable_path(path, OUTPUT_ROOM)
        if problem:
            raise ParameterError(f"--{name} {shown_path(path)} {problem}")
        if path.is_dir():
            raise ParameterError(f"--{name} {shown_path(path)} is a folder; give the path of the file to write")
        clash = overwritten_input(path, kept)
        if clash is not None:
            raise ParameterError(f"--{name} {shown_path(path)} is {clash}, {whose}; write it elsewhere")
        real = Path(os.path.realpath(path))
        if real in seen:
            raise ParameterError(f"--{name} and --{seen[real]} are one file; give each its own")
        seen[real] = name


def write_outputs(outputs: dict[str, Path], writers: dict[str, Callable[[], str]]) -> None:
    """Each output made first (writers[NAME]()), then written atomically (files.write_text_atomic) into its folder
    (made if missing); ParameterError, nothing written, for a folder that cannot be."""
    from ndcg_report.files import folder_problem, shown_path, write_text_atomic

    texts = {name: writers[name]() for name in outputs}
    for name, path in outputs.items():
        problem = folder_problem(path.parent)
        if problem:
            raise ParameterError(f"--{name} {shown_path(path)}: its folder {problem}")
    for name, path in outputs.items():
        write_text_atomic(path, texts[name])


def append_step_summary(markdown: str) -> None:
    """Append the Markdown summary to the file $GITHUB_STEP_SUMMARY names, if it names one."""
    summary_file = os.environ.get(STEP_SUMMARY, "")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as out:
            out.write(markdown + "\n")
