"""What a block's inner stages write whole, for each instance of the block.

A block made by ``blockize`` (or written by hand as a scope) holds its work
in stages: loop nests around inner blocks, in its init and in its body. Its
declared write region is then a box of many elements per instance, and an
inner block may read an element of the buffer that an earlier stage of the
same instance wrote (a reduction's updates read what the init stage wrote).
A cache_write of such a block needs no copy of the buffer into the cache
first when the stages write every element they and the copy back read:
TVM's cache_write adds none. This module proves that, or gives up (and the
caller keeps the copy):

* :func:`stage_of` reads one statement as a stage: loops of constant
  extents around one block realize, no predicate;
* :func:`whole_write` is the box a stage writes whole: its block stores the
  element it declares, unconditionally, at indices that cover a dense box
  over the stage's loops;
* :func:`dense_over` is that density test, for any indices and loops.
"""

from __future__ import annotations

from ..analysis.arith import bound_region, detect_iter_map
from ..analysis.arith.int_set import Interval
from ..analysis.arith.linear import simplify_affine
from ..analysis.arith.simplify import is_true
from ..nodes import Block, BlockRealize, BufferRegion, BufferStore, For, IntImm, PrimExpr, Range, SeqStmt, Stmt, Var
from .exprs import substitute_expr, var_names
from .redirect import same_buffer


def stage_of(stmt: Stmt) -> tuple[list[For], BlockRealize] | None:
    """``(loops, realize)`` where ``stmt`` is loops of constant extents of
    one or more (each the only statement of the one above) around one block
    realize without a predicate, every iteration of which runs; None for
    anything else. A loop bound to threads makes no stage: a later stage's
    thread may read what another thread wrote, which a cache local to each
    thread would not hold."""
    loops = []
    node = stmt
    while type(node) is For:
        if not (type(node.min) is IntImm and type(node.extent) is IntImm and node.extent.value >= 1) \
                or node.thread_binding is not None:
            return None
        loops.append(node)
        node = node.body
    if type(node) is not BlockRealize:
        return None
    if not is_true(node.predicate):
        return None
    return loops, node


def whole_write(loops: list[For], realize: BlockRealize, buf) -> list[Interval] | None:
    """The box of ``buf`` (one Interval a dimension, in the variables around
    the stage) that the stage writes whole: its block declares one element
    of ``buf`` per instance and stores it unconditionally at the top of its
    body or init, at indices that cover a dense box over the stage's loops
    (:func:`dense_over`). None where that is not shown."""
    block = realize.block
    region = next((r for r in block.writes if same_buffer(r.buffer, buf)), None)
    if region is None or any(not (type(r.extent) is IntImm and r.extent.value == 1) for r in region.region):
        return None
    if not stores_unconditionally(block, buf, [r.min for r in region.region]):
        return None
    indices = written_indices(region, realize)
    if dense_over(indices, {loop.loop_var.name: loop for loop in loops}) is not None:
        return None
    dom = {loop.loop_var: Range(loop.min, loop.extent) for loop in loops}
    box = bound_region(BufferRegion(buf, [Range(i, IntImm(i.dtype, 1)) for i in indices]), dom)
    return box if all(iv.bounded for iv in box) else None


def stores_unconditionally(block: Block, buf, mins: list) -> bool:
    """Whether a statement at the top of the block's init or body (itself,
    or an item of its sequence) stores ``buf[mins]`` with no mask."""
    for stmt in ([block.init] if block.init is not None else []) + [block.body]:
        for x in (stmt.seq if type(stmt) is SeqStmt else (stmt,)):
            if type(x) is BufferStore and x.predicate is None and same_buffer(x.buffer, buf) \
                    and list(x.indices) == mins:
                return True
    return False


def written_indices(region: BufferRegion, realize: BlockRealize) -> list[PrimExpr]:
    """The first element of the block's ``region``, in the variables around
    the realize (its bindings substituted)."""
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    return [simplify_affine(substitute_expr(r.min, bindings)) for r in region.region]


def dense_over(indices: list[PrimExpr], loops: dict, buffer_name: str | None = None) -> str | None:
    """Why ``indices`` (one a dimension, of the buffer ``buffer_name``) may
    not cover a dense box as the ``loops`` (loop variable name -> For) run,
    or None: no two indices use one loop, and each is a bijective iterator
    map of the loops it uses (a loop's own variable alone is that loop,
    tiled whole)."""
    seen: set = set()
    names = set(loops)
    for index in indices:
        used = var_names(index) & names
        if not used:
            continue
        if used & seen or (not (type(index) is Var and index.dtype.is_index)
                           and detect_iter_map([index], {n: loops[n] for n in used}, "bijective") is None):
            of = f" of {buffer_name}" if buffer_name else ""
            return f"its write index {index.script()} does not cover a dense range{of} over the loops"
        seen |= used
    return None


__all__ = ["dense_over", "stage_of", "stores_unconditionally", "whole_write", "written_indices"]
