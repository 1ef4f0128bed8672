"""Symbolic integer intervals of index expressions, the way TVM's EvalSet
computes them, and a small affine normaliser for their bounds.

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
* :func:`simplify` normalises an integer expression through its affine form
  (``sum(coeff * atom) + const`` where an atom is any non-affine
  sub-expression), folds ``(c * x + r) // c`` and ``% c``, and rebuilds it
  with terms in order of first appearance: ``vi * 4 + 3 + 1 - vi * 4``
  becomes ``4``. It decides equality of affine forms, nothing more.
* :func:`union`, :func:`intersect`, :func:`cover_range` and
  :func:`is_single_point` combine intervals as region inference does.

(``tirfun.analysis.bounds`` answers a different question, numeric bounds
with exactness for the verifier; this module keeps TIR expressions.)
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..errors import NodeError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, BufferLoad, Call, Cast, FloorDiv, FloorMod, IntImm,
    Let, Max, Min, Mul, Not, Or, PrimExpr, Ramp, Range, Select, Sub, Var,
)
from ..nodes.dtype import DataType
from .bounds import collect_terms, scale_terms
from .bounds import fits as _fits
from .bounds import int_value as _int

__all__ = [
    "Interval", "Affine", "eval_interval", "simplify", "union", "intersect", "cover_range",
    "is_single_point", "affine_form", "affine_expr", "substitute", "fold_add", "fold_sub",
    "fold_mul", "fold_min", "fold_max", "prove_equal",
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
# folding constructors: the constant folding TVM's operators do as they build


def _one(dtype: DataType) -> IntImm:
    return IntImm(dtype, 1)


def fold_add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a + b`` with literals folded and ``x + 0`` dropped."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x + y):
        return IntImm(a.dtype, x + y)
    if x == 0:
        return b
    if y == 0:
        return a
    return Add(a, b)


def fold_sub(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a - b`` with literals folded and ``x - 0`` dropped."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x - y):
        return IntImm(a.dtype, x - y)
    if y == 0:
        return a
    return Sub(a, b)


def fold_mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b`` with literals folded, ``x * 1`` and ``x * 0`` reduced."""
    x, y = _int(a), _int(b)
    if x is not None and y is not None and _fits(a.dtype, x * y):
        return IntImm(a.dtype, x * y)
    if x == 1:
        return b
    if y == 1:
        return a
    if x == 0:
        return a
    if y == 0:
        return b
    return Mul(a, b)


def _fold_floordiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    x, y = _int(a), _int(b)
    if x is not None and y is not None and y != 0:
        return IntImm(a.dtype, x // y)
    if y == 1 or x == 0:
        return a
    return FloorDiv(a, b)


def _fold_floormod(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    x, y = _int(a), _int(b)
    if x is not None and y is not None and y != 0:
        return IntImm(a.dtype, x % y)
    if y == 1:
        return IntImm(a.dtype, 0)
    if x == 0:
        return a
    return FloorMod(a, b)


def fold_min(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``min(a, b)``, resolved when the difference is a known constant or
    when one side already takes the minimum with the other
    (``min(min(x, y), y)`` is ``min(x, y)``)."""
    return _fold_extreme(Min, a, b, lambda d: d <= 0)


def fold_max(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``max(a, b)``, resolved like :func:`fold_min`."""
    return _fold_extreme(Max, a, b, lambda d: d >= 0)


def _fold_extreme(cls, a: PrimExpr, b: PrimExpr, keep_a) -> PrimExpr:
    d = _constant_difference(a, b)
    if d is not None:
        return a if keep_a(d) else b
    if isinstance(a, cls) and (a.a == b or a.b == b):
        return a
    if isinstance(b, cls) and (b.a == a or b.b == a):
        return b
    if isinstance(a, cls) and _int(a.b) is not None and _int(b) is not None:
        # min(min(x, c1), c2) == min(x, min(c1, c2))
        return cls(a.a, IntImm(a.b.dtype, min(a.b.value, b.value) if cls is Min else max(a.b.value, b.value)))
    return cls(a, b)


# --------------------------------------------------------------------------
# affine forms


@attrs.frozen
class Affine:
    """``sum(coeff * atom) + const`` over one integer dtype; the terms keep
    the order in which their atoms first appeared."""

    dtype: DataType
    terms: tuple[tuple[PrimExpr, int], ...]
    const: int

    def is_const(self) -> bool:
        """No atom left: the form is the number ``const``."""
        return not self.terms

    def scale(self, k: int) -> "Affine":
        """``k * self``."""
        if k == 0:
            return Affine(self.dtype, (), 0)
        return Affine(self.dtype, scale_terms(self.terms, k), self.const * k)

    def plus(self, other: "Affine", sign: int = 1) -> "Affine":
        """``self + sign * other``."""
        terms = tuple(collect_terms(self.terms, other.terms, sign).items())
        return Affine(self.dtype, terms, self.const + sign * other.const)


def _atom(e: PrimExpr) -> Affine:
    return Affine(e.dtype, ((e, 1),), 0)


def affine_form(e: PrimExpr) -> Affine | None:
    """The affine form of a scalar integer expression, None for others.

    Sub-expressions that are not affine (products of variables, loads,
    calls, divisions that do not fold) become atoms, after their own
    operands are normalised.
    """
    if not isinstance(e, PrimExpr) or not e.dtype.is_integer or e.dtype.lanes != 1:
        return None
    return _affine(e)


def _affine(e: PrimExpr) -> Affine:
    if isinstance(e, IntImm):
        return Affine(e.dtype, (), e.value)
    if isinstance(e, (Add, Sub)):
        # walk the left spine iteratively: long sums must not recurse per term
        chain = []
        node = e
        while isinstance(node, (Add, Sub)):
            chain.append(node)
            node = node.a
        acc = _affine(node)
        for op in reversed(chain):
            acc = acc.plus(_affine(op.b), 1 if isinstance(op, Add) else -1)
        return acc
    if isinstance(e, Mul):
        a, b = _affine(e.a), _affine(e.b)
        if b.is_const():
            return a.scale(b.const)
        if a.is_const():
            return b.scale(a.const)
        return _atom(Mul(affine_expr(a), affine_expr(b)))
    if isinstance(e, (FloorDiv, FloorMod)):
        return _affine_div(_affine(e.a), _affine(e.b), modulo=isinstance(e, FloorMod))
    if isinstance(e, (Min, Max)):
        a, b = affine_expr(_affine(e.a)), affine_expr(_affine(e.b))
        folded = (fold_min if isinstance(e, Min) else fold_max)(a, b)
        if isinstance(folded, (Min, Max)):
            return _atom(folded)
        return _affine(folded)
    return _atom(e)


def _affine_div(a: Affine, b: Affine, modulo: bool) -> Affine:
    if b.is_const() and b.const > 0:
        c = b.const
        if all(coeff % c == 0 for _, coeff in a.terms):
            # for integer X: (c * X + r) // c == X + r // c and (c * X + r) % c == r % c
            if modulo:
                return Affine(a.dtype, (), a.const % c)
            return Affine(a.dtype, tuple((t, coeff // c) for t, coeff in a.terms), a.const // c)
    cls = FloorMod if modulo else FloorDiv
    return _atom(cls(affine_expr(a), affine_expr(b)))


def affine_expr(form: Affine) -> PrimExpr:
    """The TIR expression of an affine form: terms in order (a positive one
    first when there is one), ``x * c`` for coefficients, subtraction for
    negative ones, the constant last."""
    dt = form.dtype
    acc: PrimExpr | None = None
    terms = list(form.terms)
    # lead with a positive term when there is one: n - vo * 4, not vo * -4 + n
    first_positive = next((k for k, (_, c) in enumerate(terms) if c > 0), None)
    if first_positive:
        terms.insert(0, terms.pop(first_positive))
    for atom, coeff in terms:
        if acc is None:
            acc = atom if coeff == 1 else Mul(atom, IntImm(dt, coeff))
        elif coeff > 0:
            acc = Add(acc, atom if coeff == 1 else Mul(atom, IntImm(dt, coeff)))
        else:
            acc = Sub(acc, atom if coeff == -1 else Mul(atom, IntImm(dt, -coeff)))
    if acc is None:
        return IntImm(dt, form.const)
    if form.const > 0:
        return Add(acc, IntImm(dt, form.const))
    if form.const < 0:
        return Sub(acc, IntImm(dt, -form.const))
    return acc


def simplify(e: PrimExpr) -> PrimExpr:
    """``e`` normalised through its affine form (scalar integers only; other
    expressions come back unchanged). Returns ``e`` itself when the normal
    form is structurally the same."""
    form = affine_form(e)
    if form is None:
        return e
    try:
        out = affine_expr(form)
    except NodeError:  # a folded constant that no longer fits its dtype: keep e
        return e
    return e if out == e else out


def _constant_difference(a: PrimExpr, b: PrimExpr) -> int | None:
    fa, fb = affine_form(a), affine_form(b)
    if fa is None or fb is None or fa.dtype != fb.dtype:
        return None
    d = fa.plus(fb, -1)
    return d.const if d.is_const() else None


def prove_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """True when ``a`` and ``b`` have the same affine form."""
    return a == b or _constant_difference(a, b) == 0


# --------------------------------------------------------------------------
# interval evaluation


def substitute(e: PrimExpr, mapping: Mapping[Var, PrimExpr]) -> PrimExpr:
    """``e`` with variables replaced; unchanged subtrees are shared."""
    if not mapping:
        return e
    from .traversal import transform

    def pre(node):
        if isinstance(node, Var):
            return mapping.get(node, node)
        if not isinstance(node, PrimExpr):
            return node  # buffers are leaves here: their shapes are not rewritten
        return None

    return transform(e, post=lambda n: n, pre=pre)


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
            from .traversal import iter_children

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
        return Interval.point(_fold_floordiv(a.lo, b.lo))
    if b.is_point:
        if _int(b.lo) == 1:
            return a
        sign = _sign(b.lo)
        if sign:
            return _scaled(a, b.lo, sign, _fold_floordiv)
    return Interval.everything()


def _combine_floormod(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(_fold_floormod(a.lo, b.lo))
    if b.is_point and _sign(b.lo) == 1:
        k = b.lo
        if isinstance(k, IntImm) and a.bounded:
            # within one period the remainder is the value shifted down
            qmin = simplify(_fold_floordiv(a.lo, k))
            qmax = simplify(_fold_floordiv(a.hi, k))
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


def union(a: Interval, b: Interval) -> Interval:
    """The smallest interval holding both, ends simplified."""
    lo = None if a.lo is None or b.lo is None else simplify(fold_min(a.lo, b.lo))
    hi = None if a.hi is None or b.hi is None else simplify(fold_max(a.hi, b.hi))
    return Interval(lo, hi)


def intersect(a: Interval, b: Interval) -> Interval:
    """The common part of two intervals, ends simplified."""
    lo = b.lo if a.lo is None else a.lo if b.lo is None else simplify(fold_max(a.lo, b.lo))
    hi = b.hi if a.hi is None else a.hi if b.hi is None else simplify(fold_min(a.hi, b.hi))
    return Interval(lo, hi)


def is_single_point(iv: Interval) -> bool:
    """True when the interval provably holds one value."""
    return iv.bounded and (iv.is_point or prove_equal(iv.lo, iv.hi))


def cover_range(iv: Interval, full: Range) -> Range:
    """``[lo, hi]`` as a simplified (min, extent) Range; ``full`` when the
    interval is unbounded on either side."""
    if not iv.bounded or iv.lo.dtype != iv.hi.dtype:
        return full
    lo = simplify(iv.lo)
    extent = simplify(fold_sub(fold_add(iv.hi, _one(iv.hi.dtype)), iv.lo))
    return Range(lo, extent)
