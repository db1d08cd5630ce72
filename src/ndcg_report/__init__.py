"""ndcg-report: exact, fast NDCG@k (and trec_eval's other measures) of TREC runs, compared against a BM25 baseline."""

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.core.measures import Measure
from ndcg_report.core.metrics import Evaluation, QueryCounts, evaluate, parse_cutoffs
from ndcg_report.inputs.trec import read_qrels, read_run, read_topics
from ndcg_report.version import __version__

_LAZY = {"compare_runs": "ndcg_report.report.experiment", "Experiment": "ndcg_report.report.experiment"}

__all__ = [
    "Evaluation",
    "Experiment",
    "compare_runs",
    "InputError",
    "Measure",
    "ParameterError",
    "QueryCounts",
    "evaluate",
    "parse_cutoffs",
    "read_qrels",
    "read_run",
    "read_topics",
    "__version__",
]


def __getattr__(name: str):
    """compare_runs and Experiment need pandas, scipy and matplotlib: imported on first use, so
    `ndcg-report eval` does not pay for them."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ndcg_report' has no attribute {name!r}")
