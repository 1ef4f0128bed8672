"""Interleaving of parallel iterations that each run one accumulation chain.

A row sum with parallel rows lowers to::

    for i in T.parallel(n):
        B[i] = 0
        for k in range(m):
            B[i] = B[i] + A[i, k]      # each addition waits for the last

Every row is one chain of dependent additions, so a core spends the
latency of an addition on each element. The iterations of a parallel loop
are independent (that is what makes running them on several threads
correct), so they may also be interleaved: this pass groups ``J``
consecutive iterations and jams their inner loops together::

    for i_o in T.parallel(n // J):
        B[i_o*J + 0] = 0 ... B[i_o*J + J-1] = 0
        for k in range(m):
            B[i_o*J + 0] = B[i_o*J + 0] + A[i_o*J + 0, k]
            ...                          # J independent chains per step
    for i_r in range(n % J): ...         # the iterations left over

Each element still adds its terms in the same order, so the results are
bit-identical; only the order *between* independent iterations changes.
The pass applies only to a parallel loop whose body holds a serial
innermost loop that accumulates into a scalar element, and whose body is
small. A body with a vectorized loop is left alone: its lanes are
independent chains already (a row sum with an rfactor'd vector of partial
sums, whose scalar chain is only the final sum of the lanes), and
interleaving it would only read eight rows at once, which halves such a
row sum's speed.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import transform, walk
from ..nodes import (
    BufferLoad, BufferStore, For, ForKind, IntImm, IRModule, PrimFunc, SeqStmt, Stmt,
)
from .simplify import simplify_stmt
from ._util import count_nodes, func_names, map_funcs, rename_bound, seq, substitute, uses_var

#: how many iterations are interleaved
FACTOR = 8
#: the largest loop body (in nodes) that is interleaved
MAX_BODY_NODES = 400


def interleave_parallel(mod: IRModule) -> IRModule:
    """Interleave the iterations of parallel loops that run accumulation chains."""
    return map_funcs(mod, interleave_func)


def interleave_func(func: PrimFunc) -> PrimFunc:
    """Interleave the parallel loops of one function."""
    if not any(isinstance(n, For) and n.kind is ForKind.PARALLEL for n in walk(func.body)):
        return func
    used = func_names(func)

    def post(n):
        nonlocal used
        if isinstance(n, For) and n.kind is ForKind.PARALLEL and _worth_it(n):
            out, used = _interleave(n, used)
            return simplify_stmt(out)
        if isinstance(n, SeqStmt) and any(isinstance(x, SeqStmt) for x in n.seq):
            return seq(n.seq)  # a loop replaced by a sequence inside a sequence
        return n

    body = transform(func.body, post)
    return func if body is func.body else func.with_body(body)


def _is_chain(loop: For) -> bool:
    """An innermost serial loop storing a scalar into an element that does
    not move with the loop and that the stored value reads."""
    if loop.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
        return False
    if any(isinstance(n, For) for n in walk(loop.body)):
        return False
    stores = [n for n in walk(loop.body) if isinstance(n, BufferStore)]
    for st in stores:
        if any(i.dtype.lanes != 1 for i in st.indices):
            continue
        if any(uses_var(i, loop.loop_var) for i in st.indices):
            continue
        reads_itself = any(isinstance(n, BufferLoad) and n.buffer == st.buffer
                           and tuple(n.indices) == tuple(st.indices) for n in walk(st.value))
        if reads_itself:
            return True
    return False


def _worth_it(loop: For) -> bool:
    if count_nodes(loop.body, MAX_BODY_NODES) >= MAX_BODY_NODES:
        return False
    if any(isinstance(n, For) and n.kind in (ForKind.PARALLEL, ForKind.VECTORIZED)
           for n in walk(loop.body)):
        return False
    inner = [n for n in walk(loop.body) if isinstance(n, For)]
    if not inner or not any(_is_chain(f) for f in inner):
        return False
    # inner loop bounds must not depend on the parallel variable, or the
    # copies could not share one loop
    return not any(uses_var(f.min, loop.loop_var) or uses_var(f.extent, loop.loop_var)
                   for f in inner)


def _interleave(loop: For, used: set[str]) -> tuple[Stmt, set[str]]:
    v = loop.loop_var
    dt = v.dtype
    factor = IntImm(dt, FACTOR)
    if isinstance(loop.extent, IntImm):
        groups = IntImm(dt, loop.extent.value // FACTOR)
        rest = IntImm(dt, loop.extent.value % FACTOR)
    else:
        groups = loop.extent // factor
        rest = loop.extent % factor
    names = set(used)
    outer_name = _fresh(f"{v.name}_o", names)
    names.add(outer_name)
    outer = type(v)(outer_name, dt)
    copies = [substitute(loop.body, {v: loop.min + outer * factor + IntImm(dt, k)})
              for k in range(FACTOR)]
    jammed, names = _jam(copies, names)
    main = attrs.evolve(loop, loop_var=outer, min=IntImm(dt, 0), extent=groups, body=jammed)
    rest_name = _fresh(f"{v.name}_r", names)
    names.add(rest_name)
    rest_var = type(v)(rest_name, dt)
    tail_body, names = rename_bound(substitute(loop.body, {v: loop.min + groups * factor + rest_var}),
                                    names)
    tail = For(rest_var, IntImm(dt, 0), rest, ForKind.SERIAL, tail_body)
    if isinstance(rest, IntImm) and rest.value == 0:
        return main, names
    if isinstance(groups, IntImm) and groups.value == 0:
        return tail, names
    return SeqStmt([main, tail]), names


def _fresh(base: str, used: set[str]) -> str:
    from ._util import fresh_name

    return fresh_name(base, used)


def _same_shape(stmts) -> bool:
    first = stmts[0]
    if not all(type(s) is type(first) for s in stmts):
        return False
    if isinstance(first, For):
        # vectorized loops stay apart: one vector loop per copy
        return first.kind is not ForKind.VECTORIZED and all(
            s.min == first.min and s.extent == first.extent and s.kind is first.kind
            and s.loop_var == first.loop_var for s in stmts)
    if isinstance(first, SeqStmt):
        return all(len(s.seq) == len(first.seq) for s in stmts)
    return False


def _jam(stmts: list[Stmt], used: set[str]) -> tuple[Stmt, set[str]]:
    """One statement running ``stmts`` (independent copies of one
    statement) with their loops fused level by level."""
    if _same_shape(stmts):
        first = stmts[0]
        if isinstance(first, For):
            body, used = _jam([s.body for s in stmts], used)
            return attrs.evolve(first, body=body), used
        parts = []
        for k in range(len(first.seq)):
            part, used = _jam([s.seq[k] for s in stmts], used)
            parts.append(part)
        return seq(parts), used
    # anything else runs copy after copy; later copies bind fresh names
    out = [stmts[0]]
    for s in stmts[1:]:
        renamed, used = rename_bound(s, used)
        out.append(renamed)
    return seq(out), used


__all__ = ["interleave_parallel", "interleave_func", "FACTOR", "MAX_BODY_NODES"]
