"""Whether moving a block out of loops it shares with another block reorders
their accesses: the check compute_at and reverse_compute_at make of the
blocks a move leaves behind.

Under the loops a move takes the block out of (the *left* loops), the block
and another block ``D`` after it run interleaved: in iteration ``s`` the
block, then ``D``. Moved earlier (reverse_compute_at), every instance of the
block runs before every instance of ``D``; moved later (compute_at), after.
The move keeps the meaning unless an instance of the block and one of ``D``
that the move puts in the other order touch one element, one of them
writing: for an earlier move, the block's instance of a later iteration than
``D``'s; for a later move, of the same or an earlier one. A block ``D``
before the moved one in each iteration is the mirror case: an earlier move
reorders the block's instance of the same or a later iteration than
``D``'s, a later move one of an earlier iteration.

:func:`reordered_access` finds such a pair by enumerating the iterations of
the left loops (constant ranges, at most :data:`MAX_ITERATIONS` of them) and
bounding, in each, the region each block reads and writes (its own loops
relaxed over their ranges). Boxes over-approximate what a block touches, so
a pair it reports may be a near miss only where a block's accesses do not
fill their box (a strided access); it reports None where it cannot enumerate.
"""

from __future__ import annotations

import itertools

from ..nodes import BlockRealize, For, IntImm
from .arith.int_set import Interval, eval_interval
from .arith.simplify import simplify_expr
from .traversal import substitute_vars

#: left loops running more iterations than this together are not enumerated
MAX_ITERATIONS = 256


def reordered_access(left: list, block_chain: list, other_chain: list, earlier: bool,
                     other_first: bool = False):
    """The name of a buffer through which the move reorders two accesses,
    or None (no such pair, or the loops cannot be enumerated).

    ``left``: the left loops, outermost first. ``block_chain`` and
    ``other_chain``: the statements from below the innermost left loop
    down to each block's BlockRealize, which comes last. ``earlier``: the
    block moves before the other block's instances (reverse_compute_at),
    else after them (compute_at). ``other_first``: the other block comes
    before the block in each iteration (``D`` then the block), so the pairs
    the move reorders are those of the other's later iterations (a move
    later) or of the same or earlier ones (a move earlier)."""
    iterations = _iterations(left)
    if iterations is None:
        return None
    mine = [_accesses(block_chain, env) for env in iterations]
    theirs = [_accesses(other_chain, env) for env in iterations]
    if any(a is None for a in mine) or any(a is None for a in theirs):
        return None
    for s, t in itertools.product(range(len(iterations)), repeat=2):
        # s: the block's iteration, t: the other block's
        if other_first:
            reordered = (s >= t) if earlier else (s < t)
        else:
            reordered = (s > t) if earlier else (s <= t)
        if reordered:
            found = _conflict(mine[s], theirs[t])
            if found is not None:
                return found
    return None


def _iterations(left: list):
    envs = [{}]
    for loop in left:
        grown = []
        for env in envs:
            lo, ext = _const(loop.min, env), _const(loop.extent, env)
            if lo is None or ext is None:
                return None
            grown.extend({**env, loop.loop_var: IntImm(loop.loop_var.dtype, v)} for v in range(lo, lo + ext))
            if len(grown) > MAX_ITERATIONS:
                return None
        envs = grown
    return envs


def _const(e, env) -> int | None:
    value = simplify_expr(substitute_vars(e, env) if env else e)
    return value.value if isinstance(value, IntImm) else None


def _accesses(chain: list, env: dict):
    """``(reads, writes)``: buffer -> list of boxes (one Interval per
    dimension, constant ends) the block at the end of ``chain`` touches in
    the iteration ``env`` of the left loops; None where a bound is not a
    constant."""
    dom = {var: Interval(value, value) for var, value in env.items()}
    bindings: dict = {}
    for stmt in chain:
        if isinstance(stmt, For):
            lo = eval_interval(substitute_vars(stmt.min, bindings) if bindings else stmt.min, dom)
            ext = eval_interval(substitute_vars(stmt.extent, bindings) if bindings else stmt.extent, dom)
            if not _constant(lo) or not _constant(ext):
                return None
            dom[stmt.loop_var] = Interval(lo.lo, IntImm(lo.lo.dtype, lo.lo.value + ext.hi.value - 1))
        elif isinstance(stmt, BlockRealize):
            for iv, value in zip(stmt.block.iter_vars, stmt.iter_values):
                bindings[iv.var] = substitute_vars(value, bindings) if bindings else value
    block = chain[-1].block
    out = []
    for regions in (block.reads, block.writes):
        boxes: dict = {}
        for region in regions:
            box = []
            for rng in region.region:
                lo = eval_interval(substitute_vars(rng.min, bindings), dom)
                ext = eval_interval(substitute_vars(rng.extent, bindings), dom)
                if not _constant(lo) or not _constant(ext):
                    return None
                box.append((lo.lo.value, _hi_of(lo, ext)))
            boxes.setdefault(region.buffer, []).append(box)
        out.append(boxes)
    return tuple(out)


def _hi_of(lo: Interval, ext: Interval) -> int:
    """The last element a range starting in ``lo`` with an extent in
    ``ext`` may reach."""
    return lo.hi.value + ext.hi.value - 1


def _constant(i: Interval) -> bool:
    return isinstance(i.lo, IntImm) and isinstance(i.hi, IntImm)


def _conflict(mine, theirs):
    (my_reads, my_writes), (their_reads, their_writes) = mine, theirs
    for a, b in ((my_writes, their_reads), (my_writes, their_writes), (my_reads, their_writes)):
        for buf, boxes in a.items():
            for x in boxes:
                for y in b.get(buf, ()):
                    if all(xl <= yh and yl <= xh for (xl, xh), (yl, yh) in zip(x, y)):
                        return buf.name
    return None


__all__ = ["MAX_ITERATIONS", "reordered_access"]
