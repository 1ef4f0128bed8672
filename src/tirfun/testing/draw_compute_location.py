"""Random applications of the compute location primitives, for property tests.

:data:`DRAWERS` maps each primitive's name (``compute_at``,
``reverse_compute_at``, ``compute_inline``, ``reverse_compute_inline``) to a
function ``(chooser, module) -> Rewrite | None`` that returns one random
application of it on the module, or None when the module offers no site.

A drawn application names blocks and loops of the module, but it is not
checked: it may well violate a precondition (a compute_at to a loop that
does not hold every consumer, an inline of an output block), which is what
tests that invalid applications end in a ScheduleError want. Tests that
need valid applications filter with ``rewrite.violations(mod)``; the
drawers favour sites likely to be valid (a block with a consumer, a loop
above a consumer) so that valid ones come often.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import rewrites as R
from ..analysis.traversal import ancestors, stmt_nodes, walk_stmts
from ..nodes import Block, BlockRealize, For, IRModule, PrimFunc
from ._choices import Chooser


def _main(mod: IRModule) -> tuple[str, PrimFunc]:
    name = "main" if "main" in mod.functions else next(iter(mod.functions))
    return name, mod.functions[name]


def _blocks(func: PrimFunc) -> list[tuple[tuple, Block]]:
    """Every block but the root, with its path, in program order."""
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [(p, s) for p, s in walk_stmts(func, skip_init=True) if isinstance(s, Block) and s is not root]


def _loops_above(func: PrimFunc, path: tuple) -> list[For]:
    out: list[For] = []
    for _, node in ancestors(func, path):
        if isinstance(node, Block):
            out = []
        elif isinstance(node, For):
            out.append(node)
    return out


def _related(blocks, block: Block, *, after: bool) -> list[tuple[tuple, Block]]:
    """Blocks after ``block`` that read what it writes (``after``), or blocks
    before it that write what it reads."""
    names = [b.name_hint for _, b in blocks]
    k = names.index(block.name_hint)
    if after:
        written = {w.buffer for w in block.writes}
        return [(p, b) for p, b in blocks[k + 1:] if written & {r.buffer for r in b.reads}]
    read = {r.buffer for r in block.reads}
    return [(p, b) for p, b in blocks[:k] if read & {w.buffer for w in b.writes}]


def _draw_at(ch: Chooser, mod: IRModule, reverse: bool):
    func_name, func = _main(mod)
    blocks = _blocks(func)
    if not blocks:
        return None
    # a block with a partner (a consumer, or a producer) is the likely site;
    # now and then reverse_compute_at takes a producer under a loop of its
    # consumer, where it runs whole in every iteration
    after = not reverse or ch.chance(15)
    partnered = [(p, b) for p, b in blocks if _related(blocks, b, after=after)]
    pool = partnered if partnered and not ch.chance(10) else blocks
    path, block = ch.choice(pool)
    partners = _related(blocks, block, after=after)
    if partners and not ch.chance(10):
        ppath, _ = ch.choice(partners)
        loops = _loops_above(func, ppath)
    else:
        loops = [s for s in stmt_nodes(func, skip_init=True) if isinstance(s, For)]
    if not loops:
        return None
    loop = ch.choice(loops)
    preserve = ch.chance(30)
    index = ch.choice([-1, -1, -1, -2, 0, 1])
    cls = R.reverse_compute_at if reverse else R.compute_at
    return cls(R.BlockRef(block.name_hint, func_name), R.LoopRef(loop.loop_var.name, func_name),
               preserve_unit_loops=preserve, index=index)


def draw_compute_at(ch: Chooser, mod: IRModule):
    """A random ``compute_at``: a block with consumers, to a loop above one of them."""
    return _draw_at(ch, mod, reverse=False)


def draw_reverse_compute_at(ch: Chooser, mod: IRModule):
    """A random ``reverse_compute_at``: a block with producers, to a loop
    above one of them, or now and then a block with consumers, to a loop
    above one of them."""
    return _draw_at(ch, mod, reverse=True)


def _draw_inline(ch: Chooser, mod: IRModule, reverse: bool):
    func_name, func = _main(mod)
    blocks = _blocks(func)
    if not blocks:
        return None
    partnered = [(p, b) for p, b in blocks if _related(blocks, b, after=not reverse)]
    pool = partnered if partnered and not ch.chance(10) else blocks
    _, block = ch.choice(pool)
    ref = R.BlockRef(block.name_hint, func_name)
    return R.reverse_compute_inline(ref) if reverse else R.compute_inline(ref)


def draw_compute_inline(ch: Chooser, mod: IRModule):
    """A random ``compute_inline``, of a block with readers when there is one."""
    return _draw_inline(ch, mod, reverse=False)


def draw_reverse_compute_inline(ch: Chooser, mod: IRModule):
    """A random ``reverse_compute_inline``, of a block with a producer when there is one."""
    return _draw_inline(ch, mod, reverse=True)


#: primitive name -> drawer of one random application (or None: no site)
DRAWERS: dict[str, Callable[[Chooser, IRModule], "R.Rewrite | None"]] = {
    "compute_at": draw_compute_at,
    "reverse_compute_at": draw_reverse_compute_at,
    "compute_inline": draw_compute_inline,
    "reverse_compute_inline": draw_reverse_compute_inline,
}

#: the same table under a name of its own, for ``tirfun.testing``
compute_location_drawers = DRAWERS

__all__ = ["DRAWERS", "compute_location_drawers", "draw_compute_at", "draw_reverse_compute_at", "draw_compute_inline",
           "draw_reverse_compute_inline"]
