"""Loop partitioning: take loop-invariant-per-part tests out of hot loops.

When a test inside a loop compares that loop's variable with a constant
(``if k0 == 0 and k1 == 0: C[i, j] = 0``, the init of a reduction after
:mod:`tirfun.lower.simplify`), the loop is cut where the test changes value::

    for k0 in range(256):            # k0 = 0: body with the test true for k0
        body(k0)           ==>       body(0)
                                     for k0 in range(1, 256):
                                         body(k0)   # the test is now false

and simplification removes the decided test from each part, so the loop
that runs most often carries no branch. Parts of one iteration are inlined;
the names bound inside every copy but the first are made fresh, so names
stay unique within the function.

Only serial, unrolled and vectorized loops with constant bounds are cut,
and only at constants inside the loop's range; a loop whose body is larger
than a budget is left alone, so code grows by a bounded factor.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import walk
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Allocate, AssertStmt, AttrStmt, DeclBuffer, For, ForKind, IfThenElse,
    IntImm, IRModule, LetStmt, PrimFunc, SeqStmt, Stmt, Var, While, AllocateConst,
)
from ._util import conjuncts, count_nodes, func_names, map_funcs, rename_bound, seq, substitute
from .simplify import simplify_stmt

#: the largest loop body (in nodes) that is copied to partition a loop
MAX_BODY_NODES = 4000
_KINDS = (ForKind.SERIAL, ForKind.UNROLLED, ForKind.VECTORIZED)


def partition_loops(mod: IRModule) -> IRModule:
    """Cut loops where a test on their variable changes value."""
    return map_funcs(mod, partition_func)


def partition_func(func: PrimFunc) -> PrimFunc:
    """Partition the loops of one function."""
    if not any(isinstance(n, IfThenElse) for n in walk(func.body)):
        return func  # nothing to cut at
    used = func_names(func)
    p = _Partitioner(used)
    body = p.stmt(func.body)
    if body is func.body:
        return func
    # each part knows its variable's new range: let the simplifier decide the tests
    env = {}
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            if isinstance(dim, Var):
                env[dim] = (0, None)
    return func.with_body(simplify_stmt(body, env))


def _cut_points(loop: For) -> list[int]:
    """The constants at which a test inside ``loop`` changes value."""
    v = loop.loop_var
    lo = loop.min.value
    hi = lo + loop.extent.value
    cuts: set[int] = set()
    for n in walk(loop.body):
        if not isinstance(n, IfThenElse):
            continue
        for c in conjuncts(n.condition):
            cut = _cuts_of(c, v)
            cuts.update(x for x in cut if lo < x < hi)
    return sorted(cuts)


def _cuts_of(c, v: Var) -> list[int]:
    if type(c) not in (EQ, NE, LT, LE, GT, GE):
        return []
    a, b, cls = c.a, c.b, type(c)
    if b == v and isinstance(a, IntImm):
        a, b = b, a
        cls = {LT: GT, GT: LT, LE: GE, GE: LE}.get(cls, cls)
    if a != v or not isinstance(b, IntImm):
        return []
    k = b.value
    if cls in (EQ, NE):
        return [k, k + 1]
    if cls in (LT, GE):
        return [k]
    return [k + 1]  # LE, GT


class _Partitioner:
    def __init__(self, used: set[str]):
        self.used = used

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, For):
            return self._for(s)
        if isinstance(s, SeqStmt):
            parts = [self.stmt(x) for x in s.seq]
            if all(a is b for a, b in zip(parts, s.seq)):
                return s
            return seq(parts)
        if isinstance(s, IfThenElse):
            then = self.stmt(s.then_case)
            other = None if s.else_case is None else self.stmt(s.else_case)
            if then is s.then_case and other is s.else_case:
                return s
            return IfThenElse(s.condition, then, other)
        if isinstance(s, (LetStmt, AttrStmt, AssertStmt, Allocate, DeclBuffer, While, AllocateConst)):
            body = self.stmt(s.body)
            return s if body is s.body else attrs.evolve(s, body=body)
        return s

    def _for(self, s: For) -> Stmt:
        if (s.kind in _KINDS and isinstance(s.min, IntImm) and isinstance(s.extent, IntImm)
                and count_nodes(s.body, MAX_BODY_NODES) < MAX_BODY_NODES):
            cuts = _cut_points(s)
            if cuts:
                return self._split(s, cuts)
        body = self.stmt(s.body)
        return s if body is s.body else attrs.evolve(s, body=body)

    def _split(self, s: For, cuts: list[int]) -> Stmt:
        lo = s.min.value
        hi = lo + s.extent.value
        edges = [lo, *cuts, hi]
        parts: list[Stmt] = []
        dt = s.loop_var.dtype
        for i, (a, b) in enumerate(zip(edges, edges[1:])):
            if i == 0:
                var, body = s.loop_var, s.body
            else:
                # later copies bind fresh names (the loop's own included)
                loop = attrs.evolve(s, min=IntImm(dt, a), extent=IntImm(dt, b - a))
                renamed, self.used = rename_bound(loop, self.used)
                var, body = renamed.loop_var, renamed.body
            if b - a == 1:
                part = substitute(body, {var: IntImm(dt, a)})
            else:
                part = attrs.evolve(s, loop_var=var, min=IntImm(dt, a), extent=IntImm(dt, b - a),
                                    body=body)
            # a test decided in this part no longer cuts it: simplify first
            part = simplify_stmt(part)
            parts.append(self.stmt(part))
        return seq(parts)


__all__ = ["partition_loops", "partition_func", "MAX_BODY_NODES"]
