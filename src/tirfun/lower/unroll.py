"""Unrolling of ``T.unroll`` loops.

A loop of kind ``unrolled`` with a constant extent becomes one copy of its
body per iteration, the loop variable replaced by its value, so later
passes fold each copy's indices. Names bound inside every copy after the
first are made fresh. Loops whose copies would exceed a budget stay loops
(then LLVM's own unroller decides).
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import transform, walk
from ..nodes import For, ForKind, IntImm, IRModule, PrimFunc, SeqStmt
from ._util import count_nodes, func_names, map_funcs, rename_bound, seq, substitute

#: the most nodes an unrolled loop may produce (extent times body size)
MAX_UNROLLED_NODES = 20000


def unroll_loops(mod: IRModule) -> IRModule:
    """Replace each unrolled loop by copies of its body."""
    return map_funcs(mod, unroll_func)


def unroll_func(func: PrimFunc) -> PrimFunc:
    """Unroll the unrolled loops of one function."""
    if not any(isinstance(n, For) and n.kind is ForKind.UNROLLED for n in walk(func.body)):
        return func
    used = func_names(func)

    def post(n):
        nonlocal used
        if isinstance(n, SeqStmt) and any(isinstance(x, SeqStmt) for x in n.seq):
            return seq(n.seq)  # a loop replaced by a sequence inside a sequence
        if not (isinstance(n, For) and n.kind is ForKind.UNROLLED):
            return n
        if not (isinstance(n.min, IntImm) and isinstance(n.extent, IntImm)):
            return attrs.evolve(n, kind=ForKind.SERIAL)
        ext = n.extent.value
        size = count_nodes(n.body, MAX_UNROLLED_NODES + 1)
        if ext * size > MAX_UNROLLED_NODES:
            return n
        copies = []
        for k in range(ext):
            body = n.body
            if k > 0:
                body, used = rename_bound(body, used)
            copies.append(substitute(body, {n.loop_var: IntImm(n.loop_var.dtype, n.min.value + k)}))
        return seq(copies)

    body = transform(func.body, post)
    return func if body is func.body else func.with_body(body)


__all__ = ["unroll_loops", "unroll_func", "MAX_UNROLLED_NODES"]
