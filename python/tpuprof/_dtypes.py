"""Data type names as tpuprof records them ("fp32", "int64", ...), from numpy dtypes, torch
dtypes, their string forms or None. The extension calls dtype_info once per dtype object and
caches the answer."""

from __future__ import annotations

from typing import Any, Tuple

# name -> (recorded name, bytes per element)
_TABLE = {
    "float32": ("fp32", 4), "float": ("fp32", 4), "fp32": ("fp32", 4), "f4": ("fp32", 4),
    "float16": ("fp16", 2), "half": ("fp16", 2), "fp16": ("fp16", 2), "f2": ("fp16", 2),
    "bfloat16": ("bf16", 2), "bf16": ("bf16", 2),
    "float64": ("fp64", 8), "double": ("fp64", 8), "fp64": ("fp64", 8), "f8": ("fp64", 8),
    "int8": ("int8", 1), "i1": ("int8", 1), "uint8": ("uint8", 1), "u1": ("uint8", 1),
    "int16": ("int16", 2), "short": ("int16", 2), "i2": ("int16", 2),
    "uint16": ("uint16", 2), "u2": ("uint16", 2),
    "int32": ("int32", 4), "int": ("int32", 4), "i4": ("int32", 4),
    "uint32": ("uint32", 4), "u4": ("uint32", 4),
    "int64": ("int64", 8), "long": ("int64", 8), "i8": ("int64", 8),
    "uint64": ("uint64", 8), "u8": ("uint64", 8),
    "bool": ("bool", 1), "b1": ("bool", 1),
    "complex64": ("complex64", 8), "cfloat": ("complex64", 8),
    "complex128": ("complex128", 16), "cdouble": ("complex128", 16),
    "quint8": ("quint8", 1), "qint8": ("qint8", 1), "qint32": ("qint32", 4),
}


def dtype_info(dtype: Any) -> Tuple[Any, int]:
    """(recorded name or None, bytes per element or 0) for a dtype object or name."""
    if dtype is None:
        return (None, 0)
    text = dtype if isinstance(dtype, str) else str(dtype)
    key = text[6:] if text.startswith("torch.") else text
    hit = _TABLE.get(key.lower())
    if hit is not None:
        return hit
    itemsize = getattr(dtype, "itemsize", 0)  # numpy dtypes outside the table
    return (key, itemsize if isinstance(itemsize, int) else 0)
