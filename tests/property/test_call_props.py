"""Property: modules whose functions call one another verify, print back to
themselves, and compile to the interpreter's results bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.verify import verify
from tirfun.script import from_source
from tirfun.testing.calls import call_modules


# each example interprets and compiles a program: half of CI's 300 (the
# soak draws twenty times as many)
@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(call_modules(), st.integers(-5, 5), st.integers(0, 2**32 - 1))
def test_calls_round_trip_interpret_and_compile_alike(drawn, x, seed):
    mod, dtype, n = drawn
    assert verify(mod) is mod
    assert from_source(mod.script()) == mod
    a = np.random.default_rng(seed).uniform(-4, 4, n)
    a = (np.round(a) if dtype.startswith("int") else a).astype(dtype)
    expected, actual = a.copy(), a.copy()
    tirfun.interp.run(mod, expected, x)
    rt = tirfun.build(mod)
    rt(actual, x)
    assert expected.tobytes() == actual.tobytes()
    # the public callees are entry points too, and agree with the interpreter
    for name in mod:
        func = mod[name]
        if name == "main" or "global_symbol" not in func.attrs:
            continue
        args = [p.dtype.numpy_name and np.array(k + 1, dtype=p.dtype.numpy_name).item()
                for k, p in enumerate(func.params)]
        want = tirfun.interp.compile_in_module(mod, name)(*args)
        got = rt[name](*args)
        assert np.array(want, dtype=str(func.ret_type)).tobytes() == \
            np.array(got, dtype=str(func.ret_type)).tobytes()
