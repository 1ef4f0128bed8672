"""The CUDA build, checked without a GPU.

Random programs under random thread-bound schedules (the loop primitives
with bind; blocks the schedule leaves outside every kernel put under a
unit loop bound to blockIdx.x) are built for ``target="cuda"``; the PTX
must be accepted by NVIDIA's ``ptxas``, and the host code and kernels of
the build, run with the interpreter as the GPU, must compute what the
original program computes, bit for bit.
"""

import collections

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import tirfun
from tirfun.analysis.kernel_storage import crossing_kernel_storage
from tirfun.errors import BuildError, TirfunError
from tirfun.interp import run
from tirfun.nodes import IRModule
from tirfun.testing.cuda import bind_everything, ptxas_check, ptxas_path, run_split
from tirfun.testing.equivalence import random_inputs
from tirfun.testing._choices import DrawChooser, RandomChooser
from tirfun.testing.draw_cache import draw_cache_read, draw_cache_write
from tirfun.testing.programs import prim_funcs, random_prim_func
from tirfun.testing.schedules import loop_schedules, random_schedule, thread_binding_problems

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


# -- kernel-scope buffers across a kernel's edge ---------------------------------------

def _staged_and_bound(ch, mod: IRModule, schedule) -> IRModule | None:
    """``mod`` with a cache stage of a drawn scope, then ``schedule`` (a
    function of the module giving a pipeline), then every block left
    outside a kernel bound to one of its own: a ``shared`` or ``local``
    stage not moved into its reader's kernel now fills it from another."""
    record = ch.choice([draw_cache_read, draw_cache_write])(ch, mod)
    if record is None or record.violations(mod):
        return None
    staged = record(mod)
    return bind_everything(schedule(staged)(staged))


def _kernel_storage_refusals(mod: IRModule) -> bool:
    """Whether ``mod`` passes a kernel-scope buffer across a kernel's edge;
    asserts that the CUDA build and the interpreter both refuse it then,
    naming the buffer, and that neither gives that reason otherwise."""
    crossing = crossing_kernel_storage(mod["main"])
    try:
        tirfun.build(mod, target="cuda -arch=sm_80")
        refused = ""
    except BuildError as exc:
        refused = str(exc)
    try:
        run(mod["main"], *random_inputs(mod["main"], 1))
        stopped = ""
    except TirfunError as exc:
        stopped = str(exc)
    reason = "is allocated outside the kernels and used in"
    if crossing is None:
        assert reason not in refused and reason not in stopped, refused or stopped
        return False
    for said in (refused, stopped):
        assert f"buffer {crossing.name} of scope {crossing.scope!r} {reason}" in said, said
    return True


@settings(max_examples=max(settings().max_examples // 3, 20))
@given(prim_funcs(), st.data())
def test_the_build_refuses_the_kernel_storage_the_interpreter_refuses(func, data):
    # the interpreter gives such a program no meaning (each kernel gets its
    # own storage); the build must not give it one either
    mod = IRModule({"main": func})
    out = _staged_and_bound(DrawChooser(data.draw), mod, lambda m: data.draw(
        loop_schedules(m, max_steps=3, primitives=GPU_PRIMITIVES), label="schedule"))
    assume(out is not None)
    _kernel_storage_refusals(out)


def test_kernel_storage_across_a_kernel_edge_is_drawn_and_so_is_storage_that_stays():
    outcomes = collections.Counter()
    for seed in range(40):
        mod = IRModule({"main": random_prim_func(seed)})
        out = _staged_and_bound(RandomChooser(seed), mod, lambda m: random_schedule(
            m, seed, max_steps=3, primitives=GPU_PRIMITIVES))
        if out is not None:
            outcomes[_kernel_storage_refusals(out)] += 1
    assert outcomes[True] >= 5 and outcomes[False] >= 5, outcomes
