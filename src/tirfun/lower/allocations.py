"""``alloc_buffer`` to allocations.

A buffer that a block allocates becomes, at the top of that block's body::

    B_data = T.allocate([4, 4], "float32", "global")
    B = T.decl_buffer((4, 4), data=B_data)

and every use of the buffer below the block refers to the declared buffer,
whose ``data`` field names the allocation. A block below that writes the
buffer and carries ``storage_align``'s ``buffer_dim_align`` annotation
passes it on to the allocation (``annotations={"buffer_dim_align":
[[axis, factor, offset], ...]}``): as in TVM, the strides it asks for are
those of the buffer once :mod:`tirfun.lower.compact` has shrunk it, which
pads them (:func:`aligned_strides`). Strides change where elements live,
not what the program computes. The block keeps its place, so the
pass can run alone; :mod:`tirfun.lower.blocks` removes blocks afterwards.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import transform, walk
from ..errors import BuildError
from ..nodes import Allocate, Block, Buffer, DeclBuffer, FloorMod, IntImm, IRModule, Max, PrimFunc, Var
from ._util import fresh_name, func_names, map_funcs, substitute
from .flatten import flat_size


def lower_allocations(mod: IRModule) -> IRModule:
    """Turn every block's ``alloc_buffers`` into Allocate + DeclBuffer."""
    return map_funcs(mod, lower_allocations_func)


def lower_allocations_func(func: PrimFunc) -> PrimFunc:
    """Make the allocations of one function explicit."""
    if not any(isinstance(n, Block) and n.alloc_buffers for n in walk(func.body)):
        return func
    used = func_names(func)

    def post(n):
        if not isinstance(n, Block) or not n.alloc_buffers:
            return n
        return _allocate_in_block(n, used)

    body = transform(func.body, post)
    return func.with_body(body)


def _allocate_in_block(block: Block, used: set[str]) -> Block:
    replace: dict[Buffer, Buffer] = {}
    datas: dict[Buffer, Var] = {}
    aligns = _dim_aligns(block)
    for buf in block.alloc_buffers:
        if buf.data is not None:
            data = buf.data
        else:
            name = fresh_name(f"{buf.name}_data", used)
            used.add(name)
            data = Var(name, "handle")
        declared = attrs.evolve(buf, data=data)
        replace[buf] = declared
        datas[declared] = data
    if block.init is not None and _mentions(block.init, replace):
        raise BuildError(
            f"block {block.name_hint}: its init uses a buffer the block allocates "
            f"({', '.join(b.name for b in replace)}); allocate it in an enclosing block instead")
    body = substitute(block.body, None, replace)
    for buf, declared in reversed(list(replace.items())):
        body = DeclBuffer(declared, body)
        annotations = {}
        if buf in aligns and not buf.strides:
            annotations[DIM_ALIGN] = [[axis, f, o] for axis, (f, o) in sorted(aligns[buf].items())]
        body = Allocate(datas[declared], declared.dtype, allocation_extents(declared), IntImm("bool", 1),
                        body, annotations=annotations, scope=declared.storage_scope)
    reads = substitute_regions(block.reads, replace)
    writes = substitute_regions(block.writes, replace)
    return attrs.evolve(block, body=body, alloc_buffers=(), reads=reads, writes=writes)


def allocation_extents(buf: Buffer) -> list:
    """The extents of the allocation that holds ``buf``: its shape, or, for
    a buffer with strides, room for its furthest element. TVM's form
    ``[shape[0], strides[0]]`` where that is enough (row-major strides, as
    storage_align pads them), else the one extent the strides span."""
    if not buf.strides:
        return list(buf.shape)
    if any(isinstance(d, IntImm) and d.value == 0 for d in buf.shape):
        return [IntImm(buf.shape[0].dtype, 0)]
    span = flat_size(buf)
    first = [buf.shape[0], buf.strides[0]]
    if all(isinstance(e, IntImm) for e in (*first, span)) and first[0].value * first[1].value >= span.value:
        return first
    if isinstance(span, IntImm):
        return [span]
    # a symbolic size may be 0, where the span formula goes below 0
    return [Max(span, IntImm(span.dtype, 0))]


#: the annotation storage_align puts on a block and lowering on an allocation
DIM_ALIGN = "buffer_dim_align"


def _dim_aligns(block: Block) -> dict[Buffer, dict[int, tuple[int, int]]]:
    """``buffer -> {axis: (factor, offset)}`` from the ``buffer_dim_align``
    annotations of the blocks under ``block`` on the buffers it allocates."""
    from ..rewrites.storage import dim_aligns

    mine = set(block.alloc_buffers)
    out: dict[Buffer, dict[int, tuple[int, int]]] = {}
    for n in walk(block.body):
        if isinstance(n, Block) and DIM_ALIGN in n.annotations:
            for index, axis, factor, offset in dim_aligns(n) or ():
                if 0 <= index < len(n.writes) and n.writes[index].buffer in mine and factor > 0:
                    out.setdefault(n.writes[index].buffer, {})[axis] = (factor, offset)
    return out


def allocation_aligns(alloc: Allocate) -> dict[int, tuple[int, int]]:
    """``{axis: (factor, offset)}`` from an allocation's ``buffer_dim_align``."""
    return {int(a): (int(f), int(o)) for a, f, o in alloc.annotations.get(DIM_ALIGN, ())}


def aligned_strides(shape, aligns: dict[int, tuple[int, int]]) -> list:
    """Row-major strides of ``shape`` with the stride of each dimension in
    ``aligns`` (axis -> (factor, offset)) padded up to ``k * factor + offset``,
    the padding carried into the dimensions outside it (TVM's rule)."""
    dt = shape[0].dtype if len(shape) else IntImm("int32", 0).dtype
    strides = [None] * len(shape)
    stride = IntImm(dt, 1)
    for dim in reversed(range(len(shape))):
        if dim in aligns:
            factor, offset = aligns[dim]
            f, o = IntImm(dt, factor), IntImm(dt, offset)
            stride = stride + FloorMod(f + o - FloorMod(stride, f), f)
            stride = _fold(stride)
        strides[dim] = stride
        stride = _fold(stride * shape[dim])
    return strides


def _fold(e):
    from ..analysis.arith import simplify_expr

    return simplify_expr(e)


def substitute_regions(regions, replace):
    """``regions`` with the buffers of ``replace`` swapped in."""
    return [substitute(r, None, replace) for r in regions]


def _mentions(stmt, buffers) -> bool:
    return any(isinstance(n, Buffer) and n in buffers for n in walk(stmt))


__all__ = ["lower_allocations", "lower_allocations_func", "aligned_strides", "allocation_aligns",
           "allocation_extents", "DIM_ALIGN"]
