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
    PrimFunc, SeqStmt, Var,
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
    lead = len(region) - len(view.shape)
    if lead < 0:
        raise BuildError(f"block {block_name}: match_buffer {view.name} has more dimensions "
                         f"than its source {source.buffer.name}")
    strides = _strides(source.buffer)
    offset_var = view.elem_offset if isinstance(view.elem_offset, Var) else None
    # a view's strides and offset variable (TVM gives one to a view with an
    # offset_factor) describe the source region; other explicit layouts do not
    if (view.strides and (strides is None or not all(
            _same_int(a, b) for a, b in zip(view.strides, strides[lead:])))) or (
            view.elem_offset is not None and offset_var is None and not _same_int(view.elem_offset, 0)):
        raise BuildError(f"block {block_name}: match_buffer {view.name} with explicit strides "
                         "or offset is not supported by the CPU build")
    offset = None
    if offset_var is not None:
        if strides is None:
            raise BuildError(f"block {block_name}: the offset of match_buffer {view.name} in "
                             f"{source.buffer.name} is not known to the CPU build")
        offset = source.buffer.elem_offset if source.buffer.elem_offset is not None else \
            IntImm(offset_var.dtype, 0)
        for r, stride in zip(region, strides):
            offset = offset + r.min * stride

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

    body = transform(body, post)
    # the view's accesses are gone: what is left of its offset is a value
    return body if offset is None else substitute(body, {offset_var: offset})


def _strides(buf: Buffer):
    """The strides of ``buf`` in elements: its own, or the compact ones of
    its shape; None where they are neither."""
    if buf.strides:
        return list(buf.strides)
    out, step = [], IntImm(buf.shape[-1].dtype if buf.shape else "int32", 1)
    for extent in reversed(buf.shape):
        out.append(step)
        step = step * extent
    return out[::-1]


def _same_int(a, b) -> bool:
    a = a.value if isinstance(a, IntImm) else a
    b = b.value if isinstance(b, IntImm) else b
    return a == b


__all__ = ["lower_blocks", "lower_blocks_func"]
