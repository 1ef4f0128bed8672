"""Sampling: TVM's random schedule decisions, drawn from a seeded state.

A :class:`tirfun.Schedule` holds a random state, an int, as TVM's schedule
does (a linear congruential engine, ``state * 48271 % (2**31 - 1)``). Each
sampling primitive reads the state, draws, and hands back the new state
with what it drew: the functions here are pure, so the same seed gives
the same decisions and no state is shared between schedules.

What is drawn comes back as plain values (ints, a loop reference), and
the primitives it is passed to record it as it is: a trace replays the
decisions without sampling again.
"""

from __future__ import annotations

import math
import os

from .rewrites.errors import InvalidArgumentError
from .rewrites.refs import LoopRef

MODULUS = 2147483647  # 2**31 - 1, as TVM's LinearCongruentialEngine
MULTIPLIER = 48271

#: where sample_compute_location may answer "leave the block where it is"
#: (TVM's root mark) and "inline it" (TVM's inline mark); compute_at and
#: reverse_compute_at take them as TVM's do (nothing; inline the block)
ROOT_MARK = LoopRef("<root>")
INLINE_MARK = LoopRef("<inline>")


def normalize_seed(seed, primitive: str = "seed") -> int:
    """A random state from ``seed``: -1 takes one from the operating
    system, any other non-negative int is reduced modulo ``2**31 - 1``
    (0 becomes 1), as TVM's ``NormalizeSeed``."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise InvalidArgumentError(primitive, "seed", f"expected an int, got {seed!r}")
    if seed == -1:
        seed = int.from_bytes(os.urandom(4), "little") % MODULUS
    elif seed < 0:
        raise InvalidArgumentError(primitive, "seed", f"the seed must be -1 or non-negative, got {seed}")
    seed %= MODULUS
    return seed or 1


class Rng:
    """A random engine over one state, used for the length of one draw;
    the caller keeps ``state`` afterwards."""

    __slots__ = ("state",)

    def __init__(self, state: int):
        self.state = state

    def next(self) -> int:
        """The next state, in ``[1, 2**31 - 2]``."""
        self.state = self.state * MULTIPLIER % MODULUS
        return self.state

    def integer(self, lo: int, hi: int) -> int:
        """A uniform int in ``[lo, hi)`` (rejection sampling: no modulo bias)."""
        span = hi - lo
        if span <= 1:
            return lo
        limit = (MODULUS - 1) - (MODULUS - 1) % span
        while True:
            x = self.next() - 1  # uniform in [0, MODULUS - 1)
            if x < limit:
                return lo + x % span

    def uniform(self) -> float:
        """A float in ``[0, 1)``."""
        return (self.next() - 1) / (MODULUS - 1)

    def fork_seed(self) -> int:
        """A seed for another engine, not the current state (TVM's
        ``ForkSeed``: both constants are primes)."""
        return (self.next() * 32767) % 1999999973 or 1


# -- sample_categorical -----------------------------------------------------------------

def _check_int(primitive: str, name: str, value, lo: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or (lo is not None and value < lo):
        what = "an int" if lo is None else f"an int of at least {lo}"
        raise InvalidArgumentError(primitive, name, f"expected {what}, got {value!r}")
    return value


def categorical(rng: Rng, candidates, probs, decision=None) -> tuple[int, int]:
    """``(value, index)``: a candidate drawn with the given probabilities
    (weights, normalised by their sum), or the one at index ``decision``."""
    p = "sample_categorical"
    if not isinstance(candidates, (list, tuple)) or not candidates:
        raise InvalidArgumentError(p, "candidates", f"expected a non-empty list of ints, got {candidates!r}")
    for c in candidates:
        _check_int(p, "candidates", c)
    if not isinstance(probs, (list, tuple)) or len(probs) != len(candidates):
        raise InvalidArgumentError(p, "probs", f"expected {len(candidates)} probabilities, one per candidate, "
                                   f"got {probs!r}")
    weights = []
    for w in probs:
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise InvalidArgumentError(p, "probs", f"a probability must be a finite number >= 0, got {w!r}")
        weights.append(float(w))
    total = sum(weights)
    if total <= 0:
        raise InvalidArgumentError(p, "probs", f"the probabilities {list(probs)!r} sum to 0")
    if decision is not None:
        _check_int(p, "decision", decision)
        if not 0 <= decision < len(candidates):
            raise InvalidArgumentError(p, "decision", f"the decision is an index into the {len(candidates)} "
                                       f"candidates, got {decision}")
        return candidates[decision], decision
    point = rng.uniform() * total
    acc = 0.0
    index = max(i for i, w in enumerate(weights) if w > 0)  # rounding at the top end
    for i, w in enumerate(weights):
        acc += w
        if w > 0 and point < acc:
            index = i
            break
    return candidates[index], index


# -- sample_perfect_tile and sample_partitioned_tile -----------------------------------

def factorize(n: int) -> list[tuple[int, int]]:
    """``[(prime, power)]`` with ``n == prod(prime ** power)``, primes ascending."""
    out = []
    d = 2
    while d * d <= n:
        if n % d == 0:
            k = 0
            while n % d == 0:
                n //= d
                k += 1
            out.append((d, k))
        d += 1 if d == 2 else 2
    if n > 1:
        out.append((n, 1))
    return out


def _perfect_tile(rng: Rng, extent: int, n: int) -> list[int]:
    """Factors of ``extent`` into ``n`` tiles: each prime's power is spread
    over the tiles uniformly among the ways to write it as ``n``
    non-negative parts (TVM's ``SamplePerfectTile``)."""
    result = [1] * n
    for prime, power in factorize(extent):
        # stars and bars: n - 1 bars among power + n - 1 places
        places = power + n - 1
        bars = sorted(_without_replacement(rng, places, n - 1)) + [places]
        last = -1
        for i, bar in enumerate(bars):
            result[i] *= prime ** (bar - last - 1)
            last = bar
    return result


def _without_replacement(rng: Rng, n: int, k: int) -> list[int]:
    order = list(range(n))
    for i in range(k):
        j = rng.integer(i, n)
        order[i], order[j] = order[j], order[i]
    return order[:k]


def _check_tiling(primitive: str, extent: int, n: int, decision) -> list[int]:
    if not isinstance(decision, (list, tuple)) or len(decision) != n:
        raise InvalidArgumentError(primitive, "decision", f"expected a list of {n} factors, got {decision!r}")
    for f in decision:
        _check_int(primitive, "decision", f, 1)
    if math.prod(decision) != extent:
        raise InvalidArgumentError(primitive, "decision", f"the factors {list(decision)!r} multiply to "
                                   f"{math.prod(decision)}, not to the loop's extent {extent}")
    return list(decision)


def perfect_tile(rng: Rng, extent: int | None, n: int, max_innermost_factor: int = 16,
                 decision=None) -> list[int]:
    """``n`` factors whose product is ``extent``, the innermost at most
    ``max_innermost_factor`` (-1: no limit); ``decision`` instead when given
    (checked to be such a tiling). A loop of symbolic extent (``None``)
    gives ``[None, 1, ..., 1]``, as TVM's does: split infers the None."""
    p = "sample_perfect_tile"
    _check_int(p, "n", n, 1)
    _check_int(p, "max_innermost_factor", max_innermost_factor)
    if max_innermost_factor != -1:
        if max_innermost_factor < 1:
            raise InvalidArgumentError(p, "max_innermost_factor", f"expected -1 or a positive int, got "
                                       f"{max_innermost_factor}")
        if n < 2:
            raise InvalidArgumentError(p, "n", f"a tiling with a max_innermost_factor needs 2 tiles or more, "
                                       f"got {n}")
    if extent is None:
        trivial = [None] + [1] * (n - 1)
        # TVM's decision writes the inferred factor as -1
        if decision is not None and [None if f == -1 else f for f in decision] != trivial:
            raise InvalidArgumentError(p, "decision", f"the loop's extent is not a constant: the only tiling is "
                                       f"{trivial}, got {decision!r}")
        return trivial
    if decision is not None:
        tiles = _check_tiling(p, extent, n, decision)
        if max_innermost_factor != -1 and tiles[-1] > max_innermost_factor:
            raise InvalidArgumentError(p, "decision", f"the innermost factor of {tiles!r} is more than "
                                       f"max_innermost_factor={max_innermost_factor}")
        return tiles
    while True:  # an innermost 1 always qualifies, so this ends
        tiles = _perfect_tile(rng, extent, n)
        if max_innermost_factor == -1 or tiles[-1] <= max_innermost_factor:
            return tiles


def partitioned_tile(rng: Rng, extent: int | None, n: int, partition_pos: int = 0, innerpart_factor: int = 1,
                     decision=None) -> list[int]:
    """``n`` factors whose product is ``extent`` and whose factors from
    ``partition_pos`` on multiply to a multiple of ``innerpart_factor``;
    ``decision`` instead when given (checked). A symbolic extent, or one
    ``innerpart_factor`` does not divide, gives ``[-1, 1, ..., 1]``, as
    TVM's does."""
    p = "sample_partitioned_tile"
    _check_int(p, "n", n, 1)
    _check_int(p, "innerpart_factor", innerpart_factor, 1)
    _check_int(p, "partition_pos", partition_pos, 0)
    if partition_pos >= n:
        raise InvalidArgumentError(p, "partition_pos", f"expected a position among the {n} tiles, got "
                                   f"{partition_pos}")
    if (partition_pos != 0 or innerpart_factor != 1) and n < 2:
        raise InvalidArgumentError(p, "n", f"a partitioned tiling needs 2 tiles or more, got {n}")
    if extent is None or extent % innerpart_factor:
        trivial = [-1] + [1] * (n - 1)
        if decision is not None and list(decision) != trivial:
            raise InvalidArgumentError(p, "decision", f"no tiling of this loop has its inner part a multiple of "
                                       f"{innerpart_factor}: the only answer is {trivial}, got {decision!r}")
        return trivial

    def inner_part_divides(tiles) -> bool:
        return math.prod(tiles[partition_pos:]) % innerpart_factor == 0

    if decision is not None:
        tiles = _check_tiling(p, extent, n, decision)
        if not inner_part_divides(tiles):
            raise InvalidArgumentError(p, "decision", f"the factors of {tiles!r} from position {partition_pos} "
                                       f"on do not multiply to a multiple of {innerpart_factor}")
        return tiles
    while True:  # all of the extent in the last tile qualifies, so this ends
        tiles = _perfect_tile(rng, extent, n)
        if inner_part_divides(tiles):
            return tiles


# -- sample_compute_location ---------------------------------------------------------------

def compute_locations(mod, block) -> list[tuple[int, LoopRef]]:
    """Where ``block`` may be computed, as TVM's ``CollectComputeLocation``
    lists it: ``(-2, INLINE_MARK)`` when it can be inlined, ``(-1,
    ROOT_MARK)``, then ``(i, loop)`` for the i-th loop above its first
    consumer (up to the loop holding all consumers) that compute_at
    accepts, skipping unit loops, data-parallel loops after a reduction
    loop and trailing reduction loops."""
    from . import rewrites as R

    out = []
    if not R.compute_inline(block).violations(mod):
        out.append((-2, INLINE_MARK))
    out.append((-1, ROOT_MARK))
    consumers = R.get_consumers(mod, block)
    if not consumers:
        return out
    srefs = [R.get_sref(mod, c) for c in consumers]
    boundary = _lowest_common_ancestor(srefs) if len(srefs) > 1 else srefs[0].parent
    if boundary is None or not isinstance(boundary.ref, LoopRef):
        return out
    loops = R.get_loops(mod, consumers[0])
    if boundary.ref not in loops:
        return out
    candidates = loops[:loops.index(boundary.ref) + 1]
    kinds = [_loop_iter_type(R.get(mod, lp)) for lp in candidates]
    last_datapar = max((i for i, k in enumerate(kinds) if k == "DataPar"), default=-1)
    visited_reduce = False
    for i, (lp, kind) in enumerate(zip(candidates, kinds)):
        extent = getattr(R.get(mod, lp).extent, "value", None)
        if extent == 1:
            continue
        if kind == "DataPar":
            if visited_reduce:
                break
        else:
            visited_reduce = True
            if i > last_datapar:
                break
        if not R.compute_at(block, lp, True).violations(mod):
            out.append((i, lp))
    return out


def _lowest_common_ancestor(srefs):
    """The deepest StmtSRef above or at every one of ``srefs``."""
    chains = []
    for s in srefs:
        chain = []
        while s is not None:
            chain.append(s.path)
            s = s.parent
        chains.append(chain)
    common = set(chains[0]).intersection(*chains[1:])
    s = srefs[0]
    while s is not None and s.path not in common:
        s = s.parent
    return s


def _loop_iter_type(loop) -> str:
    """TVM's ``GetLoopIterType``: how the blocks right under the loop use
    its variable: ``DataPar``, ``CommReduce`` or ``Opaque`` (mixed)."""
    from .analysis.traversal import stmt_children
    from .nodes import BlockRealize, IterVarType
    from .rewrites.exprs import var_names

    name = loop.loop_var.name
    spatial = reduce = other = 0
    stack = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, BlockRealize):
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                if name in var_names(value):
                    if iv.iter_type is IterVarType.DataPar:
                        spatial += 1
                    elif iv.iter_type is IterVarType.CommReduce:
                        reduce += 1
                    else:
                        other += 1
            continue
        stack.extend(child for _, child in stmt_children(node))
    if other or (spatial and reduce):
        return "Opaque"
    return "CommReduce" if reduce else "DataPar"


def compute_location(rng: Rng, mod, block, decision=None) -> tuple[LoopRef, int]:
    """``(location, index)``: a location drawn uniformly from
    :func:`compute_locations`, or the one whose index is ``decision``
    (which must be among them)."""
    found = compute_locations(mod, block)
    if decision is not None:
        _check_int("sample_compute_location", "decision", decision)
        for index, loc in found:
            if index == decision:
                return loc, index
        raise InvalidArgumentError("sample_compute_location", "decision",
                                   f"{decision} is not a location of the block (the locations are "
                                   f"{', '.join(str(i) for i, _ in found)})")
    index, loc = found[rng.integer(0, len(found))]
    return loc, index


__all__ = ["MODULUS", "ROOT_MARK", "INLINE_MARK", "normalize_seed", "Rng", "categorical", "factorize",
           "perfect_tile", "partitioned_tile", "compute_locations", "compute_location"]
