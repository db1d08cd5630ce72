"""Naming the systems of a report: `NAME=PATH` or a plain path named by its run tag, names made
unique when they come from tags, and refused when the user gave the same name or path twice."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ndcg_report.errors import ParameterError

MAX_NAME_LENGTH = 80
_NAME_PREFIX = re.compile(r"^([^=/\\]*)=(.+)$", re.S)  # NAME=PATH: no path separator before the '='
RESERVED = ("=", "/", "\\")  # characters no name may hold: they separate NAME=PATH
_COMPRESSED = (".gz",)
_RUN_SUFFIXES = (".txt", ".run", ".trec", ".tsv", ".res", ".parquet", ".pq", ".parq")


def split_run_option(text: str) -> tuple[str, str]:
    """('name', 'path') of `NAME=PATH`, or ('', 'path') of a plain path.

    An existing path (a file, or a folder such as a Hive-style `date=2024`) is always a plain path
    (even with '=' in it); otherwise text before the first '=' is a name if it holds no path separator.
    """
    if Path(text).expanduser().exists():
        return "", text
    match = _NAME_PREFIX.match(text)
    if match:
        return check_name(match[1], f"--run {text!r}"), match[2]
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
    if any(ord(char) < 32 or ord(char) == 127 for char in stripped):
        raise ParameterError(f"{where}: the system name holds a control character; use plain text")
    if any(char in stripped for char in RESERVED):
        raise ParameterError(f"{where}: the system name {stripped!r} holds one of {' '.join(RESERVED)}, "
                             "which separate NAME=PATH; use other characters")
    return stripped


def derived_name(tag: str, path: str | Path | None, position: int) -> str:
    """A name for a run given without one: its run tag (control characters replaced, shortened to
    MAX_NAME_LENGTH), else its file name without run suffixes, else `run N`."""
    cleaned = "".join("\N{REPLACEMENT CHARACTER}" if ord(char) < 32 or ord(char) == 127 else char for char in tag)
    cleaned = cleaned.strip()
    if cleaned:
        return cleaned if len(cleaned) <= MAX_NAME_LENGTH else cleaned[: MAX_NAME_LENGTH - 1] + "…"
    return fallback_name(path, position)


def fallback_name(path: str | Path | None, position: int) -> str:
    """A name for a run without name or tag: its file name without run suffixes, else `run N`."""
    if path:
        name = Path(str(path)).name
        for suffix in _COMPRESSED + _RUN_SUFFIXES:
            name = name[: -len(suffix)] if name.lower().endswith(suffix) and len(name) > len(suffix) else name
        if name.strip():
            return name.strip()[:MAX_NAME_LENGTH]
    return f"run {position}"


def unique_names(given: Sequence[str], derived: Sequence[str], reserved: Sequence[str] = ()) -> list[str]:
    """Final names: given[i] if set (a repeat is a ParameterError), else derived[i] made unique
    with `-2`, `-3`, ... against every other name and the reserved ones."""
    if len(given) != len(derived):
        raise ValueError("given and derived names must have the same length")
    taken: dict[str, int] = {}
    for position, name in enumerate(given):
        if not name:
            continue
        key = name.casefold()
        if key in taken:
            raise ParameterError(f"two runs are named {name!r}; give each run its own name (NAME=PATH)")
        if key in {r.casefold() for r in reserved}:
            raise ParameterError(f"a run is named {name!r} like the baseline; give the run or the baseline another name")
        taken[key] = position
    used = set(taken) | {r.casefold() for r in reserved}
    names = []
    for name, tag in zip(given, derived):
        if name:
            names.append(name)
            continue
        candidate, number = tag, 1
        while candidate.casefold() in used:
            number += 1
            candidate = f"{tag}-{number}"
        used.add(candidate.casefold())
        names.append(candidate)
    return names


def check_distinct_paths(paths: Sequence[Path], roles: Sequence[str]) -> None:
    """ParameterError if one file is given twice (as the same path or through a link)."""
    seen: dict[tuple, str] = {}
    for path, role in zip(paths, roles):
        try:
            status = path.stat()
            key: tuple = (status.st_dev, status.st_ino)
        except OSError:
            key = (str(path.resolve()),)
        if key in seen:
            raise ParameterError(
                f"{path} is given twice (as {seen[key]} and as {role}); give each run once"
            )
        seen[key] = role
