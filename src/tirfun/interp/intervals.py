"""Integer intervals, used to leave out run-time work the compiler can prove
unnecessary: a wrap-around when no overflow is possible, a bounds check
when an index is known to lie inside its dimension.

An interval is a pair ``(lo, hi)`` of Python ints, both inclusive. The
analysis is deliberately simple (loop variables over constant ranges and
affine arithmetic on them): whatever it cannot bound gets its dtype's full
range, and then the check stays in the generated code.
"""

from __future__ import annotations

from ..nodes.dtype import DataType

Interval = tuple[int, int]


def full(dtype: DataType) -> Interval:
    """Every value of an integer (or bool) dtype."""
    return (int(dtype.min_value()), int(dtype.max_value()))


def point(value: int) -> Interval:
    return (value, value)


def fits(iv: Interval, dtype: DataType) -> bool:
    lo, hi = full(dtype)
    return lo <= iv[0] and iv[1] <= hi


def add(a: Interval, b: Interval) -> Interval:
    return (a[0] + b[0], a[1] + b[1])


def sub(a: Interval, b: Interval) -> Interval:
    return (a[0] - b[1], a[1] - b[0])


def mul(a: Interval, b: Interval) -> Interval:
    corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return (min(corners), max(corners))


def floordiv(a: Interval, b: Interval) -> Interval | None:
    """``a // b`` when ``b`` is a positive constant, else None."""
    if b[0] != b[1] or b[0] <= 0:
        return None
    return (a[0] // b[0], a[1] // b[0])


def floormod(a: Interval, b: Interval) -> Interval | None:
    """``a % b`` when ``b`` is a positive constant, else None."""
    if b[0] != b[1] or b[0] <= 0:
        return None
    c = b[0]
    if a[0] // c == a[1] // c:  # one period: the remainder is monotone
        return (a[0] % c, a[1] % c)
    return (0, c - 1)


def truncdiv(a: Interval, b: Interval) -> Interval | None:
    """``truncdiv(a, b)`` for a non-negative ``a`` and a positive constant ``b``."""
    if a[0] < 0:
        return None
    return floordiv(a, b)


def truncmod(a: Interval, b: Interval) -> Interval | None:
    if a[0] < 0:
        return None
    return floormod(a, b)


def minimum(a: Interval, b: Interval) -> Interval:
    return (min(a[0], b[0]), min(a[1], b[1]))


def maximum(a: Interval, b: Interval) -> Interval:
    return (max(a[0], b[0]), max(a[1], b[1]))


def union(a: Interval, b: Interval) -> Interval:
    return (min(a[0], b[0]), max(a[1], b[1]))


def within(iv: Interval, lo: int, hi_exclusive: int) -> bool:
    """Whether every value of ``iv`` lies in ``[lo, hi_exclusive)``."""
    return lo <= iv[0] and iv[1] < hi_exclusive


__all__ = ["Interval", "full", "point", "fits", "add", "sub", "mul", "floordiv", "floormod",
           "truncdiv", "truncmod", "minimum", "maximum", "union", "within"]
