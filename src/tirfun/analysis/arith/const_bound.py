"""Constant integer intervals: the values an integer expression can take,
as a pair of Python ints.

A :data:`ConstInterval` is ``(lo, hi)``, both ends included. Three readers:

* :func:`const_interval` ``(expr, env)``: the interval of a scalar integer
  (or boolean) expression given intervals of its variables (TVM's
  ``ConstIntBound``). It is sound for TIR's wrap-around arithmetic: every
  operation is computed in unbounded integers and, where the result may
  leave the dtype's range (where the hardware would wrap), it becomes the
  whole range of the dtype. So ``x + 1`` for ``x`` in ``[0, 2**31 - 1]``
  (int32) is every int32, never ``[1, 2**31]``.
* the interval algebra :func:`add`, :func:`sub`, :func:`mul`,
  :func:`floordiv`, ... on ``(lo, hi)`` pairs of known ends, for callers that
  follow values themselves (the interpreter's code generator proves with it
  that a wrap-around or a bounds check can be left out; it checks
  :func:`interval_fits` after each operation);
* :func:`expr_bounds` ``(expr, ranges)``, bounds of an index expression
  given ranges of loop variables by name, or None when a part is unknown
  (the schedule primitives' question: does this split leave a remainder?).
"""

from __future__ import annotations

from collections.abc import Mapping

from ...nodes import (
    Add, Cast, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, Select, Sub, Var,
)
from ...nodes.dtype import DataType
from .terms import corners, int_value

ConstInterval = tuple["int | None", "int | None"]
"""``(lo, hi)``, both ends included, ``None`` where unbounded."""

UNBOUNDED: ConstInterval = (None, None)


# --------------------------------------------------------------------------
# the algebra on known ends


def full(dtype: DataType) -> tuple[int, int]:
    """Every value of an integer (or bool) dtype."""
    return (int(dtype.min_value()), int(dtype.max_value()))


def point(value: int) -> tuple[int, int]:
    """The single value ``value``."""
    return (value, value)


def interval_fits(iv: tuple[int, int], dtype: DataType) -> bool:
    """Whether every value of ``iv`` is representable in ``dtype``."""
    lo, hi = full(dtype)
    return lo <= iv[0] and iv[1] <= hi


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """``a + b`` in unbounded integers."""
    return (a[0] + b[0], a[1] + b[1])


def sub(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """``a - b`` in unbounded integers."""
    return (a[0] - b[1], a[1] - b[0])


def mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """``a * b`` in unbounded integers."""
    return corners(a[0], a[1], b[0], b[1])


def floordiv(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """``a // b`` when ``b`` is a positive constant, else None."""
    if b[0] != b[1] or b[0] <= 0:
        return None
    return (a[0] // b[0], a[1] // b[0])


def floormod(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """``a % b`` when ``b`` is a positive constant, else None."""
    if b[0] != b[1] or b[0] <= 0:
        return None
    c = b[0]
    if a[0] // c == a[1] // c:  # one period: the remainder is monotone
        return (a[0] % c, a[1] % c)
    return (0, c - 1)


def truncdiv(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """``truncdiv(a, b)`` for a non-negative ``a`` and a positive constant ``b``."""
    if a[0] < 0:
        return None
    return floordiv(a, b)


def truncmod(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """``truncmod(a, b)`` for a non-negative ``a`` and a positive constant ``b``."""
    if a[0] < 0:
        return None
    return floormod(a, b)


def minimum(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """``min(a, b)``."""
    return (min(a[0], b[0]), min(a[1], b[1]))


def maximum(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """``max(a, b)``."""
    return (max(a[0], b[0]), max(a[1], b[1]))


def union(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The smallest interval holding both."""
    return (min(a[0], b[0]), max(a[1], b[1]))


def within(iv: tuple[int, int], lo: int, hi_exclusive: int) -> bool:
    """Whether every value of ``iv`` lies in ``[lo, hi_exclusive)``."""
    return lo <= iv[0] and iv[1] < hi_exclusive


# --------------------------------------------------------------------------
# bounds of an expression, sound under wrap-around


def const_interval(e: PrimExpr, env: Mapping[Var, ConstInterval]) -> ConstInterval:
    """The constant interval a scalar integer (or boolean) expression can
    take, given constant intervals of its variables (a missing variable, or
    a missing end, is unbounded within its dtype). Both ends are always
    known and inside the dtype's range; any other expression gives
    :data:`UNBOUNDED`. Sound under wrap-around (see the module docstring)."""
    dt = e.dtype
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        return UNBOUNDED
    return _bounded(e, env)


def _in_dtype(dt: DataType, iv: tuple[int, int] | None) -> tuple[int, int]:
    """``iv`` when the dtype holds all of it, else the whole dtype: a result
    that may wrap can be any value."""
    if iv is None or not interval_fits(iv, dt):
        return full(dt)
    return iv


def _bounded(e: PrimExpr, env: Mapping[Var, ConstInterval]) -> tuple[int, int]:
    dt = e.dtype
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        return full(dt) if dt.is_integer or dt.is_bool else (0, 0)
    if isinstance(e, IntImm):
        return (e.value, e.value)
    dlo, dhi = full(dt)
    if isinstance(e, Var):
        lo, hi = env.get(e, UNBOUNDED)
        lo = dlo if lo is None or lo < dlo else lo
        hi = dhi if hi is None or hi > dhi else hi
        return (lo, hi) if lo <= hi else full(dt)
    t = type(e)
    if t is Add or t is Sub or t is Mul:
        a, b = _bounded(e.a, env), _bounded(e.b, env)
        return _in_dtype(dt, add(a, b) if t is Add else sub(a, b) if t is Sub else mul(a, b))
    if t is FloorDiv and isinstance(e.b, IntImm) and e.b.value != 0:
        c = e.b.value
        a = _bounded(e.a, env)
        out = (a[0] // c, a[1] // c) if c > 0 else (a[1] // c, a[0] // c)
        return _in_dtype(dt, out)  # INT_MIN // -1 wraps
    if t is FloorDiv:
        # by any nonzero integer, a quotient is no larger than the dividend
        # in magnitude (-1 // n lies in [-1, 1], whatever n is)
        lo, hi = _bounded(e.a, env)
        m = max(abs(lo), abs(hi))
        return _in_dtype(dt, (-m, m))
    if t is FloorMod and isinstance(e.b, IntImm) and e.b.value > 0:
        return floormod(_bounded(e.a, env), (e.b.value, e.b.value))
    if t is Min or t is Max:
        a, b = _bounded(e.a, env), _bounded(e.b, env)
        return minimum(a, b) if t is Min else maximum(a, b)
    if t is Select:
        return union(_bounded(e.true_value, env), _bounded(e.false_value, env))
    if t is Cast and (e.value.dtype.is_integer or e.value.dtype.is_bool) and e.value.dtype.lanes == 1:
        return _in_dtype(dt, _bounded(e.value, env))
    if dt.is_bool:
        return (0, 1)
    return full(dt)


def expr_bounds(e: PrimExpr, ranges: Mapping[str, tuple[int, int]]) -> tuple[int, int] | None:
    """Inclusive constant bounds of an integer index expression given
    inclusive ranges of variables by name, or None when a part is unknown
    (a variable without a range, a product of two variables, a load).

    Computed in unbounded integers, as index arithmetic is read by the
    schedule primitives (an index that wraps is out of bounds anyway)."""
    value = int_value(e)
    if value is not None:
        return value, value
    if isinstance(e, Var):
        return ranges.get(e.name)
    if isinstance(e, (Add, Sub)):
        a, b = expr_bounds(e.a, ranges), expr_bounds(e.b, ranges)
        if a is None or b is None:
            return None
        return add(a, b) if isinstance(e, Add) else sub(a, b)
    if isinstance(e, Mul):
        k = int_value(e.b)
        x = e.a
        if k is None:
            k, x = int_value(e.a), e.b
        if k is None:
            return None
        b = expr_bounds(x, ranges)
        return None if b is None else mul(b, point(k))
    if isinstance(e, (FloorDiv, FloorMod)):
        c = int_value(e.b)
        if c is None or c <= 0:
            return None
        b = expr_bounds(e.a, ranges)
        if isinstance(e, FloorDiv):
            return None if b is None else floordiv(b, point(c))
        if b is not None and within(b, 0, c):
            return b
        return 0, c - 1
    return None


__all__ = [
    "ConstInterval", "UNBOUNDED", "const_interval", "expr_bounds", "full", "point",
    "interval_fits", "add", "sub", "mul", "floordiv", "floormod", "truncdiv", "truncmod",
    "minimum", "maximum", "union", "within",
]
