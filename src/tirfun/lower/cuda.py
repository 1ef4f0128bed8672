"""Lowering for the CUDA target.

:func:`lower_cuda` checks a thread-bound module against the target's limits,
then runs the passes of :data:`tirfun.lower.PASSES` that keep a kernel a
kernel, and three passes of its own:

* ``place_gpu_allocations``: ``shared`` and ``local`` buffers allocated
  outside any kernel (at the root, where TensorIR schedules leave them) are
  allocated at the top of each kernel that uses them, as TVM's lowering
  does: a ``shared`` buffer is one per thread block, a ``local`` one per
  thread;
* ``insert_thread_syncs`` (:mod:`.thread_sync`): barriers where shared
  memory written by some threads is read by others;
* the checks after lowering: no store to memory outside a kernel, and the
  static shared memory of each kernel within the target's limit.

The result is an ordinary IRModule whose kernels (outermost thread-bound
statements) are still in place, so the interpreter runs it with the GPU's
meaning; :mod:`.device_split` then cuts each function into host code and
kernels for code generation.

Every refusal is a BuildError that shows the offending TVMScript lines:
a block outside any kernel that writes memory (bind its loops), a
``shared`` or ``local`` buffer that passes values between host code and
a kernel or between two kernels (each kernel gets its own), loops
bound to one tag with different extents in one kernel, more threads per
block than the target allows, shared memory over the limit, a thread tag
that CUDA does not know. A cross-thread reduction (a reduction loop bound
to threadIdx) is lowered to an all-reduce by :mod:`.allreduce` before the
blocks are lowered.
"""

from __future__ import annotations

from ..analysis.kernel_storage import crossing_kernel_storage
from ..analysis.threads import launched_iter_var
from ..analysis.traversal import stmt_children, stmt_nodes, walk
from ..analysis.virtual_threads import Undistributable, inject_virtual_threads
from ..errors import BuildError
from ..nodes import (
    THREAD_TAGS, Allocate, BlockRealize, BufferLoad, BufferStore, Call, DeclBuffer, For,
    ForKind, IntImm, IRModule, PrimFunc, SeqStmt,
)
from ..target import CUDA_DIM_LIMITS, Target
from ._util import map_funcs, vars_in
from .allreduce import lower_cross_thread_reductions
from .thread_sync import insert_thread_syncs

#: storage scopes whose buffers live in a thread block's shared memory
SHARED_SCOPES = ("shared", "shared.dyn")
#: scopes that lowering moves into the kernels that use them
KERNEL_SCOPES = ("shared", "shared.dyn", "local", "warp")
_THREAD_DIMS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


def launch_of(s):
    """``(tag, min, extent, var)`` when ``s`` binds a thread index (a
    thread-bound loop or a launched thread), else None."""
    if isinstance(s, For) and s.kind is ForKind.THREAD_BINDING:
        return s.thread_binding, s.min, s.extent, s.loop_var
    launched = launched_iter_var(s)
    if launched is not None:
        return launched.thread_tag, IntImm(s.value.dtype, 0), s.value, launched.var
    return None


def kernels_of(stmt) -> list:
    """The kernels of ``stmt``: its outermost thread-bound statements, in order."""
    out = []

    def visit(node) -> None:
        if launch_of(node) is not None:
            out.append(node)
            return
        for _, child in stmt_children(node):
            visit(child)

    visit(stmt)
    return out


def text_of(stmt, max_lines: int = 10) -> str:
    """The first lines of ``stmt`` as TVMScript."""
    try:
        text = stmt.script()
    except Exception:  # noqa: BLE001 - a message must not fail on the printer
        text = type(stmt).__name__
    lines = text.rstrip("\n").splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    return "\n".join(lines)


def lines_of(stmt, max_lines: int = 10) -> str:
    """The first lines of ``stmt`` as TVMScript, indented for a message."""
    return "\n".join("    " + line for line in text_of(stmt, max_lines).splitlines())


def check_cuda_func(name: str, func: PrimFunc, target: Target) -> None:
    """The checks on the user's TensorIR (before lowering)."""
    _check_tags(name, func)
    _check_host_writes(name, func)
    crossing = crossing_kernel_storage(func)
    if crossing is not None:
        # the placement below gives each kernel its own storage, so values
        # the program passes through the buffer would be lost; the
        # interpreter refuses the same programs
        raise BuildError(f"function {name}: " + crossing.message(lambda s: text_of(s, 4)))
    for kernel in kernels_of(func.body):
        _check_kernel(name, kernel, target)


def _check_tags(name: str, func: PrimFunc) -> None:
    for s in stmt_nodes(func.body):
        launched = launched_iter_var(s)
        if launched is not None and launched.thread_tag not in THREAD_TAGS:
            raise BuildError(f"function {name}: unknown thread tag {s.node.thread_tag!r}; CUDA "
                             f"knows {', '.join(THREAD_TAGS)}\n{lines_of(s, 3)}")


def _check_host_writes(name: str, func: PrimFunc) -> None:
    """A block outside every kernel that stores into memory would run on
    the host, which cannot touch the GPU's memory: TVM refuses it too
    ("did you forget to bind?")."""

    def refuse(what: str, outermost) -> None:
        raise BuildError(f"function {name}: {what} outside any kernel: the host cannot write the "
                         "GPU's memory. Bind its loops to blockIdx/threadIdx (sch.bind), e.g. an "
                         f"outer loop to blockIdx.x and an inner one to threadIdx.x:\n"
                         f"{lines_of(outermost)}")

    def visit(node, outermost) -> None:
        if launch_of(node) is not None:
            return
        if (isinstance(node, BlockRealize) and node.block.name_hint != "root"
                and not kernels_of(node.block)):
            if node.block.writes or any(isinstance(n, BufferStore) for n in walk(node.block)):
                refuse(f"block {node.block.name_hint} writes memory", outermost or node)
            return
        if isinstance(node, BufferStore):
            refuse(f"a store to {node.buffer.name}", outermost or node)
        for _, child in stmt_children(node):
            top = outermost
            if top is None and (isinstance(child, For) or (
                    isinstance(child, BlockRealize) and child.block.name_hint != "root")):
                top = child
            visit(child, top)

    visit(func.body, None)


def _check_kernel(name: str, kernel, target: Target) -> None:
    extents: dict = {}
    for s in stmt_nodes(kernel):
        bound = launch_of(s)
        if bound is None:
            continue
        tag, _lo, ext, _var = bound
        if tag in extents and extents[tag][0] != ext:
            raise BuildError(f"function {name}: loops bound to {tag} in one kernel must have "
                             f"the same extent, but {extents[tag][0]} and {ext} differ:\n"
                             f"{lines_of(extents[tag][1], 2)}\nand\n{lines_of(s, 2)}")
        extents.setdefault(tag, (ext, s))
    threads = 1
    for tag in _THREAD_DIMS:
        ext = extents.get(tag, (IntImm("int32", 1), None))[0]
        if not isinstance(ext, IntImm):
            threads = None  # a symbolic block size is checked when the kernel is launched
            break
        threads *= ext.value
    if threads is not None and threads > target.max_threads_per_block:
        dims = " * ".join(str(extents[t][0]) for t in _THREAD_DIMS if t in extents)
        raise BuildError(f"function {name}: a kernel of {threads} threads per block ({dims}); "
                         f"{target} allows at most {target.max_threads_per_block}: split the "
                         f"loops bound to threadIdx and bind the outer part to blockIdx:\n"
                         f"{lines_of(kernel)}")
    for tag, (ext, stmt) in extents.items():
        limit = CUDA_DIM_LIMITS.get(tag)
        if limit is not None and isinstance(ext, IntImm) and ext.value > limit:
            raise BuildError(f"function {name}: {ext.value} is more than the {limit} a CUDA launch "
                             f"allows for {tag}: split the loop and bind its parts to "
                             f"other dimensions:\n{lines_of(stmt, 2)}")


def place_gpu_allocations(mod: IRModule) -> IRModule:
    """Move ``shared`` and ``local`` allocations made outside every kernel
    into the kernels that use them (see the module)."""
    return map_funcs(mod, _place_func)


def _place_func(func: PrimFunc) -> PrimFunc:
    body = _place(func.body, [])
    return func if body is func.body else func.with_body(body)


def _place(node, moved: list):
    """``node`` without the kernel-scope allocations around its kernels,
    each kernel wrapped in those (of ``moved``, outermost first) it uses."""
    if launch_of(node) is not None:
        used = vars_in(node)
        for alloc, decls in reversed(moved):
            if alloc.buffer_var in used:
                inner = node.body
                for decl in reversed(decls):
                    inner = DeclBuffer(decl, inner)
                node = _with_body(node, Allocate(alloc.buffer_var, alloc.dtype, alloc.extents,
                                                 alloc.condition, inner, alloc.annotations,
                                                 alloc.scope))
        return node
    if isinstance(node, Allocate) and node.scope in KERNEL_SCOPES:
        decls, body = [], node.body
        while isinstance(body, DeclBuffer) and body.buffer.data == node.buffer_var:
            decls.append(body.buffer)
            body = body.body
        return _place(body, moved + [(node, decls)])
    children = list(stmt_children(node))
    if not children:
        return node
    changed = {}
    for (field, index), child in children:
        new = _place(child, moved)
        if new is not child:
            changed[(field, index)] = new
    if not changed:
        return node
    import attrs

    updates = {}
    for (field, index), new in changed.items():
        if index is None:
            updates[field] = new
        else:
            seq = updates.get(field, getattr(node, field))
            updates[field] = seq.set(index, new)
    out = attrs.evolve(node, **updates)
    if isinstance(out, SeqStmt):
        return SeqStmt(list(out.seq))
    return out


def _with_body(node, body):
    import attrs

    return attrs.evolve(node, body=body)


def check_lowered(name: str, func: PrimFunc, target: Target) -> None:
    """The checks on the lowered function: nothing stores outside a kernel,
    and each kernel's static shared memory fits the target."""
    for s in _host_statements(func.body):
        if isinstance(s, BufferStore):
            raise BuildError(f"function {name}: after lowering, a store to {s.buffer.name} lies "
                             f"outside any kernel; bind the loops around it to blockIdx/threadIdx:"
                             f"\n{lines_of(s)}")
        for field in ("condition", "value", "min", "extent"):
            e = getattr(s, field, None)
            if e is None or isinstance(e, str):
                continue
            for n in walk(e):
                if isinstance(n, BufferLoad):
                    raise BuildError(f"function {name}: the host code reads {n.buffer.name}, "
                                     "which lives in the GPU's memory; compute with it inside a "
                                     f"kernel:\n{lines_of(s, 4)}")
                if isinstance(n, Call) and not isinstance(n.op, str):
                    raise BuildError(f"function {name}: the host code calls {n.op.name_hint}; "
                                     "the CUDA build runs no function calls on the host:\n"
                                     f"{lines_of(s, 4)}")
    for kernel in kernels_of(func.body):
        total, allocs = 0, []
        for s in stmt_nodes(kernel):
            if isinstance(s, Allocate) and s.scope in SHARED_SCOPES:
                size = s.dtype.bits * s.dtype.lanes // 8
                for e in s.extents:
                    if not isinstance(e, IntImm):
                        raise BuildError(f"function {name}: shared buffer {s.buffer_var.name} has "
                                         f"the symbolic size {list(s.extents)}; shared memory "
                                         f"is allocated statically\n{lines_of(s, 2)}")
                    size *= e.value
                total += size
                allocs.append(f"{s.buffer_var.name} ({size} bytes)")
        if total > target.max_shared_memory_per_block:
            raise BuildError(f"function {name}: a kernel uses {total} bytes of shared memory "
                             f"({', '.join(allocs)}); {target} allows "
                             f"{target.max_shared_memory_per_block} per block (raise it with "
                             f"-max_shared_memory_per_block where the device allows more):\n"
                             f"{lines_of(kernel)}")


def _host_statements(node):
    if launch_of(node) is not None:
        return
    yield node
    for _, child in stmt_children(node):
        yield from _host_statements(child)


def _inject_virtual_threads(mod: IRModule) -> IRModule:
    """:func:`tirfun.analysis.virtual_threads.inject_virtual_threads` on
    every function, its refusal a BuildError."""
    try:
        return map_funcs(mod, inject_virtual_threads)
    except Undistributable as exc:
        raise BuildError(f"a barrier (T.tvm_storage_sync) inside a loop bound to a vthread, which "
                         f"cannot be split there: {exc.why}:\n{lines_of(exc.stmt, 6)}") from None


def lower_cuda(mod: IRModule, target: Target, *, sync: bool = True) -> IRModule:
    """``mod`` checked and lowered for ``target`` (a CUDA target); kernels
    stay in place (see the module). ``sync=False`` leaves out the barrier
    insertion, to show what it prevents."""
    from . import (bind_param_offsets, compact_allocations, flatten_buffers, lower_allocations, lower_blocks,
                   partition_loops, refuse_unbuildable, simplify, unroll_loops, vectorize_loops)

    out = bind_param_offsets(refuse_unbuildable(mod))
    for name, func in out.items():
        check_cuda_func(name, func, target)
    out = lower_cross_thread_reductions(out)
    for run in (lower_allocations, lower_blocks, compact_allocations, flatten_buffers, simplify,
                partition_loops, unroll_loops, simplify, vectorize_loops, place_gpu_allocations):
        out = run(out)
    if sync:
        out = insert_thread_syncs(out)
    out = _inject_virtual_threads(out)
    for name, func in out.items():
        check_lowered(name, func, target)
    return out


__all__ = ["lower_cuda", "check_cuda_func", "check_lowered", "place_gpu_allocations",
           "kernels_of", "launch_of", "lines_of", "SHARED_SCOPES", "KERNEL_SCOPES"]
