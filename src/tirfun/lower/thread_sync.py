"""Barriers where threads of a block share data through shared memory.

Inside a kernel, a thread that reads a ``shared`` element another thread
wrote (or overwrites one another thread read) must be separated from it by
``T.tvm_storage_sync("shared")``, a barrier of the thread block. TVM's
thread-sync pass places them when it lowers a schedule; this pass does the
same, conservatively: it works on whole buffers, not elements, so it may
place a barrier that an index analysis would prove unneeded, never leave
one out where it can place it.

Each statement is summarised by the shared buffers it touches before its
first barrier (``head``), after its last (``tail``) and in all, and whether
every thread surely passes a barrier in it. In a sequence, a barrier goes
before a statement whose ``head`` conflicts (same buffer, one a read and
the other a write) with what ran since the last barrier; in a serial loop, one goes at
the start of the body when the end of an iteration conflicts with the start
of the next. Barriers are placed only where every thread of the block
arrives: never under a condition or in a loop whose bounds depend on the
thread index (or on memory). A conflict inside such a statement is left as
it is: the interpreter's GPU semantics reports it as a race if two threads
really meet there. Virtual threads count as threads here: a barrier may go
inside a ``vthread`` loop, which :mod:`tirfun.analysis.virtual_threads` splits
at it, so that every virtual thread reaches the barrier before any passes.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import walk
from ..nodes import (
    Allocate, AttrStmt, BufferLoad, BufferStore, Call, DeclBuffer, Evaluate, For, IfThenElse,
    IntImm, IRModule, LetStmt, PrimFunc, SeqStmt, StringImm,
)
from ._util import map_funcs, vars_in

_SHARED = ("shared", "shared.dyn")


def barrier() -> Evaluate:
    """``T.tvm_storage_sync("shared")``."""
    return Evaluate(Call("int32", "tir.tvm_storage_sync", [StringImm("shared")]))


def is_barrier(s) -> bool:
    """Whether ``s`` is a ``T.tvm_storage_sync`` of shared memory."""
    return (isinstance(s, Evaluate) and isinstance(s.value, Call)
            and s.value.op == "tir.tvm_storage_sync" and s.value.args
            and isinstance(s.value.args[0], StringImm)
            and s.value.args[0].value in ("shared", "shared.dyn"))


@attrs.frozen
class _Summary:
    head: frozenset
    tail: frozenset
    all: frozenset
    synced: bool  # every thread passes a barrier in it

    @staticmethod
    def plain(accesses: frozenset) -> "_Summary":
        return _Summary(accesses, accesses, accesses, False)


_EMPTY = _Summary(frozenset(), frozenset(), frozenset(), False)


def _conflict(a: frozenset, b: frozenset) -> bool:
    """Whether accesses ``b`` after ``a`` need a barrier: a read of what was
    written, or a write of what was read. Two writes need none, as in TVM's
    pass: two threads writing one element between barriers is a race that
    no barrier placement fixes (the interpreter reports it)."""
    for var, write in a:
        if (var, not write) in b:
            return True
    return False


def insert_thread_syncs(mod: IRModule) -> IRModule:
    """Place the barriers every kernel of ``mod`` needs (see the module)."""
    return map_funcs(mod, _func)


def _func(func: PrimFunc) -> PrimFunc:
    from .cuda import launch_of

    def host(node):
        if launch_of(node) is not None:
            return _Kernel().kernel(node)
        return _map_stmt_children(node, host)

    body = host(func.body)
    return func if body is func.body else func.with_body(body)


def _map_stmt_children(node, fn):
    from ..analysis.traversal import stmt_children

    children = list(stmt_children(node))
    if not children:
        return node
    updates = {}
    for (field, index), child in children:
        new = fn(child)
        if new is child:
            continue
        if index is None:
            updates[field] = new
        else:
            updates[field] = updates.get(field, getattr(node, field)).set(index, new)
    if not updates:
        return node
    out = attrs.evolve(node, **updates)
    return SeqStmt(list(out.seq)) if isinstance(out, SeqStmt) else out


class _Kernel:
    """The pass over one kernel: which variables differ between the threads
    of a block, and which buffers are shared."""

    def __init__(self):
        self.divergent: set = set()
        self.shared: set = set()

    def kernel(self, root):
        for n in walk(root):
            if isinstance(n, Allocate) and n.scope in _SHARED:
                self.shared.add(n.buffer_var)
        if not self.shared:
            return root
        return self.visit(root)[0]

    def uniform(self, *exprs) -> bool:
        for e in exprs:
            if vars_in(e) & self.divergent:
                return False
            if any(isinstance(n, (BufferLoad, Call)) and not _pure(n) for n in walk(e)):
                return False
        return True

    def accesses(self, node) -> frozenset:
        out = set()
        for n in walk(node):
            if isinstance(n, BufferStore) and n.buffer.data in self.shared:
                out.add((n.buffer.data, True))
            elif isinstance(n, BufferLoad) and n.buffer.data in self.shared:
                out.add((n.buffer.data, False))
        return frozenset(out)

    def visit(self, node):
        """``(node with barriers, its summary)``."""
        from .cuda import launch_of

        if is_barrier(node):
            return node, _Summary(frozenset(), frozenset(), frozenset(), True)
        bound = launch_of(node)
        if bound is not None:
            tag, _lo, _ext, var = bound
            # virtual threads share the block's memory as threads do: a
            # barrier inside their loop is one all of them reach, and
            # tirfun.analysis.virtual_threads splits the loop there
            if tag.startswith(("threadIdx", "vthread")):
                self.divergent.add(var)
            body, summary = self.visit(node.body)
            return _rebody(node, body), summary
        if isinstance(node, SeqStmt):
            return self.sequence(node)
        if isinstance(node, For):
            return self.loop(node)
        if isinstance(node, IfThenElse):
            if not self.uniform(node.condition):
                return node, _Summary.plain(self.accesses(node))
            then, ts = self.visit(node.then_case)
            if node.else_case is None:
                es, other = _EMPTY, None
            else:
                other, es = self.visit(node.else_case)
            out = attrs.evolve(node, then_case=then, else_case=other)
            return out, _Summary(ts.head | es.head, ts.tail | es.tail, ts.all | es.all,
                                 ts.synced and es.synced)
        if isinstance(node, LetStmt):
            if not self.uniform(node.value):
                self.divergent.add(node.var)
            body, summary = self.visit(node.body)
            return _rebody(node, body), _Summary(
                summary.head | self.accesses(node.value), summary.tail, summary.all
                | self.accesses(node.value), summary.synced)
        if isinstance(node, (Allocate, DeclBuffer, AttrStmt)):
            body, summary = self.visit(node.body)
            return _rebody(node, body), summary
        return node, _Summary.plain(self.accesses(node))

    def sequence(self, node: SeqStmt):
        out = []
        pending = frozenset()   # touched since the last barrier
        head = frozenset()
        every = frozenset()
        synced = False
        for child in node.seq:
            new, s = self.visit(child)
            if _conflict(pending, s.head):
                out.append(barrier())
                pending = frozenset()
                synced = True
            out.append(new)
            if not synced:
                head |= s.head
            every |= s.all
            if s.synced:
                synced = True
                pending = s.tail
            else:
                pending |= s.all
        return SeqStmt(out), _Summary(head, pending, every, synced)

    def loop(self, node: For):
        if not self.uniform(node.min, node.extent):
            self.divergent.add(node.loop_var)
            return node, _Summary.plain(self.accesses(node))
        body, s = self.visit(node.body)
        carried = _conflict(s.tail, s.head) if s.synced else _conflict(s.all, s.all)
        if carried:
            body = SeqStmt([barrier(), body])
            s = _Summary(frozenset(), s.tail, s.all, True)
        runs = isinstance(node.extent, IntImm) and node.extent.value > 0
        summary = s if runs else _Summary.plain(s.all)
        return attrs.evolve(node, body=body), summary


def _pure(n) -> bool:
    return not isinstance(n, BufferLoad) and not (isinstance(n, Call) and n.op in (
        "tir.tvm_thread_allreduce",))


def _rebody(node, body):
    return node if body is node.body else attrs.evolve(node, body=body)


__all__ = ["insert_thread_syncs", "barrier", "is_barrier"]
