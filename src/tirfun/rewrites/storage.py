"""Storage of intermediate buffers: set_scope, storage_align,
unsafe_set_dtype and set_axis_separator.

Each names a buffer by a block and the index of one of the block's write
regions (``set_axis_separator`` also takes read regions), as TVM does, and
changes the buffer where it is allocated: every use of it below the
allocating block sees the new buffer. Only a buffer allocated with
``T.alloc_buffer`` can change (a parameter's layout, scope and dtype belong
to the caller).
"""

from __future__ import annotations

import attrs
from pyrsistent import PVector

from ..analysis.mentions import mentions_any, names_in
from ..analysis.traversal import Path, map_children, stmt_children, walk_stmts
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, DataType, FloatImm, IntImm, Range, SeqStmt, Stmt,
    StringImm, IterVar, Var,
)
from ..nodes.base import freeze_value, with_fields
from .base import Checks, Outcome, Rewrite, register
from .buffer_swap import replaced_along, swap_buffer
from .checks import describe, resolve_block, resolve_site
from .errors import (
    BufferIndexOutOfRangeError, BufferIsSubregionError, InvalidArgumentError, InvalidAxisSeparatorError,
    NonAllocatedBufferError, StorageAlignAxisOutOfRangeError,
    StorageAlignInvalidAnnotationError, StorageAlignInvalidFactorError,
)
from .index import remember
from .refs import as_block_ref
from .scopes import newly_shared_tags, check_per_thread_writes, check_storage_scope, valid_scope
from .serialize import py_value

#: the block annotation storage_align writes, as TVM names it
DIM_ALIGN = "buffer_dim_align"


def indexed_buffer(chk: Checks, ref, block: Block, realize, buffer_index, kind: str = "write") -> Buffer | None:
    """The buffer of the block's ``buffer_index``-th write (or read) region."""
    regions = block.writes if kind == "write" else block.reads
    if isinstance(buffer_index, bool) or not isinstance(buffer_index, int):
        chk.stop(InvalidArgumentError, describe(ref),
                 f"buffer_index must be an int, got {buffer_index!r}")
    if not 0 <= buffer_index < len(regions):
        chk.stop(BufferIndexOutOfRangeError, describe(ref),
                 f"it has {len(regions)} {kind} region(s), so buffer_index must be in "
                 f"[0, {len(regions)}), got {buffer_index}", realize)
    return regions[buffer_index].buffer


def find_definition(site, block_path: Path, buffer: Buffer):
    """Where ``buffer``, used by the block at ``block_path``, is defined:
    (path of the allocating block, None), (None, the path of the block
    matching it) for a match_buffer view, or (None, None) for a parameter."""
    return _definition(_along(site.func, block_path), block_path, buffer)


def _along(func, path: Path) -> list:
    """The nodes down ``path`` from ``func``: the k-th is the node at
    ``path[:k]``, ``func`` first, the node at ``path`` last."""
    node = func
    out = [node]
    for name, index in path:
        value = getattr(node, name)
        node = value if index is None else value[index]
        out.append(node)
    return out


def _definition(nodes: list, block_path: Path, buffer: Buffer):
    """:func:`find_definition` from the nodes down the block's path
    (:func:`_along`): the innermost block defining ``buffer`` decides."""
    for k in range(len(nodes) - 1, -1, -1):
        node = nodes[k]
        if isinstance(node, Block):
            if buffer in node.alloc_buffers:
                return block_path[:k], None
            if node.match_buffers and any(m.buffer == buffer for m in node.match_buffers):
                return None, block_path[:k]
    return None, None


def _alloc_site(chk: Checks, site, block_path: Path, buffer: Buffer, ref, nodes: list | None = None) -> Path:
    """The path of the block that allocates ``buffer``, the block itself or
    one above it; NonAllocatedBufferError when it is a parameter or a
    match_buffer view. ``nodes``: those down the block's path, when the
    caller has them (:func:`_along`)."""
    if nodes is None:
        nodes = _along(site.func, block_path)
    alloc, _ = _definition(nodes, block_path, buffer)
    if alloc is None:
        chk.stop(NonAllocatedBufferError, describe(ref),
                 f"buffer {buffer.name} is not allocated by a block (it is a function parameter or a "
                 "match_buffer view); only an alloc_buffer can change")
    return alloc


def buffer_views(block: Block, buffer: Buffer, items: dict | None = None, index=None,
           block_path: Path | None = None, sources: dict | None = None) -> list[Buffer]:
    """The match_buffer views of ``buffer`` below ``block``, views of views
    included, outermost first. Only blocks declare views, so only
    statements are walked, and only those that name one of the buffers.
    ``items``, when given, receives for each sequence walked (by identity)
    the positions of its items that name one of them: a view is used only
    inside the block declaring it, so these are the items that name the
    buffer or any of its views, which :func:`_replace_buffers` then visits
    without asking the others again. With the function's ``index`` and the
    block's path, the positions in a sequence come from the blocks the index
    knows to mention the buffers, where it can tell, instead of from asking
    every item of a long sequence. ``sources``, when given, receives each
    view's source buffer."""
    found = [buffer]
    stack = [(block, block_path)]
    while stack:  # pre-order, as a view of a view comes below the view
        n, path = stack.pop()
        kind = type(n)
        if kind is SeqStmt:
            names = {b.name for b in found} | {b.data.name for b in found if b.data is not None}
            chosen = None if index is None or path is None else index.items_naming(path, names)
            if chosen is None:
                chosen = [i for i, item in enumerate(n.seq) if not names.isdisjoint(names_in(item))]
            if items is not None:
                items[id(n)] = chosen
            stack.extend((n.seq[i], None if path is None else path + (("seq", i),)) for i in reversed(chosen))
            continue
        if n is not block and not mentions_any(n, found):
            continue  # names none of them: no view of them below
        if kind is Block:
            for m in n.match_buffers:
                if m.source.buffer in found and m.buffer not in found:
                    found.append(m.buffer)
                    if sources is not None:
                        sources[m.buffer] = m.source.buffer
        stack.extend(reversed([(child, None if path is None else path + (step,))
                               for step, child in stmt_children(n)]))
    return found[1:]


def views_mapping(buffer: Buffer, new: Buffer, views: list, sources: dict) -> dict:
    """``{buffer: new}`` and each view of ``buffer`` that
    :func:`buffer_views` found (``views``, outermost first, with their
    ``sources``) with the axis separators TVM's ``set_axis_separator`` gives
    it (:func:`view_separators`)."""
    mapping = {buffer: new}
    for view in views:
        mapping[view] = view_separators(view, mapping[sources[view]])
    return mapping


def view_separators(view: Buffer, source: Buffer) -> Buffer:
    """``view``, a match_buffer view of ``source`` (as ``set_axis_separator``
    left it), with the axis separators TVM gives it: its source's, where it
    has as many dimensions, else as many zeros (TVM warns that these may be
    wrong; a 0-d view of one element has no axis to separate, so they
    change nothing there)."""
    seps = list(source.axis_separators)
    if len(view.shape) != len(source.shape):
        seps = [0] * len(seps)
    return with_fields(view, axis_separators=seps)


#: the path of the function's root block
_ROOT_BLOCK: Path = (("body", None), ("block", None))


#: expression nodes that hold no other node: nothing to replace inside
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _replace_buffers(root, mapping: dict, access=None, items: dict | None = None):
    """``root`` with the buffers of ``mapping`` replaced. Statements that
    name none of them are kept as they are (their kept names answer that),
    expression leaves and buffers are not entered, and a sequence rebuilds
    only the items that change; ``items`` (from :func:`buffer_views`) tells which
    items of a sequence name them, where known. ``access(node, visit)``,
    when given, may rebuild a node itself (``visit`` replacing below it),
    or return None."""
    names = {b.name for b in mapping} | {b.data.name for b in mapping if b.data is not None}
    get = mapping.get

    def visit(n):
        kind = type(n)
        if kind in _LEAVES:
            return n
        if kind is Buffer:
            return get(n, n)
        if kind is Range and type(n.min) in _LEAVES and type(n.extent) in _LEAVES:
            return n  # the common range of constants and variables
        if kind is IterVar and type(n.dom.min) in _LEAVES and type(n.dom.extent) in _LEAVES:
            return n
        if kind is BufferLoad and n.buffer not in mapping and n.predicate is None \
                and all(type(i) in _LEAVES for i in n.indices):
            return n  # another buffer, at variables and constants
        if kind is BufferRegion and n.buffer not in mapping \
                and all(type(r.min) in _LEAVES and type(r.extent) in _LEAVES for r in n.region):
            return n
        if isinstance(n, Stmt):
            if names.isdisjoint(names_in(n)):
                return n
            if kind is SeqStmt:
                out, seq = n, n.seq
                chosen = None if items is None else items.get(id(n))
                for i in range(len(seq)) if chosen is None else chosen:
                    item = seq[i]
                    new = visit(item)
                    if new is not item:
                        out = out.with_item(i, new)
                return out
        if access is not None:
            done = access(n, visit)
            if done is not None:
                return done
        return map_children(n, visit)

    try:
        return visit(root)
    finally:
        visit = None  # noqa: F841  (it refers to itself: a cycle left for the collector)


def _committed(site, path: Path, block: Block):
    """The module with the block at ``path`` of the site's function
    replaced by ``block``, the block swapped by :func:`swap_buffer` or
    given a new annotation: what :func:`~tirfun.rewrites.base.commit`
    gives with the site's index, which either leaves right (neither
    changes a name or a path), the nodes above the block copied
    (:func:`replaced_along`: the block keeps its kind, its iteration
    variables and its dtypes)."""
    func = replaced_along(site.func, path, block)
    remember(func, site.index)
    return site.mod.with_function(site.func_name, func)


@attrs.frozen
class _StoragePlan:
    """What set_scope and unsafe_set_dtype found: the site, the path of the
    block allocating the buffer and that block (None: nothing to change),
    and the buffer."""

    site: object
    alloc_path: Path | None
    alloc_block: Block | None
    buffer: Buffer


def resolve_buffer(chk: Checks, mod, ref, buffer_index, kind: str = "write"):
    """How the storage primitives (and rolling_buffer) name a buffer: the
    site, the block's path, the block, and the buffer of the block's
    ``buffer_index``-th write (or read) region."""
    site, path, nodes, buffer = _resolve_along(chk, mod, ref, buffer_index, kind)
    return site, path, nodes[-1], buffer


def _resolve_along(chk: Checks, mod, ref, buffer_index, kind: str = "write"):
    """:func:`resolve_buffer` with the nodes down the block's path
    (:func:`_along`) in place of the block, the last of them."""
    site = resolve_site(chk, mod, [ref])
    path = resolve_block(chk, site, ref)
    nodes = _along(site.func, path)
    # the realize above the block is what an index out of range points at
    buffer = indexed_buffer(chk, ref, nodes[-1], nodes[-2], buffer_index, kind)
    return site, path, nodes, buffer


def _allocated(chk: Checks, site, path: Path, nodes: list, buffer: Buffer, ref) -> _StoragePlan:
    """The plan that changes ``buffer`` where it is allocated, for the
    block at ``path`` (NonAllocatedBufferError unless a block allocates it)."""
    alloc = _alloc_site(chk, site, path, buffer, ref, nodes)
    return _StoragePlan(site, alloc, nodes[len(alloc)], buffer)


@register
@attrs.frozen
class SetScope(Rewrite):
    """Set the storage scope of the buffer a block writes at ``buffer_index``
    (TVM's ``set_scope``). The buffer changes where it is allocated, and
    every use of it with it; match_buffer views of it take the scope too. A
    buffer already in that scope is left as it is.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buffer_index`` is an int indexing the block's write regions
       (InvalidArgumentError, BufferIndexOutOfRangeError);
    3. ``storage_scope`` is a storage scope TVM knows: ``global``,
       ``shared``, ``warp``, ``local``, a ``wmma.*`` scope and the others
       of TVM's ``StorageScope::Create``, each with an optional tag
       (``shared.dyn``) (InvalidStorageScopeError);
    4. the buffer is allocated by a block, not a parameter or a
       match_buffer view (NonAllocatedBufferError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,))
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        set_scope("B", 0, "local")

        # after
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,), scope="local")
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    C[vi] = B[vi] + T.float32(1)
    """

    primitive = "set_scope"

    block: object = attrs.field(converter=as_block_ref)
    buffer_index: object = 0
    storage_scope: object = "global"

    def plan(self, mod, chk: Checks):
        site, path, nodes, buffer = _resolve_along(chk, mod, self.block, self.buffer_index)
        scope = self.storage_scope
        # the block is described only for the message of an invalid scope
        scope = (scope or "global") if valid_scope(scope) else check_storage_scope(chk, scope, describe(self.block))
        if buffer.storage_scope == scope:
            return _StoragePlan(site, None, None, buffer)
        plan = _allocated(chk, site, path, nodes, buffer, self.block)
        if newly_shared_tags(buffer.storage_scope, scope):
            writers = [p for p, stmt in walk_stmts(site.func) if isinstance(stmt, BlockRealize)
                       and any(r.buffer == buffer for r in stmt.block.writes)]
            check_per_thread_writes(chk, describe(self.block), site.func, writers, buffer,
                                    buffer.storage_scope, scope, f"buffer {buffer.name}")
        return plan

    def build(self, plan) -> Outcome:
        if plan.alloc_path is None:
            return Outcome(plan.site.mod)
        scope = self.storage_scope or "global"
        site = plan.site

        def in_scope(buffer, _source=None):
            return with_fields(buffer, storage_scope=scope)

        # the views of the buffer take the scope too
        block = swap_buffer(plan.alloc_block, plan.buffer, in_scope(plan.buffer), in_scope,
                            index=site.index, path=plan.alloc_path)
        return Outcome(_committed(site, plan.alloc_path, block))

    def python_args(self):
        return [py_value(self.block), f"buffer_index={py_value(self.buffer_index)}",
                f"storage_scope={py_value(self.storage_scope)}"]


def set_scope(block, buffer_index, storage_scope) -> SetScope:
    """The :class:`SetScope` record: ``set_scope("B", 0, "local")``."""
    return SetScope(block, buffer_index, storage_scope)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def dim_aligns(block: Block):
    """The block's ``buffer_dim_align`` annotation as a list of
    ``(buffer_index, axis, factor, offset)`` tuples, or None when it is not
    such a list."""
    value = block.annotations.get(DIM_ALIGN)
    if value is None:
        return []
    if not isinstance(value, (list, tuple, PVector)):
        return None
    out = []
    for item in value:
        if not isinstance(item, (list, tuple, PVector)):
            return None
        item = list(item)
        if len(item) != 4:
            return None
        ints = [getattr(v, "value", v) for v in item]
        if not all(_int(v) for v in ints):
            return None
        out.append(tuple(ints))
    return out


@register
@attrs.frozen
class StorageAlign(Rewrite):
    """Require the stride of dimension ``axis`` of the buffer a block writes
    at ``buffer_index`` to be ``k * factor + offset`` for some ``k`` (TVM's
    ``storage_align``). The requirement is written into the block's
    ``buffer_dim_align`` annotation (a list of ``[buffer_index, axis,
    factor, offset]``, an entry for the same buffer and axis replaced);
    lowering pads the stride of that dimension when it allocates the buffer.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buffer_index`` is an int indexing the block's write regions
       (InvalidArgumentError, BufferIndexOutOfRangeError); ``axis``,
       ``factor`` and ``offset`` are ints (InvalidArgumentError);
    3. ``factor`` is positive (StorageAlignInvalidFactorError);
    4. ``axis`` is in ``[-ndim, ndim)`` (StorageAlignAxisOutOfRangeError);
    5. the buffer is allocated by a block (NonAllocatedBufferError);
    6. an existing ``buffer_dim_align`` annotation of the block is a list of
       4-int lists (StorageAlignInvalidAnnotationError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            B = T.alloc_buffer((4, 4))
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

        # rewrite
        storage_align("B", 0, 0, 8, 1)

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            B = T.alloc_buffer((4, 4))
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.block_attr({"buffer_dim_align": [[0, 0, 8, 1]]})
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
    """

    primitive = "storage_align"

    block: object = attrs.field(converter=as_block_ref)
    buffer_index: object = 0
    axis: object = 0
    factor: object = 1
    offset: object = 0

    def plan(self, mod, chk: Checks):
        site, path, nodes, buffer = _resolve_along(chk, mod, self.block, self.buffer_index)
        block = nodes[-1]
        for name in ("axis", "factor", "offset"):
            if not _int(getattr(self, name)):
                chk.stop(InvalidArgumentError, describe(self.block),
                         f"{name} must be an int, got {getattr(self, name)!r}")
        if self.factor <= 0:
            chk.fail(StorageAlignInvalidFactorError, describe(self.block),
                     f"factor must be positive, got {self.factor}")
        ndim = len(buffer.shape)
        if not -ndim <= self.axis < ndim:
            chk.fail(StorageAlignAxisOutOfRangeError, describe(self.block),
                     f"buffer {buffer.name} has {ndim} dimension(s), so axis must be in "
                     f"[{-ndim}, {ndim}), got {self.axis}")
        chk.checkpoint()
        _alloc_site(chk, site, path, buffer, self.block, nodes)
        aligns = dim_aligns(block)
        if aligns is None:
            chk.stop(StorageAlignInvalidAnnotationError, describe(self.block),
                     f"its {DIM_ALIGN} annotation {block.annotations[DIM_ALIGN]!r} is not a list of "
                     "[buffer_index, axis, factor, offset] int lists", nodes[-2])
        axis = self.axis + ndim if self.axis < 0 else self.axis
        entry = (self.buffer_index, axis, self.factor, self.offset)
        out = [e if e[:2] != entry[:2] else entry for e in aligns]
        if entry not in out:
            out.append(entry)
        return site, path, block, out

    def build(self, plan) -> Outcome:
        site, path, block, aligns = plan
        value = freeze_value([list(e) for e in aligns])
        new = with_fields(block, annotations=block.annotations.set(DIM_ALIGN, value))
        return Outcome(_committed(site, path, new))

    def python_args(self):
        return [py_value(self.block), f"buffer_index={py_value(self.buffer_index)}",
                f"axis={py_value(self.axis)}", f"factor={py_value(self.factor)}",
                f"offset={py_value(self.offset)}"]


def storage_align(block, buffer_index, axis, factor, offset) -> StorageAlign:
    """The :class:`StorageAlign` record: ``storage_align("B", 0, 0, 8, 1)``."""
    return StorageAlign(block, buffer_index, axis, factor, offset)


def _as_dtype(value):
    try:
        return DataType(value)
    except Exception:
        return None


@register
@attrs.frozen
class UnsafeSetDType(Rewrite):
    """Change the element type of the buffer a block writes at
    ``buffer_index`` (TVM's ``unsafe_set_dtype``): every store into it
    casts the value to ``dtype`` and every load from it casts back to the
    old type. Unsafe as in TVM: a narrower type changes the results. A
    buffer already of that type is left as it is.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buffer_index`` is an int indexing the block's write regions
       (InvalidArgumentError, BufferIndexOutOfRangeError);
    3. ``dtype`` is a scalar data type (InvalidArgumentError);
    4. the buffer is allocated by a block (NonAllocatedBufferError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,))
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    C[vi] = B[vi] + T.float32(1)

        # rewrite
        unsafe_set_dtype("B", 0, "float16")

        # after
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,), "float16")
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = T.Cast("float16", A[vi] * T.float32(2))
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    C[vi] = T.Cast("float32", B[vi]) + T.float32(1)
    """

    primitive = "unsafe_set_dtype"

    block: object = attrs.field(converter=as_block_ref)
    buffer_index: object = 0
    dtype: object = "float32"

    def plan(self, mod, chk: Checks):
        site, path, nodes, buffer = _resolve_along(chk, mod, self.block, self.buffer_index)
        dt = _as_dtype(self.dtype) if isinstance(self.dtype, (str, DataType)) else None
        if dt is None or dt.lanes != 1 or dt.is_handle:
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"dtype must name a scalar data type, got {self.dtype!r}")
        if buffer.dtype == dt:
            return _StoragePlan(site, None, None, buffer)
        return _allocated(chk, site, path, nodes, buffer, self.block)

    def build(self, plan) -> Outcome:
        if plan.alloc_path is None:
            return Outcome(plan.site.mod)
        src, tgt = plan.buffer.dtype, DataType(self.dtype)
        site = plan.site

        def retyped(buffer, _source=None):
            return with_fields(buffer, dtype=tgt)

        # a store casts to the new type, a load casts back to the old one;
        # the views of the buffer take the new type too
        block = swap_buffer(plan.alloc_block, plan.buffer, retyped(plan.buffer), retyped,
                            index=site.index, path=plan.alloc_path, cast=(src, tgt))
        return Outcome(_committed(site, plan.alloc_path, block))

    def python_args(self):
        return [py_value(self.block), f"buffer_index={py_value(self.buffer_index)}",
                f"dtype={py_value(str(self.dtype))}"]


def unsafe_set_dtype(block, buffer_index, dtype) -> UnsafeSetDType:
    """The :class:`UnsafeSetDType` record: ``unsafe_set_dtype("B", 0, "float16")``."""
    return UnsafeSetDType(block, buffer_index, dtype)


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


@register
@attrs.frozen
class SetAxisSeparator(Rewrite):
    """Set the axis separators of a buffer the block reads or writes (TVM's
    ``set_axis_separator``): the buffer is then flattened to
    ``len(axis_separators) + 1`` dimensions instead of one, split before each
    separator's axis, for targets with multi-dimensional memory (textures).
    A parameter changes in the function's signature. The meaning of the
    program is unchanged; the CPU build, whose memory is one-dimensional,
    refuses such a buffer with a BuildError, as TVM's LLVM code generation
    does.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. ``buffer_index_type`` is ``"read"`` or ``"write"`` and ``buffer_index``
       an int indexing those regions (InvalidArgumentError,
       BufferIndexOutOfRangeError);
    3. ``axis_separators`` are increasing ints in ``[0, ndim]``
       (InvalidAxisSeparatorError);
    4. the buffer is not a match_buffer view (BufferIsSubregionError); the
       views of it take its separators, as TVM gives them (as many zeros
       where a view has another number of dimensions).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            B = T.alloc_buffer((4, 4))
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

        # rewrite
        set_axis_separator("B", 0, "write", [1])

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            B = T.alloc_buffer((4, 4), axis_separators=[1])
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
    """

    primitive = "set_axis_separator"

    block: object = attrs.field(converter=as_block_ref)
    buffer_index: object = 0
    buffer_index_type: object = "write"
    axis_separators: object = attrs.field(default=(), converter=_as_tuple)

    def plan(self, mod, chk: Checks):
        if self.buffer_index_type not in ("read", "write"):
            resolve_block(chk, resolve_site(chk, mod, [self.block]), self.block)
            chk.stop(InvalidArgumentError, describe(self.block),
                     f"buffer_index_type must be 'read' or 'write', got {self.buffer_index_type!r}")
        site, path, nodes, buffer = _resolve_along(chk, mod, self.block, self.buffer_index, self.buffer_index_type)
        seps = self.axis_separators
        ndim = len(buffer.shape)
        if not isinstance(seps, tuple) or not all(_int(x) for x in seps) or \
                any(not 0 <= x <= ndim for x in seps) or any(a >= b for a, b in zip(seps, seps[1:])):
            chk.stop(InvalidAxisSeparatorError, describe(self.block),
                     f"axis_separators must be increasing ints in [0, {ndim}] for buffer {buffer.name} "
                     f"of {ndim} dimension(s), got {seps!r}")
        alloc, view = _definition(nodes, path, buffer)
        if view is not None:
            chk.stop(BufferIsSubregionError, describe(self.block),
                     f"buffer {buffer.name} is a match_buffer view of a region of another buffer; "
                     "set the separators of the buffer it views", nodes[len(view)])
        return site, alloc, None if alloc is None else nodes[len(alloc)], buffer

    def build(self, plan) -> Outcome:
        site, alloc, alloc_block, buffer = plan
        new = with_fields(buffer, axis_separators=list(self.axis_separators))
        if new == buffer:
            return Outcome(site.mod)
        # its match_buffer views take the separators too, as in TVM
        if alloc is not None:
            block = swap_buffer(alloc_block, buffer, new, view_separators, index=site.index, path=alloc)
            return Outcome(_committed(site, alloc, block))
        # a parameter: the function's buffer map changes too; the index
        # answers for the root block's statements (when there is one)
        rooted = type(site.func.body) is BlockRealize
        func = swap_buffer(site.func, buffer, new, view_separators, index=site.index if rooted else None,
                           path=() if rooted else None)
        remember(func, site.index)
        return Outcome(site.mod.with_function(site.func_name, func))

    def python_args(self):
        return [py_value(self.block), f"buffer=({py_value(self.buffer_index_type)}, "
                f"{py_value(self.buffer_index)})", f"axis_separators={py_value(list(self.axis_separators))}"]


def set_axis_separator(block, buffer_index, buffer_index_type, axis_separators) -> SetAxisSeparator:
    """The :class:`SetAxisSeparator` record: ``set_axis_separator("B", 0, "write", [1])``."""
    return SetAxisSeparator(block, buffer_index, buffer_index_type, axis_separators)


__all__ = ["SetAxisSeparator", "set_axis_separator", "SetScope", "set_scope", "StorageAlign", "storage_align",
           "UnsafeSetDType", "unsafe_set_dtype", "valid_scope", "dim_aligns", "DIM_ALIGN"]

