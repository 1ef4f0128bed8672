"""The arithmetic core against the interpreter: a simplified expression,
a bound, a proof, an iteration map, an inferred or covering region agrees
with evaluation on random points, values that wrap around the dtype
included."""

from __future__ import annotations

import functools
import itertools

from hypothesis import event, given
from hypothesis import strategies as st

from tirfun.analysis.arith import (
    bound_region, can_prove, const_interval, detect_iter_map, index_at_most, region_covers,
    simplify_expr, simplify_index,
)
from tirfun.analysis.arith.terms import int_value
from tirfun.analysis.traversal import walk
from tirfun.interp import evaluate
from tirfun.errors import InterpError
from tirfun.nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Div, Evaluate, FloorDiv, FloorMod, For, IntImm, Max, Min, Mod, Mul,
    Range, Select, Sub, Var,
)
from tirfun.nodes.dtype import DataType

DTYPES = ["int8", "int32", "uint8"]
NAMES = ["x", "y", "z"]
CMPS = [EQ, NE, LT, LE, GT, GE]


def _dtype_range(dtype: str) -> tuple[int, int]:
    dt = DataType(dtype)
    return int(dt.min_value()), int(dt.max_value())


@functools.cache
def int_exprs(dtype: str, depth: int = 4):
    """Scalar integer expressions over x, y, z of ``dtype``: sums, products
    (by constants and of variables), floor division and modulo by positive
    constants, min, max and selects; constants reach the dtype's ends. One
    strategy per dtype and depth: hypothesis checks a strategy's tree when
    first drawn from, which costs more than most draws."""
    lo, hi = _dtype_range(dtype)
    variables = [Var(n, dtype) for n in NAMES]

    def const():
        return st.one_of(st.integers(-3, 9).filter(lambda v: lo <= v <= hi),
                         st.sampled_from([lo, hi, hi // 2 + 1])).map(lambda v: IntImm(dtype, v))

    def wrap_prone():
        # a shape whose textbook rewrite fails once the dtype wraps:
        # (v * (c * k) + r) // c == v * k + r // c
        v = st.sampled_from(variables)
        c = st.integers(2, 8)
        return st.tuples(st.sampled_from([FloorDiv, FloorMod]), v, c, st.integers(1, 3), st.integers(0, 9)).map(
            lambda t: t[0](Add(Mul(t[1], IntImm(dtype, t[2] * t[3])), IntImm(dtype, t[4])), IntImm(dtype, t[2])))

    def go(level):
        leaf = st.one_of(st.sampled_from(variables), const())
        if level == 0:
            return leaf
        sub = go(level - 1)
        divisor = st.integers(1, 9).filter(lambda v: v <= hi).map(lambda v: IntImm(dtype, v))
        return st.one_of(
            leaf,
            wrap_prone(),
            st.tuples(st.sampled_from([Add, Sub, Mul, Min, Max]), sub, sub).map(lambda t: t[0](t[1], t[2])),
            st.tuples(st.sampled_from([FloorDiv, FloorMod]), sub, divisor).map(lambda t: t[0](t[1], t[2])),
            st.tuples(sub, st.sampled_from(variables), const()).map(lambda t: Mul(t[1], t[2]) if t[0] is None else Add(Mul(t[1], t[2]), t[0])),
            st.tuples(st.sampled_from(CMPS), sub, sub, sub, sub).map(
                lambda t: Select(t[0](t[1], t[2]), t[3], t[4])),
        )

    return go(depth)


@st.composite
def envs(draw, dtype: str):
    """Intervals for x, y, z (some ends open, some at the dtype's ends) and
    points inside them."""
    lo, hi = _dtype_range(dtype)
    env, points = {}, []
    for name in NAMES:
        a = draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0])))
        b = draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0])))
        a, b = min(a, b), max(a, b)
        open_lo, open_hi = draw(st.booleans()), draw(st.booleans())
        env[Var(name, dtype)] = (None if open_lo else a, None if open_hi else b)
    ends = {var.name: (lo if a is None else a, hi if b is None else b) for var, (a, b) in env.items()}
    # the corners first: wrap-around happens at the ends of the ranges
    points.append({n: a for n, (a, _) in ends.items()})
    points.append({n: b for n, (_, b) in ends.items()})
    for _ in range(3):
        points.append({n: draw(st.one_of(st.integers(a, b), st.sampled_from([a, b])))
                       for n, (a, b) in ends.items()})
    return env, points


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    return dtype, draw(int_exprs(dtype)), draw(envs(dtype))


def _value(e, point):
    return int(evaluate(e, **point))


@given(cases())
def test_simplified_expression_keeps_every_value(case):
    _, e, (env, points) = case
    out = simplify_expr(e, env)
    assert out.dtype == e.dtype
    for point in points:
        assert _value(out, point) == _value(e, point), (e.script(), out.script(), point)


@st.composite
def div_mod_pairs(draw):
    """``c * ((x // y) * y) + c * (x % y) + r`` in random orders and forms,
    floor or truncating, for a divisor ``y`` that is a variable or an
    expression (TVM merges the pair to ``c * x`` whatever ``y`` is)."""
    dtype = draw(st.sampled_from(DTYPES))
    variables = [Var(n, dtype) for n in NAMES]
    x = draw(st.one_of(st.sampled_from(variables), int_exprs(dtype, 2)))
    y = draw(st.one_of(st.sampled_from(variables), int_exprs(dtype, 1)))
    div, mod = draw(st.sampled_from([(FloorDiv, FloorMod), (Div, Mod)]))
    quotient = div(x, y)
    product = Mul(quotient, y) if draw(st.booleans()) else Mul(y, quotient)
    coeff = draw(st.sampled_from([1, 1, 1, 2, 3, -1]))
    parts = [product, mod(x, y)]
    if coeff != 1:
        parts = [Mul(p, IntImm(dtype, coeff % (1 << DataType(dtype).bits))) if not DataType(dtype).is_int
                 else Mul(p, IntImm(dtype, coeff)) for p in parts]
    rest = draw(st.none() | int_exprs(dtype, 1))
    if rest is not None:
        parts.append(rest)
    parts = draw(st.permutations(parts))
    e = parts[0]
    for p in parts[1:]:
        e = Add(e, p)
    return dtype, e, x, y, coeff, rest, draw(envs(dtype))


@given(div_mod_pairs())
def test_a_quotient_times_its_divisor_plus_the_remainder_is_the_dividend(case):
    dtype, e, x, y, coeff, rest, (env, points) = case
    out = simplify_expr(e, env)
    assert out.dtype == e.dtype
    divisor = simplify_expr(y, env)
    dividend = simplify_expr(x, env)
    if (coeff == 1 and rest is None and DataType(dtype).is_int and isinstance(dividend, Var)
            and not (isinstance(divisor, IntImm) and divisor.value == 0)):
        # merged whatever the divisor (unsigned sums stay as written: the
        # writer of sums needs the negated coefficients to fit)
        assert out == dividend, (e.script(), out.script())
        event("merged to the dividend")
    kept = 0
    for point in points:
        try:
            expected = _value(e, point)
        except InterpError:  # a division by zero has no value; the merged sum has one
            continue
        kept += 1
        assert _value(out, point) == expected, (e.script(), out.script(), point)
    event("every point divides by zero" if kept == 0 else "compared at points")


@st.composite
def index_div_mod_pairs(draw):
    """``c * (x // y * y) + c * (x % y)`` in int32 or int64, the product
    in either order, for ``y`` a variable or an expression of the variables
    and points giving every variable a value (the divisor's zero among
    them)."""
    dtype = draw(st.sampled_from(["int32", "int64"]))
    variables = [Var(n, dtype) for n in NAMES]
    x = draw(st.sampled_from(variables))
    y = draw(st.one_of(st.sampled_from(variables), int_exprs(dtype, 1)))
    quotient = FloorDiv(x, y)
    product = Mul(quotient, y) if draw(st.booleans()) else Mul(y, quotient)
    coeff = draw(st.sampled_from([1, 1, 2, -3]))
    parts = [product, FloorMod(x, y)]
    if coeff != 1:
        parts = [Mul(p, IntImm(dtype, coeff)) for p in parts]
    a, b = draw(st.permutations(parts))
    points = [{n: draw(st.integers(-50, 50)) for n in NAMES} for _ in range(5)]
    return Add(a, b), x, y, coeff, points


@given(index_div_mod_pairs())
def test_the_index_simplifier_merges_a_quotient_and_remainder_of_any_divisor(case):
    # simplify_index, which rewrites every binding and index, merges x // y
    # * y + x % y to x for a divisor of run-time value too (a split by a
    # size fused again: f // ((n + 3) // 4) * ((n + 3) // 4) + f % ...)
    e, x, y, coeff, points = case
    out = simplify_index(e)
    assert out.dtype == e.dtype
    # a divisor of run-time value in normal form: a variable in it, and no
    # constant near the dtype's ends (a sum of constants that wraps stays
    # unfolded, y * 2147483647 + y uncombined: the simplifier leaves sums
    # that may wrap as they are, and those divisors may stay unmerged; the
    # values agree all the same, checked below)
    ordinary = all(abs(n.value) < 2 ** 20 for n in walk(y) if isinstance(n, IntImm))
    if (int_value(simplify_index(y)) is None and simplify_index(y) == y and x not in set(walk(y))
            and any(isinstance(n, Var) for n in walk(y)) and ordinary):
        assert out == (x if coeff == 1 else simplify_index(Mul(x, IntImm(x.dtype, coeff)))), \
            (e.script(), out.script())
        event("merged to the dividend")
    for point in points:
        try:
            expected = _value(e, point)
        except InterpError:  # a division by zero has no value; the merged sum has one
            continue
        assert _value(out, point) == expected, (e.script(), out.script(), point)


@st.composite
def digit_pairs(draw):
    """Two digits of one dividend that make one, in random orders and
    forms, floor or truncating: the quotient's, ``c * a * (x // (a * b)) +
    c * (x % (a * b) // b)``, which is ``c * (x // b)`` (a loop fused and
    split again without dividing), or the remainder's, ``c * b * (x // b %
    a) + c * (x % b)``, which is ``c * (x % (a * b))`` (the two inner digits
    of a loop fused from three); plus a rest ``r``. Sometimes the
    coefficients or the divisors do not match, and the pair must stay."""
    dtype = draw(st.sampled_from(DTYPES))
    _, hi = _dtype_range(dtype)
    variables = [Var(n, dtype) for n in NAMES]
    x = draw(st.sampled_from(variables) if draw(st.integers(0, 3)) else int_exprs(dtype, 2))
    a, b = draw(st.integers(1, 6)), draw(st.integers(2, 6))
    off = draw(st.sampled_from([0, 0, 0, 1]))  # off by one: no pair
    div, mod = draw(st.sampled_from([(FloorDiv, FloorMod), (Div, Mod)]))
    weight_off = draw(st.sampled_from([0, 0, 0, 1]))
    const = lambda v: IntImm(dtype, v)  # noqa: E731
    if draw(st.booleans()):
        form = "quotient"
        high, weight = div(x, const(a * b + off)), a + weight_off
        low = div(mod(x, const(a * b + off)), const(b))
        gone, merged = mod(x, const(a * b + off)), div(x, const(b))
    else:
        form = "remainder"
        a = max(a, 2)  # x // b % 1 is 0, and x % b is then the merged remainder itself
        high, weight = mod(div(x, const(b)), const(a + off)), b + weight_off
        low = mod(x, const(b))
        gone, merged = low, mod(x, const(a * b))
    high = Mul(high, const(weight)) if draw(st.booleans()) else Mul(const(weight), high)
    parts = [high, low]
    coeff = draw(st.sampled_from([1, 1, 1, 2, 3, -1]))
    if coeff != 1:
        parts = [Mul(p, const(coeff % (hi + 1) if not DataType(dtype).is_int else coeff)) for p in parts]
    rest = draw(int_exprs(dtype, 1)) if draw(st.booleans()) else None
    if rest is not None:
        parts.append(rest)
    parts = draw(st.permutations(parts))
    e = parts[0]
    for p in parts[1:]:
        e = Add(e, p)
    matched = off == 0 and weight_off == 0 and a * b <= hi
    return form, dtype, e, x, gone, merged, div, matched, coeff, rest, draw(envs(dtype))


@given(digit_pairs())
def test_two_digits_of_a_dividend_merge_into_one(case):
    form, dtype, e, x, gone, merged, div, matched, coeff, rest, (env, points) = case
    out = simplify_expr(e, env)
    assert out.dtype == e.dtype
    if matched and isinstance(x, Var) and DataType(dtype).is_int:
        # the lower digit's remainder is gone (with more terms, the
        # simplifier may keep a sum it cannot write in the dtype as it was:
        # T.int8(-128))
        assert rest is not None or gone not in walk(out), (e.script(), out.script())
        event(f"the {form}'s digits merged")
        if coeff == 1 and rest is None and env[x] == (None, None):
            # x // b or x % (a * b) (over an interval of x, the simplifier
            # may fold a digit before it meets the pair)
            assert out == merged, (e.script(), out.script())
    elif not matched:
        event("no pair")
    ranges = {v.name: (lo, hi) for v, (lo, hi) in env.items() if lo is not None and hi is not None}
    index = simplify_index(e, ranges) if div is FloorDiv else None
    if index is not None and matched and isinstance(x, Var) and rest is None:
        assert gone not in walk(index), (e.script(), index.script())
        event(f"the index's {form} digits merged")
    for point in points:
        expected = _value(e, point)
        assert _value(out, point) == expected, (e.script(), out.script(), point)
        if index is not None and _fits_unbounded(e, point):
            assert _value(index, point) == expected, (e.script(), index.script(), point)


def _fits_unbounded(e, point) -> bool:
    """Whether no sum or product inside ``e`` leaves its dtype at ``point``
    (simplify_index reads indices in unbounded integers, as bindings are)."""
    for node in walk(e):
        if isinstance(node, (Add, Sub, Mul)):
            lo, hi = _dtype_range(str(node.dtype))
            va, vb = _value(node.a, point), _value(node.b, point)
            exact = {Add: va + vb, Sub: va - vb, Mul: va * vb}[type(node)]
            if not lo <= exact <= hi:
                return False
    return True


@st.composite
def fused_splits(draw):
    """``(x * (m * q) + r + k) // (m * n)`` and ``% (m * n)``: a fused index
    split again, its low part ``r`` (``y``, ``y % m`` or ``y // d``) in
    ``[0, m)`` where ``y``'s interval allows, ``x``'s interval narrow
    (the sum cannot wrap) or reaching the dtype's end (it can)."""
    dtype = draw(st.sampled_from(DTYPES))
    lo, hi = _dtype_range(dtype)
    x, y = Var("x", dtype), Var("y", dtype)
    m, n, q = draw(st.integers(2, 8)), draw(st.integers(1, 8)), draw(st.integers(1, 3))
    low = draw(st.sampled_from(["y", "y % m", "y // d"]))
    d = draw(st.integers(1, 4))
    r = {"y": y, "y % m": FloorMod(y, IntImm(dtype, m)), "y // d": FloorDiv(y, IntImm(dtype, d))}[low]
    k = draw(st.integers(0, 2)) * m + draw(st.sampled_from([0, 0, 1]))
    e = Add(Add(Mul(x, IntImm(dtype, m * q)), r), IntImm(dtype, k))
    cls = draw(st.sampled_from([FloorDiv, FloorMod]))
    e = cls(e, IntImm(dtype, m * n))
    narrow = draw(st.sampled_from([True, True, False]))
    x_range = (max(lo, -5), 5) if narrow else (lo, hi)
    y_top = {"y": m - 1, "y % m": hi, "y // d": d * m - 1}[low]
    if draw(st.sampled_from([False, False, True])):
        y_top = min(hi, y_top + draw(st.integers(1, 3)))  # r may reach m: the rule must not apply
    env = {x: x_range, y: (0, y_top)}
    points = [{"x": x_range[0], "y": 0}, {"x": x_range[1], "y": y_top}]
    points += [{"x": draw(st.integers(*x_range)), "y": draw(st.integers(0, y_top))} for _ in range(4)]
    # unsigned division keeps its form (the simplifier's rules are the signed ones)
    # ... and only where the sum fits the dtype: in int8, 5 * 24 + 7 + 8 wraps
    # (the rule must not apply there)
    fits = lo <= x_range[0] * m * q and x_range[1] * m * q + (m - 1) + k <= hi
    clean = narrow and fits and DataType(dtype).is_int and k % m == 0 and \
        (low == "y % m" or y_top == {"y": m - 1, "y // d": d * m - 1}[low])
    return e, env, points, clean


def _divides_both(e) -> bool:
    """Whether a division or modulo in ``e`` divides something of both x and y."""
    for node in walk(e):
        if type(node) in (FloorDiv, FloorMod):
            names = {v.name for v in walk(node.a) if isinstance(v, Var)}
            if {"x", "y"} <= names:
                return True
    return False


@given(fused_splits())
def test_a_fused_index_split_again_keeps_every_value(case):
    """``(x * m * q + r) // (m * n)`` with ``r`` in ``[0, m)`` becomes
    ``x * q // n`` (and the modulo ``x * q % n * m + r``), TVM's form of a
    fused index split again; where ``r`` may reach ``m`` or the sum may
    wrap, the value is still the original's."""
    e, env, points, clean = case
    out = simplify_expr(e, env)
    assert out.dtype == e.dtype
    for point in points:
        assert _value(out, point) == _value(e, point), (e.script(), out.script(), point)
    if clean:
        # the rule applied: x and y are divided apart
        assert not _divides_both(out), (e.script(), out.script())
        event("split through the fused factor")
    else:
        event("kept or partly simplified")


@given(cases())
def test_const_interval_holds_every_value(case):
    _, e, (env, points) = case
    lo, hi = const_interval(e, env)
    for point in points:
        assert lo <= _value(e, point) <= hi, (e.script(), (lo, hi), point)


@given(st.data())
def test_a_proven_condition_holds_at_every_point(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    a, b = data.draw(int_exprs(dtype, 3)), data.draw(int_exprs(dtype, 3))
    cmp = data.draw(st.sampled_from(CMPS))
    if data.draw(st.booleans()):
        # v + k > v and friends: true only where v + k does not wrap
        v = Var(data.draw(st.sampled_from(NAMES)), dtype)
        a, b = Add(v, IntImm(dtype, data.draw(st.integers(1, 5)))), v
    cond = cmp(a, b)
    env, points = data.draw(envs(dtype))
    if can_prove(cond, env):
        for point in points:
            assert _value(cond, point) == 1, (cond.script(), point)


# -- binding normal form and iteration maps ----------------------------------------


@st.composite
def index_cases(draw):
    """An affine index over loop variables with ranges (inclusive), some wide
    enough to wrap int32 when multiplied."""
    dtype = draw(st.sampled_from(["int32", "int8"]))
    lo, hi = _dtype_range(dtype)
    variables = [Var(n, dtype) for n in NAMES]
    ranges = {}
    for v in variables:
        a = draw(st.sampled_from([0, 0, 1]))
        ranges[v.name] = (a, draw(st.sampled_from([3, 7, 15, hi // 2, hi])))

    def go(level):
        leaf = st.one_of(st.sampled_from(variables), st.integers(0, 9).map(lambda c: IntImm(dtype, c)))
        if level == 0:
            return leaf
        sub = go(level - 1)
        k = st.integers(1, 9).map(lambda c: IntImm(dtype, c))
        return st.one_of(
            leaf,
            st.tuples(st.sampled_from([Add, Sub]), sub, sub).map(lambda t: t[0](t[1], t[2])),
            st.tuples(sub, k).map(lambda t: Mul(t[0], t[1])),
            st.tuples(st.sampled_from([FloorDiv, FloorMod]), sub, k).map(lambda t: t[0](t[1], t[2])),
        )

    e = draw(go(3))
    points = [{n: draw(st.one_of(st.integers(*r), st.sampled_from(r))) for n, r in ranges.items()}
              for _ in range(4)]
    return e, ranges, points


@given(index_cases())
def test_simplified_index_keeps_every_value(case):
    e, ranges, points = case
    out = simplify_index(e, ranges)
    for point in points:
        assert _value(out, point) == _value(e, point), (e.script(), out.script(), point)


def _loop(var: Var, extent: int) -> For:
    return For(var, 0, extent, "serial", Evaluate(0))


@st.composite
def bindings(draw):
    """Loops with small extents and binding values made of slices of them."""
    extents = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    loops = {f"l{k}": _loop(Var(f"l{k}"), e) for k, e in enumerate(extents)}
    variables = [loop.loop_var for loop in loops.values()]

    def piece():
        v = st.sampled_from(variables)
        c = st.integers(1, 4).map(lambda c: IntImm("int32", c))
        kinds = [v, st.tuples(v, c).map(lambda t: FloorDiv(*t)), st.tuples(v, c).map(lambda t: FloorMod(*t))]
        if len(variables) >= 2:
            # a fused index (a * e_b + b, as fuse makes it) cut by // or %,
            # as a split of the fused loop reads it
            fused = st.permutations(variables).map(
                lambda p: Add(Mul(p[0], IntImm("int32", loops[p[1].name].extent.value)), p[1]))
            cut = st.integers(1, 12).map(lambda c: IntImm("int32", c))
            kinds += [st.tuples(fused, cut).map(lambda t: FloorDiv(*t)),
                      st.tuples(fused, cut).map(lambda t: FloorMod(*t))]
        return st.one_of(*kinds)

    def value():
        return st.lists(st.tuples(piece(), st.integers(1, 12)), min_size=1, max_size=3).map(
            lambda parts: _sum([Mul(p, IntImm("int32", k)) if k != 1 else p for p, k in parts]))

    values = draw(st.lists(value(), min_size=1, max_size=3))
    return loops, values


def _sum(parts):
    out = parts[0]
    for p in parts[1:]:
        out = Add(out, p)
    return out


def _images(loops, values):
    names = list(loops)
    extents = [loops[n].extent.value for n in names]
    out = []
    for combo in itertools.product(*[range(e) for e in extents]):
        point = dict(zip(names, combo))
        out.append(tuple(_value(v, point) for v in values))
    return out


@given(bindings())
def test_iteration_maps_keep_their_promise(case):
    loops, values = case
    images = _images(loops, values)
    affine = detect_iter_map(values, loops, "affine")
    if affine is not None and any(isinstance(n, (FloorDiv, FloorMod)) and isinstance(n.a, Add)
                                  for v in values for n in walk(v)):
        event("a cut of a fused index read as slices")
    names = list(loops)
    extents = [loops[n].extent.value for n in names]
    if affine is not None:
        # the slices are disjoint: each value of the slices gives its own point
        slices = [s for total in affine for s in total.args]
        seen = {}
        for combo, image in zip(itertools.product(*[range(e) for e in extents]), images):
            point = dict(zip(names, combo))
            key = tuple(point[s.source] // s.lower_factor % (s.extent or 1 << 40) for s in slices)
            assert seen.setdefault(image, key) == key, (values, image)
        # and the sums say what the values are
        for total, v in zip(affine, values):
            for combo in itertools.product(*[range(e) for e in extents]):
                point = dict(zip(names, combo))
                rebuilt = sum((point[s.source] // s.lower_factor) % (s.extent or 1 << 40) * s.scale
                              for s in total.args) + _value(total.base, point)
                assert rebuilt == _value(v, point)
    if detect_iter_map(values, loops, "bijective") is not None:
        assert len(set(images)) == len(images)  # every iteration gives its own point
        boxes = [range(min(col), max(col) + 1) for col in zip(*images)]
        assert len(images) == len(list(itertools.product(*boxes)))  # and every point is given
    surjective = detect_iter_map(values, loops, "surjective")
    if surjective is not None:
        for col in zip(*images):
            assert set(col) == set(range(min(col), max(col) + 1))  # no value is skipped


@given(bindings(), st.sampled_from(["affine", "bijective", "surjective"]))
def test_a_loop_of_one_iteration_is_the_constant_zero(case, level):
    # as TVM's detection maps it: adding such a loop to every value (what a
    # split by 1 leaves) changes no answer
    loops, values = case
    unit = Var("u")
    before = detect_iter_map(values, loops, level)
    after = detect_iter_map([Add(v, unit) for v in values], {**loops, "u": _loop(unit, 1)}, level)
    assert (before is None) == (after is None)
    if before is not None:
        assert [t.args for t in before] == [t.args for t in after]


# -- regions ----------------------------------------------------------------------

I, J, K = Var("i"), Var("j"), Var("k")


@st.composite
def accesses(draw):
    """An index ``a*i + b*j + c*k + d`` (maybe divided) with i outer (kept),
    j and k relaxed over small ranges."""
    a, b, c, d = (draw(st.integers(-3, 4)) for _ in range(4))
    e = Add(Add(Add(Mul(I, IntImm("int32", a)), Mul(J, IntImm("int32", b))), Mul(K, IntImm("int32", c))),
            IntImm("int32", d))
    if draw(st.booleans()):
        e = draw(st.sampled_from([FloorDiv, FloorMod]))(e, IntImm("int32", draw(st.integers(1, 5))))
    ej, ek = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    return e, ej, ek


@given(accesses(), st.integers(-4, 6))
def test_bound_region_holds_every_touched_element(case, i_value):
    e, ej, ek = case
    vi = Var("vi")
    region = [Range(vi, IntImm("int32", 1)), Range(e, IntImm("int32", 1))]
    dom = {J: Range(IntImm("int32", 0), IntImm("int32", ej)), K: Range(IntImm("int32", 0), IntImm("int32", ek))}
    first, second = bound_region(region, dom, {vi: I + 1})
    assert _value(first.lo, {"i": i_value}) == _value(first.hi, {"i": i_value}) == i_value + 1
    lo = None if second.lo is None else _value(second.lo, {"i": i_value})
    hi = None if second.hi is None else _value(second.hi, {"i": i_value})
    for jv in range(ej):
        for kv in range(ek):
            v = _value(e, {"i": i_value, "j": jv, "k": kv})
            assert (lo is None or lo <= v) and (hi is None or v <= hi)


@st.composite
def cover_cases(draw):
    """Regions ``[a*i + c, a*i + c + ext)`` in one or two dimensions around
    an outer loop ``i``, and a target of the same shape."""
    ndim = draw(st.integers(1, 2))
    scale = [draw(st.integers(0, 4)) for _ in range(ndim)]

    def region():
        return [Range(Add(Mul(I, IntImm("int32", scale[d])), IntImm("int32", draw(st.integers(-2, 8)))),
                      IntImm("int32", draw(st.integers(1, 6)))) for d in range(ndim)]

    regions = [region() for _ in range(draw(st.integers(1, 4)))]
    return regions, region(), draw(st.integers(0, 3))


@given(cover_cases())
def test_a_proven_cover_holds_for_every_outer_value(case):
    regions, target, i_max = case
    if not region_covers(regions, target, {I: (0, i_max)}):
        return
    for iv in range(i_max + 1):
        def box(rs):
            return [range(_value(r.min, {"i": iv}), _value(r.min, {"i": iv}) + r.extent.value) for r in rs]
        covered = set()
        for r in regions:
            covered.update(itertools.product(*box(r)))
        assert set(itertools.product(*box(target))) <= covered



@st.composite
def var_slices(draw):
    """``x // c`` or ``x % c`` with a range for ``x`` (or none) on either
    side of ``[0, c)``, some past the dtype's ends."""
    dtype = draw(st.sampled_from(["int32", "int8", "uint8"]))
    lo, hi = _dtype_range(dtype)
    c = draw(st.integers(1, 20))
    x = Var("x", dtype)
    e = draw(st.sampled_from([FloorDiv, FloorMod]))(x, IntImm(dtype, c))
    span = draw(st.sampled_from([None, (0, c - 1), (0, c), (1, c - 1), (-1, c - 1), (0, 0),
                                 (0, hi), (lo, 0), (0, 2 * hi + 1), (c, 3 * c)]))
    ranges = {} if span is None else {"x": span, "y": (0, 3)}
    return e, ranges


@given(var_slices())
def test_a_slice_of_a_variable_simplifies_as_any_index(case):
    # simplify_index answers x // c and x % c without its normal forms:
    # the answer is the normal form's
    from tirfun.analysis.arith.iter_map import _Normalizer
    from tirfun.analysis.equality import structural_equal

    e, ranges = case
    norm = _Normalizer(ranges, e.dtype)
    expected = norm.expr(norm.lin(e))
    got = simplify_index(e, ranges)
    assert structural_equal(got, expected) and got.dtype == expected.dtype, (e.script(), ranges, got, expected)


@st.composite
def weighted_sums(draw):
    """``x * k + y * k' + ... + c`` over distinct or repeated variables, in
    any order of weights, some of them the normal form itself."""
    dtype = draw(st.sampled_from(["int32", "int64", "int8"]))
    names = draw(st.lists(st.sampled_from(NAMES + ["w"]), min_size=1, max_size=4))
    weights = draw(st.lists(st.integers(-2, 12), min_size=len(names), max_size=len(names)))
    if draw(st.booleans()):
        weights = sorted(weights, reverse=True)  # the normalizer's order
    e = None
    for name, k in zip(names, weights):
        v = Var(name, dtype)
        term = v if k == 1 and draw(st.booleans()) else Mul(v, IntImm(dtype, k))
        e = term if e is None else Add(e, term)
    c = draw(st.integers(-3, 5))
    if c:
        e = draw(st.sampled_from([Add, Sub]))(e, IntImm(dtype, c))
    ranges = draw(st.sampled_from([{}, {"x": (0, 15), "y": (0, 3)}]))
    return e, ranges


@given(weighted_sums())
def test_a_sum_in_normal_form_is_its_own_simplification(case):
    # simplify_index returns a sum already in the form it writes without
    # building it again: that form is the normalizer's, node for node
    from tirfun.analysis.arith.iter_map import _Normalizer, is_plain_sum

    e, ranges = case
    norm = _Normalizer(ranges, e.dtype)
    expected = norm.expr(norm.lin(e))
    plain = is_plain_sum(e)
    event(f"plain sum: {plain}")
    if plain:
        assert expected == e, (e.script(), expected.script())
    assert simplify_index(e, ranges) == expected, (e.script(), expected.script())


@st.composite
def plain_dims(draw):
    """A dimension ``Range(sum, extent)`` whose min is a sum in normal form
    (or nearly: weights out of order, a repeated variable), and a domain
    relaxing some of its variables over literal ranges, symbolic ones or
    ranges of another dtype, constants near the dtype's ends included."""
    dtype = draw(st.sampled_from(["int32", "int64", "int8"]))
    lo, hi = _dtype_range(dtype)
    names = draw(st.lists(st.sampled_from(NAMES + ["w"]), min_size=1, max_size=4))
    weights = sorted(draw(st.lists(st.integers(1, 9), min_size=len(names), max_size=len(names))), reverse=True)
    if draw(st.integers(0, 4)) == 0:
        weights.reverse()
    e = None
    for name, k in zip(names, weights):
        v = Var(name, dtype)
        term = v if k == 1 else Mul(v, IntImm(dtype, k))
        e = term if e is None else Add(e, term)
    c = draw(st.sampled_from([0, 0, 1, 3, -2, hi // 2, hi]))
    if c:
        e = (Add if c > 0 else Sub)(e, IntImm(dtype, abs(c)))
    extent = IntImm(dtype, draw(st.sampled_from([1, 1, 4, 16, 0, -1, hi])))
    dom = {}
    for name in draw(st.lists(st.sampled_from(NAMES + ["w", "u"]), unique=True)):
        start = draw(st.sampled_from([0, 0, 2, -3, hi // 3]))
        width = draw(st.sampled_from([1, 4, 16, hi // 3]))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            rng = Range(Var("n", dtype), IntImm(dtype, width))  # a symbolic start
        elif kind == 1 and dtype != "int64":
            rng = Range(IntImm("int64", start), IntImm("int64", width))  # another dtype
        else:
            rng = Range(IntImm(dtype, start), IntImm(dtype, width))
        dom[Var(name, dtype)] = rng
    return Range(e, extent), dom


@given(plain_dims())
def test_the_bound_of_a_plain_sum_is_the_interval_evaluations(case):
    # bound_region answers a sum in normal form over literal ranges without
    # evaluating intervals: node for node what the evaluation writes
    from tirfun.analysis.arith.int_set import Interval
    from tirfun.analysis.arith.region import _bound_dim, _plain_bound

    dim, dom = case
    relaxed = {v: Interval.from_range(r) for v, r in dom.items()}
    fast = _plain_bound(dim, relaxed)
    event(f"answered without evaluation: {fast is not None}")
    if fast is None:
        return
    try:
        slow = _bound_dim(dim, relaxed, None)
    except Exception as err:  # the evaluation refused: the shortcut must not answer
        raise AssertionError(f"{dim.min.script()}: the evaluation fails ({err}) where the shortcut answers")
    assert fast == slow, (dim.min.script(), dim.extent.script(), fast, slow)
    assert bound_region([dim], dom) == [slow]


@given(weighted_sums(), st.data())
def test_blockize_spans_ends_as_their_simplified_difference(case, data):
    # blockize's extent of a relaxed region, hi - lo + 1, read off ends
    # that are one sum plus constants: what simplifying the difference
    # gives, differences past the dtype's ends included
    import importlib

    _span = importlib.import_module("tirfun.rewrites.blockize")._span
    e, _ = case
    dtype = e.dtype
    lo_end, hi_end = _dtype_range(str(dtype))
    constants = st.one_of(st.integers(-4, 20), st.sampled_from([lo_end + 1, hi_end - 1, hi_end]))
    c_lo, c_hi, literal = data.draw(constants), data.draw(constants), data.draw(st.booleans())

    def plus(c):
        if literal:
            return IntImm(dtype, c)
        return e if c == 0 else (Add(e, IntImm(dtype, c)) if c > 0 else Sub(e, IntImm(dtype, -c)))

    lo, hi = plus(c_lo), plus(c_hi)
    assert _span(lo, hi) == simplify_index(hi - lo + IntImm(dtype, 1)), (lo.script(), hi.script())


@st.composite
def symbolic_multiples(draw):
    """``(e, r_is_zero, points)``: ``(q * t + r) // t`` or ``% t`` in int64,
    for ``t`` a size ``n`` or a product ``n * m``, ``q`` and ``r`` small
    sums of ``x`` and ``y`` with a constant; the multiple written ``v * t``
    or ``t * v`` (times a weight), the terms in a random order. ``points``
    give every variable a value, the sizes nonzero of either sign."""
    dt = "int64"
    x, y, n, m = Var("x", dt), Var("y", dt), Var("n", dt), Var("m", dt)
    t = draw(st.sampled_from([n, Mul(n, m)]), label="divisor")
    terms, variable = [], False
    for v in (x, y, None):
        k = draw(st.integers(-3, 3), label="multiple's weight")
        if k == 0:
            continue
        variable = variable or v is not None
        prod = t if v is None else draw(st.sampled_from([Mul(v, t), Mul(t, v)]), label="product form")
        terms.append(prod if k == 1 else Mul(prod, IntImm(dt, k)))
    rest = []
    for v in (x, y):
        k = draw(st.integers(-3, 3), label="rest's weight")
        if k:
            rest.append(v if k == 1 else Mul(v, IntImm(dt, k)))
    c = draw(st.integers(-5, 5), label="constant")
    if c:
        rest.append(IntImm(dt, c))
    parts = draw(st.permutations(terms + rest), label="order") if terms + rest else [IntImm(dt, 0)]
    dividend = _sum(list(parts))
    cls = draw(st.sampled_from([FloorDiv, FloorMod]), label="division")
    nonzero = st.sampled_from([-5, -3, -2, -1, 1, 2, 3, 5])
    points = [{"x": draw(st.integers(-6, 6)), "y": draw(st.integers(-6, 6)), "n": draw(nonzero),
               "m": draw(nonzero)} for _ in range(4)]
    return cls(dividend, t), (variable, not rest), points


@given(symbolic_multiples())
def test_a_multiple_of_a_symbolic_divisor_leaves_the_quotient_whole(case):
    # (q * n + r) // n is q + r // n and (q * n + r) % n is r % n for every
    # nonzero n: the end of a loop fused over run-time extents (a constant
    # q alone is kept: (n + 15) // n is a ceiling, printed as written)
    e, (multiple, no_rest), points = case
    out = simplify_index(e)
    for point in points:
        assert _value(out, point) == _value(e, point), (e.script(), out.script(), point)
    if not multiple:
        event("no multiple of a variable")
    elif no_rest:
        # no remainder: nothing is left to divide
        assert not any(isinstance(n, (FloorDiv, FloorMod)) for n in walk(out)), (e.script(), out.script())
        event("a whole multiple")
    elif any(isinstance(n, (FloorDiv, FloorMod)) and isinstance(n.a, Mul) for n in walk(out)):
        event("a rest with weights left divided")
    else:
        event("the multiple taken out")


@given(st.integers(-9, 9), st.sampled_from(["int8", "int32", "int64"]), st.sampled_from([-6, -2, -1, 1, 3, 6]))
def test_a_constant_divided_by_a_size_is_no_larger_than_the_constant(k, dtype, n_value):
    # the bound every prover takes of k // n where n is unknown: [-|k|, |k|]
    from tirfun.analysis.arith.linear_bound import surely_at_most

    n = Var("n", dtype)
    q = FloorDiv(IntImm(dtype, k), n)
    lo, hi = const_interval(q, {})
    assert (lo, hi) == (-abs(k), abs(k))
    assert lo <= _value(q, {"n": n_value}) <= hi
    # c + k // n is at least c - |k|, whatever c and n are
    c = Var("c", dtype)
    assert surely_at_most(c - IntImm(dtype, abs(k)), c + q, {})
    assert not surely_at_most(c - IntImm(dtype, abs(k) - 1), c + q, {}) or k == 0


@st.composite
def tile_ends(draw):
    """Two ends of index regions over loops ``x`` and ``y`` of a few
    iterations: the quotient of a scaled tile index (``(x * 360 + y +
    e) // k``, a read through a division) and a scaled tile start (``x *
    c + f``), either side first, with the loops' domains."""
    dtype = draw(st.sampled_from(["int32", "int64"]))
    x, y = Var("x", dtype), Var("y", dtype)

    def c(v):
        return IntImm(dtype, v)

    quotient = FloorDiv(Add(Mul(x, c(draw(st.integers(0, 400)))), Add(y, c(draw(st.integers(-20, 400))))),
                        c(draw(st.integers(1, 32))))
    start = Add(Mul(x, c(draw(st.integers(0, 30)))), c(draw(st.integers(-5, 40))))
    a, b = (quotient, start) if draw(st.booleans()) else (start, quotient)
    dom = {x: Range(c(draw(st.integers(-2, 3))), c(draw(st.integers(1, 5)))),
           y: Range(c(0), c(draw(st.integers(1, 4))))}
    return a, b, dom


@given(tile_ends())
def test_an_index_bound_over_loops_of_few_iterations_is_exact(case):
    # over loops of at most 16 values in all, index_at_most answers True
    # exactly where the bound holds at every point: what it proves holds,
    # and what holds it proves, by cases where no rule shows it
    a, b, dom = case
    (x, rx), (y, ry) = dom.items()
    points = [{"x": i, "y": j} for i in range(rx.min.value, rx.min.value + rx.extent.value)
              for j in range(ry.min.value, ry.min.value + ry.extent.value)]
    holds = all(_value(a, p) <= _value(b, p) for p in points)
    proven = index_at_most(a, b, dom)
    assert proven == holds if len(points) <= 16 else (holds or not proven), (a, b, dom)
    if holds and len(points) <= 16:
        from tirfun.analysis.arith.linear_bound import surely_at_most
        event("holds, shown by cases" if not surely_at_most(a, b, dom) else "holds, shown by a rule")
    else:
        event("holds over many points" if holds else "fails somewhere")


@st.composite
def symbolic_fuses(draw):
    """A loop ``f`` fusing two or three loops, some of run-time extent
    (sizes ``a``, ``b``, ``c``, or constants), and bindings reading digits
    of it as fuse and split write them: ``f // (b * c)``, ``f % (b * c) //
    c``, ``f // c // b``, ``f // c % b``, ``f % (b * c) % c``, ``f % c``;
    sometimes a digit left out, repeated or read by a divisor that does not
    tile (``f // b`` beside ``f % c``). ``(extents, loops, values)``."""
    names = ["a", "b", "c"][: draw(st.integers(2, 3))]
    kinds = [draw(st.sampled_from(["size", "const"]), label=f"{n} kind") for n in names]
    consts = [draw(st.integers(1, 4)) for _ in names]
    dtype = draw(st.sampled_from(["int32", "int64"]), label="dtype")
    extents = [Var(n, dtype) if k == "size" else IntImm(dtype, c) for n, k, c in zip(names, kinds, consts)]
    total = extents[0]
    for e in extents[1:]:
        total = Mul(total, e)
    f = Var("f", dtype)
    loops = {"f": For(f, IntImm(dtype, 0), total, "serial", Evaluate(0))}

    def product(es):
        out = es[0]
        for e in es[1:]:
            out = Mul(out, e)
        return out

    def digit(k):
        # digit k of the mixed radix (outermost first), one of the ways fuse
        # and split write it
        below = extents[k + 1:]
        if not below:
            return FloorMod(f, extents[k]) if k else f
        if k == 0:
            return FloorDiv(f, product(below)) if draw(st.booleans()) else _nested_div(f, below)
        if draw(st.booleans()):
            return FloorDiv(FloorMod(f, product(extents[k:])), product(below))
        return FloorMod(_nested_div(f, below), extents[k])

    values = [digit(k) for k in range(len(extents))]
    change = draw(st.sampled_from(["none", "drop", "repeat", "overlap"]), label="change")
    if change == "drop":
        del values[draw(st.integers(0, len(values) - 1))]
    elif change == "repeat":
        values.append(values[draw(st.integers(0, len(values) - 1))])
    elif change == "overlap":
        values[-1] = FloorMod(f, product(extents[-2:]))
    event(f"change: {change}")
    return extents, loops, values, change


def _nested_div(f, divisors):
    out = f
    for d in reversed(divisors):
        out = FloorDiv(out, d)
    return out


@given(symbolic_fuses(), st.data())
def test_a_symbolic_fuse_read_as_slices_keeps_its_promise(case, data):
    # what detect_iter_map reads of digits by run-time sizes, and what
    # is_bijective and tiled_loops promise of them, hold for sizes drawn
    from tirfun.analysis.arith.iter_map import is_bijective, tiled_loops

    extents, loops, values, change = case
    affine = detect_iter_map(values, loops, "affine", symbolic=True)
    bijective = is_bijective(values, loops)
    tiled = "f" in tiled_loops(affine, loops) if affine is not None else False
    event(f"affine: {affine is not None}, bijective: {bijective}, tiled: {tiled}")
    if change == "none":
        # every digit of the fuse, as fuse writes them: TVM's iterator maps read them
        assert bijective and tiled, values
    sizes = {n: data.draw(st.integers(1, 4), label=n) for n in ("a", "b", "c")}
    total = _value(loops["f"].extent, sizes)
    images = [tuple(_value(v, {**sizes, "f": x}) for v in values) for x in range(total)]
    if affine is not None:
        for x, image in enumerate(images):
            point = {**sizes, "f": x}
            rebuilt = tuple(sum((x // _value(_as_node(s.lower_factor), point))
                                % (_value(_as_node(s.extent), point) if s.extent is not None else 1 << 40)
                                * _value(_as_node(s.scale), point) for s in t.args) + _value(t.base, point)
                            for t in affine)
            assert rebuilt == image, (values, sizes, x)
    if bijective or tiled:
        assert len(set(images)) == len(images), (values, sizes)  # each iteration its own point
    if bijective:
        boxes = [range(min(col), max(col) + 1) for col in zip(*images)]
        assert len(images) == len(list(itertools.product(*boxes))), (values, sizes)  # every point given


def _as_node(v):
    return IntImm("int64", v) if isinstance(v, int) else v


@st.composite
def factor_products(draw):
    """(part, whole, points): ``part`` a product of factors (variables,
    ``y + 1``, ``x // 3``) and a constant, ``whole`` a product of factors
    of the same pool, often ``part``'s among them, or an affine multiple
    ``part * k + part * m`` of a sum; points whose values make factors zero,
    or wrap the product to zero in the dtype."""
    dtype = draw(st.sampled_from(["int8", "int32", "int64"]), label="dtype")
    x, y, z = (Var(n, dtype) for n in NAMES)
    c = functools.partial(IntImm, dtype)
    pool = [x, y, z, Add(y, c(1)), FloorDiv(x, c(3))]
    factors = st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=3)

    def product(ix, k):
        out = c(k) if k != 1 else None
        for i in ix:
            out = pool[i] if out is None else Mul(out, pool[i])
        return out

    part_ix = draw(factors, label="part's factors")
    part = product(part_ix, draw(st.sampled_from([1, 1, 2, -1]), label="part's constant"))
    if draw(st.booleans(), label="affine multiple"):
        k = draw(st.integers(-3, 4), label="k")
        whole = Add(Mul(part, c(k)), Mul(c(2), part)) if draw(st.booleans()) else Mul(part, c(k))
    else:
        extra = draw(st.lists(st.sampled_from(range(len(pool))), max_size=2), label="more factors")
        keep = draw(st.booleans(), label="keep the part's factors")
        whole_ix = (part_ix if keep else part_ix[1:]) + extra
        whole = product(whole_ix or [0], draw(st.sampled_from([1, 2, 4, -2, 3]), label="whole's constant"))
    bits = DataType(dtype).bits
    values = st.sampled_from([0, -1, 1, 2, 3, 1 << (bits // 2), -(1 << (bits - 1)), -(1 << (bits // 2))])
    points = [dict(zip(NAMES, draw(st.tuples(values, values, values)))) for _ in range(6)]
    return part, whole, points


@given(factor_products())
def test_a_divisor_of_an_extent_is_zero_only_where_the_extent_is(case):
    # compute_at moves a nest dividing by a run-time size under a loop whose
    # extent is a multiple of it: where the divisor is 0 (wrapped included)
    # the loop does not run, so the nest never divides by zero
    from tirfun.analysis.arith.iter_map import divides

    part, whole, points = case
    if not divides(part, whole):
        event("not shown a multiple")
        return
    event("a multiple")
    zeros = 0
    for point in points:
        if _value(part, point) == 0:
            zeros += 1
            assert _value(whole, point) == 0, (part.script(), whole.script(), point)
    event("the divisor zero at a point" if zeros else "the divisor never zero")


@given(symbolic_fuses(), st.sampled_from([2, 3, 8]), st.data())
def test_digits_of_a_split_fuse_by_sizes_keep_their_promise(case, k, data):
    # the fused loop f split by a constant k and read by run-time sizes,
    # (g_0 * k + g_1) // (b * c) and % c, as TVM's fuse, split and cut
    # leave it (rfactor of a matmul over n): the cut falls inside g_1's
    # digit, so no slice of g_0 and g_1 reads it; the sum read as one
    # loop does (divided_fused)
    from tirfun.analysis.arith.iter_map import divided_fused, is_affine_binding, is_bijective
    from tirfun.rewrites.exprs import substitute as subst

    extents, loops, values, change = case
    dtype = loops["f"].loop_var.dtype
    g0, g1 = Var("g_0", dtype), Var("g_1", dtype)
    kk = IntImm(dtype, k)
    f = loops["f"].loop_var
    fused = Add(Mul(g0, kk), g1)
    values = [subst(v, {f: fused}) for v in values]
    two = {"g_0": For(g0, IntImm(dtype, 0), loops["f"].extent, "serial", Evaluate(0)),
           "g_1": For(g1, IntImm(dtype, 0), kk, "serial", Evaluate(0))}
    affine = is_affine_binding(values, two)
    bijective = is_bijective(values, two)
    event(f"affine: {affine}, bijective: {bijective}, read as one loop: {divided_fused(values, two) is not None}")
    if change == "none":
        assert bijective, values
    sizes = {n: data.draw(st.integers(1, 4), label=n) for n in ("a", "b", "c")}
    outer = _value(loops["f"].extent, sizes)
    images = [tuple(_value(v, {**sizes, "g_0": x, "g_1": y}) for v in values) for x in range(outer) for y in range(k)]
    if bijective:
        assert len(set(images)) == len(images), (values, sizes)
        boxes = [range(min(col), max(col) + 1) for col in zip(*images)]
        assert len(images) == len(list(itertools.product(*boxes))), (values, sizes)


@st.composite
def clamped_quotients(draw):
    """``(a, b, dom)``: index ends over loops ``x`` and ``y`` where a min or a
    max is divided by a positive constant on one side or both
    (``min(x * 16 + 15, 255) // 16`` against ``min(x, 15)``: the end of a
    clamped read through a ``//`` against a producer's clamped row)."""
    dtype = draw(st.sampled_from(["int32", "int64"]))
    x, y = Var("x", dtype), Var("y", dtype)

    def c(v):
        return IntImm(dtype, v)

    def linear():
        return Add(Mul(draw(st.sampled_from([x, y])), c(draw(st.integers(0, 20)))), c(draw(st.integers(-5, 40))))

    def side():
        kind = draw(st.sampled_from([Min, Max]))
        extreme = kind(linear(), draw(st.sampled_from([linear(), c(draw(st.integers(-3, 300)))])))
        if draw(st.booleans()):
            return FloorDiv(extreme, c(draw(st.integers(1, 17))))
        return extreme if draw(st.booleans()) else linear()

    dom = {x: Range(c(draw(st.integers(-2, 20))), c(draw(st.integers(1, 6)))),
           y: Range(c(0), c(draw(st.integers(1, 5))))}
    return side(), side(), dom


@given(clamped_quotients())
def test_an_index_bound_through_a_divided_extreme_holds_at_every_point(case):
    # index_at_most takes a min or max divided by c > 0 as the min or max of
    # the quotients (floor division keeps the order): what it shows holds
    a, b, dom = case
    proven = index_at_most(a, b, dom)
    event(f"proven: {proven}, divided extreme: {any(isinstance(e, FloorDiv) and isinstance(e.a, (Min, Max)) for e in (a, b))}")
    if not proven:
        return
    (xv, xr), (yv, yr) = dom.items()
    for xi in range(xr.min.value, xr.min.value + xr.extent.value):
        for yi in range(yr.min.value, yr.min.value + yr.extent.value):
            point = {"x": xi, "y": yi}
            assert _value(a, point) <= _value(b, point), (a.script(), b.script(), point)


def test_a_clamped_read_through_a_quotient_is_covered_by_the_clamped_row():
    # TVM's floordiv_and_floormod_indices_after_reverse_compute_at: rows
    # [i, min(i, 15)] written, [max(i * 16, 0) // 16, min(i * 16 + 15, 255)
    # // 16] read: equal for i <= 15, both 15 past it
    i = Var("i", "int32")
    c = functools.partial(IntImm, "int32")
    dom = {i: Range(c(0), c(20))}
    assert index_at_most(FloorDiv(Min(i * c(16) + c(15), c(255)), c(16)), Min(i, c(15)), dom)
    assert index_at_most(i, FloorDiv(Max(i * c(16), c(0)), c(16)), dom)
    assert not index_at_most(FloorDiv(Min(i * c(16) + c(16), c(255)), c(16)), Min(i, c(15)), dom)
