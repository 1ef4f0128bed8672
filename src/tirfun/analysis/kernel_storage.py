"""Kernel-scope buffers that would carry values across a kernel's edge.

TensorIR schedules leave ``shared`` and ``local`` buffers allocated at the
root, outside the kernels that use them; TVM's lowering, and tirfun's,
allocate each inside the kernel (one per thread block for ``shared``, one
per thread for ``local``). Such a buffer that host code and a kernel both
use, or two kernels, would pass values from one to the other in the
program as written, and cannot on the GPU: the storage is fresh at every
launch. :func:`crossing_kernel_storage` finds the first such buffer, so
that the interpreter and the CUDA build refuse the same programs with the
same words.
"""

from __future__ import annotations

import attrs

from ..nodes import Allocate, BufferLoad, BufferStore, PrimFunc, Stmt
from .threads import launch_of
from .traversal import iter_children, walk, walk_stmts

#: scopes whose buffers get storage inside the kernel that uses them
_PER_BLOCK = ("shared", "shared.dyn", "warp")


def per_kernel(scope: str) -> bool:
    """Whether a buffer of ``scope`` gets its storage inside the kernel using it."""
    return scope in _PER_BLOCK or scope.startswith("local")


@attrs.frozen
class CrossingStorage:
    """A ``shared`` or ``local`` buffer allocated outside the kernels and
    used in two places: ``first`` and ``second`` say which (``"host code"``,
    ``"a kernel"``, ``"another kernel"``), ``first_stmt`` and
    ``second_stmt`` are a statement of each."""

    name: str
    scope: str
    first: str
    first_stmt: object
    second: str
    second_stmt: object

    def message(self, text_of) -> str:
        """The explanation, with each statement as ``text_of`` prints it."""
        per = "thread block" if self.scope in _PER_BLOCK else "thread"
        return (f"buffer {self.name} of scope {self.scope!r} is allocated outside the kernels and used in "
                f"{self.first} and in {self.second}: TVM allocates it inside the kernel, one per {per}, so "
                f"what one of them writes the other never reads\n  in {self.first}:\n"
                f"{_indent(text_of(self.first_stmt))}\n  in {self.second}:\n{_indent(text_of(self.second_stmt))}")


def crossing_kernel_storage(func: PrimFunc) -> CrossingStorage | None:
    """The first ``shared`` or ``local`` buffer allocated outside every
    kernel (an outermost thread-binding statement) that is used in two
    places of {host code, each kernel}; None when there is none."""
    kernels: list = []   # path of each outermost thread-binding statement
    local: dict = {}     # storage -> (buffer name, scope) of shared or local allocations outside kernels
    places: dict = {}    # storage -> {place: first statement there}; place is -1 for host code
    for path, s in walk_stmts(func.body):
        k = next((n for n, kp in enumerate(kernels) if path[:len(kp)] == kp), -1)
        if k < 0 and launch_of(s) is not None:
            kernels.append(path)
            k = len(kernels) - 1
        if k < 0:
            for buf in getattr(s, "alloc_buffers", ()):
                if per_kernel(buf.storage_scope):
                    local[_storage(buf)] = (buf.name, buf.storage_scope)
            if isinstance(s, Allocate) and per_kernel(s.scope):
                local[s.buffer_var] = (s.buffer_var.name, s.scope)
        for buf in _accessed(s):
            places.setdefault(_storage(buf), {}).setdefault(k, s)
    for var, (name, scope) in local.items():
        where = places.get(var, {})
        if len(where) < 2:
            continue
        (k1, s1), (_, s2) = sorted(where.items(), key=lambda kv: kv[0])[:2]
        first, second = ("host code", "a kernel") if k1 < 0 else ("a kernel", "another kernel")
        return CrossingStorage(name, scope, first, s1, second, s2)
    return None


def _storage(buf):
    """What identifies a buffer's storage: its data variable, or the buffer
    itself when it has none (an ``alloc_buffer``)."""
    return buf.data if buf.data is not None else buf


def _accessed(s):
    """The buffers statement ``s`` itself (not the statements below it)
    loads from or stores to, and those its block's ``match_buffer`` views."""
    if isinstance(s, BufferStore):
        yield s.buffer
    for m in getattr(s, "match_buffers", ()):
        yield m.source.buffer
    for child in iter_children(s):
        if isinstance(child, Stmt):
            continue
        for node in walk(child):
            if isinstance(node, (BufferLoad, BufferStore)):
                yield node.buffer


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
