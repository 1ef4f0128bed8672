"""The simplification pass.

Rewrites that keep the meaning of every program exactly (integer arithmetic
is exact modulo 2**bits, so regrouping sums and products is always safe;
floating point is never reassociated):

* constant folding, with float results rounded as the dtype rounds them;
* ``x*1``, ``1*x``, ``x+0``, ``x-0``, ``x*0`` (integers), ``x//1``, ``x%1``,
  ``x*1.0``, ``x/1.0`` and ``x-0.0`` (floats: ``x+0.0`` is kept, as it turns
  ``-0.0`` into ``0.0``);
* integer sums collected into ``sum(coeff*term) + const``;
* ``floordiv``/``floormod`` of such a sum by a positive constant: multiples
  of the divisor leave the division, and a remainder proven to lie in
  ``[0, divisor)`` vanishes;
* conditions proven true or false from the loop bounds are removed, and so
  are the branches, loops and statements they guard;
* ``sum == its smallest value`` becomes a conjunction of ``var == bound``,
  which is how a reduction's init test ``k0*4 + k1 == 0`` becomes
  ``k0 == 0 and k1 == 0`` for :mod:`tirfun.lower.partition`;
* loops of extent 0 disappear, loops of extent 1 become their body.
"""

from __future__ import annotations

import math

import attrs

from ..analysis.traversal import map_children
from ..errors import BuildError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, And, AssertStmt, AttrStmt, BlockRealize,
    BufferStore, Call, Cast, CmpOp, DeclBuffer, Div, Evaluate, FloatImm,
    FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IRModule, Let, LetStmt, Max, Min, Mod,
    Mul, Not, Or, PrimExpr, PrimFunc, Select, SeqStmt, Stmt, Sub, Var, While, AllocateConst,
)
from ..nodes.dtype import DataType
from ..nodes.expr import compare_result, int_result
from ..analysis.bounds import ConstInterval, TypedLinear, const_int, const_interval, linear_expr
from ._util import conjoin, is_false, is_nop, is_true, map_funcs, nop, seq, substitute

_TRUE = IntImm("bool", 1)
_FALSE = IntImm("bool", 0)


def simplify(mod: IRModule) -> IRModule:
    """Simplify every function of ``mod`` (see the module docstring)."""
    return map_funcs(mod, simplify_func)


def simplify_func(func: PrimFunc) -> PrimFunc:
    """Simplify one function's body."""
    env: dict[Var, ConstInterval] = {}
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            if isinstance(dim, Var):
                env[dim] = (0, None)  # sizes taken from arrays are never negative
    s = _Simplifier(env)
    body = s.stmt(func.body)
    return func if body is func.body else func.with_body(body)


def simplify_expr(e: PrimExpr, env=None) -> PrimExpr:
    """Simplify one expression, given intervals for its variables."""
    return _Simplifier(dict(env or {})).expr(e)


def simplify_stmt(s: Stmt, env=None) -> Stmt:
    """Simplify one statement, given intervals for its free variables."""
    return _Simplifier(dict(env or {})).stmt(s)


# --------------------------------------------------------------------------
# folding constants exactly as the dtype computes


def _np():
    import numpy as np  # only for rounding folded floats to their dtype

    return np


def _float_value(dtype: DataType, value: float) -> float | None:
    """``value`` rounded to ``dtype``; None when numpy has no such float."""
    name = dtype.numpy_name
    if name is None:
        return None
    return float(_np().dtype(name).type(value))


def _fold_float(cls, a: FloatImm, b: FloatImm) -> PrimExpr | None:
    name = a.dtype.numpy_name
    if name is None:
        return None
    np = _np()
    t = np.dtype(name).type
    x, y = t(a.value), t(b.value)
    with np.errstate(all="ignore"):
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
            r = min(x, y)
        elif cls is Max:
            r = max(x, y)
        elif issubclass(cls, CmpOp):
            return IntImm("bool", int(compare_result(cls, x, y)))
        else:
            return None
    r = float(r)
    if math.isnan(r) or math.isinf(r):
        return None
    return FloatImm(a.dtype, r)


def _wrap(dt: DataType, v: int) -> int:
    bits = dt.bits
    v &= (1 << bits) - 1
    if dt.is_int and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _fold_int(cls, a: IntImm, b: IntImm) -> PrimExpr | None:
    """Fold two integer literals with the dtype's wrap-around; a division by
    zero stays: its meaning is the runtime's business."""
    dt = a.dtype
    if issubclass(cls, CmpOp):
        return IntImm("bool", int(compare_result(cls, a.value, b.value)))
    if dt.is_bool:
        return None
    r = int_result(cls, a.value, b.value)
    return None if r is None else IntImm(dt, _wrap(dt, r))


_NEGATE = {EQ: NE, NE: EQ, LT: GE, GE: LT, GT: LE, LE: GT}


def _fold_cast(dt: DataType, v: PrimExpr) -> PrimExpr | None:
    if dt.lanes != 1:
        return None
    if isinstance(v, IntImm):
        if dt.is_bool:
            return IntImm("bool", int(v.value != 0))
        if dt.is_integer:
            return IntImm(dt, _wrap(dt, v.value))
        if dt.is_float:
            r = _float_value(dt, float(v.value))
            return None if r is None or math.isinf(r) else FloatImm(dt, r)
    if isinstance(v, FloatImm):
        if dt.is_float:
            r = _float_value(dt, v.value)
            return None if r is None or math.isinf(r) or math.isnan(r) else FloatImm(dt, r)
        if dt.is_integer and math.isfinite(v.value):
            r = int(v.value)  # truncation toward zero, as C casts
            if dt.min_value() <= r <= dt.max_value():
                return IntImm(dt, r)
        if dt.is_bool and not math.isnan(v.value):
            return IntImm("bool", int(v.value != 0))
    return None


def _is_int_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and not e.dtype.is_bool and e.value == value


def _is_float_const(e: PrimExpr, value: float) -> bool:
    return isinstance(e, FloatImm) and e.value == value


def _pure(e: PrimExpr) -> bool:
    """Whether ``e`` can be dropped without losing an effect (no calls that
    may have one)."""
    from ..analysis.traversal import walk

    for n in walk(e):
        if isinstance(n, Call) and n.op in ("tir.call_extern", "tir.call_packed", "tir.ret"):
            return False
    return True


class _Simplifier:
    """One simplification run; ``env`` holds the intervals of the variables
    in scope and is extended and restored as scopes open and close."""

    def __init__(self, env: dict):
        self.env = env
        self.memo: dict[tuple[int, int], PrimExpr] = {}
        self.scope = 0

    # ---------------------------------------------------------------- exprs
    def expr(self, e: PrimExpr) -> PrimExpr:
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
                return self.expr(substitute(e.body, {e.var: v}))
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

    def _int_arith(self, cls, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        dt = a.dtype
        if cls in (Add, Sub, Mul):
            if cls is Mul and (_is_int_const(a, 0) and _pure(b) or _is_int_const(b, 0) and _pure(a)):
                return IntImm(dt, 0)
            lin = _merge_div_mod(TypedLinear.of(cls(a, b)))
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
        lin = TypedLinear.of(a)
        quot_terms = tuple((t, k // c) for t, k in lin.terms if k % c == 0)
        rest_terms = tuple((t, k) for t, k in lin.terms if k % c != 0)
        quot = TypedLinear(dt, quot_terms, lin.const // c)
        rest = TypedLinear(dt, rest_terms, lin.const % c)
        rest_e = linear_expr(rest)
        quot_e = linear_expr(quot)
        if rest_e is None or quot_e is None:
            return None
        lo, hi = self._bounds(rest_e)
        in_range = lo is not None and hi is not None and 0 <= lo and hi < c
        if cls is FloorMod:
            if in_range:
                return rest_e
            if not quot.terms and quot.const == 0 and rest_e == a:
                return None
            return FloorMod(rest_e, IntImm(dt, c))
        if in_range:
            return quot_e
        if not quot.terms and quot.const == 0:
            return None
        whole = quot.plus(TypedLinear(dt, ((FloorDiv(rest_e, IntImm(dt, c)), 1),), 0))
        return linear_expr(whole)

    def _compare(self, cls, a: PrimExpr, b: PrimExpr, orig) -> PrimExpr:
        if isinstance(a, IntImm) and isinstance(b, IntImm):
            return _fold_int(cls, a, b)
        if isinstance(a, FloatImm) and isinstance(b, FloatImm):
            out = _fold_float(cls, a, b)
            if out is not None:
                return out
        dt = a.dtype
        if dt.lanes == 1 and dt.is_int:
            diff = TypedLinear.of(Sub(a, b))
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

    def _at_extreme(self, cls, diff: TypedLinear, lo, hi) -> PrimExpr | None:
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

    # ---------------------------------------------------------------- stmts
    def stmt(self, s: Stmt) -> Stmt:
        t = type(s)
        if t is SeqStmt:
            parts = [self.stmt(x) for x in s.seq]
            if all(p is q for p, q in zip(parts, s.seq)) and not any(
                    is_nop(p) or isinstance(p, SeqStmt) for p in parts):
                return s
            return seq(parts)
        if t is BufferStore:
            value = self.expr(s.value)
            idx = [self.expr(i) for i in s.indices]
            if value is s.value and all(x is y for x, y in zip(idx, s.indices)):
                return s
            return BufferStore(s.buffer, value, idx)
        if t is For:
            return self._for(s)
        if t is IfThenElse:
            c = self.expr(s.condition)
            if is_true(c):
                return self.stmt(s.then_case)
            if is_false(c):
                return self.stmt(s.else_case) if s.else_case is not None else nop()
            then = self.stmt(s.then_case)
            other = None if s.else_case is None else self.stmt(s.else_case)
            if other is not None and is_nop(other):
                other = None
            if is_nop(then) and other is None:
                return nop() if _pure(c) else s
            if is_nop(then):
                return IfThenElse(self._negate(c), other, None)
            if c is s.condition and then is s.then_case and other is s.else_case:
                return s
            return IfThenElse(c, then, other)
        if t is LetStmt:
            v = self.expr(s.value)
            if isinstance(v, (IntImm, Var)):
                return self.stmt(substitute(s.body, {s.var: v}))
            saved = self.env.get(s.var)
            self.env[s.var] = self._bounds(v)
            self.scope += 1
            body = self.stmt(s.body)
            self.scope += 1
            self._restore(s.var, saved)
            if v is s.value and body is s.body:
                return s
            return LetStmt(s.var, v, body)
        if t is Evaluate:
            v = self.expr(s.value)
            return s if v is s.value else Evaluate(v)
        if t is AssertStmt:
            c = self.expr(s.condition)
            body = self.stmt(s.body)
            if is_true(c):
                return body
            if c is s.condition and body is s.body:
                return s
            return AssertStmt(c, s.message, body)
        if t is Allocate:
            body = self.stmt(s.body)
            extents = [self.expr(x) for x in s.extents]
            if body is s.body and all(x is y for x, y in zip(extents, s.extents)):
                return s
            return attrs.evolve(s, body=body, extents=extents)
        if t in (DeclBuffer, AttrStmt, AllocateConst):
            body = self.stmt(s.body)
            return s if body is s.body else attrs.evolve(s, body=body)
        if t is While:
            c = self.expr(s.condition)
            if is_false(c):
                return nop()
            body = self.stmt(s.body)
            if c is s.condition and body is s.body:
                return s
            return While(c, body)
        if t is BlockRealize:
            return self._block_realize(s)
        raise BuildError(f"simplify: unexpected statement {t.__name__}")

    def _negate(self, c: PrimExpr) -> PrimExpr:
        return self.expr(Not(c))

    def _for(self, s: For) -> Stmt:
        lo_e, ext_e = self.expr(s.min), self.expr(s.extent)
        v = s.loop_var
        ext = const_int(ext_e)
        if ext is not None and ext <= 0:
            return nop()
        if ext == 1 and s.kind is not ForKind.THREAD_BINDING:
            return self.stmt(substitute(s.body, {v: lo_e}))
        mlo, mhi = self._bounds(lo_e)
        _, ehi = self._bounds(ext_e)
        hi = None if mhi is None or ehi is None else mhi + ehi - 1
        saved = self.env.get(v)
        self.env[v] = (mlo, hi)
        self.scope += 1
        body = self.stmt(s.body)
        self.scope += 1
        self._restore(v, saved)
        if is_nop(body) and s.kind is not ForKind.THREAD_BINDING:
            return body
        if body is s.body and lo_e is s.min and ext_e is s.extent:
            return s
        return attrs.evolve(s, min=lo_e, extent=ext_e, body=body)

    def _block_realize(self, s: BlockRealize) -> Stmt:
        # used when the pass runs before blocks are lowered: simplify the
        # bindings and the body, with each iteration variable in its domain
        values = [self.expr(x) for x in s.iter_values]
        pred = self.expr(s.predicate)
        block = s.block
        saved = {}
        for iv in block.iter_vars:
            lo, _ = self._bounds(iv.dom.min)
            _, mhi = self._bounds(iv.dom.min)
            _, ehi = self._bounds(iv.dom.extent)
            saved[iv.var] = self.env.get(iv.var)
            self.env[iv.var] = (lo, None if mhi is None or ehi is None else mhi + ehi - 1)
        self.scope += 1
        body = self.stmt(block.body)
        init = None if block.init is None else self.stmt(block.init)
        self.scope += 1
        for var, old in saved.items():
            self._restore(var, old)
        if body is not block.body or init is not block.init:
            block = attrs.evolve(block, body=body, init=init)
        if block is s.block and pred is s.predicate and all(x is y for x, y in zip(values, s.iter_values)):
            return s
        return BlockRealize(values, pred, block)


def _merge_div_mod(lin: TypedLinear) -> TypedLinear:
    """``(x // c) * c + x % c`` is ``x`` (for flooring and for truncating
    division alike), wherever the pair appears in a sum with matching
    coefficients."""
    terms = dict(lin.terms)
    pairs = ((FloorMod, FloorDiv), (Mod, Div))
    for term, coeff in lin.terms:
        for mod_cls, div_cls in pairs:
            if type(term) is not mod_cls or not isinstance(term.b, IntImm) or term.b.value == 0:
                continue
            partner = div_cls(term.a, term.b)
            if terms.get(term) == coeff and terms.get(partner) == coeff * term.b.value:
                del terms[term]
                del terms[partner]
                rest = TypedLinear(lin.dtype, tuple(terms.items()), lin.const)
                inner = TypedLinear.of(term.a)
                return _merge_div_mod(rest.plus(inner.scale(coeff)))
    return lin


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


__all__ = ["simplify", "simplify_func", "simplify_expr", "simplify_stmt"]
