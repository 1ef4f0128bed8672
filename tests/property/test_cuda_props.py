"""The CUDA build, checked without a GPU.

Random programs under random thread-bound schedules (the loop primitives
with bind; blocks the schedule leaves outside every kernel put under a
unit loop bound to blockIdx.x) are built for ``target="cuda"``; the PTX
must be accepted by NVIDIA's ``ptxas``, and the host code and kernels of
the build, run with the interpreter as the GPU, must compute what the
original program computes, bit for bit.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import tirfun
from tirfun.errors import TirfunError
from tirfun.interp import run
from tirfun.nodes import IRModule
from tirfun.testing.cuda import bind_everything, ptxas_check, ptxas_path, run_split
from tirfun.testing.equivalence import random_inputs
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules, thread_binding_problems

GPU_PRIMITIVES = ("split", "fuse", "reorder", "bind", "unroll", "vectorize")


def _copy(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def _thread_bound_module(func, data) -> IRModule:
    mod = IRModule({"main": func})
    out = data.draw(loop_schedules(mod, max_steps=4, primitives=GPU_PRIMITIVES), label="schedule")(mod)
    out = bind_everything(out)
    assume(thread_binding_problems(out["main"]) == [])
    return out


# each example builds PTX through LLVM: a third of the profile's budget
@settings(max_examples=max(settings().max_examples // 3, 20))
@given(prim_funcs(), st.data())
def test_cuda_builds_compute_what_the_program_computes(func, data):
    mod = _thread_bound_module(func, data)
    args = random_inputs(mod["main"], 1)
    expected = _copy(args)
    try:
        run(mod["main"], *expected)
    except TirfunError:
        assume(False)  # the program has no meaning on these inputs (or races)
    rt = tirfun.build(mod, target="cuda -arch=sm_80")
    got = _copy(args)
    run_split(rt, *got)
    for p, x, y in zip(mod["main"].params, expected, got):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes(), f"buffer {mod['main'].buffer_map[p].name} differs"


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (NVIDIA's PTX assembler) is not installed")
@settings(max_examples=max(settings().max_examples // 3, 20))
@given(prim_funcs(), st.data())
def test_ptx_of_random_thread_bound_schedules_is_accepted_by_ptxas(func, data):
    mod = _thread_bound_module(func, data)
    rt = tirfun.build(mod, target="cuda -arch=sm_80")
    ptxas_check(rt.get_source("ptx"), "sm_80")
