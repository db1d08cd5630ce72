"""A build's snapshots of its inputs: for each, the copy every read of the build goes to, its sha256 and format.

A build copies each input it parses (runs, qrels, topics, groups) once into its private staging folder,
hashed as it is written (build/input_snapshots.py); from then on inputs.access.sources.source_path
sends every read of that input to the copy, so the sha256 a report shows is of the bytes it parsed,
whatever happens to the file meanwhile. The build's process registers its snapshots for its own thread
(`registered`); its kernels take them from the manifest in the folder the build names in INPUT_CACHE_ENV.
Outside a build there is none, and every input is read where it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path

INPUT_CACHE_ENV = "NDCG_REPORT_INPUT_CACHE"  # a build's folder of inputs (copies, manifest, parses), named to its kernels
MANIFEST = "manifest.json"  # in that folder: the build's snapshots


@dataclass(frozen=True)
class Snapshot:
    """An input's copy: `path`, the input as given (absolute); `copy`, where its bytes are; `sha256`, of
    those bytes (of a Parquet folder: as files.path_sha256 gives it); `format`, what it was read as
    (inputs.detection.describe_input; '' until it is read)."""

    path: str
    copy: str
    sha256: str
    format: str = ""


_registered: ContextVar[Mapping[str, Snapshot] | None] = ContextVar("ndcg_report_snapshots", default=None)
_manifest: tuple[str, Mapping[str, Snapshot]] = ("", {})  # the last manifest read: (its folder, its snapshots)


def snapshots() -> Mapping[str, Snapshot]:
    """The snapshots of the build this runs in, by input path: those registered in this thread (a build's
    process), else the manifest of the folder INPUT_CACHE_ENV names (a build's kernel); {} outside a build."""
    global _manifest
    mine = _registered.get()
    if mine is not None:
        return mine
    folder = os.environ.get(INPUT_CACHE_ENV, "")
    if not folder:
        return {}
    if _manifest[0] != folder:
        _manifest = (folder, read_manifest(Path(folder)))
    return _manifest[1]


def snapshot_of(path: str | Path) -> Snapshot | None:
    """The snapshot of the input at path in the build this runs in, if there is one."""
    taken = snapshots()
    return taken.get(os.path.abspath(path)) if taken else None


def original_of(path: str | Path) -> str | None:
    """The input path whose snapshot is path (its copy, or a file in a copied folder), else None."""
    text = os.path.abspath(path)
    for snapshot in snapshots().values():
        if text == snapshot.copy:
            return snapshot.path
        if text.startswith(snapshot.copy + os.sep):
            return snapshot.path + text[len(snapshot.copy):]
    return None


def input_sha256(path: str | Path) -> str:
    """sha256 of the input at path as a report shows it: its snapshot's, in a build, else files.path_sha256's."""
    from ndcg_report.files import path_sha256  # here: the command line imports this module, and hashes nothing

    snapshot = snapshot_of(path)
    return snapshot.sha256 if snapshot is not None else path_sha256(Path(path))


@contextmanager
def registered(taken: Mapping[str, Snapshot]) -> Iterator[None]:
    """Within, this thread's reads of each input of taken (by path) go to its snapshot, beside those
    registered already (a suite's, while it builds its collections' reports)."""
    token = _registered.set({**snapshots(), **taken})
    try:
        yield
    finally:
        _registered.reset(token)


def write_manifest(folder: Path, taken: Mapping[str, Snapshot]) -> None:
    """The manifest of taken in folder, for the build's kernels."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps([asdict(snapshot) for snapshot in taken.values()], indent=1) + "\n",
                                   encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, Snapshot]:
    """The snapshots of folder's manifest, by input path ({} if it has none)."""
    try:
        text = (folder / MANIFEST).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return {item["path"]: Snapshot(**item) for item in json.loads(text)}
