"""assert_equivalent, random_inputs and inputs_for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun import te
from tirfun.errors import InterpError
from tirfun.interp import run
from tirfun.nodes import Block, BlockRealize, Buffer, BufferStore, For, IterVar, PrimFunc, Range, Var
from tirfun.testing.equivalence import (
    FAST_MATH_ULPS, INTRINSIC_ULPS, NotEquivalentError, assert_equivalent, compare_arrays, inputs_for,
    random_inputs, ulps_for,
)


def scale(c: float, name="B", size=8):
    A = te.placeholder((size,), name="A")
    B = te.compute((size,), lambda i: A[i] * c, name=name)
    return te.create_prim_func([A, B])


def split_scale(c: float, outer: int, inner: int):
    """``B[i] = A[i] * c`` through a split loop with a predicate (nodes built by hand)."""
    A, B = Buffer("A", [8]), Buffer("B", [8])
    io, ii, vi = Var("io"), Var("ii"), Var("vi")
    block = Block([IterVar(Range(0, 8), vi, "DataPar")], [], [], "B",
                  BufferStore(B, A[vi] * c, [vi]))
    body = For(io, 0, outer, "serial", For(ii, 0, inner, "serial",
                                           BlockRealize([io * inner + ii], io * inner + ii < 8, block)))
    ha, hb = Var("var_A", "handle"), Var("var_B", "handle")
    return PrimFunc([ha, hb], body, buffer_map={ha: A, hb: B})


def test_equivalent_functions_pass():
    assert_equivalent(scale(2.0), split_scale(2.0, 3, 3))
    assert_equivalent(scale(2.0), split_scale(2.0, 2, 4), trials=5, seed=11)


def test_a_different_constant_is_reported_with_buffer_and_index():
    with pytest.raises(NotEquivalentError) as info:
        assert_equivalent(scale(2.0), split_scale(2.5, 2, 4))
    assert isinstance(info.value, AssertionError)
    assert "buffer B differs at index (0,)" in str(info.value)
    assert "8 of 8 elements differ" in str(info.value)
    assert "trial 0, seed 0" in str(info.value)


def test_a_missed_element_is_found():
    # a split that covers only 6 of the 8 elements
    with pytest.raises(NotEquivalentError, match=r"buffer B differs at index \(6,\)"):
        assert_equivalent(scale(2.0), split_scale(2.0, 2, 3))


def test_reassociated_float_sums_are_not_equivalent():
    # the comparison is exact: summing in another order rounds differently,
    # and a rewrite that reorders a float reduction changes the result
    A = te.placeholder((16,), name="A")
    k = te.reduce_axis((0, 16), "k")
    forward = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="S")
    r = te.reduce_axis((0, 16), "r")
    backward = te.compute((1,), lambda i: te.sum(A[15 - r], axis=r), name="S")
    with pytest.raises(NotEquivalentError, match="buffer S differs at index"):
        assert_equivalent(te.create_prim_func([A, forward]), te.create_prim_func([A, backward]))


def test_floats_compare_by_bits_and_any_nans_agree():
    nan_bits = np.array([0x7FC00000, 0xFFC00001], dtype="uint32").view("float32")
    assert compare_arrays("X", nan_bits[:1], nan_bits[1:], "float32") is None
    assert compare_arrays("X", np.array([0.0]), np.array([-0.0]), "float64") == \
        "buffer X differs at index (0,): 0.0 against -0.0 (1 of 1 elements differ)"
    one = np.float32(1.0)
    next_up = np.nextafter(one, np.float32(2))
    assert compare_arrays("X", np.array([one]), np.array([next_up]), "float32") is not None
    assert compare_arrays("X", np.array([one]), np.array([next_up]), "float32", ulps=1) is None
    # signed zeros are one ulp apart; infinities and NaNs get no slack
    assert compare_arrays("X", np.array([0.0]), np.array([-0.0]), "float64", ulps=1) is None
    assert compare_arrays("X", np.array([np.inf]), np.array([np.finfo("float64").max]),
                          "float64", ulps=1) is not None
    assert compare_arrays("X", np.array([1.0]), np.array([np.nan]), "float64", ulps=5) is not None


def test_ulps_for_takes_the_widest_intrinsic_called():
    A = te.placeholder((4,), name="A")
    plain = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    assert ulps_for(te.create_prim_func([A, plain])) == 0
    # the interpreter calls the C library's exp10, hypot and pow, as compiled
    # code does: every intrinsic is exact (where the C library has them)
    exact = te.compute((4,), lambda i: tirfun.tir.exp10(A[i]) + tirfun.tir.hypot(A[i], A[i])
                       + te.power(A[i], A[i]), name="B")
    assert ulps_for(te.create_prim_func([A, exact])) == 0 == sum(INTRINSIC_ULPS.values())
    # the fast math functions have their slack, the widest of those called
    fast = te.compute((4,), lambda i: te.exp(A[i]) + te.sin(A[i]), name="B")
    assert ulps_for(te.create_prim_func([A, fast]), math="fast") == max(
        FAST_MATH_ULPS["exp"], FAST_MATH_ULPS["sin"]) > 0


def test_symbolic_sizes_are_chosen():
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] + A[i, j], name="B")
    m = te.var("m")
    A2 = te.placeholder((m, 3), name="A")
    B2 = te.compute((m, 3), lambda i, j: A2[i, j] * 2.0, name="B")
    assert_equivalent(te.create_prim_func([A, B]), te.create_prim_func([A2, B2]), trials=4)
    C2 = te.compute((m, 3), lambda i, j: A2[i, j] * 2.0 + 1.0, name="B")
    with pytest.raises(NotEquivalentError, match="buffer B differs"):
        assert_equivalent(te.create_prim_func([A, B]), te.create_prim_func([A2, C2]))


def test_different_signatures_are_not_equivalent():
    A = te.placeholder((8,), name="A", dtype="int32")
    B = te.compute((8,), lambda i: A[i] * 2, name="B")
    with pytest.raises(NotEquivalentError, match="buffer A of float32 with 1 dimensions against A of int32"):
        assert_equivalent(scale(2.0), te.create_prim_func([A, B]))


def test_a_failing_second_function_is_not_equivalent():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[(i + 1) % 9] * 2.0, name="B")  # reads A[8]
    with pytest.raises(NotEquivalentError, match="the second fails") as info:
        assert_equivalent(scale(2.0), te.create_prim_func([A, B]))
    assert "out-of-bounds load from buffer A" in str(info.value)
    with pytest.raises(InterpError, match="out-of-bounds"):
        assert_equivalent(te.create_prim_func([A, B]), scale(2.0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int16", "int32", "uint8",
                                   "uint16", "uint64", "bool"])
def test_random_inputs_are_small_and_typed(dtype):
    A = te.placeholder((50,), name="A", dtype=dtype)
    B = te.compute((50,), lambda i: A[i], name="B")
    a, b = random_inputs(te.create_prim_func([A, B]), np.random.default_rng(1))
    assert a.dtype == np.dtype(dtype) and b.dtype == np.dtype(dtype)
    if dtype.startswith("float"):
        assert np.all(np.abs(a) <= 1) and len(np.unique(a)) > 10
    elif dtype != "bool":
        small = np.abs(a.astype(np.int64)) <= 8
        assert len(np.unique(a)) > 3
        if np.dtype(dtype).itemsize <= 2:  # a quarter anywhere in the type's range
            assert 0.5 < small.mean() < 1 and a.min() >= np.iinfo(dtype).min
        else:
            assert np.all(small)
    else:
        assert a.any() and not a.all()


def test_random_inputs_include_scalars_and_respect_given_sizes():
    n = te.var("n")
    A = te.placeholder((n, 2), name="A")
    B = te.compute((n, 2), lambda i, j: A[i, j], name="B")
    a, b = random_inputs(te.create_prim_func([A, B]), 0, sizes={"n": 5})
    assert a.shape == (5, 2) and b.shape == (5, 2)


def test_compare_arrays_treats_nan_as_equal_and_integers_exactly():
    x = np.array([1.0, np.nan], dtype="float32")
    assert compare_arrays("X", x, x.copy(), "float32") is None
    assert compare_arrays("X", np.array([3, 4]), np.array([3, 5]), "int64") == \
        "buffer X differs at index (1,): 4 against 5 (1 of 2 elements differ)"


@settings(max_examples=20)
@given(data=st.data())
def test_inputs_for_draws_runnable_arguments(data):
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 3.0, name="B")
    f = te.create_prim_func([A, B])
    a, b = data.draw(inputs_for(f))
    assert a.shape == b.shape and 1 <= a.shape[0] <= 6
    assert np.all(np.abs(a) <= 1)
    run(f, a, b)
    np.testing.assert_array_equal(b, a * np.float32(3))


def test_a_reducer_identity_in_the_buffer_does_not_hide_differences():
    x = np.array([-3.4e38, 1.0, 2.0, 0.5, 0.25], dtype="float32")
    y = x.copy()
    y[3] = 0.51
    assert compare_arrays("M", x, y, "float32").startswith("buffer M differs at index (3,)")


def test_ulps_apart_takes_the_widest_difference_and_none_past_the_finite():
    from tirfun.testing.equivalence import ulps_apart

    a = np.array([1.0, 2.0, np.nan, -0.0], "float32")
    b = a.copy()
    assert ulps_apart(a, b, "float32") == 0
    b[0] = np.nextafter(np.nextafter(a[0], np.float32(2)), np.float32(2))
    b[3] = 0.0  # -0 and +0 are one apart
    assert ulps_apart(a, b, "float32") == 2
    b[1] = np.inf
    assert ulps_apart(a, b, "float32") is None


def test_zero_dimensional_floats_that_differ_are_named():
    from tirfun.testing.equivalence import compare_arrays

    message = compare_arrays("x", np.array(1.0), np.array(2.0), "float64")
    assert message == "buffer x differs at index (): 1.0 against 2.0 (1 of 1 elements differ)"
