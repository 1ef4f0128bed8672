"""Symbolic integer intervals with TIR-expression ends (TVM's ``IntSet``
and ``EvalSet``), for region inference.

Region inference needs more than numbers: the interval of ``vi * 4 + j``
for ``j`` in ``range(4)`` is ``[vi * 4, vi * 4 + 3]``, written in TIR
expressions so that it can become the region ``A[vi * 4:vi * 4 + 4]``. This
module gives that, following the rules of TVM's ``arith::EvalSet`` so that
inferred regions read as TVM prints them:

* :func:`eval_interval` maps an expression and a domain (``{Var: Interval}``)
  to an :class:`Interval` whose ends are TIR expressions (None: unbounded).
  Variables without a domain stay symbolic (a single point ``var``); ``+ -``,
  ``*`` by constants, ``//`` and ``%`` by positive constants, ``min``/``max``,
  casts, selects and vector ramps are followed; anything else whose operands
  vary is unbounded. Sub-expressions that do not vary are kept as written.
* :func:`simplify` (:func:`~tirfun.analysis.arith.linear.simplify_affine`)
  normalises the ends through their affine form.
* :func:`union`, :func:`intersect`, :func:`cover_range` and
  :func:`is_single_point` combine intervals as region inference does.

Like TVM's, these intervals read index arithmetic in unbounded integers:
an index whose computation wraps is out of bounds whatever its interval.
(:mod:`~tirfun.analysis.arith.linear_bound` answers a neighbouring question,
bounds with exactness for the verifier, with linear-form ends.)
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ...errors import NodeError
from ...nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, BufferLoad, Call, Cast, FloorDiv, FloorMod, IntImm,
    Let, Max, Min, Mul, Not, Or, PrimExpr, Ramp, Range, Select, Sub, Var,
)
from .linear import (
    _one, constant_difference, fold_add, fold_extreme_given, fold_floordiv, fold_floormod, fold_max,
    fold_min, fold_mul, fold_sub, prove_equal,
)
from .linear import simplify_affine as simplify
from .terms import int_value as _int

__all__ = [
    "Interval", "eval_interval", "simplify", "union", "intersect", "cover_range",
    "is_single_point", "point_or_cover", "substitute",
]


@attrs.frozen
class Interval:
    """The closed integer interval ``[lo, hi]`` with TIR-expression ends;
    ``None`` stands for minus or plus infinity."""

    lo: PrimExpr | None
    hi: PrimExpr | None

    @staticmethod
    def point(value: PrimExpr) -> "Interval":
        """The single value ``value``."""
        return Interval(value, value)

    @staticmethod
    def everything() -> "Interval":
        """The unbounded interval."""
        return Interval(None, None)

    @staticmethod
    def from_range(rng: Range) -> "Interval":
        """``[min, min + extent - 1]``, folded."""
        return Interval(rng.min, fold_sub(fold_add(rng.min, rng.extent), _one(rng.min.dtype)))

    @property
    def bounded(self) -> bool:
        """Both ends are known."""
        return self.lo is not None and self.hi is not None

    @property
    def is_point(self) -> bool:
        """The two ends are the same expression (no proof attempted)."""
        return self.lo is not None and (self.lo is self.hi or self.lo == self.hi)


# --------------------------------------------------------------------------
# interval evaluation


def substitute(e: PrimExpr, mapping: Mapping[Var, PrimExpr]) -> PrimExpr:
    """``e`` with variables replaced; unchanged subtrees are shared, and
    buffers are leaves (their shapes are not rewritten)."""
    from ..traversal import substitute_vars

    return substitute_vars(e, mapping)


def _uses_any(e: PrimExpr, dom: Mapping[Var, Interval]) -> bool:
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            if n in dom:
                return True
            continue
        if isinstance(n, BufferLoad):
            stack.extend(n.indices)
        elif isinstance(n, PrimExpr):
            from ..traversal import iter_children

            stack.extend(c for c in iter_children(n) if isinstance(c, PrimExpr))
    return False


def eval_interval(e: PrimExpr, dom: Mapping[Var, Interval]) -> Interval:
    """The interval of the integer expression ``e`` when each variable of
    ``dom`` ranges over its interval (TVM's ``EvalSet`` rules)."""
    return _Evaluator(dom).eval(e)


class _Evaluator:
    def __init__(self, dom: Mapping[Var, Interval]):
        self.dom = dom
        self.depth = 0

    def eval(self, e: PrimExpr) -> Interval:
        if isinstance(e, IntImm):
            return Interval.point(e)
        if isinstance(e, Var):
            return self._var(e)
        if type(e) in _COMBINE:
            a, b = self.eval(e.a), self.eval(e.b)
            if _matches(a, e.a) and _matches(b, e.b):
                return Interval.point(e)
            return _COMBINE[type(e)](a, b)
        if isinstance(e, (EQ, NE, LT, LE, GT, GE, And, Or)):
            a, b = self.eval(e.a), self.eval(e.b)
            if _matches(a, e.a) and _matches(b, e.b):
                return Interval.point(e)
            return Interval(IntImm(e.dtype, 0), IntImm(e.dtype, 1))
        if isinstance(e, Not):
            if _matches(self.eval(e.a), e.a):
                return Interval.point(e)
            return Interval(IntImm(e.dtype, 0), IntImm(e.dtype, 1))
        if isinstance(e, Cast):
            v = self.eval(e.value)
            if v.is_point:
                return Interval.point(e if v.lo is e.value else Cast(e.dtype, v.lo))
            return Interval(None if v.lo is None else Cast(e.dtype, v.lo),
                            None if v.hi is None else Cast(e.dtype, v.hi))
        if isinstance(e, Select):
            return union(self.eval(e.false_value), self.eval(e.true_value))
        if isinstance(e, Ramp):
            # the lanes of a vector index: base + [0, stride * (lanes - 1)]
            base = self.eval(e.base)
            stride = _int(e.stride)
            if stride is None:
                return Interval.everything()
            span = IntImm(e.base.dtype, stride * (e.lanes - 1))
            zero = IntImm(e.base.dtype, 0)
            return _combine_add(base, Interval(zero, span) if stride >= 0 else Interval(span, zero))
        if isinstance(e, Broadcast):
            return self.eval(e.value)
        if isinstance(e, BufferLoad):
            if not e.dtype.is_integer or any(_uses_any(i, self.dom) for i in e.indices):
                return Interval.everything()
            return Interval.point(e)
        if isinstance(e, (Call, Let)) and not _uses_any(e, self.dom):
            return Interval.point(e)
        return Interval.everything()

    def _var(self, v: Var) -> Interval:
        iv = self.dom.get(v)
        if iv is None:
            return Interval.point(v)
        if iv.lo is v and iv.hi is v:
            return iv
        if (iv.lo is None or type(iv.lo) is IntImm) and (iv.hi is None or type(iv.hi) is IntImm):
            return iv  # constant ends (a loop's range) relax to themselves
        # the domain may mention other relaxed variables (an inner loop that
        # starts at an outer loop's variable): relax its ends once more, with
        # a depth bound against cyclic domains
        if self.depth >= len(self.dom):
            return iv
        self.depth += 1
        try:
            lo = None if iv.lo is None else self.eval(iv.lo).lo
            hi = None if iv.hi is None else self.eval(iv.hi).hi
        finally:
            self.depth -= 1
        return Interval(lo, hi)


def _matches(iv: Interval, e: PrimExpr) -> bool:
    return iv.lo is e and iv.hi is e


def _combine_add(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_add(a.lo, b.lo))
    lo = fold_add(a.lo, b.lo) if a.lo is not None and b.lo is not None else None
    hi = fold_add(a.hi, b.hi) if a.hi is not None and b.hi is not None else None
    return Interval(lo, hi)


def _combine_sub(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_sub(a.lo, b.lo))
    lo = fold_sub(a.lo, b.hi) if a.lo is not None and b.hi is not None else None
    hi = fold_sub(a.hi, b.lo) if a.hi is not None and b.lo is not None else None
    return Interval(lo, hi)


def _sign(e: PrimExpr) -> int | None:
    """+1 / -1 / 0 for a constant, None when the sign is unknown."""
    v = _int(simplify(e))
    if v is None:
        return None
    return (v > 0) - (v < 0)


def _scaled(a: Interval, k: PrimExpr, sign: int, fold) -> Interval:
    if sign > 0:
        return Interval(None if a.lo is None else fold(a.lo, k), None if a.hi is None else fold(a.hi, k))
    return Interval(None if a.hi is None else fold(a.hi, k), None if a.lo is None else fold(a.lo, k))


def _combine_mul(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_mul(a.lo, b.lo))
    if a.is_point:
        a, b = b, a
    if b.is_point:
        sign = _sign(b.lo)
        if sign == 0:
            return b
        if _int(b.lo) == 1:
            return a
        if sign is not None:
            return _scaled(a, b.lo, sign, fold_mul)
    # a symbolic factor of unknown sign: unbounded (TVM would build selects)
    return Interval.everything()


def _combine_floordiv(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_floordiv(a.lo, b.lo))
    if b.is_point:
        if _int(b.lo) == 1:
            return a
        sign = _sign(b.lo)
        if sign:
            return _scaled(a, b.lo, sign, fold_floordiv)
    lo, hi = (_int(a.lo), _int(a.hi)) if a.bounded else (None, None)
    if lo is not None and hi is not None:
        # by any nonzero integer, a quotient is no larger than the dividend
        # in magnitude (-1 // n lies in [-1, 1], whatever n is)
        m = max(abs(lo), abs(hi))
        return Interval(IntImm(a.lo.dtype, -m), IntImm(a.lo.dtype, m))
    return Interval.everything()


def _combine_floormod(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_floormod(a.lo, b.lo))
    if b.is_point and _sign(b.lo) == 1:
        k = b.lo
        if isinstance(k, IntImm) and a.bounded:
            # within one period the remainder is the value shifted down
            qmin = simplify(fold_floordiv(a.lo, k))
            qmax = simplify(fold_floordiv(a.hi, k))
            if prove_equal(qmin, qmax):
                shift = fold_mul(k, qmin)
                return Interval(fold_sub(a.lo, shift), fold_sub(a.hi, shift))
        return Interval(IntImm(k.dtype, 0), fold_sub(k, _one(k.dtype)))
    return Interval.everything()


def _combine_min(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_min(a.lo, b.lo))
    lo = fold_min(a.lo, b.lo) if a.lo is not None and b.lo is not None else None
    hi = fold_min(a.hi, b.hi) if a.hi is not None and b.hi is not None else (a.hi if b.hi is None else b.hi)
    return Interval(lo, hi)


def _combine_max(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(fold_max(a.lo, b.lo))
    lo = fold_max(a.lo, b.lo) if a.lo is not None and b.lo is not None else (a.lo if b.lo is None else b.lo)
    hi = fold_max(a.hi, b.hi) if a.hi is not None and b.hi is not None else None
    return Interval(lo, hi)


_COMBINE = {
    Add: _combine_add, Sub: _combine_sub, Mul: _combine_mul, FloorDiv: _combine_floordiv,
    FloorMod: _combine_floormod, Min: _combine_min, Max: _combine_max,
}


# --------------------------------------------------------------------------
# combining intervals


def _widened(a: Interval, b: Interval) -> tuple[Interval, Interval]:
    """The two intervals with ends of one dtype: where one's ends are
    narrower integers than the other's (one buffer indexed in int32 by one
    block and int64 by another), cast to the wider, a point staying a
    point."""
    # min with min, max with max: each pair must agree (they nearly always do)
    if (a.lo is None or b.lo is None or a.lo.dtype == b.lo.dtype) \
            and (a.hi is None or b.hi is None or a.hi.dtype == b.hi.dtype):
        return a, b
    from ...rewrites.exprs import cast  # a literal retyped, anything else cast

    ends = [e for e in (a.lo, a.hi, b.lo, b.hi) if e is not None]
    wide = max((e.dtype for e in ends), key=lambda d: d.bits)

    def widen(iv: Interval) -> Interval:
        lo = None if iv.lo is None else cast(iv.lo, wide)
        hi = lo if iv.hi is iv.lo else None if iv.hi is None else cast(iv.hi, wide)
        return Interval(lo, hi)

    return widen(a), widen(b)


def union(a: Interval, b: Interval) -> Interval:
    """The smallest interval holding both, ends simplified."""
    a, b = _widened(a, b)
    if a.lo is not None and b.lo is not None and a.lo is a.hi and b.lo is b.hi \
            and not (type(a.lo) is IntImm and type(b.lo) is IntImm):
        # two points (the accesses of one block at two indices): the min and
        # the max ask the same difference, which is worked out once
        d = constant_difference(a.lo, b.lo)
        return Interval(simplify(fold_extreme_given(Min, a.lo, b.lo, d)),
                        simplify(fold_extreme_given(Max, a.lo, b.lo, d)))
    lo = None if a.lo is None or b.lo is None else simplify(fold_min(a.lo, b.lo))
    hi = None if a.hi is None or b.hi is None else simplify(fold_max(a.hi, b.hi))
    return Interval(lo, hi)


def intersect(a: Interval, b: Interval) -> Interval:
    """The common part of two intervals, ends simplified."""
    a, b = _widened(a, b)
    lo = b.lo if a.lo is None else a.lo if b.lo is None else simplify(fold_max(a.lo, b.lo))
    hi = b.hi if a.hi is None else a.hi if b.hi is None else simplify(fold_min(a.hi, b.hi))
    if type(hi) is Min:
        # ends of run-time value the index bounds order (the end of a split
        # of n into parts, (n + 3) // 4 * 4 - 1, against the buffer's n - 1)
        hi = _lesser(hi)
    return Interval(lo, hi)


def _lesser(m: Min) -> PrimExpr:
    """``min(x, y)`` as whichever side the symbolic bounds show no larger
    (the other side taken as it is), or as it is."""
    from .linear_bound import surely_at_most

    if m.a.dtype == m.b.dtype and m.a.dtype.is_integer:
        if surely_at_most(m.b, m.a, {}):
            return m.b
        if surely_at_most(m.a, m.b, {}):
            return m.a
    return m


def is_single_point(iv: Interval) -> bool:
    """True when the interval provably holds one value."""
    return iv.bounded and (iv.is_point or prove_equal(iv.lo, iv.hi))


def point_or_cover(iv: Interval, full: Range) -> Range:
    """``Range(lo, 1)`` when :func:`is_single_point`, else
    :func:`cover_range` (a region's dimension as access inference writes
    it), the difference of the ends worked out once: where it is a
    constant, the extent is that constant plus one, which is what
    simplifying ``hi + 1 - lo`` gives."""
    if iv.bounded and not iv.is_point:
        d = constant_difference(iv.lo, iv.hi)
        if d == 0:
            return Range(iv.lo, IntImm(iv.lo.dtype, 1))
        if d is not None and iv.lo.dtype == iv.hi.dtype:
            try:
                extent = IntImm(iv.hi.dtype, 1 - d)
            except NodeError:  # past the dtype: the simplifier keeps the sum
                return cover_range(iv, full)
            return Range(simplify(iv.lo), extent)
        return cover_range(iv, full)
    if is_single_point(iv):
        return Range(iv.lo, IntImm(iv.lo.dtype, 1))
    return cover_range(iv, full)


def cover_range(iv: Interval, full: Range) -> Range:
    """``[lo, hi]`` as a simplified (min, extent) Range; ``full`` when the
    interval is unbounded on either side."""
    if not iv.bounded or iv.lo.dtype != iv.hi.dtype:
        return full
    lo = simplify(iv.lo)
    extent = simplify(fold_sub(fold_add(iv.hi, _one(iv.hi.dtype)), iv.lo))
    return Range(lo, extent)
