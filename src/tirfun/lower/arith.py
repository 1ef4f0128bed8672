"""Integer arithmetic the lowering passes reason with.

Two tools, both exact on mathematical integers:

* :class:`Linear`, an integer expression as ``sum(coeff * term) + const``
  where each term is an expression that is not itself a sum or a product by
  a constant (a variable, a division, a load...). Collecting terms this way
  is what lets the simplifier fold ``(i0*32 + i1)*1024 + j`` into one flat
  index and divide it by a constant.
* :func:`bounds`, the interval ``[lo, hi]`` an integer expression can take
  given intervals for the variables (``None`` where unbounded).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..nodes import (
    Add, Cast, DataType, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, Select, Sub, Var,
)

Interval = tuple["int | None", "int | None"]
UNBOUNDED: Interval = (None, None)


@attrs.frozen
class Linear:
    """``sum(coeff * term) + const`` over one integer dtype.

    ``terms`` is a tuple of ``(term, coeff)`` pairs, in order of first
    appearance, with no zero coefficient and no repeated term.
    """

    dtype: DataType
    terms: tuple = ()
    const: int = 0

    @staticmethod
    def of(e: PrimExpr) -> "Linear | None":
        """The linear form of a scalar integer expression, or None when it
        is not an integer expression."""
        dt = e.dtype
        if not dt.is_integer or dt.lanes != 1:
            return None
        return _linear(e, dt)

    def scale(self, k: int) -> "Linear":
        """``k * self``."""
        if k == 0:
            return Linear(self.dtype)
        return Linear(self.dtype, tuple((t, c * k) for t, c in self.terms), self.const * k)

    def plus(self, other: "Linear") -> "Linear":
        """``self + other``, like terms collected."""
        acc: dict = {}
        for t, c in self.terms + other.terms:
            acc[t] = acc.get(t, 0) + c
        terms = tuple((t, c) for t, c in acc.items() if c != 0)
        return Linear(self.dtype, terms, self.const + other.const)

    @property
    def is_const(self) -> bool:
        """Whether no term is left."""
        return not self.terms

    def to_expr(self) -> PrimExpr:
        """Back to an expression: positive terms first (in order), then the
        negative ones subtracted, then the constant."""
        dt = self.dtype
        out: PrimExpr | None = None
        pos = [(t, c) for t, c in self.terms if c > 0]
        neg = [(t, -c) for t, c in self.terms if c < 0]
        for t, c in pos:
            piece = t if c == 1 else Mul(t, IntImm(dt, c))
            out = piece if out is None else Add(out, piece)
        for t, c in neg:
            piece = t if c == 1 else Mul(t, IntImm(dt, c))
            out = Sub(IntImm(dt, 0), piece) if out is None else Sub(out, piece)
        if out is None:
            return IntImm(dt, self.const)
        if self.const > 0:
            out = Add(out, IntImm(dt, self.const))
        elif self.const < 0:
            out = Sub(out, IntImm(dt, -self.const))
        return out


def _fits(dt: DataType, value: int) -> bool:
    return dt.min_value() <= value <= dt.max_value()


def _linear(e: PrimExpr, dt: DataType) -> Linear:
    if isinstance(e, IntImm):
        return Linear(dt, (), e.value)
    if isinstance(e, Add):
        return _linear(e.a, dt).plus(_linear(e.b, dt))
    if isinstance(e, Sub):
        return _linear(e.a, dt).plus(_linear(e.b, dt).scale(-1))
    if isinstance(e, Mul):
        la, lb = _linear(e.a, dt), _linear(e.b, dt)
        if lb.is_const:
            return la.scale(lb.const)
        if la.is_const:
            return lb.scale(la.const)
    return Linear(dt, ((e, 1),), 0)


def linear_expr(lin: Linear) -> PrimExpr | None:
    """``lin`` as an expression, or None when a coefficient or the constant
    does not fit the dtype (then the caller keeps the original)."""
    dt = lin.dtype
    if not _fits(dt, lin.const) or any(not _fits(dt, c) or not _fits(dt, -c) for _, c in lin.terms):
        return None
    return lin.to_expr()


# --------------------------------------------------------------------------
# intervals


def _add(a, b):
    return None if a is None or b is None else a + b


def _mul_interval(x: Interval, y: Interval) -> Interval:
    if None in x or None in y:
        # a product with a known sign can still be bounded on one side
        if x == (0, 0) or y == (0, 0):
            return (0, 0)
        return _mul_sign(x, y)
    products = [x[0] * y[0], x[0] * y[1], x[1] * y[0], x[1] * y[1]]
    return (min(products), max(products))


def _mul_sign(x: Interval, y: Interval) -> Interval:
    def nonneg(i):
        return i[0] is not None and i[0] >= 0
    if nonneg(x) and nonneg(y):
        return (x[0] * y[0], None if (x[1] is None or y[1] is None) else x[1] * y[1])
    return UNBOUNDED


def _floordiv_interval(x: Interval, c: int) -> Interval:
    if c > 0:
        return (None if x[0] is None else x[0] // c, None if x[1] is None else x[1] // c)
    return (None if x[1] is None else x[1] // c, None if x[0] is None else x[0] // c)


def bounds(e: PrimExpr, env: Mapping[Var, Interval]) -> Interval:
    """The interval a scalar integer expression can take, given intervals of
    its variables (a missing variable is unbounded within its dtype)."""
    dt = e.dtype
    if not (dt.is_integer or dt.is_bool) or dt.lanes != 1:
        return UNBOUNDED
    lo, hi = _bounds(e, env)
    # the dtype's own range always holds
    dlo, dhi = dt.min_value(), dt.max_value()
    lo = dlo if lo is None or lo < dlo else lo
    hi = dhi if hi is None or hi > dhi else hi
    return (lo, hi)


def _bounds(e: PrimExpr, env: Mapping[Var, Interval]) -> Interval:
    if isinstance(e, IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        return env.get(e, UNBOUNDED)
    if isinstance(e, Add):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        return (_add(a[0], b[0]), _add(a[1], b[1]))
    if isinstance(e, Sub):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        return (_add(a[0], None if b[1] is None else -b[1]), _add(a[1], None if b[0] is None else -b[0]))
    if isinstance(e, Mul):
        return _mul_interval(_bounds(e.a, env), _bounds(e.b, env))
    if isinstance(e, FloorDiv) and isinstance(e.b, IntImm) and e.b.value != 0:
        return _floordiv_interval(_bounds(e.a, env), e.b.value)
    if isinstance(e, FloorMod) and isinstance(e.b, IntImm) and e.b.value > 0:
        c = e.b.value
        a = _bounds(e.a, env)
        if a[0] is not None and a[1] is not None and a[0] // c == a[1] // c:
            return (a[0] % c, a[1] % c)
        return (0, c - 1)
    if isinstance(e, Min):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
        hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
        return (lo, hi)
    if isinstance(e, Max):
        a, b = _bounds(e.a, env), _bounds(e.b, env)
        lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
        hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
        return (lo, hi)
    if isinstance(e, Select):
        a, b = _bounds(e.true_value, env), _bounds(e.false_value, env)
        lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
        hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
        return (lo, hi)
    if isinstance(e, Cast) and e.value.dtype.is_integer or isinstance(e, Cast) and e.value.dtype.is_bool:
        inner = bounds(e.value, env)
        dt = e.dtype
        if inner[0] is not None and inner[1] is not None and _fits(dt, inner[0]) and _fits(dt, inner[1]):
            return inner
        return UNBOUNDED
    if e.dtype.is_bool:
        return (0, 1)
    return UNBOUNDED


def const_int(e: PrimExpr) -> int | None:
    """The value of an integer constant, else None."""
    return e.value if isinstance(e, IntImm) else None


__all__ = ["Linear", "linear_expr", "bounds", "Interval", "UNBOUNDED", "const_int"]
