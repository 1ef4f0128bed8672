"""Cross-thread reductions for the CUDA target, checked without a GPU.

A reduction loop bound to threadIdx is lowered to an all-reduce (warp
shuffles, shared memory across warps); the lowered program, run by the
interpreter with the GPU's meaning, must compute what the original does
(integers, min/max, argmax with ties to the smaller index: bit for bit) or
what the all-reduce's documented order gives (float sums: bit for bit
against a numpy model of that order), and ptxas must accept its PTX.
"""

import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError, InterpError
from tirfun.interp import run
from tirfun.lower.allreduce import allreduce_order, tree_order
from tirfun.script import from_source
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split
from tirfun.testing.draw_allreduce import (
    ThreadReduction, expected_result, inputs, thread_reduction_module,
)

needs_ptxas = pytest.mark.skipif(ptxas_path() is None,
                                 reason="ptxas (NVIDIA's PTX assembler) is not installed")


def _copy(args):
    return [np.copy(a) for a in args]


def _lowered(mod):
    return tirfun.lower(mod, "cuda")["main"]


# -- the order ------------------------------------------------------------------

def test_tree_order_combines_lanes_offset_halves_apart():
    seen = tree_order(list("abcdefg"), lambda x, y: f"({x}{y})")
    # P = 8: offsets 4, 2, 1; lane 3 has no partner at offset 4
    assert seen == "(((ae)(cg))((bf)d))"
    assert tree_order(["a"], lambda x, y: x + y) == "a"


def test_allreduce_order_reduces_chunks_of_a_warp_then_the_chunks():
    parts = [str(i % 10) for i in range(40)]
    got = allreduce_order(parts, lambda x, y: f"({x}{y})")
    first = tree_order(parts[:32], lambda x, y: f"({x}{y})")
    second = tree_order(parts[32:], lambda x, y: f"({x}{y})")
    assert got == f"({first}{second})"


# -- the shapes of the all-reduce -------------------------------------------------

# (threads, inner split, threads of the rows, dimension reduced): one shape per
# path of the lowering: one warp, part of a warp (not a power of two), segments
# of a warp, several warps (two stages), shared memory (groups straddling
# warps, or reduction threads that are not consecutive lanes)
SHAPES = [
    (32, True, 1, "x"),
    (25, True, 1, "x"),
    (8, False, 4, "x"),
    (128, True, 1, "x"),
    (100, False, 1, "x"),
    (64, True, 3, "x"),
    (24, True, 4, "x"),
    (16, True, 2, "y"),
]


@pytest.mark.parametrize("threads,inner,row_threads,on", SHAPES)
@pytest.mark.parametrize("reducer,dtype", [("sum", "int32"), ("sum", "float32"),
                                           ("argmax", "int32"), ("min", "float64"),
                                           ("sum", "int64")])
def test_the_lowered_reduction_computes_the_reduction(threads, inner, row_threads, on, reducer,
                                                      dtype):
    spec = ThreadReduction(reducer, dtype, 5, 2 * threads + 3, threads, inner, row_threads, on)
    mod = thread_reduction_module(spec)
    args = inputs(spec, threads)
    original, lowered = _copy(args), _copy(args)
    run(mod["main"], *original)
    run(_lowered(mod), *lowered)
    for got, want in zip(lowered[1:], expected_result(spec, args[0])):
        assert got.tobytes() == want.tobytes()
    if reducer != "sum" or dtype not in ("float32", "float64"):
        # any order gives these bits: the serial program's result
        for got, want in zip(lowered[1:], original[1:]):
            assert got.tobytes() == want.tobytes()
    else:
        np.testing.assert_allclose(lowered[1], original[1], rtol=1e-4,
                                   atol=1e-4 * np.abs(args[0]).sum())


@needs_ptxas
@pytest.mark.parametrize("threads,inner,row_threads,on", SHAPES)
def test_ptxas_accepts_the_all_reduce_and_the_build_computes_it(threads, inner, row_threads, on):
    for reducer, dtype in (("argmax", "float32"), ("sum", "float64")):
        spec = ThreadReduction(reducer, dtype, 3, threads + 5, threads, inner, row_threads, on)
        rt = tirfun.build(thread_reduction_module(spec), target="cuda")
        for arch in ("sm_80", "sm_90"):
            # "cuda" alone means the present device's arch, or sm_80 without one
            for_arch = tirfun.build(thread_reduction_module(spec), target=f"cuda -arch={arch}")
            ptxas_check(for_arch.get_source("ptx"), arch)
        args = inputs(spec, 7)
        got = _copy(args)
        run_split(rt, *got)
        for g, want in zip(got[1:], expected_result(spec, args[0])):
            assert g.tobytes() == want.tobytes()


def test_the_warp_path_shuffles_and_broadcasts_and_the_first_thread_writes():
    spec = ThreadReduction("sum", "float32", 2, 70, 32, True)
    text = tirfun.lower(thread_reduction_module(spec), "cuda").script()
    assert text.count("T.tvm_warp_shuffle_down(") == 5
    assert "T.tvm_warp_shuffle(T.uint32(4294967295), red_buf0[0], 0, 32, 32)" in text
    assert "if k_1 == 0:\n                    O[i] = red_buf0[0]" in text
    assert "T.tvm_storage_sync" not in text
    ptx = tirfun.build(thread_reduction_module(spec), target="cuda").get_source("ptx")
    assert "shfl.sync.down.b32" in ptx and "shfl.sync.idx.b32" in ptx


def test_a_partial_warp_shuffles_with_the_mask_of_its_lanes():
    spec = ThreadReduction("sum", "int32", 1, 25, 25, True)
    text = tirfun.lower(thread_reduction_module(spec), "cuda").script()
    assert f"T.uint32({(1 << 25) - 1})" in text
    assert "T.Select(k_1 + 16 < 25, 16, 0)" in text


def test_several_warps_meet_in_shared_memory():
    spec = ThreadReduction("sum", "int32", 1, 256, 128, True)
    text = tirfun.lower(thread_reduction_module(spec), "cuda").script()
    assert 'red_stage0 = T.decl_buffer((4,), "int32", data=red_stage0_data, scope="shared")' in text
    assert text.count('T.tvm_storage_sync("shared")') == 2


def test_groups_that_straddle_warps_reduce_in_shared_memory():
    spec = ThreadReduction("sum", "int32", 4, 24, 24, True, 4)
    text = tirfun.lower(thread_reduction_module(spec), "cuda").script()
    assert "tvm_warp_shuffle" not in text
    assert 'scope="shared"' in text


# -- programs as TVM users write them ----------------------------------------------

SOFTMAX = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 100), "float32"), T_softmax_norm: T.Buffer((4, 100), "float32")):
    T_softmax_maxelem_shared = T.alloc_buffer((4,), "float32", scope="shared")
    T_softmax_expsum_shared = T.alloc_buffer((4,), "float32", scope="shared")
    for i0 in T.thread_binding(4, thread="blockIdx.x"):
        for ax0_0 in range(4):
            for ax0_1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("T_softmax_maxelem"):
                    i0_1 = T.axis.spatial(4, i0)
                    k = T.axis.reduce(100, ax0_0 * 32 + ax0_1)
                    T.where(ax0_0 * 32 + ax0_1 < 100)
                    with T.init():
                        T_softmax_maxelem_shared[i0_1] = T.min_value("float32")
                    T_softmax_maxelem_shared[i0_1] = T.max(T_softmax_maxelem_shared[i0_1], A[i0_1, k])
        for ax0_0 in range(4):
            for ax0_1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("T_softmax_expsum"):
                    i0_2 = T.axis.spatial(4, i0)
                    k = T.axis.reduce(100, ax0_0 * 32 + ax0_1)
                    T.where(ax0_0 * 32 + ax0_1 < 100)
                    with T.init():
                        T_softmax_expsum_shared[i0_2] = T.float32(0)
                    T_softmax_expsum_shared[i0_2] = T_softmax_expsum_shared[i0_2] + T.exp(A[i0_2, k] - T_softmax_maxelem_shared[i0_2])
        for i1_0 in range(4):
            for i1_1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("T_softmax_norm"):
                    i0_3 = T.axis.spatial(4, i0)
                    i1 = T.axis.spatial(100, i1_0 * 32 + i1_1)
                    T.where(i1_0 * 32 + i1_1 < 100)
                    T_softmax_norm[i0_3, i1] = T.exp(A[i0_3, i1] - T_softmax_maxelem_shared[i0_3]) / T_softmax_expsum_shared[i0_3]
'''


def softmax_inputs():
    a = np.random.default_rng(3).standard_normal((4, 100)).astype("float32") * 4
    return a, np.zeros((4, 100), "float32")


def test_the_softmax_with_thread_bound_reductions_as_tvm_schedules_it():
    mod = from_source(SOFTMAX)
    a, out = softmax_inputs()
    original, lowered = np.copy(out), np.copy(out)
    run(mod, a, original)
    run(_lowered(mod), a, lowered)
    want = np.exp(a - a.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(lowered, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(lowered, original, rtol=1e-5, atol=1e-7)
    text = tirfun.lower(mod, "cuda").script()
    # the second reduction reads the first one's result, written by one thread
    assert text.count("T.tvm_warp_shuffle_down(") == 10


@needs_ptxas
def test_the_softmax_builds_and_the_build_runs_as_the_lowered_program():
    from tirfun.lower.nvptx_codegen import find_libdevice

    if find_libdevice() is None:
        pytest.skip("libdevice (for exp) is not installed")
    mod = from_source(SOFTMAX)
    rt = tirfun.build(mod, target="cuda")
    for arch in ("sm_80", "sm_90"):
        # "cuda" alone means the present device's arch, or sm_80 without one
        ptxas_check(tirfun.build(mod, target=f"cuda -arch={arch}").get_source("ptx"), arch)
    a, out = softmax_inputs()
    split, lowered = np.copy(out), np.copy(out)
    run_split(rt, a, split)
    run(_lowered(mod), a, lowered)
    assert split.tobytes() == lowered.tobytes()


def test_a_row_sum_from_te_with_the_reduction_bound_to_threads():
    from tirfun import te

    A = te.placeholder((6, 200), "float32", name="A")
    k = te.reduce_axis((0, 200), name="k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = tirfun.Schedule(tirfun.IRModule({"main": te.create_prim_func([A, B])}))
    i, kk = sch.get_loops(sch.get_block("B"))
    _, ki = sch.split(kk, factors=[None, 64])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")
    rt = tirfun.build(sch.mod, target="cuda")
    a = np.random.default_rng(0).standard_normal((6, 200)).astype("float32")
    b = np.zeros(6, "float32")
    run_split(rt, a, b)
    spec = ThreadReduction("sum", "float32", 6, 200, 64, True)
    assert b.tobytes() == expected_result(spec, a)[0].tobytes()


def test_a_local_output_gets_the_result_in_every_thread():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((2, 40), "int32"), C: T.Buffer((2, 40), "int32")):
    B = T.alloc_buffer((2,), "int32", scope="local")
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for k in T.thread_binding(40, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        for t in T.thread_binding(40, thread="threadIdx.x"):
            with T.block("C"):
                vi, vt = T.axis.remap("SS", [i, t])
                C[vi, vt] = A[vi, vt] * B[vi]
'''
    mod = from_source(src)
    a = np.arange(80, dtype="int32").reshape(2, 40) - 30
    c = np.zeros((2, 40), "int32")
    run(_lowered(mod), a, c)
    np.testing.assert_array_equal(c, a * a.sum(axis=1, keepdims=True))
    assert "if k == 0" not in tirfun.lower(mod, "cuda").script()


# -- refusals ----------------------------------------------------------------------

def _reduction(loops: str, where: str = "", init: str = "B[vi] = 0",
               update: str = "B[vi] = B[vi] + A[vi, vk]", vk: str = "k") -> str:
    return f'''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 64), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
{loops}
            with T.block("sum"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(64, {vk})
                {where}
                with T.init():
                    {init}
                {update}
'''


ONE_LOOP = "        for k in T.thread_binding(64, thread=\"threadIdx.x\"):"


def test_a_combiner_no_reducer_matches_is_refused():
    src = _reduction(ONE_LOOP, update="B[vi] = B[vi] * 2 + A[vi, vk]")
    with pytest.raises(BuildError, match=r"block sum reduces across threads, but the "
                                         r"identities and the combiner .* match no known reducer"):
        tirfun.build(from_source(src), target="cuda")


def test_a_predicate_that_may_skip_the_first_iteration_is_refused():
    src = _reduction(ONE_LOOP, where="T.where(k >= 1)")
    with pytest.raises(BuildError, match=r"block sum reduces across threads, but its predicate "
                                         r"k >= 1 may exclude the first reduction iteration"):
        tirfun.build(from_source(src), target="cuda")


def test_a_reduction_variable_that_does_not_start_at_its_domain_is_refused():
    src = _reduction(ONE_LOOP.replace("64", "32"), vk="k + 1")
    with pytest.raises(BuildError, match=r"its reduction variable vk does not start at 0"):
        tirfun.build(from_source(src), target="cuda")


def test_threads_that_no_loop_around_the_reduction_binds_are_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4, 8), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        for j in T.thread_binding(8, thread="threadIdx.y"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = 1
'''
    with pytest.raises(BuildError, match=r"the kernel's threads along threadIdx.y \(8 of them\) "
                                         r"each run the reduction"):
        tirfun.build(from_source(src), target="cuda")


def test_a_reduction_beside_another_statement_under_its_loops_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4, 32), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = A[vi, vk]
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
'''
    with pytest.raises(BuildError, match=r"it is not the only statement under its reduction loops"):
        tirfun.build(from_source(src), target="cuda")


# -- warp shuffles in the interpreter ------------------------------------------------

def _shuffle_program(mask: str, offset: str = "1", threads: int = 32) -> str:
    return f'''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({threads},), "int32"), B: T.Buffer(({threads},), "int32")):
    for tx in T.thread_binding({threads}, thread="threadIdx.x"):
        L = T.decl_buffer((1,), "int32", scope="local")
        L[0] = T.tvm_warp_shuffle_down({mask}, A[tx], {offset}, 32, 32)
        B[tx] = L[0]
'''


def test_a_shuffle_down_reads_the_lane_below_and_its_own_past_the_warp():
    a = np.arange(32, dtype="int32") * 3
    b = np.zeros(32, "int32")
    run(from_source(_shuffle_program("T.uint32(4294967295)", "4")), a, b)
    np.testing.assert_array_equal(b, np.concatenate([a[4:], a[28:]]))


def test_a_shuffle_whose_mask_names_missing_lanes_is_an_error():
    with pytest.raises(InterpError, match=r"mask 0xffffffff names lane 8, which its warp does "
                                          r"not have \(the block has 8 threads\)"):
        run(from_source(_shuffle_program("T.uint32(4294967295)", threads=8)),
            np.zeros(8, "int32"), np.zeros(8, "int32"))


def test_a_shuffle_reading_a_lane_outside_its_mask_is_an_error():
    with pytest.raises(InterpError, match=r"thread \(threadIdx.x=7\) reads lane 8 in a warp "
                                          r"shuffle, outside the mask 0x000000ff"):
        run(from_source(_shuffle_program("T.uint32(255)", threads=8)),
            np.zeros(8, "int32"), np.zeros(8, "int32"))


def test_a_shuffle_in_divergent_control_flow_is_an_error():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "int32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        L = T.decl_buffer((1,), "int32", scope="local")
        if tx < 16:
            L[0] = T.tvm_warp_shuffle_down(T.uint32(4294967295), A[tx], 1, 32, 32)
        B[tx] = L[0]
'''
    with pytest.raises(InterpError, match=r"warp shuffle in divergent control flow: thread "
                                          r"\(threadIdx.x=0\) waits at"):
        run(from_source(src), np.zeros(32, "int32"), np.zeros(32, "int32"))


def test_a_reduction_over_a_launched_thread_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    tx = T.launch_thread("threadIdx.x", 32)
    with T.block("sum"):
        vk = T.axis.reduce(32, tx)
        with T.init():
            B[0] = T.float32(0)
        B[0] = B[0] + A[vk]
'''
    with pytest.raises(BuildError, match=r"block sum reduces across threads, but its reduction "
                                         r"variable comes from T.launch_thread\(\"threadIdx.x\"\)"):
        tirfun.build(from_source(src), target="cuda")


def test_a_cross_thread_reduction_inside_virtual_threads_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 32), "int32"), B: T.Buffer((8,), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for v in T.thread_binding(2, thread="vthread.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("sum"):
                    vi = T.axis.spatial(8, i * 2 + v)
                    vk = T.axis.reduce(32, k)
                    with T.init():
                        B[vi] = 0
                    B[vi] = B[vi] + A[vi, vk]
'''
    with pytest.raises(BuildError, match=r"it lies inside a loop bound to vthread.x; virtual "
                                         r"threads run one after another"):
        tirfun.build(from_source(src), target="cuda")


@needs_ptxas
@pytest.mark.parametrize("dtype,update,init", [
    ("float16", "O[vi] + A[vi, vk]", "T.float16(0)"),
    ("bfloat16", "O[vi] + A[vi, vk]", "T.bfloat16(0)"),
    ("int8", "T.max(O[vi], A[vi, vk])", 'T.min_value("int8")')])
def test_narrow_values_shuffle_through_32_bits(dtype, update, init):
    src = f'''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((3, 40), "{dtype}"), O: T.Buffer((3,), "{dtype}")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        for k in T.thread_binding(40, thread="threadIdx.x"):
            with T.block("O"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    O[vi] = {init}
                O[vi] = {update}
'''
    mod = from_source(src)
    rt = tirfun.build(mod, target="cuda")
    for arch in ("sm_80", "sm_90"):
        # "cuda" alone means the present device's arch, or sm_80 without one
        ptxas_check(tirfun.build(mod, target=f"cuda -arch={arch}").get_source("ptx"), arch)
    a = np.random.default_rng(5).integers(-8, 8, (3, 40)).astype("float32")
    if dtype == "int8":
        a = a.astype("int8")
        want = a.max(axis=1)
    else:
        import ml_dtypes

        a = a.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else "float16")
        want = a.astype("float64").sum(axis=1).astype(a.dtype)  # small integers: exact sums
    got = np.zeros(3, a.dtype)
    run_split(rt, a, got)
    assert got.tobytes() == want.tobytes()


def test_a_cross_thread_reduction_under_a_thread_dependent_condition_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(2, thread="threadIdx.y"):
            if j == 0:
                for k in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("sum"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        with T.init():
                            B[vi] = 0
                        B[vi] = B[vi] + A[vi, vk]
'''
    with pytest.raises(BuildError, match=r"a condition or loop around it depends on the thread "
                                         r"index(?s:.*)if j == 0:"):
        tirfun.build(from_source(src), target="cuda")
