"""The number-to-text tables eval's output takes its texts from: every entry, and every vectorised number,
is Python's own formatting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ndcg_report.core import number_text
from ndcg_report.core.number_text import fixed, integer_text, shortest

SIZE = number_text._TABLE_SIZE


@pytest.mark.parametrize("digits", range(1, number_text._TABLE_WIDTH))
def test_each_decimal_table_entry_is_python_s_fixed_text(digits):
    unit = 10 ** digits
    assert number_text._decimal_table(digits).to_pylist() == [f"{n / unit:.{digits}f}" for n in range(SIZE)]


@pytest.mark.parametrize("width", range(number_text._TABLE_WIDTH + 1))
def test_each_integer_table_entry_is_python_s_text(width):
    assert number_text._integer_table(width).to_pylist() == [f"{n:0{width}d}" for n in range(SIZE)]


@pytest.mark.parametrize("dot", [True, False])
def test_each_whole_table_entry_is_repr_of_the_float_or_the_integer(dot):
    assert number_text._whole_table(dot).to_pylist() == [repr(float(n)) if dot else str(n) for n in range(SIZE)]


@given(st.lists(st.floats(min_value=0, max_value=9.99994, allow_nan=False), min_size=1, max_size=200),
       st.integers(1, 6))
def test_fixed_is_python_s_format_on_measure_values(values, digits):
    assert fixed(np.array(values), digits).to_pylist() == [f"{v:.{digits}f}" for v in values]


@given(st.lists(st.integers(0, 10 ** 7), min_size=1, max_size=200), st.integers(0, 7))
def test_integer_text_is_python_s(values, width):
    assert integer_text(np.array(values), width).to_pylist() == [f"{v:0{width}d}" for v in values]


def test_shortest_of_whole_counts_is_repr():
    values = np.arange(0, 2 * SIZE, 997, dtype=np.float64)
    assert shortest(values).to_pylist() == [repr(v) for v in values.tolist()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.integers(0, 10**6).map(lambda n: n / 10**5 + 5e-6),
                          st.integers(0, 10**4).map(lambda n: n / 10**4 + 0.00005)), min_size=1, max_size=50),
       st.integers(0, 8))
def test_vectorised_numbers_are_pythons_own_text(values, digits):
    assert fixed(np.array(values), digits).to_pylist() == [f"{v:.{digits}f}" for v in values]


@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.integers(-10**6, 10**6).map(float), st.floats(min_value=1e-6, max_value=1e-3),
                          st.floats(min_value=1e8, max_value=1e17), st.floats(min_value=1e-4, max_value=1.0),
                          st.sampled_from([0.0, -0.0, 1.0, 99999.0, 1e5, 1e10, 1e16, 1e-4, 1e-5])),
                min_size=1, max_size=50))
def test_shortest_numbers_are_pythons_repr(values):
    reprs = [repr(float(v)) if math.isfinite(v) else "null" for v in values]
    assert shortest(np.array(values), "null").to_pylist() == reprs
    bare = [r[:-2] if r.endswith(".0") else r for r in reprs]
    assert shortest(np.array(values), "null", whole_dot=False).to_pylist() == bare
