"""Vectorized loops to vector expressions.

``for j in T.vectorized(8): B[i*8 + j] = A[i*8 + j] + 1.0`` becomes the
single statement ``B[T.Ramp(i*8, 1, 8)] = A[T.Ramp(i*8, 1, 8)] +
T.Broadcast(1.0, 8)``: the loop variable becomes a Ramp of lanes, every
expression that depends on it a vector, everything else stays scalar (and
is broadcast where it meets a vector). Inner loops whose bounds do not
depend on the lane stay loops around vector code.

A loop is vectorized only when that keeps its meaning: every buffer that
the body stores into is accessed at one index that depends on the lane
(so lanes touch distinct elements), no test or ``if_then_else`` depends on
the lane, and nothing is allocated inside. Otherwise the loop becomes a
serial loop, which LLVM may still vectorize on its own.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import transform, walk
from ..nodes import (
    Add, Broadcast, BufferLoad, BufferStore, Call, Cast, CmpOp, Evaluate, FloatImm, FloorDiv, FloorMod, For,
    ForKind, IfThenElse, IntImm, IRModule, Let, LetStmt, LogicOp, Mul, Not, PrimExpr, PrimFunc,
    Ramp, Select, SeqStmt, Stmt, StringImm, Sub, Var,
)
from ..nodes.expr import BinaryOp
from ._util import map_funcs, seq, substitute

#: the widest loop turned into vector code
MAX_LANES = 256
_ELEMENTWISE_CALLS_EXCLUDED = ("tir.call_extern", "tir.if_then_else", "tir.address_of", "tir.ret",
                               "tir.call_packed", "tir.call_pure_extern", "tir.call_llvm_intrin",
                               "tir.call_llvm_pure_intrin", "tir.vectorlow", "tir.vectorhigh",
                               "tir.vectorcombine")


class _Fail(Exception):
    """The loop cannot be vectorized safely (internal signal)."""


def vectorize_loops(mod: IRModule) -> IRModule:
    """Turn each vectorized loop into vector expressions where that is safe."""
    return map_funcs(mod, vectorize_func)


def vectorize_func(func: PrimFunc) -> PrimFunc:
    """Vectorize the vectorized loops of one function."""
    def post(n):
        if isinstance(n, For) and n.kind is ForKind.VECTORIZED:
            return vectorize_loop(n)
        if isinstance(n, SeqStmt) and any(isinstance(x, SeqStmt) for x in n.seq):
            return seq(n.seq)  # a loop replaced by a sequence inside a sequence
        return n

    body = transform(func.body, post)
    return func if body is func.body else func.with_body(body)


def vectorize_loop(loop: For) -> Stmt:
    """The vector form of one vectorized loop, or the loop made serial."""
    serial = attrs.evolve(loop, kind=ForKind.SERIAL)
    if not (isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)):
        return serial
    lanes = loop.extent.value
    if lanes < 2 or lanes > MAX_LANES:
        return serial
    try:
        _check_independent_lanes(loop)
        return _Vectorizer(loop.loop_var, loop.min, lanes).stmt(loop.body)
    except _Fail:
        return serial


def _check_independent_lanes(loop: For) -> None:
    v = loop.loop_var
    stored: dict = {}
    for n in walk(loop.body):
        if isinstance(n, BufferStore):
            key = tuple(n.indices)
            if stored.setdefault(n.buffer, key) != key:
                raise _Fail("a buffer is stored at two indices")
    for n in walk(loop.body):
        if isinstance(n, BufferLoad) and n.buffer in stored:
            if tuple(n.indices) != stored[n.buffer]:
                raise _Fail("a stored buffer is loaded at another index")
    for buf, idx in stored.items():
        if len(idx) != 1:
            raise _Fail("multi-dimensional store")
        if not _linear_in(idx[0], v) and not _strided(idx[0], loop):
            raise _Fail("store index is not a lane-injective affine form")


def _strided(e: PrimExpr, loop: For) -> bool:
    """Whether ``e`` over the lanes of ``loop`` is a Ramp of a nonzero
    constant stride (a remainder and a quotient that the lanes do not
    cross, as a fused and split copy makes them): distinct lanes then hit
    distinct elements."""
    try:
        ramp = _Vectorizer(loop.loop_var, loop.min, loop.extent.value).expr(e)
    except _Fail:
        return False
    return isinstance(ramp, Ramp) and isinstance(ramp.stride, IntImm) and ramp.stride.value != 0


def _linear_in(e: PrimExpr, v: Var) -> bool:
    """Whether ``e`` is ``c*v + rest`` with a nonzero constant ``c`` and
    ``rest`` free of ``v``: distinct lanes then hit distinct elements."""
    from ..analysis.arith.linear import Affine

    lin = Affine.of(e)
    if lin is None:
        return False
    coeff = 0
    for term, c in lin.terms:
        if term == v:
            coeff = c
        elif _depends(term, v):
            return False
    return coeff != 0


def _fold(cls, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``cls(a, b)`` with the identities of integer index arithmetic applied
    (``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``, two constants)."""
    from ..analysis.arith.linear import Affine, linear_expr

    out = linear_expr(Affine.of(cls(a, b)))
    return cls(a, b) if out is None else out


def _depends(e, v: Var) -> bool:
    return any(n == v for n in walk(e) if isinstance(n, Var))


class _Vectorizer:
    def __init__(self, var: Var, start: PrimExpr, lanes: int):
        self.var = var
        self.start = start
        self.lanes = lanes
        self.memo: dict[int, tuple] = {}

    # ------------------------------------------------------------ helpers
    def widen(self, e: PrimExpr) -> PrimExpr:
        """``e`` as an n-lane vector (scalars broadcast)."""
        if e.dtype.lanes == self.lanes:
            return e
        if e.dtype.lanes != 1:
            raise _Fail("lane count mismatch")
        return Broadcast(e, self.lanes)

    # ------------------------------------------------------------ exprs
    def expr(self, e: PrimExpr) -> PrimExpr:
        hit = self.memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self._expr(e)
        self.memo[id(e)] = (e, out)
        return out

    def _expr(self, e: PrimExpr) -> PrimExpr:
        if isinstance(e, Var):
            if e == self.var:
                return Ramp(self.start, IntImm(e.dtype, 1), self.lanes)
            return e
        if isinstance(e, (IntImm, FloatImm, StringImm)):
            return e
        if isinstance(e, (Add, Sub)):
            a, b = self.expr(e.a), self.expr(e.b)
            sign = 1 if isinstance(e, Add) else -1
            if isinstance(a, Ramp) and b.dtype.lanes == 1:
                return Ramp(_fold(type(e), a.base, b), a.stride, self.lanes)
            if isinstance(b, Ramp) and a.dtype.lanes == 1:
                stride = b.stride if sign == 1 else _fold(Sub, IntImm(b.stride.dtype, 0), b.stride)
                return Ramp(_fold(type(e), a, b.base), stride, self.lanes)
            if isinstance(a, Ramp) and isinstance(b, Ramp):
                return Ramp(_fold(type(e), a.base, b.base), _fold(type(e), a.stride, b.stride), self.lanes)
            return self._binary(type(e), a, b, e)
        if isinstance(e, Mul):
            a, b = self.expr(e.a), self.expr(e.b)
            if isinstance(a, Ramp) and b.dtype.lanes == 1:
                return Ramp(_fold(Mul, a.base, b), _fold(Mul, a.stride, b), self.lanes)
            if isinstance(b, Ramp) and a.dtype.lanes == 1:
                return Ramp(_fold(Mul, a, b.base), _fold(Mul, a, b.stride), self.lanes)
            return self._binary(Mul, a, b, e)
        if isinstance(e, (FloorDiv, FloorMod)):
            a, b = self.expr(e.a), self.expr(e.b)
            if isinstance(a, Ramp) and self._lanes_in_one_block(a, b):
                # the lanes stay in one block of the divisor: one quotient,
                # consecutive remainders (what a fused and split loop gives)
                if isinstance(e, FloorDiv):
                    return FloorDiv(a.base, b)
                return Ramp(FloorMod(a.base, b), a.stride, self.lanes)
            return self._binary(type(e), a, b, e)
        if isinstance(e, (BinaryOp, CmpOp, LogicOp)):
            return self._binary(type(e), self.expr(e.a), self.expr(e.b), e)
        if isinstance(e, Not):
            a = self.expr(e.a)
            return e if a is e.a else Not(a)
        if isinstance(e, Select):
            c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
            if all(x.dtype.lanes == 1 for x in (c, t, f)):
                return e if (c, t, f) == (e.condition, e.true_value, e.false_value) else Select(c, t, f)
            return Select(self.widen(c), self.widen(t), self.widen(f))
        if isinstance(e, Cast):
            v = self.expr(e.value)
            if v.dtype.lanes == 1:
                return e if v is e.value else Cast(e.dtype, v)
            return Cast(e.dtype.with_lanes(self.lanes), v)
        if isinstance(e, BufferLoad):
            idx = [self.expr(i) for i in e.indices]
            if all(i.dtype.lanes == 1 for i in idx):
                return e if all(a is b for a, b in zip(idx, e.indices)) else BufferLoad(e.buffer, idx)
            if len(idx) != 1:
                raise _Fail("multi-dimensional vector load")
            return BufferLoad(e.buffer, idx)
        if isinstance(e, Call):
            args = [self.expr(a) for a in e.args]
            if all(a.dtype.lanes == 1 for a in args):
                return e if all(a is b for a, b in zip(args, e.args)) else Call(e.dtype, e.op, args)
            if not isinstance(e.op, str) or e.op in _ELEMENTWISE_CALLS_EXCLUDED or not e.op.startswith("tir."):
                raise _Fail(f"{e.op} depends on the lane")
            return Call(e.dtype.with_lanes(self.lanes), e.op, [self.widen(a) for a in args])
        if isinstance(e, (Ramp, Broadcast, Let)):
            if _depends(e, self.var):
                raise _Fail("nested vector or let expression depends on the lane")
            return e
        raise _Fail(f"cannot vectorize {type(e).__name__}")

    def _lanes_in_one_block(self, ramp: Ramp, divisor: PrimExpr) -> bool:
        """Whether the lanes of ``ramp`` (stride 1) never cross a multiple of
        the constant ``divisor``: its base is a multiple of the lane count,
        which divides the divisor."""
        from ..analysis.arith.linear import Affine

        c = divisor.value if isinstance(divisor, IntImm) else None
        if c is None or c <= 0 or c % self.lanes or not (isinstance(ramp.stride, IntImm) and ramp.stride.value == 1):
            return False
        base = Affine.of(ramp.base)
        return base is not None and base.const % self.lanes == 0 and all(k % self.lanes == 0 for _, k in base.terms)

    def _binary(self, cls, a, b, orig):
        if a.dtype.lanes == 1 and b.dtype.lanes == 1:
            return orig if (a is orig.a and b is orig.b) else cls(a, b)
        return cls(self.widen(a), self.widen(b))

    # ------------------------------------------------------------ stmts
    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, BufferStore):
            idx = [self.expr(i) for i in s.indices]
            if len(idx) != 1 or idx[0].dtype.lanes == 1:
                raise _Fail("store index does not depend on the lane")
            value = self.widen(self.expr(s.value))
            return BufferStore(s.buffer, value, idx)
        if isinstance(s, SeqStmt):
            return seq([self.stmt(x) for x in s.seq])
        if isinstance(s, IfThenElse):
            c = self.expr(s.condition)
            if c.dtype.lanes != 1:
                raise _Fail("a test depends on the lane")
            return IfThenElse(c, self.stmt(s.then_case),
                              None if s.else_case is None else self.stmt(s.else_case))
        if isinstance(s, For):
            lo, ext = self.expr(s.min), self.expr(s.extent)
            if lo.dtype.lanes != 1 or ext.dtype.lanes != 1:
                raise _Fail("inner loop bounds depend on the lane")
            if s.kind is ForKind.PARALLEL:
                raise _Fail("parallel loop inside a vectorized loop")
            return attrs.evolve(s, min=lo, extent=ext, body=self.stmt(s.body))
        if isinstance(s, LetStmt):
            value = self.expr(s.value)
            if value.dtype.lanes == 1:
                return attrs.evolve(s, value=value, body=self.stmt(s.body))
            # a lane-dependent let is inlined (expressions are pure, and LLVM
            # shares the repeated computation again)
            return self.stmt(substitute(s.body, {s.var: s.value}))
        if isinstance(s, Evaluate) and isinstance(s.value, IntImm):
            return s
        raise _Fail(f"cannot vectorize {type(s).__name__}")


__all__ = ["vectorize_loops", "vectorize_func", "vectorize_loop", "MAX_LANES"]
