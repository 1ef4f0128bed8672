"""Naming one of a block's buffers the way TVM's Python API takes it.

A primitive that works on a buffer of a block (cache_read, set_scope,
reindex, ...) accepts a position among the block's reads or writes, the
:class:`~tirfun.nodes.Buffer` itself, or the buffer's name. Every such
primitive asks the same question, "which of the block's accesses is this
buffer?", and answers it here; what it does with no match or several is
its own policy.
"""

from __future__ import annotations

from ..nodes import Block, Buffer


def names_buffer(buf: Buffer, wanted) -> bool:
    """Whether ``wanted`` (a Buffer or a name) is ``buf``."""
    return buf == wanted or (isinstance(wanted, str) and buf.name == wanted)


def accesses_named(block: Block, wanted, kind: str | None = None) -> list[tuple[str, int, Buffer]]:
    """``(kind, position, buffer)`` of each of ``block``'s reads and then
    writes (only those of ``kind``, "read" or "write", when given) whose
    buffer ``wanted`` names."""
    kinds = (("read", block.reads), ("write", block.writes))
    return [(k, i, region.buffer) for k, regions in kinds if kind in (None, k)
            for i, region in enumerate(regions) if names_buffer(region.buffer, wanted)]


__all__ = ["accesses_named", "names_buffer"]
