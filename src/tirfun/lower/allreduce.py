"""Cross-thread reductions: a reduction over threads lowered to an all-reduce.

A reduction block whose reduction iteration variables take their values
from loops bound to ``threadIdx.*`` (``sch.bind(k, "threadIdx.x")`` on a
reduction loop) reduces across the threads of a thread block. TVM lowers
it in two passes (LowerCrossThreadReduction, then LowerThreadAllreduce);
:func:`lower_cross_thread_reductions` does both at once, on the TensorIR
before its blocks are lowered. The loops that feed the reduction
variables (the *reduction loops*) must be the innermost loops around the
block and hold nothing else, as TVM requires; then they become, in each
thread:

1. the thread's partial: a ``local`` buffer per reduced value set to the
   reducer's identity, then the serial reduction loops (when the reduction
   loop was split with an outer serial part) with the block updating the
   partial instead of the output;
2. the all-reduce of the partials over the threads that differ only in the
   reduction threads' indices (a *group*; threads bound to spatial loops
   form different groups), which leaves the result in every thread of the
   group;
3. the write-back: the result stored to the output by the first thread of
   the group (by every thread when the output is ``local``), under the
   spatial clauses of the block's predicate.

The all-reduce takes one of two forms, chosen from the launch shape:

* warp shuffles (``T.tvm_warp_shuffle_down``, ``llvm.nvvm.shfl.sync.down``
  in PTX) within each warp, then, when a group spans several warps, the
  warps' results through a ``shared`` buffer and shuffles in the group's
  first warp; used when the group's threads are consecutive lanes (the
  reduction is bound to the fastest thread dimensions) and groups do not
  straddle warps (one group, or groups a multiple of 32 threads, or a
  power of two that divides 32);
* otherwise a tree in a ``shared`` buffer with a barrier after each step.

Extents need not be multiples of 32 nor powers of two: a lane combines
only partners that exist (``lane + offset < count``), and a shuffle whose
partner is missing reads its own lane instead, so no thread ever reads a
lane outside the shuffle's mask. Shuffles name exactly the lanes present
in their warp.

**Order.** Both forms combine the partials ``p[0..R)`` of a group (``r``
the thread's index among the reduction threads, x fastest) in one order:
chunks of 32 consecutive ``r``, each reduced by :func:`tree_order`, then
the chunks' results by the same tree. ``tree_order(x)`` for ``n`` values
takes ``P`` the power of two at or above ``n`` and, for ``o`` from ``P/2``
down to 1, replaces ``x[i]`` by ``combine(x[i], x[i + o])`` for every
``i < o`` with ``i + o < n``; the result is ``x[0]``. A thread's partial
folds its own iterations in loop order starting from the identity. For
integer sums, products, min, max and bitwise reducers, and for argmax /
argmin with ties broken by index, any order gives the same bits, so the
lowered program computes exactly what the serial program does; float sums
round in this order, which the interpreter follows when it runs the
lowered program (``tirfun.lower(mod, "cuda")``), as the GPU does.

Where the lowering cannot keep the program's meaning it refuses with a
BuildError naming the block and the reason: reduction loops that are not
the innermost loops around the block, a reduction whose combiner matches no
known reducer, a launch with symbolic thread extents, a reduction whose
first iteration (where its init runs) the predicate may exclude.
"""

from __future__ import annotations

import attrs

from ..analysis.arith import simplify_expr
from ..analysis.traversal import ancestors, get_at, replace_at, stmt_nodes, walk, walk_stmts
from ..errors import BuildError
from ..nodes import (
    EQ, LT, Allocate, And, Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call,
    Cast, DeclBuffer, FloorDiv, FloorMod, For, ForKind, IfThenElse, IntImm, IRModule,
    IterVarType, LetStmt, PrimFunc, Range, Select, SeqStmt, Var,
)
from ..nodes.reducer import CommReducer
from ._util import conjuncts, fresh_name, func_names, is_true, substitute, vars_in

#: threads per warp
WARP = 32
_THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
_I32 = "int32"
_FULL_MASK = 0xFFFFFFFF


def tree_order(values: list, combine) -> object:
    """The value the all-reduce computes from ``values`` (one per lane, in
    lane order) with ``combine(lower, higher)``: the reference of the order
    described in the module, for tests and for readers."""
    xs = list(values)
    n = len(xs)
    for o in _offsets(n):
        for i in range(min(o, n - o)):
            xs[i] = combine(xs[i], xs[i + o])
    return xs[0]


def allreduce_order(partials: list, combine) -> object:
    """The all-reduce of one group's ``partials`` (indexed by the reduction
    threads' index): chunks of 32 by :func:`tree_order`, then their results."""
    chunks = [tree_order(partials[c:c + WARP], combine) for c in range(0, len(partials), WARP)]
    return tree_order(chunks, combine)


def _offsets(n: int) -> list[int]:
    """``P/2, P/4, ..., 1`` for ``P`` the power of two at or above ``n``."""
    p = 1
    while p < n:
        p *= 2
    out = []
    while p > 1:
        p //= 2
        out.append(p)
    return out


def is_cross_thread(realize: BlockRealize, thread_vars) -> bool:
    """Whether ``realize`` reduces over one of ``thread_vars`` (variables of
    loops bound to ``threadIdx``)."""
    return any(iv.iter_type is IterVarType.CommReduce and vars_in(value) & thread_vars
               for iv, value in zip(realize.block.iter_vars, realize.iter_values))


def lower_cross_thread_reductions(mod: IRModule) -> IRModule:
    """Every cross-thread reduction of ``mod`` lowered to an all-reduce (see
    the module); the rest unchanged."""
    out = mod
    for name, func in mod.items():
        new = _lower_func(name, func) if isinstance(func, PrimFunc) else func
        if new is not func:
            out = out.with_function(name, new)
    return out


def _launch(s):
    from .cuda import launch_of

    return launch_of(s)


def _lower_func(name: str, func: PrimFunc) -> PrimFunc:
    sites = []
    for path, s in walk_stmts(func.body):
        if isinstance(s, BlockRealize):
            launches = [_launch(n) for _, n in ancestors(func.body, path)]
            thread_vars = {b[3] for b in launches if b is not None and b[0] in _THREAD_TAGS}
            if thread_vars and is_cross_thread(s, thread_vars):
                sites.append(path)
    if not sites:
        return func
    used = func_names(func)
    body = func.body
    # later sites first: a replacement keeps the paths of those before it
    for path in reversed(sites):
        body = _lower_site(name, body, path, used)
    return func.with_body(body)


# ------------------------------------------------------------------ the site

class _Reader:
    """Stands in for a rewrite's checks when the reducer is read: a failure
    is a BuildError."""

    def __init__(self, fname: str, block: str):
        self.fname, self.block = fname, block

    def stop(self, _cls, _subject, reason, *nodes):
        from .cuda import lines_of

        where = f"\n{lines_of(nodes[0], 6)}" if nodes else ""
        raise BuildError(f"function {self.fname}: block {self.block} reduces across threads, but "
                         f"{reason}{where}")


@attrs.frozen
class _Site:
    """A cross-thread reduction, checked: where its reduction loops start,
    those bound to threads and the serial ones, the reduction read from the
    block, the predicate's clauses over spatial variables, whether the
    outputs are local, and the threads' layout."""

    realize: BlockRealize
    top_path: tuple
    bound: tuple
    serial: tuple
    reading: object
    spatial_preds: tuple
    local_output: bool
    group: "_Group"


def _lower_site(fname: str, body, path, used: set) -> object:
    """``body`` with the cross-thread reduction at ``path`` lowered."""
    site = _check_site(fname, body, path)
    return replace_at(body, site.top_path, _build_site(site, _Names(used)))


def _check_site(fname: str, body, path) -> _Site:
    """The facts of the reduction at ``path``, or a BuildError saying why
    it cannot be lowered (see the module)."""
    from .cuda import lines_of

    realize = get_at(body, path)
    block = realize.block
    chain = ancestors(body, path)
    kernel_at = next((k for k, (_, n) in enumerate(chain) if _launch(n) is not None), None)
    subject = f"block {block.name_hint}"

    def refuse(reason: str, node=None):
        raise BuildError(f"function {fname}: {subject} reduces across threads, but {reason}:\n"
                         f"{lines_of(node if node is not None else realize, 8)}")

    if kernel_at is None:
        refuse("it is not inside a kernel")
    chain = chain[kernel_at:]
    extents = _thread_extents(chain[0][1], refuse)
    reduce_values = [v for iv, v in zip(block.iter_vars, realize.iter_values)
                     if iv.iter_type is IterVarType.CommReduce]
    spatial_values = [v for iv, v in zip(block.iter_vars, realize.iter_values)
                      if iv.iter_type is not IterVarType.CommReduce]
    reduce_vars = set().union(*(vars_in(v) for v in reduce_values))
    for _, n in chain:
        b = _launch(n)
        if b is not None and not isinstance(n, For) and b[3] in reduce_vars:
            refuse(f"its reduction variable comes from T.launch_thread(\"{b[0]}\"); bind a "
                   "reduction loop with T.thread_binding (sch.bind) instead", n)
        if b is not None and b[0].startswith("vthread"):
            refuse(f"it lies inside a loop bound to {b[0]}; virtual threads run one after "
                   "another in a thread, and the all-reduce needs every thread at once", n)
    # the reduction loops: the innermost loops, up to the outermost one
    # feeding a reduction variable, must all feed one (TVM's condition)
    above = [(p, n) for p, n in chain if not isinstance(n, SeqStmt)]
    loops = [(p, n) for p, n in above if isinstance(n, For)]
    feeding = [k for k, (_, n) in enumerate(loops) if n.loop_var in reduce_vars]
    segment = loops[feeding[0]:]
    if len(feeding) != len(segment):
        between = next(n for _, n in segment if n.loop_var not in reduce_vars)
        refuse("the loops that feed its reduction variables are not the innermost loops around "
               f"it: loop {between.loop_var.name} lies between them; reorder the loops so that "
               "the reduction loops are innermost", segment[0][1])
    top_path, top = segment[0]
    if any(not isinstance(n, For) for p, n in above if len(p) >= len(top_path)):
        refuse("a statement other than its reduction loops lies between them and the block",
               top)
    others = [n for n in walk(top) if isinstance(n, BlockRealize) and n is not realize]
    if others or any(isinstance(n, SeqStmt) for p, n in chain if len(p) >= len(top_path)):
        refuse("it is not the only statement under its reduction loops", top)
    seg_loops = [n for _, n in segment]
    seg_vars = {l.loop_var for l in seg_loops}
    if any(vars_in(v) & seg_vars for v in spatial_values):
        refuse("a loop feeds both a spatial and a reduction variable")
    bound = [l for l in seg_loops if l.kind is ForKind.THREAD_BINDING]
    serial = [l for l in seg_loops if l.kind is not ForKind.THREAD_BINDING]
    for l in bound:
        if l.thread_binding not in _THREAD_TAGS:
            refuse(f"its reduction loop {l.loop_var.name} is bound to {l.thread_binding}; a "
                   "reduction may be bound to threadIdx.x/y/z only", l)
    if len({l.thread_binding for l in bound}) != len(bound):
        refuse("two of its reduction loops are bound to one thread tag", top)
    for l in serial:
        if not (isinstance(l.extent, IntImm) and l.extent.value > 0):
            refuse(f"its serial reduction loop {l.loop_var.name} has the extent {l.extent}, "
                   "which may be empty; the all-reduce needs loops of known, positive extent", l)
    reading = _read_reduction(fname, block, realize)
    scopes = {u.buffer.storage_scope.startswith("local") for u in reading.updates}
    if len(scopes) != 1:
        refuse("some of its outputs are local and others are not; TVM requires all or none")
    # the init runs where every reduction variable is at its start; the
    # lowering runs it unconditionally, so that instance must exist
    starts = {l.loop_var: l.min for l in seg_loops}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type is IterVarType.CommReduce:
            at = simplify_expr(substitute(value, starts))
            if not is_true(simplify_expr(EQ(at, iv.dom.min))):
                refuse(f"its reduction variable {iv.var.name} does not start at {iv.dom.min} "
                       "where its loops start")
    reducing, spatial_preds = [], []
    for c in conjuncts(realize.predicate):
        (reducing if vars_in(c) & seg_vars else spatial_preds).append(c)
    for c in reducing:
        if not is_true(simplify_expr(substitute(c, starts))):
            refuse(f"its predicate {c} may exclude the first reduction iteration, where the "
                   "init runs")
    # every thread of the block must reach the all-reduce
    thread_vars = {b[3] for b in map(_launch, (n for _, n in chain))
                   if b is not None and b[0] in _THREAD_TAGS}
    for p, n in chain:
        if len(p) >= len(top_path):
            break
        tests = ([n.condition] if isinstance(n, IfThenElse) else [n.min, n.extent]
                 if isinstance(n, For) and n.kind is not ForKind.THREAD_BINDING else
                 [n.predicate] if isinstance(n, BlockRealize) else [])
        if any(vars_in(t) & thread_vars for t in tests):
            refuse("a condition or loop around it depends on the thread index, so not every "
                   "thread of the block would take part in the all-reduce", n)
    group = _Group.of(extents, bound, chain, refuse)
    return _Site(realize, top_path, tuple(bound), tuple(serial), reading, tuple(spatial_preds),
                 scopes == {True}, group)


def _build_site(site: _Site, names: "_Names"):
    """The statement replacing the reduction loops of ``site``: in each
    thread, the partial, the all-reduce and the write-back."""
    realize, reading = site.realize, site.reading
    block = realize.block
    n = len(reading.updates)
    red = [names.buffer(f"red_buf{k}", u.buffer.dtype, 1, "local")
           for k, u in enumerate(reading.updates)]
    # 1. the thread's partial
    init = [BufferStore(red[k], reading.reducer.identity_element[k], [_i(0)]) for k in range(n)]
    in_block = Block(
        block.iter_vars, block.reads, [BufferRegion(b, [Range(_i(0), _i(1))]) for b in red],
        names.take(block.name_hint + "_in_thread"),
        _combine(reading.reducer, red, [_i(0)], [BufferLoad(b, [_i(0)]) for b in red],
                 list(reading.rhs), names),
        None, block.alloc_buffers, block.match_buffers, block.annotations)
    partial = BlockRealize(realize.iter_values, realize.predicate, in_block)
    for l in reversed(site.serial):
        partial = For(l.loop_var, l.min, l.extent, l.kind, partial, l.thread_binding,
                      l.annotations)
    # 2. the all-reduce
    collective, buffers = _allreduce(reading.reducer, red, site.group, names)
    # 3. the write-back
    values = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    write = [BufferStore(u.buffer, BufferLoad(r, [_i(0)]),
                         [substitute(i, values) for i in u.indices])
             for u, r in zip(reading.updates, red)]
    guard = list(site.spatial_preds)
    if not site.local_output:
        guard += [EQ(l.loop_var, l.min) for l in site.bound]
    back = _seq(write)
    if guard:
        back = IfThenElse(_conjoin(guard), back)
    new = SeqStmt(init + [partial] + collective + [back])
    for buf in reversed(red + buffers):
        new = Allocate(buf.data, buf.dtype, list(buf.shape), IntImm("bool", 1),
                       DeclBuffer(buf, new), scope=buf.storage_scope)
    for l in reversed(site.bound):
        new = For(l.loop_var, l.min, l.extent, l.kind, new, l.thread_binding, l.annotations)
    return new


def _read_reduction(fname: str, block: Block, realize: BlockRealize):
    """The reducer, updates and right-hand values of ``block`` (as rfactor
    reads them, which is how TVM reads a cross-thread reduction too)."""
    from ..rewrites.reduction import _recognise

    return _recognise(_Reader(fname, block.name_hint), block, realize)


def _thread_extents(kernel, refuse) -> dict:
    """The constant extent of each threadIdx tag of ``kernel``."""
    out = {}
    for s in stmt_nodes(kernel):
        bound = _launch(s)
        if bound is None or bound[0] not in _THREAD_TAGS:
            continue
        ext = bound[2]
        if not isinstance(ext, IntImm):
            refuse(f"the kernel's extent of {bound[0]} is the symbolic {ext}; the all-reduce "
                   "needs the thread block's shape", s)
        out.setdefault(bound[0], ext.value)
    return out


class _Group:
    """Where a thread stands: its linear index in the block, its index
    among the reduction threads (``r`` of ``R``) and its group's index
    (``g`` of ``G``); whether groups are consecutive lanes."""

    def __init__(self, tid, r, g, R, G, NT, contiguous):
        self.tid, self.r, self.g = tid, r, g
        self.R, self.G, self.NT, self.contiguous = R, G, NT, contiguous

    @staticmethod
    def of(extents: dict, bound: list, chain, refuse) -> "_Group":
        index = {}
        for _, n in chain:
            b = _launch(n)
            if b is not None and b[0] in _THREAD_TAGS and b[0] not in index:
                tag, lo, _ext, var = b
                v = var if var.dtype == _I32 else Cast(_I32, var)
                index[tag] = v if _is_zero(lo) else v - (lo if lo.dtype == _I32 else Cast(_I32, lo))
        reduce_tags = [l.thread_binding for l in bound]
        for l in bound:
            if isinstance(l.extent, IntImm) and l.extent.value != extents[l.thread_binding]:
                refuse(f"its loop {l.loop_var.name} is bound to {l.thread_binding} with extent "
                       f"{l.extent}, the kernel's is {extents[l.thread_binding]}", l)
        tid, r, g = _i(0), _i(0), _i(0)
        R = G = NT = 1
        last_reduce, first_other = -1, len(_THREAD_TAGS)
        for rank, tag in enumerate(_THREAD_TAGS):
            ext = extents.get(tag, 1)
            if ext == 1:
                continue
            if tag not in index:
                refuse(f"the kernel's threads along {tag} ({ext} of them) each run the "
                       "reduction, which no loop around it binds; bind a loop around it to "
                       f"{tag} or launch one thread along it")
            tid = tid + index[tag] * _i(NT) if NT > 1 else index[tag]
            NT *= ext
            if tag in reduce_tags:
                r = r + index[tag] * _i(R) if R > 1 else index[tag]
                R *= ext
                last_reduce = rank
            else:
                g = g + index[tag] * _i(G) if G > 1 else index[tag]
                G *= ext
                first_other = min(first_other, rank)
        return _Group(tid, r, g, R, G, NT, last_reduce < first_other)

    @property
    def warp_path(self) -> bool:
        """Whether the all-reduce goes through warp shuffles."""
        return self.contiguous and (self.G == 1 or self.R % WARP == 0
                                    or (self.R < WARP and WARP % self.R == 0))

    def mask(self):
        """The lanes present in the thread's warp, as a uint32 mask."""
        full = IntImm("uint32", _FULL_MASK)
        tail = self.NT % WARP
        if tail == 0:
            return full
        return Select(LT(self.tid, _i(self.NT - tail)), full, IntImm("uint32", (1 << tail) - 1))


class _Names:
    """Fresh names for the buffers, blocks and variables the lowering adds
    (``used`` grows with each)."""

    def __init__(self, used: set):
        self.used = used

    def take(self, base: str) -> str:
        name = fresh_name(base, self.used)
        self.used.add(name)
        return name

    def buffer(self, base: str, dtype, size: int, scope: str) -> Buffer:
        name = self.take(base)
        data = Var(self.take(name + "_data"), "handle")
        return Buffer(name, [_i(size)], dtype, storage_scope=scope, data=data)

    def var(self, base: str, dtype) -> Var:
        return Var(self.take(base), dtype)


def _allreduce(reducer: CommReducer, red: list, group: _Group, names: _Names):
    """The statements of the all-reduce of ``red`` (each thread's partial,
    the result left there) and the buffers they allocate."""
    if group.R == 1:
        return [], []
    if group.warp_path:
        return _warp_allreduce(reducer, red, group, names)
    return _shared_allreduce(reducer, red, group, names)


def _warp_allreduce(reducer, red, group: _Group, names: _Names):
    R, G = group.R, group.G
    tmp = [names.buffer(f"t{k}", b.dtype, 1, "local") for k, b in enumerate(red)]
    mask = group.mask()
    r = group.r
    stmts = []
    if R <= WARP:
        width = R if WARP % R == 0 else WARP
        stmts += _shuffle_tree(reducer, red, tmp, mask, r, _i(R), R, width, names)
        # the result from the segment's first lane to every lane
        stmts += [BufferStore(b, _shuffle("tir.tvm_warp_shuffle", mask, BufferLoad(b, [_i(0)]),
                                          _i(0), width), [_i(0)]) for b in red]
        return stmts, tmp
    nw = (R + WARP - 1) // WARP
    lane, warp = FloorMod(r, _i(WARP)), FloorDiv(r, _i(WARP))
    count = _i(WARP) if R % WARP == 0 else Select(LT(warp, _i(R // WARP)), _i(WARP),
                                                   _i(R % WARP))
    stage = [names.buffer(f"red_stage{k}", b.dtype, G * nw, "shared") for k, b in enumerate(red)]
    base = group.g * _i(nw) if G > 1 else _i(0)
    stmts += _shuffle_tree(reducer, red, tmp, mask, lane, count, WARP, WARP, names)
    stmts.append(IfThenElse(EQ(lane, _i(0)), _seq([
        BufferStore(s, BufferLoad(b, [_i(0)]), [_add(base, warp)]) for s, b in zip(stage, red)])))
    stmts.append(_barrier())
    second = [BufferStore(b, BufferLoad(s, [_add(base, lane)]), [_i(0)]) for s, b in zip(stage, red)]
    second = [IfThenElse(LT(lane, _i(nw)), _seq(second))]
    second += _shuffle_tree(reducer, red, tmp, mask, lane, _i(nw), nw, WARP, names)
    second.append(IfThenElse(EQ(lane, _i(0)), _seq([
        BufferStore(s, BufferLoad(b, [_i(0)]), [base]) for s, b in zip(stage, red)])))
    stmts.append(IfThenElse(EQ(warp, _i(0)), _seq(second)))
    stmts.append(_barrier())
    stmts += [BufferStore(b, BufferLoad(s, [base]), [_i(0)]) for s, b in zip(stage, red)]
    return stmts, tmp + stage


def _shuffle_tree(reducer, red, tmp, mask, lane, count, n: int, width: int, names):
    """``tree_order`` over the ``count`` lanes of each segment of ``width``
    lanes (``n`` bounds ``count``): each lane takes the partial ``offset``
    lanes down when that lane takes part, else its own."""
    out = []
    for o in _offsets(n):
        takes = LT(_add(lane, _i(o)), count)
        offset = Select(takes, _i(o), _i(0))
        out += [BufferStore(t, _shuffle("tir.tvm_warp_shuffle_down", mask,
                                        BufferLoad(b, [_i(0)]), offset, width), [_i(0)])
                for t, b in zip(tmp, red)]
        out.append(IfThenElse(takes, _combine(
            reducer, red, [_i(0)], [BufferLoad(b, [_i(0)]) for b in red],
            [BufferLoad(t, [_i(0)]) for t in tmp], names)))
    return out


def _shared_allreduce(reducer, red, group: _Group, names: _Names):
    R, G = group.R, group.G
    buf = [names.buffer(f"red_shared{k}", b.dtype, G * R, "shared") for k, b in enumerate(red)]
    r = group.r
    base = group.g * _i(R) if G > 1 else _i(0)
    stmts = [BufferStore(s, BufferLoad(b, [_i(0)]), [_add(base, r)]) for s, b in zip(buf, red)]
    stmts.append(_barrier())
    lane, warp = (FloorMod(r, _i(WARP)), FloorDiv(r, _i(WARP))) if R > WARP else (r, _i(0))
    count = (_i(min(R, WARP)) if R <= WARP or R % WARP == 0 else
             Select(LT(warp, _i(R // WARP)), _i(WARP), _i(R % WARP)))

    def step(at, other, cond):
        here = [_add(base, at)]
        there = [_add(base, other)]
        return [IfThenElse(cond, _combine(reducer, buf, here, [BufferLoad(s, here) for s in buf],
                                          [BufferLoad(s, there) for s in buf], names)),
                _barrier()]

    for o in _offsets(min(R, WARP)):
        stmts += step(r, _add(r, _i(o)), And(LT(lane, _i(o)), LT(_add(lane, _i(o)), count)))
    nw = (R + WARP - 1) // WARP
    for o in _offsets(nw):
        stmts += step(r * _i(WARP), (r + _i(o)) * _i(WARP),
                      And(LT(r, _i(o)), LT(_add(r, _i(o)), _i(nw))))
    stmts += [BufferStore(b, BufferLoad(s, [base]), [_i(0)]) for s, b in zip(buf, red)]
    return stmts, buf


# ------------------------------------------------------------------ helpers

def _combine(reducer: CommReducer, bufs, indices, lhs, rhs, names: _Names):
    """``bufs[indices] = reducer(lhs, rhs)``, through LetStmt values when
    several values combine, so each reads the old ones."""
    values = reducer(lhs, rhs)
    if len(bufs) == 1:
        return BufferStore(bufs[0], values[0], indices)
    lets = [names.var("v_" + b.name, v.dtype) for b, v in zip(bufs, values)]
    body = SeqStmt([BufferStore(b, v, indices) for b, v in zip(bufs, lets)])
    for var, value in reversed(list(zip(lets, values))):
        body = LetStmt(var, value, body)
    return body


def _shuffle(op: str, mask, value, lane, width: int):
    return Call(value.dtype, op, [mask, value, lane, _i(width), _i(WARP)])


def _barrier():
    from .thread_sync import barrier

    return barrier()


def _seq(stmts):
    return stmts[0] if len(stmts) == 1 else SeqStmt(stmts)


def _conjoin(conds):
    out = conds[0]
    for c in conds[1:]:
        out = And(out, c)
    return out


def _add(a, b):
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    return a + b


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _i(v: int) -> IntImm:
    return IntImm(_I32, v)


__all__ = ["lower_cross_thread_reductions", "is_cross_thread", "tree_order", "allreduce_order",
           "WARP"]
