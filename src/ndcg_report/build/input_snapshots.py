"""A build's inputs copied once into its private staging folder, hashed as they are copied.

Each input a report parses and its kernels read (runs, qrels, topics, groups; not a corpus or a
documents file, which can be gigabytes and are read where they are) is copied into the staging
folder's `.inputs/files/` before anything is parsed, its sha256 taken of exactly the bytes written.
From then on the build reads it only there (inputs.access.snapshots), in its process and in its
kernels, so a report's sha256 and its numbers are of one version of each input, even of a file written
to in place while the build ran. A Parquet folder's files are copied (its sha256 is the one
files.path_sha256 gives the folder); a stream, copied once already (inputs.access.sources), is not
copied or read again.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ndcg_report.errors import InputError
from ndcg_report.files import folder_sha256
from ndcg_report.inputs.access.snapshots import Snapshot, snapshot_of
from ndcg_report.inputs.access.sources import copy_checked, stream_sha256
from ndcg_report.inputs.access.text_files import check_readable
from ndcg_report.inputs.detection import describe_input
from ndcg_report.inputs.formats.parquet import parquet_files

FILES = "files"  # the copies, in the build's folder of inputs
_ROOM_FIX = "free some room on that disk, or give --out on a disk with more room"


def take_snapshots(inputs: Mapping[Path, str], folder: Path) -> dict[str, Snapshot]:
    """A Snapshot of each input (path -> kind), its copy in folder/FILES, by absolute path; an input
    with a snapshot already (a suite's, while it builds its collections' reports) keeps it. InputError,
    as its reader would say it, for an input that cannot be read or a folder that is not a Parquet
    dataset; InputError too for a copy that would leave its disk too little room."""
    taken = {}
    for number, path in enumerate(inputs):
        key = os.path.abspath(path)
        snapshot = snapshot_of(key)
        if snapshot is None:
            streamed = stream_sha256(key)
            snapshot = (Snapshot(key, key, streamed) if streamed is not None
                        else _copied(Path(key), folder / FILES / str(number)))
        taken[key] = snapshot
    return taken


def with_formats(taken: Mapping[str, Snapshot], inputs: Mapping[Path, str]) -> dict[str, Snapshot]:
    """taken, each snapshot with the format its input was read in (inputs.detection.describe_input of
    its copy, for the kind inputs gives it), as this process knows the formats (one registered at run
    time too)."""
    kinds = {os.path.abspath(path): kind for path, kind in inputs.items()}
    return {key: replace(snapshot, format=snapshot.format or describe_input(Path(snapshot.copy), kinds[key]))
            for key, snapshot in taken.items()}


def _copied(path: Path, into: Path) -> Snapshot:
    """path copied into the folder `into` under its own name (so its format is told alike), hashed."""
    target = into / path.name
    if not path.is_dir():
        check_readable(path)
        return Snapshot(str(path), str(target), _copy_file(path, target))
    files = [file.relative_to(path) for file in parquet_files(path)]
    digests = {relative: _copy_file(path / relative, target / relative) for relative in files}
    return Snapshot(str(path), str(target), folder_sha256(sorted(digests.items())))


def _copy_file(path: Path, target: Path) -> str:
    """Copy the file at path to target (made), checking the room left (inputs.access.sources.copy_checked):
    the sha256 of the bytes written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as source, open(target, "xb") as copy:
            copy_checked(path, source, copy, digest=digest, text_only=False, where="the build's folder", fix=_ROOM_FIX)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # the build's disk is full: the build says so
        raise InputError(path, None, f"cannot be read ({exc.strerror or exc})", "check the file and the disk") from None
    return digest.hexdigest()
