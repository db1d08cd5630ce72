"""Shared fixtures: the TREC DL 2019 passage data shipped inside the package."""

from __future__ import annotations

import json
import signal
from importlib import resources
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

# A suite started as a background job of a non-interactive shell (`cmd &` in a script) inherits
# SIGINT ignored, and the tool rightly leaves an ignored SIGINT alone; the Ctrl-C tests need it as a
# terminal gives it, so the suite (and every process it starts) gets the default back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def sighup_at_default():
    """SIGHUP at its default for one test and every process it starts, as a terminal's session has it.

    A suite run under nohup (or by cron or a CI runner that starts jobs so) inherits SIGHUP ignored, and
    the tool rightly keeps an ignored SIGHUP ignored, so a hang-up test would see no hang-up. Set here, in
    the suite's process, it reaches the test's own handlers and its children alike (Popen's
    restore_signals resets only the signals Python itself ignores, not SIGHUP), and it is put back after
    the test: outside the hang-up tests the run still survives its terminal hanging up, as nohup asked.
    """
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, previous)


def _statsmodels_holm_without_a_full_collection() -> None:
    """statsmodels' multipletests(method="holm"), our reference for Holm's adjustment, ends with a
    gc.collect() (to free its temporary array): 0.05 s in a fresh process, half a second in this suite's
    heap, 25 s over the tests that call it. Its numbers do not depend on it, so while it runs (and only
    then) gc.collect does nothing; the tests import this wrapper as statsmodels' multipletests."""
    import functools
    import gc

    from statsmodels.stats import multitest

    original = multitest.multipletests

    @functools.wraps(original)
    def multipletests(*args, **kwargs):
        collect = gc.collect
        gc.collect = lambda *_: 0
        try:
            return original(*args, **kwargs)
        finally:
            gc.collect = collect

    multitest.multipletests = multipletests


_statsmodels_holm_without_a_full_collection()


def pytest_collection_finish(session) -> None:
    """Freeze what collection made (every test module, fixture and plugin object): the cyclic collector
    then no longer walks it again at each full collection, which in this suite's heap costs seconds."""
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def dl19() -> dict[str, Path]:
    folder = Path(str(resources.files("ndcg_report") / "data" / "dl19-passage"))
    return {
        "qrels": folder / "qrels.dl19-passage.txt",
        "bm25": folder / "run.msmarco-v1-passage.bm25-default.dl19.txt.gz",
        "monot5": folder / "monot5.dl19.run.gz",
        "topics": folder / "topics.dl19-passage.txt",
        "bm25_eval": TESTS / "data" / "run.msmarco-v1-passage.bm25-default.dl19.eval",
    }


@pytest.fixture
def disjoint_run_and_baseline(tmp_path) -> tuple[Path, Path]:
    """(a run of the small set's first 4 queries, a baseline of the others) in tmp_path: with
    --missing skip no query is averaged in both."""
    small = TESTS / "data" / "small"
    lines = (small / "monot5.txt").read_text().splitlines()
    qids = sorted({line.split()[0] for line in lines})
    run, baseline = tmp_path / "a.txt", tmp_path / "b.txt"
    run.write_text("\n".join(line for line in lines if line.split()[0] in qids[:4]) + "\n")
    baseline_lines = (small / "bm25.txt").read_text().splitlines()
    baseline.write_text("\n".join(line for line in baseline_lines if line.split()[0] in qids[4:]) + "\n")
    return run, baseline


def pytrec_dicts(run, qrels) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """(qrels, run) DataFrames (qid, docid, rel / score) as the dicts pytrec_eval takes, labels as ints."""
    qrel_dict: dict[str, dict[str, int]] = {}
    for row in qrels.itertuples():
        qrel_dict.setdefault(row.qid, {})[row.docid] = int(row.rel)
    run_dict: dict[str, dict[str, float]] = {}
    for row in run.itertuples():
        run_dict.setdefault(row.qid, {})[row.docid] = float(row.score)
    return qrel_dict, run_dict

@pytest.fixture
def fake_steps(monkeypatch):
    """papermill, nbval and nbconvert replaced by a stub writing the report's files (the nth build's run
    mean is 0.5 + n/100); `during` (the list returned) holds callables run while the stub 'executes', as a
    user (or the system) acting mid-build would. What is under test is what happens around the steps."""
    from ndcg_report.build import pipeline

    from tests.helpers import PassedNbval, fake_summary

    during: list = []
    built = {"n": 0}

    def execute(params, template, executed, env, timeout, progress=False):
        built["n"] += 1
        for action in during:
            action()
        executed.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
        (executed.parent / "per_query.csv").write_text("system,qid\n")
        (executed.parent / "unjudged.tsv").write_text("qid\tdocid\tbest_rank\tn_systems\tsystems\n")
        (executed.parent / "summary.json").write_text(json.dumps(fake_summary(0.5 + built["n"] / 100)))

    monkeypatch.setattr(pipeline, "_execute", execute)
    monkeypatch.setattr(pipeline, "_drop_run_specific_metadata", lambda executed: None)
    monkeypatch.setattr(pipeline, "_start_nbval", lambda executed, env, timeout, progress=False: PassedNbval())
    monkeypatch.setattr(pipeline, "_read_notebook", lambda executed: None)
    monkeypatch.setattr(pipeline, "notebook_to_html", lambda notebook, exporter=None: "<html><main></main></html>")
    monkeypatch.setenv("NDCG_REPORT_NO_FORKS", "1")  # no fork server: nothing here starts a kernel
    return during


@pytest.fixture
def stop_signals(sighup_at_default):
    """The command line's stop signals (each raises interrupts.Interrupted), put back afterwards."""
    from ndcg_report.interrupts import install, restore

    replaced = install()
    yield
    restore(replaced)



@pytest.fixture(scope="session")
def _session_kernel_forks():
    """One kernel fork server for the whole session, started for the first module that shares it."""
    import os

    from ndcg_report.build.kernels.kernel_forks import running_fork_server

    with running_fork_server(f"pytest session {os.getpid()}") as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def _shared_kernel_forks(request):
    """In a module that sets SHARE_KERNEL_FORKS = True, builds fork their kernels from the session's fork
    server, as a batch's builds share the batch's: each build is spared the server's imports (about 1.5 s
    of CPU). Modules that test fork servers, stops or the processes of a build keep their own."""
    if not getattr(request.module, "SHARE_KERNEL_FORKS", False):
        yield None
        return
    from ndcg_report.build.kernels.kernel_forks import FORK_SERVER_ENV

    server = request.getfixturevalue("_session_kernel_forks")
    with pytest.MonkeyPatch.context() as patch:
        if server:
            patch.setenv(FORK_SERVER_ENV, server)
        yield server
