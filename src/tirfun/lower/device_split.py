"""Split a lowered CUDA function into host code and kernels.

Each kernel (an outermost thread-bound statement of a function lowered by
:func:`tirfun.lower.cuda.lower_cuda`) becomes a :class:`Kernel`: a PrimFunc
of its own whose parameters are the data pointers of the global buffers it
touches and the scalars it reads, and the launch dimensions (the extents of
its loops bound to ``blockIdx.*`` and ``threadIdx.*``, evaluated on the
host). The host code is the function with each kernel replaced by
``T.call_packed(kernel name, *arguments, *dimensions)``, TVM's launch.

Both halves are ordinary TIR: the kernels print as TVMScript, and the
interpreter runs a kernel with the GPU's meaning, which is how the split is
tested without a GPU.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import stmt_children, stmt_nodes, walk
from ..errors import BuildError
from ..nodes import (
    Allocate, BufferLoad, BufferStore, Call, DeclBuffer, Evaluate, For, IntImm, LetStmt, PrimFunc,
    StringImm,
)
from ._util import free_vars, vars_in
from .cuda import launch_of, lines_of

#: the launch dimensions, in the order CUDA takes them
GRID = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
BLOCK = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


@attrs.frozen
class Kernel:
    """One kernel: its symbol, its PrimFunc, what the host passes to it
    (``args``: the data pointers of its global buffers, then its scalars),
    the buffers behind those pointers, and its launch dimensions (one
    expression per entry of :data:`GRID` and :data:`BLOCK`, over the
    host's variables)."""

    name: str
    func: PrimFunc
    args: tuple
    buffers: tuple
    grid: tuple
    block: tuple


@attrs.frozen
class HostDevice:
    """A function cut at its kernels: ``host`` launches ``kernels``."""

    name: str
    host: PrimFunc
    kernels: tuple

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``."""
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)


def split_host_device(name: str, func: PrimFunc) -> HostDevice:
    """Cut the lowered ``func`` (named ``name``) into host code and kernels."""
    kernels: list[Kernel] = []
    host_buffers: dict = {}  # data var -> a buffer declared on the host
    # a parameter's buffer without a data variable is reached through the parameter
    params = {buf: var for var, buf in func.buffer_map.items() if buf.data is None}
    order = [buf.data if buf.data is not None else var
             for var, buf in ((v, func.buffer_map.get(v)) for v in func.params) if buf is not None]

    for var, buf in func.buffer_map.items():
        if buf.data is not None:
            host_buffers.setdefault(buf.data, buf)
    for s in stmt_nodes(func.body):
        if isinstance(s, DeclBuffer) and s.buffer.data is not None:
            host_buffers.setdefault(s.buffer.data, s.buffer)

    def host(node):
        if launch_of(node) is not None:
            kname = name + "_kernel" + (f"_{len(kernels)}" if kernels else "")
            kernel = _kernel(kname, name, node, host_buffers, params, order)
            kernels.append(kernel)
            return Evaluate(Call("int32", "tir.tvm_call_packed",
                                 [StringImm(kname), *kernel.args, *kernel.grid, *kernel.block]))
        return _map_children(node, host)

    body = host(func.body)
    if len(kernels) > 1:
        # the first kernel's name carries no number only when it is the only one
        first = kernels[0]
        renamed = attrs.evolve(first, name=name + "_kernel_0",
                               func=first.func.with_attr("global_symbol", name + "_kernel_0"))
        kernels[0] = renamed
        body = _rename_launch(body, first.name, renamed.name)
    return HostDevice(name, func.with_body(body), tuple(kernels))


def _kernel(kname: str, fname: str, root, host_buffers: dict, params: dict,
            host_order: list) -> Kernel:
    dims = _dims(fname, root)
    declared = {s.buffer.data for s in stmt_nodes(root) if isinstance(s, DeclBuffer)}
    allocated = {s.buffer_var for s in stmt_nodes(root) if isinstance(s, Allocate)}
    used_buffers: dict = {}
    for n in walk(root):
        if isinstance(n, (BufferLoad, BufferStore)):
            key = n.buffer.data if n.buffer.data is not None else params.get(n.buffer)
            if key is not None and key not in allocated:
                used_buffers.setdefault(key, n.buffer)
    # the function's parameters first, in their order, as TVM passes them
    rank = {var: k for k, var in enumerate(host_order)}
    pointers = sorted(used_buffers, key=lambda v: rank.get(v, len(rank)))
    scalars = [v for v in free_vars(root) if v not in used_buffers and v not in declared
               and v not in allocated and not v.dtype.is_handle]
    for v in free_vars(root):
        if v.dtype.is_handle and v not in used_buffers and v not in allocated:
            pointers.append(v)  # a pointer passed on, as to T.tvm_access_ptr
    body = root
    buffer_map = {}
    for data in reversed(pointers):
        buf = used_buffers.get(data) or host_buffers.get(data)
        if buf is not None and buf.data is None:
            buffer_map[data] = buf
        elif buf is not None:
            body = DeclBuffer(buf, body)
    func = PrimFunc(pointers + scalars, body, None, buffer_map, {
        "global_symbol": kname, "calling_conv": 2, "tir.noalias": True,
        "tir.is_global_func": True,
        "tir.kernel_launch_params": [t for t in GRID + BLOCK if t in dims]})
    grid = tuple(dims.get(t, IntImm("int32", 1)) for t in GRID)
    block = tuple(dims.get(t, IntImm("int32", 1)) for t in BLOCK)
    bufs = tuple(used_buffers.get(p) for p in pointers)
    return Kernel(kname, func, tuple(pointers + scalars), bufs, grid, block)


def _dims(fname: str, root) -> dict:
    """The extent of each tag in the kernel, and the variables bound inside
    it (which no extent may use: the host computes the dimensions)."""
    dims: dict = {}
    inner: set = set()
    for s in stmt_nodes(root):
        if isinstance(s, For):
            inner.add(s.loop_var)
        elif isinstance(s, LetStmt):
            inner.add(s.var)
        bound = launch_of(s)
        if bound is None:
            continue
        tag, _lo, ext, var = bound
        inner.add(var)
        if tag.startswith("vthread"):
            continue
        if vars_in(ext) & inner - {var}:
            raise BuildError(f"function {fname}: the extent {ext} of the loop bound to {tag} "
                             f"depends on a variable of the kernel; the host cannot compute the "
                             f"launch dimensions:\n{lines_of(s, 2)}")
        if tag in dims and dims[tag] != ext:
            raise BuildError(f"function {fname}: loops bound to {tag} in one kernel must have "
                             f"the same extent, but {dims[tag]} and {ext} differ:\n{lines_of(s, 2)}")
        dims.setdefault(tag, ext)
    return dims


def _map_children(node, fn):
    updates = {}
    for (field, index), child in stmt_children(node):
        new = fn(child)
        if new is child:
            continue
        if index is None:
            updates[field] = new
        else:
            updates[field] = updates.get(field, getattr(node, field)).set(index, new)
    return attrs.evolve(node, **updates) if updates else node


def _rename_launch(body, old: str, new: str):
    def visit(node):
        if (isinstance(node, Evaluate) and isinstance(node.value, Call)
                and node.value.op == "tir.tvm_call_packed"
                and node.value.args[0] == StringImm(old)):
            return Evaluate(Call("int32", "tir.tvm_call_packed",
                                 [StringImm(new), *node.value.args[1:]]))
        return _map_children(node, visit)

    return visit(body)


def launch_args(call: Call) -> tuple[str, list, list, list]:
    """``(kernel name, arguments, grid, block)`` of a host launch."""
    name = call.args[0].value
    rest = list(call.args[1:])
    return name, rest[:-6], rest[-6:-3], rest[-3:]


__all__ = ["Kernel", "HostDevice", "split_host_device", "launch_args", "GRID", "BLOCK"]
