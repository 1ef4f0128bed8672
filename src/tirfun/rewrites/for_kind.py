"""Loop kinds: parallel, vectorize, bind (to a GPU thread axis) and unroll.

These change a loop's kind and nothing else, so the loop keeps its name
and every block under it is shared with the input.
"""

from __future__ import annotations

import attrs

from ..analysis.arith.terms import int_value
from ..analysis.barrier_order import Unknown, barrier_reordering, has_barrier
from ..analysis.traversal import nodes_along, replace_at, stmt_nodes
from ..analysis.threads import launch_of
from ..nodes import THREAD_TAGS, Block, For, ForKind, IterVarType
from ..nodes.base import with_fields
from .base import Checks, Outcome, Rewrite, commit, register
from .checks import (
    all_block_realizes, child_blocks, complete_block_violation, describe,
    reduction_block_violation, resolve_loop, resolve_site,
)
from .errors import (
    DependenceViolationError, InvalidThreadAxisError, NotCompactDataflowError, ReplicatedThreadReductionError,
    UnrolledBarrierError, WrongBlockIterTypeError,
)
from .merge_order import buffer_words, loose_dependence
from .dataflow import updated_by
from .exprs import uses_any
from .refs import as_loop_ref
from .serialize import py_value

_ACTION = {ForKind.PARALLEL: "parallel", ForKind.VECTORIZED: "vectorize", ForKind.THREAD_BINDING: "bind"}


def _check_parallelizable(chk: Checks, site, path, loop: For, kind: ForKind, thread_axis: str | None) -> None:
    """TVM's checks before a loop becomes parallel, vectorized or bound."""
    # compact dataflow: each block directly under the loop is complete or a reduction
    children = list(child_blocks(loop, path))
    for rpath, realize in children:
        block = realize.block
        complete = complete_block_violation(block)
        if complete is None:
            continue
        reduction = reduction_block_violation(site, rpath + (("block", None),), realize)
        if reduction is None:
            continue
        chk.fail(NotCompactDataflowError, f"block {block.name_hint!r}",
                 f"the block under loop {loop.loop_var.name!r} is neither a complete block ({complete}) "
                 f"nor a reduction block ({reduction})", realize)
    # the loop may feed only data-parallel iteration variables (or, for threadIdx, reductions)
    cross_thread = thread_axis is not None and thread_axis.startswith("threadIdx.")
    name = loop.loop_var.name
    for _, realize in all_block_realizes(loop.body, path + (("body", None),)):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if uses_any(value, {name}) is None:
                continue
            if iv.iter_type is IterVarType.DataPar:
                continue
            if iv.iter_type is IterVarType.CommReduce and cross_thread:
                continue
            allowed = ("data-parallel or, for a threadIdx axis, a reduction" if kind is ForKind.THREAD_BINDING
                       else "data-parallel")
            chk.fail(WrongBlockIterTypeError, f"block {realize.block.name_hint!r}",
                     f"the {_ACTION[kind]} of loop {name!r} cannot be fulfilled: the loop feeds the "
                     f"{iv.iter_type.value} iteration variable {iv.var.name}, which must be {allowed}",
                     realize)
            break
    if kind is ForKind.PARALLEL or (kind is ForKind.THREAD_BINDING and not thread_axis.startswith("vthread")):
        _check_repeated_updates(chk, children, loop, kind, thread_axis)
    if kind is ForKind.PARALLEL:
        # statements outside blocks promise nothing: their iterations, run
        # at once, must not meet at an element one of them writes
        buf = loose_dependence(loop.body, [loop])
        if buf is not None:
            chk.fail(DependenceViolationError, f"loop {name!r}",
                     f"the parallel of loop {name!r} cannot be fulfilled: a statement outside any block "
                     f"under it uses {buffer_words(buf)}, which is written there, and two iterations may "
                     "meet at one element of it; run at once, they would race on it", loop)


def _check_repeated_updates(chk: Checks, children: list, loop: For, kind: ForKind, thread_axis: str | None) -> None:
    """A block under the loop (one of its ``children``, the blocks no other
    block under it holds) that the loop feeds no iteration variable of runs
    the same instance in every iteration. Made threads, the iterations
    run it at once; where it updates what it reads (a reduction, an
    accumulation) in a buffer the threads share, they race: two threads may
    both read the old value (TVM parallelizes or binds it). A loop of one
    iteration makes one thread: nothing to race with."""
    extent = int_value(loop.extent)
    if extent is not None and extent <= 1:
        return
    name = loop.loop_var.name
    inside = None
    for _, realize in children:
        if any(uses_any(value, {name}) is not None for value in realize.iter_values):
            continue
        block = realize.block
        if inside is None:  # what the iterations allocate for themselves
            inside = {b for s in stmt_nodes(loop.body) if type(s) is Block for b in s.alloc_buffers}
        updated = sorted(b.name for b in updated_by(block) if b not in inside and not _private(b, thread_axis))
        if updated:
            threads = "parallel threads" if kind is ForKind.PARALLEL else f"threads of {thread_axis}"
            chk.fail(ReplicatedThreadReductionError, f"loop {name!r}",
                     f"the {_ACTION[kind]} of loop {name!r} cannot be fulfilled: the loop feeds no iteration "
                     f"variable of block {block.name_hint!r}, which updates {', '.join(updated)} from what it "
                     f"reads; the {threads} would each run the same instance at once, racing on it",
                     realize)


def _private(buffer, thread_axis: str | None) -> bool:
    """Whether each thread of ``thread_axis`` (None: a parallel loop) has
    its own copy of ``buffer``: a local buffer for any thread, a shared one
    for the blocks of a grid."""
    if thread_axis is None:
        return False
    scope = buffer.storage_scope
    return scope.startswith("local") or (thread_axis.startswith("blockIdx") and scope.startswith("shared"))


@attrs.frozen
class _KindChange(Rewrite):
    """Shared plan/build of the rewrites that only change a loop's kind."""

    loop: object = attrs.field(converter=as_loop_ref)

    def _kind(self) -> tuple[ForKind, str | None]:
        raise NotImplementedError

    def _checks(self, chk, site, path, loop) -> None:
        kind, axis = self._kind()
        _check_parallelizable(chk, site, path, loop, kind, axis)

    def plan(self, mod, chk: Checks):
        site = resolve_site(chk, mod, [self.loop])
        path = resolve_loop(chk, site, self.loop)
        loop = site.at(path)
        self._checks(chk, site, path, loop)
        return site, path, loop

    def build(self, plan) -> Outcome:
        site, path, loop = plan
        kind, axis = self._kind()
        new = with_fields(loop, kind=kind, thread_binding=axis)
        return Outcome(commit(site, path, new, index=site.index))

    def python_args(self):
        return [py_value(self.loop)]


@register
@attrs.frozen
class Parallel(_KindChange):
    """Make a loop parallel.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. every block directly under the loop is a complete block or a
       reduction block (NotCompactDataflowError);
    3. every block under the loop binds the loop variable only into
       data-parallel iteration variables (WrongBlockIterTypeError);
    4. a buffer that a statement outside any block under the loop uses, and
       that is written there, is used so that two iterations never meet at
       an element (DependenceViolationError). Correct where TVM is not:
       TVM parallelizes such a loop, and its threads race.

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        parallel("i")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in T.parallel(4):
                for j in range(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "parallel"

    def _kind(self):
        return ForKind.PARALLEL, None


@register
@attrs.frozen
class Vectorize(_KindChange):
    """Make a loop vectorized.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. every block directly under the loop is a complete block or a
       reduction block (NotCompactDataflowError);
    3. every block under the loop binds the loop variable only into
       data-parallel iteration variables (WrongBlockIterTypeError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        vectorize("j")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in range(4):
                for j in T.vectorized(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "vectorize"

    def _kind(self):
        return ForKind.VECTORIZED, None


@register
@attrs.frozen
class Bind(_KindChange):
    """Bind a loop to a GPU thread axis: ``blockIdx.x/y/z``,
    ``threadIdx.x/y/z`` or ``vthread.x/y/z`` (``vthread`` is TVM's legacy
    spelling).

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. the thread axis is one of the names above (InvalidThreadAxisError);
    3. every block directly under the loop is a complete block or a
       reduction block (NotCompactDataflowError);
    4. every block under the loop binds the loop variable only into
       data-parallel iteration variables, or also reduction ones when the
       axis is ``threadIdx.*`` (a cross-thread reduction)
       (WrongBlockIterTypeError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i, j in T.grid(4, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

        # rewrite
        bind("i", "blockIdx.x") >> bind("j", "threadIdx.x")

        # after
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in T.thread_binding(4, thread="blockIdx.x"):
                for j in T.thread_binding(8, thread="threadIdx.x"):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
    """

    primitive = "bind"

    thread_axis: object = None

    def _kind(self):
        return ForKind.THREAD_BINDING, self.thread_axis

    def _checks(self, chk, site, path, loop) -> None:
        if not isinstance(self.thread_axis, str) or self.thread_axis not in THREAD_TAGS:
            chk.stop(InvalidThreadAxisError, describe(self.loop),
                     f"{self.thread_axis!r} is not a thread axis; expected one of {', '.join(THREAD_TAGS)}")
        super()._checks(chk, site, path, loop)

    def python_args(self):
        return [py_value(self.loop), f"thread_axis={py_value(self.thread_axis)}"]


@register
@attrs.frozen
class Unroll(_KindChange):
    """Mark a loop to be unrolled.

    A loop bound to a thread axis loses the binding, as in TVM.

    Requirements, each with the error raised when it fails:

    1. the loop exists (UnknownLoopError, RefKindError, UnknownFunctionError);
    2. a loop bound to threadIdx.* that feeds a cross-thread reduction
       writing a buffer not of ``local`` scope leaves it under a loop of
       every thread axis of its kernel (ReplicatedThreadReductionError):
       otherwise every thread of the axis left out would run the whole
       reduction into the same elements, where TVM's unroll makes a race;
    3. a loop bound to threadIdx.* that holds a barrier
       (``T.tvm_storage_sync``) has no two iterations whose accesses of one
       element, one of them a write, the barrier orders one way and the
       unrolled loop, running the iterations in turn, the other (where its
       body can be enumerated: constant ranges and indices once the loops
       have values; UnrolledBarrierError).

    Example:

    .. code-block:: python

        # before
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)

        # rewrite
        unroll("i")

        # after
        @T.prim_func
        def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.unroll(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] * T.float32(2)
    """

    primitive = "unroll"

    def _kind(self):
        return ForKind.UNROLLED, None

    def _checks(self, chk, site, path, loop) -> None:
        if loop.thread_binding is not None and loop.thread_binding.startswith("threadIdx."):
            _check_unbound_reductions(chk, site, path, loop)
        # virtual threads meet at a barrier as threads do
        if loop.thread_binding is not None and loop.thread_binding.startswith(("threadIdx.", "vthread")):
            _check_barriers(chk, site, path, loop)


def _check_barriers(chk: Checks, site, path, loop: For) -> None:
    """A barrier in a threadIdx loop orders every iteration's accesses
    before it ahead of every iteration's accesses after it; unrolled, one
    thread runs the iterations in turn. Refused where that reorders two
    accesses of one element, one a write (or where the body cannot be
    enumerated to show it does not)."""
    if int_value(loop.extent) == 1 or not has_barrier(loop.body):
        return
    name = loop.loop_var.name
    try:
        found = barrier_reordering(loop, nodes_along(site.func, path)[:-1])
    except Unknown as why:
        chk.fail(UnrolledBarrierError, f"loop {name!r}",
                 f"loop {name!r} is bound to {loop.thread_binding} and holds a barrier; unrolled, one thread would "
                 f"run its iterations in turn, and it cannot be shown that no access after the barrier moves "
                 f"ahead of another iteration's access before it: {why}", loop)
        return
    if found is not None:
        at = f"{found.buffer.name}[{', '.join(map(str, found.location))}]"
        second = f"iteration {found.second}" + (f" of thread {found.second_thread}" if found.second_thread else "")
        first = f"iteration {found.first}" + (f" of thread {found.first_thread}" if found.first_thread else "")
        # threads around run the loop side by side: another thread's access
        # in the same stretch is not ordered either way
        when = "in the same stretch as" if found.unordered else "before"
        chk.fail(UnrolledBarrierError, f"loop {name!r}",
                 f"loop {name!r} is bound to {loop.thread_binding} and holds a barrier; unrolled, one thread would "
                 f"run its iterations in turn: {second} would "
                 f"{'write' if found.second_writes else 'read'} {at} after the barrier {when} {first} "
                 f"{'writes' if found.first_writes else 'reads'} it before the barrier", loop)


def _check_unbound_reductions(chk: Checks, site, path, loop: For) -> None:
    """Unrolling a threadIdx loop takes its binding away, as TVM's unroll
    does. A cross-thread reduction the loop fed becomes a serial one in each
    thread; where some thread axis of its kernel then does not reach the
    block, every thread of that axis runs the whole reduction into the same
    elements, which only a ``local`` output (one per thread) keeps apart."""
    name = loop.loop_var.name
    unrolled = replace_at(site.func, path, with_fields(loop, kind=ForKind.UNROLLED, thread_binding=None))
    for rpath, realize in all_block_realizes(loop.body, path + (("body", None),)):
        block = realize.block
        fed = next((iv for iv, value in zip(block.iter_vars, realize.iter_values)
                    if iv.iter_type is IterVarType.CommReduce and uses_any(value, {name}) is not None), None)
        shared = sorted({r.buffer.name for r in block.writes if not r.buffer.storage_scope.startswith("local")})
        if fed is None or not shared:
            continue
        along = nodes_along(unrolled, rpath)
        start = next((k for k, n in enumerate(along) if launch_of(n) is not None), None)
        if start is None:
            continue  # host code once unrolled: one thread runs it
        kernel_tags = {launch_of(s)[0] for s in stmt_nodes(along[start]) if launch_of(s) is not None}
        around = {launch_of(n)[0] for n in along[start:] if launch_of(n) is not None}
        # virtual threads run one after another; thread blocks each have
        # their own copy of a shared output
        per_block = all(r.buffer.storage_scope.startswith("shared") for r in block.writes)
        missing = sorted(t for t in kernel_tags - around
                         if not t.startswith("vthread") and not (per_block and t.startswith("blockIdx")))
        if missing:
            chk.fail(ReplicatedThreadReductionError, f"loop {name!r}",
                     f"loop {name!r} is bound to {loop.thread_binding} and feeds the reduction variable "
                     f"{fed.var.name} of block {block.name_hint!r}; unrolled, the loop no longer spreads "
                     f"the reduction over threads, and the block is not under a loop bound to "
                     f"{', '.join(missing)} of its kernel: every thread of "
                     f"{'them' if len(missing) > 1 else 'it'} would run the whole reduction, updating "
                     f"{', '.join(shared)} at once",
                     loop)


def parallel(loop) -> Parallel:
    """The :class:`Parallel` record: ``parallel("i")``."""
    return Parallel(loop)


def vectorize(loop) -> Vectorize:
    """The :class:`Vectorize` record: ``vectorize("j")``."""
    return Vectorize(loop)


def bind(loop, thread_axis) -> Bind:
    """The :class:`Bind` record: ``bind("i", "blockIdx.x")``."""
    return Bind(loop, thread_axis)


def unroll(loop) -> Unroll:
    """The :class:`Unroll` record: ``unroll("i")``."""
    return Unroll(loop)


__all__ = ["Parallel", "parallel", "Vectorize", "vectorize", "Bind", "bind", "Unroll", "unroll"]
