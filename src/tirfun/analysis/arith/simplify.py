"""Expression simplification, exact under TIR's semantics.

:func:`simplify_expr` rewrites an expression into a simpler one of the same
value for every value of its variables within their intervals, wrap-around
included (integer arithmetic is exact modulo ``2**bits``; floating point is
never reassociated):

* constant folding, with integer results wrapped and float results rounded
  as the dtype does;
* ``x*1``, ``1*x``, ``x+0``, ``x-0``, ``x*0`` (integers), ``x//1``, ``x%1``,
  ``x*1.0``, ``x/1.0`` and ``x-0.0`` (floats: ``x+0.0`` is kept, as it turns
  ``-0.0`` into ``0.0``);
* integer sums collected into ``sum(coeff*term) + const`` (a ring identity:
  it holds under wrap-around);
* ``floordiv``/``floormod`` of such a sum by a positive constant: multiples
  of the divisor leave the division, and a remainder proven to lie in
  ``[0, divisor)`` vanishes; a factor ``m`` of the divisor that splits
  the rest into ``m * x + r`` with ``r`` in ``[0, m)`` divides it through
  (``(i * 128 + j) // 2048`` is ``i // 16`` for ``j`` in ``[0, 128)``);
  only where the intervals show that the sum cannot wrap;
* ``min``/``max`` and comparisons decided from the intervals, a comparison
  ``a < b`` through ``a - b`` only where that difference cannot wrap;
* ``sum == its smallest value`` becomes a conjunction of ``var == bound``.

:class:`ExprSimplifier` is the engine; the lowering pass
(:mod:`tirfun.lower.simplify`) extends it to statements.
"""

from __future__ import annotations

import math

from ...nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, Call, Cast, CmpOp, Div, FloatImm,
    FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul, Not, Or, PrimExpr, Ramp, Select, Sub, Var,
)
from ... import numpy_dtypes
from ...nodes.dtype import DataType
from ...nodes.expr import compare_result, int_result
from ..traversal import map_children, transform
from .const_bound import ConstInterval, const_interval
from .linear import Affine, linear_expr, merge_div_mod
from .terms import fits, wrap

_TRUE = IntImm("bool", 1)
_FALSE = IntImm("bool", 0)


def simplify_expr(e: PrimExpr, env=None) -> PrimExpr:
    """Simplify one expression, given constant intervals for its variables
    (Var -> ``(lo, hi)``, an end None where unbounded). The result has the
    value of ``e`` for every value of the variables within their intervals."""
    return ExprSimplifier(dict(env or {})).expr(e)


def is_true(e: PrimExpr) -> bool:
    """Whether ``e`` is the constant ``True``."""
    return isinstance(e, IntImm) and e.dtype == "bool" and e.value == 1


def is_false(e: PrimExpr) -> bool:
    """Whether ``e`` is the constant ``False``."""
    return isinstance(e, IntImm) and e.dtype == "bool" and e.value == 0


def conjuncts(e: PrimExpr) -> list[PrimExpr]:
    """The operands of a chain of ``and``, from the left."""
    return conjuncts(e.a) + conjuncts(e.b) if isinstance(e, And) else [e]


def conjoin(conds) -> PrimExpr:
    """The conjunction of ``conds`` (``True`` when empty)."""
    conds = list(conds)
    if not conds:
        return IntImm("bool", 1)
    out = conds[0]
    for c in conds[1:]:
        out = And(out, c)
    return out


def _substitute(e: PrimExpr, mapping) -> PrimExpr:
    return transform(e, lambda n: mapping.get(n, n) if isinstance(n, Var) else n)


# --------------------------------------------------------------------------
# folding constants exactly as the dtype computes


def _float_value(dtype: DataType, value: float) -> float | None:
    """``value`` rounded to ``dtype`` as the interpreter rounds it; None
    where ``dtype`` is no scalar float."""
    return numpy_dtypes.round_float(value, dtype)


def _fold_float(cls, a: FloatImm, b: FloatImm) -> PrimExpr | None:
    """Two float literals folded as the interpreter computes them: in
    double, rounded once to the dtype (for ``+ - * /`` that is the correctly
    rounded result of every float tirfun has, double holding more than
    twice their precision)."""
    x, y = _float_value(a.dtype, a.value), _float_value(b.dtype, b.value)
    if x is None or y is None:
        return None
    if issubclass(cls, CmpOp):
        return IntImm("bool", int(compare_result(cls, x, y)))
    if cls is Add:
        r = x + y
    elif cls is Sub:
        r = x - y
    elif cls is Mul:
        r = x * y
    elif cls is Div:
        if y == 0:
            return None
        r = x / y
    elif cls is Min:
        r = x if x < y else y  # the interpreter's rule: min(0.0, -0.0) is -0.0
    elif cls is Max:
        r = x if x > y else y
    else:
        return None
    if math.isnan(r) or math.isinf(r):
        return None
    r = _float_value(a.dtype, r)
    if r is None or math.isnan(r) or math.isinf(r):
        return None
    return FloatImm(a.dtype, r)


def _fold_int(cls, a: IntImm, b: IntImm) -> PrimExpr | None:
    """Fold two integer literals with the dtype's wrap-around; a division by
    zero stays: its meaning is the runtime's business."""
    dt = a.dtype
    if issubclass(cls, CmpOp):
        return IntImm("bool", int(compare_result(cls, a.value, b.value)))
    if dt.is_bool:
        return None
    r = int_result(cls, a.value, b.value)
    return None if r is None else IntImm(dt, wrap(dt, r))


_NEGATE = {EQ: NE, NE: EQ, LT: GE, GE: LT, GT: LE, LE: GT}


def _fold_cast(dt: DataType, v: PrimExpr) -> PrimExpr | None:
    if dt.lanes != 1:
        return None
    if isinstance(v, IntImm):
        if dt.is_bool:
            return IntImm("bool", int(v.value != 0))
        if dt.is_integer:
            return IntImm(dt, wrap(dt, v.value))
        if dt.is_float:
            r = _float_value(dt, float(v.value))
            return None if r is None or math.isinf(r) else FloatImm(dt, r)
    if isinstance(v, FloatImm):
        # a literal keeps the value it was written with; what the program
        # casts is that value rounded to the literal's own type (a float32
        # 0.1 widens to 0.10000000149011612, not to the double 0.1)
        x = _float_value(v.dtype, v.value)
        if x is None:
            return None
        if dt.is_float:
            r = _float_value(dt, x)
            return None if r is None or math.isinf(r) or math.isnan(r) else FloatImm(dt, r)
        if dt.is_integer and math.isfinite(x):
            r = int(x)  # truncation toward zero, as C casts
            if dt.min_value() <= r <= dt.max_value():
                return IntImm(dt, r)
        if dt.is_bool and not math.isnan(x):
            return IntImm("bool", int(x != 0))
    return None


def _is_int_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and not e.dtype.is_bool and e.value == value


def _is_float_const(e: PrimExpr, value: float) -> bool:
    return isinstance(e, FloatImm) and e.value == value


def is_pure(e: PrimExpr) -> bool:
    """Whether ``e`` can be dropped without losing an effect (no calls that
    may have one)."""
    from ..traversal import walk

    for n in walk(e):
        if isinstance(n, Call) and n.op in ("tir.call_extern", "tir.call_packed", "tir.ret"):
            return False
    return True


class ExprSimplifier:
    """One simplification run over expressions; ``env`` holds the constant
    intervals of the variables in scope (Var -> ``(lo, hi)``), and is
    extended and restored as scopes open and close (the lowering pass
    subclasses it to walk statements). Results are memoised per scope."""

    def __init__(self, env: dict):
        self.env = env
        self.memo: dict[tuple[int, int], PrimExpr] = {}
        self.scope = 0

    def expr(self, e: PrimExpr) -> PrimExpr:
        """``e`` simplified under the current scope."""
        key = (id(e), self.scope)
        hit = self.memo.get(key)
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self._expr(e)
        self.memo[key] = (e, out)
        return out

    def _bounds(self, e: PrimExpr) -> ConstInterval:
        return const_interval(e, self.env)

    def _expr(self, e: PrimExpr) -> PrimExpr:
        if isinstance(e, (IntImm, FloatImm, Var)) or not isinstance(e, PrimExpr):
            return e
        t = type(e)
        if t in (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max):
            return self._arith(t, self.expr(e.a), self.expr(e.b), e)
        if issubclass(t, CmpOp):
            return self._compare(t, self.expr(e.a), self.expr(e.b), e)
        if t is And:
            a, b = self.expr(e.a), self.expr(e.b)
            if is_false(a) or is_false(b):
                return _FALSE
            if is_true(a):
                return b
            if is_true(b):
                return a
            return e if (a is e.a and b is e.b) else And(a, b)
        if t is Or:
            a, b = self.expr(e.a), self.expr(e.b)
            if is_true(a) or is_true(b):
                return _TRUE
            if is_false(a):
                return b
            if is_false(b):
                return a
            return e if (a is e.a and b is e.b) else Or(a, b)
        if t is Not:
            a = self.expr(e.a)
            if isinstance(a, IntImm):
                return IntImm(a.dtype, 1 - a.value)
            if isinstance(a, Not):
                return a.a
            if type(a) in _NEGATE and not a.a.dtype.is_float and a.dtype.lanes == 1:
                return self._compare(_NEGATE[type(a)], a.a, a.b, None)
            return e if a is e.a else Not(a)
        if t is Select:
            c = self.expr(e.condition)
            tv, fv = self.expr(e.true_value), self.expr(e.false_value)
            if is_true(c):
                return tv
            if is_false(c):
                return fv
            if c is e.condition and tv is e.true_value and fv is e.false_value:
                return e
            return Select(c, tv, fv)
        if t is Cast:
            v = self.expr(e.value)
            if v.dtype == e.dtype:
                return v
            folded = _fold_cast(e.dtype, v)
            if folded is not None:
                return folded
            return e if v is e.value else Cast(e.dtype, v)
        if t is Call:
            args = [self.expr(a) for a in e.args]
            if e.op == "tir.if_then_else" and len(args) == 3:
                if is_true(args[0]):
                    return args[1]
                if is_false(args[0]):
                    return args[2]
            if all(a is b for a, b in zip(args, e.args)):
                return e
            return Call(e.dtype, e.op, args)
        if t is Let:
            v = self.expr(e.value)
            if isinstance(v, (IntImm, Var)):
                return self.expr(_substitute(e.body, {e.var: v}))
            saved = self.env.get(e.var)
            self.env[e.var] = self._bounds(v)
            self.scope += 1
            body = self.expr(e.body)
            self.scope += 1
            self._restore(e.var, saved)
            return e if (v is e.value and body is e.body) else Let(e.var, v, body)
        # BufferLoad, Ramp, Broadcast and anything else: simplify the children
        return map_children(e, lambda c: self.expr(c) if isinstance(c, PrimExpr) else c)

    def _restore(self, var, saved):
        if saved is None:
            self.env.pop(var, None)
        else:
            self.env[var] = saved

    def _arith(self, cls, a: PrimExpr, b: PrimExpr, orig: PrimExpr) -> PrimExpr:
        dt = a.dtype
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            folded = _fold_int(cls, a, b)
            if folded is not None:
                return folded
        if isinstance(a, FloatImm) and isinstance(b, FloatImm):
            folded = _fold_float(cls, a, b)
            if folded is not None:
                return folded
        if dt.lanes == 1 and dt.is_integer:
            out = self._int_arith(cls, a, b)
            if out is not None:
                return out
        elif dt.lanes > 1 and dt.is_integer and cls in (Add, Sub):
            out = self._lanes_arith(cls, a, b)
            if out is not None:
                return out
        elif dt.lanes == 1 and dt.is_float:
            if cls is Mul and _is_float_const(b, 1.0):
                return a
            if cls is Mul and _is_float_const(a, 1.0):
                return b
            if cls is Div and _is_float_const(b, 1.0):
                return a
            if cls is Sub and _is_float_const(b, 0.0) and math.copysign(1.0, b.value) > 0:
                return a
        if a is orig.a and b is orig.b:
            return orig
        return cls(a, b)

    def _lanes_arith(self, cls, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        """Integer lanes: a broadcast plus or minus a broadcast or a ramp is
        one broadcast or ramp (lane ``l`` of each side is ``base + stride *
        l``, exact modulo 2**bits), so that flattened vector indices such as
        ``Broadcast(i * 256, 16) + Ramp(j * 16, 1, 16)`` become the ramp a
        contiguous load needs."""
        def parts(e):
            if isinstance(e, Broadcast):
                return e.value, IntImm(e.value.dtype, 0)
            if isinstance(e, Ramp):
                return e.base, e.stride
            return None

        pa, pb = parts(a), parts(b)
        if pa is None or pb is None or pa[0].dtype != pb[0].dtype:
            return None
        base = self.expr(cls(pa[0], pb[0]))
        stride = self.expr(cls(pa[1], pb[1]))
        lanes = a.dtype.lanes
        if isinstance(stride, IntImm) and stride.value == 0:
            return Broadcast(base, lanes)
        return Ramp(base, stride, lanes)

    def _int_arith(self, cls, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        dt = a.dtype
        if cls in (Add, Sub, Mul):
            if cls is Mul and (_is_int_const(a, 0) and is_pure(b) or _is_int_const(b, 0) and is_pure(a)):
                return IntImm(dt, 0)
            lin = merge_div_mod(Affine.of(cls(a, b)), lambda div, x, c: self.expr(div(x, c)))
            out = linear_expr(lin)
            return out
        if not dt.is_int:
            # unsigned division and bounds below zero do not follow the
            # signed rules used from here on
            return None
        if cls in (Div, Mod) and isinstance(b, IntImm) and b.value > 0:
            lo, _ = self._bounds(a)
            if lo >= 0:  # truncation equals flooring here
                floor_cls = FloorDiv if cls is Div else FloorMod
                out = self._div_mod(floor_cls, a, b.value)
                return floor_cls(a, b) if out is None else out
            return None
        if cls in (FloorDiv, FloorMod) and isinstance(b, IntImm) and b.value > 0:
            return self._div_mod(cls, a, b.value)
        if cls in (Min, Max):
            la, ha = self._bounds(a)
            lb, hb = self._bounds(b)
            if a == b:
                return a
            if cls is Min:
                if ha is not None and lb is not None and ha <= lb:
                    return a
                if hb is not None and la is not None and hb <= la:
                    return b
            else:
                if la is not None and hb is not None and la >= hb:
                    return a
                if lb is not None and ha is not None and lb >= ha:
                    return b
        return None

    def _div_mod(self, cls, a: PrimExpr, c: int) -> PrimExpr | None:
        dt = a.dtype
        if c == 1:
            return a if cls is FloorDiv else IntImm(dt, 0)
        lin = Affine.of(a)
        if not self._sum_fits(lin):
            return None  # the wrapped dividend is not the sum: no rule holds
        quot_terms = tuple((t, k // c) for t, k in lin.terms if k % c == 0)
        rest_terms = tuple((t, k) for t, k in lin.terms if k % c != 0)
        quot = Affine(dt, quot_terms, lin.const // c)
        rest = Affine(dt, rest_terms, lin.const % c)
        rest_e = linear_expr(rest)
        quot_e = linear_expr(quot)
        if rest_e is None or quot_e is None or not (self._sum_fits(rest) and self._sum_fits(quot)):
            return None
        lo, hi = self._bounds(rest_e)
        in_range = lo is not None and hi is not None and 0 <= lo and hi < c
        if in_range:
            return rest_e if cls is FloorMod else quot_e
        inner = self._split_rest(cls, rest, c)
        if cls is FloorMod:
            if inner is not None:
                return inner
            if not quot.terms and quot.const == 0 and rest_e == a:
                return None
            return FloorMod(rest_e, IntImm(dt, c))
        if inner is None and not quot.terms and quot.const == 0:
            return None
        part = inner if inner is not None else FloorDiv(rest_e, IntImm(dt, c))
        return linear_expr(quot.plus(Affine(dt, ((part, 1),), 0)))

    def _split_rest(self, cls, rest: Affine, c: int) -> PrimExpr | None:
        """``rest // c`` (or ``rest % c``) through a factor ``m`` of ``c``
        that splits ``rest`` into ``m * x + r`` with ``r`` proven in
        ``[0, m)``: then ``rest // c`` is ``x // (c / m)`` and ``rest % c``
        is ``x % (c / m) * m + r`` (with ``x + r / m`` between
        ``x`` and ``x + 1``, the floor of its quotient is the floor of
        ``x``'s). This is how ``(i * 128 + j) // 2048`` with ``j`` in
        ``[0, 128)`` becomes ``i // 16``, the form TVM's iteration maps
        give a fused index split again. The caller has checked that
        ``rest`` cannot wrap; ``x`` and ``r`` lie within its range."""
        dt = rest.dtype
        tried = set()
        for _, k in rest.terms:
            m = math.gcd(k, c)
            if m == 1 or m in tried:
                continue
            tried.add(m)
            high = tuple((t, q // m) for t, q in rest.terms if q % m == 0)
            low = Affine(dt, tuple((t, q) for t, q in rest.terms if q % m != 0), rest.const % m)
            low_e = linear_expr(low)
            if low_e is None:
                continue
            lo, hi = self._bounds(low_e)
            if lo is None or hi is None or lo < 0 or hi >= m:
                continue
            x = linear_expr(Affine(dt, high, rest.const // m))
            if x is None:
                continue
            k_outer = IntImm(dt, c // m)
            if cls is FloorDiv:
                return self.expr(FloorDiv(x, k_outer))
            scaled = Affine.of(Mul(self.expr(FloorMod(x, k_outer)), IntImm(dt, m)))
            return linear_expr(scaled.plus(low))
        return None

    def _compare(self, cls, a: PrimExpr, b: PrimExpr, orig) -> PrimExpr:
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return _fold_int(cls, a, b)
        if isinstance(a, FloatImm) and isinstance(b, FloatImm):
            out = _fold_float(cls, a, b)
            if out is not None:
                return out
        dt = a.dtype
        if dt.lanes == 1 and dt.is_int and self._difference_fits(a, b):
            diff = Affine.of(Sub(a, b))
            de = linear_expr(diff)
            if de is not None:
                lo, hi = self._bounds(de)
                decided = _decide(cls, lo, hi)
                if decided is not None:
                    return IntImm("bool", int(decided))
                split = self._at_extreme(cls, diff, lo, hi)
                if split is not None:
                    return split
        if orig is not None and a is orig.a and b is orig.b:
            return orig
        return cls(a, b)

    def _at_extreme(self, cls, diff: Affine, lo, hi) -> PrimExpr | None:
        """``sum == min(sum)`` (or ``<=``) as ``and`` of each variable at its
        bound, when the sum is of distinct bounded variables."""
        if cls not in (EQ, LE, GE) or not diff.terms:
            return None
        at_min = (cls in (EQ, LE)) and lo == 0
        at_max = (cls in (EQ, GE)) and hi == 0
        if not (at_min or at_max) or (lo == hi):
            return None
        parts = []
        for term, coeff in diff.terms:
            if not isinstance(term, Var) or term not in self.env:
                return None
            tlo, thi = self.env[term]
            if tlo is None or thi is None:
                return None
            # the sum is at its minimum exactly when each term is at the end
            # of its range that minimises coeff*term
            want_low = (coeff > 0) == at_min
            parts.append(EQ(term, IntImm(term.dtype, tlo if want_low else thi)))
        return conjoin(parts)

    def _sum_fits(self, lin: Affine) -> bool:
        """Whether the sum ``lin`` stays inside its dtype for every value of
        its terms: then the wrapped sum is the sum in unbounded integers."""
        lo = hi = lin.const
        for term, k in lin.terms:
            tlo, thi = self._bounds(term)
            if tlo is None:
                return False
            lo, hi = lo + min(k * tlo, k * thi), hi + max(k * tlo, k * thi)
        return fits(lin.dtype, lo) and fits(lin.dtype, hi)

    def _difference_fits(self, a: PrimExpr, b: PrimExpr) -> bool:
        """Whether ``a - b`` cannot wrap: then ``a < b`` is ``a - b < 0``."""
        la, ha = self._bounds(a)
        lb, hb = self._bounds(b)
        if None in (la, ha, lb, hb):
            return False
        return fits(a.dtype, la - hb) and fits(a.dtype, ha - lb)


def _decide(cls, lo, hi) -> bool | None:
    """Decide ``d <cls> 0`` from ``d``'s interval, or None."""
    if cls is EQ:
        if lo is not None and hi is not None and lo == hi == 0:
            return True
        if (lo is not None and lo > 0) or (hi is not None and hi < 0):
            return False
    elif cls is NE:
        d = _decide(EQ, lo, hi)
        return None if d is None else not d
    elif cls is LT:
        if hi is not None and hi < 0:
            return True
        if lo is not None and lo >= 0:
            return False
    elif cls is LE:
        if hi is not None and hi <= 0:
            return True
        if lo is not None and lo > 0:
            return False
    elif cls is GT:
        d = _decide(LE, lo, hi)
        return None if d is None else not d
    elif cls is GE:
        d = _decide(LT, lo, hi)
        return None if d is None else not d
    return None




__all__ = ["simplify_expr", "ExprSimplifier", "is_true", "is_false", "is_pure", "conjoin", "conjuncts"]
