"""Constructs that parse, print and interpret but that the CPU build refuses,
as TVM's own build does, with a BuildError naming the construct and what to
write instead."""

from __future__ import annotations

from ..analysis.traversal import walk_stmts
from ..errors import BuildError
from ..nodes import IRModule
from ..nodes.extra_stmt import BufferRealize


def refuse_unbuildable(mod: IRModule) -> IRModule:
    """``mod`` unchanged, or a BuildError for its first unbuildable statement."""
    for name in mod:
        for _, s in walk_stmts(mod[name].body):
            if isinstance(s, BufferRealize):
                raise BuildError(
                    f"function {name}: T.realize of buffer {s.buffer.name} (BufferRealize) cannot "
                    "be built for the CPU (llvm); TVM's build does not lower it either. "
                    "Declare the buffer with T.alloc_buffer or T.decl_buffer instead")
    return mod


__all__ = ["refuse_unbuildable"]
