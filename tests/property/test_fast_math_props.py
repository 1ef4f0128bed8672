"""Properties of the CPU build under ``-math=fast``: compiled code computes
what the interpreter computes, within ``FAST_MATH_ULPS`` where an inline
math function is called and bit for bit everywhere else.

The programs and schedules are those of test_compile_props (about half of
them call one of the inline functions on a float narrower than 64 bits,
inside vectorized loops of any width or serial ones). A quarter of the
profile's examples: the exact build's property covers the rest of the
compiler on the same programs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun import IRModule
from tirfun.interp import run as interp_run
from tirfun.testing.equivalence import compare_arrays, random_inputs, ulps_for
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules


@st.composite
def scheduled_programs(draw):
    mod = IRModule({"main": draw(prim_funcs(), label="program")})
    schedule = draw(loop_schedules(mod, max_steps=6), label="schedule")
    return schedule(mod)


@settings(max_examples=max(settings.default.max_examples // 4, 10))
@given(mod=scheduled_programs(), seed=st.integers(0, 2**16))
def test_fast_math_code_agrees_with_the_interpreter(mod, seed):
    func = mod["main"]
    rt = tirfun.build(mod, target="llvm -math=fast")
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(func, *expected)
    rt(*actual)
    ulps = ulps_for(func, math="fast")
    for p, x, y in zip(func.params, expected, actual):
        if isinstance(x, np.ndarray):
            buf = func.buffer_map[p]
            problem = compare_arrays(buf.name, x, y, buf.dtype, ulps)
            assert problem is None, problem
