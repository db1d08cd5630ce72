"""How the report writes numbers, p-values, counts and per-query differences as text and colour."""

from __future__ import annotations

import math
import numbers

import numpy as np


def count_phrase(value: float, noun: str) -> str:
    """'1 win', '3 wins', '2 losses'."""
    count = int(value)
    return f"{count} {noun}" if count == 1 else f"{count} {noun}es" if noun.endswith("s") else f"{count} {noun}s"


def percent(value: float) -> str:
    """'+4.2%', or '–' where there is no number."""
    return "–" if value is None or not math.isfinite(value) else f"{value:+.1%}"


def signed(value: float) -> str:
    """'+0.1234', or '–' where there is no number."""
    return "–" if value is None or not math.isfinite(value) else f"{value:+.4f}"


FLOOR_TOLERANCE = 1e-9  # relative: a p-value this close to its floor is at it (Holm's product rounds)


def p_pair(value: float, holm: float, floor: float | None = None, holm_floor: float | None = None) -> str:
    """'0.0123 (0.0369)': a p-value and its Holm-adjusted value, each with its floor (format_p)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{format_p(value, floor)} ({format_p(holm, holm_floor)})"


def format_p(value: object, floor: float | None = None) -> str:
    """'0.0123', '<0.0001', '≤0.0036' at `floor` (the smallest p-value the resampling gives:
    stats.resampling.pvalue_floor), or '–' where there is no number (None, NaN, text, a bool: a missing
    JSON value)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        return "–"
    if value < 1e-4:
        return "<0.0001"
    return f"≤{float(value):.4f}" if at_floor(value, floor) else f"{float(value):.4f}"


def p_phrase(value: float, floor: float | None = None) -> str:
    """'= 0.0123', '< 0.0001', '≤ 0.0036' at `floor` (as format_p), or 'not computable'."""
    if value is None or math.isnan(value):
        return "not computable"
    if value < 1e-4:
        return "< 0.0001"
    return f"≤ {value:.4f}" if at_floor(value, floor) else f"= {value:.4f}"


def at_floor(value: float, floor: float | None) -> bool:
    """True if a p-value is at the floor given (none given: never)."""
    return floor is not None and value <= floor * (1 + FLOOR_TOLERANCE)


def number(value: float) -> str:
    """A whole number without '.0', another as Python writes it."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def tint(delta: float) -> str:
    """A background colour for a per-query difference: green gains, red losses, white for none."""
    if not np.isfinite(delta) or delta == 0:
        return "#ffffff"
    strength = min(1.0, abs(delta) / 0.5)
    low, high = ((255, 255, 255), (120, 200, 140)) if delta > 0 else ((255, 255, 255), (235, 130, 110))
    rgb = [round(a + (b - a) * strength) for a, b in zip(low, high)]
    return "#" + "".join(f"{value:02x}" for value in rgb)
