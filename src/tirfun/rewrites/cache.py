"""Caching primitives: cache_read, cache_write, cache_inplace, reindex,
reindex_cache_read and reindex_cache_write.

cache_read and cache_write put a copy stage between a buffer and the
blocks that use it, in a new buffer of another storage scope
(``A_shared``, ``B_local``), as TVM v0.20's ``cache_read_write.cc`` does:

* where the copy goes: inside the lowest loop (or the scope block) that
  holds the buffer's writer and the first block the copy serves, just
  before the part of that loop's body that holds the served block;
* what it copies: the region the writer writes, relaxed over the loops
  between the writer and that place (for an input of the scope: the whole
  buffer);
* the cache has the buffer's shape when the copy sits in a loop, and the
  shape of the copied region (indices rebased) when it sits in the scope
  block and every reader of the buffer is under it, unless the region
  depends on loops around the scope block (a scope inside a loop, as
  loop_partition makes): TVM then indexes the cache with those loops
  inside the copy block, which block isolation forbids here, so the cache
  keeps the buffer's shape.

TVM lets some programs through whose results then change. Two are a
ScheduleError here: a redirected reader that runs before the copy is
filled (CacheStageOrderError), and consumer blocks outside the block's
scope (ConsumerNotInScopeError). A cache_write whose block reads the buffer
before writing it, or may leave elements of the copied region unwritten
(a predicate, a strided or opaque write, a reduction whose init does not
run in every fill), would read or copy back an uninitialised cache: the
cache is then filled from the buffer first, by a stage ``<cache>_fill``
just before the block, and the result keeps its meaning (where the only
gap is a loop that may run no iteration, the copy back runs only where it
runs instead). A predicate that only cuts the iterations a split adds
past the extent leaves nothing unwritten: the guard of a split, of a
split into parts of a run-time extent fused again (``f // q * q + f % q <
n`` reads as ``f < n``), and the outer guard of a split of a split
(``i_0_0 * 8 + i_0_1 < (N + 15) // 16``, which follows from the inner
one). The inner stages
of a composite block count as its writes where they write whole boxes of
the buffer (:mod:`~tirfun.rewrites.stage_writes`).

Under thread bindings a ``shared`` or ``local`` cache filled outside the
kernel that reads it is, as in TVM, not the buffer the kernel sees (each
GPU block or thread has its own): the interpreter's GPU meaning then reads
unfilled elements. As in TVM's GPU schedules, move the copy into the kernel
(compute_at) before running such a program.

reindex, cache_inplace, reindex_cache_read and reindex_cache_write follow
TVM's cache_read_write.cc too; each docstring says where they refuse what
TVM lets through.
"""

from __future__ import annotations

import functools
import itertools
import math

import attrs
from pyrsistent import pvector

from ..analysis.access import access_regions
from ..analysis.equality import structural_equal
from ..analysis.arith import (
    bound_region, can_prove, detect_iter_map, index_at_most, is_affine_binding, region_covers,
)
from ..analysis.arith.iter_map import distinct_index_vars, simplify_index
from ..analysis.arith.int_set import Interval, cover_range, eval_interval, intersect
from ..analysis.arith.linear_bound import surely_at_most
from ..analysis.arith.linear import affine_form, fold_add, fold_sub, simplify_affine
from ..analysis.arith.simplify import conjoin, is_true as _is_true, simplify_expr
from ..analysis.arith.terms import int_value
from ..analysis.mentions import mentions, names_in, plain_arithmetic
from ..analysis.threads import launch_of
from ..analysis.traversal import (
    OPERAND_NODES, Path, ancestors, child_pusher, get_at, iter_children, map_children, nodes_along, replace_at,
    stmt_children, stmt_nodes, transform_plain, walk, walk_stmts,
)
from ..nodes import (
    EQ, GE, GT, LE, LT, Add, Allocate, AllocateConst, And, Block, BlockRealize, Broadcast, Buffer, BufferLoad,
    BufferRealize, BufferRegion, BufferStore, Call, DeclBuffer, Div, FloatImm, FloorDiv, FloorMod, For, ForKind,
    IfThenElse, IntImm, IterVar, IterVarType, LetStmt, MatchBufferRegion, Max, Min, Mod, Mul, PrimExpr, Ramp, Range, SeqStmt,
    Stmt, StringImm, Sub, Var, While, const,
)
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .buffer_swap import copier, rebuilt_above
from .checks import (
    child_blocks, describe, loops_above, names_bound_between, resolve_block, resolve_site, scope_path,
    statements_outside_blocks,
)
from .dataflow import (
    box_points, consumed_region, general_cover_violation, loop_domains, produced_region, within_buffer,
)
from .exprs import cast as _cast, find_nodes, substitute_expr, uses_any, var_names
from .errors import (
    BufferIndexOutOfRangeError, BufferNotAccessedError, CacheStageOrderError, CacheStageScopeError,
    CacheWritePartialError,
    CacheWriteReadBeforeWriteError, ConsumerNotInScopeError, IndexMapCollisionError, InvalidArgumentError,
    InvalidBufferAccessError,
    NoScopeBlockError, NotLeafBlockError, NotReadWriteError, NotRegionCoverError, NotSinglePointAccessError,
    NotSingleWriteBlockError, OpaqueAccessError, ReindexCacheReadWriteNotMatchError, ReindexIndexVariableError,
    ReindexNotChainError, ReindexOutOfBoundsError, ReindexReadWrittenError, ReindexUnsafeIndexError,
    ThreadOverlapError, ViewScopeMismatchError,
)
from .index import _kept_for, binds_let, derive_insert_index, derive_scope_index, leaf_binds_lets
from .names import fresh_name, suffixed
from .rebind import append_predicate
from .redirect import accesses_of, expression_redirect, redirect_accesses, same_buffer
from .refs import BlockRef, as_block_ref
from .body_walk import BodyWalk
from .buffer_names import accesses_named
from .scopes import (
    STORAGE_RANKS, check_copy_per_thread, check_per_thread_writes, check_shared_allocation, check_storage_scope,
)
from .serialize import py_value
from .stage_writes import (
    cuts_a_prefix, dense_over, loads_unconditionally, stage_of, stores_unconditionally, whole_write, written_indices,
)

# ------------------------------------------------------------------ arguments

def access_buffer(chk: Checks, block: Block, realize: BlockRealize, index, kind: str) -> Buffer:
    """The buffer ``index`` names among the block's reads (``kind="read"``)
    or writes: a position, a Buffer, or a buffer name, as TVM's Python API
    takes them."""
    regions = block.reads if kind == "read" else block.writes
    what = f"block {block.name_hint!r}"
    if isinstance(index, Buffer) or isinstance(index, str):
        name = index if isinstance(index, str) else index.name
        hits = accesses_named(block, index, kind)
        if hits:
            return hits[0][2]
        elsewhere = bool(accesses_named(block, index, "write" if kind == "read" else "read"))
        why = (f"it is a {'write' if kind == 'read' else 'read'} buffer of the block, not a {kind} buffer"
               if elsewhere else f"the block does not {kind} it")
        chk.stop(BufferNotAccessedError, what, f"buffer {name} is not a {kind} buffer of the block: {why}",
                 realize)
    if not isinstance(index, int) or isinstance(index, bool):
        chk.stop(InvalidArgumentError, what,
                 f"the {kind} buffer index must be an int, a Buffer or a buffer name, got {index!r}")
    if not 0 <= index < len(regions):
        chk.stop(BufferIndexOutOfRangeError, what,
                 f"the block has {len(regions)} {kind} regions, so {kind}_buffer_index {index} is out of "
                 f"range", realize)
    return regions[index].buffer


def _as_refs(value):
    if value is None:
        return None
    if isinstance(value, (str, BlockRef)):
        return (as_block_ref(value),)
    if isinstance(value, (list, tuple)) or type(value).__name__ == "PVector":
        return tuple(as_block_ref(v) for v in value)
    return value


# ------------------------------------------------------------------ the scope

@attrs.frozen
class _Scope:
    """The block a primitive works in: its path, the block, and the child
    blocks that may use the buffer the primitive caches, in program order
    (path of the BlockRealize, the realize). Only the children that mention
    the buffer are listed: the others neither read nor write it, so no
    question a caching primitive asks about its scope concerns them."""

    path: Path
    block: Block
    children: tuple
    #: the buffer the children were chosen for, and for each sequence met on
    #: the way (its path) the positions of its items that mention it
    buf: Buffer | None = None
    items: dict = attrs.field(factory=dict)


def _scope_of(chk: Checks, site, block_path: Path, subject: str, buf: Buffer | None = None) -> _Scope:
    """The scope of the block at ``block_path``, with its children that may
    use ``buf`` (none listed when ``buf`` is None)."""
    spath = scope_path(site, block_path[:-1])
    if spath is None:
        chk.stop(NoScopeBlockError, subject,
                 "the block has no enclosing block to allocate the cache in (it is the root block, or "
                 "the function has no root block)")
    sblock = site.at(spath)
    if buf is None:
        return _Scope(spath, sblock, ())
    decl = None
    if buf not in sblock.alloc_buffers and buf not in site.func.buffer_map.values():
        decl = _declared_inside(sblock, buf)
    elif site.index.loose or not (type(site.func.body) is BlockRealize and site.func.body.block is sblock):
        # a T.realize of it (fresh storage for the buffer, as the
        # interpreter reads TVM's legacy statement) names a buffer outside
        # blocks: in the root's body the index counts it
        decl = _declared_inside(sblock, buf, (BufferRealize,))
    if decl is not None:
        how = ("realized by a T.realize" if type(decl) is BufferRealize
               else f"a view of the T.allocate of {decl.buffer_var.name}" if type(decl) is Allocate
               else f"a view of the T.allocate_const of {decl.buffer_var.name}" if type(decl) is AllocateConst
               else "declared by a T.decl_buffer")
        chk.stop(CacheStageScopeError, subject,
                 f"buffer {buf.name} is {how} inside block {sblock.name_hint!r}, below where a cache stage "
                 "goes, which could not name it", decl)
    items: dict = {}
    return _Scope(spath, sblock, _children_using(sblock, spath, buf, items, site.index), buf, items)


def _declared_inside(block: Block, buf: Buffer, kinds=(DeclBuffer, BufferRealize, Allocate, AllocateConst)):
    """The ``T.decl_buffer`` (or ``T.realize``, or the ``T.allocate`` or
    ``T.allocate_const`` of its pointer, which an undeclared ``T.Buffer``
    over it uses) of ``buf`` in the block's body below the declarations at
    its top (where stages go), if any."""
    top = _under_decls(block.body)
    for node in stmt_nodes(top):
        kind = type(node)
        if kind not in kinds:
            continue
        if kind is Allocate or kind is AllocateConst:
            if buf.data is not None and node.buffer_var == buf.data:
                return node
        elif same_buffer(node.buffer, buf):
            return node
    return None


def _children_using(block: Block, path: Path, buf: Buffer, items: dict, index=None) -> tuple:
    """The BlockRealizes under the block's body, not inside another block,
    that mention ``buf``, in program order (TVM's child blocks, less those
    that cannot touch the buffer). Statements that do not mention it are
    not entered. The items of a sequence that mention it come from the
    function's ``index`` where it can tell (the blocks it knows to mention
    the buffer), else each item is asked from its kept names
    (:func:`names_in`). ``items`` receives, for each sequence met, the
    positions of the items that mention the buffer."""
    name = buf.name
    data = buf.data.name if buf.data is not None else None
    wanted = {name} if data is None else {name, data}
    out = []
    stack = [(path + (("body", None),), block.body)]
    while stack:
        p, node = stack.pop()
        kind = type(node)
        if kind is SeqStmt:
            found = None if index is None else index.items_naming(p, wanted)
            if found is None:
                found = [i for i, item in enumerate(node.seq) if not wanted.isdisjoint(names_in(item))]
            items[p] = found
            stack.extend(reversed([(p + (("seq", i),), node.seq[i]) for i in found]))
            continue
        if not mentions(node, buf):
            continue
        if kind is BlockRealize:
            out.append((p, node))
            continue
        if kind is For:
            stack.append((p + (("body", None),), node.body))  # its one statement child
            continue
        stack.extend(reversed([(p + (step,), child) for step, child in stmt_children(node)]))
    return tuple(out)


def _reads(block: Block, buf: Buffer) -> bool:
    return _names_buffer(block.reads, buf)


def _writes(block: Block, buf: Buffer) -> bool:
    return _names_buffer(block.writes, buf)


def _names_buffer(regions, buf: Buffer) -> bool:
    """Whether one of ``regions`` is of ``buf`` (:func:`same_buffer`,
    written out: the plans ask it of every child block, several times)."""
    name = buf.name
    for r in regions:
        b = r.buffer
        if b is buf or (b.name == name and b == buf):
            return True
    return False


def _region_of(regions, buf: Buffer) -> BufferRegion | None:
    for r in regions:
        if same_buffer(r.buffer, buf):
            return r
    return None


def _all_read_before(site, scope, buf: Buffer, consumers, writer: int) -> bool:
    """Whether the blocks a cache_read would redirect (the given consumers,
    or every reader) are all children of the scope before the one writing
    ``buf``, and some are, and none shares a loop of more than one
    iteration with the writer (in a loop they share, a reader runs after
    the writer's earlier iterations; a loop of one iteration, as
    cache_inplace leaves around its stages, has none)."""
    readers = [k for k, (_, r) in enumerate(scope.children)
               if _reads(r.block, buf) and not _writes(r.block, buf)
               and (not consumers or r.block.name_hint in consumers)]
    if not readers or not all(k < writer for k in readers):
        return False
    wpath = scope.children[writer][0]
    body = scope.path + (("body", None),)
    for k in readers:
        common = _lca([scope.children[k][0], wpath])
        # below the scope's body, a step other than a sequence's item
        # enters a statement around both: only a loop runs them repeatedly
        for j in range(len(body), len(common)):
            if common[j][0] != "seq" and _repeats(site.at(common[:j])):
                return False
    return True


def _repeats(stmt: Stmt) -> bool:
    """Whether ``stmt`` may run its body more than once: a loop not of
    extent 1."""
    if isinstance(stmt, While):
        return True
    return isinstance(stmt, For) and not (isinstance(stmt.extent, IntImm) and stmt.extent.value == 1)


def _only_writer(chk: Checks, scope: _Scope, buf: Buffer) -> int | None:
    """The position among the scope's children of the only block writing
    ``buf`` (None: no block of the scope writes it)."""
    writers = [k for k, (_, r) in enumerate(scope.children) if _writes(r.block, buf)]
    if len(writers) > 1:
        chk.stop(NotSingleWriteBlockError, f"buffer {buf.name}",
                 f"the buffer is expected to be written by a single block of the scope, but "
                 f"{len(writers)} blocks write it", *[scope.children[k][1] for k in writers])
    return writers[0] if writers else None


def _union_region(a: list[Range], b: list[Range], buf: Buffer, dom) -> list[Range]:
    """A region holding both ``a`` and ``b``: dimension by dimension the
    one that holds the other where that is proven, else the whole
    dimension (copying more of the buffer than is read is always sound)."""
    out = []
    for x, y, dim in zip(a, b, buf.shape):
        if structural_equal(x, y):
            out.append(x)
            continue
        if not x.min.dtype == x.extent.dtype == y.min.dtype == y.extent.dtype == dim.dtype:
            out.append(Range(IntImm(dim.dtype, 0), dim))
            continue
        x_end, y_end = fold_add(x.min, x.extent), fold_add(y.min, y.extent)
        if _at_most(x.min, y.min, dom) and _at_most(y_end, x_end, dom):
            out.append(x)
        elif _at_most(y.min, x.min, dom) and _at_most(x_end, y_end, dom):
            out.append(y)
        else:
            out.append(Range(IntImm(dim.dtype, 0), dim))
    return out


def _last_writer(chk: Checks, scope: _Scope, buf: Buffer, realize) -> int | None:
    """The position among the scope's children of the last block writing
    ``buf``, where the others run wholly before it: they share no loop with
    it (NotSingleWriteBlockError otherwise). TVM asks for one writer, which
    tirfun's own stages may make two (the fill of a cache_write of an
    update, pad_einsum's copy in of an output); a cache of the last writer
    is then sound, as every element the others write is in the buffer
    before it runs, and its copy back comes after them all."""
    writers = [k for k, (_, r) in enumerate(scope.children) if _writes(r.block, buf)]
    if len(writers) < 2:
        return writers[0] if writers else None
    last = writers[-1]
    lpath, lrealize = scope.children[last]
    body = scope.path + (("body", None),)
    if lrealize.block is not realize.block:
        chk.stop(NotSingleWriteBlockError, f"buffer {buf.name}",
                 f"the buffer is expected to be written by a single block of the scope, or by block "
                 f"{realize.block.name_hint!r} after all the others, but {len(writers)} blocks write it and "
                 f"{lrealize.block.name_hint!r} runs last", *[scope.children[k][1] for k in writers])
    for k in writers[:-1]:
        p, r = scope.children[k]
        if not _apart(body, p, lpath):
            chk.stop(NotSingleWriteBlockError, f"buffer {buf.name}",
                     f"blocks {r.block.name_hint!r} and {lrealize.block.name_hint!r} both write the buffer in a "
                     "loop they share: the copy back of the cache would not keep the order of their writes",
                     r, lrealize)
    return last


def _check_consumers_read_what_is_written(chk: Checks, site, scope: _Scope, buf: Buffer, wpath: Path,
                                          wrealize: BlockRealize, consumers: set, subject: str) -> None:
    """The consumers that will read the cache (``consumers``: their names)
    read only elements of ``buf`` that the writer writes in the scope; any
    other element, in the buffer an input value, is nowhere in the cache
    (CacheWritePartialError)."""
    readers = _cache_readers(scope, consumers, buf)
    if not readers:
        return
    # what the writer writes over the whole scope, cut by its predicate (the
    # block writes all of it: the copy back's own requirement)
    written = [Interval.from_range(r) for r in _writer_region(site, buf, wpath, wrealize, scope.path)]
    dom = loop_domains(site, scope.path)
    for cpath, crealize in readers:
        for r in crealize.block.reads:
            if not same_buffer(r.buffer, buf):
                continue
            # an element past the buffer's end is never read (a guarded
            # read, T.if_then_else(v < 15, B[v + 1], ...)): only those
            # inside need the writer, as TVM's region cover takes them
            needed = within_buffer(consumed_region(site, cpath, crealize, r, scope.path), buf)
            if not region_covers([written], needed, dom):
                chk.stop(CacheWritePartialError, subject,
                         f"consumer block {crealize.block.name_hint!r} reads {buf.name}[{_box_text(needed)}], "
                         f"which the block may not write; the cache holds only what it writes", crealize)


def _box_text(box: list) -> str:
    return ", ".join("?" if iv.lo is None or iv.hi is None else
                     (iv.lo.script() if iv.lo == iv.hi else f"{iv.lo.script()}:{(iv.hi + 1).script()}")
                     for iv in box)


def _consumer_set(chk: Checks, site, scope: _Scope, refs, buf: Buffer | None = None,
                  writer: Path | None = None) -> set[str]:
    """The names of the given consumer blocks and of the blocks directly
    under them (TVM's consumer set); the scope's own block may be given,
    for the blocks of the scope. A given block whose regions do not
    name ``buf`` has nothing to redirect and is left out, wherever it is
    (TVM leaves it unchanged); where every given block is, the set is
    empty, and every reader is redirected, as when none is given (TVM
    redirects none and leaves the stage unread: the meaning is the same)."""
    out: set[str] = set()
    for ref in refs or ():
        path = resolve_block(chk, site, ref)
        if buf is not None and not (_reads(site.at(path), buf) or _writes(site.at(path), buf)):
            continue
        # the scope's own block stands for the blocks directly under it,
        # which are the scope's (TVM's consumer set, as for any block)
        if writer is not None and _under(path, writer):
            # inside the block cache_write caches, which is redirected whole
            # (TVM accepts it, and it changes nothing there either)
            continue
        if path != scope.path and scope_path(site, path[:-1]) != scope.path:
            outer = _outer_child(site, scope, path, buf)
            if outer is None:
                chk.stop(ConsumerNotInScopeError, describe(ref),
                         f"the consumer block is not in the scope of block {scope.block.name_hint!r}, where "
                         "the cache is made, nor the only user of the buffer in the block of the scope around "
                         "it", site.at(path[:-1]))
            # a block nested in a child of the scope (the block blockize
            # wrapped) that is all the child does with the buffer: the child
            # is redirected with it, its regions too (TVM redirects the
            # nested block alone and leaves the child's regions naming the
            # buffer it no longer reads)
            out.add(site.at(outer).name_hint)
            out.update(r.block.name_hint for _, r in child_blocks(site.at(outer), outer))
        out.add(ref.name)
        out.update(r.block.name_hint for _, r in child_blocks(site.at(path), path))
    return out


def _outer_child(site, scope: _Scope, path: Path, buf: Buffer | None) -> Path | None:
    """The path of the child block of the scope that holds the block at
    ``path`` (nested deeper), where every access of ``buf`` in the child is
    in that block; None otherwise (not under the scope, or the child
    touches the buffer elsewhere too)."""
    if buf is None:
        return None
    outer = path
    while True:
        up = scope_path(site, outer[:-1])
        if up is None or up == scope.path:
            break
        outer = up
    if up != scope.path:
        return None

    def accesses(node) -> int:
        return sum(1 for n in walk(node) if type(n) in (BufferLoad, BufferStore) and n.buffer == buf)

    child: Block = site.at(outer)
    inner: Block = site.at(path)
    total = accesses(child.body) + (0 if child.init is None else accesses(child.init))
    return outer if total and total == accesses(inner) else None


# ------------------------------------------------------------------ regions

def _under(path: Path, top: Path) -> bool:
    return len(path) > len(top) and path[:len(top)] == top


def _bound(dims, dom: dict, bindings: dict | None = None) -> list[Interval]:
    """:func:`bound_region` of ``dims`` (a BufferRegion or Ranges) over
    ``dom`` (Var -> Range, or the For loop of the variable): its answer
    computed on Python integers where it is made of constants and of
    variables not relaxed (:func:`_constant_box`), else asked of the
    region analysis."""
    box = _constant_box(dims.region if isinstance(dims, BufferRegion) else dims, dom, bindings)
    if box is not None:
        return box
    ranges = {v: r if isinstance(r, Range) else Range(r.min, r.extent) for v, r in dom.items()}
    return bound_region(dims, ranges, bindings)


def _constant_box(dims, dom: dict, bindings: dict | None) -> list[Interval] | None:
    """What :func:`bound_region` answers for ``dims`` (one Range per
    dimension) when every end comes out a constant, or a variable that is
    not relaxed (a block's region at its own iteration variables, read
    in the loops bound to them: ``[i, i + extent - 1]``), or None where it
    may not (then the analysis is asked).

    Caching asks bound inference of block regions relaxed over loops of
    constant ranges, where every index is a sum of loop variables scaled by
    constants: there interval evaluation folds each step to an integer
    literal, and the same steps on Python integers give the same literals
    without building and simplifying expressions. Anything else (a
    variable left symbolic, a division, a cast, a product of two varying
    terms, a sub-expression that does not vary, mixed dtypes, a value
    outside the dtype) is left to the analysis, whose answer then holds
    expressions this evaluation does not build."""
    out = []
    for dim in dims:
        lo_e, ext = dim.min, dim.extent
        dt = lo_e.dtype
        limits = dt.int_range()
        if limits is None or not dt.is_integer or type(ext) is not IntImm or ext.dtype != dt:
            return None
        if type(lo_e) is Var:
            at = bindings.get(lo_e, lo_e) if bindings else lo_e
            rng = dom.get(at) if type(at) is Var else None
            if rng is None:
                fixed = _variable_dim(lo_e, ext.value, dt, dom, bindings)
                if fixed is not None:
                    out.append(fixed)
                    continue
            else:
                ends = _relaxed_var_dim(at, rng, ext.value, dt, limits)
                if ends is not None:
                    out.append(Interval(IntImm(dt, ends[0]), IntImm(dt, ends[1])))
                    continue
        found = _constant_interval(lo_e, dt, limits, dom, bindings)
        if found is None:
            return None
        lo, hi, varies = found
        # the upper end is ``min + extent - 1``, folded before evaluation: a
        # literal for a literal min, else a sum that varies with it
        if not varies and type(lo_e) is not IntImm:
            return None
        top = hi + ext.value
        hi = top - 1
        if not (limits[0] <= top <= limits[1] and limits[0] <= hi <= limits[1]
                and limits[0] <= lo + ext.value <= limits[1] and limits[0] <= lo - 1 + ext.value <= limits[1]):
            return None
        out.append(Interval(IntImm(dt, lo), IntImm(dt, hi)))
    return out


def _relaxed_var_dim(at: Var, rng, extent: int, dt, limits) -> tuple | None:
    """The ends :func:`_constant_box` finds for a dimension ``[var, var +
    extent)`` whose variable is, or is bound to, ``at``, relaxed over its
    domain ``rng`` (a Range or a loop): where that domain is made of
    literals of ``dt`` (the commonest dimension of a block's region),
    ``(lo, hi)`` as integers, worked out in one step; None where it is
    not, or a step leaves the dtype (the general steps then answer)."""
    first, count = rng.min, rng.extent
    if at.dtype != dt:
        return None
    if type(first) is not IntImm or type(count) is not IntImm or first.dtype != dt or count.dtype != dt:
        return None
    lo = first.value
    top = lo + count.value
    hi = top + extent - 2
    # every sum the general steps form on the way stays inside the dtype
    sums = (top, top - 1, hi + 1, hi, lo + extent, lo - 1 + extent)
    if min(sums) < limits[0] or max(sums) > limits[1]:
        return None
    return lo, hi


def _variable_dim(var: Var, extent: int, dt, dom: dict, bindings: dict | None) -> Interval | None:
    """The interval :func:`bound_region` gives a dimension ``[var, var +
    extent)`` whose variable (or the variable it is bound to) is not
    relaxed: that variable, to itself plus ``extent - 1`` as the
    simplifier writes the sum. None for anything else."""
    at = bindings.get(var, var) if bindings else var
    if type(at) is not Var or at.dtype != dt or extent < 0 or at in dom:
        return None
    if extent == 1:
        return Interval(at, at)
    return Interval(at, Add(at, IntImm(dt, extent - 1)) if extent > 1 else Sub(at, IntImm(dt, 1)))


def _constant_interval(e, dt, limits, dom: dict, bindings: dict | None):
    """``(lo, hi, varies)``: the interval of ``e`` as :func:`bound_region`
    evaluates it (bindings substituted, the variables of ``dom`` relaxed),
    when each step folds to integer literals of ``dt``; ``varies`` says
    whether a relaxed variable occurs in it. None otherwise."""
    if e.dtype != dt:
        return None
    kind = type(e)
    if kind is IntImm:
        return e.value, e.value, False
    if kind is Var:
        if bindings:
            value = bindings.get(e)
            if value is not None:
                # a bound value is not substituted into again
                return _constant_interval(value, dt, limits, dom, None)
        rng = dom.get(e)
        if rng is None or type(rng.min) is not IntImm or type(rng.extent) is not IntImm \
                or rng.min.dtype != dt or rng.extent.dtype != dt:
            return None
        lo = rng.min.value
        top = lo + rng.extent.value
        if not (limits[0] <= top <= limits[1] and limits[0] <= top - 1 <= limits[1]):
            return None
        return lo, top - 1, True
    if kind is Add or kind is Sub or kind is Mul:
        a = _constant_interval(e.a, dt, limits, dom, bindings)
        if a is None:
            return None
        b = _constant_interval(e.b, dt, limits, dom, bindings)
        if b is None or not (a[2] or b[2]):
            # nothing varies: the analysis keeps the expression as written
            return None
        if kind is Add:
            lo, hi = a[0] + b[0], a[1] + b[1]
        elif kind is Sub:
            lo, hi = a[0] - b[1], a[1] - b[0]
        else:
            if a[0] == a[1]:
                a, b = b, a
            if b[0] != b[1]:
                return None  # two varying factors: the analysis gives up
            k = b[0]
            lo, hi = (a[0] * k, a[1] * k) if k >= 0 else (a[1] * k, a[0] * k)
        if not (limits[0] <= lo <= limits[1] and limits[0] <= hi <= limits[1]):
            return None
        return lo, hi, True
    return None


def _loops(site, path: Path, memo: dict | None) -> list:
    """:func:`loops_above` the statement at ``path``, kept in a plan's
    ``memo`` (when given) for the other questions the plan asks of the
    same block."""
    if memo is None:
        return loops_above(site, path)
    key = ("loops", path)
    found = memo.get(key)
    if found is None:
        found = memo[key] = loops_above(site, path)
    return found


def _relaxed(site, region: BufferRegion, realize_path: Path, realize: BlockRealize, top: Path,
             memo: dict | None = None) -> list[Interval]:
    """The region (declared in the block's iteration variables) relaxed over
    the loops between the block and ``top`` (TVM's RelaxBufferRegion).
    ``memo``, one plan's, keeps the answers by the region and the loops
    relaxed (alive for the whole plan), as the region cover check and the
    copied region ask the same of the writer."""
    loops = [loop for p, loop in _loops(site, realize_path, memo) if _under(p, top)]
    key = (id(region), id(realize), tuple(map(id, loops)))
    found = None if memo is None else memo.get(key)
    if found is None:
        bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        # the loops themselves serve as their ranges (a min and an extent):
        # Ranges are built only if the analysis is asked
        found = _bound(region, {loop.loop_var: loop for loop in loops}, bindings)
        if memo is not None:
            memo[key] = found
    return list(found)


def _conjuncts(e: PrimExpr) -> list[PrimExpr]:
    if isinstance(e, And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    if isinstance(e, IntImm) and e.value == 1:
        return []
    return [e]


def _predicate_bounds(region: BufferRegion, realize: BlockRealize, relaxed=None) -> tuple[dict, list]:
    """The predicate's conjuncts ``index < bound`` on a dimension of the
    region (dimension -> exclusive bounds, as TVM's region analysis uses the
    predicate), and the conjuncts of any other form.

    Given the names of the loops the region is relaxed over (``relaxed``),
    a conjunct ``index + delta < b`` with ``delta`` free of them bounds the
    index by ``b - delta`` (the split guard of a tile inside a block of
    rows, ``i_1_0 * 3 + i_1_1 < 8`` for the row ``i_0 * 8 + i_1_0 * 3 +
    i_1_1``)."""
    conjuncts = _conjuncts(realize.predicate)
    if not conjuncts:
        return {}, []  # no predicate: the indices are not asked
    indices = written_indices(region, realize)
    bounds, others = {}, []
    for c in conjuncts:
        lhs = rhs = None
        if isinstance(c, LT):
            lhs, rhs = c.a, c.b
        elif isinstance(c, GT):
            lhs, rhs = c.b, c.a
        elif isinstance(c, LE):
            lhs, rhs = c.a, fold_add(c.b, IntImm(c.b.dtype, 1))
        elif isinstance(c, GE):
            lhs, rhs = c.b, fold_add(c.a, IntImm(c.a.dtype, 1))
        dim = None
        if lhs is not None and lhs.dtype.is_integer:
            # (a split by a size fused again guards f // q * q + f % q, which is f)
            lhs = simplify_index(lhs) if find_nodes(lhs, (FloorMod,)) else simplify_affine(lhs)
            # (given the relaxed loops, a second bound of a dimension joins
            # the first: a tile's guard within its block of rows, and the
            # block's guard within the rows)
            dim = next((k for k, i in enumerate(indices) if i == lhs and (relaxed or k not in bounds)), None)
            if dim is None and relaxed:
                for k, i in enumerate(indices):
                    if i.dtype != lhs.dtype or uses_any(i, relaxed) is None:
                        continue
                    delta = simplify_affine(Sub(lhs, i))
                    if uses_any(delta, relaxed) is None:
                        dim, rhs = k, simplify_affine(Sub(rhs, delta))
                        break
        if dim is None:
            others.append(c)
        else:
            bounds.setdefault(dim, []).append(rhs)
    return bounds, others


def _implied_outer_guard(c: PrimExpr, conds: list, dom: dict) -> bool:
    """Whether ``c``, ``x < (n + k - 1) // k`` for a constant ``k``, follows
    from another of ``conds``, ``x * k + r < n`` with ``r`` at least 0 over
    the loops' domains ``dom``: then ``x * k < n``, so ``x`` is below
    ``n / k`` and below its ceiling. A split into parts of a split guards
    both (``(i_0_0 * 8 + i_0_1) * 16 + i_1 < N`` and ``i_0_0 * 8 + i_0_1 <
    (N + 15) // 16``); the second never skips what the first keeps."""
    if type(c) is not LT or type(c.b) is not FloorDiv or not c.a.dtype.is_integer:
        return False
    k = int_value(c.b.b)
    if k is None or k < 1:
        return False
    size = simplify_index(Sub(c.b.a, IntImm(c.b.a.dtype, k - 1)))
    for other in conds:
        if other is c or type(other) is not LT or other.a.dtype != c.a.dtype:
            continue
        if simplify_index(other.b) != size:
            continue
        rest = simplify_index(Sub(other.a, Mul(c.a, IntImm(c.a.dtype, k))))
        if can_prove(GE(rest, IntImm(rest.dtype, 0)), dom):
            return True
    return False


def _writer_region(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, loc: Path,
                   memo: dict | None = None, *, cut: bool = True) -> list[Range]:
    """What the writer writes, relaxed below ``loc``, cut by its predicate
    (unless ``cut`` is False) and clamped to the buffer.

    cache_write copies the region back, so it must not reach elements the
    predicate leaves unwritten; cache_read copies it in for readers that may
    read elements the writer skips (they keep the buffer's earlier values),
    so it takes the region before the cut, as TVM does."""
    region = _region_of(wrealize.block.writes, buf)
    intervals = _relaxed(site, region, wpath, wrealize, loc, memo)
    below = {loop.loop_var.name for p, loop in _loops(site, wpath, memo) if _under(p, loc)}
    bounds, _ = _predicate_bounds(region, wrealize, below) if cut else ({}, [])
    if not bounds and _literally_inside(intervals, buf):
        return _clamped(intervals, buf, {})  # nothing to prove: the domains are not asked
    dom = _outer_dom(site, wpath, loc, memo)
    for dim, ends in bounds.items():
        relaxed_hi = intervals[dim].hi  # each bound is asked of the relaxed end, before any cut
        for bound in ends:
            iv = intervals[dim]
            if iv.hi is None or bound.dtype != iv.hi.dtype:
                continue
            last = fold_sub(bound, IntImm(bound.dtype, 1))
            if not _at_most(relaxed_hi, last, dom):
                # where the bound is the lesser end (a split into parts runs
                # past the extent it is cut to), it is the end, without a min
                lesser = iv.lo is not None and _at_most(last, iv.hi, dom)
                intervals[dim] = Interval(iv.lo, last) if lesser else intersect(iv, Interval(None, last))
    return _clamped(intervals, buf, dom)


def _check_reads_inside(chk, site, buf: Buffer, wpath: Path, wrealize: BlockRealize, loc: Path,
                        region: list[Range], memo, subject: str) -> None:
    """The writer reads the buffer only inside the region it writes: its
    reads go to the cache too, which holds (and is filled over) that
    region alone, so a read elsewhere (``B[vi + 1] = B[vi] * 2``) would
    fall outside it or meet an element never filled (TVM's cache reads out
    of bounds there)."""
    declared = _region_of(wrealize.block.reads, buf)
    if declared is None:
        return
    dom = _outer_dom(site, wpath, loc, memo)
    reads = _clamped(_relaxed(site, declared, wpath, wrealize, loc, memo), buf, dom)
    for r, w in zip(reads, region):
        if not (_at_most(w.min, r.min, dom) and _at_most(fold_add(r.min, r.extent), fold_add(w.min, w.extent), dom)):
            chk.stop(CacheWriteReadBeforeWriteError, subject,
                     f"the block reads {declared.script()}, outside the region of {buf.name} it writes, which "
                     "is all the cache would hold and fill", wrealize)


def _partial_write(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, loc: Path,
                   memo: dict | None = None, collect: list | None = None) -> str | None:
    """Why the writer may leave elements of its relaxed region unwritten
    (a cache_write would then copy uninitialised elements back), or None
    when every element of the region is written. With ``collect``, the
    loops that may run no iteration (``range(n)`` over the reduction) are
    collected there instead of given as the reason: where they all run,
    every element is written, and where one does not, none is."""
    block = wrealize.block
    region = _region_of(block.writes, buf)
    many = any(not (isinstance(r.extent, IntImm) and r.extent.value == 1) for r in region.region)
    if many and (not _is_true(wrealize.predicate) or not _stages_write(block, region, buf)):
        return f"its declared write {region.script()} is not one element per block instance"
    below = {loop.loop_var.name for p, loop in _loops(site, wpath, memo) if _under(p, loc)}
    _, others = _predicate_bounds(region, wrealize, below)
    if others:
        # a conjunct the loops' domains imply never skips (a split's guard
        # under the full part of a partitioned loop)
        dom = {loop.loop_var: Range(loop.min, loop.extent) for _, loop in _loops(site, wpath, memo)}
        others = [c for c in others if not can_prove(c, dom)
                  and not _implied_outer_guard(c, _conjuncts(wrealize.predicate), dom)]
    if others and many:
        return f"its predicate {others[0].script()} may skip elements of the region it writes"
    # a condition or a while loop between the copy's place and the block
    # may skip instances, and with them elements of the region
    below = len(loc) + 1 if wpath[:len(loc)] == loc else len(wpath)
    along = nodes_along(site.func, wpath)
    for depth in range(below, len(wpath)):
        node = along[depth]
        if isinstance(node, IfThenElse):
            dom = {loop.loop_var: Range(loop.min, loop.extent) for _, loop in _loops(site, wpath, memo)}
            if node.else_case is None and wpath[depth][0] == "then_case" and can_prove(node.condition, dom):
                continue
            return f"it runs under the condition {node.condition.script()}, which may skip elements"
        if isinstance(node, While):
            return f"it runs in the loop while {node.condition.script()}, which may skip elements"
    loops = {loop.loop_var.name: loop for p, loop in _loops(site, wpath, memo) if _under(p, loc)}
    why = _open_ends_reached(site, buf, wpath, wrealize, region, loc, loops, memo)
    if why is not None:
        return why
    if many:
        return _boxes_tile(site, buf, wpath, wrealize, region, loc, loops, memo, collect)
    return _writes_every_element(site, buf, wpath, wrealize, region, loc, loops, memo, others, collect)


def _open_ends_reached(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, region: BufferRegion, loc: Path,
                       loops: dict, memo: dict | None = None) -> str | None:
    """Why the copy of the region may reach elements the writer never
    writes where its relaxed region has an end that cannot be bounded (a
    loop times a run-time size: ``i_1_01 * ((rows + 2) // 3)``), or None.
    Such an end is clamped to the buffer's, so the writes must reach it:
    the index where the loops start must be at most 0 (the lower end), and
    the last element where they end at least the last of the dimension (the
    upper end). The second part of a split into parts, partitioned, writes
    from ``(rows + 2) // 3`` on: a copy of the rows before it would put
    back what the cache never held."""
    intervals = _relaxed(site, region, wpath, wrealize, loc, memo)
    if all(iv.lo is not None and iv.hi is not None for iv in intervals):
        return None
    firsts = written_indices(region, wrealize)
    starts = {lp.loop_var: lp.min for lp in loops.values()}
    ends = {lp.loop_var: fold_sub(fold_add(lp.min, lp.extent), IntImm(lp.extent.dtype, 1)) for lp in loops.values()}
    dom = _outer_dom(site, wpath, loc, memo)
    # what the writes surely reach, read as an iteration map, asked once
    produced = functools.cache(lambda: produced_region(site, wpath, wrealize, region, loc))

    def reached(k: int, lower: bool) -> bool:
        box = produced()
        if box is None:
            return False
        end = box[k].lo if lower else box[k].hi
        dim = buf.shape[k]
        if end is None or end.dtype != dim.dtype:
            return False
        zero = IntImm(dim.dtype, 0)
        return _at_most(end, zero, dom) if lower else _at_most(fold_sub(dim, IntImm(dim.dtype, 1)), end, dom)

    for k, (iv, first, rng, dim) in enumerate(zip(intervals, firsts, region.region, buf.shape)):
        if iv.lo is None:
            # an index: a divisor by a size is positive (0 // d is 0)
            at = simplify_index(substitute_expr(first, starts))
            if (at.dtype != dim.dtype or not _at_most(at, IntImm(at.dtype, 0), dom)) and not reached(k, True):
                return (f"the start of dimension {k} of what it writes of {buf.name} cannot be bounded, and it "
                        f"may not write from 0, where the copy would start")
        if iv.hi is None:
            last = simplify_index(fold_sub(fold_add(substitute_expr(first, ends), rng.extent),
                                           IntImm(first.dtype, 1)))
            if (last.dtype != dim.dtype or not _at_most(fold_sub(dim, IntImm(dim.dtype, 1)), last, dom)) \
                    and not reached(k, False):
                return (f"the end of dimension {k} of what it writes of {buf.name} cannot be bounded, and it "
                        f"may not write up to {dim.script()}, where the copy would end")
    return None


def _stages_write(block: Block, region: BufferRegion, buf: Buffer) -> bool:
    """Whether the stages at the top of the block's init and body (loop
    nests around inner blocks: :mod:`~tirfun.rewrites.stage_writes`) write
    every element of ``region`` in each instance of the block, as the
    blocks ``blockize`` makes do."""
    boxes = []
    for top in ([block.init] if block.init is not None else []) + [block.body]:
        for item in (top.seq if type(top) is SeqStmt else (top,)):
            stage = stage_of(item)
            box = None if stage is None else whole_write(*stage, buf)
            if box is not None:
                boxes.append(box)
    return bool(boxes) and region_covers(boxes, region, {iv.var: iv.dom for iv in block.iter_vars})


def _boxes_tile(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, region: BufferRegion, loc: Path,
                loops: dict, memo: dict | None = None, collect: list | None = None) -> str | None:
    """:func:`_writes_every_element` for a block that writes a box of
    constant extents whole in each instance: why the boxes may leave an
    element of their union over ``loops`` unwritten, or None. A box is its
    first element moved along one more loop a dimension, of the box's
    extent (a loop of the region), so that the boxes tile a dense box
    exactly where those indices cover one over the loops and these."""
    if any(type(r.extent) is not IntImm for r in region.region):
        return f"its declared write {region.script()} is not of constant extents"
    firsts = written_indices(region, wrealize)
    why = _loop_that_may_not_run(site, wpath, loc, firsts, memo, list(loops.values()), collect)
    if why is not None:
        return why
    points, spans = box_points(firsts, [r.extent.value for r in region.region], loops)
    return dense_over([simplify_affine(x) for x in points], spans, buf.name)


def _writes_every_element(site, buf: Buffer, wpath: Path, wrealize: BlockRealize, region: BufferRegion,
                          loc: Path, loops: dict, memo: dict | None = None, others=(),
                          collect: list | None = None) -> str | None:
    """The end of :func:`_partial_write` (and of read_at's and write_at's):
    why the writer, declaring one element ``region`` of ``buf`` per
    instance, may leave an element unwritten over ``loops`` (loop variable
    name -> For, the loops its region is relaxed over), or None: it stores
    the element unconditionally (itself, or an inner stage:
    :func:`_stages_write`), every loop that repeats it runs, and its
    indices cover a dense range over the loops.

    ``others`` are the conjuncts of the block's predicate that bound no
    index of the region. Each must bound the row-major position of the
    written element (what a fuse split by a factor that does not divide it
    leaves), and the instances that run must still write all that the
    writer's indices span over the loops inside the buffer, what a copy
    back takes (:func:`~tirfun.rewrites.stage_writes.cuts_a_prefix`)."""
    block = wrealize.block
    mins = [r.min for r in region.region]
    # a predicated (masked) store may skip its element
    if not stores_unconditionally(block, buf, mins) and not _stages_write(block, region, buf):
        return f"it does not store {buf.name}[{', '.join(m.script() for m in mins)}] unconditionally"
    indices = written_indices(region, wrealize)
    if others and not cuts_a_prefix(indices, loops, others, list(buf.shape)):
        runs = None if collect is None else _first_iteration_runs(others, indices, loops)
        if runs is None:
            return f"its predicate {others[0].script()} may skip elements of the region it writes"
        collect.extend(runs)
        others = ()
    why = _loop_that_may_not_run(site, wpath, loc, indices, memo, list(loops.values()), collect)
    if why is not None or others:
        return why  # under a predicate, cuts_a_prefix has shown the cover
    return dense_over(indices, loops, buf.name, overwrites=True)


def _loop_that_may_not_run(site, wpath: Path, loc: Path, indices, memo: dict | None = None,
                           below: list | None = None, collect: list | None = None) -> str | None:
    """Why a loop between ``loc`` and the writer at ``wpath`` (``below``,
    when the caller has them) that the written ``indices`` (in loop
    variables) do not follow, one that repeats the block, may leave the
    region unwritten: its extent may be zero, and the block then runs not
    at all. None where there is none. With ``collect``, for such a loop
    whose extent reads no loop from ``loc`` down, the condition that it
    runs (``0 < extent``) is added to it instead (the caller then copies
    back only where every such condition holds)."""
    if below is None:
        below = [loop for p, loop in _loops(site, wpath, memo) if _under(p, loc)]
    # a loop of a constant extent of one or more runs: most loops, asked first
    maybe = [loop for loop in below if not (type(loop.extent) is IntImm and loop.extent.value >= 1)]
    if not maybe:
        return None
    followed = set().union(set(), *(var_names(index) for index in indices))
    repeats = [loop for loop in maybe if loop.loop_var.name not in followed]
    if repeats:
        dom = {loop.loop_var: Range(loop.min, loop.extent) for _, loop in _loops(site, wpath, memo)}
        inside = {loop.loop_var.name for loop in below}
        for loop in repeats:
            if not can_prove(GE(loop.extent, IntImm(loop.extent.dtype, 1)), dom):
                if collect is not None and var_names(loop.extent).isdisjoint(inside) \
                        and not find_nodes(loop.extent, (BufferLoad,)):
                    collect.append(LT(IntImm(loop.extent.dtype, 0), loop.extent))
                    continue
                return (f"it runs in loop {loop.loop_var.name}, whose extent {loop.extent.script()} may be zero, "
                        "which its write index does not follow")
    return None


def _first_iteration_runs(conds, indices, loops: dict) -> list | None:
    """The conditions under which the predicate ``conds`` (conjuncts that
    bound no written index) lets every element be written, or None: each
    must be ``e < b`` with ``e`` a sum of loops from 0 with positive
    weights that the written ``indices`` do not follow (a reduction's loops
    split by a factor that does not divide a run-time count: ``k_0 * 4 +
    k_1 < n``) and ``b`` of no such loop. The iteration where those loops
    are at 0 writes each element where ``0 < b``."""
    followed = set().union(set(), *(var_names(index) for index in indices))
    out = []
    for c in conds:
        if not isinstance(c, LT) or not c.a.dtype.is_integer:
            return None
        names = var_names(c.a)
        form = affine_form(c.a)
        if not names or not names <= set(loops) or names & followed or form is None or form.const != 0 \
                or any(type(atom) is not Var or k <= 0 for atom, k in form.terms) \
                or any(type(loops[n].min) is not IntImm or loops[n].min.value != 0 for n in names) \
                or not var_names(c.b).isdisjoint(loops) or find_nodes(c.b, (BufferLoad,)):
            return None
        out.append(LT(IntImm(c.b.dtype, 0), c.b))
    return out


def _cache_readers(scope, consumers: set, buf: Buffer) -> list:
    """The blocks of the scope, ``(path, realize)``, that will read the cache:
    those of ``consumers`` (names) given to cache_write that read ``buf``."""
    return [(p, r) for p, r in scope.children if r.block.name_hint in consumers and _reads(r.block, buf)]


def _positive_extents(conds: list) -> PrimExpr:
    """The conditions (``0 < e``) conjoined, each once."""
    unique = []
    for c in conds:
        if not any(structural_equal(c, u) for u in unique):
            unique.append(c)
    return conjoin(unique)


def _outer_dom(site, realize_path: Path, top: Path, memo: dict | None = None) -> dict:
    """The domains known around ``top``: the loops above the block not
    under ``top``, and the iteration variables of the blocks enclosing it
    (an iteration variable's value lies in its domain)."""
    dom = {loop.loop_var: Range(loop.min, loop.extent)
           for p, loop in _loops(site, realize_path, memo) if not _under(p, top)}
    for var, rng in _enclosing_domains(site, realize_path).items():
        dom.setdefault(var, rng)
    return dom


def _at_most(a: PrimExpr, b: PrimExpr, dom) -> bool:
    """``a <= b`` for every value of the variables of ``dom`` (Var -> Range),
    by constant bounds or, past them, symbolically (``v * 8 + 7 <= (n + 7)
    // 8 * 8 - 1`` for ``v`` below ``(n + 7) // 8``, as TVM's analyzer finds it)."""
    return can_prove(LE(a, b), dom) or surely_at_most(a, b, dom)


def _clamped(intervals: list[Interval], buf: Buffer, dom) -> list[Range]:
    """Intervals as Ranges inside the buffer: an end not provably within the
    buffer is clamped to it (a relaxed non-dividing split would reach past)."""
    out = []
    for iv, dim in zip(intervals, buf.shape):
        dt = dim.dtype
        lo, hi = iv.lo, iv.hi
        typed = iv.bounded and lo.dtype == dt and hi.dtype == dt
        if typed and type(lo) is IntImm and type(hi) is IntImm and type(dim) is IntImm \
                and 0 <= lo.value and hi.value < dim.value:
            # constants inside: nothing to prove, and the extent is a literal
            out.append(_literal_range(lo, hi) or cover_range(iv, Range(IntImm(dt, 0), dim)))
            continue
        if typed and type(lo) is Var and (hi is lo or hi == lo) and _spans(lo, dim, dom):
            # a loop's own variable over the whole dimension: inside by its domain
            out.append(Range(lo, IntImm(dt, 1)))
            continue
        out.append(_clamped_dim(iv, dim, dom))
    return out


def _literally_inside(intervals: list[Interval], buf: Buffer) -> bool:
    """Whether every interval is one :func:`_clamped` takes as it is
    without asking its domains: literal ends of the dtype of the buffer's
    dimension, a literal, inside it."""
    for iv, dim in zip(intervals, buf.shape):
        lo, hi = iv.lo, iv.hi
        if not (type(lo) is IntImm and type(hi) is IntImm and type(dim) is IntImm
                and lo.dtype == dim.dtype and hi.dtype == dim.dtype and 0 <= lo.value and hi.value < dim.value):
            return False
    return True


def _clamped_dim(iv: Interval, dim: PrimExpr, dom) -> Range:
    """One dimension of :func:`_clamped`, by proofs: each end of ``iv``
    kept where it provably lies inside ``[0, dim)``, else clamped to it."""
    if iv.bounded and iv.lo.dtype == iv.hi.dtype and iv.lo.dtype != dim.dtype \
            and iv.lo.dtype.is_int and dim.dtype.is_int:
        # indices of int64 loops into a dimension of int32 (or the other
        # way round): compared in the wider dtype, or an index past the
        # buffer would stay unclamped
        wide = iv.lo.dtype if iv.lo.dtype.bits >= dim.dtype.bits else dim.dtype
        iv = Interval(_cast(iv.lo, wide), _cast(iv.hi, wide))
        dim = _cast(dim, wide)
    dt = dim.dtype
    zero = IntImm(dt, 0)
    if iv.bounded and iv.lo.dtype == dt and iv.hi.dtype == dt:
        last = fold_sub(dim, IntImm(dt, 1))
        lo = iv.lo if _at_most(zero, iv.lo, dom) else intersect(iv, Interval(zero, None)).lo
        hi = iv.hi if _at_most(iv.hi, last, dom) else intersect(iv, Interval(None, last)).hi
        iv = Interval(lo, hi)
    return cover_range(iv, Range(zero, dim))


def _literal_range(lo: IntImm, hi: IntImm) -> Range | None:
    """:func:`cover_range` of two literals of one dtype: ``lo`` and the
    extent ``hi + 1 - lo``, folded as it folds them (None where a step
    leaves the dtype, and the fold does not happen)."""
    dt = lo.dtype
    limits = dt.int_range()
    extent = hi.value + 1 - lo.value
    if hi.dtype != dt or not (limits[0] <= hi.value + 1 <= limits[1] and limits[0] <= extent <= limits[1]):
        return None
    return Range(lo, IntImm(dt, extent))


def _spans(var: Var, dim: PrimExpr, dom) -> bool:
    """Whether ``var`` is, by its own domain in ``dom``, a loop from 0 over
    exactly ``dim`` (of one dtype): then ``0 <= var`` and ``var <= dim - 1``
    are what the prover finds first, from the domain itself."""
    rng = dom.get(var)
    return (isinstance(rng, Range) and type(rng.min) is IntImm and rng.min.value == 0
            and rng.min.dtype == var.dtype and rng.extent.dtype == var.dtype and rng.extent == dim)


def _apart(body: Path, a: Path, b: Path) -> bool:
    """Whether the statements at ``a`` and ``b``, both under ``body``,
    share no statement below it but sequences: no loop, condition or block
    runs them both."""
    return all(step[0] == "seq" for step in _lca([a, b])[len(body):])


def _lca(paths: list[Path]) -> Path:
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        for k in range(n):
            if p[k] != first[k]:
                n = k
                break
    return first[:n]


def _cover_violation(site, scope: _Scope, buf: Buffer, memo: dict | None = None):
    """The first child of the scope that reads ``buf`` where the blocks
    writing it before do not provably cover what it reads (TVM's region
    cover, asked of this buffer only), or None."""
    for k, (cpath, consumer) in enumerate(scope.children):
        read = _region_of(consumer.block.reads, buf)
        if read is None:
            continue
        producers = [(p, r) for p, r in scope.children[:k] if _writes(r.block, buf)]
        if not producers:
            continue
        lca = _lca([cpath] + [p for p, _ in producers])
        # the LCA is a loop or the scope block's body: relax below it
        regions = [_relaxed(site, _region_of(r.block.writes, buf), p, r, lca, memo) for p, r in producers]
        if any(_whole_box(box, buf, read) for box in regions):
            continue  # a producer writes the whole buffer: what region_covers finds, unasked
        target = within_buffer(_relaxed(site, read, cpath, consumer, lca, memo), buf)
        if _plainly_covers(regions, target):
            continue  # what region_covers finds first
        if region_covers(regions, target, _outer_dom(site, cpath, lca, memo)):
            continue
        # TVM bounds what a producer writes from below (its iteration map
        # under its predicate), where the relaxed region above loses a split
        # of a size known at run time (i_0 * ((m + 1) // 2) + i_1, under
        # T.where(... < m)): the lower bound may still cover the read
        if general_cover_violation(site, scope.children[:k] + ((cpath, consumer),), (cpath, consumer),
                                   {buf}) is not None:
            return consumer
    return None


def _whole_box(box: list[Interval], buf: Buffer, read: BufferRegion) -> bool:
    """Whether a producer's relaxed region ``box`` is all of ``buf``
    (``[0, n - 1]`` in literals of the dtype of its shape, a constant one),
    and ``read`` is in that dtype too. Then it holds whatever ``read``
    reaches inside the buffer, which is all the region cover asks of it
    (:func:`~tirfun.rewrites.dataflow.within_buffer`), as
    :func:`~tirfun.rewrites.dataflow.whole_writer_covers` reasons."""
    shape = buf.shape
    if len(box) != len(shape) or len(read.region) != len(shape) or not shape:
        return False
    dtype = shape[0].dtype
    for iv, dim in zip(box, shape):
        lo, hi = iv.lo, iv.hi
        if type(dim) is not IntImm or type(lo) is not IntImm or type(hi) is not IntImm or lo.value != 0 \
                or hi.value != dim.value - 1 or not dim.dtype == lo.dtype == hi.dtype == dtype:
            return False
    return all(rng.min.dtype == dtype and rng.extent.dtype == dtype for rng in read.region)


def _plainly_covers(boxes: list, goal: list[Interval]) -> bool:
    """Whether one of ``boxes`` holds ``goal`` end by end, each end equal
    to the other or both integer literals of one dtype compared as
    integers: then :func:`~tirfun.analysis.arith.region_covers` proves it
    too (a box that contains the target is the first thing it looks for,
    and an end equal to the other is the first thing it asks). False
    where that does not show it (the analysis is then asked)."""
    if any(len(box) != len(goal) for box in boxes) or any(not iv.bounded for iv in goal):
        return False
    return any(all(_end_at_most(o.lo, g.lo) and _end_at_most(g.hi, o.hi) for o, g in zip(box, goal))
               for box in boxes)


def _end_at_most(a, b) -> bool:
    """``a <= b`` for two ends of intervals, where equal or integer literals
    of one dtype; False for anything else (not known here)."""
    if a is None or b is None:
        return False
    if type(a) is IntImm and type(b) is IntImm and a.dtype == b.dtype:
        return a.value <= b.value
    return a is b or a == b


# ------------------------------------------------------------------ where the stage goes

class _LocDetector:
    """TVM's CacheLocDetector: the lowest loop or block holding both the
    writer block and the first related block, and the position in its body
    before the part that holds the related block.

    Visiting a statement that holds neither the writer nor a related block
    changes nothing, so the items of a sequence are visited only when the
    name index places one of those blocks under them (``wanted``: the path
    of a sequence -> the positions to visit, in order); without an index
    (a name bound twice) every item is visited."""

    def __init__(self, scope: _Scope, writer: str | None, related: set[str], index=None,
                 loose: Buffer | None = None):
        self.scope = scope
        self.writer = writer
        self.related = related
        self.visited_block = False
        self.visited_related = False
        self.loc: Path | None = None
        self.pos = -1
        # a statement outside the blocks whose own fields read ``loose`` (a
        # loop bound, a condition) after the writer ran counts as a related
        # block: the copy back must come before it too
        self.loose = loose
        self.seen_writer = False
        # the statement other than a loop or block (an ``if``) whose body
        # holds the place found, where no stage can be inserted
        self.blocked: Stmt | None = None
        self.wanted = None if index is None or loose is not None else _wanted_items(
            index, [writer, *related], scope.path)

    def run(self) -> tuple[Path, int]:
        self.visit(self.scope.block, self.scope.path)
        return self.loc, self.pos

    def visit(self, node: Stmt, path: Path) -> None:
        if type(node) is BlockRealize:
            # what the last branch gives a realize (whose own fields are not
            # the loose reads looked for): its one statement child visited; a
            # block below the scope does not move the place, so nothing is blocked
            self.visit(node.block, path + (("block", None),))
            return
        if isinstance(node, SeqStmt):
            previous = self.visited_block
            self.visited_block = False
            seq = node.seq
            items = range(len(seq)) if self.wanted is None else self.wanted.get(path, ())
            for i in items:
                if self.pos != -1:
                    break
                self.visit(seq[i], path + (("seq", i),))
                if self.visited_block and self.visited_related and self.pos == -1:
                    self.pos = i
                    break
                if self.visited_related:
                    break
            self.visited_block = self.visited_block or previous
        elif isinstance(node, Block):
            if path == self.scope.path:
                self.visit(node.body, path + (("body", None),))
                if self.visited_related and self.loc is None:
                    self.loc = path
                    if not self.visited_block and self.pos == -1:
                        self.pos = 0
            elif node.name_hint == self.writer:
                self.visited_block = True
                self.seen_writer = True
            elif node.name_hint in self.related:
                self.visited_related = True
        elif self.seen_writer and self.loose is not None and _reads_in_own_fields(node, self.loose):
            self.visited_related = True
        elif isinstance(node, For):
            self.visit(node.body, path + (("body", None),))
            if self.visited_block and self.visited_related and self.loc is None and self.pos != -1:
                self.loc = path
        else:
            before = self.pos
            for step, child in stmt_children(node):
                self.visit(child, path + (step,))
            # declarations at the top of a body are looked through when the
            # stage is inserted (see _stage_place)
            if before == -1 and self.pos != -1 and self.blocked is None and not _wraps_decls(node):
                self.blocked = node


def _check_blocked_place(chk: Checks, detector: _LocDetector, subject: str, buf: Buffer, node) -> None:
    """The place the detector found for a copy back lies in a loop or
    block, not inside a statement such as an ``if`` that holds both the
    writer and its reader (CacheStageOrderError): TVM inserts the copy
    after that statement, after the reader. (A copy in placed so is
    refused by the order check of the cache's readers.)"""
    if detector.blocked is not None:
        stmt = detector.blocked
        what = f"if {stmt.condition.script()}" if isinstance(stmt, IfThenElse) else type(stmt).__name__
        chk.stop(CacheStageOrderError, subject,
                 f"the block writing {buf.name} and the block reading it after it both sit in the statement "
                 f"'{what}', inside which no copy can be placed between them", node)


def _check_no_loose_writer(chk: Checks, site, scope: _Scope, buf: Buffer, subject: str, realize,
                           placed_by_blocks: bool = False) -> None:
    """No statement of the scope outside its blocks stores into ``buf``
    (CacheStageOrderError): the copies are placed by the blocks that write
    and read the buffer alone, as TVM places them, and could run on the
    wrong side of such a store (a copy in placed before it, a copy back
    overwriting it). With ``placed_by_blocks`` (every copy goes next to a
    block using the buffer, not at the start of the scope), a store that
    has run to its end before all those blocks is let through."""
    if site.index is not None and not site.index.loose:
        return
    body = scope.path + (("body", None),)
    for path, node in statements_outside_blocks(scope.block.body, body):
        if isinstance(node, BufferStore) and same_buffer(node.buffer, buf):
            if placed_by_blocks and all(_runs_before(path, c) and _apart(body, path, c) for c, _ in scope.children):
                # it has run to its end before any block using the buffer
                # starts, in no loop around one of them: every copy, placed
                # by those blocks, comes after it, as in the original
                continue
            chk.stop(CacheStageOrderError, subject,
                     f"a store outside the blocks writes buffer {buf.name} ({node.script().splitlines()[0]}); "
                     "the cache's copies are placed by the blocks alone and could run on the wrong side of it",
                     realize)


def _check_no_reader_ahead(chk: Checks, scope: _Scope, writer: int, buf: Buffer, consumers) -> None:
    """No block other than the ``consumers`` reads ``buf`` before the
    writer (child ``writer`` of the scope) in a loop they share
    (CacheStageOrderError): from the loop's second iteration on it reads
    what the writer wrote, which a copy back placed after the writer's last
    iteration would not have put there yet."""
    wpath, wrealize = scope.children[writer]
    body = scope.path + (("body", None),)
    for p, r in scope.children[:writer]:
        if _reads(r.block, buf) and r.block.name_hint not in consumers and not _apart(body, p, wpath):
            chk.stop(CacheStageOrderError, f"block {r.block.name_hint!r}",
                     f"the block reads buffer {buf.name} before block {wrealize.block.name_hint!r} writes it, in "
                     "a loop they share: from its second iteration on it reads what the block wrote, which the "
                     "copy back would not have put there yet", r)


def _check_loose_reads_in_loops(chk: Checks, site, buf: Buffer, wpath: Path, name: str, loc: Path,
                                around: list, others: list) -> None:
    """No statement outside the blocks reads ``buf`` in its own fields (a
    loop bound, a condition: ``around`` the writer block at ``wpath`` and
    ``others``, from :func:`_loose_readers`) ahead of the writer, in a loop
    of the scope around both that the copy back, placed in ``loc``, is not
    in (CacheStageOrderError): from the loop's second iteration on the
    statement would read what the writer wrote, which the copy back, run
    after the loop, would not have put there yet. TVM places the copy back
    by the blocks alone and reads the stale value."""
    for path in around + [p for p in others if _runs_before(p, wpath)]:
        shared = _lca([path, wpath])
        loops = [loop for p, loop in loops_above(site, path) if shared[:len(p)] == p and loc[:len(p)] != p]
        if loops:
            stmt = site.at(path)
            chk.stop(CacheStageOrderError, f"block {name!r}",
                     f"a {type(stmt).__name__} outside the blocks reads buffer {buf.name} ahead of the block "
                     f"in loop {loops[-1].loop_var.name}, which holds both: from its second iteration on it "
                     "reads what the block wrote, which the copy back would not have put there yet",
                     site.at(wpath))


def _writers_of_loaded(scope: _Scope, exprs) -> tuple[Buffer | None, list[Path]]:
    """The first (by name) buffer that ``exprs`` load and a block of the
    scope writes, and the paths of the child blocks writing it; (None, [])
    where there is none."""
    loaded = {n.buffer for e in exprs if not plain_arithmetic(e) for n in walk(e) if type(n) is BufferLoad}
    if not loaded:
        return None, []
    # every child block, not only those of the scope's record, which lists
    # the blocks that use the cached buffer
    children = list(child_blocks(scope.block, scope.path))
    found = sorted({w.buffer for _, r in children for w in r.block.writes} & loaded, key=lambda b: b.name)
    if not found:
        return None, []
    return found[0], [p for p, r in children if any(w.buffer == found[0] for w in r.block.writes)]


def _runs_after_stage(site, stage_body: Path, pos: int, path: Path) -> bool:
    """Whether the statement at ``path`` runs after a stage inserted at
    position ``pos`` of the body at ``stage_body`` (a sequence, or one
    statement the stage goes before at 0 or after at 1)."""
    if path[:len(stage_body)] != stage_body:
        return not _runs_before(path, stage_body)
    if not isinstance(site.at(stage_body), SeqStmt):
        return pos == 0
    step = path[len(stage_body)]
    return step[0] == "seq" and step[1] >= pos


def _check_bounds_at_copy(chk: Checks, subject: str, site, scope: _Scope, loops: list, stage_body: Path,
                          pos: int, realize) -> None:
    """No loop whose bounds a copy evaluates again at its own place (one it
    re-creates, or one its region is relaxed over) reads a buffer that a
    block writes between that place and the loop (CacheStageOrderError):
    the bound would take another value there. A block in a loop
    ``range(B[1])`` whose copy is placed before B is written would copy
    another extent. TVM copies the bound as it is."""
    for path, loop in loops:
        loaded, writers = _writers_of_loaded(scope, [loop.min, loop.extent])
        for w in writers:
            copy_first = _runs_after_stage(site, stage_body, pos, path)
            inside = w[:len(path)] == path
            # written after the copy and before the loop starts, or after
            # the loop starts (inside it, or after it) and before the copy
            if (copy_first and _runs_after_stage(site, stage_body, pos, w) and _runs_before(w, path)
                    and not inside) or (not copy_first and not _runs_after_stage(site, stage_body, pos, w)
                                        and (inside or _runs_before(path, w))):
                chk.stop(CacheStageOrderError, subject,
                         f"loop {loop.loop_var.name} has a bound reading buffer {loaded.name}, which block "
                         f"{site.at(w).block.name_hint!r} writes between the loop and the copy; at the copy's "
                         "place the bound would take another value", realize)


def _check_region_bounds(chk: Checks, subject: str, site, scope: _Scope, region, wpath: Path | None, loc: Path,
                         pos: int, realize) -> bool:
    """Whether the region a cache copies is bounded by a load of a buffer a
    block of the scope writes (its cache is then laid out as the buffer,
    whose shape does not change, rather than sized by the load at the
    scope's start); if so, the loops the region is relaxed over (those
    between ``loc`` and the block at ``wpath``) must see the same bounds at
    the copy's place (:func:`_check_bounds_at_copy`)."""
    loaded, _ = _writers_of_loaded(scope, [e for r in region for e in (r.min, r.extent)])
    if loaded is None:
        return False
    if wpath is not None:
        _check_bounds_at_copy(chk, subject, site, scope,
                              [(p, lp) for p, lp in loops_above(site, wpath) if _under(p, loc)],
                              _stage_place(site, loc), pos, realize)
    return True


def _reads_in_own_fields(node: Stmt, buf: Buffer) -> bool:
    """Whether a statement other than a block reads ``buf`` in its own
    fields (a loop's bounds, a condition, a let's value, a store's value),
    not in the statements inside it."""
    if isinstance(node, (SeqStmt, Block, BlockRealize)):
        return False
    return any(not isinstance(c, Stmt) and mentions(c, buf) for c in iter_children(node))


def _loose_readers(site, scope: _Scope, buf: Buffer, wpath: Path) -> tuple[list[Path], list[Path]]:
    """The statements of the scope outside its child blocks that read
    ``buf`` in their own fields (see :func:`_reads_in_own_fields`): those
    that hold the writer block at ``wpath``, and the others. None are
    looked for where the name index counts no such statement."""
    if site.index is not None and not site.index.loose:
        return [], []
    around, others = [], []
    for path, node in statements_outside_blocks(scope.block.body, scope.path + (("body", None),)):
        if _reads_in_own_fields(node, buf):
            (around if wpath[:len(path)] == path else others).append(path)
    return around, others


def _wanted_items(index, names, top: Path) -> dict | None:
    """For the blocks named ``names`` below ``top`` (found in the function's
    name index), the path of each sequence above them -> the positions of
    the items holding them, in order; None when a name is not indexed as
    one block (it is bound twice), so that every item must be visited."""
    wanted: dict = {}
    for name in names:
        if name is None:
            continue
        if name in index.clashes:
            return None
        path = index.blocks.get(name)
        if path is None:
            return None
        if path[:len(top)] != top:
            continue  # not under the scope: never met by the visit
        for k in range(len(top), len(path)):
            step = path[k]
            if step[0] == "seq":
                wanted.setdefault(path[:k], set()).add(step[1])
    return {p: sorted(items) for p, items in wanted.items()}


#: statements a stage is inserted inside of, as TVM's InsertCacheStage does:
#: a constant or a buffer declared at the top of a body stays in scope
_DECLS = (AllocateConst, DeclBuffer)


def _wraps_decls(node) -> bool:
    """Whether ``node`` is a declaration at the top of a body, or a
    sequence of one such (structurally that declaration; a rewrite or a
    hand-built module may leave one)."""
    return isinstance(node, _DECLS) or (type(node) is SeqStmt and len(node.seq) == 1
                                        and isinstance(node.seq[0], _DECLS))


def _through_decls(node: Stmt, path: Path) -> tuple[Stmt, Path]:
    """The statement below the declarations at the top of ``node`` (at
    ``path``), and its path: where a stage is inserted."""
    while _wraps_decls(node):
        if isinstance(node, SeqStmt):
            node, path = node.seq[0], path + (("seq", 0),)
        else:
            node, path = node.body, path + (("body", None),)
    return node, path


def _under_decls(body: Stmt) -> Stmt:
    return _through_decls(body, ())[0]


def _end_position(block: Block) -> int:
    body = _under_decls(block.body)
    return len(body.seq) if isinstance(body, SeqStmt) else 1


def _insert(body: Stmt, pos: int, stage: Stmt) -> Stmt:
    """TVM's InsertCacheStage: ``stage`` at position ``pos`` of ``body``
    (of the body of the constants and buffers declared at its top)."""
    if isinstance(body, _DECLS):
        return with_fields(body, body=_insert(body.body, pos, stage))
    if _wraps_decls(body):
        return body.with_item(0, _insert(body.seq[0], pos, stage))
    if isinstance(body, SeqStmt):
        return body.with_inserted(pos, stage)
    return SeqStmt([stage, body] if pos == 0 else [body, stage])


def _runs_before(a: Path, b: Path) -> bool:
    """Whether the statement at ``a`` runs (starts) before the one at ``b``
    in program order; paths compare step by step."""
    for x, y in zip(a, b):
        if x != y:
            if x[0] == y[0] == "seq":
                return x[1] < y[1]
            return x[0] == "init" and y[0] == "body"
    return len(a) < len(b)


def _program_order(a: Path, b: Path) -> int:
    """A comparison of two paths by program order (a sort key through
    :func:`functools.cmp_to_key`)."""
    if a == b:
        return 0
    return -1 if _runs_before(a, b) else 1


def _shifted_path(path: Path, body: Path, pos: int, wrapped: bool) -> Path:
    """Where a statement at ``path`` of the old tree sits once the stage is
    inserted at ``pos`` of the statement at ``body`` (the body of the stage's
    place, below the declarations at its top)."""
    if not _under(path, body) and path != body:
        return path
    rest = path[len(body):]
    if not wrapped:
        (_, k), tail = rest[0], rest[1:]
        return body + (("seq", k + 1 if k >= pos else k),) + tail
    return body + (("seq", 1 if pos == 0 else 0),) + rest


# ------------------------------------------------------------------ the copy stage

def _make_stage(region: list[Range], orig: Buffer, cache: Buffer, *, is_read: bool, full: bool,
                name: str, taken) -> tuple[Stmt, Block]:
    """TVM's MakeCacheStage: loops ``ax0..`` over the region's extents, a
    block ``v0..`` copying one element from the read side to the write side."""
    loop_vars, values, iter_vars = [], [], []
    src_idx, dst_idx = [], []
    used = set()
    both = _Both(taken, used)
    zeros: dict = {}  # one literal 0 per dtype, shared by the loops and domains that start there

    def fresh(base):
        n = fresh_name(base, both)
        used.add(n)
        return n

    def zero(dtype):
        z = zeros.get(dtype)
        if z is None:
            z = zeros[dtype] = IntImm(dtype, 0)
        return z

    for k, rng in enumerate(region):
        lv = Var(fresh(f"ax{k}"), rng.extent.dtype)
        loop_vars.append(lv)
    for k, rng in enumerate(region):
        lv = loop_vars[k]
        if full:
            dim = orig.shape[k]
            v = Var(fresh(f"v{k}"), dim.dtype)
            iter_vars.append(IterVar(Range(zero(dim.dtype), dim), v, IterVarType.DataPar))
            values.append(_cast(fold_add(_cast(rng.min, lv.dtype), lv), dim.dtype))
            o_idx, c_idx = v, v
        else:
            v = Var(fresh(f"v{k}"), rng.extent.dtype)
            # a region dimension from 0 is the domain itself: shared, not rebuilt
            dom = rng if _from_zero(rng) else Range(zero(v.dtype), rng.extent)
            iter_vars.append(IterVar(dom, v, IterVarType.DataPar))
            values.append(lv)
            o_idx, c_idx = _cast(fold_add(_cast(rng.min, v.dtype), v), orig.shape[k].dtype), v
        (src_idx if is_read else dst_idx).append(o_idx)
        (dst_idx if is_read else src_idx).append(c_idx)
    src, dst = (orig, cache) if is_read else (cache, orig)
    one = _points(src_idx)
    # a full cache is read and written at the same indices, and so is a
    # compact one of a region from 0: one region serves both
    one_dst = one if full or all(a is b for a, b in zip(src_idx, dst_idx)) else _points(dst_idx)
    block = Block(iter_vars, [BufferRegion(src, one)], [BufferRegion(dst, one_dst)], name,
                  BufferStore(dst, BufferLoad(src, src_idx), dst_idx))
    stmt: Stmt = BlockRealize(values, IntImm("bool", 1), block)
    for lv, rng in reversed(list(zip(loop_vars, region))):
        stmt = For(lv, zero(lv.dtype), rng.extent, ForKind.SERIAL, stmt)
    return stmt, block


def _from_zero(rng: Range) -> bool:
    """Whether ``rng`` starts at the literal 0 of its extent's dtype (it
    is then ``Range(0, extent)`` as a copy stage builds its domains)."""
    lo = rng.min
    return type(lo) is IntImm and lo.value == 0 and lo.dtype == rng.extent.dtype


class _Both:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __contains__(self, name):
        return name in self.a or name in self.b


def _check_copy_in_bounds(chk, subject: str, buf: Buffer, indices, dom, node, reach=None,
                          read_everywhere=None) -> None:
    """A reindexing copy reads ``buf`` at ``indices`` over the whole domain
    ``dom`` of the iteration variables: each index must provably stay inside
    the buffer there (the block itself may read only under a guard).
    ``reach``, when given, is :func:`_point_bounds` of the indices over
    ``dom``, already known. ``read_everywhere``, when given, is asked (with
    no argument) before refusing: where the block itself loads the same
    element at every point of the domain, the copy reads, and divides by,
    nothing the program did not (TVM checks none of it)."""
    if reach is None:
        reach = _point_bounds(indices, dom)
    if read_everywhere is not None:
        read_everywhere = functools.cache(read_everywhere)  # asked again for each divisor
    outside = [k for k, iv in enumerate(reach) if not _inside(iv, buf.shape[k])]
    if outside and read_everywhere is not None and read_everywhere():
        return
    if outside:
        chk.stop(ReindexOutOfBoundsError, subject,
                 f"the index {indices[outside[0]].script()} of buffer {buf.name} is not provably "
                 "inside the buffer over the whole domain of the iteration variables, which the "
                 "copy reads", node)
    _check_copy_divisors(chk, subject, buf, indices, dom, node, read_everywhere)


def _enclosing_domains(site, path: Path) -> dict:
    """The domains of the iteration variables of the blocks around the
    node at ``path``: fixed values within them wherever a copy placed in
    those blocks runs."""
    out = {}
    node = site.func
    for name, index in path:  # the nodes above ``path``, without their paths
        if isinstance(node, Block):
            for iv in node.iter_vars:
                out[iv.var] = iv.dom
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return out


def _check_copy_divisors(chk, subject: str, buf: Buffer, indices, dom, node, read_everywhere=None) -> None:
    """A reindexing copy evaluates ``indices`` at every point of ``dom``,
    where the block may evaluate them only under a guard (``vi != 3`` around
    ``A[40 // (vi - 3)]``): each integer division or remainder in them must
    have a divisor that is provably not zero there."""
    stack = list(indices)
    while stack:
        e = stack.pop()
        if type(e) in _LEAVES or isinstance(e, Buffer):
            continue  # a variable or a constant divides nothing and holds nothing
        if isinstance(e, (Div, Mod, FloorDiv, FloorMod)) and not e.dtype.is_float:
            (iv,) = _point_bounds([e.b], dom)
            one = IntImm(e.b.dtype, 1)
            nonzero = iv.bounded and (index_at_most(one, iv.lo) or index_at_most(iv.hi, IntImm(e.b.dtype, -1)))
            if not nonzero and not (read_everywhere is not None and read_everywhere()):
                chk.stop(ReindexUnsafeIndexError, subject,
                         f"the index of buffer {buf.name} divides by {e.b.script()}, which is not provably "
                         "nonzero over the whole domain of the iteration variables, where the copy "
                         "evaluates it", node)
        stack.extend(iter_children(e))


def _point_bounds(indices, dom: dict) -> list[Interval]:
    """:func:`_bound` of the points ``indices`` over ``dom``: on Python
    integers where the box is made of them (see :func:`_constant_box`),
    without building a Range per index."""
    box = _constant_box([_Point(i, _one(i.dtype)) for i in indices], dom, None)
    if box is not None:
        return box
    return _bound([Range(i, IntImm(i.dtype, 1)) for i in indices], dom)


def _same_literal_points(old: list, new: list, ends: list[Interval], dom: dict) -> bool:
    """Whether :func:`_point_bounds` of ``old`` over ``dom`` and any domain
    it overrides is ``ends``, the bounds of ``new`` over ``dom``, already
    known: the same variables of ``dom`` (an index map that keeps the
    indices), whose bounds came out literals, read off their own domains."""
    return len(old) == len(new) and all(
        a is b and type(a) is Var and a in dom and type(iv.lo) is IntImm and type(iv.hi) is IntImm
        for a, b, iv in zip(old, new, ends))


def _inside(iv: Interval, dim: PrimExpr) -> bool:
    """Whether the interval of an index provably lies in ``[0, dim)``: on
    integers where both ends and the dimension are literals (the
    dimension one of the index's type), else read as index arithmetic
    (``vi`` over ``n * 16`` ends at ``n * 16 - 1``, inside a dimension of
    ``n * 16``)."""
    if not iv.bounded:
        return False
    lo, hi = iv.lo, iv.hi
    if type(lo) is IntImm and type(hi) is IntImm and type(dim) is IntImm:
        limits = hi.dtype.int_range()
        if limits is not None and limits[0] <= dim.value - 1 and dim.value <= limits[1]:
            return 0 <= lo.value and hi.value <= dim.value - 1
    return index_at_most(IntImm(lo.dtype, 0), lo) and \
        index_at_most(hi, fold_sub(_cast(dim, hi.dtype), IntImm(hi.dtype, 1)))


class _Point:
    """A dimension ``[min, min + extent)`` as :func:`_constant_box` reads
    one, without the checks of a Range (the extent is the literal 1): a
    plain pair, as it lives only for one call and is only read."""

    __slots__ = ("min", "extent")

    def __init__(self, min: PrimExpr, extent: IntImm):
        self.min = min
        self.extent = extent


@functools.cache
def _one(dtype) -> IntImm:
    """The literal 1 of an integer ``dtype``."""
    return IntImm(dtype, 1)


def _points(indices) -> list[Range]:
    """The region of one element at ``indices``: ``[i, i + 1)`` each."""
    return [Range(i, _one(i.dtype)) for i in indices]


def _depends_on_outer_loops(site, scope: _Scope, region) -> bool:
    """Whether the copied region depends on a loop around the scope block
    (a scope inside a loop, such as loop_partition's opaque blocks). A
    compact copy would have to index the cache with that loop's variable
    inside the copy block, which block isolation forbids (TVM writes it
    and its lowering copes); a full-sized cache keeps those variables in
    the copy's loop extents and bindings, where they may appear. So does a
    region whose bounds load from a buffer."""
    if all(type(r.min) is IntImm and type(r.extent) is IntImm for r in region):
        return False  # literals depend on nothing
    # a bound that loads (a write at A[B[0, 0], j]) would put the load in the
    # compact cache's shape, an allocation sized by the contents of memory
    if any(find_nodes(e, (BufferLoad,)) for r in region for e in (r.min, r.extent)):
        return True
    outer = {node.loop_var.name for _, node in ancestors(site.func, scope.path) if isinstance(node, For)}
    return any((var_names(r.min) | var_names(r.extent)) & outer for r in region)


def _check_compact_shared(chk, subject: str, site, scope: _Scope, buf: Buffer, storage_scope, region,
                          writer: BlockRealize | None = None) -> None:
    """A compact cache (its indices rebased to the region's start) in a
    ``shared`` scope, allocated by a scope block that runs per thread: what
    its elements hold must not vary with the thread
    (:func:`check_shared_allocation`). A read cache holds the buffer from
    the region's start; a write cache what ``writer`` stores."""
    if not (storage_scope or "").startswith("shared"):
        return
    held = [r.min for r in region] if writer is None else _written_values(writer, buf)
    check_shared_allocation(chk, subject, site.func, scope.path, storage_scope or "global",
                            f"the cache of buffer {buf.name}", held, scope.block,
                            viewed=buf if writer is None else None)


def _written_values(realize: BlockRealize, buf: Buffer) -> list[PrimExpr]:
    """What the block stores into ``buf``, and the conditions it stores
    under: its predicate, the conditions and let values on the way to its
    stores, and the stored values, where a load of ``buf`` itself (from
    the element the cache then holds) reads as zero."""
    def post(n):
        return const(0, n.dtype) if isinstance(n, BufferLoad) and same_buffer(n.buffer, buf) else n

    out = [realize.predicate]
    for s in _stores_in(realize.block):
        if isinstance(s, IfThenElse):
            out.append(s.condition)
        elif isinstance(s, LetStmt):
            out.append(s.value)
        elif isinstance(s, BufferStore) and same_buffer(s.buffer, buf):
            out.append(transform_plain(s.value, post))
    return out


def _allocatable(extent: PrimExpr) -> PrimExpr:
    """A compact cache's extent, at least 0: a region clamped to the buffer
    (``T.min(q * 3 - 1, rows - 1) - T.max(q * 2, 0) + 1``) is empty, its
    extent negative, where the writer writes nothing at some sizes (the
    last part of a split into parts when there are fewer rows than parts);
    the copies then run no iteration, but an allocation of a negative size
    has no meaning."""
    if int_value(extent) is not None or not find_nodes(extent, (Min, Max)) \
            or can_prove(GE(extent, IntImm(extent.dtype, 0))):
        return extent
    return Max(extent, IntImm(extent.dtype, 0))


def _cache_buffer(orig: Buffer, scope: str, region: list[Range], full: bool, taken,
                  pointer: bool = False) -> Buffer:
    """TVM's WithScope: the buffer renamed ``<name>_<scope>`` in the new
    scope, with the region's shape when the cache is compact. Where the
    redirected blocks take the buffer's pointer (``pointer``: ``A.data``
    in an opaque call; the cache is then full), the cache has a pointer of
    its own and the buffer's strides, so that pointer arithmetic written
    for the buffer holds for the cache."""
    name = fresh_name(suffixed(orig.name, scope), taken)
    shape = list(orig.shape) if full else [_allocatable(r.extent) for r in region]
    data = Var(fresh_name(f"{name}_data", taken), orig.data.dtype) if pointer else None
    strides = list(orig.strides) if pointer else []
    return Buffer(name, shape, orig.dtype, strides=strides, storage_scope=scope, data=data,
                  axis_separators=orig.axis_separators)


def _check_no_address_taken(chk: Checks, subject: str, blocks, buf: Buffer) -> None:
    """None of ``blocks``, whose accesses of ``buf`` a cache takes over,
    takes the address of an element of it (``T.address_of(B[i, 0])``):
    what is read or written through that pointer (a ``T.decl_buffer`` on
    it, a call) lies outside the block's declared regions, which say only
    the one element, so the copy would miss it. TVM's region detection
    reads the element and copies that alone."""
    for block in blocks:
        taken = _kept_for(_ADDRESSES, block, _addresses_taken)
        if buf.name not in taken:
            continue
        load = taken[buf.name]
        chk.stop(OpaqueAccessError, subject,
                 f"block {block.name_hint!r} takes the address of {load.script()}; what it reaches through that "
                 f"pointer is not in its declared regions of {buf.name}, so the copy would miss it", block)


# identity of a block -> (weak reference to it, what _addresses_taken found)
_ADDRESSES: dict = {}


def _addresses_taken(block: Block) -> dict:
    """Buffer name -> the first load whose address the block takes
    (``T.address_of(B[i, 0])``), in its init and body; kept per block for as
    long as it lives, as schedules meet the same blocks again and again."""
    out: dict = {}
    for top in ([block.init] if block.init is not None else []) + [block.body]:
        for n in walk(top):
            if type(n) is Call and n.op == "tir.address_of" and n.args and type(n.args[0]) is BufferLoad:
                out.setdefault(n.args[0].buffer.name, n.args[0])
    return out


def _uses_pointer(blocks, buf: Buffer) -> bool:
    """Whether any of ``blocks`` takes the buffer's pointer (``A.data``,
    in an opaque call): redirected, it takes the cache's, and only a cache
    laid out as the buffer is keeps that pointer arithmetic right."""
    if buf.data is None or not any(buf.data.name in names_in(b) for b in blocks):
        return False
    # the name may be there only as the buffer's own field: look for the
    # variable itself in an expression, not inside a Buffer
    stack = list(blocks)
    while stack:
        n = stack.pop()
        if isinstance(n, Buffer):
            continue
        if n == buf.data:
            return True
        stack.extend(iter_children(n))
    return False


# ------------------------------------------------------------------ redirecting accesses

def _rebase(indices, offsets) -> list[PrimExpr]:
    """Indices into the cache: unchanged (a full-sized cache), rebased by the
    region's mins (a compact one), or the reindexing caches' own indices
    (``offsets`` a function giving them)."""
    if offsets is None:
        return list(indices)
    if callable(offsets):
        return list(offsets())
    out = []
    for i, off in zip(indices, offsets):
        if isinstance(off, IntImm) and off.value == 0:
            out.append(i)
        elif isinstance(i, Ramp):
            # a vector access moves as a whole: its first element is rebased
            base = simplify_affine(fold_sub(i.base, _cast(off, i.base.dtype)))
            out.append(Ramp(base, i.stride, i.lanes))
        elif i.dtype.lanes > 1:
            out.append(i - Broadcast(_cast(off, i.dtype.element_of), i.dtype.lanes))
        else:
            out.append(simplify_affine(fold_sub(i, _cast(off, i.dtype))))
    return out


#: expression nodes that hold no other node: nothing to redirect inside
_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def _redirect_expr(e, old: Buffer, new: Buffer, offsets):
    """``e`` with its loads of ``old`` reading ``new`` (indices rebased);
    leaves and buffers are not entered, unchanged parts are shared."""
    # a variable changes only where both buffers have a pointer (None never
    # equals a Var): otherwise no variable is compared at all
    data = old.data if new.data is not None else None
    kind = type(e)
    if kind is IntImm or (kind is Var and data is None):
        return e  # a literal, or a variable no pointer replaces: nothing to visit

    def visit(n):
        kind = type(n)
        if kind is Var:
            return new.data if data is not None and (n is data or n == data) else n
        if kind in _LEAVES or kind is Buffer:
            return n
        n = map_children(n, visit)
        if kind is BufferLoad and same_buffer(n.buffer, old):
            return BufferLoad(new, _rebase(n.indices, offsets), n.predicate)
        return n

    try:
        return visit(e)
    finally:
        visit = None  # noqa: F841  (it refers to itself: a cycle left for the collector)


class _RebasedRedirect(BodyWalk):
    """:func:`_redirect_expr` for a cache without a pointer of its own
    (no variable changes): the arithmetic, loads, casts and calls a body
    is nearly always made of are rebuilt directly, any other kind goes to
    :func:`_redirect_expr`; the same result, without asking every field of
    every node what it holds."""

    def __init__(self, old: Buffer, new: Buffer, offsets):
        self.old, self.new, self.offsets = old, new, offsets

    def other(self, n):
        return _redirect_expr(n, self.old, self.new, self.offsets)

    def load(self, n):
        if not same_buffer(n.buffer, self.old):
            if n.predicate is None and all(type(i) in _LEAVES for i in n.indices):
                return n  # what the walk gives back: variables and constants stay as they are
            return super().load(n)
        indices = [self.expr(i) for i in n.indices]
        pred = None if n.predicate is None else self.expr(n.predicate)
        return BufferLoad(self.new, _rebase(indices, self.offsets), pred)


def _redirect_regions(regions, old: Buffer, new: Buffer, offsets):
    out, changed = [], False
    # where the cache has no pointer of its own, a variable or a constant
    # end is what redirecting gives back (see _redirect_expr)
    plain_ends = new.data is None
    for r in regions:
        if not same_buffer(r.buffer, old):
            if plain_ends and all(type(x.min) in _LEAVES and type(x.extent) in _LEAVES for x in r.region):
                out.append(r)
                continue
            # a load of the buffer inside another region's index (A[B[i], j]) reads the cache too;
            # a Range is rebuilt only where one of its ends changed
            ranges = [_redirect_range(x, old, new, offsets) for x in r.region]
            if any(a is not b for a, b in zip(ranges, r.region)):
                r = BufferRegion(r.buffer, ranges)
                changed = True
        if same_buffer(r.buffer, old) and callable(offsets):
            r = BufferRegion(new, _points(offsets()))
            changed = True
        elif same_buffer(r.buffer, old):
            # a min the rebasing keeps (an offset of 0) keeps its Range as it was
            ranges = r.region if offsets is None else [
                rng if m is rng.min else Range(m, rng.extent)
                for m, rng in zip(_rebase([x.min for x in r.region], offsets), r.region)]
            r = BufferRegion(new, ranges)
            changed = True
        out.append(r)
    return (pvector(out), True) if changed else (regions, False)


def _redirect_range(rng: Range, old: Buffer, new: Buffer, offsets) -> Range:
    """``rng`` with its loads of ``old`` reading ``new`` (see
    :func:`_redirect_expr`): the same Range where neither end changes."""
    lo = _redirect_expr(rng.min, old, new, offsets)
    ext = _redirect_expr(rng.extent, old, new, offsets)
    return rng if lo is rng.min and ext is rng.extent else Range(lo, ext)


def _check_view_scopes(chk: Checks, roots, old: Buffer, scope: str, select, redirect: bool = False) -> None:
    """ViewScopeMismatchError where a block the rewrite redirects from
    ``old`` to a buffer in ``scope`` (the blocks in ``roots`` and below that
    ``select`` redirects, as :class:`_Rewriter` walks them, ``redirect``
    given for the roots) views ``old`` through a match_buffer of another
    scope: its source would become a region of the new buffer, which a view
    of another scope cannot match."""
    stack = [(root, redirect) for root in roots]
    while stack:
        node, redirect = stack.pop()
        if not mentions(node, old):
            continue
        if type(node) is BlockRealize:
            # its one statement child, taken without another turn
            node = node.block
            if not mentions(node, old):
                continue
        if type(node) is Block:
            mode = select(node, redirect)
            if mode == "skip":
                continue
            redirect = mode == "redirect"
            for m in node.match_buffers if redirect else ():
                if same_buffer(m.source.buffer, old) and m.buffer.scope() != scope:
                    chk.stop(ViewScopeMismatchError, f"block {node.name_hint!r}",
                             f"it views buffer {old.name} through match_buffer {m.buffer.name} in scope "
                             f"{m.buffer.scope()!r}; redirected to a buffer in scope {scope!r}, the view "
                             "would match a region of another scope (cache in the view's scope, or before "
                             "tensorizing)", node)
        # a store holds no statement: nothing below it to look at
        stack.extend((child, redirect) for _, child in stmt_children(node) if type(child) is not BufferStore)


def _redirect_matches(matches, old: Buffer, new: Buffer, offsets):
    out, changed = [], False
    for m in matches:
        if same_buffer(m.source.buffer, old):
            src, _ = _redirect_regions([m.source], old, new, offsets)
            m = MatchBufferRegion(m.buffer, src[0])
            changed = True
        out.append(m)
    return (pvector(out), True) if changed else (matches, False)


class _Rewriter:
    """Rebuilds the scope block: redirects accesses of ``old`` to ``new`` in
    the blocks ``redirect(block, inherited)`` selects, inserts the stage, and
    allocates the cache. Statements left alone are the same objects."""

    def __init__(self, scope: _Scope, old: Buffer, new: Buffer, offsets, loc: Path, pos: int, stage: Stmt,
                 alloc: Buffer, select, stores: bool, fill: tuple | None = None, realizes: list | None = None):
        self.scope, self.old, self.new, self.offsets = scope, old, new, offsets
        self.loc, self.pos, self.stage, self.alloc = loc, pos, stage, alloc
        self.select = select  # block -> "skip" | "redirect" | "keep"
        self.stores = stores
        self.fill = fill  # (position, stage): a second stage at loc, before the first
        # when a list: receives (old, new) of each BlockRealize rebuilt, for the index
        self.realizes = realizes
        # a cache without a pointer of its own changes no variable: the
        # direct walk of the usual expression kinds serves
        self.rebased = _RebasedRedirect(old, new, offsets).expr \
            if new.data is None and not callable(offsets) else None

    def place(self, body: Stmt) -> Stmt:
        """``body`` (of ``loc``) with the stage inserted, and the fill stage
        before it: the later position first, so the earlier one still counts
        the original items."""
        body = _insert(body, self.pos, self.stage)
        if self.fill is not None:
            body = _insert(body, *self.fill)
        return body

    def run(self) -> Block:
        return self.block(self.scope.block, self.scope.path, False)

    def redirect(self, e):
        """``e`` with its loads of the old buffer reading the new one
        (:func:`_redirect_expr`)."""
        if self.rebased is not None:
            return self.rebased(e)
        return _redirect_expr(e, self.old, self.new, self.offsets)

    def block(self, block: Block, path: Path, redirect: bool) -> Block:
        if path != self.scope.path:
            mode = self.select(block, redirect)
            if mode == "skip":
                return block
            redirect = mode == "redirect"
        body = self.stmt(block.body, path + (("body", None),), redirect)
        init = None if block.init is None else self.stmt(block.init, path + (("init", None),), redirect)
        changes = {}
        if body is not block.body:
            changes["body"] = body
        if init is not block.init:
            changes["init"] = init
        if path == self.loc:
            changes["body"] = self.place(changes.get("body", block.body))
        if path == self.scope.path:
            changes["alloc_buffers"] = list(block.alloc_buffers) + [self.alloc]
        elif redirect:
            reads, a = _redirect_regions(block.reads, self.old, self.new, self.offsets)
            writes, b = _redirect_regions(block.writes, self.old, self.new, self.offsets)
            matches, c = _redirect_matches(block.match_buffers, self.old, self.new, self.offsets)
            if a:
                changes["reads"] = reads
            if b:
                changes["writes"] = writes
            if c:
                changes["match_buffers"] = matches
        return with_fields(block, **changes) if changes else block

    def stmt(self, node: Stmt, path: Path, redirect: bool) -> Stmt:
        on_loc = self.loc[:len(path)] == path
        if not on_loc and not mentions(node, self.old):
            return node  # nothing to redirect and nothing to insert below it
        if type(node) is SeqStmt:
            return self.seq(node, path, redirect, on_loc)
        if isinstance(node, Block):
            return self.block(node, path, redirect)
        if type(node) is For and not redirect:
            return self.loop(node, path)
        if isinstance(node, BufferStore) and redirect:
            value = self.redirect(node.value)
            indices = [self.redirect(i) for i in node.indices]
            pred = None if node.predicate is None else self.redirect(node.predicate)
            buf, idx = node.buffer, indices
            if self.stores and same_buffer(buf, self.old):
                buf, idx = self.new, _rebase(indices, self.offsets)
            if buf is node.buffer and value is node.value and pred is node.predicate and \
                    all(a is b for a, b in zip(idx, node.indices)):
                return node
            return BufferStore(buf, value, idx, pred)
        return self.general(node, path, redirect)

    def general(self, node: Stmt, path: Path, redirect: bool) -> Stmt:
        """Any other statement: its statement children walked, its own
        expressions redirected inside a redirected block."""
        changes = {}
        kids = dict(stmt_children(node))
        for step, child in kids.items():
            new = self.stmt(child, path + (step,), redirect)
            if new is not child:
                name, k = step
                if k is None:
                    changes[name] = new
                else:
                    seq = changes.get(name, getattr(node, name))
                    changes[name] = seq.set(k, new)
        if redirect and not isinstance(node, (SeqStmt, BlockRealize)):
            for a in attrs.fields(type(node)):
                value = getattr(node, a.name)
                if isinstance(value, PrimExpr):
                    new = self.redirect(value)
                    if new is not value:
                        changes[a.name] = new
        if isinstance(node, BlockRealize) and redirect:
            values = [self.redirect(v) for v in node.iter_values]
            if any(a is not b for a, b in zip(values, node.iter_values)):
                changes["iter_values"] = values
            pred = self.redirect(node.predicate)
            if pred is not node.predicate:
                changes["predicate"] = pred
        out = with_fields(node, **changes) if changes else node
        if path == self.loc and isinstance(out, For):
            out = with_fields(out, body=self.place(out.body))
        elif self.realizes is not None and out is not node and type(node) is BlockRealize:
            self.realizes.append((node, out))
        return out

    def loop(self, node: For, path: Path) -> Stmt:
        """A loop outside the blocks redirected: what :meth:`general` gives,
        for its one statement child, without looking at its expressions
        (only a redirected block's statements have theirs redirected)."""
        body = self.stmt(node.body, path + (("body", None),), False)
        out = node if body is node.body else with_fields(node, body=body)
        if path == self.loc:
            out = with_fields(out, body=self.place(out.body))
        return out

    def skipped(self, item_path: Path) -> bool:
        """Whether the scope's children under the item at ``item_path`` (of
        a sequence outside every block but the scope) are all blocks the
        select skips, and there is one: then walking the item gives it back
        unchanged, as outside a redirected block only a block changes a
        statement, and a block that does not mention the buffer is left as
        it is."""
        n = len(item_path)
        found = False
        for p, realize in self.scope.children:
            if p[:n] == item_path:
                if self.select(realize.block, False) != "skip":
                    return False
                found = True
        return found

    def seq(self, node: SeqStmt, path: Path, redirect: bool, on_loc: bool) -> SeqStmt:
        """A sequence with the items that mention the buffer, or lead to
        the stage's place, rebuilt; the others are asked one name look-up
        each, and the sequence shares them."""
        step = self.loc[len(path)] if on_loc and len(self.loc) > len(path) else None
        name, data = self.old.name, self.old.data.name if self.old.data is not None else None
        out = node
        seq = node.seq
        known = self.scope.items.get(path) if self.scope.buf is self.old else None
        if known is not None:
            # the plan found which items mention the buffer: only those, and
            # the one leading to the stage's place, are visited
            chosen = sorted(set(known) | ({step[1]} if step is not None and step[0] == "seq" else set()))
            for i in chosen:
                item = seq[i]
                item_path = path + (("seq", i),)
                if not redirect and step != ("seq", i) and self.skipped(item_path):
                    continue
                new = self.stmt(item, item_path, redirect)
                if new is not item:
                    out = out.with_item(i, new)
            return out
        for i, item in enumerate(seq):
            if step != ("seq", i):
                names = names_in(item)
                if name not in names and (data is None or data not in names):
                    continue
            new = self.stmt(item, path + (("seq", i),), redirect)
            if new is not item:
                out = out.with_item(i, new)
        return out


# ------------------------------------------------------------------ reading before writing

def _reads_before_writing(block: Block, buf: Buffer) -> BufferLoad | None:
    """A load of ``buf`` in the block that may run before the block has
    written that element itself (in its init, or earlier in its body at the
    same indices, or in an earlier stage: a loop nest around an inner block
    that writes a box of ``buf`` whole, see
    :mod:`~tirfun.rewrites.stage_writes`), or None. Conservative: a store
    under a loop or a branch, other than a stage's, does not count as
    written."""
    written: set = set()
    boxes: list = []  # what earlier stages wrote whole
    dom = {iv.var: iv.dom for iv in block.iter_vars}

    def stage_reads(loops, realize) -> BufferLoad | None:
        # the inner block's reads of buf (its own init's elements left out,
        # as TVM's region rule does) over the stage's loops must lie in
        # what earlier stages wrote; then its whole write counts
        inner = realize.block
        reads = [r for r in access_regions(inner)[0] if same_buffer(r.buffer, buf)]
        if reads:
            bindings = {iv.var: v for iv, v in zip(inner.iter_vars, realize.iter_values)}
            nest = {loop.loop_var: Range(loop.min, loop.extent) for loop in loops}
            for r in reads:
                box = bound_region(r, nest, bindings)
                if not (boxes and region_covers(boxes, box, dom)):
                    return next((ld for ld in find_nodes(inner, (BufferLoad,)) if same_buffer(ld.buffer, buf)),
                                BufferLoad(buf, [x.min for x in r.region]))
        box = whole_write(loops, realize, buf)
        if box is not None:
            boxes.append(box)
        return None

    def loads(e):
        stack = [e]
        push, extend = stack.append, stack.extend
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind in _LEAVES:
                continue  # no children
            # the children in iter_children's order, without its generator;
            # the kinds an expression is nearly always made of written out
            if kind in OPERAND_NODES:
                push(n.a)
                push(n.b)
                continue
            if kind is BufferLoad:
                if same_buffer(n.buffer, buf):
                    yield n
                extend(n.indices)  # its buffer, pushed first, would be passed over
                if n.predicate is not None:
                    push(n.predicate)
                continue
            if isinstance(n, BufferLoad) and same_buffer(n.buffer, buf):
                yield n
            if isinstance(n, Buffer):
                continue
            child_pusher(kind)(n, push)

    def scan(node: Stmt, counts: bool) -> BufferLoad | None:
        if counts and (type(node) is For or type(node) is BlockRealize):
            stage = stage_of(node)
            if stage is not None:
                return stage_reads(*stage)
        if isinstance(node, BufferStore):
            for part in [node.value, *node.indices]:
                for ld in loads(part):
                    if tuple(ld.indices) not in written:
                        return ld
            if counts and same_buffer(node.buffer, buf):
                written.add(tuple(node.indices))
            return None
        if isinstance(node, SeqStmt):
            for item in node.seq:
                bad = scan(item, counts)
                if bad is not None:
                    return bad
            return None
        if isinstance(node, BlockRealize):
            return scan(node.block, False)
        if isinstance(node, Block):
            for part in ([node.init] if node.init is not None else []) + [node.body]:
                bad = scan(part, False)
                if bad is not None:
                    return bad
            return None
        for a in attrs.fields(type(node)):
            value = getattr(node, a.name)
            if isinstance(value, PrimExpr):
                for ld in loads(value):
                    if tuple(ld.indices) not in written:
                        return ld
        inner = isinstance(node, (For, IfThenElse)) or not counts
        for _, child in stmt_children(node):
            bad = scan(child, counts and not inner)
            if bad is not None:
                return bad
        return None

    try:
        if block.init is not None:
            bad = scan(block.init, True)
            if bad is not None:
                return bad
            # the init runs where every reduction variable starts: an
            # element it writes at an index naming one (B[vk] = 0) is
            # written in that instance only, and another reads it unwritten
            reducing = {iv.var.name for iv in block.iter_vars if iv.iter_type is IterVarType.CommReduce}
            if reducing:
                written = {w for w in written if not any(var_names(i) & reducing for i in w)}
        return scan(block.body, True)
    finally:
        scan = loads = None  # noqa: F841  (they refer to themselves: cycles left for the collector)


def _skipped_init(site, realize_path: Path, realize: BlockRealize, loc: Path) -> str | None:
    """Why a reduction block's init may not run in every fill of a cache
    placed below ``loc`` (its updates would then accumulate onto the
    uninitialised cache), or None. The init runs when every reduction
    variable is at the start of its domain: with an affine binding, each
    must depend only on loops below ``loc`` and reach that start over them
    (a part of loop_partition, or a block placed inside its reduction loop,
    does not)."""
    block = realize.block
    if block.init is None:
        return None
    around = [(p, node) for p, node in ancestors(site.func, realize_path) if isinstance(node, For)]
    loops = {node.loop_var.name: node for _, node in around}
    inner = {node.loop_var: Range(node.min, node.extent) for p, node in around if _under(p, loc)}
    outer = {node.loop_var: Range(node.min, node.extent) for p, node in around if not _under(p, loc)}
    # where the init runs depends on the reduction variables alone: the
    # spatial ones may leave gaps (rows of a tile inside a block of rows)
    reducing = [v for iv, v in zip(block.iter_vars, realize.iter_values) if iv.iter_type == IterVarType.CommReduce]
    if not is_affine_binding(reducing, loops, surjective=True, predicate=realize.predicate):
        return "its binding is not affine in its loops, so where its init runs is not known"
    inner_names = {v.name for v in inner}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type != IterVarType.CommReduce:
            continue
        outside = sorted((var_names(value) & set(loops)) - inner_names)
        if outside:
            return (f"its reduction variable {iv.var.name} is bound to {value.script()}, which depends on "
                    f"loop {outside[0]} around the cache, so the init does not run in every fill of the cache")
        (reach,) = _bound([Range(value, IntImm(value.dtype, 1))], inner)
        start = _cast(iv.dom.min, value.dtype)
        if not (reach.bounded and can_prove(EQ(reach.lo, start), outer)):
            return (f"its reduction variable {iv.var.name} = {value.script()} does not start at "
                    f"{start.script()} over the loops below the cache, so its init does not run there and "
                    "the updates read what was accumulated before")
    return None


def _check_writes_first(chk, block: Block, buf: Buffer, subject: str, realize, what: str, hint: str = "") -> None:
    """A block whose writes go to a fresh ``what`` (cache or copy) must not
    read an element of the buffer before writing it (CacheWriteReadBeforeWriteError)."""
    bad = _reads_before_writing(block, buf)
    if bad is not None:
        chk.stop(CacheWriteReadBeforeWriteError, subject,
                 f"the block reads {bad.script()} before writing that element itself; the {what} "
                 f"would be read uninitialised{hint}", realize)


def _check_sole_writer(chk, scope: _Scope, buf: Buffer, realize, subject: str, hint: str = "",
                       *, writes_first: bool = True, earlier: bool = False) -> int:
    """cache_write and reindex_cache_write: the block is the only writer of
    the buffer in its scope (NotSingleWriteBlockError; with ``earlier``, the
    last, see :func:`_last_writer`) and (unless ``writes_first`` is False)
    does not read it before writing it (CacheWriteReadBeforeWriteError);
    its position among the scope's children."""
    name = realize.block.name_hint
    if earlier:
        writer = _last_writer(chk, scope, buf, realize)
    else:
        writer = _only_writer(chk, scope, buf)
    if writer is None or scope.children[writer][1].block.name_hint != name:
        # the block is nested below a child of the scope that also writes the buffer
        chk.stop(NotSingleWriteBlockError, f"buffer {buf.name}",
                 f"block {name!r} is not the only block of its scope writing the buffer", realize)
    if writes_first:
        _check_writes_first(chk, realize.block, buf, subject, realize, "cache", hint)
    return writer


def _position_at(site, path: Path, loc: Path) -> int:
    """The position in the body of ``loc`` (below the declarations at its
    top) of the item holding ``path``."""
    node, inner = _through_decls(site.at(loc).body, loc + (("body", None),))
    k = len(inner)
    return path[k][1] if isinstance(node, SeqStmt) and len(path) > k else 0


def _copy_back_place(chk: Checks, site, scope: _Scope, writer: int, buf: Buffer, consumers) -> tuple[Path, int]:
    """Where the copy back of a written cache goes: before the first later
    reader of the buffer that is not a redirected consumer (TVM's
    CacheLocDetector), a statement outside the blocks that reads it
    counting as a reader, or at the end of the scope when there is none.
    Refused where no place is right (:func:`_check_blocked_place`,
    :func:`_check_loose_reads_in_loops`)."""
    wpath, wrealize = scope.children[writer]
    name = wrealize.block.name_hint
    related = {r.block.name_hint for _, r in scope.children[writer + 1:]
               if _reads(r.block, buf) and r.block.name_hint not in consumers}
    around, loose = _loose_readers(site, scope, buf, wpath)
    if not related and not loose:
        loc, pos = scope.path, _end_position(scope.block)
    else:
        detector = _LocDetector(scope, name, related, site.index, buf if loose else None)
        loc, pos = detector.run()
        _check_blocked_place(chk, detector, f"block {name!r}", buf, wrealize)
        if loc is None:  # the statements reading the buffer all run before the writer
            loc, pos = scope.path, _end_position(scope.block)
    _check_loose_reads_in_loops(chk, site, buf, wpath, name, loc, around, loose)
    return loc, max(pos, 0)


def _check_init_runs(chk, site, realize_path: Path, realize: BlockRealize, loc: Path, buf: Buffer,
                     subject: str, what: str) -> None:
    """A reduction block's init runs in every fill of the ``what`` (cache or
    copy) placed below ``loc`` (CacheWriteReadBeforeWriteError, see
    :func:`_skipped_init`)."""
    skipped = _skipped_init(site, realize_path, realize, loc)
    if skipped is not None:
        chk.stop(CacheWriteReadBeforeWriteError, subject,
                 f"the block reads {buf.name} before writing it where the {what} lives: {skipped}", realize)


def _stage_place(site, loc: Path) -> Path:
    """The path of the body a stage at ``loc`` goes into: below the
    declarations at its top, as :func:`_insert` places it."""
    return _through_decls(site.at(loc).body, loc + (("body", None),))[1]


def _keeps_names(offsets) -> bool:
    """Whether redirecting to a cache indexed with ``offsets`` (see
    :func:`_rebase`) leaves every index as it was: only the buffers loads,
    stores and regions name change, never a name the function binds (a
    Let in an index is kept as it was, not simplified away)."""
    return offsets is None or all(isinstance(off, IntImm) and off.value == 0 for off in offsets)


def _one_stage_index(plan: _Plan, cache: Buffer, stage: Stmt, offsets, realizes: list):
    """How :func:`~tirfun.rewrites.base.commit` derives the index after
    cache_read or cache_write: ``stage`` inserted into a sequence at the
    plan's place, ``cache`` allocated in the scope, and the BlockRealizes
    ``realizes`` (``(old, new)``) rebuilt in place, binding the same names
    (:func:`_keeps_names`) at the same paths below them
    (:func:`~tirfun.rewrites.index.derive_insert_index`). None (the
    re-indexing of the scope) where the stage's place was not a sequence,
    a fill stage went in too, the cache takes a pointer of its own, the
    indices were rebased, or statements outside blocks name buffers."""
    site = plan.site

    def state(new_func):
        index = site.index
        if plan.fill is not None or plan.pointer or index.loose or not _keeps_names(offsets):
            return None
        seq_path = _stage_place(site, plan.loc)
        old_body, new_body = get_at(site.func, seq_path), get_at(new_func, seq_path)
        if type(old_body) is not SeqStmt or type(new_body) is not SeqStmt \
                or len(new_body.seq) != len(old_body.seq) + 1 or new_body.seq[plan.pos] is not stage:
            return None
        return derive_insert_index(index, site.func, new_func, seq_path, plan.pos, stage, allocs=[cache],
                                   rebuilt=realizes)

    return state


# ------------------------------------------------------------------ the records

@attrs.frozen
class _Plan:
    site: object
    scope: _Scope
    orig: Buffer
    region: list
    full: bool
    loc: Path
    pos: int
    select: object
    taken: object
    #: cache_write only: the position at ``loc`` where the cache is filled
    #: from the buffer before the block runs (None: it is not filled)
    fill: int | None = None
    #: the redirected blocks take the buffer's pointer (see _cache_buffer)
    pointer: bool = False
    #: cache_write only: the condition the copy back runs under (every loop
    #: that repeats the writer and may run no iteration runs), or None
    guard: PrimExpr | None = None


def _python_args(self, index_name: str) -> list[str]:
    args = [py_value(self.block), py_value(getattr(self, index_name)), py_value(self.storage_scope)]
    if self.consumer_blocks is not None:
        args.append(f"consumer_blocks={py_value(list(self.consumer_blocks))}")
    return args


@register
@attrs.frozen
class CacheRead(Rewrite):
    """Read a buffer through a cache in another storage scope: a new block
    ``<buffer>_<scope>`` copies what the readers need into a new buffer
    ``<buffer>_<scope>``, and the readers (all of them, or the given
    ``consumer_blocks`` and the blocks directly under them) read the cache.

    The copy goes inside the lowest loop that holds both the buffer's
    writer and the first reader served, just before that reader (at the
    start of the scope for an input of the scope). It copies the region the
    writer writes, relaxed over the loops between the writer and that place
    (for an input: the whole buffer, or the scope block's read region).
    The cache has the buffer's shape when the copy sits in a loop, and the
    copied region's shape (indices rebased) when it sits in the scope block
    (the buffer's shape again when that region depends on loops around the
    scope block).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError)
       and so do the consumer blocks, in the block's scope
       (ConsumerNotInScopeError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError); a
       ``shared`` cache allocated in a block that every thread of a
       threadIdx loop runs holds the same values for each thread
       (SharedScopeUnderThreadError: TVM lets the threads race on it);
    3. ``read_buffer_index`` is a position in the block's reads
       (BufferIndexOutOfRangeError), or a Buffer or buffer name it reads
       (BufferNotAccessedError);
    4. the block has an enclosing block (NoScopeBlockError);
    5. the block does not write the buffer where another block of the
       scope writes it too (NotSingleWriteBlockError). TVM asks for one
       writer in the scope; tirfun lets several through (the fill and the
       update of a cache_write make two): the copy then goes after the
       last, and holds what any of them writes;
    6. every reader of the buffer reads only what the blocks writing it
       before have written (NotRegionCoverError);
    7. every redirected reader runs after the copy (CacheStageOrderError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        cache_read("B", 0, "shared")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            A_shared = T.alloc_buffer((8,), scope="shared")
            for ax0 in range(8):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(8, ax0)
                    A_shared[v0] = A[v0]
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A_shared[vi] * T.float32(2)
    """

    primitive = "cache_read"

    block: object = attrs.field(converter=as_block_ref)
    read_buffer_index: object = 0
    storage_scope: object = "global"
    consumer_blocks: object = attrs.field(default=None, converter=_as_refs)

    def plan(self, mod, chk: Checks):
        subject = describe(self.block)
        refs = [self.block, *(self.consumer_blocks or ())]
        site = resolve_site(chk, mod, refs)
        path = resolve_block(chk, site, self.block)
        check_storage_scope(chk, self.storage_scope)
        realize = site.at(path[:-1])
        buf = access_buffer(chk, realize.block, realize, self.read_buffer_index, "read")
        scope = _scope_of(chk, site, path, subject, buf)
        # the copy follows a block writing the buffer where one writes it
        # before any reads it; else it goes to the start of the scope
        uses = [_writes(r.block, buf) for _, r in scope.children if _writes(r.block, buf) or _reads(r.block, buf)]
        _check_no_loose_writer(chk, site, scope, buf, subject, realize, bool(uses) and uses[0])
        consumers = _consumer_set(chk, site, scope, self.consumer_blocks, buf)
        memo: dict = {}  # the writer's relaxed region, asked twice
        bad = _cover_violation(site, scope, buf, memo)
        if bad is not None:
            chk.stop(NotRegionCoverError, f"block {scope.block.name_hint!r}",
                     f"the region cover of the scope is not complete: block {bad.block.name_hint!r} reads "
                     f"elements of buffer {buf.name} that the blocks writing it before do not write", bad)
        # TVM asks for one writer, which tirfun's own stages may make two (a
        # cache_write of an update fills its cache first): the copy goes
        # after the last, and holds what any of them writes
        writers = [k for k, (_, r) in enumerate(scope.children) if _writes(r.block, buf)]
        if len(writers) > 1 and _writes(realize.block, buf):
            _only_writer(chk, scope, buf)  # the block itself is one of them: nothing of it would read the copy
        writer = writers[-1] if writers else None
        if writer is not None and _all_read_before(site, scope, buf, consumers, writers[0]):
            # every block to redirect runs before the writers: they read
            # what the buffer holds on entry (TVM's in-place pattern: copy
            # in, compute, copy out), so the cache is filled first, as if
            # no block wrote the buffer
            writer = None
        if writer is not None:
            wpath, wrealize = scope.children[writer]
            if consumers:
                related = consumers
            else:
                related = {r.block.name_hint for _, r in scope.children[writer + 1:] if _reads(r.block, buf)}
            if related:
                loc, pos = _LocDetector(scope, wrealize.block.name_hint, related, site.index).run()
                if loc is None:
                    chk.stop(CacheStageOrderError, f"buffer {buf.name}",
                             f"none of the consumer blocks reads buffer {buf.name} after block "
                             f"{wrealize.block.name_hint!r} writes it, so the cache has no place to be "
                             "filled", wrealize)
                if pos == -1:
                    pos = 0
            else:
                loc, pos = scope.path, _end_position(scope.block)
            region = _writer_region(site, buf, wpath, wrealize, loc, memo, cut=False)
            dom = _outer_dom(site, path[:-1], scope.path) if len(writers) > 1 else None
            for other in writers[:-1]:
                opath, orealize = scope.children[other]
                # an earlier writer not under the place: its loops below
                # the statement around both are relaxed, the others are
                # the place's own
                more = _writer_region(site, buf, opath, orealize, _lca([opath, loc]), memo, cut=False)
                region = _union_region(region, more, buf, dom)
        else:
            loc, pos = scope.path, 0
            declared = _region_of(scope.block.reads, buf)
            region = list(declared.region if declared is not None else BufferRegion.full(buf).region)
            # a scope may declare more than the buffer holds where its
            # blocks read only under a guard (a padding stage): the copy
            # takes what is inside the buffer
            region = _clamped([Interval(r.min, fold_sub(fold_add(r.min, r.extent), IntImm(r.extent.dtype, 1)))
                               for r in region], buf, _outer_dom(site, path[:-1], scope.path))
        def select(block: Block, inherited: bool) -> str:
            if _writes(block, buf):
                return "skip"
            if not consumers:
                return "redirect"
            return "redirect" if block.name_hint in consumers else "keep"

        redirected = [r.block for _, r in scope.children if _reads(r.block, buf)
                      and select(r.block, False) == "redirect"]
        _check_no_address_taken(chk, subject, redirected, buf)
        pointer = _uses_pointer(redirected, buf)
        # the copy in runs just before the readers it serves, whose reads a
        # bound read at its place still covers: only the layout must not
        # depend on the buffer
        bounded = _check_region_bounds(chk, subject, site, scope, region, None, loc, pos, realize)
        full = (not isinstance(site.at(loc), Block) or not self._all_readers_under(scope, buf, loc)
                or _depends_on_outer_loops(site, scope, region) or pointer or bounded)

        self._check_order(chk, site, scope, buf, loc, pos, select, writer)
        _check_view_scopes(chk, [r for _, r in scope.children], buf, self.storage_scope or "global",
                           select)
        if not full:
            _check_compact_shared(chk, subject, site, scope, buf, self.storage_scope, region)
        return _Plan(site, scope, buf, region, full, loc, pos, select, site.index.names, pointer=pointer)

    @staticmethod
    def _all_readers_under(scope: _Scope, buf: Buffer, loc: Path) -> bool:
        return all(_under(p, loc) for p, r in scope.children if _reads(r.block, buf))

    @staticmethod
    def _check_order(chk, site, scope, buf, loc, pos, select, writer):
        node, inner = _through_decls(site.at(loc).body, loc + (("body", None),))
        wrapped = not isinstance(node, SeqStmt)
        stage = inner + (("seq", pos if not wrapped else (0 if pos == 0 else 1)),)
        for k, (p, realize) in enumerate(scope.children):
            if not _reads(realize.block, buf) or select(realize.block, False) != "redirect":
                continue
            where = _shifted_path(p, inner, pos, wrapped)
            if _runs_before(where, stage) or (writer is not None and k < writer):
                chk.stop(CacheStageOrderError, f"block {realize.block.name_hint!r}",
                         f"the block reads buffer {buf.name} before the cache of it is filled "
                         f"(it runs before the copy, or before the block writing {buf.name}); "
                         "redirecting it to the cache would change what it reads", realize)

    def build(self, plan: _Plan) -> Outcome:
        scope_name = self.storage_scope or "global"
        taken = plan.taken
        cache = _cache_buffer(plan.orig, scope_name, plan.region, plan.full, taken, plan.pointer)
        # block names are a namespace of their own, as in TVM (block and buffer are both A_shared)
        stage_name = fresh_name(suffixed(plan.orig.name, scope_name), plan.site.index.blocks)
        stage, _ = _make_stage(plan.region, plan.orig, cache, is_read=True, full=plan.full, name=stage_name,
                               taken=_Both(taken, {cache.name, stage_name}))
        offsets = None if plan.full else [r.min for r in plan.region]
        realizes: list = []
        new_scope = _Rewriter(plan.scope, plan.orig, cache, offsets, plan.loc, plan.pos, stage, cache,
                              plan.select, stores=False, realizes=realizes).run()
        mod = commit(plan.site, plan.scope.path, new_scope,
                     derive=_one_stage_index(plan, cache, stage, offsets, realizes))
        return Outcome(mod, BlockRef(stage_name, plan.site.func_name))

    def python_args(self):
        return _python_args(self, "read_buffer_index")


@register
@attrs.frozen
class CacheWrite(Rewrite):
    """Write a buffer through a cache in another storage scope: the block
    writes a new buffer ``<buffer>_<scope>``, and a new block
    ``<buffer>_<scope>`` copies what it wrote back into the buffer. The
    given ``consumer_blocks`` (and the blocks directly under them) read the
    cache instead of the buffer.

    The copy goes inside the lowest loop that holds both the block and the
    first other reader of the buffer, just before that reader (at the end
    of the scope when there is none), and copies the region the block
    writes, relaxed over the loops between the block and that place. The
    cache has the buffer's shape when the copy sits in a loop, and the
    copied region's shape (indices rebased) when it sits in the scope block
    (the buffer's shape again when that region depends on loops around the
    scope block).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError)
       and so do the consumer blocks, in the block's scope
       (ConsumerNotInScopeError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError); a
       ``shared`` cache allocated in a block that every thread of a
       threadIdx loop runs holds the same values for each thread
       (SharedScopeUnderThreadError: TVM lets the threads race on it);
    3. ``write_buffer_index`` is a position in the block's writes
       (BufferIndexOutOfRangeError), or a Buffer or buffer name it writes
       (BufferNotAccessedError);
    4. the block has an enclosing block (NoScopeBlockError);
    5. the block is the only block of the scope writing the buffer, or
       the last, the others running wholly before it, in no loop they
       share (NotSingleWriteBlockError; TVM asks for the only one, where
       tirfun's own fill of an earlier cache makes two);
    6. the given consumers run after the block (CacheStageOrderError);
    7. the given consumers read only elements the block writes, the only
       ones the cache holds (CacheWritePartialError; TVM lets such a
       consumer read the cache where nothing was stored).

    Where TVM's result would read the cache before anything is stored in
    it, the cache is filled from the buffer first, by a copy
    ``<cache>_fill`` placed just before the block (so no ScheduleError):
    the block reads an element of the buffer before writing it itself (an
    in-place update), a reduction block's init does not run in every fill
    of the cache (a later part of a partitioned reduction loop), or the
    block may leave elements of the region copied back unwritten (a
    predicate, a strided or opaque write). A composite block (what
    ``blockize`` makes) whose inner stages, loop nests around inner blocks,
    write every element of its region before any stage reads it needs no
    copy, as in TVM. Where the only gap is a loop that repeats the block
    and may run no iteration (a reduction over a run-time count ``n``, or
    its split under ``k_0 * 4 + k_1 < n``), the block writes all of the
    region or none of it: no fill then, and the copy back runs under
    ``T.where(0 < n)`` (TVM copies back a cache nothing wrote when ``n``
    is 0), unless a given consumer reads the cache. A block that takes the
    buffer's pointer (``B.data`` in an opaque call) writes through the
    cache's, and the cache is then laid out as the buffer.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        cache_write("B", 0, "local")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            B_local = T.alloc_buffer((8,), scope="local")
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B_local[vi] = A[vi] * T.float32(2)
            for ax0 in range(8):
                with T.block("B_local"):
                    v0 = T.axis.spatial(8, ax0)
                    B[v0] = B_local[v0]
    """

    primitive = "cache_write"

    block: object = attrs.field(converter=as_block_ref)
    write_buffer_index: object = 0
    storage_scope: object = "global"
    consumer_blocks: object = attrs.field(default=None, converter=_as_refs)

    def plan(self, mod, chk: Checks):
        subject = describe(self.block)
        refs = [self.block, *(self.consumer_blocks or ())]
        site = resolve_site(chk, mod, refs)
        path = resolve_block(chk, site, self.block)
        check_storage_scope(chk, self.storage_scope)
        realize = site.at(path[:-1])
        buf = access_buffer(chk, realize.block, realize, self.write_buffer_index, "write")
        scope = _scope_of(chk, site, path, subject, buf)
        _check_no_loose_writer(chk, site, scope, buf, subject, realize, placed_by_blocks=True)
        consumers = _consumer_set(chk, site, scope, self.consumer_blocks, buf, path)
        name = realize.block.name_hint
        writer = _check_sole_writer(chk, scope, buf, realize, subject, writes_first=False, earlier=True)
        wpath, wrealize = scope.children[writer]
        # the consumers are children of the scope (checked above): the first
        # in program order that runs no later than the writer
        early = sorted({resolve_block(chk, site, ref)[:-1] for ref in self.consumer_blocks or ()},
                       key=functools.cmp_to_key(_program_order))
        for p in early:
            r = site.at(p)
            if _under(p, wpath):
                continue  # inside the block, which is redirected whole
            if p != wpath and not (_reads(r.block, buf) or _writes(r.block, buf)):
                continue  # a block that does not touch the buffer has nothing to redirect, as in TVM
            if p == wpath or _runs_before(p, wpath):
                chk.stop(CacheStageOrderError, f"block {r.block.name_hint!r}",
                         f"the consumer block runs before block {name!r} writes buffer {buf.name}; "
                         "it would read the cache before it is written", r)
        _check_no_reader_ahead(chk, scope, writer, buf, consumers)
        loc, pos = _copy_back_place(chk, site, scope, writer, buf, consumers)
        # a block that reads the buffer before writing it, whose init may not
        # run in every fill of the cache, or that may leave elements of the
        # copied region unwritten, would read or copy back uninitialised
        # elements (TVM's result then changes): the cache is filled from the
        # buffer first, just before the block, so it holds the buffer's values
        memo: dict = {}  # the loops above the block, asked by each question below
        # where the only gap is a loop that may run no iteration (a sum over
        # a run-time count), the block writes all of the region or none of
        # it: the copy back runs where every such loop runs, and no fill is
        # needed, unless a consumer reads the cache (it would read it unfilled)
        empty: list | None = None if _cache_readers(scope, consumers, buf) else []
        needs_fill = (_reads_before_writing(realize.block, buf) is not None
                      or _skipped_init(site, wpath, wrealize, loc) is not None
                      or _partial_write(site, buf, wpath, wrealize, loc, memo, empty) is not None)
        # (a fill, where one is needed for another reason, covers those loops too)
        guard = None if needs_fill or not empty else _positive_extents(empty)
        fill = _position_at(site, wpath, loc) if needs_fill else None
        _check_consumers_read_what_is_written(chk, site, scope, buf, wpath, wrealize, consumers,
                                              subject)
        region = _writer_region(site, buf, wpath, wrealize, loc, memo)
        redirected = [r.block for _, r in scope.children if r.block.name_hint in consumers or r is wrealize]
        _check_no_address_taken(chk, subject, redirected, buf)
        pointer = _uses_pointer(redirected, buf)
        bounded = _check_region_bounds(chk, subject, site, scope, region, wpath, loc, pos, realize)
        full = not isinstance(site.at(loc), Block) or not all(
            _under(p, loc) for p, r in scope.children if _reads(r.block, buf)) or _depends_on_outer_loops(
                site, scope, region) or pointer or bounded
        _check_reads_inside(chk, site, buf, wpath, wrealize, loc, region, memo, subject)

        def select(block: Block, inherited: bool) -> str:
            if block.name_hint in consumers or block.name_hint == name or inherited:
                return "redirect"
            return "skip"

        _check_view_scopes(chk, [r for _, r in scope.children], buf, self.storage_scope or "global",
                           select)
        check_per_thread_writes(chk, subject, site.func, [path[:-1]], buf, buf.storage_scope,
                                self.storage_scope or "global", f"the cache of buffer {buf.name}")
        check_copy_per_thread(chk, subject, site.func, path[:-1], loc, buf.storage_scope,
                              self.storage_scope or "global", f"the cache of buffer {buf.name}")
        if not full:
            _check_compact_shared(chk, subject, site, scope, buf, self.storage_scope, region,
                                  wrealize)
        return _Plan(site, scope, buf, region, full, loc, pos, select, site.index.names, fill, pointer, guard)

    def build(self, plan: _Plan) -> Outcome:
        scope_name = self.storage_scope or "global"
        taken = plan.taken
        cache = _cache_buffer(plan.orig, scope_name, plan.region, plan.full, taken, plan.pointer)
        # block names are a namespace of their own, as in TVM (block and buffer are both A_shared)
        stage_name = fresh_name(suffixed(plan.orig.name, scope_name), plan.site.index.blocks)
        fill, bound = None, set()
        if plan.fill is not None:
            # the fill runs first, so its loops take the first names
            fill_name = fresh_name(f"{stage_name}_fill", _Both(plan.site.index.blocks, {stage_name}))
            fill_stage, _ = _make_stage(plan.region, plan.orig, cache, is_read=True, full=plan.full,
                                        name=fill_name, taken=_Both(taken, {cache.name, stage_name, fill_name}))
            fill, bound = (plan.fill, fill_stage), _bound_names(fill_stage) | {fill_name}
        stage, _ = _make_stage(plan.region, plan.orig, cache, is_read=False, full=plan.full, name=stage_name,
                               taken=_Both(taken, {cache.name, stage_name} | bound))
        if plan.guard is not None:
            stage = append_predicate(stage, plan.guard)
        offsets = None if plan.full else [r.min for r in plan.region]
        realizes: list = []
        new_scope = _Rewriter(plan.scope, plan.orig, cache, offsets, plan.loc, plan.pos, stage, cache,
                              plan.select, stores=True, fill=fill, realizes=realizes).run()
        mod = commit(plan.site, plan.scope.path, new_scope,
                     derive=_one_stage_index(plan, cache, stage, offsets, realizes))
        return Outcome(mod, BlockRef(stage_name, plan.site.func_name))

    def python_args(self):
        return _python_args(self, "write_buffer_index")


# ------------------------------------------------------------------ reindex

def _buffer_spec(chk: Checks, block: Block, realize: BlockRealize, spec) -> tuple[str, Buffer]:
    """``("read" | "write", index)``, a Buffer or a buffer name, as the kind
    and the buffer (TVM's ``_normalize_buffer_arg``)."""
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] in ("read", "write"):
        return spec[0], access_buffer(chk, block, realize, spec[1], spec[0])
    if isinstance(spec, (Buffer, str)):
        name = spec if isinstance(spec, str) else spec.name
        found = [(kind, buf) for kind, _, buf in accesses_named(block, spec)]
        if not found:
            chk.stop(BufferNotAccessedError, f"block {block.name_hint!r}",
                     f"buffer {name} is neither read nor written by the block", realize)
        # as TVM's lookup: reads, then writes, the last match kept (a
        # reduction's output is the write)
        return found[-1]
    chk.stop(InvalidArgumentError, f"block {block.name_hint!r}",
             f"the buffer must be (\"read\" or \"write\", index), a Buffer or a buffer name, got {spec!r}")


def _access_indices(chk: Checks, block: Block, realize: BlockRealize, buf: Buffer) -> list[PrimExpr]:
    """The one index tuple every load and store of ``buf`` in the block's
    body uses (TVM's ReIndexCollector)."""
    found, nested = accesses_of(block.body, buf)
    if nested:
        chk.stop(NotLeafBlockError, f"block {block.name_hint!r}",
                 "the block is not a leaf block: it has blocks inside it", realize)
    views = [m.buffer.name for m in block.match_buffers if same_buffer(m.source.buffer, buf)]
    if views:
        # a view of a region of the buffer: the copy, laid out otherwise, holds no such region
        chk.stop(InvalidBufferAccessError, f"block {block.name_hint!r}",
                 f"buffer {buf.name} is viewed by the block's match_buffer {views[0]}; only a buffer the "
                 "block loads and stores can be reindexed", realize)
    if not found:
        chk.stop(InvalidBufferAccessError, f"block {block.name_hint!r}",
                 f"buffer {buf.name} should be accessed in the block through loads or stores; none found",
                 realize)
    if any(f != found[0] for f in found[1:]):
        chk.stop(InvalidBufferAccessError, f"block {block.name_hint!r}",
                 f"buffer {buf.name} should be accessed with the same indices everywhere in the block; "
                 "its accesses use different ones", realize)
    if any(i.dtype.lanes > 1 for i in found[0]):
        # one element per block instance is what the copy is indexed by
        chk.stop(InvalidBufferAccessError, f"block {block.name_hint!r}",
                 f"buffer {buf.name} is accessed with a vector index "
                 f"({', '.join(i.script() for i in found[0])}); only element accesses can be reindexed",
                 realize)
    return [simplify_affine(i) for i in found[0]]


def _top_position(site, scope: _Scope, block_path: Path, chk: Checks, realize) -> tuple[int, bool]:
    """The position in the scope block's body of the statement holding the
    block, which must sit under a chain of loops there, each the only
    statement of the one above but the innermost, which may hold other
    statements beside the block (as TVM's chain is checked); and whether it
    does."""
    body = scope.path + (("body", None),)
    rest = block_path[len(body):]
    pos = 0
    if rest and rest[0][0] == "seq":
        pos = rest[0][1]
        rest = rest[1:]
    node = site.at(block_path[:len(block_path) - len(rest)])
    siblings = False
    for k, step in enumerate(rest):  # down to the BlockRealize
        if isinstance(node, SeqStmt) and step[0] == "seq" and k == len(rest) - 1 and k > 0:
            siblings = True  # the innermost loop's statements, the block among them
            break
        if not isinstance(node, For) or step != ("body", None):
            chk.stop(ReindexNotChainError, describe(BlockRef(realize.block.name_hint)),
                     "the block must sit under a chain of loops, each the only statement of the one "
                     "above but the innermost, directly in its scope block", realize)
        node = node.body
    return pos, siblings


def _check_no_sibling_access(chk: Checks, site, scope: _Scope, pos: int, realize: BlockRealize, buf: Buffer,
                             kind: str, subject: str) -> None:
    """The copy of a reindexed buffer goes before (a read) or after (a
    write) the whole statement holding the block: another block in that
    statement writing the buffer (or, for a write, reading it too) would
    see or leave it otherwise than the block's own order says."""
    body = scope.path + (("body", None),)
    top = site.at(body + (("seq", pos),)) if isinstance(site.at(body), SeqStmt) else site.at(body)
    for _, node in walk_stmts(top):
        if not isinstance(node, Block) or node is realize.block:
            continue
        if _writes(node, buf) or (kind == "write" and _names_buffer(node.reads, buf)):
            chk.stop(ReindexNotChainError, subject,
                     f"block {node.name_hint!r}, in the loops the block shares with it, "
                     f"{'writes' if _writes(node, buf) else 'reads'} buffer {buf.name}; the reindexed "
                     f"copy, made {'before' if kind == 'read' else 'after'} those loops, would not keep "
                     "their order", realize, node)


def _dom_end(dom: Range) -> PrimExpr:
    """``fold_add(dom.min, dom.extent)``: the extent itself where the domain
    starts at a literal 0 of the extent's dtype (nearly every block's
    domain), which is the literal that sum folds to."""
    lo, extent = dom.min, dom.extent
    if type(lo) is IntImm and lo.value == 0 and type(extent) is IntImm and lo.dtype == extent.dtype:
        return extent
    return fold_add(lo, extent)


def _region_binds_let(region: BufferRegion) -> bool:
    """:func:`~tirfun.rewrites.index.binds_let` of a region, told without
    its walk where every end is a variable or a constant (a block's region
    nearly always): no Let sits there, as the walk does not enter the
    buffer."""
    if all(type(r.min) in _LEAVES and type(r.extent) in _LEAVES for r in region.region):
        return False
    return binds_let(region)


@attrs.frozen
class _ReindexPlan:
    site: object
    scope: _Scope
    block_path: Path
    realize: BlockRealize
    kind: str
    buf: Buffer
    indices: list
    covered: list
    pos: int


@register
@attrs.frozen
class ReIndex(Rewrite):
    """Read or write a buffer through a copy laid out by the block's own
    iteration variables: a new buffer ``<buffer>_reindex`` with one
    dimension per iteration variable the block's indices of the buffer use
    (extent ``min + extent`` of its domain), filled by a new block
    ``<buffer>_reindex`` just before the block's loop nest (a read) or
    copied back just after it (a write).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the buffer is ``("read" | "write", index)`` with an index in range
       (BufferIndexOutOfRangeError), or a Buffer or buffer name the block
       accesses (BufferNotAccessedError, InvalidArgumentError);
    3. the block has an enclosing block (NoScopeBlockError), is a leaf
       block (NotLeafBlockError), and sits under a chain of single-child
       loops directly in its scope (ReindexNotChainError);
    4. every load and store of the buffer in the block uses the same
       indices, and there is one (InvalidBufferAccessError);
    5. a reindexed read is not also written by the block
       (ReindexReadWrittenError), and its indices stay inside the buffer over
       the whole domain of the iteration variables
       (ReindexOutOfBoundsError), dividing only by values that are not zero
       there (ReindexUnsafeIndexError): the copy evaluates them at every
       point, where the block may evaluate them under a guard;
    6. a reindexed write is not read before the block writes it, nor
       accumulated onto where a reduction's init does not run
       (CacheWriteReadBeforeWriteError), and every element of the copy is
       written: the indices are distinct iteration variables that the
       block's loops take over their whole domains, the predicate keeping
       out only instances outside them (a split that does not divide)
       (CacheWritePartialError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vj, vi] * T.float32(2)

        # rewrite
        reindex("B", ("read", 0))

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            A_reindex = T.alloc_buffer((8, 4))
            for ax0, ax1 in T.grid(8, 4):
                with T.block("A_reindex_reindex"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    A_reindex[v0, v1] = A[v1, v0]
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A_reindex[vi, vj] * T.float32(2)
    """

    primitive = "reindex"

    block: object = attrs.field(converter=as_block_ref)
    buffer: object = attrs.field(default=("read", 0), converter=lambda v: tuple(v) if isinstance(v, list) else v)

    def plan(self, mod, chk: Checks):
        subject = describe(self.block)
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        realize = site.at(path[:-1])
        block = realize.block
        kind, buf = _buffer_spec(chk, block, realize, self.buffer)
        scope = _scope_of(chk, site, path, subject)
        # within the iteration domains, as TVM's analyzer reads them: a
        # variable that an index uses only as ``co // 64`` of ``co < 64``
        # does not lay out the copy
        indices = _access_indices(chk, block, realize, buf)
        if not all(type(i) is Var or type(i) is IntImm for i in indices):
            env = {}
            for iv in block.iter_vars:
                lo, extent = int_value(iv.dom.min), int_value(iv.dom.extent)
                if lo is not None and extent is not None:
                    env[iv.var] = (lo, lo + extent - 1)
            # a variable or a constant is its own simplification: only other indices are simplified
            indices = [simplify_expr(i, env) for i in indices]
        used = set()
        for i in indices:
            used |= var_names(i)
        covered = [iv for iv in block.iter_vars if iv.var.name in used]
        stray = used - {iv.var.name for iv in covered}
        if stray:
            # the copy stage sits in the scope, outside the loops between it
            # and the block: an index may not name those loops' variables
            stray &= {loop.loop_var.name for _, loop in loops_above(site, path[:-1])}
        if stray:
            chk.stop(ReindexIndexVariableError, subject,
                     f"the access to buffer {buf.name} uses {sorted(stray)[0]}, which is not an iteration "
                     "variable of the block but a loop's; the reindexed copy is laid out over the block's "
                     "iteration variables, outside that loop", realize)
        pos, siblings = _top_position(site, scope, path[:-1], chk, realize)
        if siblings:
            _check_no_sibling_access(chk, site, scope, pos, realize, buf, kind, subject)
        if kind == "read":
            if _writes(block, buf) or any(isinstance(n, BufferStore) and same_buffer(n.buffer, buf)
                                          for n in _stores_in(block)):
                chk.stop(ReindexReadWrittenError, subject,
                         f"the block also writes buffer {buf.name}; its writes would go to the reindexed "
                         "copy and be lost", realize)
            _check_copy_in_bounds(chk, subject, buf, indices,
                                  {**_enclosing_domains(site, path), **{iv.var: iv.dom for iv in covered}},
                                  realize, read_everywhere=lambda: _reads_every_point(
                                      site, path[:-1], realize, buf, indices, scope.path))
        else:
            _check_writes_first(chk, block, buf, subject, realize, "copy")
            _check_init_runs(chk, site, path[:-1], realize, scope.path, buf, subject, "copy")
            why = _incomplete_reindex_write(site, path[:-1], realize, indices, scope.path)
            if why is not None:
                chk.stop(CacheWritePartialError, subject,
                         f"the block may not write every element of the reindexed copy of {buf.name}: {why}",
                         realize)
        return _ReindexPlan(site, scope, path, realize, kind, buf, indices, covered, pos)

    def build(self, plan: _ReindexPlan) -> Outcome:
        site, block = plan.site, plan.realize.block
        taken = site.index.names
        new_name = fresh_name(suffixed(plan.buf.name, "reindex"), taken)
        shape = [_dom_end(iv.dom) for iv in plan.covered]
        new_buf = Buffer(new_name, shape, plan.buf.dtype, storage_scope=plan.buf.storage_scope)
        # TVM names the copy after the buffer it writes: a read's copy writes
        # the new buffer (block A_reindex_reindex), a write's the old one
        # (block B_reindex)
        stage_name = fresh_name(suffixed(new_name if plan.kind == "read" else plan.buf.name, "reindex"),
                                site.index.blocks)
        used: set = {new_name}
        loop_vars, vars_ = [], []
        for k, iv in enumerate(plan.covered):
            lv = Var(fresh_name(f"ax{k}", _Both(taken, used)), iv.var.dtype)
            used.add(lv.name)
            v = Var(fresh_name(f"v{k}", _Both(taken, used)), iv.var.dtype)
            used.add(v.name)
            loop_vars.append(lv)
            vars_.append(v)
        mapping = {iv.var: v for iv, v in zip(plan.covered, vars_)}
        target = [substitute_expr(i, mapping) for i in plan.indices]
        src, dst = (plan.buf, new_buf) if plan.kind == "read" else (new_buf, plan.buf)
        src_idx, dst_idx = (target, list(vars_)) if plan.kind == "read" else (list(vars_), target)
        stage_block = Block([IterVar(iv.dom, v, IterVarType.DataPar) for iv, v in zip(plan.covered, vars_)],
                            [BufferRegion(src, _points(src_idx))],
                            [BufferRegion(dst, _points(dst_idx))],
                            stage_name, BufferStore(dst, BufferLoad(src, src_idx), dst_idx))
        stage: Stmt = BlockRealize(loop_vars, IntImm("bool", 1), stage_block)
        for lv, iv in reversed(list(zip(loop_vars, plan.covered))):
            stage = For(lv, iv.dom.min, iv.dom.extent, ForKind.SERIAL, stage)
        # the block: every access of the buffer through the copy, at its own iteration variables
        own = [iv.var for iv in plan.covered]
        region = _points(own)
        body, plain = redirect_accesses(block.body, plan.buf, new_buf, own)
        init = None
        if block.init is not None:
            init, plain_init = redirect_accesses(block.init, plan.buf, new_buf, own)
            plain = plain and plain_init
        swapped = [r for r in list(block.reads) + list(block.writes) if same_buffer(r.buffer, plan.buf)] + \
            [m.source for m in block.match_buffers if same_buffer(m.source.buffer, plan.buf)]
        # the regions of the buffer give way to ones at plain variables: a
        # Let in them would take its name out of the function
        plain = plain and not any(_region_binds_let(r) for r in swapped)

        def swap(regions):
            return [BufferRegion(new_buf, region) if same_buffer(r.buffer, plan.buf) else r for r in regions]

        # statements, regions and views made through their checks: the
        # block's rules held and hold again, and it is copied
        new_block = _NEW_REINDEXED(
            block, body, init, pvector(swap(block.reads)), pvector(swap(block.writes)),
            pvector([MatchBufferRegion(m.buffer, BufferRegion(new_buf, region))
                     if same_buffer(m.source.buffer, plan.buf) else m for m in block.match_buffers]))
        rel = plan.block_path[len(plan.scope.path):]
        pos = plan.pos + (1 if plan.kind == "write" else 0)
        scope_block = plan.scope.block
        body = scope_block.body
        if type(body) is SeqStmt and rel[0] == ("body", None) and rel[1] == ("seq", plan.pos):
            # the block's nest and the stage next to it, in one new sequence
            # the nodes above the block (of the same iteration variables), copied where no check can fail
            nest = replace_at(body.seq[plan.pos], rel[2:], new_block, rebuild=rebuilt_above)
            new_realize = get_at(nest, rel[2:-1])
            body = body.with_items(plan.pos, plan.pos + 1, [stage, nest] if plan.kind == "read" else [nest, stage])
        else:
            scope_block = replace_at(scope_block, rel, new_block, rebuild=rebuilt_above)
            new_realize = get_at(scope_block, rel[:-1])
            body = _insert(scope_block.body, pos, stage)
        scope_block = _NEW_ALLOCATING(scope_block, body, scope_block.alloc_buffers.append(new_buf))
        mod = commit(site, plan.scope.path, scope_block, rebuild=rebuilt_above,
                     derive=_inserted_stage(site, plan, scope_block, new_realize, pos, stage, new_buf, plain))
        return Outcome(mod, BlockRef(stage_name, site.func_name))

    def python_args(self):
        return [py_value(self.block), f"buffer={py_value(self.buffer)}"]


#: reindex's block with the copy in its regions and views, and the scope's
#: block with the stage and the copy's allocation, copied unchecked (see build)
_NEW_REINDEXED = copier(Block, ("body", "init", "reads", "writes", "match_buffers"))
_NEW_ALLOCATING = copier(Block, ("body", "alloc_buffers"))


def _inserted_stage(site, plan: _ReindexPlan, scope_block: Block, new_realize: BlockRealize, pos: int,
                    stage: Stmt, new_buf: Buffer, plain: bool):
    """How :func:`~tirfun.rewrites.base.commit` derives the index
    after reindex: the stage inserted at ``pos`` of the scope's body, the
    copy allocated in the scope, and the block's realize rebuilt in place
    as ``new_realize`` (its statements where they were, binding the same names when its
    rewritten parts were ``plain``: see :mod:`.redirect`); None (the
    re-indexing of the scope) where the body is not a sequence below the
    scope block itself, or the block's rewrite was not plain."""
    old_body, new_body = plan.scope.block.body, scope_block.body

    def state(new_func):
        if not plain or type(old_body) is not SeqStmt or type(new_body) is not SeqStmt \
                or len(new_body.seq) != len(old_body.seq) + 1 or new_body.seq[pos] is not stage:
            return None
        seq_path = plan.scope.path + (("body", None),)
        return derive_insert_index(site.index, site.func, new_func, seq_path, pos, stage, allocs=[new_buf],
                                   rebuilt=[(plan.realize, new_realize)])

    return state


def _stores_in(block: Block):
    """Every statement of the block's init and body."""
    for part in ([block.init] if block.init is not None else []) + [block.body]:
        for s in stmt_nodes(part):
            yield s


def _incomplete_reindex_write(site, realize_path: Path, realize: BlockRealize, indices, top: Path) -> str | None:
    """Why the block may leave an element of a reindexed write unwritten, or None."""
    block = realize.block
    tops = []
    for stmt in ([block.init] if block.init is not None else []) + [block.body]:
        tops.extend(stmt.seq if isinstance(stmt, SeqStmt) else [stmt])
    if not any(isinstance(x, BufferStore) and x.predicate is None and list(x.indices) == list(indices)
               for x in tops):
        return "it does not store the buffer unconditionally"
    names = [i.name for i in indices if isinstance(i, Var)]
    if len(names) != len(indices) or len(set(names)) != len(names):
        return "its indices are not distinct iteration variables"
    bindings = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    # the indices in loop variables, substituted only if a loop may not run
    why = _loop_that_may_not_run(site, realize_path, top, (substitute_expr(i, bindings) for i in indices))
    if why is not None:
        return why
    why = _unbound_domain(site, realize_path, realize, names)
    if why is not None and _covers_domains(site, realize_path, realize, names, top):
        return None
    return why


def _reads_every_point(site, realize_path: Path, realize: BlockRealize, buf: Buffer, indices, top: Path) -> bool:
    """Whether the block, in its runs under ``top``, loads ``buf[indices]``
    at every point of the domains of the iteration variables the indices
    name: a load every run of its body evaluates
    (:func:`~.stage_writes.loads_unconditionally`), in instances that take
    every value of those domains (as a reindexed write's must). A copy
    reading ``buf`` there then reads nothing the block did not."""
    block = realize.block
    if not loads_unconditionally(block, buf, list(indices)):
        return False
    used = set().union(set(), *(var_names(i) for i in indices))
    names = [iv.var.name for iv in block.iter_vars if iv.var.name in used]
    bindings = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    if _loop_that_may_not_run(site, realize_path, top, [substitute_expr(i, bindings) for i in indices]) is not None:
        return False
    return _unbound_domain(site, realize_path, realize, names) is None \
        or _covers_domains(site, realize_path, realize, names, top)


def _unbound_domain(site, realize_path: Path, realize: BlockRealize, names) -> str | None:
    """Why the iteration variables ``names`` are not each bound, without a
    predicate, to a loop of their own running over their whole domain."""
    block = realize.block
    if _conjuncts(realize.predicate):
        return f"it has the predicate {realize.predicate.script()}"
    loops = {loop.loop_var.name: loop for _, loop in loops_above(site, realize_path)}
    seen = set()
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.var.name not in names:
            continue
        loop = loops.get(value.name) if isinstance(value, Var) else None
        if loop is None or loop.loop_var.name in seen or simplify_affine(fold_sub(loop.min, iv.dom.min)) != \
                IntImm(loop.min.dtype, 0) or simplify_affine(fold_sub(loop.extent, iv.dom.extent)) != \
                IntImm(loop.extent.dtype, 0):
            return (f"the iteration variable {iv.var.name} is not bound to a loop running over its "
                    "whole domain")
        seen.add(loop.loop_var.name)
    return None


def _covers_domains(site, realize_path: Path, realize: BlockRealize, names, top: Path) -> bool:
    """Whether the block instances that run under ``top`` (its loops, cut by
    its predicate: a split that does not divide) take every value of the
    iteration variables ``names`` in their domains (dataflow's lower bound
    of a region written at those variables)."""
    ivs = {iv.var.name: iv for iv in realize.block.iter_vars}
    if any(n not in ivs for n in names):
        return False  # an index reads a variable of an enclosing block: not shown
    chosen = [ivs[n] for n in names]
    probe = Buffer("reindexed", [iv.dom.extent for iv in chosen], "int32")
    region = BufferRegion(probe, [Range(iv.var, IntImm(iv.var.dtype, 1)) for iv in chosen])
    got = produced_region(site, realize_path, realize, region, top)
    if got is None:
        return False
    for iv, g in zip(chosen, got):
        last = simplify_affine(fold_sub(fold_add(iv.dom.min, iv.dom.extent), IntImm(iv.dom.extent.dtype, 1)))
        if g.lo is None or g.hi is None or not (can_prove(LE(g.lo, iv.dom.min)) and can_prove(GE(g.hi, last))):
            return False
    return True


def reindex(block, buffer) -> ReIndex:
    """The :class:`ReIndex` record: ``reindex("B", ("read", 0))``."""
    return ReIndex(block, buffer)


# ------------------------------------------------------------------ cache_inplace

@attrs.frozen
class _InplacePlan:
    site: object
    scope: _Scope
    block_path: Path
    realize: BlockRealize
    buf: Buffer
    container: Path
    pos: int
    read_region: list
    write_region: list


@register
@attrs.frozen
class CacheInplace(Rewrite):
    """Cache a buffer that a block both reads and writes: a block
    ``<buffer>_<scope>`` copies what the block reads into a new buffer
    ``<buffer>_<scope>`` just before it, the block reads and writes the
    cache, and a second block copies what it wrote back just after it. Both
    copies sit inside the block's innermost loop. Returns the two copy
    blocks.

    Unlike TVM's, the copies take the block's declared regions in the loop
    variables around it (TVM copies them in the block's own iteration
    variables, which are not defined there).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError);
    3. ``read_buffer_index`` is a position in the block's reads
       (BufferIndexOutOfRangeError), or a Buffer or buffer name it reads
       (BufferNotAccessedError);
    4. the block has an enclosing block (NoScopeBlockError);
    5. every reader of the buffer reads only what the blocks writing it
       before have written (NotRegionCoverError);
    6. the block both reads and writes the buffer (NotReadWriteError);
    7. the region it writes lies within the region it reads, so the copy
       back copies only elements the cache holds (CacheWritePartialError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = B[vi] + A[vi]

        # rewrite
        cache_inplace("B", 0, "local")

        # after
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            B_local = T.alloc_buffer((8,), scope="local")
            for i in range(8):
                for ax0 in range(1):
                    with T.block("B_local"):
                        v0 = T.axis.spatial(8, i + ax0)
                        B_local[v0] = B[v0]
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B_local[vi] = B_local[vi] + A[vi]
                for ax0_1 in range(1):
                    with T.block("B_local_1"):
                        v0_1 = T.axis.spatial(8, i + ax0_1)
                        B[v0_1] = B_local[v0_1]
    """

    primitive = "cache_inplace"

    block: object = attrs.field(converter=as_block_ref)
    read_buffer_index: object = 0
    storage_scope: object = "global"

    def plan(self, mod, chk: Checks):
        subject = describe(self.block)
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        check_storage_scope(chk, self.storage_scope)
        realize = site.at(path[:-1])
        block = realize.block
        buf = access_buffer(chk, block, realize, self.read_buffer_index, "read")
        scope = _scope_of(chk, site, path, subject, buf)
        _check_no_loose_writer(chk, site, scope, buf, subject, realize)
        bad = _cover_violation(site, scope, buf)
        if bad is not None:
            chk.stop(NotRegionCoverError, f"block {scope.block.name_hint!r}",
                     f"the region cover of the scope is not complete: block {bad.block.name_hint!r} reads "
                     f"elements of buffer {buf.name} that the blocks writing it before do not write", bad)
        read, write = _region_of(block.reads, buf), _region_of(block.writes, buf)
        if read is None or write is None:
            chk.stop(NotReadWriteError, subject,
                     f"the block does not both read and write buffer {buf.name}", realize)
        loops = loops_above(site, path[:-1])
        container = loops[-1][0] if loops else scope.path
        below = path[:-1][len(container) + 1:]  # after ("body", None)
        pos = below[0][1] if below and below[0][0] == "seq" else 0
        dom = {loop.loop_var: Range(loop.min, loop.extent) for _, loop in loops}
        bindings = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
        read_iv = _bound(read, {}, bindings)
        write_iv = _bound(write, {}, bindings)
        if not (_plainly_covers([read_iv], write_iv) or region_covers([read_iv], write_iv, dom)):
            chk.stop(CacheWritePartialError, subject,
                     f"the region of {buf.name} the block writes, {write.script()}, does not lie within the "
                     f"region it reads, {read.script()}; the copy back would copy elements the cache does "
                     "not hold", realize)
        _check_view_scopes(chk, [block], buf, self.storage_scope or "global", lambda b, inherited: "redirect",
                           True)
        _check_copies_per_thread(chk, subject, loops, write_iv, buf, realize)
        check_per_thread_writes(chk, subject, site.func, [path[:-1]], buf, buf.storage_scope,
                                self.storage_scope or "global", f"the cache of buffer {buf.name}")
        _check_no_address_taken(chk, subject, [realize.block], buf)
        read_region = _clamped(read_iv, buf, dom)
        # the usual read-modify-write reads and writes one region: clamp it once
        write_region = read_region if write_iv == read_iv else _clamped(write_iv, buf, dom)
        return _InplacePlan(site, scope, path, realize, buf, container, pos, read_region, write_region)

    def build(self, plan: _InplacePlan) -> Outcome:
        site, buf = plan.site, plan.buf
        scope_name = self.storage_scope or "global"
        taken = site.index.names
        cache = _cache_buffer(buf, scope_name, plan.read_region, True, taken,
                              _uses_pointer([plan.realize.block], buf))
        base = suffixed(buf.name, scope_name)
        in_name = fresh_name(base, site.index.blocks)
        out_name = fresh_name(base, _Both(site.index.blocks, {in_name}))
        used = _Both(taken, {cache.name})
        stage_in, _ = _make_stage(plan.read_region, buf, cache, is_read=True, full=True, name=in_name,
                                  taken=used)
        names_in = _bound_names(stage_in)
        stage_out, _ = _make_stage(plan.write_region, buf, cache, is_read=False, full=True, name=out_name,
                                   taken=_Both(taken, names_in | {cache.name}))
        block = plan.realize.block
        select = (lambda b, inherited: "redirect")
        inner: list = []  # the BlockRealizes rebuilt below the block, (old, new)
        rewriter = _Rewriter(_Scope(plan.block_path, block, ()), buf, cache, None, (), 0, stage_in, cache,
                             select, stores=True, realizes=inner)
        new_block = rewriter.block(block, plan.block_path + (("x", None),), True)
        rel = plan.block_path[len(plan.scope.path):]
        scope_block = replace_at(plan.scope.block, rel, new_block)
        crel = plan.container[len(plan.scope.path):]
        holder = scope_block if not crel else _get(scope_block, crel)
        body = holder.body
        in_seq = isinstance(body, SeqStmt)
        items = list(body.seq) if in_seq else [body]
        item = items[plan.pos]
        items[plan.pos:plan.pos + 1] = [stage_in, item, stage_out]
        holder = with_fields(holder, body=SeqStmt(items))
        scope_block = holder if not crel else replace_at(scope_block, crel, holder)
        scope_block = with_fields(scope_block, alloc_buffers=list(scope_block.alloc_buffers) + [cache])
        # the item holding the block gave way to the two stages around its
        # rebuilt self: only those are walked to derive the index
        at = plan.container + (("body", None),) + ((("seq", plan.pos),) if in_seq else ())
        old_item = get_at(site.func, at)
        kept, rebuilt = None, ()
        if cache.data is None:
            # no pointer to replace: the item keeps its statements, and the
            # names they bind, where they were; only the buffers they name
            # changed (the block's realize, and those below it, rebuilt)
            rpath = plan.block_path[len(at):-1]
            kept, rebuilt = 1, [(plan.realize, get_at(item, rpath) if rpath else item)] + inner
        mod = commit(site, plan.scope.path, scope_block,
                     derive=lambda new_func: derive_scope_index(site.index, site.func, new_func, plan.scope.path,
                                                                [cache], at, in_seq, old_item,
                                                                [stage_in, item, stage_out], kept=kept,
                                                                rebuilt=rebuilt))
        return Outcome(mod, (BlockRef(in_name, site.func_name), BlockRef(out_name, site.func_name)))

    def python_args(self):
        return [py_value(self.block), py_value(self.read_buffer_index), py_value(self.storage_scope)]


def _get(root, path: Path):
    return get_at(root, path)


def _bound_names(stage: Stmt) -> set[str]:
    """The loop and iteration variable names a copy stage of
    :func:`_make_stage` binds: its loops', down to its one block, and the
    block's (below it only a store, which binds none)."""
    out = set()
    while type(stage) is For:
        out.add(stage.loop_var.name)
        stage = stage.body
    out.update(iv.var.name for iv in stage.block.iter_vars)
    return out


def cache_inplace(block, read_buffer_index, storage_scope) -> CacheInplace:
    """The :class:`CacheInplace` record: ``cache_inplace("B", 0, "local")``."""
    return CacheInplace(block, read_buffer_index, storage_scope)


# ------------------------------------------------------------------ reindex_cache_read / write

def _non_negative(e: PrimExpr) -> bool:
    """Whether ``e >= 0`` is proven: a literal is compared, anything else
    asked of the prover (which, for a literal, answers the comparison)."""
    if type(e) is IntImm and e.dtype.is_integer:
        return e.value >= 0
    return can_prove(GE(e, IntImm(e.dtype, 0)))


def as_index_map(value, dtype="int32"):
    """An index map as a record field: ``(params, results)``, two tuples of
    a map's parameter variables and of the expressions it gives. A Python
    function of the block's iteration variables (TVM's
    ``IndexMap.from_func``) is called once with variables named after its
    parameters; anything else is kept for the primitive to check."""
    if callable(value) and not isinstance(value, type):
        import inspect

        try:
            names = [p.name for p in inspect.signature(value).parameters.values()]
        except (TypeError, ValueError):
            return value
        params = tuple(Var(n, dtype) for n in names)
        try:
            out = value(*params)
        except Exception:  # a map that cannot be traced is reported by the primitive
            return value
        results = tuple(out) if isinstance(out, (list, tuple)) else (out,)
        return params, tuple(results)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return tuple(value[0]), tuple(value[1])
    return value


#: the most iterations :func:`_collision` enumerates
_COLLISION_POINTS = 4096


def _replays_instances(site, wpath: Path, wrealize: BlockRealize, loc: Path, buf: Buffer) -> bool:
    """Whether a reindexing cache's copy back, which re-runs the loops that
    feed the block's bindings under ``loc`` with its bindings and predicate,
    copies exactly the elements the block wrote into the cache: each
    instance stores its element of ``buf`` unconditionally, no condition or
    while loop between ``loc`` and the block skips instances the copy would
    run, and every loop the copy leaves out runs at least once. The block
    need not then write a dense box (``v = j + i`` over a triangle,
    overlapping tiles): the copy reads only what it wrote."""
    region = _region_of(wrealize.block.writes, buf)
    if region is None or not stores_unconditionally(wrealize.block, buf, [r.min for r in region.region]):
        return False
    below = len(loc) + 1 if wpath[:len(loc)] == loc else len(wpath)
    along = nodes_along(site.func, wpath)
    if any(isinstance(along[depth], (IfThenElse, While)) for depth in range(below, len(wpath))):
        return False
    return _loop_that_may_not_run(site, wpath, loc, wrealize.iter_values) is None


def _collision(old: list, new: list, touched: list, verb: str = "reads") -> str | None:
    """Where the map ``new`` of the iteration variables ``touched`` sends two
    points reading (or, ``verb``, writing) different elements (at ``old``) to
    one cache element, a description of them; None where it keeps them
    apart. A map that is not bijective is enumerated over a constant domain
    of at most :data:`_COLLISION_POINTS` points; any other is taken to
    collide."""
    extents = [int_value(iv.dom.extent) for iv in touched]
    starts = [int_value(iv.dom.min) for iv in touched]
    if None in extents or None in starts or math.prod(extents) > _COLLISION_POINTS:
        return ("over its symbolic or large domain, the map is not one that surely keeps them apart "
                "(a bijective affine map of the block's iteration variables)")
    seen: dict = {}
    for point in itertools.product(*[range(s, s + e) for s, e in zip(starts, extents)]):
        dom = {iv.var: Interval.point(IntImm(iv.var.dtype, v)) for iv, v in zip(touched, point)}
        at = tuple(int_value(eval_interval(e, dom).lo) for e in new)
        reads = tuple(int_value(eval_interval(e, dom).lo) for e in old)
        if None in at or None in reads:
            return "the map's indices do not evaluate to constants over the domain"
        other = seen.setdefault(at, (point, reads))
        if other[1] != reads:
            names = ", ".join(iv.var.name for iv in touched)
            return (f"({names}) = {other[0]} {verb} {list(other[1])} and ({names}) = {point} {verb} "
                    f"{list(reads)}, both cached at {list(at)}")
    return None


def _bijective(new: list, touched: list) -> bool:
    """Whether the mapped indices ``new`` give every point of the domains
    of the iteration variables ``touched`` its own element: a permutation
    of them is (:func:`_permutes`), else the bijective iterator map
    decides, over the domains as they are or widened to a multiple of the
    divisors in the map (:func:`_widened`): a map one-to-one on a larger
    box is so on the domain inside it (``(v // 4, v % 4)`` over 58 values)."""
    if _permutes(new, touched) or detect_iter_map(
            new, {iv.var.name: _DomLoop(iv) for iv in touched}, "bijective") is not None:
        return True
    wide = _widened(new, touched)
    return wide is not None and detect_iter_map(new, wide, "bijective") is not None


def _widened(new: list, touched: list) -> dict | None:
    """The domains of ``touched`` from 0 with each constant extent rounded
    up to a multiple of the least common multiple of the constant divisors
    of ``new`` (as :func:`_DomLoop` values), or None where there is no
    divisor, an extent or a start is not a constant 0-based one, or nothing
    would change."""
    divisors = [int_value(n.b) for e in new for n in walk(e) if isinstance(n, (FloorDiv, FloorMod))]
    if not divisors or any(d is None or d < 1 for d in divisors):
        return None
    step = math.lcm(*divisors)
    if step > 1 << 16:
        return None
    out, changed = {}, False
    for iv in touched:
        lo, extent = int_value(iv.dom.min), int_value(iv.dom.extent)
        if lo != 0 or extent is None or extent < 1:
            return None
        wide = -(-extent // step) * step
        changed = changed or wide != extent
        loop = _DomLoop(iv)
        loop.extent = IntImm(iv.dom.extent.dtype, wide)
        out[iv.var.name] = loop
    return out if changed else None


def _permutes(new: list, touched: list) -> bool:
    """Whether the mapped indices ``new`` are the iteration variables
    ``touched`` themselves, each once, in any order (the commonest index
    map, ``lambda vi, vj: (vj, vi)``): each index is then one whole domain
    and every domain is used, the bijective iterator map
    :func:`~tirfun.analysis.arith.detect_iter_map` finds, without asking."""
    return distinct_index_vars(new) and {v.name for v in new} == {iv.var.name for iv in touched}


def _check_index_map(chk: Checks, index_map, block: Block, realize) -> list[PrimExpr]:
    """The map applied to the block's iteration variables."""
    ok = (isinstance(index_map, tuple) and len(index_map) == 2
          and all(isinstance(v, Var) for v in index_map[0])
          and all(isinstance(e, PrimExpr) and e.dtype.is_integer for e in index_map[1]) and index_map[1])
    if not ok:
        chk.stop(InvalidArgumentError, f"block {block.name_hint!r}",
                 f"the index map must be a function of the block's iteration variables returning integer "
                 f"indices, or (params, results), got {index_map!r}")
    params, results = index_map
    if len(params) != len(block.iter_vars):
        chk.stop(InvalidArgumentError, f"block {block.name_hint!r}",
                 f"the index map takes {len(params)} variables, but the block has {len(block.iter_vars)} "
                 "iteration variables", realize)
    if any(p.dtype != iv.var.dtype for p, iv in zip(params, block.iter_vars)):
        mapping = {p: _cast(iv.var, p.dtype) for p, iv in zip(params, block.iter_vars)}
    else:
        mapping = {p: iv.var for p, iv in zip(params, block.iter_vars)}
    out = [simplify_affine(substitute_expr(e, mapping)) for e in results]
    names = {p.name for p in params}
    for e in results:
        extra = var_names(e) - names
        if extra:
            chk.stop(InvalidArgumentError, f"block {block.name_hint!r}",
                     f"the index map uses {sorted(extra)[0]}, which is not one of its variables", realize)
    return out


@attrs.frozen
class _ReindexCachePlan:
    site: object
    scope: _Scope
    buf: Buffer
    old: list
    new: list
    shape: list
    touched: list
    values: list
    loops: list
    predicate: PrimExpr
    loc: Path
    pos: int
    select: object


class _ReindexCacheBase(Rewrite):
    """Shared plan and build of reindex_cache_read and reindex_cache_write."""

    is_read = True

    def plan(self, mod, chk: Checks):
        subject = describe(self.block)
        site = resolve_site(chk, mod, [self.block])
        path = resolve_block(chk, site, self.block)
        check_storage_scope(chk, self.storage_scope)
        realize = site.at(path[:-1])
        block = realize.block
        kind = "read" if self.is_read else "write"
        buf = access_buffer(chk, block, realize, self._index(), kind)
        scope = _scope_of(chk, site, path, subject, buf)
        _check_no_loose_writer(chk, site, scope, buf, subject, realize)
        region = _region_of(block.reads if self.is_read else block.writes, buf)
        if any(not (isinstance(r.extent, IntImm) and r.extent.value == 1) for r in region.region):
            chk.stop(NotSinglePointAccessError, subject,
                     f"the region {region.script()} the block accesses is not a single point, which "
                     f"{self.primitive} requires", realize)
        old = [r.min for r in region.region]
        indices = _access_indices(chk, block, realize, buf)
        if indices != [simplify_affine(i) for i in old]:
            chk.stop(InvalidBufferAccessError, subject,
                     f"buffer {buf.name} should be accessed at its declared point "
                     f"[{', '.join(i.script() for i in old)}] everywhere in the block", realize)
        new = _check_index_map(chk, self.index_map, block, realize)
        old_names = set().union(*[var_names(i) for i in old])
        new_names = set().union(*[var_names(i) for i in new])
        touched, values = [], []
        for iv, value in zip(block.iter_vars, realize.iter_values):
            a, b = iv.var.name in old_names, iv.var.name in new_names
            if a != b:
                chk.stop(ReindexCacheReadWriteNotMatchError, subject,
                         f"the block iteration variable {iv.var.name} appears in "
                         f"[{', '.join(i.script() for i in (old if a else new))}] but not in "
                         f"[{', '.join(i.script() for i in (new if a else old))}]", realize)
            if a:
                touched.append(iv)
                values.append(value)
        # the cache holds every index the map gives over the touched domain
        dom = {iv.var: iv.dom for iv in touched}
        ends = _point_bounds(new, dom)
        if any(not iv.bounded or not _non_negative(iv.lo) for iv in ends):
            chk.stop(InvalidArgumentError, subject,
                     "the index map does not map the block's iteration domain to non-negative, bounded "
                     "indices", realize)
        shape = [fold_add(iv.hi, IntImm(iv.hi.dtype, 1)) for iv in ends]
        consumers = {block.name_hint}
        if self.is_read:
            if not _bijective(new, touched):
                clash = _collision(old, new, touched)
                if clash is not None:
                    chk.stop(IndexMapCollisionError, subject,
                             f"the index map sends different elements of buffer {buf.name} to one element of the "
                             f"cache: {clash}; the copy of one would overwrite the other", realize)
            writer = _only_writer(chk, scope, buf)
            if _writes(block, buf):
                chk.stop(ReindexReadWrittenError, subject,
                         f"the block also writes buffer {buf.name}; its writes would go to the cache and be "
                         "lost", realize)
            # the copy reads buf at the old indices over the whole touched
            # domain, where the block itself may read only under a condition
            # (a pad_einsum's or a padding stage's if_then_else)
            _check_copy_in_bounds(chk, subject, buf, old, {**_enclosing_domains(site, path), **dom},
                                  realize, ends if _same_literal_points(old, new, ends, dom) else None,
                                  read_everywhere=lambda: _reads_every_point(
                                      site, path[:-1], realize, buf, old, scope.path))
            if writer is not None and _all_read_before(site, scope, buf, consumers, writer):
                writer = None  # the block reads what the buffer holds on entry, as in cache_read
            if writer is not None:
                wname = scope.children[writer][1].block.name_hint
                loc, pos = _LocDetector(scope, wname, consumers, site.index).run()
                if loc is None:
                    chk.stop(CacheStageOrderError, subject,
                             f"the block does not read buffer {buf.name} after the block writing it",
                             realize)
                pos = max(pos, 0)
            else:
                loc, pos = scope.path, 0

            def select(b, inherited):
                if _writes(b, buf):
                    return "skip"
                return "redirect" if b.name_hint in consumers else "keep"
        else:
            writer = _check_sole_writer(chk, scope, buf, realize, subject)
            why = _partial_write(site, buf, path[:-1], realize, scope.path)
            if why is not None and _replays_instances(site, path[:-1], realize, scope.path, buf):
                why = None
            if why is None and not _bijective(new, touched):
                # the copy back runs the block's iterations, not the whole
                # cache: a map into part of it (v // 4, v % 4 over 7 values)
                # serves as long as no two iterations share an element
                clash = _collision(old, new, touched, "writes")
                if clash is not None:
                    why = f"the index map does not give every iteration its own element of the cache: {clash}"
            if why is not None:
                chk.stop(CacheWritePartialError, subject,
                         f"the block may not write every element of buffer {buf.name} that the copy back "
                         f"would copy: {why}", realize)
            _check_no_reader_ahead(chk, scope, writer, buf, set())
            loc, pos = _copy_back_place(chk, site, scope, writer, buf, set())
            _check_init_runs(chk, site, path[:-1], realize, loc, buf, subject, "cache")

            def select(b, inherited):
                return "redirect" if b.name_hint == block.name_hint or inherited else "skip"
        used = set().union(set(), *[var_names(v) for v in values])
        around = [(p, loop) for p, loop in loops_above(site, path[:-1]) if _under(p, loc)]
        # a loop whose bounds name another loop under the copy's place
        # (``for j in range(i, i + 4)``) takes that loop into the copy too
        while True:
            more = set().union(set(), *[var_names(loop.min) | var_names(loop.extent) for _, loop in around
                                        if loop.loop_var.name in used]) - used
            more &= {loop.loop_var.name for _, loop in around}
            if not more:
                break
            used |= more
        loops = [loop for p, loop in around if loop.loop_var.name in used]
        loop_names = {loop.loop_var.name for loop in loops}
        bound_between = names_bound_between(site.func, loc, path[:-1])
        stray = sorted((used & bound_between) - loop_names)
        if stray:
            # the copy re-creates the loops, not a launch_thread or a let
            chk.stop(ReindexIndexVariableError, subject,
                     f"the block's binding names {', '.join(stray)}, bound between the place of the copy "
                     "and the block by something other than a loop; the copy, which runs the loops "
                     "feeding the block's variables, would name it outside its scope", realize)
        # a bound of a constant or a variable loads nothing: most loops
        if any(type(lp.min) not in (IntImm, Var) or type(lp.extent) not in (IntImm, Var) for lp in loops):
            _check_bounds_at_copy(chk, subject, site, scope,
                                  [(p, lp) for p, lp in loops_above(site, path[:-1]) if any(lp is x for x in loops)],
                                  _stage_place(site, loc), pos, realize)
        predicate = realize.predicate
        # (a size it reads, ``k0 * ((n + 9) // 10) + k1 < n``, is known everywhere)
        if _conjuncts(predicate) and (var_names(predicate) & bound_between) - loop_names:
            chk.stop(ReindexOutOfBoundsError, subject,
                     f"the block's predicate {predicate.script()} depends on loops the copy does not run, "
                     "so the copy would reach past the block's domain", realize)
        if self.is_read:
            # as cache_read: a reader that runs before the copy, or before
            # the block writing the buffer, would read the cache unfilled
            CacheRead._check_order(chk, site, scope, buf, loc, pos, select, writer)
        _check_view_scopes(chk, [r for _, r in scope.children], buf, self.storage_scope or "global",
                           select)
        if not self.is_read:
            check_per_thread_writes(chk, subject, site.func, [path[:-1]], buf, buf.storage_scope,
                                    self.storage_scope or "global", f"the cache of buffer {buf.name}", new)
        # a cache element holds the buffer at the old indices, or what the
        # block stores there: neither may vary with the thread
        if (self.storage_scope or "").startswith("shared"):
            check_shared_allocation(chk, subject, site.func, scope.path, self.storage_scope,
                                    f"the cache of buffer {buf.name}",
                                    old if self.is_read else _written_values(realize, buf), realize,
                                    viewed=buf if self.is_read else None)
        return _ReindexCachePlan(site, scope, buf, old, new, shape, touched, values, loops, predicate, loc,
                                 pos, select)

    def build(self, plan: _ReindexCachePlan) -> Outcome:
        site = plan.site
        scope_name = self.storage_scope or "global"
        taken = site.index.names
        cache = Buffer(fresh_name(suffixed(plan.buf.name, scope_name), taken), plan.shape, plan.buf.dtype,
                       storage_scope=scope_name)
        stage_name = fresh_name(suffixed(plan.buf.name, scope_name), site.index.blocks)
        used = {cache.name}
        var_map = {}
        loop_vars = []
        for loop in plan.loops:
            lv = Var(fresh_name(loop.loop_var.name, _Both(taken, used)), loop.loop_var.dtype)
            used.add(lv.name)
            var_map[loop.loop_var] = lv
            loop_vars.append(lv)
        iter_vars = []
        for iv in plan.touched:
            v = Var(fresh_name(iv.var.name, _Both(taken, used)), iv.var.dtype)
            used.add(v.name)
            var_map[iv.var] = v
            iter_vars.append(IterVar(iv.dom, v, IterVarType.DataPar))
        values = [substitute_expr(v, var_map) for v in plan.values]
        old = [substitute_expr(i, var_map) for i in plan.old]
        new = [substitute_expr(i, var_map) for i in plan.new]
        src, dst = (plan.buf, cache) if self.is_read else (cache, plan.buf)
        s_idx, d_idx = (old, new) if self.is_read else (new, old)
        block = Block(iter_vars, [BufferRegion(src, _points(s_idx))],
                      [BufferRegion(dst, _points(d_idx))], stage_name,
                      BufferStore(dst, BufferLoad(src, s_idx), d_idx))
        stage: Stmt = BlockRealize(values, substitute_expr(plan.predicate, var_map), block)
        for loop, lv in reversed(list(zip(plan.loops, loop_vars))):
            stage = For(lv, substitute_expr(loop.min, var_map), substitute_expr(loop.extent, var_map),
                        ForKind.SERIAL, stage)
        rewriter = _IndexRewriter(plan.scope, plan.buf, cache, plan.new, plan.loc, plan.pos, stage, cache,
                                  plan.select, stores=not self.is_read)
        new_scope = rewriter.run()
        # the blocks redirected bind the same names where no Let sits in
        # them nor in the mapped indices that take the place of theirs
        plain = all(type(i) in _LEAVES or not binds_let(i) for i in plan.new) and \
            all(_plain_leaf(old) for old, _ in rewriter.rebuilt)
        state = _stage_in_sequence(site, plan.loc + (("body", None),), plan.pos, stage, cache,
                                   rewriter.rebuilt, plain)
        mod = commit(site, plan.scope.path, new_scope, derive=state)
        return Outcome(mod, BlockRef(stage_name, site.func_name))

    def python_args(self):
        return [py_value(self.block), py_value(self._index()), py_value(self.storage_scope),
                f"index_map={py_value(self.index_map)}"]


def _check_copies_per_thread(chk: Checks, subject: str, loops, region, buf: Buffer, node) -> None:
    """cache_inplace's copies sit beside the block, under every loop above
    it. Where one of those loops is bound to threadIdx and the region the
    block writes does not vary with it, the threads share that region (a
    reduction across them): each would copy it in and back while the
    others update it, a data race. TVM builds it as it is."""
    names = set().union(*[var_names(r.lo) | var_names(r.hi) for r in region])
    for _, loop in loops:
        launch = launch_of(loop)
        if launch is None or not launch[0].startswith("threadIdx") or int_value(loop.extent) == 1:
            continue
        if loop.loop_var.name not in names:
            chk.stop(ThreadOverlapError, subject,
                     f"the block writes the same elements of {buf.name} in every thread of loop "
                     f"{loop.loop_var.name!r} (bound to {launch[0]}), which it reduces across; the copies "
                     "in and back, placed beside it under that loop, would run in every thread while the "
                     "others update those elements (a data race)", node)


class _DomLoop:
    """An iteration variable's domain in the shape of a loop, for
    :func:`detect_iter_map`."""

    def __init__(self, iv):
        self.loop_var = iv.var
        self.min = iv.dom.min
        self.extent = iv.dom.extent


class _IndexRewriter(_Rewriter):
    """The rewriter of the reindexing caches: accesses of the buffer in the
    selected blocks go to the cache at the mapped indices, whatever indices
    they had (all equal, as checked)."""

    def __init__(self, scope, old, new, indices, loc, pos, stage, alloc, select, stores):
        indices = list(indices)
        super().__init__(scope, old, new, lambda: indices, loc, pos, stage, alloc, select, stores)
        self.rebuilt: list = []  # (old, new) of each BlockRealize rebuilt
        # where the cache has no pointer of its own, no variable changes and
        # a load of the buffer becomes one of the cache at the mapped
        # indices: what reindex's body walk gives, which rebuilds the usual
        # expression kinds itself instead of through map_children
        self.walk = expression_redirect(old, new, indices) if new.data is None else None

    def redirect(self, e):
        if self.walk is None:
            return super().redirect(e)
        return self.walk(e)

    def stmt(self, node: Stmt, path: Path, redirect: bool) -> Stmt:
        out = super().stmt(node, path, redirect)
        if type(node) is BlockRealize and out is not node:
            self.rebuilt.append((node, out))
        return out


def _plain_leaf(realize: BlockRealize) -> bool:
    """Whether a redirected block keeps the names it binds: its binding
    and predicate plain arithmetic (nothing there to redirect), and no Let
    in the block (see :func:`~tirfun.rewrites.index.leaf_binds_lets`)."""
    return all(type(v) in _LEAVES or plain_arithmetic(v) for v in realize.iter_values) \
        and (type(realize.predicate) in _LEAVES or plain_arithmetic(realize.predicate)) \
        and not leaf_binds_lets(realize.block)


def _stage_in_sequence(site, seq_path: Path, pos: int, stage: Stmt, alloc: Buffer, rebuilt: list, plain: bool):
    """How :func:`~tirfun.rewrites.base.commit` derives the index
    after a reindexing cache: the stage inserted at ``pos`` of the sequence
    at ``seq_path``, the cache allocated in the scope, the BlockRealizes
    ``rebuilt`` in place (binding the same names where ``plain``); None
    (the re-indexing of the scope) where the stage's place is not a
    sequence, or the rewrite was not plain."""
    def state(new_func):
        if not plain:
            return None
        old_body, new_body = get_at(site.func, seq_path), get_at(new_func, seq_path)
        if type(old_body) is not SeqStmt or type(new_body) is not SeqStmt \
                or len(new_body.seq) != len(old_body.seq) + 1 or new_body.seq[pos] is not stage:
            return None
        return derive_insert_index(site.index, site.func, new_func, seq_path, pos, stage, allocs=[alloc],
                                   rebuilt=rebuilt)

    return state


@register
@attrs.frozen
class ReindexCacheRead(_ReindexCacheBase):
    """Read a buffer through a cache laid out by an index map of the block's
    iteration variables: a new buffer ``<buffer>_<scope>`` of the map's
    shape over the block's domain, filled by a new block
    ``<buffer>_<scope>`` that runs the loops feeding the iteration variables
    the block's indices use, and read by the block at the mapped indices.

    ``index_map`` is a Python function of all the block's iteration
    variables returning the new indices (TVM's ``IndexMap.from_func``), or
    ``(params, results)``.

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError); a
       ``shared`` cache allocated in a block that every thread of a
       threadIdx loop runs holds the same values for each thread
       (SharedScopeUnderThreadError: TVM lets the threads race on it);
    3. ``read_buffer_index`` is a position in the block's reads
       (BufferIndexOutOfRangeError) or a buffer it reads
       (BufferNotAccessedError);
    4. the block has an enclosing block (NoScopeBlockError), is a leaf
       block (NotLeafBlockError), and reads one point of the buffer
       (NotSinglePointAccessError), the same everywhere
       (InvalidBufferAccessError);
    5. the index map is a function of the block's iteration variables
       giving non-negative bounded indices (InvalidArgumentError) that use
       exactly the iteration variables the old indices use
       (ReindexCacheReadWriteNotMatchError);
    6. at most one block writes the buffer (NotSingleWriteBlockError), it is
       not this block (ReindexReadWrittenError), and the block reads after
       it (CacheStageOrderError);
    7. the block's predicate depends only on loops the copy runs, and the
       old indices stay inside the buffer over the domain the copy runs
       (ReindexOutOfBoundsError), dividing only by values that are not zero
       there (ReindexUnsafeIndexError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vj, vi] * T.float32(2)

        # rewrite
        reindex_cache_read("B", 0, "shared", lambda vi, vj: (vi, vj))

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            A_shared = T.alloc_buffer((8, 4), scope="shared")
            for i_1, j_1 in T.grid(8, 4):
                with T.block("A_shared"):
                    vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                    A_shared[vi_1, vj_1] = A[vj_1, vi_1]
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A_shared[vi, vj] * T.float32(2)
    """

    primitive = "reindex_cache_read"
    is_read = True

    block: object = attrs.field(converter=as_block_ref)
    read_buffer_index: object = 0
    storage_scope: object = "global"
    index_map: object = attrs.field(default=None, converter=as_index_map)

    def _index(self):
        return self.read_buffer_index


@register
@attrs.frozen
class ReindexCacheWrite(_ReindexCacheBase):
    """Write a buffer through a cache laid out by an index map of the
    block's iteration variables: the block writes a new buffer
    ``<buffer>_<scope>`` at the mapped indices, and a new block
    ``<buffer>_<scope>`` copies it back before the buffer's next reader (at
    the end of the scope when there is none).

    Requirements, each with the error raised when it fails:

    1. the block exists (UnknownBlockError, RefKindError, UnknownFunctionError);
    2. the storage scope is one TVM knows (InvalidStorageScopeError); a
       ``shared`` cache allocated in a block that every thread of a
       threadIdx loop runs holds the same values for each thread
       (SharedScopeUnderThreadError: TVM lets the threads race on it);
    3. ``write_buffer_index`` is a position in the block's writes
       (BufferIndexOutOfRangeError) or a buffer it writes
       (BufferNotAccessedError);
    4. the block has an enclosing block (NoScopeBlockError), is a leaf
       block (NotLeafBlockError), and writes one point of the buffer
       (NotSinglePointAccessError), the same everywhere
       (InvalidBufferAccessError);
    5. the index map is a function of the block's iteration variables
       giving non-negative bounded indices (InvalidArgumentError) that use
       exactly the iteration variables the old indices use
       (ReindexCacheReadWriteNotMatchError);
    6. the block is the only writer of the buffer in its scope
       (NotSingleWriteBlockError), does not read an element before writing
       it nor accumulate onto it where its init does not run
       (CacheWriteReadBeforeWriteError), and writes every element it
       copies back, each to its own cache element (CacheWritePartialError);
    7. the block's predicate depends only on loops the copy runs
       (ReindexOutOfBoundsError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vj, vi] * T.float32(2)

        # rewrite
        reindex_cache_write("B", 0, "local", lambda vi, vj: (vj, vi))

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            B_local = T.alloc_buffer((4, 8), scope="local")
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B_local[vj, vi] = A[vj, vi] * T.float32(2)
            for i_1, j_1 in T.grid(8, 4):
                with T.block("B_local"):
                    vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                    B[vi_1, vj_1] = B_local[vj_1, vi_1]
    """

    primitive = "reindex_cache_write"
    is_read = False

    block: object = attrs.field(converter=as_block_ref)
    write_buffer_index: object = 0
    storage_scope: object = "global"
    index_map: object = attrs.field(default=None, converter=as_index_map)

    def _index(self):
        return self.write_buffer_index


def reindex_cache_read(block, read_buffer_index, storage_scope, index_map) -> ReindexCacheRead:
    """The :class:`ReindexCacheRead` record: ``reindex_cache_read("B", 0, "shared", lambda i, j: (j, i))``."""
    return ReindexCacheRead(block, read_buffer_index, storage_scope, index_map)


def reindex_cache_write(block, write_buffer_index, storage_scope, index_map) -> ReindexCacheWrite:
    """The :class:`ReindexCacheWrite` record: ``reindex_cache_write("B", 0, "local", lambda i, j: (j, i))``."""
    return ReindexCacheWrite(block, write_buffer_index, storage_scope, index_map)


def cache_read(block, read_buffer_index, storage_scope, consumer_blocks=None) -> CacheRead:
    """The :class:`CacheRead` record: ``cache_read("B", 0, "shared")``."""
    return CacheRead(block, read_buffer_index, storage_scope, consumer_blocks)


def cache_write(block, write_buffer_index, storage_scope, consumer_blocks=None) -> CacheWrite:
    """The :class:`CacheWrite` record: ``cache_write("B", 0, "local")``."""
    return CacheWrite(block, write_buffer_index, storage_scope, consumer_blocks)


__all__ = ["CacheRead", "cache_read", "CacheWrite", "cache_write", "ReIndex", "reindex", "CacheInplace",
           "cache_inplace", "ReindexCacheRead", "reindex_cache_read", "ReindexCacheWrite", "reindex_cache_write",
           "as_index_map", "STORAGE_RANKS", "check_storage_scope",
           "access_buffer"]
