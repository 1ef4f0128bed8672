"""The caching primitives' constant bound inference answers exactly as
:func:`~tirfun.analysis.arith.bound_region` does.

cache_read, cache_write, cache_inplace, reindex and the reindexing caches
relax block regions over loops; where every end comes out a constant they
compute it on integers (``_constant_box``) instead of asking the region
analysis. The answer must be the analysis's own, literal for literal and
dtype for dtype, and where it might not be (a symbolic variable, a division,
a product of two varying terms, a constant sub-expression, a value outside
the dtype, mixed dtypes) the shortcut must decline.
"""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from tirfun.analysis.arith import bound_region
from tirfun.errors import NodeError
from tirfun.nodes import Add, FloorDiv, IntImm, Mul, Range, Sub, Var
from tirfun.nodes.dtype import DataType
from tirfun.rewrites.cache import _bound, _constant_box

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
    for loop in (i, j):
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
    dims = [Range(expr(3, [vi, vj, vi, vj, i, n]), const(st.integers(0, 5)))
            for _ in range(draw(st.integers(1, 3)))]
    return dims, dom, bindings


@given(cases())
def test_constant_box_is_bound_regions_answer(case):
    dims, dom, bindings = case
    box = _constant_box(dims, dom, bindings)
    event("computed on integers" if box is not None else "left to the analysis")
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
