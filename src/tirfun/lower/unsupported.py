"""Constructs that parse, print and interpret but that the CPU build refuses,
as TVM's own build does, with a BuildError naming the construct and what to
write instead."""

from __future__ import annotations

from ..analysis.traversal import walk, walk_stmts
from ..errors import BuildError
from ..nodes import Buffer, IRModule
from ..nodes.extra_stmt import BufferRealize


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


__all__ = ["refuse_unbuildable"]
