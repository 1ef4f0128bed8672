"""Random applications of the region hints (``annotate_buffer_access``,
``unsafe_hide_buffer_access``).

:data:`DRAWERS` maps each primitive name to a function ``(chooser, module)
-> record or None``: a random application that applies to the module, or
None when the module offers no site. The regions drawn for
``annotate_buffer_access`` cover what the block touches (the declared
region itself, widened to the whole buffer in some dimensions), so later
primitives that trust the hint stay right.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import rewrites as R
from ..analysis.traversal import walk_stmts
from ..nodes import Block, BlockRealize, IntImm, IRModule, PrimFunc
from ..rewrites.base import Rewrite
from ._choices import Chooser


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _blocks(mod: IRModule) -> list[Block]:
    func = _main(mod)
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [s for _, s in walk_stmts(func) if isinstance(s, Block) and s is not root]


def draw_annotate_buffer_access(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``annotate_buffer_access`` of a block's read or write region, with
    a region that covers the declared one."""
    sites = [(b, t, k) for b in _blocks(mod) for t in ("read", "write")
             for k in range(len(b.reads if t == "read" else b.writes))]
    if not sites:
        return None
    block, buf_type, k = ch.choice(sites)
    region = (block.reads if buf_type == "read" else block.writes)[k]
    ranges = []
    for rng, dim in zip(region.region, region.buffer.shape):
        if ch.chance(30):
            ranges.append((IntImm(dim.dtype, 0), dim))
        elif isinstance(rng.extent, IntImm) and rng.extent.value == 1 and ch.chance(50):
            ranges.append(rng.min)
        else:
            ranges.append((rng.min, rng.min + rng.extent))
    rewrite = R.annotate_buffer_access(block.name_hint, k, buf_type, ranges)
    return None if rewrite.violations(mod) else rewrite


def draw_unsafe_hide_buffer_access(ch: Chooser, mod: IRModule) -> Rewrite | None:
    """An ``unsafe_hide_buffer_access`` of some of a block's regions."""
    sites = [(b, t) for b in _blocks(mod) for t in ("read", "write") if (b.reads if t == "read" else b.writes)]
    if not sites:
        return None
    block, buf_type = ch.choice(sites)
    n = len(block.reads if buf_type == "read" else block.writes)
    picked = [k for k in range(n) if ch.chance(50)] or [ch.integer(0, n - 1)]
    rewrite = R.unsafe_hide_buffer_access(block.name_hint, buf_type, picked)
    return None if rewrite.violations(mod) else rewrite


DRAWERS: dict[str, Callable[[Chooser, IRModule], Rewrite | None]] = {
    "annotate_buffer_access": draw_annotate_buffer_access,
    "unsafe_hide_buffer_access": draw_unsafe_hide_buffer_access,
}


__all__ = ["DRAWERS", "draw_annotate_buffer_access", "draw_unsafe_hide_buffer_access"]
