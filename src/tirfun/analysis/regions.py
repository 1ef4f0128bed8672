"""Boxes of buffer elements touched by accesses and declared by regions.

A :class:`Box` holds, per buffer dimension, the lowest and highest index
touched, as :class:`~tirfun.analysis.arith.linear.Linear` forms over the variables
kept symbolic (see :mod:`tirfun.analysis.arith.linear_bound`), with a flag per dimension
saying whether both ends are really reached. :func:`within` answers, in
three values, whether one box lies inside another for every value of the
kept variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ..nodes import BufferRegion, PrimExpr, Range
from .arith.linear import Linear
from .arith.linear_bound import LinearInterval as Interval
from .arith.linear_bound import bound, const_bounds


@attrs.frozen
class Box:
    """``lows[d] <= index_d <= highs[d]`` for each dimension ``d``; an end of
    None is unknown. ``exact[d]``: both ends of dimension ``d`` are reached."""

    lows: tuple
    highs: tuple
    exact: tuple

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.lows)


def access_box(indices: Sequence[PrimExpr], ranges: Mapping, exact: bool = True) -> Box:
    """The box touched by ``buffer[indices]`` while the variables of
    ``ranges`` (Var -> Interval) take every value of their range. Pass
    ``exact=False`` when the access may not run on every iteration (it sits
    under a condition): a condition may exclude the extremes of the relaxed
    variables, so only dimensions that do not depend on them stay exact."""
    lows, highs, flags = [], [], []
    for index in indices:
        iv = bound(index, ranges)
        lows.append(iv.lo)
        highs.append(iv.hi)
        flags.append(iv.exact and (exact or not iv.deps))
    return Box(tuple(lows), tuple(highs), tuple(flags))


def region_box(region: BufferRegion | Sequence[Range], ranges: Mapping | None = None,
               exact: bool = True) -> Box:
    """The box of a region (one Range per dimension): ``[min, min + extent - 1]``,
    with the variables of ``ranges`` relaxed over their range; ``exact`` as
    for :func:`access_box`."""
    ranges = {} if ranges is None else ranges
    dims = region.region if isinstance(region, BufferRegion) else region
    lows, highs, flags = [], [], []
    for rng in dims:
        lo_iv = bound(rng.min, ranges)
        ext_iv = bound(rng.extent, ranges)
        hi = None if lo_iv.hi is None or ext_iv.hi is None else lo_iv.hi + ext_iv.hi - 1
        lows.append(lo_iv.lo)
        highs.append(hi)
        ext_fixed = ext_iv.is_point and not ext_iv.deps
        flags.append(lo_iv.exact and ext_fixed and (exact or not lo_iv.deps))
    return Box(tuple(lows), tuple(highs), tuple(flags))


def _at_least(a: Linear | None, b: Linear | None, facts: Mapping) -> bool | None:
    """``a >= b`` for every value of the kept variables: True when proven,
    False when it fails for some value that is surely taken, None when
    undecided."""
    if a is None or b is None:
        return None
    diff = a - b
    low, high = const_bounds(diff, facts)
    if low is not None and low >= 0:
        return True
    if high is not None and high < 0:
        return False  # fails for every value
    reached = attained_minimum(diff, facts)
    if reached is not None and reached < 0:
        return False  # fails at the minimum, which some value reaches
    return None


def attained_minimum(linear: Linear, facts: Mapping) -> int | None:
    """The minimum of ``linear`` when it is surely reached: every term is a
    variable whose fact is an exact constant interval (a block iteration
    variable over its domain, each independent of the others); else None."""
    total = linear.const
    for var, c in linear.terms:
        fact = facts.get(var)
        if fact is None or not fact.exact or not fact.is_const:
            return None
        total += c * (fact.lo.const if c > 0 else fact.hi.const)
    return total


def within(inner: Box, outer: Box, facts: Mapping) -> bool | None:
    """Whether every element of ``inner`` lies in ``outer``.

    True when proven for every value of the kept variables (whose ranges are
    ``facts``, Var -> Interval); False when some element of ``inner`` that
    is really touched (an exact end) lies outside ``outer``, for every value
    of the kept variables or for one their exact facts say is taken; None
    when it cannot be decided.
    """
    verdict: bool | None = True
    for d in range(inner.ndim):
        low_ok = _at_least(inner.lows[d], outer.lows[d], facts)
        high_ok = _at_least(outer.highs[d], inner.highs[d], facts)
        if (low_ok is False or high_ok is False) and inner.exact[d]:
            return False
        if low_ok is not True or high_ok is not True:
            verdict = None
    return verdict


def hull(boxes: Sequence[Box]) -> Box | None:
    """The smallest box holding all ``boxes`` where their ends compare as
    constants apart; an end that does not compare becomes unknown."""
    if not boxes:
        return None
    lows, highs = list(boxes[0].lows), list(boxes[0].highs)
    for box in boxes[1:]:
        for d in range(len(lows)):
            lows[d] = _extreme(lows[d], box.lows[d], -1)
            highs[d] = _extreme(highs[d], box.highs[d], 1)
    return Box(tuple(lows), tuple(highs), tuple(True for _ in lows))


def _extreme(a: Linear | None, b: Linear | None, direction: int) -> Linear | None:
    if a is None or b is None:
        return None
    diff = a - b
    if not diff.is_const:
        return None
    if direction < 0:
        return a if diff.const <= 0 else b
    return a if diff.const >= 0 else b


def domain_interval(rng: Range) -> Interval:
    """``[min, min + extent - 1]`` of a Range, with every variable kept."""
    lo_iv = bound(rng.min)
    ext_iv = bound(rng.extent)
    hi = None if lo_iv.hi is None or ext_iv.hi is None else lo_iv.hi + ext_iv.hi - 1
    return Interval(lo_iv.lo, hi, lo_iv.exact and ext_iv.exact, frozenset())


__all__ = ["Box", "access_box", "region_box", "within", "hull", "domain_interval", "attained_minimum"]
