"""A parsed run of millions of lines takes hundreds of MB, so compare_runs and the report's reading
hold one run under test at a time and an Experiment keeps none (the peak memory of a
report over 200,000 queries). Each test follows every run read through a weak reference."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from ndcg_report.build import notebook_io
from ndcg_report import compare_runs, read_run
from ndcg_report.inputs.reading import Run
from ndcg_report.analysis import compare as experiment_module
from ndcg_report.build import loading
from ndcg_report.analysis.experiment import RunInfo

from tests.analysis.test_experiment import BM25, QRELS
from tests.analysis.test_experiment import RUNS as DL19_RUNS

RUNS = {name: DL19_RUNS[name] for name in ("monoT5", "RRF", "Interpolation")}
SMALL = Path(__file__).resolve().parents[1] / "data" / "small"


class Tracked:
    """Weak references to every run a reader returned, in order, and what was alive at each read."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref] = []
        self.alive_at_read: list[list[int]] = []  # per read: the earlier reads still alive

    def alive(self) -> list[int]:
        return [i for i, ref in enumerate(self.refs) if ref() is not None]

    def wrap(self, reader):
        def read(*args, **kwargs):
            self.alive_at_read.append(self.alive())  # no gc.collect(): a run must die by reference counting
            run = reader(*args, **kwargs)
            assert isinstance(run, Run)
            self.refs.append(weakref.ref(run))
            return run
        return read


def runs_in_memory(value, seen=None) -> list[Run]:
    """Every Run reachable from value through attributes, mappings and sequences."""
    seen = set() if seen is None else seen
    if id(value) in seen or isinstance(value, (str, bytes, int, float)) or value is None:
        return []
    seen.add(id(value))
    if isinstance(value, Run):
        return [value]
    found = []
    children = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, (list, tuple)) else (
        list(vars(value).values()) if hasattr(value, "__dict__") else [])
    for child in children:
        found += runs_in_memory(child, seen)
    return found


def test_compare_runs_reads_one_run_at_a_time_and_keeps_none(monkeypatch):
    tracked = Tracked()
    monkeypatch.setattr(experiment_module, "load_run", tracked.wrap(experiment_module.load_run))
    experiment = compare_runs(RUNS, QRELS, BM25, baseline_name="BM25", n_resamples=200)
    assert len(tracked.refs) == 1 + len(RUNS)  # the baseline first (for its name), then each run
    # when each run under test is read, only the baseline is still held: no earlier run under test
    assert tracked.alive_at_read == [[]] + [[0]] * len(RUNS)
    assert tracked.alive() == []
    assert runs_in_memory(experiment) == []
    assert experiment.runs == {name: RunInfo(path=str(path), tag=read_run(path).tag)
                               for name, path in [*RUNS.items(), ("BM25", BM25)]}
    assert set(experiment.rankings) == {*RUNS, "BM25"} and experiment.tie_ranges


def test_runs_from_a_generator_are_let_go_as_they_are_evaluated():
    refs = []

    def runs():
        for name, path in RUNS.items():
            assert all(ref() is None for ref in refs), "an earlier run is still held"
            run = read_run(path)
            refs.append(weakref.ref(run))
            yield name, run
            del run

    baseline = read_run(BM25)
    baseline_ref = weakref.ref(baseline)
    experiment = compare_runs(runs(), QRELS, baseline, baseline_name="BM25", n_resamples=200)
    del baseline
    assert len(refs) == len(RUNS) and all(ref() is None for ref in refs) and baseline_ref() is None
    expected = compare_runs(RUNS, QRELS, BM25, baseline_name="BM25", n_resamples=200)
    assert experiment.names == expected.names and experiment.runs == expected.runs
    assert experiment.leaderboard.equals(expected.leaderboard)
    assert experiment.comparisons.equals(expected.comparisons)
    for name in expected.systems:
        assert experiment.rankings[name].top.equals(expected.rankings[name].top)
        assert experiment.rankings[name].relevant.equals(expected.rankings[name].relevant)
    assert experiment.tie_ranges.keys() == expected.tie_ranges.keys()
    for name, ties in expected.tie_ranges.items():
        assert experiment.tie_ranges[name].worst.equals(ties.worst)
        assert experiment.tie_ranges[name].best.equals(ties.best)
        assert experiment.tie_ranges[name].queries.equals(ties.queries)
    assert experiment.unjudged_pool().equals(expected.unjudged_pool())


def test_a_generator_of_runs_is_checked_as_a_list_is():
    from ndcg_report import ParameterError

    with pytest.raises(ParameterError, match="give at least one run"):
        compare_runs(iter([]), SMALL / "qrels.txt", SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match=r"give each named run as a \(name, run\) pair"):
        compare_runs(iter([("a", SMALL / "monot5.txt", "extra")]), SMALL / "qrels.txt", SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match="is given twice"):
        compare_runs((path for path in [SMALL / "monot5.txt", SMALL / "monot5.txt"]), SMALL / "qrels.txt",
                     SMALL / "bm25.txt")
    with pytest.raises(ParameterError, match="like the baseline"):
        compare_runs(iter([("bm25", SMALL / "monot5.txt")]), SMALL / "qrels.txt", SMALL / "bm25.txt")


@pytest.mark.parametrize("cached", [False, True])
def test_the_report_holds_one_run_under_test_at_a_time_and_keeps_none(tmp_path, monkeypatch, cached):
    from ndcg_report.build.input_cache import INPUT_CACHE_ENV, save_parsed
    from ndcg_report.build.parameters import validate_parameters

    params = validate_parameters(runs=[{"name": name, "path": str(path)} for name, path in RUNS.items()],
                                 qrels=str(QRELS), baseline=str(BM25), baseline_name="BM25", ks="5,10")
    if cached:  # as in a build's kernel: the parsed runs are memory-mapped from the build's folder
        for path in (*RUNS.values(), BM25):
            save_parsed(tmp_path, read_run(path))
        monkeypatch.setenv(INPUT_CACHE_ENV, str(tmp_path))
    tracked = Tracked()
    monkeypatch.setattr(loading, "input_run", tracked.wrap(loading.input_run))
    report = notebook_io.load_report(params)
    # read in turn: the baseline (held while the runs are evaluated: it is evaluated last), then each run
    # under test, each let go before the next is read
    assert tracked.alive_at_read == [[]] + [[0]] * len(RUNS)
    assert tracked.alive() == []
    gc.collect()
    assert runs_in_memory(report) == []
    assert [info.path for info in report.experiment.runs.values()] == [str(p) for p in [*RUNS.values(), BM25]]


def test_a_build_reads_checks_and_saves_one_run_at_a_time(monkeypatch):
    from ndcg_report.build.loading import check_inputs
    from ndcg_report.build.parameters import validate_parameters

    params = validate_parameters(runs=[{"name": name, "path": str(path)} for name, path in RUNS.items()],
                                 qrels=str(QRELS), baseline=str(BM25), baseline_name="BM25", ks="5,10")
    tracked = Tracked()
    monkeypatch.setattr(loading, "read_run", tracked.wrap(loading.read_run))
    kept = []
    check_inputs(params, keep=lambda parsed: kept.append((type(parsed).__name__, parsed.path, tracked.alive())))
    assert tracked.alive_at_read == [[]] * (len(RUNS) + 1)  # the runs, then the baseline: none held meanwhile
    assert kept == [("Qrels", str(QRELS), [])] + [("Run", str(path), [i]) for i, path in
                                                   enumerate([*RUNS.values(), BM25])]
    assert tracked.alive() == []


def test_the_report_checks_paired_queries_as_each_run_is_read(tmp_path, disjoint_run_and_baseline):
    from ndcg_report.errors import InputError
    from ndcg_report.build.parameters import validate_parameters

    params = validate_parameters(runs=[str(SMALL / "monot5.txt"), str(tmp_path / "a.txt")], qrels=str(SMALL / "qrels.txt"),
                                 baseline=str(tmp_path / "b.txt"), missing="skip")
    with pytest.raises(InputError, match=f"{tmp_path / 'a.txt'}: no query is averaged in both this run and the baseline"):
        notebook_io.load_report(params)
