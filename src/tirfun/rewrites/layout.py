"""transform_layout: store a buffer in another layout, given by an index map.

The map takes a buffer's indices to the indices of the new layout
(``lambda i, j: (i // 16, j // 16, i % 16, j % 16)`` tiles a matrix); the
buffer takes the shape the map's image spans, and every access to it, in
block bodies and in declared regions, goes through the map. What the
program computes does not change: each element keeps its value, at its new
place. A parameter changes in the function's signature, as in TVM: the
caller then passes the array in the new layout.
"""

from __future__ import annotations

import functools

import attrs

from ..analysis.arith import bound_region, can_prove, detect_iter_map
from ..analysis.arith.iter_map import simplify_index
from ..analysis.arith.terms import int_value
from ..analysis.mentions import plain_arithmetic
from ..analysis.traversal import child_pusher, get_at, replace_at, stmt_nodes, walk
from ..nodes import (
    EQ, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, FloatImm, FloorDiv, FloorMod, For, IntImm,
    PrimExpr, Range, StringImm, Var,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .index_maps import NOP as _NOP, Dims as _Dims, arity as _arity, as_map as _as_map, \
    dims_text as _dims, inverse_of, separators as _separators, trace_index_map
from .checks import describe, resolve_block, resolve_site
from .errors import (
    BufferIsSubregionError, InvalidArgumentError, TransformationIntroducesPaddingError,
    TransformationPaddingExpressionError, TransformationPaddingTypeError, UnsupportedLayoutError,
)
from .exprs import cast as _cast, substitute_expr, var_names
from .refs import as_block_ref
from .serialize import py_value
from .layout_padding import Padding, write_padding
from .storage import _ROOT_BLOCK, _replace_buffers, buffer_views, find_definition, resolve_buffer, views_mapping


def _as_spec(value):
    """``("read" | "write", index)`` as a tuple (a list from JSON too)."""
    if isinstance(value, list) and len(value) == 2:
        return tuple(value)
    return value


def _as_pad(value):
    """A ``tir.IndexMap`` pad value as ``(params, results)``; a list of
    two (from JSON) as a tuple; anything else as it is."""
    from ..tir.index_map import IndexMap

    if isinstance(value, IndexMap):
        return tuple(value.initial_indices), tuple(value.final_indices)
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], (list, tuple)):
        return tuple(value[0]), tuple(value[1])
    return value


@attrs.frozen
class _LayoutPlan:
    site: object
    alloc: object  # the allocating block's path, or None for a parameter
    buffer: Buffer
    new: Buffer
    params: tuple
    results: tuple
    items: dict  # id of a sequence -> the positions of its items naming the buffer
    #: the constant ranges of the variables bound around the buffer's uses (see _var_ranges)
    ranges: dict
    #: the match_buffer views of the buffer, outermost first, and the buffer each views
    views: list
    sources: dict
    #: what writing the padding needs (a layout_padding.Padding), or None
    padding: object = None


def _padded_domain(params, results, dims):
    """``(shape, (inverse, extents, shifts))`` when the map is one to one over
    the domain ``dims`` (a buffer's shape) padded up (each dimension shifted by the constant
    it is read with, ``(i + 1) // 8``, and up to a multiple of the divisors
    of the map): the shape of the box it spans there, its inverse there (a
    function of the new indices), the old extents and the shifts; None
    when it is not."""
    from math import lcm

    from ..analysis.arith.terms import int_value
    from ..nodes import Add, FloorDiv, FloorMod

    extents = [int_value(d) for d in dims]
    if None in extents:
        return None
    # an index read shifted, ``(i + c) // d``, pads before the domain too:
    # the map is read in ``q = i + c``, over [0, extent + c) padded up
    shifts = [0] * len(params)
    for n in (n for e in results for n in walk(e)):
        if isinstance(n, (FloorDiv, FloorMod)) and isinstance(n.a, Add) and isinstance(n.a.a, Var):
            c = int_value(n.a.b)
            k = next((k for k, p in enumerate(params) if p == n.a.a), None)
            if k is not None and c is not None and c > 0:
                if shifts[k] not in (0, c):
                    return None
                shifts[k] = c
    if any(shifts):
        back = {p: p - IntImm(p.dtype, c) for p, c in zip(params, shifts) if c}
        results = [simplify_index(substitute_expr(e, back)) for e in results]
    divisors = [1] * len(params)
    for e in results:
        for n in walk(e):
            if isinstance(n, (FloorDiv, FloorMod)):
                c = int_value(n.b)
                if c is not None and c > 0:
                    for k, p in enumerate(params):
                        if p.name in var_names(n.a):
                            divisors[k] = lcm(divisors[k], c)
    padded = [-(-(ext + c) // d) * d for ext, c, d in zip(extents, shifts, divisors)]
    loops = {p.name: For(p, IntImm(p.dtype, 0), IntImm(p.dtype, e), "serial", _NOP) for p, e in zip(params, padded)}
    sums = detect_iter_map(list(results), loops, "bijective")
    if sums is None or any(not (isinstance(s.base, IntImm) and s.base.value == 0) for s in sums):
        return None
    shape = []
    for total in sums:
        span = 1
        for a in total.args:
            if a.extent is None:
                return None
            span += a.scale * (a.extent - 1)
        shape.append(IntImm(results[len(shape)].dtype, span))
    sums = tuple(sums)
    return shape, (lambda new_vars: inverse_of(sums, params, new_vars), tuple(extents), tuple(shifts))


def _uses_checked(root, buffer: Buffer, items: dict, check) -> dict:
    """Walk the nodes under ``root`` inside statements that name ``buffer``
    (or its pointer): a sequence's items from ``items`` where known, other
    statements asked their kept names; expressions walked whole. Each node
    that may break a rule (an access, a variable of the pointer's name)
    goes to ``check``; the constant ranges of the loop and block variables
    bound on the way are returned (see :func:`_var_ranges`).

    Constants hold nothing to check, nor do variables of other names (a
    variable is the pointer only if it has its name), and ``a + b`` (and
    the like) only its operands: those are passed over without a call, as
    they are most of the nodes; so are the bounds of a range where they
    are constants or variables."""
    from ..analysis.mentions import names_in

    data = buffer.data
    names = {buffer.name} | ({data.name} if data is not None else set())
    pointer = None if data is None else data.name  # no pointer to take: no variable to check
    roles = _ROLES
    ranges: dict = {}
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        kind = type(n)
        role = roles[kind]
        if role == _SKIP:
            continue
        if role == _OPERANDS:
            push(n.a)
            push(n.b)
            continue
        if role == _VAR:
            if n.name == pointer:
                check(n)
            if pointer is None or n.type_annotation is None:
                continue  # nothing below it to check
        elif role == _RANGE:
            # the bounds as the walk would meet them, the extent first,
            # where both are leaves (nearly always)
            lo, ext = n.min, n.extent
            if _is_leaf(lo) and _is_leaf(ext):
                if type(ext) is Var and ext.name == pointer:
                    check(ext)
                if type(lo) is Var and lo.name == pointer:
                    check(lo)
                continue
        elif role == _SEQ:
            chosen = items.get(id(n))
            if chosen is None:
                chosen = [i for i, item in enumerate(n.seq) if not names.isdisjoint(names_in(item))]
            stack.extend(n.seq[i] for i in chosen)
            continue
        else:
            if role & _STMT and names.isdisjoint(names_in(n)):
                continue
            if role & _CHECK:
                check(n)
            elif role & _RANGES:
                _var_ranges(n, ranges)
            if role & _BUFFER:
                continue
        child_pusher(kind)(n, push)
    return ranges


def _is_leaf(e) -> bool:
    """A constant, or a variable with nothing below it."""
    kind = type(e)
    return kind in _CONSTANTS or (kind is Var and e.type_annotation is None)


# what :func:`_uses_checked` does with a node, by its type: pass over it, push
# its two operands, check a variable, pick a sequence's items, or (flags) ask a
# statement's names, check an access, note the ranges a loop or block binds,
# not enter a buffer
_SKIP, _OPERANDS, _VAR, _SEQ, _RANGE = -1, -2, -3, -4, -5
_STMT, _CHECK, _RANGES, _BUFFER = 1, 2, 4, 8


class _Roles(dict):
    """type -> its role in :func:`_uses_checked`, learnt on first sight."""

    def __missing__(self, kind: type) -> int:
        from ..analysis.traversal import OPERAND_NODES
        from ..nodes import SeqStmt, Stmt

        if kind in _CONSTANTS:
            role = _SKIP
        elif kind in OPERAND_NODES:
            role = _OPERANDS
        elif kind is Var:
            role = _VAR
        elif kind is Range:
            role = _RANGE
        elif issubclass(kind, SeqStmt):
            role = _SEQ
        else:
            role = ((_STMT if issubclass(kind, Stmt) else 0)
                    | (_CHECK if issubclass(kind, (Var, BufferLoad, BufferStore)) else 0)
                    | (_RANGES if issubclass(kind, (For, Block)) else 0)
                    | (_BUFFER if issubclass(kind, Buffer) else 0))
        self[kind] = role
        return role


_ROLES = _Roles()


_CONSTANTS = frozenset({IntImm, FloatImm, StringImm})


def _map_indices(params, results, indices, ranges=None) -> list[PrimExpr]:
    """The map applied to ``indices`` (each cast to its parameter's dtype),
    simplified knowing the constant ``ranges`` of the loop and block
    variables (by name), as TVM simplifies them in their context."""
    mapping = {p: _cast(i, p.dtype) for p, i in zip(params, indices)}
    # most uses sit under no loop of one value: nothing to look for then
    units_bound = bool(ranges) and any(lo == hi for lo, hi in ranges.values())
    out = []
    for e in results:
        e = _substituted(e, mapping)
        if units_bound and not isinstance(e, Var):
            # a variable of one value in a compound index is that value
            # (TVM's iterator simplification drops it; a lone one it keeps)
            units = {v: IntImm(v.dtype, ranges[v.name][0]) for v in _vars_in(e)
                     if v.name in ranges and ranges[v.name][0] == ranges[v.name][1]}
            if units:
                e = substitute_expr(e, units)
        out.append(simplify_index(e, ranges))
    return out


def _is_split_term(e: PrimExpr) -> bool:
    """Whether ``e`` is ``p // c`` or ``p % c`` for a variable ``p`` and a
    literal ``c``: with ``p`` itself, what a tiling map's results are."""
    kind = type(e)
    return (kind is FloorDiv or kind is FloorMod) and type(e.a) is Var and type(e.b) is IntImm


def _names_in_result(e: PrimExpr) -> set[str]:
    """``var_names(e)``, read off at once for the results of a tiling map
    (``p``, ``p // c``, ``p % c``), the most common ones."""
    if type(e) is Var:
        return {e.name}
    if _is_split_term(e):
        return {e.a.name}
    return var_names(e)


def _substituted(e: PrimExpr, mapping: dict) -> PrimExpr:
    """``substitute_expr(e, mapping)``, written out for the results of a
    tiling map (``p``, ``p // c``, ``p % c``), the most common ones."""
    if type(e) is Var:
        return mapping.get(e, e)
    if _is_split_term(e):
        a = mapping.get(e.a)
        return e if a is None or a is e.a else with_fields(e, a=a)
    return substitute_expr(e, mapping)


def _vars_in(e) -> list:
    return [n for n in walk(e) if isinstance(n, Var)]


def _var_ranges(node, out: dict) -> None:
    """Add to ``out`` the constant inclusive ranges of the loop or block
    iteration variables that ``node`` binds, by name (names are unique in a
    function, so a variable's range holds wherever it is used). Asked of
    the nodes of :func:`_uses_checked` only: those statements hold the accesses
    of the buffer, so the cost follows the uses, not the function."""
    doms = [(node.loop_var, node.min, node.extent)] if isinstance(node, For) else \
        [(iv.var, iv.dom.min, iv.dom.extent) for iv in node.iter_vars] if isinstance(node, Block) else []
    for var, lo, ext in doms:
        lo, ext = int_value(lo), int_value(ext)
        if lo is not None and ext is not None and ext > 0:
            out[var.name] = (lo, lo + ext - 1)


def _map_region(params, results, region: BufferRegion, new: Buffer, ranges=None, point=None) -> BufferRegion:
    """A declared region of the buffer in the new layout: a point maps to a
    point (through ``point(indices)`` where given, else
    :func:`_map_indices`); a box to the box its image spans (the whole
    dimension where the image is not bounded)."""
    if all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region.region):
        mins = [r.min for r in region.region]
        out = _map_indices(params, results, mins, ranges) if point is None else point(mins)
        return BufferRegion(new, [Range(i, IntImm(i.dtype, 1)) for i in out])
    fresh = [Var(f"{p.name}_relaxed", p.dtype) for p in params]
    dom = {v: Range(_cast(r.min, v.dtype), _cast(r.extent, v.dtype)) for v, r in zip(fresh, region.region)}
    outs = _map_indices(params, results, fresh)
    ranges = []
    for k, iv in enumerate(bound_region([Range(o, IntImm(o.dtype, 1)) for o in outs], dom)):
        dim = new.shape[k]
        if iv.lo is None or iv.hi is None:
            ranges.append(Range(IntImm(dim.dtype, 0), dim))
        else:
            lo = simplify_index(iv.lo)
            ranges.append(Range(lo, simplify_index(iv.hi - lo + IntImm(iv.hi.dtype, 1))))
    return BufferRegion(new, ranges)


@register
@attrs.frozen
class TransformLayout(Rewrite):
    """Store a buffer in the layout an index map gives (TVM's
    ``transform_layout``): the buffer takes the shape of the map's image,
    and every load, store and declared region of it goes through the map.
    The buffer is named by a block that accesses it and ``("read" |
    "write", index)`` of the block's regions. A parameter changes in the
    function's signature.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buffer`` is ``("read" | "write", index)`` of the block's regions
       (InvalidArgumentError, BufferIndexOutOfRangeError);
    3. ``index_map`` is a function of one variable per dimension of the
       buffer returning integer indices, or ``(params, results)``
       (InvalidArgumentError);
    4. the buffer is not a match_buffer view, nor viewed by one unless
       each view is of one element (a 0-d view) or the map is the identity,
       without padding (BufferIsSubregionError), has no explicit strides, offset or axis
       separators, its pointer is not taken and no access to it is a vector
       (UnsupportedLayoutError);
    5. the map takes the buffer's shape one to one onto a box from 0, or
       does so over the shape padded up to multiples of its divisors (each
       index shifted first by the constant it is read with, ``(i + 1) //
       8``) and a ``pad_value`` is given for the elements that are then
       padding (TransformationIntroducesPaddingError), unless
       ``assume_injective_transform`` vouches that it is one to one, as in
       TVM. Over symbolic shapes, a map fusing whole dimensions (``i * n +
       j``, ``j`` in ``[0, n)``) is one to one, and one splitting an index
       by a symbolic divisor (``i // n``, ``i % n``) pads up to its
       multiple;
    6. ``pad_value`` is a number, an expression, or a function of the new
       layout's indices (InvalidArgumentError) giving one value
       (TransformationPaddingExpressionError) of the buffer's element type
       (TransformationPaddingTypeError: a Python int is ``int32`` for a
       float buffer, as in TVM), reading no buffer but the transformed
       one, in its old layout (TransformationPaddingExpressionError).

    The padding holds the pad value as TVM promises (see
    :mod:`.layout_padding`): a producer that writes every element in
    row-major order runs over the new layout instead, writing
    ``T.if_then_else(padding, pad_value, value)``; another producer is
    followed by a block ``buffer_<name>_padding``; a buffer only read (an
    input) gets a block ``buffer_<name>_assumption`` stating with
    ``T.assume`` that the caller's padding holds it.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
            B = T.alloc_buffer((8, 8))
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(8, 8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

        # rewrite
        transform_layout("B", ("write", 0), lambda i, j: (i // 4, j // 4, i % 4, j % 4))

        # after
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
            B = T.alloc_buffer((2, 2, 4, 4))
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi // 4, vj // 4, vi % 4, vj % 4] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(8, 8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi // 4, vj // 4, vi % 4, vj % 4] + T.float32(1)
    """

    primitive = "transform_layout"

    block: object = attrs.field(converter=as_block_ref)
    buffer: object = attrs.field(default=("write", 0), converter=_as_spec)
    index_map: object = attrs.field(default=None, converter=_as_map)
    pad_value: object = attrs.field(default=None, converter=_as_pad)
    assume_injective_transform: object = False

    def plan(self, mod, chk: Checks):
        spec = self.buffer
        if not (isinstance(spec, tuple) and len(spec) == 2 and spec[0] in ("read", "write")
                and isinstance(spec[1], int) and not isinstance(spec[1], bool)):
            resolve_block(chk, resolve_site(chk, mod, [self.block]), self.block)
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"buffer must be ('read' | 'write', index), got {spec!r}")
        if not isinstance(self.assume_injective_transform, bool):
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"assume_injective_transform must be a bool, got {self.assume_injective_transform!r}")
        site, path, block, buffer = resolve_buffer(chk, mod, self.block, spec[1], spec[0])
        params, results, seps = self._check_map(chk, site, buffer)
        alloc, view = find_definition(site, path, buffer)
        if view is not None:
            chk.stop(BufferIsSubregionError, describe(self.block),
                     f"buffer {buffer.name} is a match_buffer view of a region of another buffer; "
                     "transform the layout of the buffer it views", site.at(view))
        top = alloc if alloc is not None else (_ROOT_BLOCK if type(site.func.body) is BlockRealize else None)
        # which items of each sequence name the buffer (from the function's
        # index where it can tell): the checks and the rewrite visit only those
        items: dict = {}
        sources: dict = {}
        views = buffer_views(site.at(top), buffer, items, site.index, top, sources) if top is not None else []
        ranges = self._check_buffer(chk, site.at(top) if top is not None else site.func.body, buffer, items)
        pad = self._check_pad_value(chk, site, buffer, len(results))
        new, padding = self._new_buffer(chk, buffer, params, results)
        if views:
            self._check_views(chk, site.at(top), buffer, params, results, padding)
        if seps:
            # TVM's transform_layout then sets the axis separators too
            new = with_fields(new, axis_separators=list(seps))
        return _LayoutPlan(site, alloc, buffer, new, params, results, items, ranges, views, sources,
                           None if padding is None else Padding(pad, params, *padding))

    def _check_views(self, chk: Checks, root, buffer: Buffer, params, results, padding) -> None:
        """A match_buffer view of the buffer follows the new layout where the
        map is the identity (it then sets axis separators only), or where
        it views one element (a 0-d view, whose source point maps to its new
        place); a view of a larger region would keep the old layout's
        strides, and a padded buffer's writes through a view are not seen
        by the padding."""
        from ..nodes import Block

        identity = tuple(results) == tuple(params)
        for node in stmt_nodes(root):
            if not isinstance(node, Block):
                continue
            for m in node.match_buffers:
                if m.source.buffer != buffer:
                    continue
                point = not m.buffer.shape and all(
                    isinstance(r.extent, IntImm) and r.extent.value == 1 for r in m.source.region)
                if padding is not None or not (identity or point):
                    chk.stop(BufferIsSubregionError, describe(self.block),
                             f"buffer {buffer.name} is viewed by match_buffer {m.buffer.name} in block "
                             f"{node.name_hint!r}, whose view would not follow the new layout (a view of one "
                             "element, as a 0-d buffer, does, as do all views under an identity map "
                             "without padding)")

    def _check_pad_value(self, chk: Checks, site, buffer: Buffer, ndim: int):
        """``pad_value`` as ``(params, expr)``: an expression of the buffer's
        element type of ``ndim`` indices of the new layout, reading no buffer
        but the one transformed; None when not given. A Python number takes
        the buffer's type where it is of its kind (an int for an integer
        buffer), else TVM's default (``int32``, ``float32``), which is then
        refused as another type, as TVM refuses it."""
        from ..nodes import FloatImm, const

        value = self.pad_value
        if value is None:
            return None
        subject = describe(self.block)
        index_dtype = buffer.shape[0].dtype if buffer.shape else "int32"
        if callable(value) and not isinstance(value, type):
            value = trace_index_map(value, _Dims([index_dtype] * ndim))
            if callable(value):
                chk.stop(InvalidArgumentError, subject,
                         f"pad_value must be a function of the {ndim} indices of the new layout, got {value!r}")
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple):
            params, results = value
            if len(results) != 1:
                chk.stop(TransformationPaddingExpressionError, subject,
                         f"pad_value gives {len(results)} values; it must give one")
            if len(params) != ndim or not all(isinstance(p, Var) for p in params):
                chk.stop(InvalidArgumentError, subject,
                         f"pad_value must be a function of the {ndim} indices of the new layout")
            params, expr = tuple(params), results[0]
        else:
            params, expr = (), value
        if isinstance(expr, bool):
            expr = const(expr, "bool")
        elif isinstance(expr, int):
            if buffer.dtype.is_integer and not _fits(expr, buffer.dtype):
                chk.stop(InvalidArgumentError, subject, f"pad_value {expr} is not a value of {buffer.dtype}")
            expr = IntImm(buffer.dtype if buffer.dtype.is_integer else "int32", expr)
        elif isinstance(expr, float):
            expr = FloatImm(buffer.dtype if buffer.dtype.is_float else "float32", expr)
        if not isinstance(expr, PrimExpr):
            chk.stop(InvalidArgumentError, subject,
                     f"pad_value must be a number, an expression or a function of the new indices, got "
                     f"{self.pad_value!r}")
        if expr.dtype != buffer.dtype:
            chk.stop(TransformationPaddingTypeError, subject,
                     f"buffer {buffer.name} has elements of type {buffer.dtype}, but the pad value "
                     f"{expr.script()} is of type {expr.dtype}")
        for n in walk(expr):
            if isinstance(n, BufferLoad) and n.buffer != buffer:
                chk.stop(TransformationPaddingExpressionError, subject,
                         f"the pad value may read only buffer {buffer.name}, which is transformed, but it "
                         f"reads {n.script()}")
        extra = var_names(expr) - {p.name for p in params} - _sizes(site.func)
        if extra:
            chk.stop(InvalidArgumentError, subject,
                     f"the pad value uses {sorted(extra)[0]}, which is neither one of its indices nor a size "
                     "of the function's parameters")
        return params, expr

    def _check_map(self, chk: Checks, site, buffer: Buffer):
        index_map = trace_index_map(self.index_map, buffer)
        seps: list = []
        if isinstance(index_map, tuple) and len(index_map) == 2 and isinstance(index_map[1], tuple):
            results, seps = _separators(index_map[1])
            index_map = (index_map[0], results)
        arity = _arity(index_map)
        if arity is not None and arity != len(buffer.shape):
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"the index map takes {arity} indices, but buffer {buffer.name} has "
                     f"{len(buffer.shape)} dimensions")
        ok = (isinstance(index_map, tuple) and len(index_map) == 2
              and all(isinstance(v, Var) and v.dtype.is_integer for v in index_map[0])
              and all(isinstance(e, PrimExpr) and e.dtype.is_integer and e.dtype.lanes == 1
                      for e in index_map[1]) and index_map[1])
        if not ok:
            chk.stop(InvalidArgumentError, describe(self.block),
                     "the index map must be a function of the buffer's indices returning integer indices, "
                     f"or (params, results), got {index_map!r}")
        params, results = index_map
        if len(params) != len(buffer.shape):
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"the index map takes {len(params)} indices, but buffer {buffer.name} has "
                     f"{len(buffer.shape)} dimensions")
        # besides its own variables, a map may use the function's sizes (the
        # variables of its parameters' shapes, in scope everywhere), asked
        # for only when a result uses another variable (nearly never)
        own = {p.name for p in params}
        sizes = None
        for e in results:
            extra = _names_in_result(e) - own
            if extra and sizes is None:
                sizes = _sizes(site.func)
            extra -= sizes or set()
            if extra:
                chk.stop(InvalidArgumentError, describe(self.block),
                         f"the index map uses {sorted(extra)[0]}, which is neither one of its variables nor "
                         "a size of the function's parameters")
        if any(not 0 < k < len(results) for k in seps) or len(set(seps)) != len(seps):
            chk.stop(InvalidArgumentError, describe(self.block),
                     "IndexMap.AXIS_SEPARATOR may stand only between two results, once in each place")
        return tuple(params), tuple(results), seps

    def _check_buffer(self, chk: Checks, root, buffer: Buffer, items: dict) -> dict:
        """Check the buffer and its uses under ``root``; return the ranges
        of the variables bound around them (see :func:`_var_ranges`), which
        the rewrite simplifies the new indices with: one walk serves both."""
        subject = describe(self.block)
        if buffer.strides or buffer.elem_offset is not None or buffer.axis_separators:
            chk.stop(UnsupportedLayoutError, subject,
                     f"buffer {buffer.name} has explicit strides, an offset or axis separators, which "
                     "the new layout would have to restate")
        data = buffer.data

        def check(node):
            if isinstance(node, Var) and data is not None and node == data:
                chk.stop(UnsupportedLayoutError, subject,
                         f"the pointer of buffer {buffer.name} is taken ({buffer.name}.data), and pointer "
                         "arithmetic follows the old layout")
            if isinstance(node, (BufferLoad, BufferStore)) and node.buffer == buffer and any(
                    i.dtype.lanes != 1 for i in node.indices):
                chk.stop(UnsupportedLayoutError, subject,
                         f"buffer {buffer.name} is accessed as a vector, {node.script()}, which the map "
                         "does not take element by element")

        return _uses_checked(root, buffer, items, check)

    def _new_buffer(self, chk: Checks, buffer: Buffer, params, results) -> Buffer:
        """The buffer in the new layout: the shape the map's image spans over
        the buffer's shape, which must start at 0 and be taken one to one."""
        found = _layout_of(tuple(params), tuple(results), tuple(buffer.shape),
                           self.assume_injective_transform, self.pad_value is not None)
        if isinstance(found, _Refusal):
            chk.stop(TransformationIntroducesPaddingError, describe(self.block),
                     found.before + buffer.name + found.after)
        shape, padding = found
        return with_fields(buffer, shape=shape), padding

    def build(self, plan: _LayoutPlan) -> Outcome:
        site, old, new = plan.site, plan.buffer, plan.new
        params, results = plan.params, plan.results

        # a block's store, its loads and its declared regions mostly name the
        # same element (``Y[vi, vj]``): map each index tuple once
        mapped: dict = {}
        # whether every index rewritten is plain arithmetic, as are the map's
        # results: the map then copies or drops no let and no buffer, and
        # the function binds and mentions the same names as before
        plain = all(map(plain_arithmetic, results))

        def point(indices):
            nonlocal plain
            key = tuple(indices)
            out = mapped.get(key)
            if out is None:
                out = mapped[key] = tuple(_map_indices(params, results, indices, ranges))
                if plain and not all(map(plain_arithmetic, key)):
                    plain = False
            return out

        def access(n, visit):
            nonlocal plain
            kind = type(n)
            if kind is BufferLoad and (n.buffer is old or n.buffer == old):
                indices = point([visit(i) for i in n.indices])
                pred = None if n.predicate is None else visit(n.predicate)
                return BufferLoad(new, indices, pred)
            if kind is BufferStore and (n.buffer is old or n.buffer == old):
                indices = point([visit(i) for i in n.indices])
                pred = None if n.predicate is None else visit(n.predicate)
                return BufferStore(new, visit(n.value), indices, pred)
            if kind is BufferRegion and (n.buffer is old or n.buffer == old):
                bounds = [(visit(r.min), visit(r.extent)) for r in n.region]
                # nearly always nothing inside changes: no copy to make then
                region = n if all(lo is r.min and ext is r.extent for (lo, ext), r in zip(bounds, n.region)) \
                    else BufferRegion(old, [Range(lo, ext) for lo, ext in bounds])
                if plain and not all(plain_arithmetic(r.min) and plain_arithmetic(r.extent) for r in n.region):
                    plain = False
                return _map_region(params, results, region, new, ranges, point)
            return None

        # the match_buffer views of the buffer take its separators, as TVM's
        # set_axis_separator (which its transform_layout calls) gives them
        top = plan.alloc if plan.alloc is not None else (
            _ROOT_BLOCK if type(site.func.body) is BlockRealize else None)
        ranges = plan.ranges
        mapping = views_mapping(old, new, plan.views, plan.sources) if top is not None else {old: new}
        if plan.alloc is not None:
            scope = site.at(plan.alloc)
            items = plan.items
            if plan.padding is not None:
                scope, items = self._pad(plan, scope), None
            block = _replace_buffers(scope, mapping, access, items)
            # kept where no name and no path changed, else derived: the
            # padding adds names, and the shape may bind other size
            # variables than the old one
            index = site.index if self._same_names(plan, plain) else None
            return Outcome(commit(site, plan.alloc, block, index=index))
        from .index import remember

        func, items = site.func, plan.items
        if plan.padding is not None:
            at = _ROOT_BLOCK if type(func.body) is BlockRealize else (("body", None),)
            func, items = replace_at(func, at, self._pad(plan, get_at(func, at))), None
        func = _replace_buffers(func, mapping, access, items)
        if self._same_names(plan, plain):
            remember(func, site.index)  # no name and no path changed (else the index is built anew)
        return Outcome(site.mod.with_function(site.func_name, func))

    @staticmethod
    def _same_names(plan: _LayoutPlan, plain: bool) -> bool:
        """Whether the rewritten function binds and mentions the names the
        old one did, at the same paths, so that its index is the old one:
        no padding was written, the new shape uses the size variables the
        old one did, and the indices rewritten were ``plain`` (see
        :meth:`build`); match_buffer views keep their names, taking axis
        separators only."""
        return plan.padding is None and plain and _shape_names(plan.buffer.shape) == _shape_names(plan.new.shape)

    @staticmethod
    def _pad(plan: _LayoutPlan, scope):
        """``scope`` with the padding's pad value written (or assumed, for
        an input), as TVM does: see :mod:`.layout_padding`."""
        from .name_pool import NamePool
        from .names import fresh_name

        names, blocks = NamePool(plan.site.index.names), set(plan.site.index.blocks)

        def fresh_block(base):
            name = fresh_name(base, blocks)
            blocks.add(name)
            return name

        return write_padding(scope, plan.buffer, plan.new, plan.padding, names.fresh, fresh_block)

    def python_args(self):
        args = [py_value(self.block), f"buffer={py_value(self.buffer)}", f"index_map={py_value(self.index_map)}"]
        if self.pad_value is not None:
            args.append(f"pad_value={py_value(self.pad_value)}")
        if self.assume_injective_transform:
            args.append("assume_injective_transform=True")
        return args


@attrs.frozen
class _Refusal:
    """Why a map does not give a layout: the message around the buffer's
    name (the analysis does not depend on the name)."""

    before: str
    after: str


@functools.lru_cache(maxsize=256)
def _layout_of(params: tuple, results: tuple, dims: tuple, injective: bool, padded: bool):
    """The new layout of a buffer of shape ``dims`` under the map ``params
    -> results``: ``(shape, padding)`` (padding: what writing the pad value
    needs, or None), or a :class:`_Refusal`. ``injective`` is
    ``assume_injective_transform``; ``padded``, whether a pad value is
    given. A pure function of the map and the shape, kept for the next
    buffer of that shape under that map (a schedule giving its operands
    one tiled layout, or one schedule applied to many modules): the
    iterator-map and bound analyses dominate the primitive's cost, and
    a map that only tiles a constant shape needs none of them."""
    tiled = _tiled_shape(params, results, dims)
    if tiled is not None:
        return tiled, None
    return _analysed_layout(params, results, dims, injective, padded)


def _analysed_layout(params: tuple, results: tuple, dims: tuple, injective: bool, padded: bool):
    """:func:`_layout_of` for any map: the bounds of the map's image over
    the shape, and iterator-map detection for whether it is one to one."""
    from .index_maps import symbolic_radix, symbolic_split

    if any(int_value(d) is None for d in dims) or any(
            var_names(e) - {p.name for p in params} for e in results):
        # symbolic: a map fusing whole dimensions is read as mixed
        # radices (TVM's iterator maps), where bounds alone do not know
        # that sizes are not negative
        extents = [_cast(d, p.dtype) for p, d in zip(params, dims)]
        radix = symbolic_radix(results, params, extents)
        if radix is not None:
            return tuple(radix[0]), None
        split = symbolic_split(results, params, extents)
        if split is not None:
            # a split by a symbolic divisor pads up to its multiple
            shape, inverse, exact = split
            if exact or injective:
                return tuple(shape), None
            if not padded:
                return _Refusal(f"the index map does not take the shape {_dims(list(dims))} of buffer ",
                                f" one to one onto the shape {_dims(shape)}: where the divisor does not divide "
                                "the extent, some elements are padding; give a pad_value for them, as TVM "
                                "requires")
            return tuple(shape), (inverse, tuple(int_value(e) if int_value(e) is not None else e for e in extents),
                           (0,) * len(params))
    dom = {p: Range(IntImm(p.dtype, 0), _cast(d, p.dtype)) for p, d in zip(params, dims)}
    shape = []
    for e, iv in zip(results, bound_region([Range(e, IntImm(e.dtype, 1)) for e in results], dom)):
        if iv.lo is None or iv.hi is None or not can_prove(EQ(iv.lo, IntImm(iv.lo.dtype, 0))):
            return _Refusal(f"the index {e.script()} of the map does not run over a range from 0 for buffer ",
                            f" of shape {_dims(list(dims))}")
        shape.append(simplify_index(iv.hi + IntImm(iv.hi.dtype, 1)))
    padding = None
    if not injective:
        loops = {p.name: For(p, IntImm(p.dtype, 0), _cast(d, p.dtype), "serial", _NOP)
                 for p, d in zip(params, dims)}
        sums = detect_iter_map(list(results), loops, "bijective")
        if sums is None or not _fills(sums, shape, dims):
            found = _padded_domain(params, results, dims)
            if found is None or not padded:
                why = ("the map is not one to one even over a padded domain" if found is None else
                       "give a pad_value for them, as TVM requires")
                return _Refusal(f"the index map does not take the shape {_dims(list(dims))} of buffer ",
                                f" one to one onto the shape {_dims(shape)} it spans: some elements would be "
                                f"padding; {why}")
            shape, padding = found
    return tuple(shape), padding


def _tiled_shape(params: tuple, results: tuple, dims: tuple) -> tuple | None:
    """The shape of the new layout, read off the map, where the map only
    reorders the dimensions of a buffer of constant shape ``dims`` and
    splits some of them: each result is a parameter ``p``, or ``p // c``
    or ``p % c`` for a constant ``c > 1`` dividing ``p``'s extent, and each
    parameter is used whole once, or split once into both ``p // c`` and
    ``p % c``. Such a map is one to one onto the box of the extents ``E``,
    ``E // c`` and ``c`` (a tiled layout), which is what the bound and
    iterator-map analyses of :func:`_layout_of` find for it; None for any
    other map (that analysis answers then)."""
    extents = [int_value(d) for d in dims]
    if None in extents or min(extents, default=1) <= 0:
        return None
    position = {id(p): k for k, p in enumerate(params)}
    # per parameter: 0 unused, or the divisor it is split by, or -1 (used whole)
    split = [0] * len(params)
    halves = [0] * len(params)  # bit 1: ``p // c`` seen, bit 2: ``p % c`` seen
    shape = []
    for e in results:
        kind = type(e)
        if kind is Var:
            k = position.get(id(e))
            if k is None or split[k]:
                return None
            split[k] = -1
            shape.append(IntImm(e.dtype, extents[k]))
            continue
        if not _is_split_term(e):
            return None
        k, c = position.get(id(e.a)), e.b.value
        bit = 1 if kind is FloorDiv else 2
        if k is None or c < 2 or extents[k] % c or split[k] not in (0, c) or halves[k] & bit:
            return None
        split[k], halves[k] = c, halves[k] | bit
        shape.append(IntImm(e.dtype, extents[k] // c if kind is FloorDiv else c))
    if any(s == 0 or (s > 0 and h != 3) for s, h in zip(split, halves)):
        return None  # a parameter dropped, or only one half of a split kept
    return tuple(shape)


def _shape_names(shape) -> set[str]:
    """The variables of a shape (none in a constant one, nearly always)."""
    if all(type(d) is IntImm for d in shape):
        return set()
    return set().union(*[var_names(d) for d in shape])


def _sizes(func) -> set[str]:
    """The variables of the function's parameter buffers' shapes, and its
    scalar parameters."""
    out = {p.name for p in func.params if p not in func.buffer_map and not p.dtype.is_handle}
    for buf in func.buffer_map.values():
        for d in buf.shape:
            out |= var_names(d)
    return out


def _fits(value: int, dtype) -> bool:
    """Whether the integer ``value`` is a value of ``dtype``."""
    from ..nodes import const

    try:
        const(value, dtype)
    except Exception:  # a value the dtype cannot hold
        return False
    return True


def _fills(sums, shape, dims) -> bool:
    """Whether the map's image is all of ``shape``. A map the bijective
    iteration-map detection reads is one to one onto the box its outputs
    span; with constant shapes the element counts check that ``shape`` is
    that box and not a loose bound of it."""
    from ..analysis.arith.terms import int_value

    sizes_in = [int_value(d) for d in dims]
    sizes_out = [int_value(d) for d in shape]
    if None in sizes_in or None in sizes_out:
        return True  # symbolic: each output's span is read from its slices exactly
    total_in = total_out = 1
    for v in sizes_in:
        total_in *= v
    for v in sizes_out:
        total_out *= v
    return total_in == total_out


def transform_layout(block, buffer, index_map, pad_value=None, assume_injective_transform=False) -> TransformLayout:
    """The :class:`TransformLayout` record:
    ``transform_layout("B", ("write", 0), lambda i, j: (j, i))``."""
    return TransformLayout(block, buffer, index_map, pad_value, assume_injective_transform)




__all__ = ["TransformLayout", "transform_layout"]
