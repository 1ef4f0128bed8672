"""Buffer flattening: every access becomes one-dimensional.

``A[i, j]`` on a ``(n, m)`` buffer becomes ``A_1[i * m + j]`` where ``A_1``
is a one-dimensional view of the same memory. For a parameter the view is
declared at the top of the function (``A_1 = T.decl_buffer((n*m,),
data=A)``), the parameter's own buffer staying in ``buffer_map`` for the
argument checks; an allocation is flattened in place. Explicit strides and
``elem_offset`` are honoured.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import transform, walk
from ..errors import BuildError
from ..nodes import (
    Allocate, Block, BlockRealize, Buffer, BufferLoad, BufferStore, DataType, DeclBuffer, IntImm, IRModule, PrimExpr,
    PrimFunc, Var,
)
from ._util import fresh_name, func_names, map_funcs


def flatten_buffers(mod: IRModule) -> IRModule:
    """Flatten every buffer access to one dimension."""
    return map_funcs(mod, flatten_func)


def _is_flat(buf: Buffer) -> bool:
    return len(buf.shape) == 1 and not buf.strides and (
        buf.elem_offset is None or (isinstance(buf.elem_offset, IntImm) and buf.elem_offset.value == 0))


def _index_dtype(buf: Buffer, indices=()) -> DataType:
    """int64 when any size or index is, or when the element count of a
    constant shape does not fit in int32; else int32."""
    dts = [d.dtype for d in buf.shape] + [i.dtype.element_of for i in indices]
    if any(dt.bits == 64 for dt in dts):
        return DataType("int64")
    total = 1
    for d in buf.shape:
        if isinstance(d, IntImm):
            total *= d.value
        else:
            return DataType("int32")
    return DataType("int64") if total >= 2**31 else DataType("int32")


def _cast(e: PrimExpr, dt: DataType) -> PrimExpr:
    target = dt.with_lanes(e.dtype.lanes)
    if e.dtype == target:
        return e
    if isinstance(e, IntImm):
        return IntImm(dt, e.value)
    return e.astype(target)


def _strides(buf: Buffer, dt: DataType) -> list[PrimExpr]:
    if buf.strides:
        return [_cast(s, dt) for s in buf.strides]
    out: list[PrimExpr] = []
    acc: PrimExpr = IntImm(dt, 1)
    for d in reversed(list(buf.shape)):
        out.append(acc)
        acc = acc * _cast(d, dt)
    return list(reversed(out))


def flat_size(buf: Buffer) -> PrimExpr:
    """The number of elements the flattened buffer spans."""
    dt = _index_dtype(buf)
    if not buf.strides:
        total: PrimExpr = IntImm(dt, 1)
        for d in buf.shape:
            total = total * _cast(d, dt)
        return total
    # with strides the extent is the furthest element plus one
    total = IntImm(dt, 1)
    for d, s in zip(buf.shape, _strides(buf, dt)):
        total = total + (_cast(d, dt) - 1) * s
    return total


def flat_index(buf: Buffer, indices) -> PrimExpr:
    """The one-dimensional index of ``buf[indices]``."""
    dt = _index_dtype(buf, indices)
    strides = _strides(buf, dt)
    out: PrimExpr | None = None
    for i, s in zip(indices, strides):
        term = _cast(i, dt)
        if not (isinstance(s, IntImm) and s.value == 1):
            term = term * s
        out = term if out is None else out + term
    if out is None:
        out = IntImm(dt, 0)
    if buf.elem_offset is not None and not (isinstance(buf.elem_offset, IntImm)
                                            and buf.elem_offset.value == 0):
        out = out + _cast(buf.elem_offset, dt)
    return out


def flatten_func(func: PrimFunc) -> PrimFunc:
    """Flatten the buffers of one function."""
    if any(isinstance(n, (Block, BlockRealize)) for n in walk(func.body)):
        raise BuildError("flatten_buffers needs a function without blocks; run lower_blocks first")
    accessed = _accessed_buffers(func.body)
    params = set(func.buffer_map.values())
    if all(_is_flat(b) and (b in params or b.data is not None) for b in accessed) and \
            not any(isinstance(n, Allocate) and len(n.extents) != 1 for n in walk(func.body)):
        return func  # every access is already one-dimensional
    used = func_names(func)
    # a flattened view names the memory of a parameter through the
    # parameter buffer's data pointer, which is given a name if it has none
    param_data: dict[Buffer, Var] = {}
    new_map = {}
    for var, buf in func.buffer_map.items():
        needs_view = buf in accessed and not (_is_flat(buf) and buf.data is None)
        if buf.data is None and needs_view:
            name = fresh_name(f"{buf.name}_data", used)
            used.add(name)
            with_data = attrs.evolve(buf, data=Var(name, "handle"))
        else:
            with_data = buf
        param_data[buf] = with_data.data
        new_map[var] = with_data
    flat: dict[Buffer, Buffer] = {}
    declare: list[Buffer] = []
    for buf in accessed:
        if _is_flat(buf) and buf.data is None and buf in param_data:
            continue  # a one-dimensional parameter is already its own view
        if _is_flat(buf) and buf.data is not None:
            continue
        if buf in param_data:
            name = fresh_name(f"{buf.name}_1", used)
            used.add(name)
            new = Buffer(name, [flat_size(buf)], buf.dtype, data=param_data[buf],
                         storage_scope=buf.storage_scope, data_alignment=buf.data_alignment)
            declare.append(new)
        elif buf.data is not None:
            new = Buffer(buf.name, [flat_size(buf)], buf.dtype, data=buf.data,
                         storage_scope=buf.storage_scope, data_alignment=buf.data_alignment)
        else:
            raise BuildError(f"buffer {buf.name} is used but neither a parameter nor allocated; "
                             "run lower_allocations first")
        flat[buf] = new
    if not flat:
        return func

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer in flat:
            return BufferLoad(flat[n.buffer], [flat_index(n.buffer, n.indices)], n.predicate)
        if isinstance(n, BufferStore) and n.buffer in flat:
            return BufferStore(flat[n.buffer], n.value, [flat_index(n.buffer, n.indices)],
                               n.predicate)
        if isinstance(n, DeclBuffer) and n.buffer in flat:
            return DeclBuffer(flat[n.buffer], n.body)
        if isinstance(n, Allocate) and len(n.extents) != 1:
            total: PrimExpr = IntImm("int32", 1) if not n.extents else n.extents[0]
            for e in list(n.extents)[1:]:
                total = total * e
            return attrs.evolve(n, extents=[total])
        return n

    # pre: keep Buffer nodes themselves untouched (only accesses change)
    body = transform(func.body, post, pre=lambda n: n if isinstance(n, Buffer) else None)
    for new in reversed(declare):
        body = DeclBuffer(new, body)
    return attrs.evolve(func, body=body, buffer_map=new_map)


def _accessed_buffers(body) -> list[Buffer]:
    seen: dict[Buffer, None] = {}
    for n in walk(body):
        if isinstance(n, (BufferLoad, BufferStore)):
            seen.setdefault(n.buffer, None)
        elif isinstance(n, DeclBuffer):
            seen.setdefault(n.buffer, None)
    return list(seen)


__all__ = ["flatten_buffers", "flatten_func", "flat_index", "flat_size"]
