"""Iteration maps: how block bindings read the loops around them (TVM's
``DetectIterMap``), and the normal form they are kept in.

After a split, a block binding ``vi = i`` becomes ``vi = (i_0 * 2 + i_1) * 2
+ i_2``; TVM prints it as ``i_0 * 4 + i_1 * 2 + i_2``. :func:`simplify_index`
does that normalisation: it views an integer expression as a sum of
integer-weighted *atoms* (variables, or ``//`` and ``%`` by constants of such
sums) plus a constant, applies only exact identities of integer arithmetic
(``(c*q + r) // c == q + r // c``, ``c * (x // c) + x % c == x``, and
``r // c == 0``, ``r % c == r`` when the loop ranges put ``r`` in ``[0, c)``),
and prints the terms by decreasing weight. A ``%`` it cannot resolve drops
the multiples of its divisor and keeps the other weights as they are
(``(i_0 * 128 + i_1) % 48``, as TVM's iterator maps write a fused index cut
again), so that it names the same sum as the matching ``//``. Anything it
does not understand is kept as an opaque atom. Like TVM's iterator maps it reads bindings in
unbounded integers, as bindings are (a binding that wraps is out of its
domain): where the given ranges show that the dividend of a ``//`` or ``%``
may leave the dtype, the division is left alone.

:func:`detect_iter_map` reads a list of binding values as sums of
:class:`IterSplit` slices of the loops (:class:`IterSum`), at one of three
levels: ``"affine"`` (a mixed radix of disjoint slices: what split, fuse and
reorder produce; each value of the slices used is taken once), ``"surjective"`` (windows may overlap: TVM's
``IsAffineBinding``, which reorder uses) and ``"bijective"`` (affine, and
every loop is used whole). :func:`is_affine_binding` is the yes/no form.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from ...errors import NodeError
from ...nodes import Add, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var
from ...nodes.expr import match_types
from .const_bound import expr_bounds
from .linear import Affine, fold_mul, prove_equal, quotient_digits, remainder_digits
from .terms import fits
from .terms import int_value as _int_value

# name -> inclusive (lo, hi) of a variable, for constant ranges only
Ranges = Mapping[str, tuple[int, int]]


def _lin_bounds(lin: Affine, ranges: Ranges) -> tuple[int, int] | None:
    lo = hi = lin.const
    for atom, k in lin.terms:
        b = expr_bounds(atom, ranges)
        if b is None:
            return None
        if k > 0:
            lo, hi = lo + k * b[0], hi + k * b[1]
        else:
            lo, hi = lo + k * b[1], hi + k * b[0]
    return lo, hi


class _Normalizer:
    def __init__(self, ranges: Ranges, dtype):
        self.ranges = ranges
        self.dtype = dtype

    def const(self, v: int) -> IntImm:
        return IntImm(self.dtype, v)

    def atom(self, e: PrimExpr) -> Affine:
        return Affine(self.dtype, ((e, 1),), 0)

    def number(self, v: int) -> Affine:
        return Affine(self.dtype, (), v)

    def lin(self, e: PrimExpr) -> Affine:
        if e.dtype != self.dtype:
            return self.atom(e)
        value = _int_value(e)
        if value is not None:
            return self.number(value)
        if isinstance(e, Var):
            return self.atom(e)
        if isinstance(e, Add):
            return self.lin(e.a).plus(self.lin(e.b))
        if isinstance(e, Sub):
            return self.lin(e.a).plus(self.lin(e.b), -1)
        if isinstance(e, Mul):
            a, b = self.lin(e.a), self.lin(e.b)
            if not a.terms:
                return b.scale(a.const)
            if not b.terms:
                return a.scale(b.const)
            return self.atom(Mul(self.expr(a), self.expr(b)))
        if isinstance(e, (FloorDiv, FloorMod)):
            a, b = self.lin(e.a), self.lin(e.b)
            if not b.terms and b.const > 0:
                if isinstance(e, FloorDiv):
                    return self.floordiv(a, b.const)
                return self.floormod(a, b.const)
            if not a.terms and a.const == 0:
                # 0 // n and 0 % n are 0 for every n they are defined for,
                # as TVM's simplifier folds them (a fused loop's start)
                return self.number(0)
            split = self.symbolic_multiples(a, b)
            if split is not None:
                q, r = split
                # (q * n + r) // n is q + r // n, and (q * n + r) % n is
                # r % n, for every n they are defined for (a fused loop's end)
                rest = r if not r.terms and r.const == 0 else None
                if isinstance(e, FloorDiv):
                    return q if rest is not None else q.plus(self.atom(FloorDiv(self.expr(r), self.expr(b))))
                return self.number(0) if rest is not None else self.atom(FloorMod(self.expr(r), self.expr(b)))
            cls = type(e)
            return self.atom(cls(self.expr(a), self.expr(b)))
        return self.atom(e)

    def symbolic_multiples(self, a: Affine, b: Affine) -> tuple[Affine, Affine] | None:
        """``(q, r)`` with ``a == q * b + r``, for ``b`` one term of weight 1
        (a size ``n``): ``q`` gathers the terms of ``a`` that are ``x * n``;
        None where there is none of a variable ``x``, or where ``a`` may
        leave the dtype."""
        if b.const != 0 or len(b.terms) != 1 or b.terms[0][1] != 1 or self.may_wrap(a):
            return None
        t = b.terms[0][0]
        q, r = [], []
        for atom, k in a.terms:
            other = None
            if atom == t:
                other = self.number(1)
            elif type(atom) is Mul and atom.a == t:
                other = self.lin(atom.b)
            elif type(atom) is Mul and atom.b == t:
                other = self.lin(atom.a)
            if other is None:
                r.append((atom, k))
            else:
                q.append(other.scale(k))
        total = self.number(0)
        for part in q:
            total = total.plus(part)
        if not total.terms:
            # a constant multiple only ((n + 15) // n, a ceiling): kept as
            # written, as TVM prints it
            return None
        return total, Affine(self.dtype, tuple(r), a.const)

    def may_wrap(self, lin: Affine) -> bool:
        """Whether the ranges show that ``lin`` may leave the dtype (then the
        wrapped dividend is not the sum, and no division rule holds)."""
        if not self.ranges:
            return False
        bounds = _lin_bounds(lin, self.ranges)
        if bounds is None:
            return False
        return not (fits(self.dtype, bounds[0]) and fits(self.dtype, bounds[1]))

    def merge_div_mod(self, lin: Affine) -> Affine:
        """``k*c*(x // c) + k*(x % c)`` becomes ``k*x``, and one digit lower
        ``k*a*(x // (a*b)) + k*(x % (a*b) // b)`` becomes ``k*(x // b)``
        (:func:`~tirfun.analysis.arith.linear.quotient_digits`), and
        ``k*b*(x // b % a) + k*(x % b)`` becomes ``k*(x % (a*b))``
        (:func:`~tirfun.analysis.arith.linear.remainder_digits`)."""
        changed = True
        while changed:
            changed = False
            digits = quotient_digits(lin)
            if digits is not None and digits[1] is FloorDiv:
                rest, _, x, b, k = digits
                lin = rest.plus(self.floordiv(self.lin(x), _int_value(b)).scale(k))
                changed = True
                continue
            digits = remainder_digits(lin)
            if digits is not None and digits[1] is FloorMod:
                rest, _, x, ab, k = digits
                lin = rest.plus(self.floormod(self.lin(x), _int_value(ab)).scale(k))
                changed = True
                continue
            for atom, k in lin.terms:
                if not isinstance(atom, FloorMod):
                    continue
                c = _int_value(atom.b)
                if c is None:
                    # a divisor of run-time value: x // n * n + x % n is x
                    # for every n other than 0 (a split by n fused again)
                    quotient = FloorDiv(atom.a, atom.b)
                    terms = dict(lin.terms)
                    partner = next((p for p in (Mul(quotient, atom.b), Mul(atom.b, quotient))
                                    if terms.get(p) == k), None)
                    if partner is None:
                        continue
                else:
                    partner = FloorDiv(atom.a, atom.b)
                    if dict(lin.terms).get(partner) != k * c:
                        continue
                rest = tuple((t, kk) for t, kk in lin.terms if t != atom and t != partner)
                lin = Affine(self.dtype, rest, lin.const).plus(self.lin(atom.a).scale(k))
                changed = True
                break
        return lin

    def floordiv(self, a: Affine, c: int) -> Affine:
        a = self.merge_div_mod(a)
        if c == 1:
            return a
        if self.may_wrap(a):
            return self.atom(FloorDiv(self.expr(a), self.const(c)))
        q = Affine(self.dtype, tuple((t, k // c) for t, k in a.terms if k % c == 0), a.const // c)
        r = Affine(self.dtype, tuple((t, k) for t, k in a.terms if k % c != 0), a.const % c)
        if not r.terms:
            return q
        if self.may_wrap(r):
            # the remainder's sum may leave the dtype where the dividend does
            # not (``(z - 1) // 2`` is not ``(z + 1) // 2 - 1`` at the top)
            return self.atom(FloorDiv(self.expr(a), self.const(c)))
        bounds = _lin_bounds(r, self.ranges)
        if bounds is not None and bounds[0] >= 0 and bounds[1] < c:
            return q
        # every weight k as c * (k // c) + k % c: (c * q2 + r2) // c is q2
        # when r2 lies in [0, c) (c_o * 45 // 2 is c_o * 22 for c_o in [0, 1])
        r2 = Affine(self.dtype, tuple((t, k % c) for t, k in r.terms if k % c), r.const)
        bounds = None if r2 == r else _lin_bounds(r2, self.ranges)
        if bounds is not None and bounds[0] >= 0 and bounds[1] < c:
            return q.plus(Affine(self.dtype, tuple((t, k // c) for t, k in r.terms), 0))
        common = self.common_factor(r, c)
        if common is not None:
            # (g * y + r0) // (g * m) == y // m for 0 <= r0 < g: the
            # remainder cannot reach the next multiple of g
            y, g = common
            return q.plus(self.floordiv(y, c // g))
        parts = self.high_and_low(r, c)
        if parts is not None:
            # the same with terms below g in place of r0: (vi * 128 + vj) //
            # 2048 is vi // 16 for vj in [0, 128)
            y, g, _ = parts
            return q.plus(self.floordiv(y, c // g))
        if len(r.terms) == 1 and r.const == 0:
            (atom, k), = r.terms
            inner = _int_value(atom.b) if isinstance(atom, FloorDiv) else None
            if k == 1 and inner is not None and inner > 0:
                return q.plus(self.atom(FloorDiv(atom.a, self.const(inner * c))))
        return q.plus(self.atom(FloorDiv(self.expr(r), self.const(c))))

    def common_factor(self, r: Affine, c: int):
        """``(y, g)`` with ``r == g * y + r.const % g``, when the weights of
        ``r`` share a factor ``g > 1`` that divides ``c`` (and ``y`` does not
        leave the dtype); None otherwise."""
        g = 0
        for _, k in r.terms:
            g = math.gcd(g, k)
        g = math.gcd(g, c)
        if g <= 1:
            return None
        y = Affine(self.dtype, tuple((t, k // g) for t, k in r.terms), r.const // g)
        if self.may_wrap(y):
            return None
        return y, g

    def high_and_low(self, r: Affine, c: int):
        """``(y, g, low)`` with ``r == g * y + low``: ``g > 1`` a divisor of
        ``c`` dividing the weights of the terms in ``y``, and the ranges
        putting ``low`` (the other terms, and the constant's part below
        ``g``) in ``[0, g)``; the largest such ``g``, or None. It splits a
        fused index into its high and low parts, as TVM's iterator maps do."""
        for g in sorted({math.gcd(k, c) for _, k in r.terms}, reverse=True):
            if g <= 1:
                break
            high = tuple((t, k // g) for t, k in r.terms if k % g == 0)
            low = Affine(self.dtype, tuple((t, k) for t, k in r.terms if k % g), r.const % g)
            if not high or not low.terms:
                continue  # no terms below g: common_factor's case
            bounds = _lin_bounds(low, self.ranges)
            if bounds is None or bounds[0] < 0 or bounds[1] >= g:
                continue
            y = Affine(self.dtype, high, r.const // g)
            if self.may_wrap(y) or self.may_wrap(low):
                continue
            return y, g, low
        return None

    def floormod(self, a: Affine, c: int) -> Affine:
        a = self.merge_div_mod(a)
        if c == 1:
            return self.number(0)
        if self.may_wrap(a):
            return self.atom(FloorMod(self.expr(a), self.const(c)))
        r = Affine(self.dtype, tuple((t, k % c) for t, k in a.terms if k % c), a.const % c)
        if not r.terms:
            return r
        if self.may_wrap(r):  # as in floordiv: the reduced sum may wrap where the input does not
            return self.atom(FloorMod(self.expr(a), self.const(c)))
        bounds = _lin_bounds(r, self.ranges)
        if bounds is not None and bounds[0] >= 0 and bounds[1] < c:
            return r
        common = self.common_factor(r, c)
        if common is not None:
            # (g * y + r0) % (g * m) == g * (y % m) + r0 for 0 <= r0 < g
            y, g = common
            return self.floormod(y, c // g).scale(g).plus(self.number(r.const % g))
        parts = self.high_and_low(r, c)
        if parts is not None:
            # (g * y + low) % (g * m) == g * (y % m) + low for low in [0, g)
            y, g, low = parts
            return self.floormod(y, c // g).scale(g).plus(low)
        if len(r.terms) == 1 and r.const == 0:
            (atom, k), = r.terms
            inner = _int_value(atom.b) if isinstance(atom, FloorMod) else None
            if k == 1 and inner is not None and inner % c == 0:
                return self.atom(FloorMod(atom.a, self.const(c)))
        # written as TVM's iterator maps write a fused index cut again:
        # the multiples of c leave, the other weights stay as they are
        # (``(i_0 * 128 + i_1) % 48``, not ``(i_0 * 32 + i_1) % 48``), so
        # the quotient ``(i_0 * 128 + i_1) // 48`` and the remainder name
        # one sum
        kept = Affine(self.dtype, tuple((t, k) for t, k in a.terms if k % c), r.const)
        if not self.may_wrap(kept):
            return self.atom(FloorMod(self.expr(kept), self.const(c)))
        return self.atom(FloorMod(self.expr(r), self.const(c)))

    def expr(self, lin: Affine) -> PrimExpr:
        lin = self.merge_div_mod(lin)
        # stable: equal weights keep their order of appearance
        terms = sorted(lin.terms, key=lambda item: -item[1])
        out = None
        if terms and terms[0][1] < 0 and lin.const > 0:
            # every weight negative: lead with the constant, 9 - i rather
            # than i * -1 + 9, as TVM writes it
            out = self.const(lin.const)
            lin = attrs.evolve(lin, const=0)
        for atom, k in terms:
            if out is None:
                out = atom if k == 1 else Mul(atom, self.const(k))
            elif k > 0 or not fits(self.dtype, -k):
                # (a coefficient at the dtype's minimum has no negation: added)
                out = Add(out, atom if k == 1 else Mul(atom, self.const(k)))
            else:
                out = Sub(out, atom if k == -1 else Mul(atom, self.const(-k)))
        if out is None:
            return self.const(lin.const)
        if lin.const > 0 or (lin.const < 0 and not fits(self.dtype, -lin.const)):
            out = Add(out, self.const(lin.const))
        elif lin.const < 0:
            out = Sub(out, self.const(-lin.const))
        return out


def _is_index(e) -> bool:
    return isinstance(e, PrimExpr) and e.dtype.is_index


def simplify_index(e: PrimExpr, ranges: Ranges | None = None) -> PrimExpr:
    """``e`` as a simple sum of weighted terms (see the module docstring).

    ``ranges`` gives constant inclusive bounds of loop variables by name;
    it lets ``r // c`` vanish and ``r % c`` become ``r`` when ``r`` lies in
    ``[0, c)``. Non-integer expressions are returned unchanged.
    """
    kind = type(e)
    if kind is IntImm or kind is Var or not _is_index(e):
        return e  # a constant or a variable is as simple as it gets
    if (kind is FloorDiv or kind is FloorMod) and type(e.a) is Var and type(e.b) is IntImm and e.b.value > 0:
        return _var_slice(e, ranges)
    if (kind is Add or kind is Mul or kind is Sub) and is_plain_sum(e):
        return e  # what the normalizer would write again, node for node
    norm = _Normalizer(ranges or {}, e.dtype)
    try:
        return norm.expr(norm.lin(e))
    except NodeError:  # a folded constant that does not fit the dtype: keep the input
        return e


def is_plain_sum(e: PrimExpr) -> bool:
    """Whether ``e`` is already in the form :func:`simplify_index` writes,
    whatever the ranges: terms ``x`` or ``x * k`` (distinct variables, ``k``
    a literal of at least 2) joined by ``+`` in order of decreasing weight
    (``i_0 * 64 + i_1 * 4 + i_2``), then ``+ c`` or ``- c`` for a positive
    literal ``c``. Such an expression has no division to simplify and no
    like terms to collect, and the normalizer rebuilds it as it is; a
    primitive that substitutes ``vi_o * 16 + vi_i`` for ``vi`` meets one in
    every index."""
    node = e
    if (type(node) is Add or type(node) is Sub) and type(node.b) is IntImm:
        if node.b.value <= 0:
            return False
        node = node.a
    elif type(node) is Sub:
        return False
    seen = set()
    last = None  # the weight of the term to the right
    while True:
        if type(node) is Add:
            term, node = node.b, node.a
        else:
            term, node = node, None
        if type(term) is Var:
            var, weight = term, 1
        elif type(term) is Mul and type(term.a) is Var and type(term.b) is IntImm and term.b.value >= 2:
            var, weight = term.a, term.b.value
        else:
            return False
        if var in seen or (last is not None and weight < last):
            return False
        seen.add(var)
        last = weight
        if node is None:
            return True


def _var_slice(e, ranges: Ranges | None) -> PrimExpr:
    """What the normalizer makes of ``x // c`` or ``x % c`` (``x`` a
    variable, ``c`` a positive constant), without building its forms:
    ``x // 1`` is ``x`` and ``x % 1`` is 0; where the ranges put ``x`` in
    ``[0, c)``, ``x // c`` is 0 and ``x % c`` is ``x``; anything else, a
    range past the dtype included, stays as it is."""
    c = e.b.value
    x = e.a
    if c == 1:
        return x if type(e) is FloorDiv else IntImm(e.dtype, 0)
    bounds = ranges.get(x.name) if ranges else None
    if bounds is not None and fits(e.dtype, bounds[0]) and fits(e.dtype, bounds[1]) \
            and bounds[0] >= 0 and bounds[1] < c:
        return IntImm(e.dtype, 0) if type(e) is FloorDiv else x
    return e


def loop_ranges(loops) -> dict[str, tuple[int, int]]:
    """Inclusive bounds by loop variable name, for loops with constant bounds."""
    out = {}
    for loop in loops:
        lo, ext = _int_value(loop.min), _int_value(loop.extent)
        if lo is not None and ext is not None and ext > 0:
            out[loop.loop_var.name] = (lo, lo + ext - 1)
    return out


# -- the affine-binding test -------------------------------------------------------

_CONST = object()


def _symbolic_split(atom, loops: Mapping[str, object]):
    """A chain of ``//`` and ``%`` over a loop variable of ``loops`` from 0,
    some divisor an expression of none of them (a size such as ``n``,
    positive as TVM takes shape variables to be): ``(x, lower, extent)``,
    the slice ``(x // lower) % extent`` it is, ``extent`` None where the
    slice runs to the loop's end; None for any other chain. What fuse makes
    of loops of symbolic extents: ``f // n`` and ``f % n``, ``f // 128 // n``
    and ``f // 128 % n`` (loops of 32, n and 128), ``f % (b * c) // c``
    and ``f % (b * c) % c`` (a fuse of a fuse)."""
    from ...rewrites.exprs import uses_any

    chain = []
    x = atom
    while isinstance(x, (FloorDiv, FloorMod)):
        if not _is_index(x.b) or uses_any(x.b, loops) is not None:
            return None
        chain.append(x)
        x = x.a
    if not chain or not isinstance(x, Var) or x.name not in loops or _int_value(loops[x.name].min) != 0:
        return None
    lower: object = 1
    extent = loops[x.name].extent  # None once the slice runs to the loop's end unevenly
    bounded = False  # whether a % has cut the digit (its extent is no longer the loop's)
    for op in reversed(chain):
        d = _int_value(op.b)
        d = op.b if d is None else d
        if isinstance(d, int) and d < 1:
            return None
        if isinstance(op, FloorDiv):
            lower = d if lower == 1 else (lower * d if isinstance(lower, int) and isinstance(d, int)
                                          else Mul(*match_types(_as_expr(lower, op.b.dtype),
                                                                _as_expr(d, op.b.dtype))))
            # the top digit of a constant number of values (``f // d`` of
            # ``f`` in ``range(d * 4)``), or one that runs to the end; a
            # digit cut by a % must divide evenly
            extent = None if extent is None else _exact_quotient(extent, d)
            if extent is None and bounded:
                return None
        else:
            # the digit's values mod d (d of them, as TVM's iterator maps
            # take them: a digit of fewer values than d is read as d)
            extent, bounded = d, True
    if extent is not None and not isinstance(extent, int):
        value = _int_value(extent)
        extent = extent if value is None else value
    return x.name, lower, extent


def _as_expr(v, dtype) -> PrimExpr:
    return IntImm(dtype, v) if isinstance(v, int) else v


def _exact_quotient(whole, part):
    """``whole / part`` where ``part`` divides ``whole`` exactly (ints, or
    expressions of sizes: ``b * c / c`` is ``b``, ``n * 4096 / (128 * n)``
    is 32), as an int where constant; None where it is not shown to."""
    p = part
    w = whole if isinstance(whole, int) else _int_value(whole)
    if w is not None and isinstance(p, int):
        return w // p if p > 0 and w % p == 0 else None
    if w is not None:
        return None  # a constant over a size: not a multiple of every value
    if isinstance(p, int):
        q = _divided(whole, p)
        return None if q is None else (_int_value(q) if _int_value(q) is not None else q)
    c = _multiple_of(whole, p)
    if c is not None:
        return c
    # a product that holds the divisor's factors: the rest of them
    wc, wf = _product_key(whole)
    pc, pf = _product_key(p)
    rest = list(wf)
    for factor in pf:
        if factor not in rest:
            return None
        rest.remove(factor)
    if pc < 1 or wc % pc:
        return None
    out = IntImm(whole.dtype, wc // pc) if not rest or wc // pc != 1 else None
    for factor in rest:
        out = factor if out is None else Mul(*match_types(out, factor))
    return _int_value(out) if _int_value(out) is not None else out


def divides(part: PrimExpr, whole: PrimExpr) -> bool:
    """Whether ``whole`` is ``part`` times an integer expression, as
    written (``n * k`` of ``k``, ``4 * d + 4`` of ``d + 1``): then ``whole``
    is zero wherever ``part`` is, in the dtype's wrapping arithmetic too."""
    return _int_value(part) is None and _exact_quotient(whole, part) is not None


def _symbolic_divisor(atom) -> bool:
    """Whether a chain of ``//`` and ``%`` divides by a non-constant somewhere."""
    while isinstance(atom, (FloorDiv, FloorMod)):
        if _int_value(atom.b) is None:
            return True
        atom = atom.a
    return False


def _divided(extent: PrimExpr, c: int) -> PrimExpr | None:
    """``extent / c`` where every coefficient and the constant of its
    affine form are multiples of ``c``; None otherwise."""
    from .linear import Affine, affine_form

    form = affine_form(extent)
    if form is None or c < 1 or form.const % c or any(w % c for _, w in form.terms):
        return None
    return Affine(form.dtype, tuple((t, w // c) for t, w in form.terms), form.const // c).to_expr()


def _multiple_of(extent: PrimExpr, size: PrimExpr) -> int | None:
    """``c`` where ``extent`` is ``size * c`` as affine forms (``d * 4`` of
    ``d``), for a positive constant ``c``; None otherwise."""
    from .linear import affine_form

    whole, part = affine_form(extent), affine_form(size)
    if whole is None or part is None or not part.terms or whole.dtype != part.dtype:
        return None
    first, w = part.terms[0]
    c = dict(whole.terms).get(first)
    if c is None or c % w != 0 or c // w < 1:
        return None
    c //= w
    if whole.const != part.const * c or len(whole.terms) != len(part.terms):
        return None
    coeffs = dict(whole.terms)
    return c if all(coeffs.get(t) == k * c for t, k in part.terms) else None


def _split_of(atom, loops: Mapping[str, object], symbolic: bool = False):
    """``(var name, lower factor, extent or None)`` when ``atom`` is a loop
    variable or a ``//``/``%`` slice of one (with ``symbolic``, by an
    expression of no loop too: see :func:`_symbolic_split`); ``_CONST`` when
    it mentions no loop variable of ``loops``; None otherwise."""
    if isinstance(atom, Var):  # the commonest binding: a loop variable, or an outer one
        if atom.name not in loops:
            return _CONST
        return atom.name, 1, _int_value(loops[atom.name].extent)
    from ...rewrites.exprs import uses_any

    if uses_any(atom, loops) is None:
        return _CONST
    if isinstance(atom, Var):
        loop = loops[atom.name]
        return atom.name, 1, _int_value(loop.extent)
    c = _int_value(getattr(atom, "b", None))
    if symbolic and (c is None or _symbolic_divisor(atom)):
        return _symbolic_split(atom, loops)
    if c is None or c <= 0:
        return None
    inner = atom.a
    modulus = _int_value(getattr(inner, "b", None))
    if (isinstance(atom, FloorDiv) and isinstance(inner, FloorMod) and isinstance(inner.a, Var)
            and inner.a.name in loops and modulus is not None and modulus % c == 0
            and _int_value(loops[inner.a.name].min) == 0):
        ext = _int_value(loops[inner.a.name].extent)
        if ext is not None and ext < modulus:  # i % m is i: the slice ends with the loop
            return inner.a.name, c, -(-ext // c)
        return inner.a.name, c, modulus // c  # (i % (c * e)) // c: the slice [c, c * e)
    if isinstance(atom, FloorDiv) and isinstance(inner, Var) and inner.name in loops:
        loop = loops[inner.name]
        if _int_value(loop.min) != 0:
            return None
        ext = _int_value(loop.extent)
        return inner.name, c, None if ext is None else -(-ext // c)
    if isinstance(atom, FloorMod):
        if isinstance(inner, Var) and inner.name in loops:
            if _int_value(loops[inner.name].min) != 0:
                return None
            # a loop shorter than the modulus takes fewer values than it
            ext = _int_value(loops[inner.name].extent)
            return inner.name, 1, c if ext is None else min(c, ext)
        lower = _int_value(getattr(inner, "b", None))
        if (isinstance(inner, FloorDiv) and isinstance(inner.a, Var) and inner.a.name in loops
                and lower is not None and lower > 0 and _int_value(loops[inner.a.name].min) == 0):
            ext = _int_value(loops[inner.a.name].extent)
            return inner.a.name, lower, c if ext is None else min(c, -(-ext // lower))
    return None


@attrs.frozen
class IterSplit:
    """``((source // lower_factor) % extent) * scale``: a slice of the loop
    named ``source``; ``extent`` None when the slice runs to the loop's end
    and the loop's extent is not a constant."""

    source: str
    lower_factor: int
    extent: int | None
    scale: int


@attrs.frozen
class IterSum:
    """``sum(args) + base``: one binding value as slices of loops, ``args``
    from the smallest scale up; ``base`` collects what depends on no loop of
    the map (constants and outer variables)."""

    args: tuple
    base: PrimExpr


_LEVELS = ("affine", "surjective", "bijective")


def detect_iter_map(values, loops: Mapping[str, object], level: str = "affine", *,
                    symbolic: bool = False, weights: bool = False) -> list[IterSum] | None:
    """The binding ``values`` of one block as iteration sums over ``loops``
    (loop variable name -> For), or None when they are not an iteration map
    at ``level``.

    Each value must be a constant plus a mixed-radix sum of slices of the
    loops (``i``, ``i // c``, ``i % c``, ``i // a % b``, ``i % (a * b) // a``)
    whose innermost weight is 1 and whose every other weight is the product
    of the extents inside it; no slice of a loop may overlap another slice
    of the same loop anywhere in the map. Variables of other loops count as
    constants. This is the shape of binding TVM's iterator-map detection
    accepts and that split, fuse and reorder produce and preserve.

    At every level a slice that takes one value of a loop from 0 (a loop
    of extent 1, such as the inner unit loop a split leaves) counts as the
    constant 0. At
    ``"surjective"`` (TVM's ``IsAffineBinding``, which reorder uses),
    past the innermost weight 1, a weight may be smaller than
    the span of the parts inside it, so windows overlap (``2 * a + b`` with
    ``b`` of extent 3): every value is still reached, some more than once.
    At ``"bijective"`` the map is affine and, besides, every loop of
    ``loops`` with more than one iteration is used, its slices tiling it
    whole: each iteration of the loops gives one point and every point is
    given.

    With ``symbolic`` (not at ``"bijective"``), a slice may also divide by
    an expression of no loop of the map, ``f // n`` and ``f % n`` as fuse
    makes them of loops of symbolic extents: such a slice ends its value
    (nothing of a larger weight may follow it), and the slices of one loop
    must then chain, ``f % n`` below ``f // n``. Its :class:`IterSplit`
    holds the expression as its lower factor or extent.

    With ``weights`` besides, a slice may be weighted by an expression of
    no loop of the map (``i_0 * ((n + 7) // 8) + i_1``, what a split of a
    loop of symbolic extent by a symbolic factor makes): the weight must be
    the extent of what lies below it, proven equal to the symbolic extent
    of the loop taken whole there (times its weight), as a dense mixed
    radix needs; its :class:`IterSplit` holds the expression as its scale.
    """
    if level not in _LEVELS:
        raise ValueError(f"detect_iter_map: level must be one of {_LEVELS}, not {level!r}")
    surjective = level == "surjective"
    used: dict[str, list[tuple[int, float]]] = {}
    sums = []
    for value in values:
        if not _is_index(value):
            return None
        if isinstance(value, Var):
            # a variable alone: what the general reading below gives, directly
            split = _split_of(value, loops, symbolic)
            if split is _CONST:
                parts, base_expr = [], value
            else:
                parts = [] if _one_value(split, loops, surjective) else [(1, split)]
                base_expr = IntImm(value.dtype, 0)
        elif _is_loop_slice(value, loops):
            # ``i // c`` or ``i % c`` alone, as a layout map gives them: what
            # the general reading gives (the normal form keeps such a slice
            # as it is), directly
            split = _split_of(value, loops, symbolic)
            if split is None:
                return None
            parts = [] if _one_value(split, loops, surjective) else [(1, split)]
            base_expr = IntImm(value.dtype, 0)
        else:
            parts, base_expr = _read_value(value, loops, surjective, symbolic, weights and level != "bijective")
            if parts is None:
                return None
        # constant weights from the smallest up, then symbolic ones by their
        # constant factor (e before e * 4 before e * 16)
        parts.sort(key=_weight_order)
        expected: int | None = 1
        reach: PrimExpr | None = None  # the symbolic weight that would follow densely
        for k, (name, lower, extent) in parts:
            if not isinstance(k, int):
                if reach is None or not prove_equal(k, reach):
                    return None
            elif expected is None or k > expected or (k != expected and not surjective):
                return None
            reach = _reach_above(k, name, lower, extent, loops)
            sym = not isinstance(lower, int) or not (extent is None or isinstance(extent, int))
            if sym and level == "bijective":
                return None
            if not isinstance(extent, int) or not isinstance(k, int):
                # a slice of symbolic size ends the value; one of a constant
                # number of values (``f // d`` of ``f`` in ``d * 4``) does not
                expected = None
            elif surjective:
                expected = expected + k * (extent - 1)  # the span so far: [0, expected)
            else:
                expected = k * extent
            if sym:
                # [lower, upper) of the loop's place values, symbolically:
                # disjointness is left to the chain _slices_nest requires
                upper = _symbolic_upper(lower, extent)
            else:
                upper = float("inf") if extent is None else lower * extent
                for lo, hi in used.get(name, []):
                    if not (isinstance(lo, int) and isinstance(hi, (int, float))):
                        continue  # a symbolic slice: see _slices_nest
                    if max(lo, lower) < min(hi, upper):
                        return None
            used.setdefault(name, []).append((lower, upper))
        sums.append(IterSum(tuple(IterSplit(n, lw, ext, k) for k, (n, lw, ext) in parts), base_expr))
    if not _slices_nest(used, loops):
        return None
    if level == "bijective" and not _tiles_every_loop(used, loops):
        return None
    return sums


def _symbolic_upper(lower, extent):
    """Where a slice ``(x // lower) % extent`` with a symbolic bound ends in
    ``x``'s place values: ``lower * extent`` (``extent`` alone for a lower
    factor of 1; a constant number of values of a symbolic lower factor,
    ``f // d`` of ``f`` in ``range(d * 4)``, folded), or infinity where the
    slice runs to the loop's end."""
    if extent is None:
        return float("inf")
    if isinstance(extent, int):
        return fold_mul(lower, IntImm(lower.dtype, extent))
    if isinstance(lower, int):
        return extent if lower == 1 else Mul(IntImm(extent.dtype, lower), extent)
    return Mul(*match_types(lower, extent))


def _weight_order(part) -> tuple:
    """Sort key of a ``(weight, split)`` part: constant weights first, by
    value; then symbolic ones by the constant factor of a one-term affine
    form (``((n + 15) // 16) * 4``: 4), the others last in their order."""
    from .linear import affine_form

    k = part[0]
    if isinstance(k, int):
        return (0, k)
    form = affine_form(k)
    if form is not None and form.const == 0 and len(form.terms) == 1:
        return (1, form.terms[0][1])
    return (2, 0)


def _reach_above(k, name: str, lower, extent, loops: Mapping[str, object]) -> PrimExpr | None:
    """The weight a slice must have to follow the slice ``((name // lower)
    % extent) * k`` densely, where that is symbolic: ``k`` times the
    slice's extent, the loop's own where the slice takes it whole from 0;
    None where it is a constant (the constant weights say it) or unknown."""
    if isinstance(k, int) and isinstance(extent, int):
        return None
    if extent is None:
        loop = loops[name]
        if _int_value(loop.min) != 0:
            return None
        extent = loop.extent
        if lower != 1:
            # the top digit of a loop of X * c iterations, by c, takes X
            # values (f // 4096 of f in range(((n + 3) // 4) * 4096))
            extent = _divided(extent, lower) if isinstance(lower, int) else None
            if extent is None:
                return None
    if not isinstance(extent, PrimExpr):
        extent = IntImm(loops[name].loop_var.dtype, extent)
    if isinstance(k, int):
        k = IntImm(extent.dtype, k)
    if k.dtype != extent.dtype:
        return None
    return fold_mul(k, extent)


def _is_loop_slice(value, loops: Mapping[str, object]) -> bool:
    """Whether ``value`` is ``i // c`` or ``i % c`` for a variable ``i`` of
    ``loops`` and a literal ``c > 1``."""
    kind = type(value)
    return (kind is FloorDiv or kind is FloorMod) and type(value.a) is Var and type(value.b) is IntImm \
        and value.b.value > 1 and value.a.name in loops


def _one_value(split, loops: Mapping[str, object], surjective: bool) -> bool:
    """Whether a slice takes one value (the inner unit loop a split leaves):
    the constant 0, as TVM's iterator maps read it."""
    return split[2] == 1 and (surjective or _int_value(loops[split[0]].min) == 0)


def _read_value(value, loops: Mapping[str, object], surjective: bool, symbolic: bool = False,
                weights: bool = False):
    """One binding value as ``(parts, base)``: its slices of the loops as
    ``(weight, split)`` and the expression of the rest; ``(None, None)``
    when it is not such a sum. With ``weights``, a weight may be an
    expression of no loop (``i_0 * ((n + 7) // 8)``)."""
    norm = _Normalizer({}, value.dtype)
    try:
        lin = norm.lin(value)
    except NodeError:
        return None, None
    parts = []
    base = norm.number(lin.const)
    pending = list(lin.terms)
    while pending:
        atom, k = pending.pop(0)
        split = _split_of(atom, loops, symbolic)
        if split is _CONST:
            base = base.plus(norm.atom(atom).scale(k))
            continue
        if split is None:
            pieces = _fused_pieces(atom, loops, norm)
            if pieces is not None:
                pending[:0] = [(piece, k * w) for piece, w in pieces]
                continue
        if split is None and weights and k > 0:
            weighted = _symbolic_weight(atom, loops, symbolic, norm)
            if weighted is not None:
                for split, w in weighted:
                    if not _one_value(split, loops, surjective):
                        parts.append((w if k == 1 else fold_mul(w, IntImm(w.dtype, k)), split))
                continue
        if split is None or k <= 0:
            return None, None
        if _one_value(split, loops, surjective):
            continue
        parts.append((k, split))
    try:
        return parts, norm.expr(base)
    except NodeError:
        return None, None


def _symbolic_weight(atom, loops: Mapping[str, object], symbolic: bool, norm: _Normalizer):
    """``[(split, weight)]`` when ``atom`` is a slice of a loop, or a sum of
    such slices with constant weights, times an expression of no loop of
    ``loops`` (``i_0 * ((n + 7) // 8)``, ``(k_0 * 4 + k_1) * ((m + 15) //
    16)``); None otherwise."""
    from ...rewrites.exprs import uses_any

    if type(atom) is not Mul:
        return None
    for x, w in ((atom.a, atom.b), (atom.b, atom.a)):
        if not _is_index(w) or w.dtype != atom.dtype or uses_any(w, loops) is not None:
            continue
        split = _split_of(x, loops, symbolic)
        if split is not None and split is not _CONST:
            return [(split, w)]
        if type(x) is Add:  # a sum of slices, each weighted by its constant times w
            try:
                lin = norm.lin(x)
            except NodeError:
                return None
            out = []
            for piece, k in lin.terms:
                sp = _split_of(piece, loops, symbolic)
                if lin.const != 0 or k <= 0 or sp is None or sp is _CONST:
                    return None
                out.append((sp, w if k == 1 else fold_mul(w, IntImm(w.dtype, k))))
            return out
    return None


def _fused_pieces(atom, loops: Mapping[str, object], norm: _Normalizer):
    """``S // c`` or ``S % c`` of a fused index ``S`` (a dense mixed-radix
    sum of loop variables, as fuse makes it: weights 1, e0, e0 * e1, ...)
    as ``[(slice, weight)]`` of the loops, when ``c`` falls on a digit's
    boundary or divides a digit's extent (what a split of the fused loop
    reads, TVM's fuse-then-split); None otherwise."""
    if not isinstance(atom, (FloorDiv, FloorMod)):
        return None
    c = _int_value(atom.b)
    if c is None or c <= 0:
        return None
    if isinstance(atom, FloorDiv) and isinstance(atom.a, FloorMod):
        return _middle_pieces(atom.a.a, _int_value(atom.a.b), c, loops, norm)
    try:
        lin = norm.lin(atom.a)
    except NodeError:
        return None
    if lin.const != 0 or len(lin.terms) < 2:
        return None
    # a loop of one iteration from 0 adds 0 (the inner loop of a split by a
    # factor larger than the extent: (f_0 + f_1) // 3 with f_1 in range(1))
    terms = [(var, w) for var, w in lin.terms if not _unit_from_zero(var, loops)]
    if not terms:
        return None
    digits = []  # (variable, weight, extent), from the lowest weight up
    terms.sort(key=lambda t: t[1])
    for k, (var, w) in enumerate(terms):
        loop = loops.get(var.name) if isinstance(var, Var) else None
        if loop is None or _int_value(loop.min) != 0 or w <= 0:
            return None
        ext = _int_value(loop.extent)
        # the top digit may run to a symbolic end (a fuse of loops whose
        # outermost has a size such as n * 2): nothing lies above it
        if (ext is None and k != len(terms) - 1) or (ext is not None and ext < 1):
            return None
        digits.append((var, w, ext))
    reach = 1
    for _, w, ext in digits:
        if w != reach:
            return None  # not dense: not what a fuse makes
        reach = None if ext is None else w * ext
    out = []
    for var, w, ext in digits:
        top = None if ext is None else w * ext  # None: unbounded
        # a slice of the top digit need not divide it: nothing lies above
        divides = ext is None or ext % (c // w) == 0 if c % w == 0 else False
        if isinstance(atom, FloorDiv):
            if top is not None and top <= c:
                continue  # wholly below the cut
            if w >= c:
                if w % c:
                    return None
                out.append((var, w // c))
            elif divides:
                out.append((FloorDiv(var, norm.const(c // w)), 1))
            else:
                return None
        else:
            if w >= c:
                continue  # wholly above the cut
            if top is not None and top <= c:
                out.append((var, w))
            elif divides:
                out.append((FloorMod(var, norm.const(c // w)), w))
            else:
                return None
    return out


def _unit_from_zero(var, loops: Mapping[str, object]) -> bool:
    """Whether ``var`` is a loop of ``loops`` that runs once, at 0."""
    loop = loops.get(var.name) if isinstance(var, Var) else None
    return loop is not None and _int_value(loop.min) == 0 and _int_value(loop.extent) == 1


def _middle_pieces(fused, m: int | None, c: int, loops: Mapping[str, object], norm: _Normalizer):
    """``(S % m) // c`` of a fused index ``S``, the digits of ``S`` from ``c``
    up to ``m`` (``(a * 1024 + b) % 2048 // 128`` is ``b // 128 + a % 2 *
    8``), as ``[(slice, weight)]``: ``(S // c) % (m // c)``, the pieces of
    ``S // c`` cut at ``m // c``; None where ``c`` does not divide ``m`` or
    a cut falls inside a digit it does not divide."""
    if m is None or m <= 0 or m % c:
        return None
    pieces = _fused_pieces(FloorDiv(fused, norm.const(c)), loops, norm)
    if pieces is None:
        return None
    k = m // c
    out = []
    for piece, w in sorted(pieces, key=lambda p: p[1]):
        if w >= k:
            continue  # wholly above the cut
        ext = _split_of(piece, loops)[2]  # how many values the piece takes
        if ext is not None and w * ext <= k:
            out.append((piece, w))
        elif k % w == 0 and (ext is None or ext % (k // w) == 0):
            out.append((FloorMod(piece, norm.const(k // w)), w))
        else:
            return None
    return out


def _slices_nest(used: Mapping[str, list], loops: Mapping[str, object]) -> bool:
    """Whether the slices taken of each loop are digits of one mixed radix
    of it, as TVM's ``TryNormalizeSplits`` requires: from the lowest up,
    each slice starts at a multiple of where the one below it ends (``i % 3``
    and ``i // 4`` are not independent: ``i = 3`` and ``i = 0`` give the
    same pair), and where a loop is sliced more than once, the slices
    together divide its extent (``i % 4`` and ``i // 4`` over ``i < 5`` miss
    the pairs ``(1..3, 1)``). One slice alone always reaches a run of
    values, so it needs neither."""
    for name, slices in used.items():
        if len(slices) < 2:
            continue
        if any(not isinstance(b, (int, float)) for sl in slices for b in sl):
            if not slices_chain(slices):
                return False
            continue
        ordered = sorted(slices)
        for (_, upper), (lower, _) in zip(ordered, ordered[1:]):
            if upper == float("inf") or lower % upper != 0:
                return False
        ext = _int_value(loops[name].extent)
        top = ordered[-1][1]
        if ext is not None and (top == float("inf") or ext % top != 0):
            return False
    return True


def slices_chain(slices) -> bool:
    """Whether slices some of whose bounds are symbolic tile a run of the
    loop's place values from 1: one starts at 1 and each next starts where
    one ends (``f % n`` is ``[1, n)``, ``f // n`` is ``[n, inf)``): then no
    two overlap, whatever positive value the sizes take."""
    return _chain_top(slices) is not None


def _chain_top(slices):
    """Where the chain of ``slices`` (:func:`slices_chain`) ends, None where
    they do not chain."""
    rest = list(slices)
    at = 1
    while rest:
        nxt = next((sl for sl in rest if _same_place(sl[0], at)), None)
        if nxt is None or nxt[1] == float("inf") and len(rest) > 1:
            return None
        rest.remove(nxt)
        at = nxt[1]
    return at


def _same_place(a, b) -> bool:
    """Whether two place values of a loop (an int, or an expression of
    sizes) are equal: as written, or proven so (``128 * n`` and ``n * 128``)."""
    if a == b:
        return True
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return False
    return _product_key(a) == _product_key(b) or prove_equal(a, b)


def _product_key(e: PrimExpr):
    """A product as its constant and the multiset of its other factors,
    so that ``b * c`` and ``c * b`` compare equal (the prover reads linear
    forms, which a product of two sizes is not)."""
    const, factors, stack = 1, [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Mul):
            stack += [x.a, x.b]
        elif _int_value(x) is not None:
            const *= _int_value(x)
        else:
            factors.append(x)
    return const, sorted(factors, key=repr)


def _tiles_every_loop(used: Mapping[str, list], loops: Mapping[str, object]) -> bool:
    return all(_tiles_loop(used.get(name, []), loop) for name, loop in loops.items())


def _tiles_loop(slices, loop) -> bool:
    """Whether ``slices`` ([lower, upper) ranges of the loop's place values)
    tile ``loop`` whole: distinct iterations of it give distinct points."""
    ext = _int_value(loop.extent)
    if ext == 1:
        return True
    reach = 1
    for lower, upper in sorted(slices):
        if lower != reach:
            return False
        reach = upper
    if ext is None:
        return reach == float("inf")
    return bool(slices) and reach >= ext


def tiled_loops(sums, loops: Mapping[str, object]) -> set[str]:
    """The names of ``loops`` whose slices in ``sums`` (what
    :func:`detect_iter_map` gave for them) tile them whole, so that
    distinct iterations of such a loop always give distinct points of the
    map (loops of one iteration included). A loop used only in part
    (``i // 3`` alone) is not among them: several of its iterations give
    the same point."""
    used: dict[str, list] = {}
    symbolic: set[str] = set()
    for total in sums:
        for sp in total.args:
            if not isinstance(sp.lower_factor, int) or not (sp.extent is None or isinstance(sp.extent, int)):
                upper = _symbolic_upper(sp.lower_factor, sp.extent)
                symbolic.add(sp.source)
            else:
                upper = float("inf") if sp.extent is None else sp.lower_factor * sp.extent
            used.setdefault(sp.source, []).append((sp.lower_factor, upper))
    return {name for name, loop in loops.items()
            if (_whole(used[name], loop) if name in symbolic else _tiles_loop(used.get(name, []), loop))}


def predicate_fused(values, loops: Mapping[str, object], predicate: PrimExpr | None):
    """:func:`predicate_fused_parts` without the parts: ``(values, loops)``
    or None."""
    found = predicate_fused_parts(values, loops, predicate)
    return None if found is None else found[:2]


def predicate_fused_parts(values, loops: Mapping[str, object], predicate: PrimExpr | None):
    """``(values, loops, parts)`` with each part ``e`` that a conjunct ``e < c`` of
    ``predicate`` bounds read as one loop of ``c`` iterations, or None
    where no conjunct does, as TVM's iterator maps read a predicate.

    ``e`` must be a dense fused sum of loops of ``loops`` (a bijective map
    of them: each iteration gives its own value) and the values must use
    those loops only through ``e`` (``e`` itself, a multiple of it, or
    ``e // 7`` and ``e % 7``); the iterations where the predicate holds
    are then those of the stand-in loop, one for one. A split by factors
    whose product passes the extent leaves such a predicate:
    ``(f_0 * 256 + f_1) // 7`` under ``f_0 * 256 + f_1 < 49`` is a split
    of a loop of 49 iterations, whatever 256 is. ``parts`` maps the name of
    each stand-in loop to the sum it stands for."""
    from ...nodes import LT
    from .simplify import conjuncts

    if predicate is None or type(predicate) is IntImm:
        return None
    parts = conjuncts(predicate)
    values, loops, stood = list(values), dict(loops), {}
    from ...rewrites.exprs import uses_any, var_names

    for k, cond in enumerate(parts):
        if type(cond) is not LT or not _is_index(cond.a) or cond.a.dtype != cond.b.dtype:
            continue
        fused, bound = cond.a, cond.b
        if uses_any(bound, loops) is not None or (_int_value(bound) is not None and _int_value(bound) < 1):
            continue  # a bound of a size (m * n), not of a loop of the map
        used = var_names(fused) & set(loops)
        if not used:
            continue
        sub = {n: loops[n] for n in used}
        if not _bijective([fused], sub):  # symbolic weights included
            continue
        # the sum of those loops alone, from 0: a part of other variables
        # (``i_0 * 4 + i_1`` under i_0, of loops {i_1}) would shift its
        # values off the stand-in's [0, c)
        whole = detect_iter_map([fused], sub, "affine", symbolic=True, weights=True)
        if whole is None or _int_value(whole[0].base) != 0:
            continue
        # the stand-in runs over what the predicate lets through, no further
        # than the sum reaches (a bound past it cuts nothing)
        reach = math.prod(_int_value(lp.extent) or 0 for lp in sub.values())
        if _int_value(bound) is not None and reach:
            bound = IntImm(bound.dtype, min(_int_value(bound), reach))
        name = _stand_in(values, loops, fused, used, f"_fused{k}", bound)
        if name is not None:
            stood[name] = fused
    return (values, loops, stood) if stood else None


def _stand_in(values: list, loops: dict, fused: PrimExpr, used: set, name: str, extent: PrimExpr) -> str | None:
    """Replace the sum ``fused`` of the loops ``used`` in ``values`` (in
    place) by a new loop over ``extent`` in ``loops`` (the loops of ``used``
    removed), and return its name; None, changing nothing, where a value
    reads a loop of ``used`` apart from the sum."""
    from ...nodes import Evaluate, For

    while name in loops:
        name += "_"
    stand_in = Var(name, fused.dtype)
    replaced = [_replace_sum(v, fused, stand_in, used) for v in values]
    if any(r is None for r in replaced):
        return None
    values[:] = replaced
    for n in used:
        del loops[n]
    loops[name] = For(stand_in, IntImm(fused.dtype, 0), extent, "serial", Evaluate(IntImm("int32", 0)))
    return name


def divided_fused(values, loops: Mapping[str, object]):
    """``(values, loops)`` with each dense fused sum of two or more loops
    that a value divides (``S // d``, ``S % d``, by a size or a constant)
    read as one loop over the sum's extent, or None where there is none.

    TVM's iterator maps fuse such a sum into one mark before they split
    it, whether or not the divisor falls on a digit's boundary: a fused
    loop split by a constant and then cut by a size, ``(f_0 * 8 + f_1) //
    n`` and ``% n``, or a fuse over a symbolic weight, ``(a * (n * 8) + b)
    // n``. The values must use the sum's loops only through the sum."""
    from ...rewrites.exprs import var_names
    from ..traversal import walk

    values, loops = list(values), dict(loops)
    seen, changed = set(), False
    for value in list(values):
        for node in walk(value):
            if type(node) not in (FloorDiv, FloorMod) or type(node.a) is not Add:
                continue
            fused = node.a
            key = simplify_index(fused)
            used = var_names(fused) & set(loops)
            if key in seen or len(used) < 2:
                continue
            seen.add(key)
            sub = {n: loops[n] for n in used}
            if not _bijective([fused], sub):
                continue
            extent = None
            for loop in sub.values():
                ext = loop.extent
                if ext.dtype != fused.dtype:
                    extent = None
                    break
                extent = ext if extent is None else fold_mul(extent, ext)
            # the sum's extent a multiple of every divisor of it: TVM pads
            # no such mark (a split of rows * cols by 2 cut by cols reads
            # as a map only under the predicate the split leaves)
            if extent is None or not all(
                    _exact_quotient(extent, d if _int_value(d) is None else _int_value(d)) is not None
                    for d in _divisors_of(values, key)):
                continue
            if _stand_in(values, loops, fused, used, "_divided", extent) is not None:
                changed = True
    return (values, loops) if changed else None


def _divisors_of(values, key: PrimExpr) -> list:
    """The divisors of every ``//`` and ``%`` in ``values`` whose dividend
    is the sum ``key`` (in :func:`simplify_index`'s normal form)."""
    from ..traversal import walk

    return [node.b for value in values for node in walk(value)
            if type(node) in (FloorDiv, FloorMod) and type(node.a) is Add and simplify_index(node.a) == key]


def _replace_sum(value: PrimExpr, fused: PrimExpr, stand_in: Var, used: set) -> PrimExpr | None:
    """``value`` with the sum ``fused`` (of the loops ``used``) replaced by
    ``stand_in``, as a multiple of it (``g * fused + rest``) or wherever it
    appears whole; None where a loop of ``used`` is left."""
    from ...rewrites.exprs import uses_any
    from .linear import affine_form

    if uses_any(value, used) is None:
        return value
    whole, part = affine_form(value), affine_form(fused)
    if whole is not None and part is not None and part.const == 0 and part.terms:
        coeffs = dict(whole.terms)
        ratios = {coeffs.get(t, 0) / w for t, w in part.terms}
        if len(ratios) == 1:
            g = next(iter(ratios))
            if g and float(g).is_integer():
                rest = whole.plus(part.scale(int(g)), -1)
                out = simplify_index(rest.to_expr() + stand_in * int(g))
                if uses_any(out, used) is None:
                    return out
    key = simplify_index(fused)

    def rebuild(x):
        kind = type(x)
        if kind in (Add, Sub, Mul, FloorDiv, FloorMod):
            if uses_any(x, used) is None:
                return x
            if simplify_index(x) == key:
                return stand_in
            return kind(rebuild(x.a), rebuild(x.b))
        return x

    out = rebuild(value)
    return out if uses_any(out, used) is None else None


def is_affine_binding(values, loops: Mapping[str, object], *, surjective: bool = False,
                      predicate: PrimExpr | None = None) -> bool:
    """Whether the iteration values of one block are an affine binding over
    ``loops`` (loop variable name -> For): :func:`detect_iter_map` at the
    ``"affine"`` level, or at ``"surjective"`` with ``surjective``, slices
    by symbolic sizes and symbolic weights included (``f // n``, ``f %
    n``, ``i_0 * ((n + 7) // 8) + i_1``: TVM's iterator maps take those
    from fuse and split of loops of symbolic extents)."""
    if distinct_index_vars(values):
        return True
    level = "surjective" if surjective else "affine"
    return any(detect_iter_map(*reading, level, symbolic=True, weights=True) is not None
               for reading in _readings(values, loops, predicate))


def _readings(values, loops: Mapping[str, object], predicate: PrimExpr | None):
    """``(values, loops)`` as given, then as :func:`predicate_fused` reads
    them, then with the sums they divide read as loops
    (:func:`divided_fused`), each where it applies: the ways TVM's
    iterator maps read a binding, tried in turn."""
    yield values, loops
    fused = predicate_fused(values, loops, predicate)
    if fused is not None:
        yield fused
    for base in ((values, loops),) if fused is None else ((values, loops), fused):
        divided = divided_fused(*base)
        if divided is not None:
            yield divided


def is_bijective(values, loops: Mapping[str, object], predicate: PrimExpr | None = None) -> bool:
    """Whether ``values`` are a bijective iteration map of ``loops``: each
    iteration gives its own point, every point of the box is given.
    :func:`detect_iter_map` at ``"bijective"``, or, with symbolic weights
    (``i_0 * ((n + 7) // 8) + i_1``, which that level does not take), at
    ``"affine"`` with every loop taken whole. With ``predicate``, over the
    iterations where it holds, read as :func:`predicate_fused` reads it."""
    return any(_bijective(*reading) for reading in _readings(values, loops, predicate))


def _bijective(values, loops: Mapping[str, object]) -> bool:
    if detect_iter_map(values, loops, "bijective") is not None:
        return True
    # what that level does not take: symbolic weights, and slices by a
    # symbolic size (f // n and f % n of a fuse of loops of run-time extents)
    sums = detect_iter_map(values, loops, "affine", symbolic=True, weights=True)
    if sums is None:
        return False
    slices: dict[str, list] = {}
    symbolic = False
    for total in sums:
        for sp in total.args:
            lower, extent = sp.lower_factor, sp.extent
            sym = not isinstance(lower, int) or not (extent is None or isinstance(extent, int))
            symbolic = symbolic or sym or not isinstance(sp.scale, int)
            if extent is None:
                upper = float("inf")
            elif sym:
                upper = _symbolic_upper(lower, extent)
            else:
                upper = lower * extent
            slices.setdefault(sp.source, []).append((lower, upper))
    return symbolic and all(_whole(slices.get(name, []), loop) for name, loop in loops.items())


def _whole(slices, loop) -> bool:
    """Whether ``slices`` (``[lower, upper)`` of the loop's place values,
    some bounds symbolic) take every iteration of ``loop`` once and give a
    dense box: they chain from 1 to the loop's end, and a top slice that
    starts at a symbolic size ``n`` (``f // n``) divides an extent that is
    a multiple of ``n`` (``k * n``, what fuse makes)."""
    if all(isinstance(b, (int, float)) for sl in slices for b in sl):
        return _tiles_loop(slices, loop)
    upper = _chain_top(slices)
    if upper is None:
        return False
    if upper != float("inf"):
        # the top digit of a constant number of values (f // d of f in
        # range(d * 4), f // 128 // n of f in range(n * 4096)) ends where
        # the loop does
        ext = loop.extent
        return (isinstance(upper, PrimExpr) and upper.dtype == ext.dtype and _int_value(loop.min) == 0
                and _same_place(upper, ext))
    lower = next(sl[0] for sl in slices if sl[1] == float("inf"))
    if isinstance(lower, int):
        return lower == 1  # the loop whole (its extent symbolic)
    ext = loop.extent
    return type(ext) is Mul and (ext.a == lower or ext.b == lower)


def distinct_index_vars(values) -> bool:
    """Whether every value is an integer variable and no two name the
    same one (the commonest binding: ``T.axis.remap`` of the loops). Such
    a binding is affine at every level but ``"bijective"``, whatever the
    loops: each value is one whole loop, or a constant where it names no
    loop of the map, and no loop is sliced twice, which is all
    :func:`detect_iter_map` asks of variables alone."""
    names = set()
    for v in values:
        if type(v) is not Var or not v.dtype.is_index or v.name in names:
            return False
        names.add(v.name)
    return True


__all__ = [
    "simplify_index", "is_plain_sum", "loop_ranges", "is_affine_binding", "distinct_index_vars",
    "detect_iter_map", "tiled_loops", "is_bijective", "predicate_fused", "predicate_fused_parts", "IterSplit",
    "IterSum", "Ranges", "slices_chain",
]
