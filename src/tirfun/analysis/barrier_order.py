"""What changes when a thread loop holding a barrier runs as a serial loop.

The iterations of a loop bound to ``threadIdx`` are threads: at a barrier
(``T.tvm_storage_sync``) each waits for the others, so every iteration's
accesses before the barrier come before any iteration's accesses after it.
``unroll`` takes the binding away, as TVM's does: one thread then runs the
iterations in turn, each past the barrier before the next one starts. Two
accesses to one element, by different iterations, in different phases (the
stretches between barriers), at least one of them a write, then happen in
the other order.

:func:`barrier_reordering` finds such a pair by running the loop's body on
paper: it enumerates the iterations of the loop and of the loops inside it
and evaluates every index, so what it reports is definite. Where the body
is beyond that (a range or an index that is not a constant once the loops
have values, a data-dependent index, a ``while`` loop, another thread axis
inside, iterations crossing different numbers of barriers, too many
accesses) it says so, and the caller decides. Virtual threads inside meet
at a barrier as threads do (TVM's virtual-thread injection splits their
bodies at it); threads around the loop run it side by side.
"""

from __future__ import annotations

import attrs

from ..nodes import (
    AttrStmt, Allocate, AssertStmt, Block, BlockRealize, Buffer, BufferLoad, BufferStore, Call, DeclBuffer, Evaluate,
    For, ForKind, IfThenElse, IntImm, IterVarType, LetStmt, SeqStmt, While,
)
from .arith.simplify import simplify_expr
from .threads import launched_iter_var
from .traversal import iter_children, substitute_vars

#: traces with more accesses than this are not followed
MAX_ACCESSES = 1 << 14


@attrs.frozen
class Reordering:
    """Two accesses to ``buffer[location]`` that a barrier orders one way
    and the serial loop the other (or not at all, in two threads): iteration
    ``first`` (a write when ``first_writes``) before the barrier, iteration
    ``second`` after it."""

    buffer: object
    location: tuple
    first: int
    first_writes: bool
    second: int
    second_writes: bool
    #: the threads of the two accesses (``tx=3``), where threads around run the loop
    first_thread: str = ""
    second_thread: str = ""
    #: whether the serial loop leaves them unordered (two threads, one stretch)
    unordered: bool = False


class Unknown(Exception):
    """The body is beyond the enumeration; the message says why."""


def has_barrier(stmt) -> bool:
    """Whether ``stmt`` holds a ``T.tvm_storage_sync`` call."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, Call) and node.op == "tir.tvm_storage_sync":
            return True
        stack.extend(iter_children(node))
    return False


def barrier_reordering(loop: For, around=()) -> Reordering | None:
    """A pair of accesses in ``loop``'s body (a loop of constant range)
    whose order changes when its iterations run in turn instead of as
    threads meeting at each barrier, or None where there is none.
    ``around`` holds the statements above the loop, outermost first: the
    loops and thread blocks among them are enumerated too, each of their
    iterations a run of the loop of its own. Threads or virtual threads
    around it run the loop side by side and meet at its barriers: each runs
    the iterations in turn, all of them crossing the barriers of iteration
    0, then those of iteration 1, and so on, so the accesses of one stretch
    of different threads stay unordered among themselves. Raises
    :class:`Unknown` where the body cannot be enumerated."""
    outer, threads = [], []
    for s in around:
        if isinstance(s, For):
            tag, var, lo, ext = s.thread_binding or "", s.loop_var, s.min, s.extent
        elif launched_iter_var(s) is not None:
            tag, var, lo, ext = s.node.thread_tag or "", s.node.var, IntImm(s.value.dtype, 0), s.value
        else:
            continue
        (threads if tag.startswith(("threadIdx", "vthread")) else outer).append((var, lo, ext))
    contexts = _enumerate(outer, [{}], "the loops around it")
    for env in contexts:
        found = _reordering_in(loop, env, _enumerate(threads, [env], "the threads around it"))
        if found is not None:
            return found
    return None


def _enumerate(loops, envs: list, what: str) -> list:
    """Every environment of ``envs`` extended with each value of the loops
    ``(var, min, extent)``, the outermost first."""
    for var, lo_e, ext_e in loops:
        grown = []
        for env in envs:
            lo, ext = _const(lo_e, env), _const(ext_e, env)
            grown.extend({**env, var: IntImm(var.dtype, v)} for v in range(lo, lo + ext))
            if len(grown) > MAX_ACCESSES:
                raise Unknown(f"{what} run more than {MAX_ACCESSES} times")
        envs = grown
    return envs


def _reordering_in(loop: For, env: dict, threads: list) -> Reordering | None:
    """:func:`barrier_reordering` for one iteration of the loops around,
    run by each thread of ``threads`` (their environments)."""
    lo, ext = _const(loop.min, env), _const(loop.extent, env)
    trace: list = []
    crossed = set()
    for q, tenv in enumerate(threads):
        for t in range(lo, lo + ext):
            tracer = _Tracer(trace, (q, t))
            tracer.stmt(loop.body, {**tenv, loop.loop_var: IntImm(loop.loop_var.dtype, t)})
            crossed.add(tracer.phase)
    if len(crossed) > 1:
        raise Unknown(f"its iterations cross different numbers of barriers ({sorted(crossed)})")
    per = crossed.pop() if crossed else 0
    by_element: dict = {}
    for seq, ((q, t), phase, buffer, location, writes) in enumerate(trace):
        # run in turn, iteration t crosses the barriers after those of the
        # iterations before it: its stretch p is the loop's (t - lo) * per + p
        by_element.setdefault((id(buffer), location), []).append(
            (phase, (t - lo) * per + phase, q, t, seq, writes, buffer))
    for (_, location), events in by_element.items():
        if not any(e[5] for e in events):
            continue
        for p1, n1, q1, t1, s1, w1, buffer in events:
            for p2, n2, q2, t2, s2, w2, _ in events:
                if not (p1 < p2 and (w1 or w2)):
                    continue  # only the barrier orders them: as threads, the earlier stretch first
                if n1 < n2 or (n1 == n2 and q1 == q2 and (t1, s1) < (t2, s2)):
                    continue  # still first
                return Reordering(buffer, location, t1, w1, t2, w2, _thread_names(threads[q1], env),
                                  _thread_names(threads[q2], env), n1 == n2)
    return None


def _thread_names(tenv: dict, env: dict) -> str:
    """The thread's values, ``tx=3``, where threads run the loop."""
    return ", ".join(f"{v.name}={c.value}" for v, c in tenv.items() if v not in env)


def _const(e, env) -> int:
    value = simplify_expr(substitute_vars(e, env) if env else e)
    if not isinstance(value, IntImm):
        raise Unknown(f"{e.script()} is not a constant once the loops have values")
    return value.value


class _Tracer:
    """Appends ``(iteration, phase, buffer, location, writes)`` for every
    access of one iteration, in program order."""

    def __init__(self, trace: list, iteration: int):
        self.trace, self.t, self.phase = trace, iteration, 0

    def add(self, buffer, indices, env, writes: bool) -> None:
        if len(self.trace) >= MAX_ACCESSES:
            raise Unknown(f"the body makes more than {MAX_ACCESSES} accesses")
        self.trace.append((self.t, self.phase, buffer, tuple(_const(i, env) for i in indices), writes))

    def expr(self, e, env) -> None:
        stack = [e]
        while stack:
            node = stack.pop()
            if isinstance(node, BufferLoad):
                self.add(node.buffer, node.indices, env, False)
            if isinstance(node, Call) and node.op == "tir.tvm_storage_sync":
                self.phase += 1
                continue
            if not isinstance(node, Block):
                stack.extend(c for c in iter_children(node) if not isinstance(c, Buffer))

    def stmt(self, s, env) -> None:
        if isinstance(s, SeqStmt):
            for item in s.seq:
                self.stmt(item, env)
        elif isinstance(s, For):
            virtual = s.kind is ForKind.THREAD_BINDING and (s.thread_binding or "").startswith("vthread")
            if s.kind is ForKind.THREAD_BINDING and not virtual:
                raise Unknown(f"loop {s.loop_var.name!r} inside is bound to {s.thread_binding}")
            lo, ext = _const(s.min, env), _const(s.extent, env)
            start = end = self.phase
            for v in range(lo, lo + ext):
                if virtual:
                    # virtual threads meet at a barrier as threads do: each
                    # starts from the phase the loop starts in
                    self.phase = start
                self.stmt(s.body, {**env, s.loop_var: IntImm(s.loop_var.dtype, v)})
                end = max(end, self.phase)
            self.phase = end
        elif isinstance(s, BlockRealize):
            if not _const(s.predicate, env):
                return
            block = s.block
            inner = dict(env)
            for iv, value in zip(block.iter_vars, s.iter_values):
                inner[iv.var] = IntImm(iv.var.dtype, _const(value, env))
            if block.init is not None and all(
                    _const(inner[iv.var], {}) == _const(iv.dom.min, env)
                    for iv in block.iter_vars if iv.iter_type is IterVarType.CommReduce):
                self.stmt(block.init, inner)
            self.stmt(block.body, inner)
        elif isinstance(s, BufferStore):
            self.expr(s.value, env)
            for i in s.indices:
                self.expr(i, env)
            self.add(s.buffer, s.indices, env, True)
        elif isinstance(s, IfThenElse):
            self.expr(s.condition, env)
            if _const(s.condition, env):
                self.stmt(s.then_case, env)
            elif s.else_case is not None:
                self.stmt(s.else_case, env)
        elif isinstance(s, LetStmt):
            self.expr(s.value, env)
            self.stmt(s.body, {**env, s.var: IntImm(s.var.dtype, _const(s.value, env))}
                      if s.var.dtype.is_integer else env)
        elif isinstance(s, Evaluate):
            self.expr(s.value, env)
        elif isinstance(s, (AttrStmt, Allocate, DeclBuffer, AssertStmt)):
            self.stmt(s.body, env)
        elif isinstance(s, While):
            raise Unknown("a while loop inside runs an unknown number of times")
        else:
            raise Unknown(f"a {type(s).__name__} statement inside")


__all__ = ["MAX_ACCESSES", "Reordering", "Unknown", "barrier_reordering", "has_barrier"]
