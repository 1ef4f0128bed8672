"""Methods of buffers in TVMScript: ``A.vload(begin, dtype)`` and
``A.vstore(begin, value)``, as TVM's ``Buffer.vload``/``Buffer.vstore``
define them: a load or store at ``begin`` whose last index becomes a Ramp
when the dtype (or the value) has more lanes than the buffer's elements;
``A.access_ptr(mask, ...)``, TVM's ``Buffer.access_ptr``: the pointer
``T.tvm_access_ptr(T.type_annotation(dtype), A.data, offset, extent, mask)``.
"""

from __future__ import annotations

from ..nodes import BufferLoad, IntImm, PrimExpr, Ramp
from ..tir import op as tir_op
from .parser_args import bind, sig, to_dtype, to_mask
from .parser_values import BufferMethod, SlicedAccess

#: the methods a buffer has in TVMScript
METHODS = ("vload", "vstore", "access_ptr")

_SIGNATURES = {
    "vload": sig("begin", ("dtype", None), ("predicate", None)),
    "vstore": sig("begin", "value", ("predicate", None)),
    "access_ptr": sig("access_mask", ("ptr_type", "handle"), ("content_lanes", 1), ("offset", 0),
                      ("extent", None)),
}

#: TVM's Buffer.READ and Buffer.WRITE
_MASK_BITS = {"r": 1, "w": 2}


def access_ptr(ip, buf, a, name: str):
    """TVM's ``Buffer.access_ptr``: the extent is what lies from ``offset``
    to the end of the buffer unless given, the offset counts from the
    buffer's element offset, and the mask is 1 (read), 2 (write) or 3."""
    if buf.data is None:
        raise ip.fail(a.node("access_mask"), f"{name}: buffer {buf.name} has no data variable",
                      hint="declare it with data=... (or T.decl_buffer) to take its pointer")
    mask = a.access_mask
    if isinstance(mask, str):
        if not mask or any(c not in _MASK_BITS for c in mask):
            raise ip.fail(a.node("access_mask"), f"{name}: the access mask is made of 'r' and "
                          f"'w', got {mask!r}")
        mask = sum({_MASK_BITS[c] for c in mask})
    if isinstance(mask, bool) or not isinstance(mask, int) or not 0 <= mask <= 3:
        raise ip.fail(a.node("access_mask"), f"{name}: the access mask is 'r', 'w', 'rw' or 1..3, "
                      f"got {mask!r}")
    ptr_type = to_dtype(ip, a.ptr_type, a.node("ptr_type"))
    lanes = a.content_lanes
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ip.fail(a.node("content_lanes"), f"{name}: content_lanes is a positive int, "
                      f"got {lanes!r}")
    offset = ip.as_expr(a.offset, a.node("offset"))
    if a.extent is not None:
        extent = ip.as_expr(a.extent, a.node("extent"))
    elif buf.strides and len(buf.strides) == len(buf.shape):
        extent = buf.strides[0] * buf.shape[0] - offset
    else:
        size = IntImm("int32", 1)
        for d in buf.shape:
            size = size * d
        extent = size - offset
    start = offset if buf.elem_offset is None else buf.elem_offset + offset
    dtype = buf.dtype
    if lanes > 1:
        # the pointer counts vectors of ``lanes`` elements. TVM drops
        # ``offset`` here (it divides the buffer's own offset only); the
        # offset is kept, so the pointer is where the caller asked
        if isinstance(start, IntImm) and start.value % lanes:
            raise ip.fail(a.node("offset"), f"{name}: the offset {start.value} is not a whole "
                          f"number of {lanes}-lane vectors")
        dtype = buf.dtype.with_lanes(lanes)
        step = IntImm(start.dtype, lanes)
        start = tir_op.floordiv(start, step)
        if a.extent is None:
            extent = tir_op.floordiv(extent, IntImm(extent.dtype, lanes))
    return tir_op.tvm_access_ptr(dtype, buf.data, start, extent, mask, ptr_type)


def call(ip, method: BufferMethod, node, positional, keywords):
    """Run ``buffer.<method>(...)``."""
    buf = method.buffer
    name = f"{buf.name}.{method.name}"
    a = bind(ip, name, _SIGNATURES[method.name], node, positional, keywords)
    if method.name == "access_ptr":
        return access_ptr(ip, buf, a, name)
    begin = a.begin if isinstance(a.begin, (list, tuple)) else [a.begin]
    indices = [ip._index(v, a.node("begin")) for v in begin]
    if len(indices) != len(buf.shape):
        raise ip.fail(a.node("begin"), f"{name}: buffer {buf.name} has {len(buf.shape)} "
                      f"dimensions but begin has {len(indices)} indices")
    if method.name == "vload":
        dtype = buf.dtype if a.dtype is None else to_dtype(ip, a.dtype, a.node("dtype"))
        lanes = _factor(ip, buf, dtype, a.node("dtype"), name)
        load = BufferLoad(buf, _ramp_last(indices, lanes))
        if a.predicate is None:
            return load
        return BufferLoad(load.buffer, load.indices,
                          to_mask(ip, a.predicate, a.node("predicate"), load.dtype.lanes, name))
    value = a.value
    if isinstance(value, SlicedAccess):
        value = ip.vector_load(value, a.node("value"))
    if not isinstance(value, PrimExpr):
        value = ip.cast_to(value, buf.dtype, a.node("value"))
    lanes = _factor(ip, buf, value.dtype, a.node("value"), name)
    indices = _ramp_last(indices, lanes)
    return ip.store_value(buf, indices, value, a.node("value"), a.predicate, a.node("predicate"))


def _factor(ip, buf, dtype, node, name) -> int:
    if dtype.element_of != buf.dtype.element_of or dtype.lanes % buf.dtype.lanes:
        raise ip.fail(node, f"{name}: {dtype} does not hold elements of buffer {buf.name} "
                      f"({buf.dtype})")
    return dtype.lanes // buf.dtype.lanes


def _ramp_last(indices: list[PrimExpr], lanes: int) -> list[PrimExpr]:
    if lanes == 1 or not indices or indices[-1].dtype.lanes > 1:
        # as TVM's Buffer::vload/vstore: a vector index is taken as it is
        return indices
    last = indices[-1]
    return indices[:-1] + [Ramp(last, IntImm(last.dtype, 1), lanes)]
