"""Cross-thread reductions lowered to an all-reduce keep their meaning.

Random row reductions (sum, integer product, max, min, argmax with ties to
the smaller index; integer and float dtypes) with the reduction loop split and one part
bound to threadIdx.x or threadIdx.y, extents of any size (parts of a warp,
several warps, none a multiple of 32), rows bound to blockIdx.x and
possibly to the other thread dimension, the result going to the output or
to a local buffer copied to it, are lowered for CUDA; the lowered
program under the interpreter's GPU semantics must give, bit for bit, the
serial program's result where any order gives the same (integers, min,
max, argmax), and the all-reduce's documented order otherwise (float sums,
modelled in numpy). ptxas must accept the PTX of random ones.
"""

import numpy as np
import pytest
from hypothesis import given, settings

import tirfun
from tirfun.interp import run
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split
from tirfun.testing.draw_allreduce import (
    expected_result, inputs, thread_reduction_module, thread_reductions,
)


def _copy(args):
    return [np.copy(a) for a in args]


# each example interprets a few hundred GPU threads: a third of the profile's budget
@settings(max_examples=max(settings().max_examples // 3, 20))
@given(thread_reductions())
def test_the_all_reduce_computes_the_reduction(spec):
    mod = thread_reduction_module(spec)
    args = inputs(spec, spec.length)
    lowered = _copy(args)
    run(tirfun.lower(mod, "cuda")["main"], *lowered)
    for got, want in zip(lowered[1:], expected_result(spec, args[0])):
        assert got.tobytes() == want.tobytes(), f"{spec}: {got} != {want}"
    if np.dtype(spec.dtype).kind != "f" or spec.reducer != "sum":
        original = _copy(args)
        run(mod["main"], *original)
        for got, want in zip(lowered[1:], original[1:]):
            assert got.tobytes() == want.tobytes()


# each example builds PTX and assembles it twice
@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (NVIDIA's PTX assembler) is not installed")
@settings(max_examples=max(settings().max_examples // 10, 10))
@given(thread_reductions())
def test_ptxas_accepts_the_all_reduce_and_the_build_runs_it(spec):
    rt = tirfun.build(thread_reduction_module(spec), target="cuda")
    for arch in ("sm_80", "sm_90"):
        # "cuda" alone means the present device's arch, or sm_80 without one
        for_arch = tirfun.build(thread_reduction_module(spec), target=f"cuda -arch={arch}")
        ptxas_check(for_arch.get_source("ptx"), arch)
    args = inputs(spec, 1)
    got = _copy(args)
    run_split(rt, *got)
    for g, want in zip(got[1:], expected_result(spec, args[0])):
        assert g.tobytes() == want.tobytes()
