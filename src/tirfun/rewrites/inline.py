"""Checks compute_inline and reverse_compute_inline share, in forms that
skip work the general dataflow checks do where the answer is plain.

The inlined buffer has one writer in the scope (a complete block), which
nearly always writes the whole buffer, one element per instance, over
loops of the buffer's extents: then every reader is covered whatever it
reads, and :func:`~.dataflow.region_cover_violation` (the bounds of what
the reader consumes and the writer produces, and a proof that one holds
the other) need not run.
"""

from __future__ import annotations

from ..analysis.arith.simplify import is_true
from ..analysis.arith.terms import int_value
from ..nodes import BlockRealize, Buffer, IntImm, Var
from .dataflow import common_ancestor, loops_between, writers


def whole_writer_covers(site, children, consumer, buffer: Buffer) -> bool:
    """Whether :func:`~.dataflow.region_cover_violation` of ``consumer``
    over ``buffer`` surely finds nothing (True), because the one other
    block of ``children`` that writes the buffer writes all of it within
    one iteration of the loop it shares with the consumer; False when that
    cannot be told this way (the general check must run).

    The general check bounds what the consumer reads by the buffer's
    shape, so a writer of the whole buffer covers any read. The consumer's
    read regions must be in the dtype of the buffer's shape, where the
    general check compares them with the writer's indices without a cast.
    """
    cpath, crealize = consumer
    reads = [r for r in crealize.block.reads if r.buffer == buffer]
    found = [w for w in writers(children, buffer) if w[1].block is not crealize.block]
    # the general check matches the writer's regions to a read by identity:
    # an equal copy of the buffer is left to it
    if len(found) != 1 or not reads or any(r.buffer is not buffer for r in reads):
        return False
    dtype = _shape_dtype(buffer)
    if dtype is None or any(e.dtype != dtype for r in reads for rng in r.region for e in (rng.min, rng.extent)):
        return False
    wpath, wrealize = found[0]
    return writes_whole(site, wpath, wrealize, buffer, common_ancestor(site, wpath, cpath))


def _shape_dtype(buffer: Buffer):
    """The dtype of the buffer's shape when every dimension is a constant
    of that one dtype, else None."""
    dims = list(buffer.shape)
    if not dims or any(type(d) is not IntImm for d in dims):
        return None
    dtype = dims[0].dtype
    return dtype if all(d.dtype == dtype for d in dims) else None


def writes_whole(site, wpath, wrealize: BlockRealize, buffer: Buffer, top) -> bool:
    """Whether the block realized at ``wpath`` surely writes every element
    of ``buffer`` while the loops below ``top`` run, as
    :func:`~.dataflow.produced_region` shows it in its plainest case: no
    predicate, every loop below ``top`` starting at 0, and a declared write
    region of one element at distinct iteration variables, each over
    ``[0, n)`` for its dimension's extent ``n`` and bound to a distinct
    loop of those, which runs over ``[0, n)`` too."""
    if not is_true(wrealize.predicate):
        return False
    dtype = _shape_dtype(buffer)
    if dtype is None:
        return False
    loops = loops_between(site, wpath, top)
    if any(int_value(loop.min) != 0 for loop in loops):
        return False
    by_var = {loop.loop_var: loop for loop in loops}
    block = wrealize.block
    domains = {iv.var: iv.dom for iv in block.iter_vars}
    bound = dict(zip((iv.var for iv in block.iter_vars), wrealize.iter_values))
    for region in block.writes:
        if region.buffer is buffer and _one_point_each(region, buffer, dtype, domains, bound, by_var):
            return True
    return False


def _one_point_each(region, buffer: Buffer, dtype, domains: dict, bound: dict, by_var: dict) -> bool:
    """Whether ``region`` is one element at distinct iteration variables,
    dimension by dimension over the dimension's extent, each bound to a
    distinct loop of ``by_var`` over that extent (see :func:`writes_whole`)."""
    seen_ivs, seen_loops = set(), set()
    for rng, dim in zip(region.region, buffer.shape):
        n = dim.value
        var = rng.min
        if int_value(rng.extent) != 1 or type(var) is not Var or var.dtype != dtype or var in seen_ivs:
            return False
        dom = domains.get(var)
        if dom is None or int_value(dom.min) != 0 or int_value(dom.extent) != n:
            return False
        loop_var = bound.get(var)
        loop = by_var.get(loop_var) if type(loop_var) is Var else None
        if loop is None or loop_var in seen_loops or loop_var.dtype != dtype or int_value(loop.extent) != n:
            return False
        seen_ivs.add(var)
        seen_loops.add(loop_var)
    return len(region.region) == len(buffer.shape)


__all__ = ["whole_writer_covers", "writes_whole"]
