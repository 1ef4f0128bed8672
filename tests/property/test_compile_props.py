"""Properties of the CPU build: compiled code computes what the interpreter
computes, and no argument that does not fit ever reaches it.

Programs are random well-formed PrimFuncs (every loop kind, reductions,
predicates, scratch buffers, symbolic sizes, every expression kind) after a
random valid schedule of loop primitives (split, fuse, reorder, parallel,
vectorize, unroll, ...). Every buffer must match bit for bit, floats
included, except where a math intrinsic of ``INTRINSIC_ULPS`` is called:
then as many ulps as the widest of those needs.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun import IRModule
from tirfun.errors import ArgumentError
from tirfun.interp import run as interp_run
from tirfun.testing.equivalence import compare_arrays, random_inputs, ulps_for
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules


@st.composite
def scheduled_programs(draw):
    mod = IRModule({"main": draw(prim_funcs(), label="program")})
    schedule = draw(loop_schedules(mod, max_steps=6), label="schedule")
    return schedule(mod)


@contextlib.contextmanager
def thread_count(n: int):
    """Build with ``n`` threads for parallel loops (1: every loop serial)."""
    old = os.environ.get("TIRFUN_NUM_THREADS")
    os.environ["TIRFUN_NUM_THREADS"] = str(n)
    try:
        yield
    finally:
        if old is None:
            del os.environ["TIRFUN_NUM_THREADS"]
        else:
            os.environ["TIRFUN_NUM_THREADS"] = old


@given(mod=scheduled_programs(), threads=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_compiled_code_agrees_with_the_interpreter(mod, threads, seed):
    func = mod["main"]
    with thread_count(threads):
        rt = tirfun.build(mod)
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(func, *expected)
    rt(*actual)
    ulps = ulps_for(func)
    for p, x, y in zip(func.params, expected, actual):
        if isinstance(x, np.ndarray):
            buf = func.buffer_map[p]
            problem = compare_arrays(buf.name, x, y, buf.dtype, ulps)
            assert problem is None, problem


# each example builds a module to call it once with one wrong size: a third
# of the profile's budget (the soak draws twenty times as many)
@settings(max_examples=max(settings().max_examples // 3, 20))
@given(mod=scheduled_programs(), data=st.data())
def test_arrays_that_do_not_fit_are_refused_before_native_code(mod, data):
    func = mod["main"]
    args = random_inputs(func, np.random.default_rng(0))
    arrays = [k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim > 0]
    if not arrays:
        return
    k = data.draw(st.sampled_from(arrays), label="argument")
    a = args[k]
    dim = data.draw(st.integers(0, a.ndim - 1), label="dimension")
    shape = list(a.shape)
    shape[dim] = data.draw(st.sampled_from([s for s in (shape[dim] - 1, shape[dim] + 1) if s >= 0]),
                           label="size")
    wrong = list(args)
    wrong[k] = np.zeros(shape, a.dtype)
    before = [x.copy() if isinstance(x, np.ndarray) else x for x in wrong]
    rt = tirfun.build(mod)
    try:
        rt(*wrong)
    except ArgumentError:
        for x, y in zip(wrong, before):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)  # nothing ran
        return
    # a size that another argument does not pin down may legitimately change
    # (a symbolic size taken from this very array): then it must run as the
    # interpreter does on the same arguments
    expected = [x.copy() if isinstance(x, np.ndarray) else x for x in before]
    interp_run(func, *expected)
    for p, x, y in zip(func.params, expected, wrong):
        if isinstance(x, np.ndarray):
            buf = func.buffer_map[p]
            assert compare_arrays(buf.name, x, y, buf.dtype, ulps_for(func)) is None
