"""The binding simplifier and the affine-binding test."""

import pytest

from tirfun.nodes import For, IntImm, Var
from tirfun.analysis.arith import expr_bounds, is_affine_binding, simplify_index
from tirfun.rewrites.exprs import floordiv, floormod

I0, I1, I2, F, N = Var("i_0"), Var("i_1"), Var("i_2"), Var("f"), Var("n")


def loop(var: Var, extent) -> For:
    from tirfun.nodes import Evaluate

    return For(var, 0, extent, "serial", Evaluate(0))


@pytest.mark.parametrize("expr, ranges, expected", [
    ((I0 * 2 + I1) * 2 + I2, {}, "i_0 * 4 + i_1 * 2 + i_2"),
    (I0 * 4 + I1 * 2 + I2 + 3 - 3, {}, "i_0 * 4 + i_1 * 2 + i_2"),
    (floordiv(F, 8) * 8 + floormod(F, 8), {}, "f"),
    (floordiv(I0 * 8 + I1, 8), {"i_1": (0, 7)}, "i_0"),
    (floormod(I0 * 8 + I1, 8), {"i_1": (0, 7)}, "i_1"),
    (floordiv(I0 * 8 + I1, 8), {}, "i_0 + i_1 // 8"),
    (floordiv(floordiv(F, 4), 2), {}, "f // 8"),
    (floormod(floormod(F, 8), 4), {}, "f % 4"),
    (floordiv(floormod(F, 12), 4), {"f": (0, 23)}, "f % 12 // 4"),
    (floordiv(N + 3, 4), {}, "(n + 3) // 4"),
    (I0 - I1 * 2 - 1, {}, "i_0 - i_1 * 2 - 1"),
    (I0 * N + I1, {}, "i_0 * n + i_1"),
])
def test_simplify_index(expr, ranges, expected):
    assert simplify_index(expr, ranges).script() == expected


def test_simplify_index_leaves_non_integers_alone():
    x = Var("x", "float32")
    assert simplify_index(x * 2.0) == x * 2.0


def test_bounds():
    assert expr_bounds(I0 * 4 + I1, {"i_0": (0, 1), "i_1": (0, 3)}) == (0, 7)
    assert expr_bounds(floormod(F, 8), {}) == (0, 7)
    assert expr_bounds(I0 - I1, {"i_0": (0, 3), "i_1": (0, 3)}) == (-3, 3)
    assert expr_bounds(I0 * N, {"i_0": (0, 3)}) is None


LOOPS = {v.name: loop(v, e) for v, e in ((I0, 2), (I1, 3), (I2, 4), (F, 24))}


@pytest.mark.parametrize("values, affine", [
    ([I0 * 12 + I1 * 4 + I2], True),
    ([I0, I1], True),
    ([floordiv(F, 12), floordiv(floormod(F, 12), 4), floormod(F, 4)], True),
    ([IntImm("int32", 0), I1 + 1], True),
    ([I0 * 2], False),               # weight 2 on the innermost part
    ([I0 * 5 + I2], False),          # not a mixed radix: 5 is not i_2's extent
    ([I0, I0], False),               # one loop feeds two iteration variables
    ([floordiv(F, 4), floormod(F, 8)], False),  # overlapping slices of f
    ([I0 * I1], False),
    ([N * 4 + I2], True),            # other variables are constants
])
def test_affine_binding(values, affine):
    assert is_affine_binding(values, LOOPS) is affine


M = Var("m")
# loops of symbolic extents, fused: f over n * 32, g over n * m
SYMBOLIC = {**LOOPS, "f": loop(F, N * 32), "g": loop(Var("g"), N * M)}
G = Var("g")


@pytest.mark.parametrize("values, affine", [
    ([floordiv(F, N), floormod(F, N)], True),          # fuse of loops of 32 and n
    ([floordiv(G, M), floormod(G, M)], True),          # fuse of loops of n and m
    ([floordiv(G, M) * 4 + I2, floormod(G, M)], True),  # a slice by a size, then a split's inner part
    ([floordiv(F, N), floordiv(F, N)], False),         # one slice feeds two iteration variables
    ([floordiv(F, N), floormod(F, M)], False),         # f % m and f // n: no chain, may overlap
    ([floormod(F, N), floordiv(F, M * N)], False),     # the slices leave a gap: no chain
    ([floormod(F, N) * 2], False),                     # weight 2 on the innermost part
    ([floormod(F, N) + I2 * 2], False),                # nothing of a larger weight after n's slice
    ([floordiv(F, floormod(F, 3))], False),            # the divisor uses the loop itself
])
def test_affine_binding_with_slices_by_symbolic_sizes(values, affine):
    # TVM's fuse of loops of symbolic extents makes f // n and f % n, and its
    # iterator maps read them as affine (its dynamic-shape schedules rely on it)
    assert is_affine_binding(values, SYMBOLIC) is affine
    # the plain detection, whose slices hold integers, does not read them
    from tirfun.analysis.arith import detect_iter_map
    if any(isinstance(v, type(floordiv(F, N))) or isinstance(v, type(floormod(F, N))) for v in values):
        assert detect_iter_map(values, SYMBOLIC) is None
