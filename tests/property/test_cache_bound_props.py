"""The caching primitives' shortcuts through region arithmetic answer
exactly as the general path does.

cache_read, cache_write, cache_inplace, reindex and the reindexing caches
relax block regions over loops; where every end comes out a constant they
compute it on integers (``_constant_box``) instead of asking
:func:`~tirfun.analysis.arith.bound_region`. The answer must be the
analysis's own, literal for literal and dtype for dtype (or, for a dimension
at a variable that is not relaxed, the variable and its sum with the extent,
as the simplifier writes them), and where it might not be (a symbolic
variable inside a sum, a division, a product of two varying terms, a
constant sub-expression, a value outside the dtype, mixed dtypes) the
shortcut must decline. Likewise a region clamped to its buffer, a read cut
to the buffer and an index map's lowest index checked against 0 give what
the proofs and the interval intersection give.
"""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from tirfun.analysis.arith import bound_region, can_prove
from tirfun.analysis.arith.int_set import Interval, cover_range, intersect
from tirfun.analysis.arith.linear import fold_sub
from tirfun.errors import NodeError
from tirfun.nodes import GE, Add, Buffer, FloorDiv, IntImm, Mul, Range, Sub, Var
from tirfun.nodes.dtype import DataType
from tirfun.rewrites.cache import _bound, _clamped, _clamped_dim, _constant_box, _non_negative, _spans
from tirfun.rewrites.dataflow import within_buffer

DTYPES = ["int32", "int8", "int64", "uint8"]


def _limits(dtype: str) -> tuple[int, int]:
    dt = DataType(dtype)
    return int(dt.min_value()), int(dt.max_value())


@st.composite
def cases(draw):
    """A region of one to three dimensions in iteration variables ``vi, vj``
    bound to expressions of loops ``i, j`` (relaxed, constant ranges, some
    of another dtype) and ``n`` (symbolic), with constants that reach the
    dtype's ends."""
    dtype = draw(st.sampled_from(DTYPES))
    lo, hi = _limits(dtype)
    # half the cases stay within what the shortcut folds (small constants,
    # sums and scalings of the relaxed loops), so that it is exercised
    plain = draw(st.booleans())

    def const(small=st.integers(-3, 9)):
        ends = st.sampled_from([lo, hi, hi // 2 + 1, lo + 1, hi - 1])
        value = draw(small if plain and draw(st.integers(0, 9)) else st.one_of(small, ends))
        return IntImm(dtype, min(max(value, lo), hi))

    i, j, n = Var("i", dtype), Var("j", dtype), Var("n", dtype)
    dom = {}
    # the loops relaxed (the others stay symbolic, as the loops above the
    # place bound inference relaxes below)
    for loop in draw(st.sampled_from([(i, j), (i, j), (i,), (j,), ()])):
        rdt = dtype if plain else draw(st.sampled_from([dtype, dtype, dtype, "int64"]))
        rlo, rhi = _limits(rdt)
        start = draw(st.integers(0, 9) if plain else st.one_of(st.integers(-3, 9), st.sampled_from([rlo, rhi - 4, 0])))
        extent = draw(st.integers(0, 9) if plain else st.one_of(st.integers(0, 9), st.sampled_from([1, rhi, rhi // 2])))
        start, extent = min(max(start, rlo), rhi), min(max(extent, rlo), rhi)
        dom[loop] = Range(IntImm(rdt, start), IntImm(rdt, extent))

    def expr(depth, leaves):
        if plain:
            leaves = [x for x in leaves if x is not n]
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            choice = draw(st.integers(0, len(leaves)))
            return const() if choice == len(leaves) else leaves[choice]
        op = draw(st.sampled_from([Add, Add, Sub, Mul, Mul] if plain else [Add, Add, Sub, Mul, Mul, FloorDiv]))
        a = expr(depth - 1, leaves)
        b = const(st.integers(-3, 4)) if op in (Mul, FloorDiv) and draw(st.booleans()) else expr(depth - 1, leaves)
        if op is FloorDiv and not (isinstance(b, IntImm) and b.value > 0):
            op = Add
        return op(a, b)

    vi, vj = Var("vi", dtype), Var("vj", dtype)
    bindings = {vi: expr(2, [i, j, i, j, n]), vj: expr(2, [i, j, i, j])}
    dims = [Range(draw(st.sampled_from([vi, vj, i, n])) if draw(st.booleans()) else expr(3, [vi, vj, vi, vj, i, n]),
                  const(st.integers(0, 5)))
            for _ in range(draw(st.integers(1, 3)))]
    return dims, dom, bindings


@given(cases())
def test_constant_box_is_bound_regions_answer(case):
    dims, dom, bindings = case
    box = _constant_box(dims, dom, bindings)
    event("answered by the shortcut" if box is not None else "left to the analysis")
    try:
        expected = bound_region(dims, dom, bindings)
    except NodeError:
        # a loop whose range is of another dtype than its variable: the
        # analysis cannot combine the ends, and the shortcut declines
        assert box is None
        return
    if box is not None:
        assert box == expected, ([d.min.script() for d in dims], box, expected)
    assert _bound(dims, dom, bindings) == expected


def test_relaxed_block_region_is_computed_on_integers():
    # A[vi * 4 + j + 2, vk - 1 : vk + 2] with vi = i, vk = k over constant
    # loops: the shortcut answers, with the analysis's literals
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vk = Var("vi"), Var("vk")
    dom = {loop: Range(IntImm("int32", 0), IntImm("int32", 4)) for loop in (i, j, k)}
    dims = [Range(Add(Add(Mul(vi, IntImm("int32", 4)), j), IntImm("int32", 2)), IntImm("int32", 1)),
            Range(Sub(vk, IntImm("int32", 1)), IntImm("int32", 3))]
    box = _constant_box(dims, dom, {vi: i, vk: k})
    assert box is not None
    assert box == bound_region(dims, dom, {vi: i, vk: k})
    assert [(iv.lo.value, iv.hi.value) for iv in box] == [(2, 17), (-1, 4)]


def test_region_at_unrelaxed_variables_is_answered_as_written():
    # A[vi, vj : vj + 4] with vi = i, vj = j relaxed over nothing: [i, i], [j, j + 3]
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    dims = [Range(vi, IntImm("int32", 1)), Range(vj, IntImm("int32", 4))]
    box = _constant_box(dims, {}, {vi: i, vj: j})
    assert box is not None
    assert box == bound_region(dims, {}, {vi: i, vj: j})
    assert box[0].lo is i and box[0].hi is i


def test_symbolic_and_unfolded_ends_are_left_to_the_analysis():
    i, n, vi = Var("i"), Var("n"), Var("vi")
    dom = {i: Range(IntImm("int32", 0), IntImm("int32", 8))}
    one = IntImm("int32", 1)
    # a variable the loops do not relax stays symbolic
    assert _constant_box([Range(Add(vi, n), one)], dom, {vi: i}) is None
    # a constant sub-expression is kept as written by the analysis
    assert _constant_box([Range(Add(vi, Add(one, one)), one)], dom, {vi: i}) is None
    # a product of two varying terms is unbounded there
    assert _constant_box([Range(Mul(vi, i), one)], dom, {vi: i}) is None
    # an end past the dtype is not folded
    big = IntImm("int32", 2**31 - 4)
    assert _constant_box([Range(Add(vi, big), one)], dom, {vi: i}) is None


def _clamped_by_proofs(intervals, buf, dom):
    """What a cache's region clamped to the buffer is without shortcuts:
    literal ends inside a literal dimension kept, every other end proven
    inside or clamped."""
    out = []
    for iv, dim in zip(intervals, buf.shape):
        dt = dim.dtype
        if (iv.bounded and iv.lo.dtype == dt and iv.hi.dtype == dt and isinstance(iv.lo, IntImm)
                and isinstance(iv.hi, IntImm) and isinstance(dim, IntImm)
                and 0 <= iv.lo.value and iv.hi.value < dim.value):
            out.append(cover_range(iv, Range(IntImm(dt, 0), dim)))
        else:
            out.append(_clamped_dim(iv, dim, dom))
    return out


@st.composite
def clamp_cases(draw):
    """Intervals over a buffer's dimensions (literal, symbolic ``n``):
    literal ends inside and outside, and a loop variable, alone or plus a
    constant, whose domain starts at 0 or not and spans the dimension or
    not, in the dimension's dtype or another."""
    dtype = draw(st.sampled_from(["int32", "int64", "uint8"]))
    lo_limit, hi_limit = _limits(dtype)
    n = Var("n", dtype)
    ndim = draw(st.integers(1, 3))
    shape = [n if draw(st.integers(0, 3)) == 0 else IntImm(dtype, draw(st.integers(1, min(hi_limit, 300))))
             for _ in range(ndim)]
    dom, intervals = {}, []
    for k, dim in enumerate(shape):
        kind = draw(st.integers(0, 2))
        if kind == 0:
            a = draw(st.integers(max(lo_limit, -3), min(hi_limit, 320)))
            b = draw(st.integers(max(lo_limit, -3), min(hi_limit, 320)))
            intervals.append(Interval(IntImm(dtype, a), IntImm(dtype, b)))
            continue
        vdt = dtype if draw(st.integers(0, 5)) else draw(st.sampled_from(["int32", "int64"]))
        u = Var(f"u{k}", vdt)
        start = draw(st.sampled_from([0, 0, 1]))
        extent = dim if vdt == dtype and draw(st.integers(0, 3)) else IntImm(vdt, draw(st.integers(1, 200)))
        if extent.dtype != vdt:
            extent = IntImm(vdt, 8)
        dom[u] = Range(IntImm(vdt, start), extent)
        hi = u if kind == 1 else Add(u, IntImm(vdt, draw(st.integers(1, 3))))
        intervals.append(Interval(u, hi))
    if draw(st.booleans()):
        dom[n] = Range(IntImm(dtype, 1), IntImm(dtype, min(hi_limit - 1, 64)))
    return intervals, Buffer("A", shape, "float32"), dom


@given(clamp_cases())
def test_clamped_region_is_what_the_proofs_give(case):
    intervals, buf, dom = case
    for iv, dim in zip(intervals, buf.shape):
        if isinstance(iv.lo, Var) and iv.hi is iv.lo:
            event("a loop variable " + ("over the dimension" if _spans(iv.lo, dim, dom) else "proven or clamped"))
    assert _clamped(intervals, buf, dom) == _clamped_by_proofs(intervals, buf, dom)


@given(st.sampled_from(["int32", "int8", "uint8", "int64"]).flatmap(lambda dt: st.tuples(
    st.just(dt),
    st.lists(st.tuples(st.integers(*_limits(dt)), st.integers(*_limits(dt)), st.integers(max(0, _limits(dt)[0]), 300)),
             min_size=1, max_size=3))))
def test_read_within_buffer_is_the_intersection(case):
    # a consumer's relaxed read cut to the buffer: literal ends give what
    # intersecting with [0, dim - 1] gives
    dtype, dims = case
    limit = _limits(dtype)[1]
    intervals = [Interval(IntImm(dtype, a), IntImm(dtype, b)) for a, b, _ in dims]
    buf = Buffer("A", [IntImm(dtype, min(d, limit)) for _, _, d in dims], "float32")
    expected = [intersect(iv, Interval(IntImm(dtype, 0), fold_sub(dim, IntImm(dtype, 1))))
                for iv, dim in zip(intervals, buf.shape)]
    assert within_buffer(intervals, buf) == expected


@given(st.sampled_from(["int32", "int8", "uint8", "int64"]).flatmap(
    lambda dt: st.tuples(st.just(dt), st.integers(*_limits(dt)))))
def test_literal_end_is_non_negative_as_the_prover_finds(case):
    # the reindexing caches' check of an index map's lowest index
    dtype, value = case
    end = IntImm(dtype, value)
    assert _non_negative(end) == can_prove(GE(end, IntImm(dtype, 0))) == (value >= 0)
