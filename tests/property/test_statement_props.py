"""Properties of ``while`` loops and ``T.allocate_const``: random programs
round-trip through the printer, the interpreter computes what Python
computes, and the CPU build computes what the interpreter computes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from tirfun.testing.statements import const_programs, while_programs


# every example builds native code: at most 120 examples keep this under ~15 s
@settings(max_examples=max(1, settings().max_examples * 120 // 300))
@given(while_programs(), st.lists(st.integers(-2, 30), min_size=1, max_size=3),
       st.randoms(use_true_random=False))
def test_while_programs_round_trip_interpret_and_compile(func, ms, rnd):
    printed = func.script()
    assert structural_equal(from_source(printed), func)
    n = func.buffer_map[func.params[0]].shape[0].value
    rt = tirfun.build(func, target="llvm")
    for m in ms:
        a = np.array([rnd.randint(-50, 50) for _ in range(n)], dtype="int32")
        expected = a.copy()
        interp_run(func, expected, m)
        got = a.copy()
        rt(got, m)
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(const_programs())
def test_allocate_const_programs_hold_their_data(program):
    func, dtype, data = program
    assert structural_equal(from_source(func.script()), func)
    reference = np.ascontiguousarray(np.asarray(data, dtype=dtype)[::-1])
    out = np.zeros(len(data), dtype)
    interp_run(func, out)
    np.testing.assert_array_equal(out.view(np.uint8), reference.view(np.uint8))
    got = np.zeros(len(data), dtype)
    tirfun.build(func, target="llvm")(got)
    np.testing.assert_array_equal(got.view(np.uint8), reference.view(np.uint8))
