"""References to loops and blocks: plain values naming what they point at.

Names are identities inside a PrimFunc (a loop is named by its loop
variable, a block by its name), so a reference is just the name and the
function it lives in. It stays valid across rewrites for as long as the
loop or block exists, and it prints, compares and serialises like any
other value.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class LoopRef:
    """The loop whose loop variable is ``name``, in function ``func``
    (``None``: the function the rewrite works on, ``main`` or the only one)."""

    name: object
    func: object = None

    kind = "loop"

    def __repr__(self) -> str:
        return f"LoopRef({self.name!r})" if self.func is None else f"LoopRef({self.name!r}, {self.func!r})"

    def same_as(self, other) -> bool:
        """TVM's ``same_as`` on a random variable: references are values, so
        equal references name the same loop."""
        return self == other

    def with_func(self, func: str | None) -> "LoopRef":
        """The same loop, pinned to function ``func``."""
        return LoopRef(self.name, func)


@attrs.frozen
class BlockRef:
    """The block named ``name``, in function ``func`` (``None``: the function
    the rewrite works on)."""

    name: object
    func: object = None

    kind = "block"

    def __repr__(self) -> str:
        return f"BlockRef({self.name!r})" if self.func is None else f"BlockRef({self.name!r}, {self.func!r})"

    def same_as(self, other) -> bool:
        """TVM's ``same_as`` on a random variable: references are values, so
        equal references name the same block."""
        return self == other

    def with_func(self, func: str | None) -> "BlockRef":
        """The same block, pinned to function ``func``."""
        return BlockRef(self.name, func)


Ref = LoopRef | BlockRef


def as_loop_ref(value):
    """A loop argument as a record field: a string names a loop. Anything
    else is kept as given, so a wrong argument is reported by the
    primitive's checks (as a ScheduleError) rather than here."""
    if isinstance(value, str):
        return LoopRef(value)
    return value


def as_block_ref(value):
    """A block argument as a record field: a string names a block."""
    if isinstance(value, str):
        return BlockRef(value)
    return value


def as_block_or_loop_ref(value):
    """A block-or-loop argument: a string names a block, as TVM's
    ``Union[BlockRV, str]`` arguments do."""
    if isinstance(value, str):
        return BlockRef(value)
    return value


def as_loop_refs(values):
    """A sequence of loop arguments (nested lists are flattened, as TVM's
    ``fuse(*loops)`` accepts both ``fuse(i, j)`` and ``fuse([i, j])``)."""
    if isinstance(values, (str, LoopRef, BlockRef)) or not _is_sequence(values):
        return (as_loop_ref(values),)
    out = []
    for v in values:
        if _is_sequence(v) and not isinstance(v, str):
            out.extend(as_loop_ref(x) for x in v)
        else:
            out.append(as_loop_ref(v))
    return tuple(out)


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple)) or type(value).__name__ == "PVector"


__all__ = ["LoopRef", "BlockRef", "Ref", "as_loop_ref", "as_block_ref", "as_block_or_loop_ref",
           "as_loop_refs"]
