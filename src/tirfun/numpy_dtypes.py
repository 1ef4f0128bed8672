"""The numpy dtype that holds elements of each TIR data type.

This is the one place that decides how arrays of each element type look
to a user: ``bfloat16`` arrays are numpy arrays of ml_dtypes'
``bfloat16`` dtype (the convention of JAX, TensorFlow and PyTorch's numpy
bridges), everywhere: the interpreter's arguments, ``tirfun.nd.array``,
the checks of a compiled function's arguments, ``NDArray.numpy()`` and the
generators in :mod:`tirfun.testing`. Values round to bfloat16 exactly as
ml_dtypes rounds them: to nearest, ties to even, from the exact value.

numpy and ml_dtypes are imported on first use, so ``import tirfun`` stays
light.
"""

from __future__ import annotations

import functools


@functools.cache
def bfloat16():
    """ml_dtypes' ``bfloat16`` as a numpy dtype (importing ml_dtypes also
    registers the name, so ``numpy.dtype("bfloat16")`` works after it)."""
    import ml_dtypes
    import numpy as np

    return np.dtype(ml_dtypes.bfloat16)


def numpy_dtype(dtype):
    """The numpy dtype of one lane of ``dtype`` (a DataType or its text),
    or None where numpy has none (handles, void)."""
    import numpy as np

    from .nodes.dtype import DataType

    dt = DataType(dtype).element_of
    if dt.code == "bfloat":
        return bfloat16()
    if dt.is_mini_float:
        return mini_float(str(dt))
    name = dt.numpy_name
    return None if name is None else np.dtype(name)


@functools.cache
def mini_float(name: str):
    """ml_dtypes' ``float8_e4m3fn``, ``float8_e5m2`` or ``float4_e2m1fn`` as
    a numpy dtype (one byte per element)."""
    import ml_dtypes
    import numpy as np

    return np.dtype(getattr(ml_dtypes, name))


def round_mini_float(x: float, name: str) -> float:
    """``x`` rounded to the narrow float ``name`` as ml_dtypes rounds it (to
    nearest, ties to even; float8_e4m3fn gives NaN past its largest value,
    float8_e5m2 an infinity, float4_e2m1fn saturates and makes NaN -0.0)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.array(x, np.float64).astype(mini_float(name)).astype(np.float64))


def round_bfloat16(x: float) -> float:
    """``x`` rounded to the nearest bfloat16 (ties to even; overflow gives
    an infinity), as a Python float."""
    return float(bfloat16().type(x))


def round_float(x: float, dtype) -> float | None:
    """``x`` rounded to the scalar float type ``dtype`` (a DataType or its
    text) as the interpreter rounds it, as a Python float; None where
    ``dtype`` is not a scalar float."""
    import numpy as np

    from .nodes.dtype import DataType

    dt = DataType(dtype)
    if dt.lanes != 1 or not dt.is_float:
        return None
    if dt.code == "bfloat":
        return round_bfloat16(x)
    if dt.is_mini_float:
        return round_mini_float(x, str(dt))
    name = dt.numpy_name
    if name is None:
        return None
    with np.errstate(over="ignore"):
        return float(np.dtype(name).type(x))


__all__ = ["bfloat16", "mini_float", "numpy_dtype", "round_bfloat16", "round_float",
           "round_mini_float"]
