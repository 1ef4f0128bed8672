"""Region hints: annotate_buffer_access and unsafe_hide_buffer_access.

Both change only what a block declares it reads or writes (``T.reads`` /
``T.writes``), never what it computes: the interpreter and the build read
the body, so the meaning of the program is unchanged. A declared region
that does not cover what the body touches misleads the analyses of later
primitives, which is why TVM calls the second one unsafe.
"""

from __future__ import annotations

import attrs
from pyrsistent import pvector

from ..analysis.arith.iter_map import simplify_index
from ..analysis.traversal import get_at
from ..nodes import Block, BufferRegion, IntImm, PrimExpr, Range
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import describe, is_int_expr, names_defined_at, resolve_block, resolve_site
from .errors import BufferIndexOutOfRangeError, BufTypeError, InvalidIndexError, InvalidRegionError
from .exprs import cast as _cast, uses_any
from .index import derive_regions_index
from .refs import as_block_ref
from .serialize import py_value

_BUF_TYPES = ("read", "write")
_ANNOTATION = {"read": "explicit_read_region", "write": "explicit_write_region"}


def _regions(block: Block, buf_type: str):
    return block.reads if buf_type == "read" else block.writes


def _check_buf_type(chk: Checks, subject: str, buf_type) -> None:
    if buf_type not in _BUF_TYPES:
        chk.stop(BufTypeError, subject, f"the buffer type must be 'read' or 'write', got {buf_type!r}")


def _as_ranges(value):
    """The ranges argument as a tuple of ``(begin, end)`` pairs or single
    expressions (lists become tuples, so the record stays a value)."""
    if isinstance(value, (list, tuple)) or type(value).__name__ == "PVector":
        return tuple(tuple(v) if isinstance(v, (list, tuple)) or type(v).__name__ == "PVector" else v
                     for v in value)
    return value


class _NotIn:
    def __init__(self, names):
        self.names = names

    def __contains__(self, name) -> bool:
        return name not in self.names


@register
@attrs.frozen
class AnnotateBufferAccess(Rewrite):
    """Declare the region a block reads (``buf_type="read"``) or writes
    (``"write"``) of the ``buffer_index``-th buffer of its ``T.reads`` /
    ``T.writes``, and record the index under the block annotation
    ``explicit_read_region`` / ``explicit_write_region`` (a list of
    indices), as TVM does, so that later analyses keep the declared region.

    ``ranges`` has one entry per dimension of the buffer: an expression (the
    single index ``e``, the range ``[e, e + 1)``) or a pair ``(begin, end)``,
    in the block's iteration variables. ``Schedule.annotate_buffer_access``
    takes TVM's ``gen_new_ranges`` function of the iteration variables and
    calls it to make these. The body is not changed: the region is a hint,
    and one that does not cover what the body touches misleads later
    primitives.

    Correct where TVM is not: TVM v0.20 asks for as many ranges as the block
    has iteration variables and builds a region of that many dimensions
    whatever the buffer's; here there must be one per dimension of the
    buffer.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buf_type`` is ``"read"`` or ``"write"`` (BufTypeError);
    3. ``buffer_index`` is an int indexing the block's reads or writes
       (BufferIndexOutOfRangeError);
    4. ``ranges`` has one entry per dimension of the buffer, each an integer
       expression or a pair of them over names defined at the block
       (InvalidRegionError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        annotate_buffer_access("B", 0, "read", [(0, 8), "vj"])

        # after
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[0:8, vj])
                    T.writes(B[vi, vj])
                    T.block_attr({"explicit_read_region": [0]})
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "annotate_buffer_access"

    block: object = attrs.field(converter=as_block_ref)
    buffer_index: object
    buf_type: object
    ranges: object = attrs.field(converter=_as_ranges)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        block: Block = site.at(path)
        subject = describe(self.block)
        _check_buf_type(chk, subject, self.buf_type)
        regions = _regions(block, self.buf_type)
        k = self.buffer_index
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(regions):
            chk.stop(BufferIndexOutOfRangeError, subject,
                     f"buffer_index {k!r} does not index the block's {len(regions)} {self.buf_type} "
                     "region(s)", site.at(path[:-1]))
        buffer = regions[k].buffer
        if not isinstance(self.ranges, tuple) or len(self.ranges) != len(buffer.shape):
            count = len(self.ranges) if isinstance(self.ranges, tuple) else self.ranges
            chk.stop(InvalidRegionError, subject,
                     f"the buffer {buffer.name} has {len(buffer.shape)} dimension(s), so the region needs "
                     f"as many ranges, got {count!r}")
        # the block's own variables and the function's: a region is read
        # where the block is, isolated from the loops around it
        defined = None  # worked out for the first range that is not a constant
        by_name = {iv.var.name: iv.var for iv in block.iter_vars}
        out = []
        for d, entry in enumerate(self.ranges):
            pair = entry if isinstance(entry, tuple) else (entry,)
            exprs = []
            for e in pair:
                e = by_name.get(e, e) if isinstance(e, str) else e
                if isinstance(e, int) and not isinstance(e, bool):
                    e = _const_like(block, e)
                if not is_int_expr(e):
                    chk.stop(InvalidRegionError, subject,
                             f"range {d} of the region is {entry!r}; each is an integer expression or a "
                             "(begin, end) pair of them")
                if defined is None and type(e) is not IntImm:
                    defined = names_defined_at(site, ()) | {iv.var.name for iv in block.iter_vars}
                stray = None if type(e) is IntImm else uses_any(e, _NotIn(defined))
                if stray is not None:
                    chk.stop(InvalidRegionError, subject,
                             f"range {d} of the region uses {stray}, which is not defined at the block")
                exprs.append(e)
            if len(exprs) not in (1, 2):
                chk.stop(InvalidRegionError, subject,
                         f"range {d} of the region has {len(exprs)} values; a range is one index or a "
                         "(begin, end) pair")
            out.append(exprs)
        return site, path, buffer, out

    def build(self, plan) -> Outcome:
        site, path, buffer, entries = plan
        block: Block = site.at(path)
        ranges = []
        for exprs in entries:
            begin = exprs[0]
            if len(exprs) == 1:
                ranges.append(Range(begin, _const_like(block, 1, begin)))
            else:
                end = exprs[1]
                if end.dtype != begin.dtype:
                    end = _cast(end, begin.dtype)
                ranges.append(Range(begin, _extent(begin, end)))
        regions = list(_regions(block, self.buf_type))
        regions[self.buffer_index] = BufferRegion(buffer, ranges)
        key = _ANNOTATION[self.buf_type]
        have = list(block.annotations.get(key, ()))
        if self.buffer_index not in have:
            have.append(self.buffer_index)
        changes = {"reads" if self.buf_type == "read" else "writes": regions,
                   "annotations": block.annotations.set(key, pvector(have))}
        old_region = _regions(block, self.buf_type)[self.buffer_index]
        return Outcome(_commit_regions(site, path, with_fields(block, **changes), [old_region],
                                       [regions[self.buffer_index]]))

    def python_args(self):
        # the recorded ranges are expressions over the block's own variables,
        # so the replayed function ignores its arguments
        body = ", ".join(f"({py_value(e[0])}, {py_value(e[1])})" if isinstance(e, tuple) and len(e) == 2
                         else py_value(e[0] if isinstance(e, tuple) else e) for e in self.ranges)
        return [py_value(self.block), py_value(self.buffer_index), py_value(self.buf_type),
                f"gen_new_ranges=lambda *_: [{body}]"]


def _extent(begin: PrimExpr, end: PrimExpr) -> PrimExpr:
    """``end - begin`` simplified; two constants whose difference fits the
    dtype are subtracted on ints, as folding would."""
    if type(begin) is IntImm and type(end) is IntImm and begin.dtype == end.dtype and not begin.dtype.is_bool:
        low, high = begin.dtype.int_range()
        if low <= end.value - begin.value <= high:
            return IntImm(begin.dtype, end.value - begin.value)
    return simplify_index(end - begin)


def _const_like(block: Block, value: int, like: PrimExpr | None = None):
    dtype = like.dtype if like is not None else (block.iter_vars[0].var.dtype if block.iter_vars else "int32")
    return IntImm(dtype, value)


def annotate_buffer_access(block, buffer_index: int, buf_type: str, ranges) -> AnnotateBufferAccess:
    """The :class:`AnnotateBufferAccess` record:
    ``annotate_buffer_access("B", 0, "read", [(0, 8), "vj"])`` (a string
    names an iteration variable of the block)."""
    return AnnotateBufferAccess(block, buffer_index, buf_type, ranges)


def _commit_regions(site, path, new: Block, dropped, added):
    """Commit the block at ``path`` whose regions changed (``dropped``
    taken out, ``added`` put in): the index keeps every path and name, and
    learns what the block now mentions."""
    rpath = path[:-1]
    old_realize = site.at(rpath)
    return commit(site, path, new,
                  derive=lambda func: derive_regions_index(site.index, old_realize, get_at(func, rpath), dropped,
                                                           added))


@register
@attrs.frozen
class UnsafeHideBufferAccess(Rewrite):
    """Remove regions from what a block declares it reads (``buf_type="read"``)
    or writes (``"write"``): the entries of ``T.reads`` / ``T.writes`` at the
    indices of ``buf_index_array``. The body is unchanged. Unsafe, as in
    TVM: the analyses of later primitives no longer see those accesses (its
    use is to hide the index buffers of sparse computations before
    tensorize).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buf_type`` is ``"read"`` or ``"write"`` (BufTypeError);
    3. every index is an int indexing the block's reads or writes
       (InvalidIndexError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), Idx: T.Buffer((8,), "int32"),
                 B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[Idx[vi]]

        # rewrite
        unsafe_hide_buffer_access("B", "read", [1])

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), Idx: T.Buffer((8,), "int32"),
                 B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[Idx[vi]])
                    T.writes(B[vi])
                    B[vi] = A[Idx[vi]]
    """

    primitive = "unsafe_hide_buffer_access"

    block: object = attrs.field(converter=as_block_ref)
    buf_type: object
    buf_index_array: object = attrs.field(converter=_as_ranges)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        block: Block = site.at(path)
        subject = describe(self.block)
        _check_buf_type(chk, subject, self.buf_type)
        n = len(_regions(block, self.buf_type))
        if not isinstance(self.buf_index_array, tuple):
            chk.stop(InvalidIndexError, subject,
                     f"the buffer indices must be a list of ints, got {self.buf_index_array!r}")
        for k in self.buf_index_array:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n:
                chk.stop(InvalidIndexError, subject,
                         f"the buffer indices must be ints between 0 and {n - 1} for the block's {n} "
                         f"{self.buf_type} region(s), got {k!r}", site.at(path[:-1]))
        return site, path

    def build(self, plan) -> Outcome:
        site, path = plan
        block: Block = site.at(path)
        hidden = set(self.buf_index_array)
        kept = [r for k, r in enumerate(_regions(block, self.buf_type)) if k not in hidden]
        new = with_fields(block, **{"reads" if self.buf_type == "read" else "writes": kept})
        dropped = [r for k, r in enumerate(_regions(block, self.buf_type)) if k in hidden]
        return Outcome(_commit_regions(site, path, new, dropped, []))

    def python_args(self):
        return [py_value(self.block), py_value(self.buf_type), py_value(list(self.buf_index_array))]


def unsafe_hide_buffer_access(block, buf_type: str, buf_index_array) -> UnsafeHideBufferAccess:
    """The :class:`UnsafeHideBufferAccess` record:
    ``unsafe_hide_buffer_access("B", "read", [1])``."""
    return UnsafeHideBufferAccess(block, buf_type, buf_index_array)


__all__ = ["AnnotateBufferAccess", "annotate_buffer_access", "UnsafeHideBufferAccess",
           "unsafe_hide_buffer_access"]
