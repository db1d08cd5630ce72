"""The BM25 baseline's settings: Anserini's defaults and the fixed choices of the tokeniser and scorer."""

from __future__ import annotations

import math
import numbers

from ndcg_report.errors import ParameterError

BM25_DEFAULTS = {"k1": 0.9, "b": 0.4, "top_k": 1000}  # Anserini's BM25 defaults, top 1000
STOPWORDS = "en"
STEMMER_LANGUAGE = "english"
METHOD = "lucene"


def check_parameters(*, k1: float, b: float, top_k: int) -> None:
    """Raise ParameterError unless k1 >= 0, 0 <= b <= 1 and top_k is a whole number >= 1."""
    if isinstance(k1, bool) or not isinstance(k1, (int, float)) or not math.isfinite(k1) or k1 < 0:
        raise ParameterError(f"k1 must be a finite number >= 0; got {k1!r}")
    if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 <= b <= 1:
        raise ParameterError(f"b must be a number between 0 and 1; got {b!r}")
    if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1:
        raise ParameterError(f"top_k must be a whole number >= 1; got {top_k!r}")
