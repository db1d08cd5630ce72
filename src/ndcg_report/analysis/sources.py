"""What compare_runs was given, kept by its Experiment: what `Experiment.report` builds the report from.

Paths are kept as given, and so is the file of a parsed Run or Qrels that is still there (a build's kernels
give those). A run or a named judgment set given as another object (a DataFrame, a pyarrow Table, a
pytrec_eval dict, a Run of no file) is written once, at compare time, as Parquet into a private temporary
folder (InputStore), removed when the Experiment is garbage-collected or at exit: the Experiment holds no
run in memory (compare_runs' memory contract), and `report()` reads the file. (The reference qrels,
topics and groups need none of this: the Experiment holds them as read.)
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ndcg_report.errors import ParameterError
from ndcg_report.inputs.formats.python_data import is_one_run
from ndcg_report.inputs.reading import Qrels, Run

STORE_PREFIX = "ndcg-report-experiment-"  # the name of an InputStore's folder starts so, under tempfile's folder


@dataclass(frozen=True)
class Stored:
    """An input given as an object, written at compare time as Parquet into an InputStore's folder."""

    path: Path


class InputStore:
    """A private temporary folder (mode 0700, made by tempfile.mkdtemp on the first object kept) of the
    inputs compare_runs was given as objects, each written once as Parquet; it is removed when this store
    (with the Experiment holding it) is garbage-collected, or at the interpreter's exit."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self._count = 0

    def keep(self, given: object, table: pa.Table) -> object:
        """given itself if it is a path (or None); the path of a run or qrels parsed from a file that is still
        there (a build's kernels pass those: nothing to write); else table (the input as read) written here:
        Stored."""
        import pyarrow.parquet as pq

        if given is None or isinstance(given, (str, Path)):
            return given
        if isinstance(given, (Run, Qrels)) and given.path and Path(given.path).is_file():
            return Path(given.path)
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix=STORE_PREFIX))
            weakref.finalize(self, shutil.rmtree, str(self.folder), True)  # also at exit (finalize's atexit)
        self._count += 1
        target = self.folder / f"input-{self._count}.parquet"
        pq.write_table(table, target)
        return Stored(target)


def given(value: object, what: str) -> object:
    """The input as kept: a path as given, or the table an object was stored as (Stored, read again);
    ParameterError if its file has gone since (its folder removed by hand, or an Experiment unpickled)."""
    if not isinstance(value, Stored):
        return value
    import pyarrow.parquet as pq

    if not value.path.is_file():
        raise ParameterError(f"the {what} given to compare_runs as an object was written to {value.path}, which is gone "
                             "now; give build_report the inputs themselves: build_report({'runs': ..., 'qrels': ..., "
                             "'baseline': ...}, out_dir, ...)")
    return pq.read_table(value.path)


def path_or_none(value: object) -> str | Path | None:
    """value if it is a path, else None: topics and groups are held as read by the Experiment itself."""
    return value if isinstance(value, (str, Path)) else None


@dataclass(frozen=True, eq=False)
class Sources:
    """compare_runs' inputs as kept (a path, or Stored in `store`) and its other arguments (`options`)."""

    runs: tuple[object, ...]  # each run as kept, in order
    qrels: object  # the path of one set of judgements (else None: the Experiment holds it), or {name: set as kept}
    baseline: object
    more_baselines: tuple[tuple[str, object], ...] = ()  # (name, as kept) of every other baseline, in order
    topics: str | Path | None = None
    groups: str | Path | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    store: InputStore | None = None  # the folder of the inputs given as objects; removed with this object


def check_pair(pair: tuple) -> tuple:
    """pair itself; ParameterError unless it is (name as text, run)."""
    if len(pair) != 2 or not isinstance(pair[0], str):
        raise ParameterError("give each named run as a (name, run) pair, the name as text")
    return pair


def given_pairs(runs: object) -> list[tuple[str, object]] | None:
    """(name given, '' where none; the run) of compare_runs' `runs` in order, each checked (check_pair): a
    mapping's items, a list's runs or (name, run) pairs, one run; None for an iterator, whose runs are
    read once and not held."""
    if is_one_run(runs):  # a pytrec_eval/ranx dict of one run, not a mapping of names to runs
        return [("", runs)]
    if isinstance(runs, Mapping):
        if any(not isinstance(name, str) for name in runs):
            raise ParameterError("the names of runs (the mapping's keys) must be text")
        return list(runs.items())
    if isinstance(runs, (list, tuple)):
        return [check_pair(item) if isinstance(item, tuple) else ("", item) for item in runs]
    if isinstance(runs, Iterator):
        return None
    return [("", runs)]
