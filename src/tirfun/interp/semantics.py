"""What values of each TIR data type are, at run time, inside the interpreter.

Every scalar is a plain Python ``int``, ``float`` or ``bool``:

* integers are Python ints kept inside their dtype's range: an operation
  whose result may leave the range is wrapped (two's complement), exactly as
  the machine does;
* ``float64`` values are Python floats;
* ``float32``, ``float16`` and ``bfloat16`` values are Python floats that
  hold a value of that type. An arithmetic operation is computed in double
  precision and rounded once to the type before another operation consumes
  it; for ``+ - * /`` and ``sqrt`` this gives the correctly rounded result
  of the narrow type, because double has more than twice the precision;
* ``bool`` values are Python bools.

Storage is a flat, indexable sequence per buffer: a ``memoryview`` over the
caller's numpy array where Python's ``struct`` module knows the element type
(stores then round floats and are range-checked for free), or a list of
Python values for ``float16`` and ``bfloat16``, copied back at the end.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from .. import numpy_dtypes
from ..errors import InterpError
from ..nodes.dtype import MINI_FLOATS, DataType

# memoryview format per numpy dtype name; float16 has no memoryview format
MEMORYVIEW_FORMATS = {
    "bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H",
    "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q",
    "float32": "f", "float64": "d",
}

INF = math.inf
NAN = math.nan

_F32 = struct.Struct("<f")


class Fault(Exception):
    """Raised by compiled code; the runner turns it into an InterpError that
    also names the statement being executed."""


def numpy_dtype(dtype: DataType) -> np.dtype:
    """The numpy dtype that holds one element of ``dtype`` in an argument
    array (``bfloat16``: ml_dtypes' bfloat16, see :mod:`tirfun.numpy_dtypes`)."""
    found = numpy_dtypes.numpy_dtype(dtype) if dtype.lanes == 1 else None
    if found is None:
        raise InterpError(f"the interpreter has no storage for elements of type {dtype}")
    return found


# ----------------------------------------------------------------------------
# rounding to narrow float types


def round_f32(x: float, _pack=_F32.pack, _unpack=_F32.unpack) -> float:
    """``x`` rounded to the nearest float32 (overflow gives an infinity)."""
    try:
        return _unpack(_pack(x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def round_f16(x: float) -> float:
    """``x`` rounded to the nearest float16."""
    with np.errstate(over="ignore"):
        return float(np.float16(x))


def round_bf16(x: float) -> float:
    """``x`` rounded to the nearest bfloat16, as ml_dtypes rounds it (to
    nearest from the exact value, ties to even; overflow gives an infinity)."""
    return numpy_dtypes.round_bfloat16(x)


def _mini_rounder(name: str):
    def rounder(x: float) -> float:
        return numpy_dtypes.round_mini_float(x, name)
    rounder.__name__ = f"round_{name}"
    rounder.__doc__ = f"``x`` rounded to {name}, as ml_dtypes rounds it."
    return rounder


ROUNDERS = {"float32": round_f32, "float16": round_f16, "bfloat16": round_bf16,
            **{name: _mini_rounder(name) for name in MINI_FLOATS}}

_ROUNDER_NAMES = {"float32": "h_r32", "float16": "h_r16", "bfloat16": "h_rbf16",
                  **{name: f"h_r_{name}" for name in MINI_FLOATS}}


def rounder_name(dtype: DataType) -> str | None:
    """Name of the helper that rounds a double to ``dtype`` (None: no rounding)."""
    return _ROUNDER_NAMES.get(str(dtype.element_of))


def rounder_helpers() -> dict:
    """The rounding helpers by the names :func:`rounder_name` gives."""
    return {_ROUNDER_NAMES[name]: ROUNDERS[name] for name in _ROUNDER_NAMES}


# ----------------------------------------------------------------------------
# integer wrap-around


def wrap_code(code: str, dtype: DataType) -> str:
    """Python source wrapping the integer value of ``code`` into ``dtype``."""
    bits = dtype.bits
    mask = (1 << bits) - 1
    if dtype.is_bool:
        return f"(({code}) & 1)"
    if dtype.is_uint:
        return f"(({code}) & {mask})"
    half = 1 << (bits - 1)
    return f"(((({code}) + {half}) & {mask}) - {half})"


def wrap_int(value: int, dtype: DataType) -> int:
    """``value`` wrapped into the integer ``dtype``."""
    bits = dtype.bits
    mask = (1 << bits) - 1
    if dtype.is_bool:
        return value & 1
    if dtype.is_uint:
        return value & mask
    half = 1 << (bits - 1)
    return ((value + half) & mask) - half


def const_float(value: float, dtype: DataType) -> str:
    """Source text of a float constant of ``dtype``, rounded to that type."""
    rounder = ROUNDERS.get(str(dtype.element_of))
    if rounder is not None:
        value = rounder(value)
    if math.isnan(value):  # the sign survives, as in the compiled constant
        return "(-h_nan)" if math.copysign(1.0, value) < 0 else "h_nan"
    if math.isinf(value):
        return "h_inf" if value > 0 else "(-h_inf)"
    return repr(float(value))


# ----------------------------------------------------------------------------
# conversions (Cast)


def float_to_int(x: float, bits: int, signed: bool) -> int:
    """C's conversion of a float to an integer: truncation toward zero,
    then wrap-around. NaN and infinities, undefined in C, become 0."""
    if x != x or x in (INF, -INF):
        return 0
    v = int(x)
    mask = (1 << bits) - 1
    if signed:
        half = 1 << (bits - 1)
        return ((v + half) & mask) - half
    return v & mask


# ----------------------------------------------------------------------------
# arithmetic with C or IEEE semantics where Python's differ


def fdiv(a: float, b: float) -> float:
    """IEEE division: dividing by zero gives an infinity or NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def ffloordiv(a: float, b: float) -> float:
    """``floor(a / b)`` on floats."""
    q = fdiv(a, b)
    if q != q or q in (INF, -INF):
        return q
    return math.copysign(float(math.floor(q)), q)  # floor(-0.0) is -0.0


def ffloormod(a: float, b: float) -> float:
    """``a - floor(a / b) * b`` on floats."""
    if b == 0:
        return NAN
    return a - ffloordiv(a, b) * b


def ftruncmod(a: float, b: float) -> float:
    """C's ``fmod``."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return NAN


def tdiv(a: int, b: int) -> int:
    """Integer division rounding toward zero (C's ``/``)."""
    if b == 0:
        raise Fault("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """Remainder of :func:`tdiv`: takes the sign of ``a`` (C's ``%``)."""
    if b == 0:
        raise Fault("integer modulo by zero")
    return a - b * tdiv(a, b)


def shift_left(a: int, b: int) -> int:
    if b < 0:
        raise Fault(f"shift by a negative amount ({b})")
    return a << b


def shift_right(a: int, b: int) -> int:
    if b < 0:
        raise Fault(f"shift by a negative amount ({b})")
    return a >> b


__all__ = [
    "MEMORYVIEW_FORMATS", "Fault", "numpy_dtype", "round_f32", "round_f16", "round_bf16",
    "rounder_name", "rounder_helpers", "wrap_code", "wrap_int", "const_float",
    "float_to_int", "fdiv", "ffloordiv", "ffloormod", "ftruncmod", "tdiv", "tmod", "shift_left",
    "shift_right", "INF", "NAN",
]
