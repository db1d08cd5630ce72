"""ndcg-report: exact, fast trec_eval measures of TREC runs, compared against a BM25 baseline."""

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.version import __version__

# Imported on first use: `ndcg-report` must be able to handle Ctrl-C before numpy and pyarrow load.
_LAZY = {"compare_runs": "ndcg_report.analysis.compare", "Experiment": "ndcg_report.analysis.experiment",
         "Evaluation": "ndcg_report.core.evaluation", "QueryCounts": "ndcg_report.core.evaluation",
         "evaluate": "ndcg_report.core.evaluation_pass", "parse_cutoffs": "ndcg_report.core.measures.names",
         "read_qrels": "ndcg_report.inputs.reading", "read_run": "ndcg_report.inputs.reading",
         "read_topics": "ndcg_report.inputs.reading", "Measure": "ndcg_report.core.measures.names",
         "compare_suite": "ndcg_report.analysis.tables.suite", "Suite": "ndcg_report.analysis.tables.suite",
         "group_table": "ndcg_report.analysis.tables.groups", "read_groups": "ndcg_report.inputs.formats.groups",
         "build_report": "ndcg_report.build.from_objects"}

__all__ = [
    "Evaluation",
    "build_report",
    "Experiment",
    "compare_runs",
    "compare_suite",
    "Suite",
    "group_table",
    "read_groups",
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
    """The API is imported on first use (compare_runs and Experiment need pandas, scipy and
    matplotlib), so `ndcg-report eval` does not pay for them."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ndcg_report' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names too, so tab completion shows the whole API."""
    return sorted(set(globals()) | set(__all__))
