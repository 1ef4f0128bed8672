"""Preparation of parallel loops for the thread pool.

Only the outermost parallel loop of a nest runs on the pool: a parallel
loop inside another one would ask an already busy pool for more threads,
so it becomes serial (its iterations are still spread over the threads by
the enclosing loop). A parallel loop that allocates nothing across
iterations needs nothing more; the code generator outlines its body.
"""

from __future__ import annotations

import attrs

from ..nodes import For, ForKind, IRModule, PrimFunc, Stmt
from ..analysis.traversal import map_children
from ._util import map_funcs


def prepare_parallel(mod: IRModule) -> IRModule:
    """Make parallel loops nested in parallel loops serial."""
    return map_funcs(mod, prepare_parallel_func)


def prepare_parallel_func(func: PrimFunc) -> PrimFunc:
    """Prepare the parallel loops of one function."""
    body = _visit(func.body, inside=False)
    return func if body is func.body else func.with_body(body)


def _visit(s, inside: bool):
    if not isinstance(s, Stmt):
        return s
    if isinstance(s, For) and s.kind is ForKind.PARALLEL:
        body = _visit(s.body, True)
        if inside:
            return attrs.evolve(s, kind=ForKind.SERIAL, body=body)
        return s if body is s.body else attrs.evolve(s, body=body)
    return map_children(s, lambda c: _visit(c, inside))


__all__ = ["prepare_parallel", "prepare_parallel_func"]
