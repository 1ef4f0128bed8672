"""Constructs that parse, print and interpret but that the CPU build refuses,
as TVM's own build does, with a BuildError naming the construct and what to
write instead."""

from __future__ import annotations

from ..analysis.traversal import transform, walk, walk_stmts
from ..errors import BuildError
from ..nodes import Buffer, Evaluate, IntImm, IRModule, SeqStmt
from ..nodes.extra_stmt import BufferRealize, Prefetch
from ._util import map_funcs


def drop_prefetch(mod: IRModule) -> IRModule:
    """``mod`` without its ``T.prefetch`` hints, which compute nothing (TVM's
    CPU build has no lowering for them and refuses them; dropping one is
    exact)."""
    return map_funcs(mod, _drop_prefetch_func)


def _drop_prefetch_func(func):
    if not any(isinstance(s, Prefetch) for _, s in walk_stmts(func.body)):
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
        _refuse_axis_separators(name, mod[name])
        for _, s in walk_stmts(mod[name].body):
            if isinstance(s, BufferRealize):
                raise BuildError(
                    f"function {name}: T.realize of buffer {s.buffer.name} (BufferRealize) cannot "
                    "be built for the CPU (llvm); TVM's build does not lower it either. "
                    "Declare the buffer with T.alloc_buffer or T.decl_buffer instead")
    return mod


def _refuse_axis_separators(name: str, func) -> None:
    # a buffer with axis separators flattens to several dimensions of
    # memory (textures); LLVM's CPU memory has one, and TVM's LLVM code
    # generation refuses such a buffer too
    for n in walk(func):
        if isinstance(n, Buffer) and n.axis_separators:
            raise BuildError(
                f"function {name}: buffer {n.name} has axis_separators "
                f"{list(n.axis_separators)}, which flatten it to "
                f"{len(n.axis_separators) + 1}-D memory; the CPU target (llvm) needs 1-D memory. "
                "Remove the separators to build for the CPU")


__all__ = ["drop_prefetch", "refuse_unbuildable"]
