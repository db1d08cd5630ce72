"""The range a relevance label may take (a 32-bit integer's), checked once for every qrels however it is given.

A label is a gain (linear: itself; exponential: 2**label - 1, summed relative to each query's largest
label, so exact for any label), `judges` casts it to a 64-bit integer, and trec_eval reads it with
atol into a C long (32 bits at least, on every platform). Within -2**31 to 2**31 - 1 every one of those
is exact: the cast cannot wrap, a query's linear gains sum exactly (to 2**53) for up to 2**22
judgements and stay finite for any number, and every build of trec_eval reads the same grades. A label outside it (1e300:
wrapped by the cast; 1e308: an infinite ideal DCG) is refused wherever qrels are read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import as_numpy

LOWEST, HIGHEST = -2**31, 2**31 - 1  # the range of a 32-bit signed integer (the least a C long holds)
LABEL_FIX = f"give relevance labels between {LOWEST} and {HIGHEST} (whole grades such as 0 to 3, as trec_eval's)"


def refuse_labels_out_of_range(table: pa.Table, error_for: Callable[[int, str, str], Exception]) -> None:
    """Raise error_for(row, problem, LABEL_FIX) for the first label of the qrels table's `rel` column
    outside LOWEST to HIGHEST, if there is one (the caller says where the row is)."""
    bounds = pc.min_max(table["rel"])
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or (low >= LOWEST and high <= HIGHEST):  # no rows, or all in range
        return
    labels = as_numpy(table["rel"])
    row = int(np.flatnonzero((labels < LOWEST) | (labels > HIGHEST))[0])
    raise error_for(row, f"relevance label {_shown(float(labels[row]))} is out of range", LABEL_FIX)


def _shown(label: float) -> str:
    """A label as it is usually written: a whole number in digits up to 1e16, else Python's repr (1e+300)."""
    return f"{label:.0f}" if label.is_integer() and abs(label) < 1e16 else repr(label)
