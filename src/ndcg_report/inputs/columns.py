"""Arrow columns as NumPy arrays and back, zero-copy and without pyarrow importing pandas.

pyarrow's to_numpy, and pa.array() or pa.scalar() of Python values, import pandas: a quarter of a
second of every eval. Also the one type every reader gives ids in (id_strings), and the Arrow types
an id or a score or label column may have (types_wanted: Parquet files and tables given to the API alike).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_NUMPY_TYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def one_array(column: pa.ChunkedArray) -> pa.Array:
    """A chunked array as one array: its only chunk as it is (combine_chunks copies even that), else
    the chunks concatenated."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def as_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a null-free numeric or boolean array (booleans as bool); zero-copy if possible."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 0:  # combine_chunks would build an empty array with pa.array (see strings)
            return np.zeros(0, dtype=bool if pa.types.is_boolean(values.type) else _NUMPY_TYPES[values.type])
        values = one_array(values)
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


def strings(values: list[str]) -> pa.Array:
    """An Arrow string array of Python strings, built from its buffers: pa.array() and pa.scalar()
    of Python or NumPy values make pyarrow import pandas (a quarter of a second of every eval)."""
    data = [value.encode("utf-8") for value in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(item) for item in data], out=offsets[1:])
    kind, offsets = (pa.string(), offsets.astype(np.int32)) if offsets[-1] < 2**31 else (pa.large_string(), offsets)
    return pa.Array.from_buffers(kind, len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


def text(value: str) -> pa.Scalar:
    """One Arrow string scalar (see strings), for compute functions' literal arguments."""
    return strings([value])[0]


def bools(values: np.ndarray) -> pa.Array:
    """A null-free Arrow boolean array of a NumPy array (see strings: no pandas import)."""
    return pc.cast(from_numpy(np.ascontiguousarray(values, dtype=bool).view(np.uint8)), pa.bool_())



def is_text_type(kind: pa.DataType) -> bool:
    """A string type of any layout: string, large_string, string_view (pyarrow >= 16)."""
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or getattr(pa.types, "is_string_view",
                                                                                  lambda _: False)(kind)


def types_wanted(kind: pa.DataType, value: bool) -> str | None:
    """None if a column of this type (or a dictionary of it) may hold ids (strings or whole numbers) or,
    `value`, scores and labels (integers, floats, decimals: not booleans or dates); else what it must hold."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if value:
        ok = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
        return None if ok else "numbers"
    return None if is_text_type(kind) or pa.types.is_integer(kind) else "strings or whole numbers"


def id_strings(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Ids in the one type every reader gives: string (large_string only past 2 GiB of text):
    dictionaries decoded, string_view and large_string cast (pandas >= 2 and 3 write those), whole
    numbers written in decimal. Mixing inputs written by different tools then never mixes types."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_string(column.type):
        return column
    try:
        return column.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowCapacityError):  # more than 2 GiB of text in one chunk
        return column.cast(pa.large_string())
