"""Naming the systems of a report: `NAME=PATH` or a file's name, checked, never silently renamed.

A plain path is named by its file name without `.gz`, `.txt`, `.run`, ... Names are never changed to
make them unique: two systems with one name, or the same file given twice, are refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ndcg_report.errors import ParameterError
from ndcg_report.inputs.ids import name_problem, replace_controls

MAX_NAME_LENGTH = 80
CORPUS_BASELINE_NAME = "BM25"  # the name of a BM25 baseline built from a corpus, unless one is given
_NAME_PREFIX = re.compile(r"^([^=/\\]*)=(.+)$", re.S)  # NAME=PATH: no path separator before the '='
RESERVED = ("=", "/", "\\")  # characters no name may hold: they separate NAME=PATH
_COMPRESSED = (".gz",)
_RUN_SUFFIXES = (".txt", ".run", ".trec", ".tsv", ".res", ".jsonl", ".ndjson", ".json", ".parquet", ".pq", ".parq")


def split_run_option(text: str, option: str = "--run") -> tuple[str, str]:
    """('name', 'path') of `NAME=PATH`, or ('', 'path') of a plain path; a bad name's error names it as
    `option` (the flag or argument it was given as) with the text.

    An existing path (a file, or a folder such as a Hive-style `date=2024`) is always a plain path
    (even with '=' in it); otherwise text before the first '=' is a name if it holds no path separator.
    """
    if Path(text).expanduser().exists():
        return "", text
    match = _NAME_PREFIX.match(text)
    if match:
        return check_name(match[1], f"{option} {text!r}"), match[2]
    return "", text


def check_name(name: str, where: str = "name") -> str:
    """name stripped of surrounding spaces; ParameterError if it is empty, longer than
    MAX_NAME_LENGTH, or holds a control character or one of RESERVED (they separate NAME=PATH)."""
    if not isinstance(name, str):
        raise ParameterError(f"{where}: the system name must be text; got {name!r}")
    stripped = name.strip()
    if not stripped:
        raise ParameterError(f"{where}: the system name is empty; give a name, or leave the name out")
    if len(stripped) > MAX_NAME_LENGTH:
        raise ParameterError(f"{where}: the system name is longer than {MAX_NAME_LENGTH} characters; shorten it")
    problem = name_problem(stripped)
    if problem:
        raise ParameterError(f"{where}: the system name {problem}; use plain UTF-8 text")
    if any(char in stripped for char in RESERVED):
        raise ParameterError(f"{where}: the system name {stripped!r} holds one of {' '.join(RESERVED)}, "
                             "which separate NAME=PATH; use other characters")
    return stripped


def check_title(title: str, where: str = "the title") -> str:
    """A report's title as given; ParameterError if it holds bytes that are not UTF-8 or a control
    character other than a tab (inputs.ids.name_problem): the one check of `build --name` and a
    batch's `title`, as check_name is of system names."""
    if not isinstance(title, str):
        raise ParameterError(f"{where}: the title must be text; got {title!r}")
    problem = name_problem(title, allowed="\t")
    if problem:
        raise ParameterError(f"{where}: the title {problem}; use plain UTF-8 text")
    return title


def derived_name(tag: str, path: str | Path | None, position: int) -> str:
    """A name for a system given without one: its file name without run suffixes (`.gz`, `.txt`,
    `.run`, ...; a Parquet dataset: its folder name), else (a table, no file) its run tag, else
    `run N` (`baseline` for position 0). Control characters are replaced, the name cut at
    MAX_NAME_LENGTH."""
    for text in (file_name(path) if path else "", replace_controls(tag or "").strip()):
        cleaned = text
        if cleaned:
            return cleaned if len(cleaned) <= MAX_NAME_LENGTH else cleaned[: MAX_NAME_LENGTH - 1] + "…"
    return f"run {position}" if position else "baseline"


def file_name(path: str | Path) -> str:
    """A name made from a file's name (stem_name) for a run or a judgment set given without one: its
    control characters replaced, so that no output it is printed in can be forged or coloured by it."""
    return replace_controls(stem_name(path)).strip()


def stem_name(path: str | Path) -> str:
    """A file's name without its run suffixes: `bm25+rm3+bert(zs).run` -> `bm25+rm3+bert(zs)`,
    `run.dl19.txt.gz` -> `run.dl19`, `splade.jsonl.gz` -> `splade`."""
    name = Path(str(path)).name
    for suffix in _COMPRESSED + _RUN_SUFFIXES:
        name = name[: -len(suffix)] if name.lower().endswith(suffix) and len(name) > len(suffix) else name
    return name


def unique_names(given: Sequence[str], derived: Sequence[str], reserved: Sequence[str] = (),
                 roles: Sequence[str] | None = None) -> list[str]:
    """Final names: given[i] if set, else derived[i] (a name made from a file name). Names are never
    changed to make them unique: two systems with one name (ignoring case), given or made, or a run
    named like the baseline (reserved) is a ParameterError saying how to name them apart. roles: what
    each is called in a message ('run 2', 'baseline 2'; default 'run N')."""
    if len(given) != len(derived) or (roles is not None and len(roles) != len(given)):
        raise ValueError("given and derived names (and roles) must have the same length")
    roles = list(roles) if roles is not None else [f"run {i}" for i in range(1, len(given) + 1)]
    baseline = {name.casefold(): name for name in reserved if name}
    taken: dict[str, tuple[int, bool]] = {}
    names = []
    for position, (name, made) in enumerate(zip(given, derived), start=1):
        final, is_given = (name, True) if name else (made, False)
        key = final.casefold()
        how = "" if is_given else " (from its file name)"
        role = roles[position - 1]
        if key in baseline:
            raise ParameterError(f"{role} is named {final!r}{how} like the baseline; give the {role.split()[0]} or the "
                                 "baseline another name (--run NAME=PATH, --baseline NAME=PATH or --baseline-name)")
        if key in taken:
            first, first_given = taken[key]
            runs = role.startswith("run ") and roles[first - 1].startswith("run ")
            if is_given and first_given:
                both = "two runs" if runs else f"{roles[first - 1]} and {role}"
                raise ParameterError(f"{both} are named {final!r}; give each its own name (NAME=PATH)")
            both = f"runs {first} and {position}" if runs else f"{roles[first - 1]} and {role}"
            raise ParameterError(f"{both} would both be named {final!r} (a run given without a "
                                 "name is named by its file name); name them apart with NAME=PATH")
        taken[key] = (position, is_given)
        names.append(final)
    return names


def check_distinct_paths(paths: Sequence[Path], roles: Sequence[str], what: str = "run") -> None:
    """ParameterError if one file is given twice (as the same path or through a link); what: the kind of
    input, for the message."""
    seen: dict[tuple, str] = {}
    for path, role in zip(paths, roles):
        try:
            status = path.stat()
            key: tuple = (status.st_dev, status.st_ino)
        except OSError:
            key = (str(path.resolve()),)
        if key in seen:
            raise ParameterError(
                f"{path} is given twice (as {seen[key]} and as {role}); give each {what} once"
            )
        seen[key] = role


def named_run_paths(given: Sequence[str]) -> list[tuple[str, str]]:
    """(name, path) of each command-line RUN or NAME=RUN in order: the name given, else made from the file
    name (derived_name); ParameterError if one file is given twice or two runs would share a name."""
    pairs = [split_run_option(text, "RUN") for text in given]
    paths = [Path(path) for _, path in pairs]
    check_distinct_paths(paths, [f"run {i}" for i in range(1, len(paths) + 1)])
    names = unique_names([name for name, _ in pairs], [derived_name("", path, i) for i, path in enumerate(paths, 1)])
    return [(name, path) for name, (_, path) in zip(names, pairs)]
