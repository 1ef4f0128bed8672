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
from hypothesis import event, given, settings, strategies as st

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


@st.composite
def reductions_across_threads(draw):
    """(source, loops) of a sum over a row whose elements are spread over
    some of three loops (threadIdx.y, threadIdx.x, serial) into a local
    buffer, read by a consumer after the loops; ``loops`` holds the
    reduction's loops, outermost first: name, bound to a thread, extent."""
    kinds = [("ky", "threadIdx.y"), ("kx", "threadIdx.x"), ("ks", None)]
    extents = [draw(st.integers(1, 4), label=name) for name, _ in kinds]
    bound = [draw(st.booleans(), label=f"{name} bound") if tag else False for name, tag in kinds]
    length = extents[0] * extents[1] * extents[2]
    grid = "".join(
        f"{'    ' * k}        for {name} in "
        + (f'T.thread_binding({e}, thread="{tag}")' if b else f"range({e})") + ":\n"
        for k, ((name, tag), e, b) in enumerate(zip(kinds, extents, bound)))
    src = f'''
@T.prim_func
def main(A: T.Buffer((2, {length}), "int32"), C: T.Buffer((2, {length}), "int32")):
    B = T.alloc_buffer((2,), "int32", scope="local")
    for i in T.thread_binding(2, thread="blockIdx.x"):
{grid}                    with T.block("B"):
                        vi = T.axis.spatial(2, i)
                        vk = T.axis.reduce({length}, (ky * {extents[1]} + kx) * {extents[2]} + ks)
                        with T.init():
                            B[vi] = 0
                        B[vi] = B[vi] + A[vi, vk]
        for t in range({length}):
            with T.block("C"):
                vi, vt = T.axis.remap("SS", [i, t])
                C[vi, vt] = A[vi, vt] * B[vi]
'''
    return src, [(name, b, e) for (name, _), e, b in zip(kinds, extents, bound)]


# each example lowers and interprets two programs of up to 64 threads: a third of the budget
@settings(max_examples=max(settings().max_examples // 3, 20))
@given(reductions_across_threads(), st.data())
def test_a_consumer_placed_inside_the_threads_of_a_reduction_is_refused(case, data):
    # the consumer of a local result, moved by reverse_compute_at under a
    # loop of the reduction: under a thread loop that the reduction spans,
    # each thread holds only its part of the result (TVM places it, and its
    # lowering of the reduction then refuses it); elsewhere it keeps the
    # meaning
    import tirfun.rewrites as R
    from tirfun.errors import ScheduleError
    from tirfun.nodes import IRModule
    from tirfun.script import from_source
    from tirfun.testing.equivalence import assert_equivalent

    src, loops = case
    mod = IRModule({"main": from_source(src)})
    depth = data.draw(st.integers(0, 2), label="at")
    # the threads combine their parts as the innermost bound loop ends
    threaded = [b and e > 1 for _, b, e in loops]
    bound = [k for k, (_, b, _) in enumerate(loops) if b]
    under = any(threaded) and depth >= max(bound)
    # above a loop of several threads, the block reads their parts too
    above = any(threaded[depth + 1:])
    rewrite = R.reverse_compute_at("C", loops[depth][0])
    problems = rewrite.violations(mod)
    if problems:
        assert all(isinstance(p, ScheduleError) for p in problems)
        assert type(problems[0]) is R.ThreadOverlapError, problems[0]
        assert under or above, problems[0]
        event(f"refused {'under the reducing threads' if under else 'above them'}")
        if under and not above:
            # placed anyway, the consumer reads each thread's part
            from unittest import mock

            from tirfun.errors import InterpError
            from tirfun.testing.equivalence import NotEquivalentError

            cls = type(rewrite)
            with mock.patch.object(cls, "_check_reads_inside_cross_thread_reduction", lambda *a: None):
                placed = rewrite(mod)
            with pytest.raises((InterpError, NotEquivalentError)):
                assert_equivalent(mod["main"], placed["main"])
        return
    assert not under and not above
    event("placed")
    assert_equivalent(mod["main"], rewrite(mod)["main"])


@st.composite
def reductions_moved_under_threads(draw):
    """(source, tag, extent): a producer under loop ``i`` (bound to a
    thread tag, or serial) and, after it, a sum of what it wrote over its
    own loop ``k``; reverse_compute_at of the sum under ``i`` makes ``i``
    drive the sum's reduction variable."""
    tag = draw(st.sampled_from(["blockIdx.x", "threadIdx.x", "vthread.x", None]), label="tag of i")
    extent = draw(st.integers(1, 4), label="extent")
    loop = f'T.thread_binding({extent}, thread="{tag}")' if tag else f"range({extent})"
    src = f'''
@T.prim_func
def main(C: T.Buffer(({extent},), "int32"), P: T.Buffer(({extent},), "int32"), D: T.Buffer((), "int32")):
    for i in {loop}:
        with T.block("P"):
            vi = T.axis.spatial({extent}, i)
            P[vi] = C[vi] * 3
    for k in range({extent}):
        with T.block("D"):
            vk = T.axis.reduce({extent}, k)
            with T.init():
                D[()] = 0
            D[()] = D[()] + P[vk]
'''
    return src, tag, extent


@given(reductions_moved_under_threads())
def test_a_reduction_moved_under_a_blockidx_loop_driving_it_is_refused_exactly(case):
    # a threadIdx loop driving a reduction variable makes an all-reduce, a
    # vthread or serial loop runs its parts in turn; nothing combines the
    # parts of thread blocks, which TVM lets race on D
    from unittest import mock

    import tirfun.rewrites as R
    from tirfun.errors import InterpError
    from tirfun.nodes import IRModule
    from tirfun.rewrites import compute_location
    from tirfun.script import from_source
    from tirfun.testing.equivalence import NotEquivalentError, assert_equivalent

    src, tag, extent = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.reverse_compute_at("D", "i")
    problems = rewrite.violations(mod)
    across_blocks = tag == "blockIdx.x" and extent > 1
    if not across_blocks:
        assert not problems, problems
        event(f"placed under {tag or 'a serial loop'}")
        assert_equivalent(mod["main"], rewrite(mod)["main"])
        return
    assert problems and type(problems[0]) is R.ThreadOverlapError, problems
    assert "nothing combines the parts of thread blocks" in problems[0].summary
    event("refused under blockIdx")
    with mock.patch.object(compute_location._ComputeAtBase, "_check_threads", lambda *a: None):
        forced = rewrite(mod)
    with pytest.raises((InterpError, NotEquivalentError), match="race"):
        assert_equivalent(mod["main"], forced["main"])
