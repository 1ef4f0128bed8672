"""Compiled reductions among spatial loops, fused and split with factors
that do not divide the extents, compute exactly what the interpreter
computes and write nothing outside their buffers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.interp import run as interp_run
from tirfun.testing.reduction_nests import reduction_nests

#: elements of canary around each array (in front and behind)
PAD = 64


def _padded(values: np.ndarray, canary) -> tuple[np.ndarray, np.ndarray]:
    """A backing array with ``values`` in the middle and ``canary`` around,
    and the view of the middle (C-contiguous, as the runtime requires)."""
    raw = np.full(values.size + 2 * PAD, canary, values.dtype)
    view = raw[PAD:PAD + values.size].reshape(values.shape)
    view[...] = values
    return raw, view


# each example interprets and compiles a program: half of CI's 300 (the
# soak draws twenty times as many)
@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(mod=reduction_nests(), seed=st.integers(0, 2**16))
def test_compiled_reduction_nests_agree_exactly_and_stay_in_bounds(mod, seed):
    func = mod["main"]
    rng = np.random.default_rng(seed)
    a_buf, o_buf = (func.buffer_map[p] for p in func.params)
    dtype = str(a_buf.dtype)
    if dtype == "float32":
        a = rng.uniform(-1, 1, size=tuple(int(x) for x in a_buf.shape)).astype(dtype)
        canary = np.float32(12345.5)
    else:
        a = rng.integers(-1000, 1000, size=tuple(int(x) for x in a_buf.shape)).astype(dtype)
        canary = np.int32(-777777)
    o = rng.uniform(-9, 9, size=tuple(int(x) for x in o_buf.shape)).astype(dtype)  # init overwrites
    expected = o.copy()
    interp_run(func, a.copy(), expected)
    a_raw, a_view = _padded(a, canary)
    o_raw, o_view = _padded(o, canary)
    tirfun.build(mod)(a_view, o_view)
    np.testing.assert_array_equal(o_view, expected)
    assert expected.tobytes() == o_view.tobytes()  # bit for bit (signed zeros included)
    for raw in (a_raw, o_raw):
        assert (raw[:PAD] == canary).all() and (raw[-PAD:] == canary).all(), "wrote outside a buffer"
    np.testing.assert_array_equal(a_view, a)  # the input is never written
