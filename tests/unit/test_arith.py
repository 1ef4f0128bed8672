"""The arithmetic core's public answers, one example each."""

import itertools
import random

import pytest

from tirfun.analysis.arith import (
    IterSplit, bound_region, can_prove, const_interval, detect_iter_map, is_affine_binding, region_covers,
    region_ranges, simplify_expr, simplify_index,
)
from tirfun.interp import evaluate
from tirfun.nodes import (
    EQ, GE, GT, LE, LT, NE, Add, BufferRegion, Div, Evaluate, FloorDiv, FloorMod, For, IntImm, Max, Min,
    Mod, Mul, PrimExpr, Range, Sub, Var,
)
from tirfun.nodes import Buffer

i, j, k, x = Var("i"), Var("j"), Var("k"), Var("x")
b8 = Var("b", "int8")


def c(v, dtype="int32"):
    return IntImm(dtype, v)


def rng(lo, ext):
    return Range(lo if not isinstance(lo, int) else c(lo), c(ext))


def test_can_prove_from_loop_ranges():
    dom = {i: rng(0, 8), j: rng(0, 4)}
    assert can_prove(LT(i * 4 + j, c(32)), dom)
    assert not can_prove(LT(i * 4 + j, c(31)), dom)


def test_can_prove_a_condition_folded_to_a_constant():
    # ``c(0) > c(0)`` folds as it is built: the constant is the answer, as
    # the simplifier would give it, alone or inside an and / or
    from tirfun.analysis.arith.simplify import ExprSimplifier, is_true
    from tirfun.nodes import And, Or

    dom = {i: rng(0, 8)}
    folded = [c(0) > c(0), c(0) <= c(0), IntImm("bool", 1), IntImm("bool", 0), c(1)]
    for cond in folded:
        assert isinstance(cond, IntImm)
        expected = is_true(ExprSimplifier({}).expr(cond))
        assert can_prove(cond) is expected
        assert can_prove(cond, dom, facts=[LT(i, c(4))]) is expected
    assert [can_prove(cond) for cond in folded] == [False, True, True, False, False]
    assert can_prove(And(IntImm("bool", 1), LT(i, c(8))), dom)
    assert not can_prove(And(IntImm("bool", 0), LT(i, c(8))), dom)
    assert can_prove(Or(IntImm("bool", 0), LT(i, c(8))), dom)
    assert not can_prove(Or(IntImm("bool", 0), LT(i, c(2))), dom)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_can_prove_a_variable_within_its_own_symbolic_domain(dtype):
    n, m, v = Var("n", dtype), Var("m", dtype), Var("v", dtype)
    one = IntImm(dtype, 1)
    dom = {v: Range(m, n)}
    # the bound in any form with the same linear form as the domain's end
    assert can_prove(LT(v, m + n), dom)
    assert can_prove(LT(v, Add(Sub(n, one), one) + m), dom)
    assert can_prove(GE(m + n - one, v), dom)
    assert can_prove(GE(v, m), dom)
    assert can_prove(GT(v, Sub(m, one)), dom)
    # and nothing past it
    assert not can_prove(LT(v, m + n - one), dom)
    assert not can_prove(GT(v, m), dom)
    assert not can_prove(LT(v, n), dom)
    # without the domain, nothing is known of v
    assert not can_prove(LT(v, m + n), {})


def test_can_prove_an_integer_expression_compared_with_itself():
    # n - 1 >= n - 1 whatever n is, wrap-around included; the constant
    # bounds of an unknown n alone decide nothing
    n = Var("n")
    assert can_prove(GE(Sub(n, c(1)), Sub(n, c(1))))
    assert can_prove(EQ(n * 2 + x, n * 2 + x))
    assert not can_prove(GT(Sub(n, c(1)), Sub(n, c(1))))
    # a float may be NaN, which is not >= itself
    f = Var("f", "float32")
    assert not can_prove(GE(f, f))
    # a call need not give the same value twice
    from tirfun.nodes import Call
    r = Call("int32", "tir.call_extern", ["rand"])
    assert not can_prove(EQ(r, r))


def test_can_prove_an_order_through_a_min_or_a_max():
    n = Var("n")
    from tirfun.nodes import Max, Min
    assert can_prove(LE(Min(Mul(n, c(4)), Sub(n, c(1))), Sub(n, c(1))))
    assert can_prove(GE(Max(n, x), x))
    assert can_prove(LE(Sub(n, c(1)), Max(Sub(n, c(1)), x)))
    assert not can_prove(LE(Sub(n, c(1)), Min(Mul(n, c(4)), Sub(n, c(1)))))  # n * 4 may be below
    # floats: a NaN operand makes the min NaN, which no order holds for
    from tirfun.nodes import FloatImm
    g = Var("g", "float32")
    assert not can_prove(LE(Min(FloatImm("float32", 0.5), g), FloatImm("float32", 1.0)))


def test_index_at_most_reads_a_quotient_against_its_dividend():
    # m - 1 <= (m + 3) // 4 * 4 - 1, the end of a split of m by 4: as index
    # arithmetic (the prover alone allows m + 3 to wrap)
    from tirfun.analysis.arith import index_at_most, surely_at_most
    m = Var("m")
    ceil4 = Mul(FloorDiv(Add(m, c(3)), c(4)), c(4))
    assert not can_prove(LE(Sub(m, c(1)), Sub(ceil4, c(1))))
    assert surely_at_most(Sub(m, c(1)), Sub(ceil4, c(1)), {})
    assert not surely_at_most(m, Sub(ceil4, c(1)), {})  # m = 4 gives 4 > 3
    from tirfun.nodes import Min
    assert index_at_most(Sub(m, c(1)), Min(Sub(ceil4, c(1)), Sub(m, c(1))))
    assert not index_at_most(m, Min(Sub(ceil4, c(1)), Sub(m, c(1))))
    # the same end under a constant offset, as a range's end is written
    # from its extent: min(...) + 1 - 1, and min(...) + 2 above m
    clamped = Min(Sub(ceil4, c(1)), Sub(m, c(1)))
    assert index_at_most(Sub(m, c(1)), Sub(Add(clamped, c(1)), c(1)))
    assert index_at_most(Add(m, c(1)), Add(clamped, c(2)))
    assert not index_at_most(Add(m, c(2)), Add(clamped, c(2)))
    assert index_at_most(Sub(Add(clamped, c(1)), c(1)), Sub(m, c(1)))


def test_can_prove_never_relies_on_unbounded_integers():
    assert not can_prove(GT(Add(x, c(1)), x))               # x may be 2**31 - 1
    assert can_prove(GT(Add(x, c(1)), x), {x: (0, 100)})
    assert not can_prove(GT(Add(b8, c(1, "int8")), b8), {b8: (0, 127)})
    assert can_prove(GT(Add(b8, c(1, "int8")), b8), {b8: (0, 126)})


def test_can_prove_by_modular_reasoning():
    assert can_prove(NE(i * 4 + 2, j * 8))                  # always 2 apart modulo 4
    assert not can_prove(NE(i * 4 + 4, j * 8))


def test_can_prove_uses_facts():
    assert can_prove(LT(i, c(5)), {i: (0, 100)}, [LT(i, c(3))])
    assert not can_prove(LT(i, c(5)), {i: (0, 100)})


def test_symbolic_ranges_may_mention_earlier_variables():
    assert can_prove(GE(j, c(0)), {i: rng(0, 4), j: Range(i, c(2))})


def test_simplify_keeps_divisions_that_may_wrap():
    e = FloorDiv(Add(Mul(b8, c(4, "int8")), c(1, "int8")), c(4, "int8"))
    assert simplify_expr(e, {b8: (0, 20)}).script() == "b"
    assert simplify_expr(e, {b8: (0, 127)}) == e            # b * 4 wraps for b >= 32


def test_const_interval_is_the_whole_dtype_where_it_may_wrap():
    assert const_interval(Add(b8, c(1, "int8")), {b8: (0, 126)}) == (1, 127)
    assert const_interval(Add(b8, c(1, "int8")), {b8: (0, 127)}) == (-128, 127)


def test_bound_region_is_symbolic_in_outer_loops():
    vi = Var("vi")
    A = Buffer("A", [c(64)], "float32")
    region = BufferRegion(A, [Range(vi * 4 + j, c(1))])
    (iv,) = bound_region(region, {j: rng(0, 4)}, {vi: i})
    assert (iv.lo.script(), iv.hi.script()) == ("i * 4", "i * 4 + 3")
    (r,) = region_ranges([iv], A.shape)
    assert (r.min.script(), r.extent.script()) == ("i * 4", "4")


def test_region_cover_joins_adjacent_regions():
    halves = [[Range(i * 8, c(4))], [Range(i * 8 + 4, c(4))]]
    assert region_covers(halves, [Range(i * 8 + 1, c(6))], {i: (0, 10)})
    assert not region_covers(halves[:1], [Range(i * 8 + 1, c(6))], {i: (0, 10)})
    gap = [[Range(i * 8, c(3))], [Range(i * 8 + 4, c(4))]]
    assert not region_covers(gap, [Range(i * 8, c(8))], {i: (0, 10)})


def _loop(var, extent):
    return For(var, 0, extent, "serial", Evaluate(0))


u = Var("u")
LOOPS = {"i": _loop(i, 2), "j": _loop(j, 3), "k": _loop(k, 12), "u": _loop(u, 1)}


def test_detect_iter_map_reads_slices():
    (total,) = detect_iter_map([FloorDiv(k, 4) * 3 + j], {"j": LOOPS["j"], "k": LOOPS["k"]})
    assert total.args == (IterSplit("j", 1, 3, 1), IterSplit("k", 4, 3, 3))
    assert total.base == c(0)


@pytest.mark.parametrize("values, level, ok", [
    ([i * 3 + j, k], "bijective", True),
    ([i * 3 + j], "bijective", False),                     # k is not used
    ([FloorDiv(k, 4), FloorMod(k, 4), i, j], "bijective", True),
    ([FloorDiv(k, 4), i, j], "bijective", False),          # k % 4 is not used
    ([FloorDiv(k, 4), i, j], "affine", True),
    ([i * 2 + j], "affine", False),                        # windows overlap
    ([i * 2 + j], "surjective", True),
    # slices of one loop must be digits of one mixed radix: k % 3 ends at 3,
    # and k // 4 does not start at a multiple of it (k = 3 and k = 0 agree)
    ([FloorDiv(k, 4) + FloorMod(k, 3) * 2], "surjective", False),
    ([FloorDiv(k, 4), FloorMod(k, 3)], "affine", False),
    ([FloorDiv(k, 4), FloorMod(k, 2)], "affine", True),       # a gap is allowed
    # k // 5 and k % 5 over k < 12 miss the pairs (3, 2) and (4, 2)
    ([FloorDiv(k, 5), FloorMod(k, 5)], "surjective", False),
    ([FloorDiv(k, 5), FloorMod(k, 5), i, j], "bijective", False),
    ([FloorDiv(k, 5)], "surjective", True),                  # one slice reaches a run
    # a unit loop (the inner loop of split(k, [12, 1])) is a constant at every level
    ([k + u, i, j], "affine", True),
    ([k + u, i, j], "bijective", True),
])
def test_iter_map_levels(values, level, ok):
    assert (detect_iter_map(values, LOOPS, level) is not None) is ok


def test_iter_map_level_is_checked():
    with pytest.raises(ValueError):
        detect_iter_map([i], LOOPS, "injective")


def test_eq_of_a_sum_at_its_minimum():
    assert simplify_expr(EQ(k * 4 + j, c(0)), {k: (0, 11), j: (0, 2)}).script() == "k == 0 and j == 0"


def test_simplify_index_does_not_move_a_constant_past_the_top_of_the_dtype():
    # (z - 1) // 3 is (z + 2) // 3 - 1 only while z + 2 fits: at z = 2**31 - 1
    # the rewritten form would wrap
    from tirfun.nodes import FloorDiv, FloorMod, IntImm, Sub, Var
    from tirfun.analysis.arith import simplify_index
    from tirfun.interp import evaluate

    z = Var("z")
    for cls in (FloorDiv, FloorMod):
        e = cls(Sub(z, IntImm("int32", 1)), IntImm("int32", 3))
        top = simplify_index(e, {"z": (0, 2**31 - 1)})
        assert evaluate(top, z=2**31 - 1) == evaluate(e, z=2**31 - 1)
        small = simplify_index(e, {"z": (0, 100)})
        assert small != e  # with room to spare the constant still moves
        for v in range(0, 101):
            assert evaluate(small, z=v) == evaluate(e, z=v)


def test_a_slice_of_a_loop_shorter_than_its_modulus_ends_with_the_loop():
    # found by the soak: l1 % 2 of a loop of 1 iteration takes one value, not
    # two, so 2 * l0 + l1 % 2 over l0 < 2 skips 1 and is no iteration map
    l0, l1, l2 = Var("l0"), Var("l1"), Var("l2")
    loops = {"l0": For(l0, c(0), c(2), "serial", Evaluate(c(0))),
             "l1": For(l1, c(0), c(1), "serial", Evaluate(c(0))),
             "l2": For(l2, c(0), c(6), "serial", Evaluate(c(0)))}
    assert detect_iter_map([l0 + l0 + FloorMod(l1, c(2))], loops, "surjective") is None
    # a loop of 6 under % 8 and (// 2) % 8: the slices end with the loop
    (total,) = detect_iter_map([FloorMod(l2, c(8))], loops, "affine")
    assert total.args == (IterSplit("l2", 1, 6, 1),)
    (total,) = detect_iter_map([FloorMod(FloorDiv(l2, c(2)), c(8))], loops, "affine")
    assert total.args == (IterSplit("l2", 2, 3, 1),)


def test_a_split_of_a_fused_index_is_read_as_slices_of_the_fused_loops():
    # TVM's fuse-then-split: f = a * 32 + b over a < 8, b < 32, cut at 128
    # (b's digit split by 4) and at 32 (a digit boundary)
    a, b = Var("a"), Var("b")
    loops = {"a": For(a, c(0), c(8), "serial", Evaluate(c(0))),
             "b": For(b, c(0), c(32), "serial", Evaluate(c(0)))}
    fused = a * 32 + b
    q, r = detect_iter_map([FloorDiv(fused, c(128)), FloorMod(fused, c(128))], loops, "bijective")
    assert q.args == (IterSplit("a", 4, 2, 1),)
    assert set(r.args) == {IterSplit("b", 1, 32, 1), IterSplit("a", 1, 4, 32)}
    q, r = detect_iter_map([FloorDiv(fused, c(32)), FloorMod(fused, c(32))], loops, "bijective")
    assert (q.args, r.args) == ((IterSplit("a", 1, 8, 1),), (IterSplit("b", 1, 32, 1),))
    q, r = detect_iter_map([FloorDiv(fused, c(4)), FloorMod(fused, c(4))], loops, "bijective")
    assert r.args == (IterSplit("b", 1, 4, 1),)
    # a cut that divides no digit's extent is no such slice
    assert detect_iter_map([FloorDiv(fused, c(3)), FloorMod(fused, c(3))], loops, "affine") is None
    # nor is a sum that is not dense (a fuse gives weights 1 and 32 here)
    assert detect_iter_map([FloorDiv(a * 64 + b, c(128))], loops, "affine") is None


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_a_split_of_a_fused_index_whose_top_loop_is_symbolic_is_read_as_slices(n):
    # dlight's fuse over a dynamic size: f = a * 1024 + b over a < n * 2,
    # cut at 2048 inside a's digit; the top digit needs no divisibility
    size = Var("n")
    a, b = Var("a"), Var("b")
    loops = {"a": For(a, c(0), size * c(2), "serial", Evaluate(c(0))),
             "b": For(b, c(0), c(1024), "serial", Evaluate(c(0)))}
    fused = a * 1024 + b
    q, r = detect_iter_map([FloorDiv(fused, c(2048)), FloorMod(fused, c(2048))], loops, "affine", symbolic=True)
    assert q.args == (IterSplit("a", 2, None, 1),)
    assert set(r.args) == {IterSplit("b", 1, 1024, 1), IterSplit("a", 1, 2, 1024)}
    # the slices give the values of the expressions, for every a of the size
    def value(total, env):
        return sum((env[s.source] // s.lower_factor % (s.extent or 1 << 30)) * s.scale for s in total.args)

    for av in range(2 * n):
        for bv in (0, 1, 511, 1023):
            f = av * 1024 + bv
            assert value(q, {"a": av, "b": bv}) == f // 2048
            assert value(r, {"a": av, "b": bv}) == f % 2048


@pytest.mark.parametrize("extent", [4, None])
def test_the_middle_digits_of_a_fused_index_are_read_as_slices(extent):
    # dlight's reshape: (a * 1024 + b) % 2048 // 128 is b // 128 + a % 2 * 8
    size = Var("n")
    a, b = Var("a"), Var("b")
    loops = {"a": For(a, c(0), c(extent) if extent else size * c(2), "serial", Evaluate(c(0))),
             "b": For(b, c(0), c(1024), "serial", Evaluate(c(0)))}
    fused = a * 1024 + b
    values = [FloorDiv(fused, c(2048)), FloorDiv(FloorMod(fused, c(2048)), c(128)), FloorMod(fused, c(128))]
    sums = detect_iter_map(values, loops, "surjective", symbolic=True)
    assert sums is not None
    assert set(sums[1].args) == {IterSplit("b", 128, 8, 1), IterSplit("a", 1, 2, 8)}

    def value(total, env):
        return sum((env[s.source] // s.lower_factor % (s.extent or 1 << 30)) * s.scale for s in total.args)

    for av in range(extent or 6):
        for bv in (0, 127, 128, 1023):
            f = av * 1024 + bv
            assert [value(t, {"a": av, "b": bv}) for t in sums] == [f // 2048, f % 2048 // 128, f % 128]
    # a cut of the middle that divides no digit is none
    assert detect_iter_map([FloorDiv(FloorMod(fused, c(2048)), c(96))], loops, "affine", symbolic=True) is None


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 23])
def test_a_split_of_a_symbolic_loop_by_a_symbolic_factor_is_a_dense_map_of_symbolic_weight(n):
    # split(i, [8, None]) over range(n): i_0 * ((n + 7) // 8) + i_1 with
    # i_1 in range((n + 7) // 8), TVM's iterator maps take the weight
    size = Var("n")
    inner = FloorDiv(size + c(7), c(8))
    a, b, t = Var("a"), Var("b"), Var("t")
    loops = {"a": For(a, c(0), c(8), "serial", Evaluate(c(0))),
             "b": For(b, c(0), inner, "serial", Evaluate(c(0))),
             "t": For(t, c(0), c(4), "serial", Evaluate(c(0)))}
    value = a * inner + b
    assert detect_iter_map([value], loops, "affine", symbolic=True) is None  # weights not asked for
    (total,) = detect_iter_map([value], loops, "affine", symbolic=True, weights=True)
    assert total.args == (IterSplit("b", 1, None, 1), IterSplit("a", 1, 8, inner))
    assert is_affine_binding([value], loops)
    # the slices give the value, for every iteration of the loops
    e = (n + 7) // 8
    for av in range(8):
        for bv in range(e):
            env = {"a": av, "b": bv}
            got = sum(env[s.source] * (s.scale if isinstance(s.scale, int) else e) for s in total.args)
            assert got == av * e + bv
    # a weight of three times the inner extent, below a constant digit: dense too
    deeper = detect_iter_map([a * (inner * c(4)) + b * c(4) + t], loops, "affine", symbolic=True, weights=True)
    assert deeper is not None
    # a weight that is not the extent below it leaves gaps or overlaps
    for wrong in (a * size + b, a * (inner + c(1)) + b, a * inner + t, a * inner + b * c(2)):
        assert detect_iter_map([wrong], loops, "affine", symbolic=True, weights=True) is None, wrong
    # nor is it bijective, whose readers take constant weights only
    assert detect_iter_map([value], loops, "bijective", symbolic=False, weights=True) is None


def test_a_fused_index_with_a_loop_of_one_iteration_is_read_without_it():
    # (f_0 + f_1) // 4 with f_1 in range(1): a split by more parts than
    # the extent leaves the inner loop at 0
    f0, f1 = Var("f0"), Var("f1")
    loops = {"f0": For(f0, c(0), c(8), "serial", Evaluate(c(0))),
             "f1": For(f1, c(0), c(1), "serial", Evaluate(c(0)))}
    q, r = detect_iter_map([FloorDiv(f0 + f1, c(4)), FloorMod(f0 + f1, c(4))], loops, "bijective")
    assert (q.args, r.args) == ((IterSplit("f0", 4, 2, 1),), (IterSplit("f0", 1, 4, 1),))


def test_a_sum_of_slices_times_a_size_is_read_digit_by_digit():
    # (k_0 * 4 + k_1) * ((m + 15) // 16) + k_2: a split into 16 parts
    # split again, the weights e * 4, e and 1 by the inner extent e
    m = Var("m")
    e = FloorDiv(m + c(15), c(16))
    k0, k1, k2 = Var("k0"), Var("k1"), Var("k2")
    loops = {"k0": For(k0, c(0), c(4), "serial", Evaluate(c(0))),
             "k1": For(k1, c(0), c(4), "serial", Evaluate(c(0))),
             "k2": For(k2, c(0), e, "serial", Evaluate(c(0)))}
    (total,) = detect_iter_map([(k0 * c(4) + k1) * e + k2], loops, "affine", symbolic=True, weights=True)
    assert [a.source for a in total.args] == ["k2", "k1", "k0"]
    # the digits out of order leave a gap
    assert detect_iter_map([(k0 + k1 * c(4)) * e + k2 * c(2)], loops, "affine", symbolic=True,
                           weights=True) is None


def test_a_predicate_bounding_a_fused_part_reads_it_as_a_loop_of_that_many_iterations():
    # (f0 * 256 + f1) // 7 and % 7 under f0 * 256 + f1 < 49: a split of a
    # loop of 49 iterations by factors whose product passes it (TVM's
    # iterator maps read the predicate so)
    from tirfun.analysis.arith.iter_map import is_bijective, predicate_fused
    f0, f1 = Var("f0"), Var("f1")
    loops = {"f0": For(f0, c(0), c(1), "serial", Evaluate(c(0))),
             "f1": For(f1, c(0), c(256), "serial", Evaluate(c(0)))}
    fused = f0 * c(256) + f1
    values = [FloorDiv(fused, c(7)), FloorMod(fused, c(7))]
    pred = LT(fused, c(49))
    assert not is_affine_binding(values, loops)
    assert is_affine_binding(values, loops, predicate=pred)
    assert is_bijective(values, loops, pred) and not is_bijective(values, loops)
    (q, r), narrowed = predicate_fused(values, loops, pred)
    (name,) = narrowed
    assert int(narrowed[name].extent.value) == 49 and q == FloorDiv(narrowed[name].loop_var, c(7))
    # a bound the sum does not reach cuts nothing: the loop keeps its 256
    wide = predicate_fused(values, loops, LT(fused, c(1000)))[1]
    assert int(next(iter(wide.values())).extent.value) == 256
    # a value that reads a loop of the part outside the sum is not read so
    assert predicate_fused([FloorDiv(fused, c(7)), f1], loops, pred) is None
    # nor a part that is no fused sum of its loops
    assert predicate_fused(values, loops, LT(f1 * c(2), c(49))) is None
    # a symbolic bound: the fused part of a split of rows * cols
    rows, cols = Var("rows"), Var("cols")
    g0, g1 = Var("g0"), Var("g1")
    split = {"g0": For(g0, c(0), FloorDiv(rows * cols + c(1), c(2)), "serial", Evaluate(c(0))),
             "g1": For(g1, c(0), c(2), "serial", Evaluate(c(0)))}
    g = g0 * c(2) + g1
    pair = [FloorDiv(g, cols), FloorMod(g, cols)]
    assert not is_affine_binding(pair, split)
    assert is_affine_binding(pair, split, predicate=LT(g, rows * cols))


def test_a_predicate_bounding_a_sum_with_a_part_of_other_loops_reads_no_loop():
    # under i0, (i0 * 4 + i1) < 10 bounds a sum whose values start at i0 * 4:
    # a stand-in over [0, 10) would claim values the sum never takes there
    from tirfun.analysis.arith.iter_map import predicate_fused
    i0, i1 = Var("i0"), Var("i1")
    inner = {"i1": For(i1, c(0), c(4), "serial", Evaluate(c(0)))}
    fused = i0 * c(4) + i1
    assert predicate_fused([FloorDiv(fused, c(3)), FloorMod(fused, c(3))], inner, LT(fused, c(10))) is None
    both = {"i0": For(i0, c(0), c(3), "serial", Evaluate(c(0))), **inner}
    assert predicate_fused([FloorDiv(fused, c(3)), FloorMod(fused, c(3))], both, LT(fused, c(10))) is not None


def test_slices_by_a_size_of_a_fused_loop_are_bijective_where_the_extent_is_its_multiple():
    from tirfun.analysis.arith.iter_map import is_bijective
    k, n = Var("k"), Var("n")
    f = Var("f")
    fused = {"f": For(f, c(0), k * n, "serial", Evaluate(c(0)))}
    assert is_bijective([FloorDiv(f, n), FloorMod(f, n)], fused)
    assert not is_bijective([FloorDiv(f, n)], fused)  # f % n left out: repeats
    other = {"f": For(f, c(0), k + n, "serial", Evaluate(c(0)))}
    assert not is_bijective([FloorDiv(f, n), FloorMod(f, n)], other)  # no box


def test_a_division_by_a_multiple_of_the_weights_common_factor_drops_the_small_remainder():
    # (g * y + r) // (g * m) == y // m and (g * y + r) % (g * m) == g * (y % m) + r
    # for 0 <= r < g, for every integer y (TVM's canonical simplifier does this)
    from tirfun.interp import evaluate

    a = Var("a")
    cases = {
        FloorDiv(a * 8 + 7, c(16)): "a // 2",
        FloorDiv(a * 8 + 7, c(16)) - FloorDiv(a * 8, c(16)) + 1: "1",
        FloorMod(a * 8 + 7, c(16)): "a % 2 * 8 + 7",
        FloorDiv(a * 6 + 1, c(4)): "a * 3 // 2",
        FloorMod(a * 6 + 3, c(4)): "(a + 1) % 2 * 2 + 1",
    }
    for e, text in cases.items():
        small = simplify_index(e)
        assert small.script() == text
        for v in range(-40, 41):
            assert evaluate(small, a=v) == evaluate(e, a=v)
    # a remainder as large as the common factor crosses a multiple of it
    assert simplify_index(FloorDiv(a * 8 + 8, c(16))).script() == "(a + 1) // 2"


def test_a_fused_index_splits_into_its_high_and_low_parts():
    # as TVM's iterator maps write them: where the low terms stay below a
    # divisor g of the constant, (g * y + low) // (g * m) is y // m and
    # (g * y + low) % (g * m) is g * (y % m) + low
    from tirfun.interp import evaluate

    vi, vj = Var("vi"), Var("vj")
    ranges = {"vi": (0, 127), "vj": (0, 127)}
    fused = vj + vi * c(128)
    assert simplify_index(FloorDiv(fused, c(2048)), ranges).script() == "vi // 16"
    assert simplify_index(FloorMod(FloorDiv(fused, c(64)), c(32)), ranges).script() == "vi % 16 * 2 + vj // 64"
    # on random fused sums, every point of the ranges keeps its value, and
    # the split is taken in many of them (no division of a sum is left)
    gen = random.Random(7)
    split = 0
    for _ in range(300):
        inner = gen.randint(1, 12)
        outer = gen.randint(1, 6)
        scale = inner * gen.randint(1, 3)
        divisor = scale * gen.randint(1, 4) * gen.choice([1, 2])
        ranges = {"x": (0, outer - 1), "y": (0, inner - 1)}
        e = x * c(scale) + Var("y") + c(gen.randint(0, 2 * scale))
        for op in (FloorDiv, FloorMod):
            out = simplify_index(op(e, c(divisor)), ranges)
            split += "x" in out.script() and "(" not in out.script()
            for vx, vy in itertools.product(range(outer), range(inner)):
                assert evaluate(out, x=vx, y=vy) == evaluate(op(e, c(divisor)), x=vx, y=vy), out.script()
    # the other rules leave a division of a sum in about 50 more of these
    # 600 (151 without the split against 203 with it)
    assert split > 180


def test_integer_lanes_of_a_broadcast_and_a_ramp_fold_into_one_ramp():
    # flattening leaves Broadcast(base, n) + Ramp(...) for a vector index; a
    # contiguous load needs the one ramp, whose lanes are the same integers
    from tirfun.analysis.arith import simplify_expr
    from tirfun.interp import evaluate
    from tirfun.nodes import Broadcast, Ramp, Var

    i, j = Var("i"), Var("j")
    e = Broadcast(i * 256, 16) + (Broadcast(j * 16, 16) + Ramp(IntImm("int32", 0), IntImm("int32", 1), 16))
    out = simplify_expr(e)
    assert isinstance(out, Ramp) and out.stride == IntImm("int32", 1)
    assert isinstance(simplify_expr(Broadcast(i, 4) - Broadcast(j, 4)), Broadcast)
    stepped = simplify_expr(Ramp(i, IntImm("int32", 2), 4) - Ramp(j, IntImm("int32", 2), 4))
    assert isinstance(stepped, Broadcast)
    def lane(x, k):
        """Lane ``k`` of a vector of broadcasts, ramps, sums and differences."""
        if isinstance(x, Broadcast):
            return x.value
        if isinstance(x, Ramp):
            return x.base + x.stride * k
        return type(x)(lane(x.a, k), lane(x.b, k))

    for vi, vj in [(0, 0), (3, 5), (2**23, -7), (-1, 2**26)]:
        for k in range(16):
            assert evaluate(lane(out, k), i=vi, j=vj) == evaluate(lane(e, k), i=vi, j=vj)


def _evaluate(e, env: dict) -> int:
    """``e`` at integer values of its variables (floor division, as TIR's)."""
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, IntImm):
        return e.value
    a, b = _evaluate(e.a, env), _evaluate(e.b, env)
    ops = {Add: lambda: a + b, Sub: lambda: a - b, Mul: lambda: a * b, FloorDiv: lambda: a // b,
           FloorMod: lambda: a % b, Min: lambda: min(a, b), Max: lambda: max(a, b)}
    return ops[type(e)]()


@pytest.mark.parametrize("expr, ranges, expected", [
    (FloorDiv(i * 45, c(2)), {"i": (0, 1)}, "i * 22"),  # 45 = 2 * 22 + 1, i // 2 vanishes
    (FloorDiv(i * 5 + j, c(4)), {"i": (0, 2), "j": (0, 0)}, "i"),
    (FloorDiv(i * 45, c(2)), {"i": (0, 3)}, "i * 45 // 2"),  # i // 2 need not vanish
    (FloorDiv(i * 7 - j, c(4)), {"i": (0, 3), "j": (0, 1)}, None),
])
def test_simplify_index_splits_each_weight_of_a_quotient(expr, ranges, expected):
    # (c * q + r) // c is q when r, the weights taken modulo c, lies in [0, c)
    got = simplify_index(expr, ranges)
    if expected is not None:
        assert got.script() == expected
    names = sorted(ranges)
    for values in itertools.product(*[range(ranges[n][0], ranges[n][1] + 1) for n in names]):
        env = dict(zip(names, values))
        assert _evaluate(got, env) == _evaluate(expr, env), env


def test_two_literals_are_proved_equal_exactly_when_they_are_the_same_literal():
    from tirfun.analysis.arith.linear import constant_difference, prove_equal

    literals = [c(0), c(3), c(3, "int64"), c(-3), c(1, "bool"), c(0, "bool"), c(3, "uint8")]
    for a, b in itertools.product(literals, repeat=2):
        assert prove_equal(a, b) == (a == b)
        assert prove_equal(a, b) == (a == b or constant_difference(a, b) == 0)
    assert prove_equal(Add(i, c(1)), Add(c(1), i)) and not prove_equal(i, c(0))


def test_a_variable_over_constant_ends_relaxes_to_its_domain_and_over_symbolic_ends_further():
    from tirfun.analysis.arith import int_set as ivs

    dom = {i: ivs.Interval(c(2), c(9)), j: ivs.Interval(c(0), None), k: ivs.Interval(i, Add(i, c(3)))}
    assert ivs.eval_interval(i, dom) == ivs.Interval(c(2), c(9))
    assert ivs.eval_interval(j, dom) == ivs.Interval(c(0), None)
    assert ivs.eval_interval(k, dom) == ivs.Interval(c(2), c(12))
    assert ivs.eval_interval(Sub(Add(i, c(1)), c(1)), dom) == ivs.Interval(c(2), c(9))


def test_distinct_index_variables_are_affine_wherever_the_iterator_map_says_so():
    # the shortcut of is_affine_binding: a binding of distinct integer
    # variables answers yes without the map; checked against the map on
    # every binding of up to three atoms over loops of every kind of
    # extent and start (unit, shifted, symbolic, empty), outer variables
    # and non-index atoms included
    import itertools

    from tirfun.analysis.arith.iter_map import detect_iter_map, distinct_index_vars
    from tirfun.nodes import Evaluate, For, ForKind, IntImm, Var

    n = Var("n", "int32")
    specs = (("a", 0, 1), ("b", 2, 1), ("c", 0, 3), ("d", 1, 4), ("e", 0, n), ("f", 0, 0))
    loops = {name: For(Var(name, "int32"), IntImm("int32", lo), ext if isinstance(ext, Var) else IntImm("int32", ext),
                       ForKind.SERIAL, Evaluate(IntImm("int32", 0)))
             for name, lo, ext in specs}
    atoms = [loop.loop_var for loop in loops.values()] + [Var("o", "int32"), Var("w", "int64"), Var("b1", "bool"),
                                                          loops["c"].loop_var + 1]
    shortcut = 0
    for size in range(0, 4):
        for values in itertools.product(atoms, repeat=size):
            if not distinct_index_vars(list(values)):
                continue
            shortcut += 1
            for level in ("affine", "surjective"):
                assert detect_iter_map(list(values), loops, level, symbolic=True) is not None, (values, level)
    assert shortcut > 300
    # a repeated variable, a non-variable, a bool: the map decides
    c = loops["c"].loop_var
    assert not distinct_index_vars([c, c])
    assert not distinct_index_vars([c + 1])
    assert not distinct_index_vars([Var("b1", "bool")])


def test_a_literal_offset_is_the_difference_the_affine_forms_give():
    # constant_difference reads x - (x + c) off the pair without building
    # affine forms; it must be what the forms give, for every kind of x
    from tirfun.analysis.arith.linear import _literal_offset, affine_form
    from tirfun.nodes import FloorDiv, Mul

    wide = Var("w", "int64")
    bases = [i, Add(Mul(i, c(4)), j), Sub(c(7), k), FloorDiv(i, c(3)), c(5), wide, Add(wide, c(2, "int64")),
             Buffer("T", [8], "int32")[i]]
    checked = 0
    for x in bases:
        pairs = [(x, x)]
        for v in (-3, 0, 2):
            lit = c(v, x.dtype)
            pairs += [(x, Add(x, lit)), (x, Sub(x, lit)), (Add(x, lit), x), (Sub(x, lit), x)]
        for a, b in pairs:
            fa, fb = affine_form(a), affine_form(b)
            d = fa.plus(fb, -1)
            assert _literal_offset(a, b) == d.const and d.is_const, (a, b)
            checked += 1
    assert _literal_offset(i, j) is None and _literal_offset(i, Add(j, c(1))) is None
    assert checked == len(bases) * 13


def test_loop_slice_alone_is_read_as_the_general_reading_reads_it():
    # ``i // c`` and ``i % c`` alone are read directly; ``value + 0`` takes
    # the general reading, whose normal form is the same slice
    rnd = random.Random(7)
    taken = 0
    for _ in range(400):
        names = ["i", "j", "k"]
        loops = {}
        for name in names[:rnd.randint(1, 3)]:
            lo = rnd.choice([0, 0, 0, 1, 3])
            extent = rnd.choice([1, 2, 4, 6, 8, 12, 16, 32, Var("n")])
            loops[name] = For(Var(name), IntImm("int32", lo),
                              extent if isinstance(extent, Var) else IntImm("int32", extent), "serial", Evaluate(c(0)))
        values = []
        for _ in range(rnd.randint(1, 3)):
            var = Var(rnd.choice(names))  # now and then not a loop of the map
            op = rnd.choice([FloorDiv, FloorMod])
            values.append(op(var, IntImm("int32", rnd.choice([2, 3, 4, 8, 16, 64]))))
        general = [Add(v, IntImm("int32", 0)) for v in values]
        for level in ("affine", "surjective", "bijective"):
            for symbolic in (False, True):
                if symbolic and level == "bijective":
                    continue
                fast = detect_iter_map(values, loops, level, symbolic=symbolic)
                assert fast == detect_iter_map(general, loops, level, symbolic=symbolic), (values, loops, level)
                taken += fast is not None
    assert taken > 200


def test_tiled_loops_are_those_whose_distinct_iterations_give_distinct_points():
    # against enumeration: a loop is tiled when any two iterations of the
    # loops that differ in it alone give different values
    from tirfun.analysis.arith import tiled_loops

    rnd = random.Random(11)
    names = ["i", "j", "k"]
    seen = {True: 0, False: 0}
    for _ in range(300):
        extents = {n: rnd.choice([1, 2, 3, 4, 6, 8]) for n in names[:rnd.randint(1, 3)]}
        loops = {n: _loop(Var(n), e) for n, e in extents.items()}
        values = []
        for _ in range(rnd.randint(1, 3)):
            v = Var(rnd.choice(list(extents)))
            a, b = rnd.choice([1, 2, 3, 4]), rnd.choice([2, 3, 4])
            value = rnd.choice([v, FloorDiv(v, c(a)), FloorMod(v, c(b)), FloorMod(FloorDiv(v, c(a)), c(b))])
            if rnd.random() < 0.3:
                w = Var(rnd.choice(list(extents)))
                value = Add(Mul(value, c(extents[w.name])), w)
            values.append(value)
        sums = detect_iter_map(values, loops, "affine")
        if sums is None:
            continue
        tiled = tiled_loops(sums, loops)
        points = [dict(zip(extents, p)) for p in itertools.product(*(range(e) for e in extents.values()))]
        for name in extents:
            distinct = all(
                tuple(_evaluate(v, p) for v in values) != tuple(_evaluate(v, q) for v in values)
                for p in points for q in points
                if p[name] != q[name] and all(p[o] == q[o] for o in extents if o != name))
            assert (name in tiled) is distinct, (values, extents, name)
            seen[distinct] += 1
    assert min(seen.values()) > 50, seen


def test_a_deep_nest_of_mins_and_maxes_is_read_once_per_level():
    # each level folds its operands by their forms and reads the folded one
    # again: without memory of the levels read, a nest (as the union of many
    # regions builds) took time exponential in its depth
    from unittest import mock

    from tirfun.analysis.arith import linear

    rnd = random.Random(3)
    names = [f"x{n}" for n in range(6)]
    for depth in (5, 12, 40):  # read again at every level, 12 levels already take 30,000 reads
        e = Var("x0")
        for level in range(depth):
            op = rnd.choice([Min, Max])
            other = Var(rnd.choice(names)) + c(rnd.randint(-3, 3))
            e = op(Add(e, c(rnd.randint(-2, 2))), other) if rnd.random() < 0.5 else op(other, Sub(e, c(1)))
        calls = []
        real = linear._affine
        with mock.patch.object(linear, "_affine", lambda *a: calls.append(1) or real(*a)):
            form = linear.affine_form(e)
        assert len(calls) < 60 * depth * depth, (depth, len(calls))
        out = linear.affine_expr(form)
        for _ in range(50):
            env = {n: rnd.randint(-20, 20) for n in names}
            assert _evaluate(out, env) == _evaluate(e, env)


def test_a_quotient_times_a_symbolic_divisor_plus_the_remainder_is_the_dividend():
    # TVM's rewrite rules merge the pair whatever the divisor; a strided
    # buffer's offset of a fused index (tvm's test_buffer_index_merge_mult_mod)
    k0, k1, s = Var("k0"), Var("k1"), Var("s")
    x = k0 % k1
    assert simplify_expr(x // s * s + x % s) == x
    assert simplify_expr(s * (x // s) + x % s) == x
    assert simplify_expr(x // s * s + x % s + k0 // k1 * k1) == k0
    assert simplify_expr(k0 // (k1 // s) * (k1 // s) + k0 % (k1 // s)) == k0
    assert simplify_expr(Div(k0, s) * s + Mod(k0, s)) == k0
    # with a coefficient, and beside other terms
    assert simplify_expr(x // s * s * 3 + x % s * 3 + 1) == x * 3 + 1
    # a coefficient that differs keeps the pair
    kept = x // s * s * 2 + x % s
    assert simplify_expr(kept).script() == kept.script()
    # the wrapped values keep the identity: int8 at its ends
    a, b = Var("a", "int8"), Var("b", "int8")
    merged = simplify_expr(a // b * b + a % b)
    assert merged == a
    for av in (-128, -1, 0, 5, 127):
        for bv in (-128, -1, 1, 3, 127):
            assert evaluate(a // b * b + a % b, a=av, b=bv) == av


def test_zero_divided_or_reduced_by_a_size_is_zero():
    # a fused loop's start, i3_k_fused % n at i3_k_fused = 0: TVM folds it,
    # and decompose_reduction finds the reduction starting at 0 there

    n = Var("n", "int64")
    zero = IntImm("int64", 0)
    assert simplify_index(FloorMod(zero, n)) == zero
    assert simplify_index(FloorDiv(zero, n) + IntImm("int64", 3)) == IntImm("int64", 3)
    # a nonzero constant stays divided
    assert isinstance(simplify_index(FloorDiv(IntImm("int64", 5), n)), FloorDiv)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_the_top_digit_of_a_fuse_of_a_constant_loop_and_a_symbolic_one_takes_the_constant(d):
    from tirfun.analysis.arith.iter_map import is_bijective

    # split(i2, [None, 4]) then fuse(i2_1, i3) over i3 < d: f in range(d * 4)
    # binds i2_0 * 4 + f // d and f % d; f // d takes 4 values, so a weight
    # of 4 may follow it (TVM's iterator maps read it so)
    size, i0, f = Var("d"), Var("i2_0"), Var("f")
    loops = {"i2_0": For(i0, c(0), Var("m"), "serial", Evaluate(c(0))),
             "f": For(f, c(0), size * c(4), "serial", Evaluate(c(0)))}
    values = [i0 * c(4) + FloorDiv(f, size), FloorMod(f, size)]
    hi, lo = detect_iter_map(values, loops, "surjective", symbolic=True, weights=True)
    assert IterSplit("f", size, 4, 1) in hi.args and IterSplit("f", 1, size, 1) in lo.args
    assert is_bijective(values, loops)
    assert not is_bijective(values[1:], loops)  # f % d alone misses f's top digit
    # a loop of d * 4 + 1 is no multiple: the digit's count is unknown
    odd = dict(loops, f=For(f, c(0), size * c(4) + c(1), "serial", Evaluate(c(0))))
    assert detect_iter_map(values, odd, "surjective", symbolic=True, weights=True) is None
    # the slices give the values of the expressions at every f of the size
    for iv in range(3):
        for fv in range(4 * d):
            env = {"i2_0": iv, "f": fv}
            got = [sum(env[s.source] // (d if isinstance(s.lower_factor, Var) else s.lower_factor)
                       % (d if isinstance(s.extent, Var) else s.extent or 1 << 30) * s.scale for s in t.args)
                   for t in (hi, lo)]
            assert got == [iv * 4 + fv // d, fv % d]


@pytest.mark.parametrize("n", [1, 4, 7])
def test_the_top_digit_by_a_constant_of_a_symbolic_multiple_takes_the_multiplier(n):
    # split(i, [4, None]) over n, then fuse(i_1, k) over k < 16: f in
    # range(((n + 3) // 4) * 16) binds i_0 * ((n + 3) // 4) + f // 16 and
    # f % 16; f // 16 takes (n + 3) // 4 values, the weight above it
    size, i0, f = Var("n"), Var("i_0"), Var("f")
    quarter = FloorDiv(size + c(3), c(4))
    loops = {"i_0": For(i0, c(0), c(4), "serial", Evaluate(c(0))),
             "f": For(f, c(0), quarter * c(16), "serial", Evaluate(c(0)))}
    values = [i0 * quarter + FloorDiv(f, c(16)), FloorMod(f, c(16))]
    hi, lo = detect_iter_map(values, loops, "surjective", symbolic=True, weights=True)
    assert IterSplit("f", 16, None, 1) in hi.args and lo.args == (IterSplit("f", 1, 16, 1),)
    # a weight other than the digit's count does not follow it densely
    assert detect_iter_map([i0 * (quarter + c(1)) + FloorDiv(f, c(16))], loops, "surjective",
                           symbolic=True, weights=True) is None
    # nor does one over a loop that is no multiple of the divisor
    odd = dict(loops, f=For(f, c(0), quarter * c(16) + c(8), "serial", Evaluate(c(0))))
    assert detect_iter_map(values, odd, "surjective", symbolic=True, weights=True) is None
    # the slices give the values at every iteration of a size
    q = (n + 3) // 4
    for iv in range(4):
        for fv in range(q * 16):
            got = [sum((fv if s.source == "f" else iv) // s.lower_factor % (s.extent or 1 << 30)
                       * (q if isinstance(s.scale, PrimExpr) else s.scale) for s in t.args) for t in (hi, lo)]
            assert got == [iv * q + fv // 16, fv % 16]
