"""Compiled chains of conversions over short vectors compute exactly what
the interpreter computes, for every pair of dtypes and every loop kind."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.interp import run as interp_run
from tirfun.testing.casts import DTYPES, cast_chains, full_range_inputs
from tirfun.testing.equivalence import compare_arrays

@given(mod=cast_chains(), seed=st.integers(0, 2**16))
def test_compiled_cast_chains_agree_bit_for_bit(mod, seed):
    func = mod["main"]
    a_buf, b_buf = (func.buffer_map[p] for p in func.params)
    a, b = full_range_inputs(mod, np.random.default_rng(seed))
    expected = b.copy()
    interp_run(mod, a.copy(), expected)
    out = b.copy()
    tirfun.build(mod, target="llvm")(a.copy(), out)
    problem = compare_arrays("B", expected, out, b_buf.dtype)
    assert problem is None, f"{problem}\n{func.script()}\ninput {a!r}"


def test_every_dtype_is_drawn_at_both_ends():
    # a fixed sample of the strategy (the same on every run, whatever the
    # profile): every dtype shows up as the input and as the result
    inputs, outputs = collections.Counter(), collections.Counter()

    @settings(max_examples=300, derandomize=True, database=None)
    @given(mod=cast_chains())
    def sample(mod):
        func = mod["main"]
        a_buf, b_buf = (func.buffer_map[p] for p in func.params)
        inputs[str(a_buf.dtype)] += 1
        outputs[str(b_buf.dtype)] += 1

    sample()
    missing = [d for d in DTYPES if not inputs[d] or not outputs[d]]
    assert not missing, f"never drawn at one end: {missing}"


def test_the_sign_extended_unsigned_conversion_that_slp_got_wrong():
    src = '''@T.prim_func
def main(A: T.Buffer((8,), "int8"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Cast("float32", T.Cast("uint64", A[vi]))'''
    f = tirfun.script.from_source(src)
    a = np.array([-1, 2, -3, 4, -5, 6, -7, 8], "int8")
    out = np.zeros(8, "float32")
    tirfun.build(f, target="llvm")(a, out)
    expected = np.array([np.float32(np.uint64(2**64 + int(x))) if x < 0 else np.float32(x) for x in a])
    assert np.array_equal(out, expected)
    assert out[0] == np.float32(18446744073709551615.0)
