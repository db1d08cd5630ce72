"""Arrow arrays as NumPy arrays without a copy, and without the pandas import pyarrow's to_numpy makes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_NUMPY_TYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def as_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a null-free numeric or boolean array (booleans as bool); zero-copy if possible."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_boolean(values.type):
        values = pc.cast(values, pa.uint8())
        return as_numpy(values).astype(bool)
    if values.null_count:
        raise ValueError("as_numpy needs an array without nulls")
    dtype = np.dtype(_NUMPY_TYPES[values.type])
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)


def as_numpy_or(values: pa.Array, missing: int | float) -> np.ndarray:
    """The values of a numeric array as a NumPy copy, nulls replaced by `missing` (fill_null with a
    Python value would make pyarrow import pandas, a quarter of a second)."""
    dtype = np.dtype(_NUMPY_TYPES[values.type])
    data = np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize).copy()
    if values.null_count:
        data[~as_numpy(values.is_valid())] = missing
    return data


def column_numpy(table: pa.Table, name: str) -> np.ndarray:
    """A numeric column of a table as a NumPy array (see as_numpy)."""
    return as_numpy(table[name])


def from_numpy(values: np.ndarray) -> pa.Array:
    """A null-free Arrow array over a 1-d numeric NumPy array, zero-copy (no pandas import)."""
    values = np.ascontiguousarray(values)
    arrow_type = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])
