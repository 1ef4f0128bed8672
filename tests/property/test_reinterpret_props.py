"""``T.reinterpret``: the bits of a value read as another type of the same
size, the same in the interpreter and in compiled code, for every pair of
dtypes of one size, on random bit patterns (NaNs, infinities and
subnormals included), scalar and in vector loops. The interpreter holds
floats as Python floats, which keep no signalling NaN: a NaN result
matches any NaN, as in every comparison of the project."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.interp import run as interp_run
from tirfun.numpy_dtypes import numpy_dtype
from tirfun.script import from_source
from tirfun.testing.casts import DTYPES
from tirfun.testing.equivalence import compare_arrays

#: every ordered pair of distinct element types of one size (bool has no size of its own)
PAIRS = [(a, b) for a, b in itertools.permutations([d for d in DTYPES if d != "bool"], 2)
         if numpy_dtype(a).itemsize == numpy_dtype(b).itemsize]

_SHARE = settings().max_examples


def _nans(x: np.ndarray) -> np.ndarray:
    """Where ``x`` holds NaNs (nowhere for integers)."""
    if x.dtype.kind in "iu":
        return np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        return np.isnan(x.astype("float64"))


def _program(src: str, dst: str, kind: str) -> str:
    loop = {"serial": "range(8)", "vectorized": "T.vectorized(8)", "unroll": "T.unroll(8)"}[kind]
    return f'''
@T.prim_func
def main(A: T.Buffer((8,), "{src}"), B: T.Buffer((8,), "{dst}")):
    T.func_attr({{"tir.noalias": True}})
    for i in {loop}:
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.reinterpret("{dst}", A[vi])
'''


@settings(max_examples=max(10, _SHARE // 3))
@given(pair=st.sampled_from(PAIRS), kind=st.sampled_from(["serial", "vectorized", "unroll"]),
       bits=st.binary(min_size=64, max_size=64))
def test_reinterpret_reads_the_same_bits_in_the_interpreter_and_compiled(pair, kind, bits):
    src, dst = pair
    event(f"{src} -> {dst}")
    func = from_source(_program(src, dst, kind))
    s, d = numpy_dtype(src), numpy_dtype(dst)
    a = np.frombuffer(bits[:8 * s.itemsize], dtype=f"u{s.itemsize}").view(s).copy()
    if s.kind == "f" or str(s) == "bfloat16":
        # a float argument passes through the interpreter as a Python float,
        # which keeps no NaN payload: NaN inputs are the type's own NaN
        raw = a.view(f"u{s.itemsize}")
        raw[_nans(a)] = np.array([np.nan], dtype=s).view(raw.dtype)[0]
    expected = np.zeros(8, d)
    interp_run(func, a.copy(), expected)
    out = np.zeros(8, d)
    tirfun.build(func, target="llvm")(a.copy(), out)
    # bit for bit, a NaN result matching any NaN: a float result passes
    # through the interpreter as a Python float, which keeps no signalling
    # NaN (as everywhere in the project's comparisons)
    problem = compare_arrays("B", expected, out, dst)
    assert problem is None, (problem, src, dst, a)
    # and the bits are the input's, but for NaNs read as floats
    want = a.view(f"u{s.itemsize}").astype(f"u{d.itemsize}")
    keep = ~(_nans(out) | _nans(expected))
    assert (out.view(f"u{d.itemsize}")[keep] == want[keep]).all()
    assert (expected.view(f"u{d.itemsize}")[keep] == want[keep]).all()


def test_every_size_has_pairs_both_ways():
    sizes = {numpy_dtype(a).itemsize for a, _ in PAIRS}
    assert sizes == {1, 2, 4, 8}
    assert ("float32", "int32") in PAIRS and ("int32", "float32") in PAIRS
    assert ("bfloat16", "float16") in PAIRS and ("uint64", "float64") in PAIRS
