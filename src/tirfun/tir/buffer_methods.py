"""TVM's ``Buffer`` methods from Python: ``vload``, ``vstore``,
``access_ptr``, ``offset_of`` and ``get_flattened_buffer``, as TVM v0.20
defines them (``src/tir/ir/buffer.cc``). :class:`~tirfun.nodes.Buffer`
calls these; each returns a new node and leaves the buffer as it is.

A buffer without an element offset (tirfun's ``None``) starts at element
0, as TVM's default offset ``0`` does.
"""

from __future__ import annotations

from ..errors import NodeError
from ..nodes import Buffer, BufferLoad, BufferStore, IntImm, PrimExpr, Ramp, to_expr
from ..nodes.dtype import DataType

#: TVM's ``Buffer.READ`` and ``Buffer.WRITE``: the bits of an access mask
READ = 1
WRITE = 2


def _indices(buf: Buffer, begin, what: str) -> list[PrimExpr]:
    begin = [begin] if isinstance(begin, (int, PrimExpr)) else list(begin)
    if len(begin) != len(buf.shape):
        raise NodeError(f"{buf.name}.{what}: buffer {buf.name} has {len(buf.shape)} dimensions, "
                        f"got {len(begin)} indices")
    return [to_expr(i) for i in begin]


def _lanes(buf: Buffer, dtype: DataType, what: str) -> int:
    """How many buffer elements one value of ``dtype`` spans."""
    if dtype.element_of != buf.dtype.element_of or dtype.lanes % buf.dtype.lanes:
        raise NodeError(f"{buf.name}.{what}: cannot access {dtype} in buffer {buf.name} of "
                        f"{buf.dtype}")
    return dtype.lanes // buf.dtype.lanes


def _ramp_last(indices: list[PrimExpr], factor: int) -> list[PrimExpr]:
    # as TVM: a scalar last index becomes a Ramp of ``factor`` lanes
    if factor == 1 or indices[-1].dtype.lanes > 1:
        return indices
    last = indices[-1]
    return indices[:-1] + [Ramp(last, IntImm(last.dtype, 1), factor)]


def vload(buf: Buffer, begin, dtype=None, predicate=None) -> BufferLoad:
    """The value of ``dtype`` (default: the buffer's) stored from ``begin``
    on: a vector dtype loads consecutive elements along the last axis."""
    indices = _indices(buf, begin, "vload")
    dtype = buf.dtype if dtype is None else DataType(dtype)
    return BufferLoad(buf, _ramp_last(indices, _lanes(buf, dtype, "vload")), predicate)


def vstore(buf: Buffer, begin, value, predicate=None) -> BufferStore:
    """Store ``value`` from ``begin`` on (a vector along the last axis)."""
    indices = _indices(buf, begin, "vstore")
    value = to_expr(value)
    return BufferStore(buf, value, _ramp_last(indices, _lanes(buf, value.dtype, "vstore")),
                       predicate)


def _mask(access_mask) -> int:
    if isinstance(access_mask, str):
        bits = {"r": READ, "w": WRITE}
        if any(c not in bits for c in access_mask):
            raise NodeError(f"access_ptr: unknown access mask {access_mask!r} (made of 'r' and 'w')")
        return sum({bits[c] for c in access_mask})
    if isinstance(access_mask, bool) or not isinstance(access_mask, int) or not 0 <= access_mask <= 3:
        raise NodeError(f"access_ptr: the access mask is 'r', 'w', 'rw' or 0..3, got {access_mask!r}")
    return access_mask


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


def _minus(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return a if _is_const(b, 0) else a - b


def _product(dims) -> PrimExpr:
    out: PrimExpr | None = None
    for d in dims:
        out = d if out is None else out * d
    return IntImm("int32", 1) if out is None else out


def access_ptr(buf: Buffer, access_mask, ptr_type="handle", content_lanes: int = 1, offset=0,
               extent=None):
    """``T.tvm_access_ptr``: a pointer into the buffer's data ``offset``
    elements past its element offset, for ``extent`` elements (default:
    to the end of the buffer), read (``"r"``), written (``"w"``) or both."""
    if buf.data is None:
        raise NodeError(f"{buf.name}.access_ptr: buffer {buf.name} has no data variable; "
                        "declare it with data=... to take its pointer")
    from .op import floordiv, tvm_access_ptr

    mask = _mask(access_mask)
    if isinstance(content_lanes, bool) or not isinstance(content_lanes, int) or content_lanes < 1:
        raise NodeError(f"{buf.name}.access_ptr: content_lanes is a positive int, got {content_lanes!r}")
    offset = to_expr(offset)
    if not buf.shape:
        size: PrimExpr = IntImm("int32", 1)
    elif len(buf.strides) == len(buf.shape):
        size = _minus(buf.strides[0] * buf.shape[0], offset)
    else:
        size = _minus(_product(buf.shape), offset)
    start = offset if buf.elem_offset is None else buf.elem_offset + offset
    dtype = buf.dtype
    if content_lanes > 1:
        # the pointer counts vectors: the offset and the extent are in vectors
        dtype = buf.dtype.with_lanes(content_lanes)
        start = floordiv(start, IntImm(start.dtype, content_lanes))
        size = floordiv(size, IntImm(size.dtype, content_lanes))
    if extent is not None:
        size = to_expr(extent)
    return tvm_access_ptr(dtype, buf.data, start, size, mask, ptr_type)


def _groups(buf: Buffer) -> list[list[int]]:
    """The logical axes of each physical axis, as the axis separators cut them."""
    cuts = [s.value if isinstance(s, IntImm) else int(s) for s in buf.axis_separators]
    groups: list[list[int]] = [[]]
    for i in range(len(buf.shape)):
        if len(groups) - 1 < len(cuts) and i == cuts[len(groups) - 1]:
            groups.append([])
        groups[-1].append(i)
    while len(groups) < len(cuts) + 1:
        groups.append([])
    return groups


def offset_of(buf: Buffer, indices) -> list[PrimExpr]:
    """The physical index of ``buf[indices]`` on each physical axis (one,
    unless axis separators cut the buffer), the element offset included,
    simplified."""
    from ..analysis.arith.simplify import simplify_expr

    indices = _indices(buf, indices, "offset_of")
    out = []
    for group in _groups(buf):
        index: PrimExpr | None = None
        for i in group:
            if buf.strides:
                term = indices[i] * buf.strides[i]
                index = term if index is None else index + term
            else:
                index = indices[i] if index is None else index * buf.shape[i] + indices[i]
        out.append(IntImm("int32", 0) if index is None else index)
    if buf.elem_offset is not None and not _is_const(buf.elem_offset, 0):
        out[-1] = out[-1] + buf.elem_offset
    return [simplify_expr(e) for e in out]


def get_flattened_buffer(buf: Buffer) -> Buffer:
    """The buffer with one axis per physical axis (one, unless axis
    separators say more), over the same data; the buffer itself when it is
    already flat."""
    import attrs

    groups = _groups(buf)
    if buf.strides:
        shape = [buf.strides[g[0]] * buf.shape[g[0]] for g in groups if g]
    else:
        shape = [_fold_product([buf.shape[i] for i in g]) for g in groups]
    if len(shape) == len(buf.shape) and not buf.strides:
        return buf
    separators = [IntImm(getattr(s, "dtype", "int32"), k + 1)
                  for k, s in enumerate(buf.axis_separators)]
    return attrs.evolve(buf, shape=shape, strides=[], axis_separators=separators)


def _fold_product(dims) -> PrimExpr:
    """The product of ``dims``, constants folded (an empty product is 1)."""
    const = 1
    rest: PrimExpr | None = None
    for d in dims:
        if isinstance(d, IntImm):
            const *= d.value
        else:
            rest = d if rest is None else rest * d
    dtype = next((d.dtype for d in dims), DataType("int32"))
    if rest is None:
        return IntImm(dtype, const)
    return rest if const == 1 else rest * IntImm(rest.dtype, const)


__all__ = ["READ", "WRITE", "vload", "vstore", "access_ptr", "offset_of", "get_flattened_buffer"]
