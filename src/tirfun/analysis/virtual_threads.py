"""Virtual threads made into loops of their thread, split at the barriers.

A loop bound to ``vthread`` (``vthread.x``, ...) is a set of virtual threads
that one GPU thread runs. Where no barrier lies inside it, the thread runs
them one after another: the loop becomes a serial loop. Where one does, every
virtual thread must reach the barrier before any of them passes it, as real
threads do: the loop is pushed down through the statements above each
barrier and runs, in turn, each stretch between two barriers. This is TVM's
virtual-thread injection, limited to where it changes anything::

    for vt in T.thread_binding(2, thread="vthread.x"):      S[vt * 16 + tx] = A[...]
        S[vt * 16 + tx] = A[...]                  ->    T.tvm_storage_sync("shared")
        T.tvm_storage_sync("shared")                    for vt_1 in range(2):
        B[vt * 16 + tx] = S[31 - vt * 16 - tx]              B[vt_1 * 16 + tx] = S[31 - vt_1 * 16 - tx]
                                                   (the first stretch wrapped in ``for vt in range(2)``)

The loop passes down through sequences (each stretch between barriers gets a
loop of its own), through loops and conditions whose bounds do not depend on
the virtual thread (threadIdx loops included), lets, attributes and
allocations. A ``shared`` allocation is the thread block's whatever the
virtual thread; any other allocation inside the loop is each virtual
thread's own, so one that a barrier splits gets one copy per virtual thread
(its extent times their number, each virtual thread indexing its own part).
A stretch that does not depend on the virtual thread and stores nothing it
loads (a copy into shared memory that every virtual thread would repeat
alike) runs once, as TVM shares it.

A barrier under a loop or condition that depends on the virtual thread
cannot be reached by every virtual thread at once; :class:`Undistributable`
names it (the CUDA build turns it into a BuildError, the interpreter into an
InterpError).

The interpreter's GPU meaning applies the same pass before running a
function, and the CUDA lowering after placing barriers, so a lowered
program and the CUDA build agree on what virtual threads do. (It lives
here, below both, because it defines what virtual threads mean.)
"""

from __future__ import annotations

import attrs

from ..nodes import (
    Add, Allocate, AttrStmt, BlockRealize, Broadcast, BufferLoad, BufferStore, Call, Cast, DeclBuffer, Evaluate,
    For, ForKind, IfThenElse, IntImm, LetStmt, Mul, PrimExpr, PrimFunc, SeqStmt, Stmt, Sub, Var,
)
from .names import bound_names, fresh_name
from .threads import bound_var, is_sync, launch_of
from .traversal import map_children, stmt_children, substitute_vars, transform, walk

_SHARED = ("shared", "shared.dyn")


class Undistributable(Exception):
    """A barrier inside a virtual-thread loop that the loop cannot be split
    at; ``stmt`` is the statement in the way, ``why`` says why."""

    def __init__(self, stmt, why: str):
        super().__init__(why)
        self.stmt, self.why = stmt, why


def inject_virtual_threads(func: PrimFunc) -> PrimFunc:
    """``func`` with its virtual-thread loops made into serial loops, split
    at the barriers inside them; the same function when it has none."""
    if not any(_is_vthread(n) for n in walk(func.body)):
        return func
    return func.with_body(_Injector(bound_names(func)).host(func.body))


def _is_vthread(s) -> bool:
    b = launch_of(s) if isinstance(s, (For, AttrStmt)) else None
    return b is not None and b[0].startswith("vthread")


class _Barriers:
    """Which statements hold a barrier, each statement asked once: the
    injection asks it of a statement and again of each child as it pushes
    the loop down, which walking each time would make quadratic in the
    depth of the nest."""

    def __init__(self):
        # id -> (statement, answer): the statement is kept so that its id
        # is not reused by another while the table lives
        self.known: dict[int, tuple] = {}

    def __call__(self, s) -> bool:
        known = self.known
        hit = known.get(id(s))
        if hit is not None:
            return hit[1]
        stack = [(s, False)]
        while stack:
            node, children_done = stack.pop()
            if id(node) in known:
                continue
            kids = [child for _, child in stmt_children(node)]
            if children_done:
                answer = is_sync(node) or any(known[id(k)][1] for k in kids)
                known[id(node)] = (node, answer)
                continue
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in known)
        return known[id(s)][1]


def _seq(items: list) -> Stmt:
    # SeqStmt flattens nested sequences itself
    return items[0] if len(items) == 1 else SeqStmt(items)


@attrs.frozen
class _VT:
    """A virtual-thread loop being pushed down: its variable and bounds."""

    var: Var
    lo: PrimExpr
    ext: PrimExpr

    @staticmethod
    def of(s) -> "_VT":
        """The virtual-thread loop (or launched virtual thread) ``s``."""
        _tag, lo, ext = launch_of(s)
        return _VT(bound_var(s), IntImm(ext.dtype, 0) if lo is None else lo, ext)


@attrs.frozen
class _Expanded:
    """An allocation split by a barrier: one copy per virtual thread, each
    ``stride`` elements, selected by the virtual threads ``vts`` (outermost
    first) around it."""

    buffers: dict   # old buffer -> new buffer
    stride: PrimExpr
    vts: tuple


class _Injector:
    def __init__(self, used: set[str]):
        self.used = set(used)
        self.has_barrier = _Barriers()
        self.rebound: set = set()   # the variables a stretch has bound already

    # -------------------------------------------------------------- the host
    def host(self, node):
        """``node`` with each outermost virtual-thread loop injected (the
        kernels' first, then those inside thread-bound loops)."""
        if _is_vthread(node):
            return self.inject(node)
        if launch_of(node) is not None:
            return self.kernel(node)
        return map_children(node, lambda c: self.host(c) if isinstance(c, Stmt) else c)

    def kernel(self, node):
        """Inside a kernel: each outermost virtual-thread loop injected."""
        if _is_vthread(node):
            if not self.has_barrier(node.body):
                return _serial(node)
            return self.distribute((_VT.of(node),), node.body, (), {})
        return map_children(node, lambda c: self.kernel(c) if isinstance(c, Stmt) else c)

    def inject(self, node):
        """An outermost virtual-thread loop: a kernel when no thread-bound
        loop lies above it."""
        if not self.has_barrier(node.body):
            # a kernel of its own stays one (its thread runs the virtual
            # threads in turn), rather than becoming host code
            return attrs.evolve(node, body=_serial_inside(node.body))
        out = self.distribute((_VT.of(node),), node.body, (), {})
        if not any(launch_of(n) is not None for n in walk(out) if isinstance(n, (For, AttrStmt))):
            raise Undistributable(node, "the barrier lies in a kernel of virtual threads only, which "
                                        "has one thread: bind a loop to threadIdx")
        return out

    # ------------------------------------------------------- pushing the loop
    def distribute(self, vts: tuple, s, lets: tuple, expanded: dict):
        """``s`` run by the virtual threads ``vts``, split at its barriers.
        ``lets`` are the let bindings above ``s`` that depend on a virtual
        thread (each stretch evaluates them again), ``expanded`` the
        allocations made one per virtual thread."""
        if not self.has_barrier(s):
            return self.wrap(vts, s, lets, expanded)
        if is_sync(s):
            return s
        if _is_vthread(s):
            vt = _VT.of(s)
            self.refuse_dependent(s, vts, lets, expanded, (vt.lo, vt.ext), "the extent of this loop")
            return self.distribute(vts + (vt,), s.body, lets, expanded)
        if isinstance(s, SeqStmt):
            out, run = [], []
            for child in s.seq:
                if self.has_barrier(child):
                    if run:
                        out.append(self.wrap(vts, _seq(run), lets, expanded))
                        run = []
                    out.append(self.distribute(vts, child, lets, expanded))
                else:
                    run.append(child)
            if run:
                out.append(self.wrap(vts, _seq(run), lets, expanded))
            return _seq(out)
        if isinstance(s, For):
            self.refuse_dependent(s, vts, lets, expanded, (s.min, s.extent), "the bounds of this loop")
            return attrs.evolve(s, body=self.distribute(vts, s.body, lets, expanded))
        if isinstance(s, IfThenElse):
            self.refuse_dependent(s, vts, lets, expanded, (s.condition,), "this condition")
            then = self.distribute(vts, s.then_case, lets, expanded)
            other = None if s.else_case is None else self.distribute(vts, s.else_case, lets, expanded)
            return IfThenElse(s.condition, then, other)
        if isinstance(s, LetStmt):
            if self.depends(s.value, vts, lets, expanded):
                if any(isinstance(n, (BufferLoad, Call)) for n in walk(s.value)):
                    raise Undistributable(s, "the value of this let depends on the virtual thread "
                                             "and reads memory or calls a function, so it cannot be "
                                             "evaluated again after the barrier")
                return self.distribute(vts, s.body, lets + (s,), expanded)
            return LetStmt(s.var, s.value, self.distribute(vts, s.body, lets, expanded))
        if isinstance(s, Allocate):
            self.refuse_dependent(s, vts, lets, expanded, tuple(s.extents) + (s.condition,),
                                  "the size of this allocation")
            if s.scope in _SHARED:
                return attrs.evolve(s, body=self.distribute(vts, s.body, lets, expanded))
            return self.expand(vts, s, lets, expanded)
        if isinstance(s, DeclBuffer):
            buf = s.buffer
            if buf.data in expanded:
                new = expanded[buf.data].buffers.get(buf)
                if new is None:
                    raise Undistributable(s, "a second view of an allocation that each virtual "
                                             "thread needs its own copy of")
                return DeclBuffer(new, self.distribute(vts, s.body, lets, expanded))
            return DeclBuffer(buf, self.distribute(vts, s.body, lets, expanded))
        if isinstance(s, AttrStmt):
            # an attribute, or a thread launched inside (each thread runs its virtual threads)
            self.refuse_dependent(s, vts, lets, expanded, (s.value,), "this attribute")
            return AttrStmt(s.node, s.attr_key, s.value, self.distribute(vts, s.body, lets, expanded))
        if isinstance(s, BlockRealize) and _plain_block(s):
            # an opaque block (no iteration variables, init or buffers of
            # its own) around the barrier, as a TensorIR program writes one
            block = attrs.evolve(s.block, body=self.distribute(vts, s.block.body, lets, expanded))
            return attrs.evolve(s, block=block)
        raise Undistributable(s, f"a barrier inside a {type(s).__name__} under a loop bound to a "
                                 "vthread: the loop can be split at barriers only through "
                                 "sequences, loops, conditions, lets, allocations and opaque blocks")

    def expand(self, vts, s: Allocate, lets, expanded):
        """An allocation that a barrier splits: one copy per virtual thread."""
        if len(s.extents) != 1:
            raise Undistributable(s, "a multi-dimensional allocation that each virtual thread "
                                     "needs its own copy of; flatten the buffers first")
        count = 1
        for vt in vts:
            if not isinstance(vt.ext, IntImm):
                raise Undistributable(s, "an allocation that each virtual thread needs its own copy "
                                         f"of, under a virtual-thread loop of unknown extent {vt.ext}")
            count *= vt.ext.value
        stride = s.extents[0]
        total = Mul(stride, IntImm(stride.dtype, count)) if not isinstance(stride, IntImm) \
            else IntImm(stride.dtype, stride.value * count)
        buffers = {}
        for n in walk(s.body):
            if isinstance(n, Call) and any(a == s.buffer_var for a in n.args):
                raise Undistributable(n, f"a call given the address of {s.buffer_var.name}, an "
                                         "allocation that each virtual thread needs its own copy of")
            if isinstance(n, DeclBuffer) and n.buffer.data == s.buffer_var and n.buffer not in buffers:
                b = n.buffer
                if len(b.shape) != 1 or b.strides or (b.elem_offset is not None and not (
                        isinstance(b.elem_offset, IntImm) and b.elem_offset.value == 0)):
                    raise Undistributable(n, "a view of an allocation that each virtual thread needs "
                                             "its own copy of, which is not a plain flat buffer")
                buffers[b] = attrs.evolve(b, shape=[total])
        inner = {**expanded, s.buffer_var: _Expanded(buffers, stride, vts)}
        return attrs.evolve(s, extents=[total], body=self.distribute(vts, s.body, lets, inner))

    # ------------------------------------------------------------- a stretch
    def wrap(self, vts: tuple, s, lets: tuple, expanded: dict):
        """The stretch ``s`` run by every virtual thread of ``vts`` in turn:
        loops with fresh variables, the lets evaluated again, the copies of
        the expanded allocations selected. A stretch that does not depend on
        the virtual threads and is idempotent runs once."""
        s = _serial_inside(s)
        if not self.depends(s, vts, lets, expanded) and _idempotent(s):
            return s
        body = self.select(s, expanded)
        # the lets the stretch needs, evaluated again inside its loops
        needed = {n for n in walk(body) if isinstance(n, Var)}
        for let in reversed(lets):
            if let.var in needed:
                body = LetStmt(let.var, let.value, body)
                needed |= {n for n in walk(let.value) if isinstance(n, Var)}
        # each stretch binds the loop and let variables anew: the first keeps
        # their names, fresh names keep the others' unique
        mapping = {}
        for var in [vt.var for vt in vts] + [lt.var for lt in lets]:
            if var not in self.rebound:
                self.rebound.add(var)
                mapping[var] = var
                continue
            name = fresh_name(var.name, self.used)
            self.used.add(name)
            mapping[var] = Var(name, var.dtype)
        body = substitute_vars(body, mapping, enter_buffer=lambda _b: True)
        for vt in reversed(vts):
            body = For(mapping[vt.var], vt.lo, vt.ext, ForKind.SERIAL, body)
        return body

    def select(self, s, expanded: dict):
        """``s`` with each access to an expanded allocation moved to the
        copy of its virtual thread."""
        if not expanded:
            return s

        def offset_of(info: _Expanded, lanes: int) -> PrimExpr:
            index = None
            for vt in info.vts:
                rel = vt.var if isinstance(vt.lo, IntImm) and vt.lo.value == 0 else Sub(vt.var, vt.lo)
                index = rel if index is None else Add(Mul(index, vt.ext), rel)
            dt = info.stride.dtype
            if index.dtype != dt:
                index = Cast(dt, index)
            off = Mul(index, info.stride)
            return Broadcast(off, lanes) if lanes > 1 else off

        def post(n):
            if isinstance(n, (BufferLoad, BufferStore)) and n.buffer.data in expanded:
                info = expanded[n.buffer.data]
                new = info.buffers.get(n.buffer)
                if new is None:
                    raise Undistributable(n, "an access to an allocation that each virtual thread "
                                             "needs its own copy of, through a buffer not declared "
                                             "with it")
                (index,) = n.indices
                moved = [Add(index, offset_of(info, index.dtype.lanes))]
                if isinstance(n, BufferLoad):
                    return BufferLoad(new, moved, n.predicate)
                return BufferStore(new, n.value, moved, n.predicate)
            if isinstance(n, DeclBuffer) and n.buffer.data in expanded:
                new = expanded[n.buffer.data].buffers.get(n.buffer)
                return n if new is None else DeclBuffer(new, n.body)
            return n

        return transform(s, post)

    # ---------------------------------------------------------------- checks
    def depends(self, node, vts, lets, expanded) -> bool:
        """Whether ``node`` mentions a virtual thread, a let bound from one,
        or an expanded allocation."""
        names = {vt.var for vt in vts} | {lt.var for lt in lets}
        for n in walk(node):
            if isinstance(n, Var) and n in names:
                return True
            if isinstance(n, (BufferLoad, BufferStore)) and n.buffer.data in expanded:
                return True
        return False

    def refuse_dependent(self, s, vts, lets, expanded, exprs, what: str) -> None:
        if any(self.depends(e, vts, lets, expanded) for e in exprs):
            raise Undistributable(s, f"{what} depends on the virtual thread, so not every virtual "
                                     "thread reaches the barrier inside it")


def _plain_block(s) -> bool:
    """Whether ``s`` (a BlockRealize) binds nothing and holds no buffers."""
    b = s.block
    return (not s.iter_values and not b.iter_vars and b.init is None and not b.alloc_buffers
            and not b.match_buffers and isinstance(s.predicate, IntImm) and s.predicate.value == 1)


def _serial(node) -> Stmt:
    """A virtual-thread loop with no barrier inside: a serial loop."""
    vt = _VT.of(node)
    return For(vt.var, vt.lo, vt.ext, ForKind.SERIAL, _serial_inside(node.body))


def _serial_inside(s):
    """``s`` with every virtual-thread loop in it a serial loop (none holds a barrier)."""
    if not any(_is_vthread(n) for n in walk(s)):
        return s

    def post(n):
        return _serial(n) if _is_vthread(n) else n

    return transform(s, post)


def _idempotent(s) -> bool:
    """Whether running ``s`` again leaves memory as once did: it stores only
    into buffers it does not load, allocates nothing and calls nothing for
    its effect."""
    stored, loaded = set(), set()
    for n in walk(s):
        if isinstance(n, BufferStore):
            stored.add(n.buffer.data if n.buffer.data is not None else n.buffer)
        elif isinstance(n, BufferLoad):
            loaded.add(n.buffer.data if n.buffer.data is not None else n.buffer)
        elif isinstance(n, (Evaluate, Allocate)):
            return False
    return not stored & loaded


__all__ = ["inject_virtual_threads", "Undistributable"]
