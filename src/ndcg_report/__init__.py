"""ndcg-report: exact, fast NDCG@k of TREC runs, compared against a BM25 baseline."""

from ndcg_report.errors import InputError, ParameterError
from ndcg_report.core.metrics import Evaluation, QueryCounts, evaluate, parse_cutoffs
from ndcg_report.inputs.trec import read_qrels, read_run, read_topics
from ndcg_report.version import __version__


__all__ = [
    "Evaluation",
    "InputError",
    "ParameterError",
    "QueryCounts",
    "evaluate",
    "parse_cutoffs",
    "read_qrels",
    "read_run",
    "read_topics",
    "__version__",
]
