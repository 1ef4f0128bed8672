"""Blocks to loops.

Every ``BlockRealize`` becomes plain statements:

* the block's iteration variables are replaced by the values bound to them;
* a reduction's ``init`` runs under the test that every reduction iteration
  variable is at the start of its domain (``if k == 0: C[i, j] = 0``), which
  the later passes simplify and hoist out of the hot loop;
* the predicate (``T.where``) guards the whole instance;
* ``match_buffer`` views are replaced by accesses to the viewed buffer at the
  region's offset.

Blocks are lowered innermost first. Allocations not yet made explicit by
:mod:`tirfun.lower.allocations` are made explicit first.
"""

from __future__ import annotations

from ..analysis.traversal import transform
from ..errors import BuildError
from ..nodes import (
    EQ, BlockRealize, Buffer, BufferLoad, BufferStore, IfThenElse, IntImm, IRModule, IterVarType,
    PrimFunc, SeqStmt,
)
from ._util import conjoin, is_true, map_funcs, substitute
from .allocations import lower_allocations_func


def lower_blocks(mod: IRModule) -> IRModule:
    """Replace every block by the statements it stands for."""
    return map_funcs(mod, lower_blocks_func)


def lower_blocks_func(func: PrimFunc) -> PrimFunc:
    """Lower the blocks of one function."""
    # a block that still allocates gets its allocations made explicit first,
    # so this pass can also run on its own
    func = lower_allocations_func(func)

    def post(n):
        return _lower_realize(n) if isinstance(n, BlockRealize) else n

    body = transform(func.body, post)
    return func if body is func.body else func.with_body(body)


def _lower_realize(realize: BlockRealize):
    block = realize.block
    body = block.body
    if block.init is not None:
        tests = [EQ(iv.var, iv.dom.min) for iv in block.iter_vars
                 if iv.iter_type is IterVarType.CommReduce]
        cond = conjoin(tests)
        init = block.init if is_true(cond) else IfThenElse(cond, block.init)
        body = SeqStmt([init, body])
    for mb in block.match_buffers:
        body = _inline_match_buffer(body, mb, block.name_hint)
    values = {iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)}
    body = substitute(body, values)
    if not is_true(realize.predicate):
        body = IfThenElse(realize.predicate, body)
    return body


def _inline_match_buffer(body, mb, block_name: str):
    """Rewrite accesses to the view ``mb.buffer`` as accesses to the source
    region. The view's dimensions line up with the source's last ones; the
    leading source dimensions are fixed at the region's start."""
    view: Buffer = mb.buffer
    source = mb.source
    region = list(source.region)
    if view.strides or view.elem_offset is not None:
        raise BuildError(f"block {block_name}: match_buffer {view.name} with explicit strides "
                         "or offset is not supported by the CPU build")
    lead = len(region) - len(view.shape)
    if lead < 0:
        raise BuildError(f"block {block_name}: match_buffer {view.name} has more dimensions "
                         f"than its source {source.buffer.name}")

    def index(indices):
        out = [r.min for r in region[:lead]]
        for r, i in zip(region[lead:], indices):
            zero = isinstance(r.min, IntImm) and r.min.value == 0
            out.append(i if zero and r.min.dtype == i.dtype else r.min + i)
        return out

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer == view:
            return BufferLoad(source.buffer, index(n.indices), n.predicate)
        if isinstance(n, BufferStore) and n.buffer == view:
            return BufferStore(source.buffer, n.value, index(n.indices), n.predicate)
        return n

    return transform(body, post)


__all__ = ["lower_blocks", "lower_blocks_func"]
