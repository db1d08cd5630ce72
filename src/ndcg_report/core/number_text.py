"""Numbers as text for millions of output lines at once, as Python's own formatting writes them.

Arrow string arrays built by vectorised arithmetic, the same text Python's own formatting gives,
without a Python call per number."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ndcg_report.inputs.columns import bools, from_numpy, strings
from ndcg_report.inputs.columns import text as text_scalar

_EXACT_BELOW = 2.0 ** 40  # scaled magnitudes whose fraction a double still holds to ~1e-4
_NEAR_HALF = 1e-3  # closer to .5 than this after scaling: Python decides the rounding


def fixed(values: np.ndarray, digits: int) -> pa.Array:
    """f"{v:.{digits}f}" of every value, as an Arrow string array.

    Values whose scaled magnitude is small and not near a rounding half are formatted by integer
    arithmetic; the rest (nan, inf, huge values, near-halves) by Python, so every string is exact.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.abs(values) * 10.0 ** digits
        fast = np.isfinite(scaled) & (scaled < _EXACT_BELOW)
        scaled = np.where(fast, scaled, 0.0)
        fast &= np.abs(scaled - np.floor(scaled) - 0.5) > _NEAR_HALF
    rounded = np.rint(np.where(fast, scaled, 0.0)).astype(np.int64)
    if 0 < digits < _TABLE_WIDTH and rounded.max(initial=0) < _TABLE_SIZE:  # below 10 (NDCG): one lookup
        text = _decimal_table(digits).take(from_numpy(rounded))
    elif digits > 0:
        whole, fraction = np.divmod(rounded, 10 ** digits)
        text = pc.binary_join_element_wise(integer_text(whole), integer_text(fraction, digits), text_scalar("."))
    else:
        text = integer_text(rounded)
    negative = np.signbit(values) & fast
    if negative.any():
        text = pc.if_else(bools(negative), pc.binary_join_element_wise(text_scalar("-"), text, text_scalar("")), text)
    finite = np.isfinite(values)
    for special, where in (("nan", np.isnan(values)), ("inf", values == np.inf), ("-inf", values == -np.inf)):
        if where.any():  # as Python writes them, without a Python call each (missing values are often NaN)
            text = pc.if_else(bools(where), text_scalar(special), text)
    slow = np.flatnonzero(~fast & finite)
    if len(slow):
        text = pc.replace_with_mask(text, bools(~fast & finite),
                                    strings([f"{v:.{digits}f}" for v in values[slow].tolist()]))
    return text


def shortest(values: np.ndarray, missing: str = "nan", whole_dot: bool = True) -> pa.Array:
    """The shortest text that reads back as each value (a whole number with a '.0', as Python's
    repr writes it, unless whole_dot is False); NaN and infinities as `missing`.

    Whole numbers below _TABLE_SIZE (counts, 0 and 1 of NDCG and judged) come from a lookup table;
    Arrow's cast writes the rest.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(values)
        whole = finite & (np.floor(values) == values)
        small = whole & (np.abs(values) < _TABLE_SIZE)
    magnitude = np.where(small, np.abs(values), 0.0).astype(np.int64)
    text = _whole_table(whole_dot).take(from_numpy(magnitude))
    negative = small & np.signbit(values)  # -0.0 too, as repr writes it
    if negative.any():
        text = pc.if_else(bools(negative), pc.binary_join_element_wise(text_scalar("-"), text, text_scalar("")), text)
    with np.errstate(invalid="ignore"):
        integral = whole & ~small & (np.abs(values) < 1e16)  # repr writes these in full (Arrow: 1e+10)
    if integral.any():
        digits = pc.cast(from_numpy(values[integral].astype(np.int64)), pa.string())
        text = pc.replace_with_mask(text, bools(integral),
                                    pc.binary_join_element_wise(digits, text_scalar(".0"), text_scalar(""))
                                    if whole_dot else digits)
    with np.errstate(invalid="ignore"):
        exponent = finite & ~small & ~integral & ((np.abs(values) < 1e-4) | (np.abs(values) >= 1e9))
    if exponent.any():  # where repr and Arrow differ (1e-05 vs 1e-5; 1e+10 or 10000000000.5): Python's own text
        shown = [repr(value) for value in values[exponent].tolist()]
        if not whole_dot:
            shown = [value[:-2] if value.endswith(".0") else value for value in shown]
        text = pc.replace_with_mask(text, bools(exponent), strings(shown))
    rest = finite & ~small & ~integral & ~exponent  # 1e-4 <= |v| < 1e9, not whole: both write plain digits
    if rest.any():
        text = pc.replace_with_mask(text, bools(rest), pc.cast(from_numpy(values[rest]), pa.string()))
    if not finite.all():
        text = pc.if_else(bools(finite), text, text_scalar(missing))
    return text


def integer_text(values: np.ndarray, width: int = 0) -> pa.Array:
    """Decimal text of non-negative integers, zero-padded to width if given: a lookup in a cached
    table of all texts below _TABLE_SIZE (one `take`), Arrow's cast otherwise."""
    values = np.asarray(values, dtype=np.int64)
    if len(values) and width <= _TABLE_WIDTH and values.min() >= 0 and values.max() < _TABLE_SIZE:
        return _integer_table(width).take(from_numpy(values))
    text = pc.cast(from_numpy(values), pa.string())
    return pc.utf8_lpad(text, width=width, padding="0") if width else text


_TABLE_WIDTH = 5
_TABLE_SIZE = 10 ** _TABLE_WIDTH


def _counting() -> pa.Array:
    """0, 1, ..., _TABLE_SIZE - 1 as decimal text (Arrow's cast writes an integer as str() does)."""
    return pc.cast(from_numpy(np.arange(_TABLE_SIZE, dtype=np.int64)), pa.string())


@functools.lru_cache(maxsize=_TABLE_WIDTH)
def _decimal_table(digits: int) -> pa.Array:
    """f"{n / 10**digits:.{digits}f}" of every n below _TABLE_SIZE (n // 10**digits < 10), exactly: built
    by Arrow's kernels from the integer texts, not by a Python call per entry (a process writes one
    table for each form it prints, so the tables are part of every command's time)."""
    unit = 10 ** digits
    numbers = np.arange(_TABLE_SIZE, dtype=np.int64)
    whole = pc.cast(from_numpy(numbers // unit), pa.string())
    fraction = pc.utf8_lpad(pc.cast(from_numpy(numbers % unit), pa.string()), width=digits, padding="0")
    return pc.binary_join_element_wise(whole, fraction, text_scalar("."))


@functools.lru_cache(maxsize=_TABLE_WIDTH + 1)
def _integer_table(width: int) -> pa.Array:
    """f"{n:0{width}d}" (str(n) for width 0) of every n below _TABLE_SIZE."""
    return pc.utf8_lpad(_counting(), width=width, padding="0") if width else _counting()


@functools.lru_cache(maxsize=2)
def _whole_table(dot: bool) -> pa.Array:
    """f"{n}.0" (str(n) without dot) of every n below _TABLE_SIZE."""
    return pc.binary_join_element_wise(_counting(), text_scalar(".0"), text_scalar("")) if dot else _counting()


def text_bytes(strings: pa.Array) -> memoryview:
    """The bytes of all the strings of an Arrow string array, back to back (a view, no copy)."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if len(strings) == 0:
        return memoryview(b"")
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(strings.buffers()[1], dtype=offset_type)[strings.offset: strings.offset + len(strings) + 1]
    return memoryview(strings.buffers()[2])[int(offsets[0]): int(offsets[-1])]
