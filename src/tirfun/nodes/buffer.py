"""Buffers, ranges and buffer regions."""

from __future__ import annotations

from attrs import field
from pyrsistent import PVector

from ..errors import NodeError
from .base import Node, node, pure_converter, to_pvector
from .dtype import DataType
from .expr import BufferLoad, IntImm, PrimExpr, Var, check_identifier, to_expr, to_expr_vector


def _check_int_exprs(kind: str):
    def check(self, attribute, values):
        for v in values:
            if not v.dtype.is_index:
                raise NodeError(f"{kind} {attribute.name} must be scalar integers, got {v!r}: {v.dtype}")
    return check


@pure_converter(PrimExpr, type(None))
def _optional_expr(value):
    return None if value is None else to_expr(value)


@node
class Buffer(Node):
    """A multi-dimensional array: name, shape, element dtype and storage.

    ``A[i, j]`` builds a :class:`BufferLoad`; ``A[i, 0:4]`` builds a
    :class:`BufferRegion`. ``data`` is the pointer variable the buffer views,
    set only in lowered code where several buffers can share one allocation.
    """

    name: str = field(validator=lambda _s, _a, v: check_identifier("buffer", v))
    shape: PVector = field(converter=to_expr_vector, validator=_check_int_exprs("buffer"))
    dtype: DataType = field(default="float32", converter=DataType)
    strides: PVector = field(default=(), converter=to_expr_vector, validator=_check_int_exprs("buffer"))
    elem_offset: PrimExpr | None = field(default=None, converter=_optional_expr)
    storage_scope: str = field(default="global")
    data: Var | None = field(default=None)
    data_alignment: int = field(default=64)
    offset_factor: int = field(default=0)
    axis_separators: PVector = field(default=(), converter=to_pvector)
    #: TVM's buffer type: "default", or "auto" (auto-broadcast: a dimension
    #: of extent 1 has stride 0, so one buffer matches broadcast arguments)
    buffer_type: str = field(default="default")

    def __attrs_post_init__(self):
        if self.buffer_type not in ("default", "auto"):
            raise NodeError(f"buffer {self.name}: buffer_type must be 'default' or 'auto', "
                            f"got {self.buffer_type!r}")
        if not isinstance(self.storage_scope, str):
            raise NodeError(f"buffer {self.name}: scope must be a string")
        if self.data is not None and not self.data.dtype.is_handle:
            raise NodeError(f"buffer {self.name}: data must be a handle variable")
        if self.axis_separators:
            _check_separators(self)

    def scope(self) -> str:
        """The storage scope, as in TVM (``"global"``, ``"shared"``, ``"local"``...)."""
        return self.storage_scope

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __iter__(self):
        # indexing builds a load for any index, so Python's fallback
        # iteration through __getitem__ would never end: a buffer given
        # where a list is expected must be an error, not a hang
        raise NodeError(f"buffer {self.name} is not a sequence: index it (B[i, j]) or slice it (B[0:4, j]); "
                        "a list of its elements was expected here")

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(isinstance(k, slice) for k in key):
            region = []
            for dim, k in zip(self.shape, key):
                if isinstance(k, slice):
                    if k.step not in (None, 1):
                        raise NodeError("buffer slices take no step")
                    start = to_expr(0 if k.start is None else k.start)
                    stop = dim if k.stop is None else to_expr(k.stop)
                    region.append(Range.from_min_extent(start, stop - start))
                else:
                    region.append(Range.from_min_extent(to_expr(k), 1))
            if len(key) != len(self.shape):
                raise NodeError(f"buffer {self.name} has {len(self.shape)} dimensions, "
                                f"sliced with {len(key)}")
            return BufferRegion(self, region)
        return BufferLoad(self, list(key))

    def __call__(self, *indices):
        """``A(i, j)``, te's spelling of ``A[i, j]``."""
        return BufferLoad(self, list(indices))

    # -- TVM's Buffer methods (tirfun.tir.buffer_methods says what each does)
    #: the bits of an access mask, as TVM's ``Buffer.READ`` and ``Buffer.WRITE``
    READ = 1
    WRITE = 2

    def vload(self, begin, dtype=None, predicate=None):
        """The load of ``dtype`` (a vector along the last axis) at ``begin``."""
        from ..tir.buffer_methods import vload
        return vload(self, begin, dtype, predicate)

    def vstore(self, begin, value, predicate=None):
        """The store of ``value`` (a vector along the last axis) at ``begin``."""
        from ..tir.buffer_methods import vstore
        return vstore(self, begin, value, predicate)

    def access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0, extent=None):
        """``T.tvm_access_ptr`` into the buffer's data, as TVM's."""
        from ..tir.buffer_methods import access_ptr
        return access_ptr(self, access_mask, ptr_type, content_lanes, offset, extent)

    def offset_of(self, indices):
        """The physical index of ``self[indices]`` per physical axis."""
        from ..tir.buffer_methods import offset_of
        return offset_of(self, indices)

    def get_flattened_buffer(self):
        """This buffer with one axis per physical axis, over the same data."""
        from ..tir.buffer_methods import get_flattened_buffer
        return get_flattened_buffer(self)


def _check_separators(buf: Buffer) -> None:
    """As TVM checks them: every physical axis holds at least zero logical
    axes, so the separators are non-decreasing and within 0..ndim."""
    seps = [getattr(s, "value", s) for s in buf.axis_separators]
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in seps):
        raise NodeError(f"buffer {buf.name}: axis separators must be integers, got {seps}")
    if any(a > b for a, b in zip(seps, seps[1:])):
        raise NodeError(f"buffer {buf.name}: axis separators must be in increasing order, got {seps}")
    if seps[0] < 0 or seps[-1] > len(buf.shape):
        raise NodeError(f"buffer {buf.name}: axis separators must lie within 0..{len(buf.shape)} "
                        f"(its dimensions), got {seps}")


def _same_int_dtypes(self):
    if not self.min.dtype.is_integer or not self.extent.dtype.is_integer:
        raise NodeError(f"a range needs integer bounds, got {self.min.dtype} and {self.extent.dtype}")


@node
class Range(Node):
    """``[min, min + extent)``.

    Unlike TVM's ``Range(begin, end)``, the fields are min and extent; use
    :meth:`from_min_extent` (TVM's name) or :meth:`from_begin_end` to be explicit.
    """

    min: PrimExpr = field(converter=to_expr)
    extent: PrimExpr = field(converter=to_expr)

    def __attrs_post_init__(self):
        _same_int_dtypes(self)

    @staticmethod
    def from_min_extent(min, extent) -> "Range":
        return Range(min, extent)

    @staticmethod
    def from_begin_end(begin, end) -> "Range":
        begin = to_expr(begin)
        return Range(begin, to_expr(end) - begin)


@node
class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension."""

    buffer: Buffer
    region: PVector = field(converter=to_pvector)

    def __attrs_post_init__(self):
        if len(self.region) != len(self.buffer.shape):
            raise NodeError(f"a region of buffer {self.buffer.name} needs {len(self.buffer.shape)} "
                            f"ranges, got {len(self.region)}")

    @staticmethod
    def full(buffer: Buffer) -> "BufferRegion":
        """The whole buffer."""
        return BufferRegion(buffer, [Range(IntImm(d.dtype, 0), d) for d in buffer.shape])


@node
class MatchBufferRegion(Node):
    """Inside a block: ``buffer`` views the region ``source``."""

    buffer: Buffer
    source: BufferRegion


__all__ = ["Buffer", "Range", "BufferRegion", "MatchBufferRegion"]
