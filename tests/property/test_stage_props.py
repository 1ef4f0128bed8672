"""Properties of the multi-stage program strategy (``tirfun.testing.stages``):
every program verifies, prints and parses back, and compiles to the
interpreter's results, bit for bit except within ``INTRINSIC_ULPS`` where a
math intrinsic is called; integer programs never come near overflow and
keep their meaning under random loop schedules."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs, ulps_for
from tirfun.testing.schedules import loop_schedules
from tirfun.testing.stages import multi_stage_programs, stage_features


# every example builds native code (about 0.1 s each): at most 120 examples
@settings(max_examples=max(1, settings().max_examples * 120 // 300))
@given(func=multi_stage_programs(), seed=st.integers(0, 2**16))
def test_stage_programs_verify_round_trip_and_compile_to_the_interpreters_results(func, seed):
    for feature in sorted(stage_features(func)):
        event(feature)
    verify(tirfun.IRModule({"main": func}))
    assert structural_equal(from_source(func.script()), func)
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(func)(*actual)
    ulps = ulps_for(func)
    for p, x, y in zip(func.params, expected, actual):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype, ulps)
        assert problem is None, problem
        if buf.dtype.is_int:
            assert np.abs(x.astype(np.int64)).max() < 2 ** 24


# float8, float4 and bfloat16 compute in wider registers and round every
# result: the same programs, fewer examples
@settings(max_examples=max(1, settings().max_examples * 25 // 300))
@given(func=multi_stage_programs(dtypes=["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "bfloat16"]),
       seed=st.integers(0, 2**16))
def test_narrow_float_stage_programs_compile_to_the_interpreters_results(func, seed):
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(func)(*actual)
    for p, x, y in zip(func.params, expected, actual):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype)
        assert problem is None, problem


@st.composite
def scheduled_integer_stages(draw):
    # integers: a schedule that reorders a reduction keeps every result exact
    mod = tirfun.IRModule({"main": draw(multi_stage_programs(dtypes=["int32", "int64"]),
                                        label="program")})
    schedule = draw(loop_schedules(mod, max_steps=6), label="schedule")
    return mod, schedule(mod)


@settings(max_examples=max(1, settings().max_examples * 100 // 300))
@given(scheduled_integer_stages())
def test_integer_stage_programs_keep_their_meaning_under_loop_schedules(pair):
    before, after = pair
    assert_equivalent(before, after, trials=1)
