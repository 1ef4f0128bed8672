"""The simplification pass: the expression rules of
:mod:`tirfun.analysis.arith.simplify`, applied through every statement.

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
  ``[0, divisor)`` vanishes, where the sum cannot wrap;
* conditions proven true or false from the loop bounds are removed, and so
  are the branches, loops and statements they guard;
* ``sum == its smallest value`` becomes a conjunction of ``var == bound``,
  which is how a reduction's init test ``k0*4 + k1 == 0`` becomes
  ``k0 == 0 and k1 == 0`` for :mod:`tirfun.lower.partition`;
* loops of extent 0 disappear, loops of extent 1 become their body.
"""

from __future__ import annotations

import attrs

from ..analysis.arith.simplify import ExprSimplifier, is_pure, simplify_expr
from ..errors import BuildError
from ..nodes import (
    Allocate, AllocateConst, AssertStmt, AttrStmt, BlockRealize, BufferStore, DeclBuffer,
    Evaluate, For, ForKind, IfThenElse, IntImm, IRModule, LetStmt, Not, PrimExpr, PrimFunc, SeqStmt,
    Stmt, Var, While,
)
from ..analysis.arith.const_bound import ConstInterval
from ..analysis.arith.terms import const_int
from ._util import is_false, is_nop, is_true, map_funcs, nop, seq, substitute


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


def simplify_stmt(s: Stmt, env=None) -> Stmt:
    """Simplify one statement, given intervals for its free variables."""
    return _Simplifier(dict(env or {})).stmt(s)


class _Simplifier(ExprSimplifier):
    """One simplification run over statements; ``env`` holds the intervals
    of the variables in scope and is extended and restored as scopes open
    and close."""

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
            pred = None if s.predicate is None else self.expr(s.predicate)
            if value is s.value and all(x is y for x, y in zip(idx, s.indices)) and \
                    pred is s.predicate:
                return s
            return BufferStore(s.buffer, value, idx, pred)
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
                return nop() if is_pure(c) else s
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


__all__ = ["simplify", "simplify_func", "simplify_expr", "simplify_stmt"]
