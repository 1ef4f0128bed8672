"""Where a statement binds a GPU thread index.

A kernel's thread indices are bound two ways in TensorIR: by a loop of kind
``THREAD_BINDING`` (``T.thread_binding(8, thread="threadIdx.x")``) and, in
lowered code, by ``T.launch_thread`` (an ``AttrStmt`` ``thread_extent`` or
``virtual_thread`` on an ``IterVar``). :func:`launch_of` reads both, for the
interpreter's GPU semantics and for the primitives that reason about
threads.
"""

from __future__ import annotations

from ..nodes import THREAD_TAGS, AttrStmt, Call, Evaluate, For, ForKind, IterVar, Var
from .canonical import THREAD_ATTR_KEYS
from .traversal import stmt_nodes


def launched_iter_var(s) -> IterVar | None:
    """The thread index ``s`` launches when it is a ``T.launch_thread``
    (an ``AttrStmt`` ``thread_extent`` or ``virtual_thread`` on an
    ``IterVar``), whatever its tag; else None. Every reader of launched
    threads asks this, so that they agree on what a launch is."""
    if isinstance(s, AttrStmt) and s.attr_key in THREAD_ATTR_KEYS and isinstance(s.node, IterVar):
        return s.node
    return None


def launch_of(s):
    """``(tag, min, extent)`` when ``s`` binds a thread index (a thread-bound
    loop or a launched thread), else None; ``min`` is None for a launched
    thread, which counts from 0."""
    if isinstance(s, For) and s.kind is ForKind.THREAD_BINDING:
        return s.thread_binding, s.min, s.extent
    launched = launched_iter_var(s)
    if launched is not None and launched.thread_tag in THREAD_TAGS:
        return launched.thread_tag, None, s.value
    return None


def bound_var(s) -> Var:
    """The variable a thread-binding statement (see :func:`launch_of`) binds."""
    return s.loop_var if isinstance(s, For) else s.node.var


def is_sync(s) -> bool:
    """Whether ``s`` is a ``T.tvm_storage_sync`` (a barrier, of any scope)."""
    return isinstance(s, Evaluate) and isinstance(s.value, Call) and s.value.op == "tir.tvm_storage_sync"


def binds_threads(stmt) -> bool:
    """Whether ``stmt`` (a function's body) binds a thread index anywhere:
    a thread-bound loop or a launched thread."""
    return any(launch_of(s) is not None for s in stmt_nodes(stmt))


__all__ = ["binds_threads", "bound_var", "is_sync", "launch_of", "launched_iter_var"]
