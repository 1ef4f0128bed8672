"""Constructs that parse, print and interpret but that the CPU build refuses,
as TVM's own build does, with a BuildError naming the construct and what to
write instead."""

from __future__ import annotations

from ..analysis.traversal import stmt_nodes, transform
from ..errors import BuildError
from ..nodes import Evaluate, IntImm, IRModule, SeqStmt
from ..nodes.extra_stmt import BufferRealize, Prefetch
from ._util import map_funcs


def drop_prefetch(mod: IRModule) -> IRModule:
    """``mod`` without its ``T.prefetch`` hints, which compute nothing (TVM's
    CPU build has no lowering for them and refuses them; dropping one is
    exact)."""
    return map_funcs(mod, _drop_prefetch_func)


def _drop_prefetch_func(func):
    if not any(isinstance(s, Prefetch) for s in stmt_nodes(func.body)):
        return func

    def post(n):
        if isinstance(n, SeqStmt) and any(isinstance(s, Prefetch) for s in n.seq):
            kept = [s for s in n.seq if not isinstance(s, Prefetch)]
            return SeqStmt(kept) if len(kept) > 1 else kept[0] if kept else _NOTHING
        return _NOTHING if isinstance(n, Prefetch) else n

    return func.with_body(transform(func.body, post))


_NOTHING = Evaluate(IntImm("int32", 0))


def refuse_unbuildable(mod: IRModule) -> IRModule:
    """``mod`` unchanged, or a BuildError for its first unbuildable statement."""
    for name in mod:
        for s in stmt_nodes(mod[name].body):
            if isinstance(s, BufferRealize):
                raise BuildError(
                    f"function {name}: T.realize of buffer {s.buffer.name} (BufferRealize) cannot "
                    "be built for the CPU (llvm); TVM's build does not lower it either. "
                    "Declare the buffer with T.alloc_buffer or T.decl_buffer instead")
    return mod


__all__ = ["drop_prefetch", "refuse_unbuildable"]
