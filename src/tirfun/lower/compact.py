"""Compacted allocations: each allocation moves down to where it is used
and shrinks to the region used there.

After :mod:`tirfun.lower.blocks`, an intermediate buffer of the root block
is allocated at the top of the function even when every use sits inside one
loop nest, as ``compute_at`` and ``reverse_compute_at`` leave it::

    C_local_data = T.allocate([64, 64], "float32", "local")
    C_local = T.decl_buffer((64, 64), data=C_local_data, scope="local")
    for i0, j0 in T.grid(16, 4):
        for k, i1, j1 in T.grid(64, 4, 16):
            C_local[i0 * 4 + i1, j0 * 16 + j1] = ...
        for i1, j1 in T.grid(4, 16):
            C[...] = C_local[i0 * 4 + i1, j0 * 16 + j1]

becomes, as TVM's ``PlanAndUpdateBufferAllocationLocation`` and
``CompactBufferAllocation`` make it::

    for i0, j0 in T.grid(16, 4):
        C_local_data = T.allocate([4, 16], "float32", "local")
        C_local = T.decl_buffer((4, 16), data=C_local_data, scope="local")
        for k, i1, j1 in T.grid(64, 4, 16):
            C_local[i1, j1] = ...
        ...

so a register tile is a small constant-size allocation that code generation
puts on the stack, where LLVM promotes it to registers.

An allocation moves into a loop only when that keeps the meaning of the
program: the regions that two different iterations of the loop touch must
be disjoint, or each iteration must write what it reads before reading it
(a producer placed inside the loop); then no value flows from one
iteration to another through the buffer, and a fresh buffer per iteration
computes the same (in a ``T.parallel`` loop it is what keeps the
iterations from racing on one buffer). It never moves into a
``T.vectorized`` loop: above it, a producer placed inside the loop keeps
an element per lane when its region follows the lane, and lanes that
would share elements make :mod:`tirfun.lower.vectorize` leave the loop
serial, so every lane computes what the interpreter does. A ``local``
buffer (one per thread) moves into threadIdx and blockIdx loops freely,
its region taken in one thread, and into a vthread loop as into a serial
loop (virtual threads are iterations of their thread's loop); a
``shared`` one (one per thread block) moves into loops bound to blockIdx
freely, its region taken in one block, and into loops bound to threadIdx
or vthread with its region taken over all their threads, as TVM's
``CompactBufferAllocation`` relaxes it; other scopes stay outside
thread-bound loops. Regions are
bounded by :func:`tirfun.analysis.arith.eval_interval` (the evaluation
``bound_region`` uses); accesses under tests are counted whole, which
may only make the region larger.

A ``buffer_dim_align`` annotation that :mod:`tirfun.lower.allocations`
put on an allocation (from ``storage_align``) is applied here, to the
final shape: the buffer gets padded strides and the allocation the
strided span, as TVM's ``CompactBufferAllocation`` does.
"""

from __future__ import annotations

from collections import Counter

import attrs

from ..analysis.arith import Affine, can_prove, detect_iter_map, expr_bounds, region_covers
from ..analysis.arith.int_set import Interval, eval_interval, intersect, substitute, union
from ..analysis.arith.int_set import simplify as simplify_index
from ..analysis.traversal import iter_children, transform, walk
from ..nodes import (
    GE, LE, LT, Allocate, And, AttrStmt, Block, BlockRealize, Broadcast, Buffer, BufferLoad, BufferStore,
    Call, DeclBuffer, For, ForKind, IfThenElse, IntImm, IRModule, LetStmt, Min, PrimExpr, PrimFunc, Range,
    SeqStmt, Sub, Var,
)
from ._util import map_funcs
from .allocations import DIM_ALIGN, aligned_strides, allocation_aligns
from .flatten import flat_size


def compact_allocations(mod: IRModule) -> IRModule:
    """Move every allocation to the innermost loop holding its uses and
    shrink it to the region touched there."""
    return map_funcs(mod, compact_func)


def compact_func(func: PrimFunc) -> PrimFunc:
    """Compact the allocations of one function (innermost first)."""
    if not any(isinstance(n, Allocate) for n in walk(func.body)):
        return func
    uses = _Uses()
    # every loop of the function (a loop variable is bound once): the loops
    # around an allocation bound the region's start in their variables (a
    # tile at ``j_0 * 32`` under ``for j_0 in range(32)``) wherever the
    # allocation sits below them
    loops = [n for n in walk(func.body) if isinstance(n, For)]
    bound = Counter(n.loop_var for n in loops)
    # a variable bound by two loops (not a verified function) has no one range
    uses.loops = {n.loop_var: _range(n) for n in loops if bound[n.loop_var] == 1}

    def post(n):
        return _compact(n, uses) if isinstance(n, Allocate) else n

    body = transform(func.body, post)
    return func if body is func.body else func.with_body(body)


class _Uses:
    """What each subtree names: the buffers it loads or stores, their data
    pointers, and the handle variables in it. Each allocation looks only
    into the subtrees that name its buffer or pointer, so compacting many
    allocations does not walk the whole function once per allocation.
    Memoised by node identity, the node kept alive beside its entry."""

    def __init__(self):
        self._memo: dict[int, tuple] = {}
        self.loops: dict = {}  # loop variable -> Range, for the whole function

    def of(self, node) -> frozenset:
        hit = self._memo.get(id(node))
        if hit is not None:
            return hit[1]
        if isinstance(node, Buffer):
            found = frozenset()
        else:
            parts = [self.of(c) for c in iter_children(node)]
            own = []
            if isinstance(node, (BufferLoad, BufferStore, DeclBuffer)):
                own.append(node.buffer)
                if node.buffer.data is not None:
                    own.append(node.buffer.data)
            elif isinstance(node, Var) and node.dtype.is_handle:
                own.append(node)
            elif isinstance(node, AttrStmt) and isinstance(node.node, Var):
                own.append(node.node)
            found = frozenset(own).union(*parts) if parts else frozenset(own)
        self._memo[id(node)] = (node, found)
        return found

    def walk(self, root, keys):
        """The nodes under ``root`` in subtrees naming one of ``keys``."""
        stack = [root]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(c for c in iter_children(n) if not isinstance(c, Buffer) and keys & self.of(c))


# --------------------------------------------------------------------------
# which allocations, and where to


def _compactable(alloc: Allocate, uses: _Uses):
    """The DeclBuffer under ``alloc`` that is the only view of its memory,
    or None when the allocation must stay as it is."""
    decl = alloc.body
    if not isinstance(decl, DeclBuffer) or decl.buffer.data != alloc.buffer_var:
        return None
    buf = decl.buffer
    if buf.strides or buf.axis_separators or len(alloc.extents) != len(buf.shape):
        return None
    offset = buf.elem_offset
    if offset is not None and not (isinstance(offset, IntImm) and offset.value == 0):
        return None
    if list(alloc.extents) != list(buf.shape):
        return None
    var = alloc.buffer_var
    for n in uses.walk(decl.body, {buf, var}):
        if isinstance(n, (BufferLoad, BufferStore)):
            if n.buffer == buf:
                continue
            if n.buffer.data == var:
                return None  # another view of the same memory
        elif isinstance(n, DeclBuffer) and n.buffer.data == var:
            return None
        elif isinstance(n, Call) and any(_names(a, buf, var) for a in n.args):
            # a pointer into the buffer (address_of, access_ptr, an extern
            # call given the data): its offsets are not the accesses' own
            if n.op not in _VALUE_CALLS:
                return None
        elif isinstance(n, Var) and n == var:
            return None
        elif isinstance(n, (Block, BlockRealize)):
            return None  # iteration variables bound inside: lower the blocks first
        elif isinstance(n, AttrStmt) and n.node == var:
            return None
    return decl


#: scopes whose buffers are one per thread block
_SHARED = ("shared", "shared.dyn")

#: calls whose buffer arguments are plain loads of values
_VALUE_CALLS = frozenset({"tir.if_then_else", "tir.likely"})


def _names(arg, buf, var) -> bool:
    return any((isinstance(n, (BufferLoad, BufferStore)) and n.buffer == buf) or n == var for n in walk(arg)
               if isinstance(n, (BufferLoad, BufferStore, Var)))


def _path_loops(body, buf, scope: str, uses: _Uses) -> list[For]:
    """The loops from ``body`` down to the innermost statement holding every
    access of ``buf``, stopping above a loop the allocation may not enter."""
    loops: list[For] = []
    node = body
    while True:
        if isinstance(node, For):
            if node.kind is ForKind.VECTORIZED:
                break
            if node.kind is ForKind.THREAD_BINDING and scope != "local" and scope not in _SHARED:
                break
            loops.append(node)
            node = node.body
        elif isinstance(node, SeqStmt):
            users = [s for s in node.seq if buf in uses.of(s)]
            if len(users) != 1:
                break
            node = users[0]
        elif isinstance(node, (LetStmt, DeclBuffer, Allocate)):
            node = node.body
        else:
            break
    return loops


# --------------------------------------------------------------------------
# regions


def _region(stmt, buf, uses: _Uses) -> list[Interval] | None:
    """The interval of each dimension of ``buf`` that ``stmt`` touches, in
    the variables bound outside ``stmt``; None when it cannot be bounded."""
    out: list[Interval] | None = None
    failed = False

    def visit(node, dom: dict, inner: frozenset):
        nonlocal out, failed
        if failed:
            return
        if isinstance(node, For):
            # a bound in a variable bound inside is relaxed in turn by
            # eval_interval
            dom = {**dom, node.loop_var: Interval.from_range(_range(node))}
            inner = inner | {node.loop_var}
            visit_children(node, dom, inner)
            return
        if isinstance(node, LetStmt):
            visit(node.value, dom, inner)
            visit(node.body, dom, inner | {node.var})
            return
        if isinstance(node, (BufferLoad, BufferStore)) and node.buffer == buf:
            if any(_uses(i, inner - set(dom)) for i in node.indices):
                failed = True  # a let variable bound inside: not analysed
                return
            dims = []
            for i in node.indices:
                iv = eval_interval(i, dom)
                if not iv.bounded or iv.lo.dtype.lanes != 1:
                    failed = True
                    return
                dims.append(Interval(simplify_index(iv.lo), simplify_index(iv.hi)))
            out = dims if out is None else [union(a, b) for a, b in zip(out, dims)]
        if isinstance(node, (Var, IntImm)):
            return
        visit_children(node, dom, inner)

    def visit_children(node, dom, inner):
        for child in iter_children(node):
            if not isinstance(child, Buffer) and buf in uses.of(child):
                visit(child, dom, inner)

    visit(stmt, {}, frozenset())
    if failed:
        return None
    return out


def _range(loop: For):
    return Range(loop.min, loop.extent)


def _uses(e, names) -> bool:
    if not names:
        return False
    return any(isinstance(n, Var) and n in names for n in walk(e))


def _disjoint_over(region: list[Interval], var: Var) -> bool:
    """Whether two different values of ``var`` give disjoint regions: some
    dimension is ``[c*var + r, c*var + r + k]`` with ``k < |c|``."""
    for iv in region:
        lo, hi = Affine.of(iv.lo), Affine.of(iv.hi)
        if lo is None or hi is None:
            continue
        c_lo = dict(lo.terms).get(var, 0)
        c_hi = dict(hi.terms).get(var, 0)
        if c_lo == 0 or c_lo != c_hi:
            continue
        diff = hi.plus(lo, -1)
        if any(_uses(t, {var}) for t, c in diff.terms if c):
            continue
        if diff.is_const and 0 <= diff.const < abs(c_lo):
            return True
    return False


def _relaxed(region: list[Interval], relax: dict) -> list[Interval] | None:
    """``region`` with the variables of ``relax`` (Var -> Interval) taking
    every value of their intervals; None where a bound is lost."""
    if not relax:
        return region
    out = []
    for iv in region:
        lo, hi = eval_interval(iv.lo, relax).lo, eval_interval(iv.hi, relax).hi
        if lo is None or hi is None:
            return None
        out.append(Interval(simplify_index(lo), simplify_index(hi)))
    return out


def _written_first(body, buf, uses: _Uses, relax: dict | None = None) -> bool:
    """Whether one run of ``body`` writes every element of ``buf`` that it
    reads before reading any: leading statements that only store into
    ``buf``, each a loop nest around one store at an index of the nest's
    variables (so exactly a box is written), cover what the rest reads."""
    while isinstance(body, (LetStmt, DeclBuffer, Allocate)):
        body = body.body
    stmts = list(body.seq) if isinstance(body, SeqStmt) else [body]
    boxes = []
    k = 0
    while k < len(stmts) and not any(isinstance(n, BufferLoad) and n.buffer == buf
                                     for n in uses.walk(stmts[k], {buf})):
        if buf in uses.of(stmts[k]):
            box = _written_box(stmts[k], buf)
            if box is None:
                return False
            boxes.append(box)
        k += 1
    if k == len(stmts) or not boxes:
        return False
    read = _region(SeqStmt(stmts[k:]) if len(stmts) - k > 1 else stmts[k], buf, uses)
    if read is not None and relax:
        read = _relaxed(read, relax)
    return read is not None and region_covers(boxes, read)


def _written_box(stmt, buf) -> list[Interval] | None:
    """The box a perfect loop nest around one store into ``buf`` writes
    exactly: the store's indices are a bijective iteration map of the nest's
    loops (what split, fuse and reorder leave), optionally under a test
    ``index < bound`` on whole indices (the predicate of a split that does
    not divide); or each index is ``loop_var + rest`` for a distinct loop or
    free of the nest's variables. None when neither holds."""
    loops: dict[Var, For] = {}
    while isinstance(stmt, For):
        if not (isinstance(stmt.min, IntImm) and isinstance(stmt.extent, IntImm)) or stmt.extent.value < 1:
            return None
        loops[stmt.loop_var] = stmt
        stmt = stmt.body
    guard = None
    if isinstance(stmt, IfThenElse) and stmt.else_case is None:
        guard, stmt = stmt.condition, stmt.then_case
    if not isinstance(stmt, BufferStore) or stmt.buffer != buf:
        return None
    box = _bijective_box(stmt.indices, loops)
    if box is None and guard is None:
        box = _plain_box(stmt.indices, loops)
    if box is None or guard is None:
        return box
    # a test on whole indices cuts the box: values below the bound are all
    # written, the others none
    for cond in _conjuncts(guard):
        if not isinstance(cond, LT) or _uses(cond.b, set(loops)):
            return None
        dims = [d for d, i in enumerate(stmt.indices) if i == cond.a]
        if not dims:
            return None
        d = dims[0]
        box[d] = Interval(box[d].lo, simplify_index(Min(box[d].hi, cond.b - IntImm(cond.b.dtype, 1))))
    return box


def _conjuncts(cond):
    if isinstance(cond, And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _bijective_box(indices, loops: dict) -> list[Interval] | None:
    if any(i.dtype.lanes != 1 for i in indices):
        return None
    sums = detect_iter_map(list(indices), {v.name: lp for v, lp in loops.items()}, "bijective")
    if sums is None:
        return None
    box = []
    for s, index in zip(sums, indices):
        span = 1
        for split in s.args:
            if split.extent is None:
                return None
            span = max(span, split.scale * split.extent)
        base = s.base
        if base.dtype != index.dtype:
            return None
        box.append(Interval(base, simplify_index(base + IntImm(base.dtype, span - 1))))
    return box


def _plain_box(indices, loops: dict) -> list[Interval] | None:
    box, seen = [], set()
    for index in indices:
        form = Affine.of(index) if index.dtype.lanes == 1 else None
        if form is None:
            return None
        mine = [(t, c) for t, c in form.terms if c and _uses(t, set(loops))]
        if not mine:
            box.append(Interval(index, index))
            continue
        if len(mine) != 1 or mine[0][1] != 1 or not isinstance(mine[0][0], Var) or mine[0][0] in seen:
            return None
        v = mine[0][0]
        if v.dtype != index.dtype:
            return None
        seen.add(v)
        loop = loops[v]
        rest = simplify_index(index - v)
        box.append(Interval(simplify_index(rest + loop.min),
                            simplify_index(rest + loop.min + IntImm(loop.min.dtype, loop.extent.value - 1))))
    return box


# --------------------------------------------------------------------------
# the rewrite


def _compact(alloc: Allocate, uses: _Uses):
    decl = _compactable(alloc, uses)
    if decl is None:
        return alloc
    out = _compacted(alloc, decl, uses)
    return _aligned(out, alloc.buffer_var, uses) if DIM_ALIGN in alloc.annotations else out


def _aligned(root, var: Var, uses: _Uses):
    """``root`` with the allocation of ``var`` (``root`` itself, or inside it
    once moved) given the strides its ``buffer_dim_align`` asks for, on the
    buffer's final shape: TVM aligns the compacted buffer. An allocation
    whose memory has other views keeps its layout (_compactable refuses it
    before this runs)."""
    found = [n for n in uses.walk(root, {var}) if isinstance(n, Allocate) and n.buffer_var == var]
    if not found:
        return root
    target = found[0]
    decl = target.body
    buf = decl.buffer
    strided = attrs.evolve(buf, strides=aligned_strides(buf.shape, allocation_aligns(target)))
    new = attrs.evolve(target, extents=[flat_size(strided)], annotations=target.annotations.remove(DIM_ALIGN),
                       body=DeclBuffer(strided, transform(decl.body, lambda n: _swap(n, buf, strided),
                                                          pre=lambda n: n if buf not in uses.of(n) else None)))
    if target is root:
        return new
    return transform(root, lambda n: new if n is target else n,
                     pre=lambda n: new if n is target else (n if var not in uses.of(n) else None))


def _swap(n, old, new):
    if isinstance(n, BufferLoad) and n.buffer == old:
        return BufferLoad(new, n.indices, n.predicate)
    if isinstance(n, BufferStore) and n.buffer == old:
        return BufferStore(new, n.value, n.indices, n.predicate)
    return n


def _compacted(alloc: Allocate, decl: DeclBuffer, uses: _Uses):
    """``alloc`` moved and shrunk where that keeps the meaning."""
    buf = decl.buffer
    whole = _region(decl.body, buf, uses)
    if whole is None:
        return alloc
    loops = _path_loops(decl.body, buf, buf.storage_scope, uses)
    place = None  # the loop whose body gets the allocation; None: here
    region = whole
    shared = buf.storage_scope in _SHARED
    # a thread's local memory and a thread block's shared memory are their
    # own wherever they are allocated in the kernel, so moving them into a
    # thread-bound loop needs no proof
    private = shared or buf.storage_scope == "local"
    relax: dict = {}  # thread loops of a shared buffer: its region is taken over all their threads
    for loop in loops:
        bound = loop.kind is ForKind.THREAD_BINDING
        if bound and not shared and loop.thread_binding.startswith("vthread"):
            # virtual threads are iterations of their thread's loop: a local
            # buffer moves in where a serial loop would let it
            bound = False
        if shared and bound and not loop.thread_binding.startswith("blockIdx"):
            relax[loop.loop_var] = Interval.from_range(_range(loop))
        inner = _region(loop.body, buf, uses)
        if inner is None:
            break
        inner = _relaxed(inner, relax)
        if inner is None:
            break
        if not (isinstance(loop.extent, IntImm) and loop.extent.value == 1) and not (private and bound) and \
                not _disjoint_over(inner, loop.loop_var) and not _written_first(loop.body, buf, uses, relax):
            break
        place, region = loop, inner
    outer = {lp.loop_var: _range(lp) for lp in loops[:loops.index(place) + 1]} if place else {}
    shape = _compact_shape(buf, region, {**uses.loops, **outer})
    if shape is None:
        return alloc
    mins, extents = shape
    unchanged = all(isinstance(m, IntImm) and m.value == 0 for m in mins) and \
        list(extents) == list(buf.shape)
    if place is None and unchanged:
        return alloc
    new_buf = attrs.evolve(buf, shape=extents)

    def rebase(n):
        if isinstance(n, BufferLoad) and n.buffer == buf:
            return BufferLoad(new_buf, _shifted(n.indices, mins), n.predicate)
        if isinstance(n, BufferStore) and n.buffer == buf:
            return BufferStore(new_buf, n.value, _shifted(n.indices, mins), n.predicate)
        return n

    def wrap(body):
        return attrs.evolve(alloc, extents=extents, body=DeclBuffer(new_buf, body))

    def untouched(n):
        return n if buf not in uses.of(n) else None

    if place is None:
        return wrap(transform(decl.body, rebase, pre=untouched))
    moved = attrs.evolve(place, body=wrap(transform(place.body, rebase, pre=untouched)))
    return transform(decl.body, lambda n: moved if n is place else n,
                     pre=lambda n: moved if n is place else untouched(n))


def _compact_shape(buf, region, outer):
    """The (min, extent) of each dimension of the compacted buffer, extents
    constant where the region's size is bounded by a constant; None when no
    dimension can shrink."""
    ranges = {v.name: _const_range(r) for v, r in outer.items()}
    ranges = {k: v for k, v in ranges.items() if v is not None}
    # a loop of one iteration (the last part of a partitioned loop) takes its
    # one value, so that a region clipped to the buffer folds to constants
    single = {v: IntImm(v.dtype, ranges[v.name][0]) for v in outer
              if v.name in ranges and ranges[v.name][0] == ranges[v.name][1]}
    if single:
        region = [Interval(_fold(iv.lo, single), _fold(iv.hi, single)) for iv in region]
    mins, extents = [], []
    for iv, dim in zip(region, buf.shape):
        dt = dim.dtype
        zero = IntImm(dt, 0)
        full_hi = IntImm(dt, dim.value - 1) if isinstance(dim, IntImm) else simplify_index(dim - IntImm(dt, 1))
        lo, hi = _as(iv.lo, dt), _as(iv.hi, dt)
        if lo is None or hi is None:
            mins.append(zero)
            extents.append(dim)
            continue
        if not _provable(GE(lo, zero), outer):
            lo = intersect(Interval(lo, hi), Interval(zero, full_hi)).lo
        if not _provable(LE(hi, full_hi), outer):
            hi = intersect(Interval(lo, hi), Interval(zero, full_hi)).hi
        ext = simplify_index(Sub(hi, lo) + IntImm(dt, 1))
        if not isinstance(ext, IntImm):
            bounds = expr_bounds(ext, ranges)
            if bounds is None:
                mins.append(zero)
                extents.append(dim)
                continue
            ext = IntImm(dt, bounds[1])
        if isinstance(dim, IntImm) and ext.value >= dim.value:
            mins.append(zero)
            extents.append(dim)
            continue
        if ext.value <= 0:
            return None  # never touched: leave it for the code that follows
        mins.append(lo)
        extents.append(ext)
    return mins, extents


def _fold(e: PrimExpr | None, values: dict) -> PrimExpr | None:
    return None if e is None else simplify_index(substitute(e, values))


def _const_range(r):
    if isinstance(r.min, IntImm) and isinstance(r.extent, IntImm):
        return r.min.value, r.min.value + r.extent.value - 1
    return None


def _provable(cond, outer) -> bool:
    return can_prove(cond, outer)


def _as(e: PrimExpr | None, dt) -> PrimExpr | None:
    if e is None:
        return None
    if e.dtype == dt:
        return e
    if isinstance(e, IntImm):
        return IntImm(dt, e.value)
    return e.astype(dt)


def _shifted(indices, mins):
    out = []
    for i, m in zip(indices, mins):
        if isinstance(m, IntImm) and m.value == 0:
            out.append(i)
            continue
        if i.dtype.lanes > 1:
            out.append(i - Broadcast(_as(m, i.dtype.element_of), i.dtype.lanes))
        else:
            out.append(simplify_index(i - _as(m, i.dtype)))
    return out


__all__ = ["compact_allocations", "compact_func"]
