"""Regions of buffers: bound inference and region cover, the two questions
the block primitives ask (``compute_at`` and ``reverse_compute_at`` place a
block by the region its consumers or producers touch; ``cache_read``,
``compute_inline`` and ``decompose_padding`` need to know whether written
regions cover a read one).

* :func:`bound_region` ``(region, dom, bindings)``: the region an access
  touches while the loops of ``dom`` run, one
  :class:`~tirfun.analysis.arith.int_set.Interval` per dimension whose ends
  are TIR expressions in the variables left outside ``dom`` (the outer
  loops): relaxing ``j`` over ``range(4)`` in ``A[vi * 4 + j]`` with ``vi =
  i`` gives ``[i * 4, i * 4 + 3]``. :func:`region_ranges` writes such
  intervals as ``(min, extent)`` Ranges.
* :func:`region_covers` ``(regions, target, dom)``: whether the union of
  ``regions`` holds every element of ``target`` for every value of the
  variables within their domains; True only when proven (by
  :func:`~tirfun.analysis.arith.prove.can_prove`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from ...nodes import GE, LE, Add, BufferRegion, FloorDiv, IntImm, Max, Min, PrimExpr, Range, Sub, Var
from ...nodes.expr import match_types
from . import int_set
from .int_set import Interval
from .iter_map import is_plain_sum, simplify_index
from .terms import fits, int_value
from .prove import Assumptions, can_prove
from .linear import simplify_affine
from .linear_bound import surely_at_most
from .simplify import simplify_expr
from ..mentions import names_in


def _dims(region) -> list:
    return list(region.region) if isinstance(region, BufferRegion) else list(region)


def _interval(dim) -> Interval:
    return dim if isinstance(dim, Interval) else Interval.from_range(dim)


def bound_region(region, dom: Mapping[Var, Range | Interval],
                 bindings: Mapping[Var, PrimExpr] | None = None) -> list[Interval]:
    """Bound inference: the interval of each dimension of ``region`` (a
    BufferRegion, or one Range per dimension, as a block's reads and writes
    are declared) while every variable of ``dom`` (Var -> Range: the loops
    being relaxed, or their Intervals from :meth:`Interval.from_range`, for
    a caller that bounds many regions over one domain) takes every value of
    its range.

    ``bindings`` (block iteration variable -> bound value) are substituted
    first, so a block's declared region is read in the loop variables around
    it. Variables neither bound nor in ``dom`` stay symbolic in the ends. An
    end is None where the index is not bounded (a non-affine use of a relaxed
    variable); the result always holds every element touched.
    """
    relaxed = {v: r if type(r) is Interval else Interval.from_range(r) for v, r in dom.items()}
    out = []
    for dim in _dims(region):
        found = None if bindings else _plain_bound(dim, relaxed)
        out.append(found if found is not None else _bound_dim(dim, relaxed, bindings))
    return out


def _bound_dim(dim, relaxed: Mapping[Var, Interval], bindings) -> Interval:
    """One dimension of :func:`bound_region`, by interval evaluation."""
    iv = _interval(dim)
    if bindings:
        iv = Interval(None if iv.lo is None else int_set.substitute(iv.lo, bindings),
                      None if iv.hi is None else int_set.substitute(iv.hi, bindings))
    lo = None if iv.lo is None else int_set.eval_interval(iv.lo, relaxed).lo
    hi = None if iv.hi is None else int_set.eval_interval(iv.hi, relaxed).hi
    return Interval(None if lo is None else int_set.simplify(lo),
                    None if hi is None else int_set.simplify(hi))


def _plain_bound(dim, relaxed: Mapping[Var, Interval]) -> Interval | None:
    """:func:`_bound_dim` of a Range whose min is a sum in normal form
    (:func:`~tirfun.analysis.arith.iter_map.is_plain_sum`: ``vi_o * 16 +
    vi_i``, ``i_0 * 64 + j + 3``) and whose extent is a literal, where each
    relaxed variable it reads has literal ends of its dtype: the interval
    evaluation of such a sum keeps the terms of the other variables in
    order and adds up the ends of the relaxed ones, which is computed here
    directly, node for node what the evaluation and its simplification
    write. None for any other dimension (or where a constant leaves the
    dtype), which the evaluation answers."""
    if type(dim) is not Range or type(dim.extent) is not IntImm:
        return None
    m = dim.min
    if not is_plain_sum(m):
        return None
    dtype = m.dtype
    const = 0
    node = m
    if (type(node) is Add or type(node) is Sub) and type(node.b) is IntImm:  # the sum's constant, + c or - c
        const = node.b.value if type(node) is Add else -node.b.value
        node = node.a
    kept = []  # the terms of variables that are not relaxed, right to left
    lo = hi = const
    while node is not None:
        if type(node) is Add:
            term, node = node.b, node.a
        else:
            term, node = node, None
        var, k = (term, 1) if type(term) is Var else (term.a, term.b.value)
        iv = relaxed.get(var)
        if iv is None:
            kept.append(term)
            continue
        a, b = iv.lo, iv.hi
        if type(a) is not IntImm or type(b) is not IntImm or a.dtype != dtype or b.dtype != dtype:
            return None
        lo += k * a.value
        hi += k * b.value
    hi += dim.extent.value - 1
    if not (fits(dtype, lo) and fits(dtype, hi)):
        return None
    kept.reverse()
    return Interval(_sum_plus(kept, lo, dtype), _sum_plus(kept, hi, dtype))


def _sum_plus(terms: list, const: int, dtype) -> PrimExpr:
    """``t0 + t1 + ... + const`` as the affine simplification writes it."""
    if not terms:
        return IntImm(dtype, const)
    out = terms[0]
    for t in terms[1:]:
        out = Add(out, t)
    if const > 0:
        return Add(out, IntImm(dtype, const))
    if const < 0:
        return Sub(out, IntImm(dtype, -const))
    return out


def region_ranges(intervals: Sequence[Interval], shape: Sequence[PrimExpr]) -> list[Range]:
    """Intervals as ``(min, extent)`` Ranges; a dimension unbounded on either
    side becomes the whole of that dimension of ``shape``."""
    return [int_set.cover_range(iv, Range(IntImm(dim.dtype, 0), dim)) for iv, dim in zip(intervals, shape)]


def region_covers(regions: Sequence, target, dom: Assumptions | None = None) -> bool:
    """Whether the union of ``regions`` (each a BufferRegion, or a sequence of
    Ranges or Intervals, one per dimension) holds every element of
    ``target`` for every value of the variables within ``dom`` (Var -> Range
    or ``(lo, hi)``, the loop domains).

    Proven, never guessed: True when one region contains the target, or
    when regions that agree on all dimensions but one join without a gap in
    that one into a region that contains it. False means not proven.
    """
    boxes = [[_interval(d) for d in _dims(r)] for r in regions]
    goal = [_interval(d) for d in _dims(target)]
    if any(len(b) != len(goal) for b in boxes) or any(not iv.bounded for iv in goal):
        return False
    boxes = [b for b in boxes if all(iv.bounded for iv in b)]
    for _ in range(len(boxes)):
        if any(_contains(b, goal, dom) for b in boxes):
            return True
        merged = _merge_once(boxes, dom)
        if merged is None:
            return False
        boxes = merged
    return any(_contains(b, goal, dom) for b in boxes)


def index_at_most(a: PrimExpr, b: PrimExpr, dom: Assumptions | None = None) -> bool:
    """Whether the index ``a <= b`` for every value of the variables within
    ``dom``: proven, or, past what the prover shows,
    bounded symbolically as index arithmetic denotes (a region's ends are
    indices: ``m - 1 <= (m + 3) // 4 * 4 - 1``, the end of a split of a
    symbolic extent, as TVM's analyzer finds it)."""
    if a.dtype != b.dtype:
        # the regions of one buffer may be indexed in int32 by one block and
        # int64 by another: compare them in the wider type
        a, b = match_types(a, b)
    if a == b or can_prove(LE(a, b), dom):
        return True
    if not (a.dtype.is_integer and b.dtype.is_integer):
        return False
    # a min or a max on either side, through its operands (the bound a
    # predicate adds to a relaxed end is a min): first the two that are
    # equivalences (max(p, q) <= b, a <= min(p, q): both), then the two
    # that only suffice (min(p, q) <= b, a <= max(p, q): either), so that
    # min(min(x + 1, 6), 5) <= min(x + 1, 5) is shown through the right side
    if isinstance(a, Max):
        return index_at_most(a.a, b, dom) and index_at_most(a.b, b, dom)
    if isinstance(b, Min):
        return index_at_most(a, b.a, dom) and index_at_most(a, b.b, dom)
    if isinstance(a, Min):
        return index_at_most(a.a, b, dom) or index_at_most(a.b, b, dom)
    if isinstance(b, Max):
        return index_at_most(a, b.a, dom) or index_at_most(a, b.b, dom)
    # a min or a max under a constant offset (the end of a region that the
    # predicate clamped, ``min(x, n - 1) + 1 - 1``): the offset goes inside
    lifted_a, lifted_b = _offset_into_extreme(a), _offset_into_extreme(b)
    if lifted_a is not None or lifted_b is not None:
        return index_at_most(lifted_a if lifted_a is not None else a,
                             lifted_b if lifted_b is not None else b, dom)
    # a min or a max divided by a positive constant (a clamped end read
    # through a //: ``min(i * 16 + 15, 255) // 16``): the quotient goes
    # inside, floor division by c > 0 keeping the order
    split_a, split_b = _quotient_into_extreme(a), _quotient_into_extreme(b)
    if split_a is not None or split_b is not None:
        return index_at_most(split_a if split_a is not None else a,
                             split_b if split_b is not None else b, dom)
    ranges = dict(dom or {})
    if not all(isinstance(r, Range) for r in ranges.values()):
        return False
    return surely_at_most(a, b, ranges) or _at_most_in_each_case(a, b, ranges)


def _quotient_into_extreme(e: PrimExpr) -> PrimExpr | None:
    """``min(x // c, y // c)`` for ``min(x, y) // c`` (or a max; ``c`` a
    positive constant), None for any other expression: ``x // c`` does not
    decrease as ``x`` grows, so it takes the smaller (larger) quotient of
    the smaller (larger) operand."""
    if type(e) is not FloorDiv or not isinstance(e.a, (Min, Max)):
        return None
    c = int_value(e.b)
    if c is None or c < 1:
        return None
    kind = type(e.a)
    return kind(simplify_index(FloorDiv(e.a.a, e.b)), simplify_index(FloorDiv(e.a.b, e.b)))


#: how many values of the variables :func:`_at_most_in_each_case` tries at
#: most: a loop of a few iterations, as a tile count of 2 or 3
_CASES = 16


def _at_most_in_each_case(a: PrimExpr, b: PrimExpr, ranges: Mapping) -> bool:
    """``a <= b`` shown for each value of the variables they read, where
    each is a loop of constant bounds and together they take at most
    :data:`_CASES` values: a proof by exhaustion, for what holds over a
    loop's few iterations and not beyond (``(c * 360 + 359) // 16 <= c *
    22 + 22`` for ``c`` in ``[0, 2)``, not for ``c = 2``)."""
    names = names_in(a) | names_in(b)
    if not names:
        return False
    values = []
    count = 1
    for var, r in ranges.items():
        if var.name not in names:
            continue
        lo, extent = int_value(r.min), int_value(r.extent)
        if lo is None or extent is None or extent < 1:
            return False
        count *= extent
        if count > _CASES:
            return False
        values.append((var, [IntImm(var.dtype, lo + k) for k in range(extent)]))
    if len(values) != len(names):
        return False  # a variable no loop bounds (a size): no finite cases
    for point in itertools.product(*(vals for _, vals in values)):
        mapping = {var: v for (var, _), v in zip(values, point)}
        x = int_value(simplify_expr(int_set.substitute(a, mapping)))
        y = int_value(simplify_expr(int_set.substitute(b, mapping)))
        if x is None or y is None or x > y:
            return False
    return True


_le = index_at_most


def _offset_into_extreme(e: PrimExpr) -> PrimExpr | None:
    """``min(x + c, y + c)`` for ``min(x, y) + c`` (or a max; ``c`` a
    constant, ``+ 1 - 1`` folded first), None for any other expression.
    Equal as index arithmetic denotes."""
    if not isinstance(e, (Add, Sub)):
        return None
    form = simplify_affine(e)
    if isinstance(form, (Min, Max)):
        return form
    if not isinstance(form, (Add, Sub)) or not isinstance(form.a, (Min, Max)) or not isinstance(form.b, IntImm):
        return None
    c = form.b.value if isinstance(form, Add) else -form.b.value
    inner = form.a
    shift = IntImm(form.dtype, c)
    return type(inner)(simplify_affine(Add(inner.a, shift)), simplify_affine(Add(inner.b, shift)))


def _contains(box: list[Interval], goal: list[Interval], dom) -> bool:
    return all(_le(o.lo, g.lo, dom) and _le(g.hi, o.hi, dom) for o, g in zip(box, goal))


def _same(a: Interval, b: Interval, dom) -> bool:
    return _le(a.lo, b.lo, dom) and _le(b.lo, a.lo, dom) and _le(a.hi, b.hi, dom) and _le(b.hi, a.hi, dom)


def _merge_once(boxes: list, dom):
    """Join two boxes that differ in one dimension only, where their
    intervals there overlap or touch; None when no pair joins."""
    for x in range(len(boxes)):
        for y in range(len(boxes)):
            if x == y:
                continue
            a, b = boxes[x], boxes[y]
            differing = [d for d in range(len(a)) if not _same(a[d], b[d], dom)]
            if len(differing) != 1:
                continue
            d = differing[0]
            # a first, then b: b starts no later than one past a's end
            one = IntImm(a[d].hi.dtype, 1)
            if _le(a[d].lo, b[d].lo, dom) and can_prove(GE(a[d].hi + one, b[d].lo), dom):
                hi = b[d].hi if _le(a[d].hi, b[d].hi, dom) else (a[d].hi if _le(b[d].hi, a[d].hi, dom) else None)
                if hi is None:
                    continue
                joined = list(a)
                joined[d] = Interval(a[d].lo, hi)
                rest = [boxes[k] for k in range(len(boxes)) if k not in (x, y)]
                return rest + [joined]
    return None


__all__ = ["bound_region", "region_ranges", "region_covers"]
