"""The CUDA target without a GPU: targets, lowering, barriers, PTX, errors."""

import numpy as np
import pytest

import tirfun
from tirfun.errors import ArgumentError, BuildError, InterpError, TirfunError
from tirfun.interp import run
from tirfun.lower.cuda import lower_cuda
from tirfun.target import DEFAULT_CUDA_ARCH, Target
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split
from tirfun.testing.equivalence import compare_arrays

needs_ptxas = pytest.mark.skipif(ptxas_path() is None,
                                 reason="ptxas (NVIDIA's PTX assembler) is not installed")

VECTOR_ADD = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
'''

# every thread of a block writes one element of S, then reads another's:
# the barrier between the two loops is what lowering must add
REVERSE = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64, 16), "float32")):
    S = T.alloc_buffer((16,), "float32", scope="shared")
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("load"):
                vb, vt = T.axis.remap("SS", [bx, tx])
                S[vt] = A[vb, vt] * T.float32(2)
        for tx2 in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("store"):
                vb, vt = T.axis.remap("SS", [bx, tx2])
                B[vb, vt] = S[15 - vt] + T.float32(1)
'''


def parse(text):
    return tirfun.script.from_source(text)


def seed_schedule():
    sch = tirfun.Schedule(parse(VECTOR_ADD))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1, i2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i0, i2, i1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(i2, "threadIdx.x")
    return sch.mod


# -- targets --------------------------------------------------------------------

@pytest.mark.parametrize("text, arch, shown", [
    ("cuda", "", "cuda"),
    ("cuda -arch=sm_90", "sm_90", "cuda -arch=sm_90"),
    ("nvidia/nvidia-h100", "sm_90", "nvidia/nvidia-h100"),
    ("nvidia/nvidia-a100", "sm_80", "nvidia/nvidia-a100"),
    ("cuda -arch=sm_80 -max_shared_memory_per_block=98304", "sm_80",
     "cuda -arch=sm_80 -max_shared_memory_per_block=98304"),
])
def test_cuda_targets_parse_and_print(text, arch, shown):
    t = Target(text)
    assert (t.kind, t.arch, str(t)) == ("cuda", arch, shown)
    assert t.triple == "nvptx64-nvidia-cuda" and t.keys == ("cuda", "gpu")
    assert Target(str(t)) == t
    assert t.max_threads_per_block == 1024 and t.thread_warp_size == 32


def test_target_is_public_below_lower_and_runtime():
    from tirfun.runtime import target as runtime_target

    assert tirfun.target.Target is Target is tirfun.Target is runtime_target.Target
    assert Target("cuda").max_shared_memory_per_block == 48 * 1024
    assert Target("cuda").with_arch("sm_86").arch == "sm_86"
    assert Target(kind="cuda", arch="sm_75").arch == "sm_75"
    assert Target("llvm").arch == ""


@pytest.mark.parametrize("text, message", [
    ("cuda -arch=gfx90a", "-arch is a compute capability such as sm_80"),
    ("nvidia/no-such-gpu", "unknown target tag 'nvidia/no-such-gpu'"),
    ("cuda -num-cores=4", "unknown option -num-cores"),
    ("cuda -max_threads_per_block=0", "-max_threads_per_block is a positive integer"),
])
def test_bad_cuda_targets(text, message):
    with pytest.raises(BuildError, match=message):
        Target(text)


# -- the seed's vector add ---------------------------------------------------------

def test_seed_vector_add_builds_to_ptx_without_a_gpu():
    rt = tirfun.build(seed_schedule(), target="cuda")
    assert rt.target.arch  # resolved: the device's, or the default
    ptx = rt.get_source("ptx")
    assert ".entry main_kernel(" in ptx and "%tid.x" in ptx and "%ctaid.x" in ptx
    assert f".target {rt.target.arch}" in ptx
    assert "define ptx_kernel void @main_kernel(ptr addrspace(1)" in rt.get_source("ll")
    (kernel,) = rt.kernels
    assert [str(d) for d in kernel.grid] == ["2", "1", "1"]
    assert [str(d) for d in kernel.block] == ["2", "1", "1"]
    tir = rt.get_source("tir")
    assert 'T.call_packed("main_kernel", A_handle, B_handle, 2, 1, 1, 2, 1, 1)' in tir
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, dtype="float32")
    assert run_split(rt, a, b) == [("main_kernel", (2, 1, 1), (2, 1, 1))]
    np.testing.assert_array_equal(b, a + np.float32(1))


def test_default_arch_without_a_device(monkeypatch):
    from tirfun.runtime import cuda_driver

    monkeypatch.setattr(cuda_driver, "device_arch", lambda index=0: None)
    rt = tirfun.build(seed_schedule(), target="cuda")
    assert rt.target.arch == DEFAULT_CUDA_ARCH == "sm_80"
    assert tirfun.build(seed_schedule(), target="cuda -arch=sm_90").target.arch == "sm_90"


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_seed_ptx_is_accepted_by_ptxas(arch):
    rt = tirfun.build(seed_schedule(), target=f"cuda -arch={arch}")
    ptxas_check(rt.get_source("ptx"), arch)


# -- barriers -------------------------------------------------------------------

def test_lowering_places_the_barrier_that_shared_memory_needs():
    mod = tirfun.IRModule({"main": parse(REVERSE)})
    a = np.random.default_rng(0).standard_normal((64, 16)).astype("float32")
    with pytest.raises(InterpError, match="data race on buffer S"):
        run(mod["main"], a, np.zeros_like(a))  # as written: no barrier
    lowered = lower_cuda(mod, Target("cuda"))
    text = lowered.script()
    assert text.count('T.tvm_storage_sync("shared")') == 1
    # the shared buffer is allocated inside the kernel, one per block
    assert text.index("T.thread_binding(64") < text.index('T.allocate([16], "float32", "shared")')
    b = np.zeros_like(a)
    run(lowered["main"], a, b)
    np.testing.assert_array_equal(b, (a * np.float32(2))[:, ::-1] + np.float32(1))
    rt = tirfun.build(mod, target="cuda")
    assert "bar.sync" in rt.get_source("ptx") and ".shared" in rt.get_source("ptx")
    b = np.zeros_like(a)
    run_split(rt, a, b)
    np.testing.assert_array_equal(b, (a * np.float32(2))[:, ::-1] + np.float32(1))


def test_a_missing_barrier_is_caught():
    # the same lowering without barrier insertion: the interpreter reports the race
    lowered = lower_cuda(tirfun.IRModule({"main": parse(REVERSE)}), Target("cuda"), sync=False)
    a = np.ones((64, 16), "float32")
    with pytest.raises(InterpError, match=r"data race on buffer S at index \(\d+,\).*threadIdx.x"):
        run(lowered["main"], a, np.zeros_like(a))


LOOP_CARRIED = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx] = T.float32(0)
        for k in range(4):
            S[tx] = A[k, tx]
            B[tx] = B[tx] + S[31 - tx]
'''


def test_a_loop_carried_conflict_gets_a_barrier_at_the_start_of_each_iteration():
    func = parse(LOOP_CARRIED)
    lowered = lower_cuda(tirfun.IRModule({"main": func}), Target("cuda"))
    text = lowered.script()
    assert text.count('T.tvm_storage_sync("shared")') == 2, text
    a = np.random.default_rng(1).standard_normal((4, 32)).astype("float32")
    b = np.zeros(32, "float32")
    run(lowered["main"], a, b)
    expected = np.zeros(32, "float32")
    for k in range(4):
        expected = expected + a[k, ::-1]
    np.testing.assert_array_equal(b, expected)


WRONG_BINDING = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for u in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = VALUE
'''


def test_a_wrong_binding_is_a_race():
    # every thread of threadIdx.x adds A into B[i]: each reads B[i] while
    # another thread changes it
    func = parse(WRONG_BINDING.replace("VALUE", "B[vi] + A[vi]"))
    with pytest.raises(InterpError, match="data race on buffer B"):
        run(func, np.ones(8, "float32"), np.zeros(8, "float32"))
    # threads that all store the same bits do not race: every order agrees
    b = np.zeros(8, "float32")
    run(parse(WRONG_BINDING.replace("VALUE", "A[vi] + T.float32(1)")), np.ones(8, "float32"), b)
    np.testing.assert_array_equal(b, np.full(8, 2, "float32"))


# -- build errors -------------------------------------------------------------------

def test_a_loop_outside_any_kernel_that_writes_memory():
    with pytest.raises(BuildError, match=r"(?s)block B writes memory outside any kernel.*"
                                         r"Bind its loops to blockIdx/threadIdx.*for i in range\(8\)"):
        tirfun.build(parse(VECTOR_ADD), target="cuda")


def test_too_many_threads_per_block():
    sch = tirfun.Schedule(parse(VECTOR_ADD.replace("8", "2048")))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "threadIdx.x")
    with pytest.raises(BuildError, match=r"(?s)a kernel of 2048 threads per block \(2048\); "
                                         r"cuda -arch=sm_\d+ allows at most 1024.*T.thread_binding\(2048"):
        tirfun.build(sch.mod, target="cuda")
    with pytest.raises(BuildError, match="a kernel of 2048 threads per block"):
        tirfun.build(sch.mod, target="cuda -max_threads_per_block=512")


def test_shared_memory_over_the_limit():
    # the threads' elements 1024 apart: compaction keeps the whole span
    big = (REVERSE.replace("(16,), \"float32\", scope", "(16384,), \"float32\", scope")
           .replace("S[vt] =", "S[vt * 1024] =").replace("S[15 - vt]", "S[(15 - vt) * 1024]"))
    mod = parse(big)
    with pytest.raises(BuildError, match=r"(?s)a kernel uses 61444 bytes of shared memory "
                                         r"\(S_data \(61444 bytes\)\); cuda -arch=sm_\d+ allows 49152 per block"
                                         r".*-max_shared_memory_per_block.*thread_binding\(64"):
        tirfun.build(mod, target="cuda")
    # where the device allows more, it is dynamic shared memory, sized at launch
    rt = tirfun.build(mod, target="cuda -max_shared_memory_per_block=98304")
    assert ".extern .shared .align 16 .b8 main_kernel_shared[]" in rt.get_source("ptx")
    assert dict(rt.dynamic_shared) == {"main_kernel": 61456}  # rounded up to 16 bytes
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)
    a = np.random.default_rng(0).standard_normal((64, 16)).astype("float32")
    b = np.zeros_like(a)
    run_split(rt, a, b)
    np.testing.assert_array_equal(b, (a * np.float32(2))[:, ::-1] + np.float32(1))
    small = tirfun.build(parse(REVERSE), target="cuda")
    assert dict(small.dynamic_shared) == {} and ".extern" not in small.get_source("ptx")


def test_loops_bound_to_one_tag_must_agree():
    text = REVERSE.replace('for tx2 in T.thread_binding(16, thread="threadIdx.x")',
                           'for tx2 in T.thread_binding(8, thread="threadIdx.x")')
    with pytest.raises(BuildError, match=r"(?s)loops bound to threadIdx.x in one kernel must have "
                                         r"the same extent, but 16 and 8 differ.*thread_binding"):
        tirfun.build(parse(text), target="cuda")


def test_an_unknown_thread_tag():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    tx = T.launch_thread("warpIdx.x", 8)
    A[tx] = T.float32(1)
'''
    with pytest.raises(BuildError, match=r"(?s)unknown thread tag 'warpIdx.x'; CUDA knows "
                                         r"blockIdx.x.*T.launch_thread\(\"warpIdx.x\", 8\)"):
        tirfun.build(parse(src), target="cuda")


def test_a_cross_thread_reduction_whose_loops_are_not_innermost_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for k in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(4):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
'''
    with pytest.raises(BuildError, match=r"block sum reduces across threads, but the loops that "
                       r"feed its reduction variables are not the innermost loops around it: "
                       r"loop i lies between them"):
        tirfun.build(parse(src), target="cuda")


# -- code generation ----------------------------------------------------------------

VECTORIZED_EXP = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for bx in T.thread_binding(32, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for v in T.vectorized(4):
                with T.block("B"):
                    vi = T.axis.spatial(1024, bx * 32 + tx * 4 + v)
                    B[vi] = T.exp(A[vi]) + T.float32(1)
'''


def test_vectorized_loops_load_and_store_vectors_and_math_comes_from_libdevice():
    from tirfun.lower.nvptx_codegen import find_libdevice

    if find_libdevice() is None:
        with pytest.raises(BuildError, match="no libdevice.10.bc was found"):
            tirfun.build(parse(VECTORIZED_EXP), target="cuda")
        return
    rt = tirfun.build(parse(VECTORIZED_EXP), target="cuda")
    ptx = rt.get_source("ptx")
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx
    assert "__nv_exp" not in ptx  # linked and inlined: nothing left to resolve
    a = np.linspace(-3, 3, 1024, dtype="float32")
    b = np.zeros(1024, "float32")
    run_split(rt, a, b)
    np.testing.assert_allclose(b, np.exp(a.astype("float64")).astype("float32") + 1, rtol=1e-6)
    if ptxas_path() is not None:
        ptxas_check(ptx, rt.target.arch)


FMOD = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "DT"), B: T.Buffer((16,), "DT"), C: T.Buffer((16,), "DT"),
         D: T.Buffer((16,), "DT")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for v in T.vectorized(2):
            with T.block("C"):
                vi = T.axis.spatial(16, tx * 2 + v)
                C[vi] = T.fmod(A[vi], B[vi])
                D[vi] = T.truncmod(A[vi], B[vi])
'''


def fmod_inputs(dtype: str):
    """Remainders LLVM's NVPTX expansion of frem gets wrong: quotients past the
    format's precision, zeros that keep the sign of x, infinities, NaN."""
    from tirfun.numpy_dtypes import numpy_dtype

    big = float(np.finfo(numpy_dtype(dtype)).max)
    inf, nan = float("inf"), float("nan")
    x = [big, -big, -6.0, -0.0, inf, -inf, nan, 5.5, 7.0, 1.0, -big, 3.0, 0.5, -7.25, big, 100.0]
    y = [3.0, 0.75, 3.0, 2.0, inf, 2.0, 1.0, inf, 0.0, nan, -inf, -2.0, 0.1, 0.5, 1e-3, -3.0]
    t = numpy_dtype(dtype)
    return np.array(x).astype(t), np.array(y).astype(t)


def expected_fmod(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.fmod(a.astype("float64"), b.astype("float64")).astype(a.dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_fmod_calls_libdevice_and_not_the_inexact_frem_expansion(dtype):
    from tirfun.lower.nvptx_codegen import find_libdevice

    if find_libdevice() is None:
        pytest.skip("libdevice (for fmod) is not installed")
    rt = tirfun.build(parse(FMOD.replace("DT", dtype)), target="cuda -arch=sm_90")
    ll = rt.get_source("ll")
    assert "frem" not in ll and ("__nv_fmod" if dtype == "float64" else "__nv_fmodf") in ll
    a, b = fmod_inputs(dtype)
    c, d = np.zeros_like(a), np.zeros_like(a)
    run_split(rt, a, b, c, d)
    want = expected_fmod(a, b)
    # bit for bit, any NaN agreeing with any NaN (C leaves its sign open)
    assert compare_arrays("C", want, c, dtype) is None
    assert compare_arrays("D", want, d, dtype) is None
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), "sm_90")


def test_launch_dimensions_past_cudas_limits_are_build_errors():
    # found on a GPU: the driver refused a block of (1, 1, 72) threads
    src = VECTOR_ADD.replace("8", "72")
    sch = tirfun.Schedule(parse(src))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "threadIdx.z")
    with pytest.raises(BuildError, match=r"(?s)72 is more than the 64 a CUDA launch allows for "
                                         r"threadIdx.z.*T.thread_binding\(72"):
        tirfun.build(sch.mod, target="cuda")
    sch = tirfun.Schedule(parse(src.replace("72", "70000")))
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.y")
    with pytest.raises(BuildError, match="70000 is more than the 65535 a CUDA launch allows for blockIdx.y"):
        tirfun.build(sch.mod, target="cuda")


def test_without_libdevice_math_is_a_clear_build_error(monkeypatch):
    monkeypatch.setenv("TIRFUN_LIBDEVICE", "/no/such/libdevice.10.bc")
    tirfun.runtime.clear_cache()
    with pytest.raises(BuildError, match=r"calls __nv_exp, which the CUDA build takes from "
                                         r"CUDA's libdevice, and no libdevice.10.bc was found"):
        tirfun.build(parse(VECTORIZED_EXP), target="cuda -arch=sm_86")
    tirfun.runtime.clear_cache()


# -- the runtime without a GPU ------------------------------------------------------

def _has_gpu() -> bool:
    try:
        tirfun.cuda(0)
    except TirfunError:
        return False
    return True


def test_without_a_gpu_the_build_is_readable_and_the_call_says_why_it_cannot_run():
    if _has_gpu():
        pytest.skip("a GPU is present")
    rt = tirfun.build(seed_schedule(), target="cuda")
    with pytest.raises(ArgumentError, match=r"parameter A: the array is on the host \(numpy\), "
                                            r"the function runs on a GPU"):
        rt(np.zeros(8, "float32"), np.zeros(8, "float32"))
    with pytest.raises(TirfunError, match="cuda-python|driver|GPU"):
        tirfun.nd.array(np.zeros(8, "float32"), tirfun.runtime.Device("cuda", 0))
    with pytest.raises(TirfunError, match="cuda-python|driver|GPU"):
        tirfun.cuda(0)
    with pytest.raises(ArgumentError, match="a CUDA module is timed on a GPU"):
        rt.time_evaluator("main", tirfun.cpu(0))


# a shared-memory tiled matmul written by hand: each block stages a tile of A
# and of B in shared memory per step of k; lowering must put a barrier between
# the loads and the products, and one before the next step's loads
TILED_MATMUL = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
         C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    As = T.alloc_buffer((16, 16), "float32", scope="shared")
    Bs = T.alloc_buffer((16, 16), "float32", scope="shared")
    acc = T.alloc_buffer((1,), "float32", scope="local")
    for by in T.thread_binding(4, thread="blockIdx.y"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    acc[0] = T.float32(0)
            for ko in range(4):
                for ty in T.thread_binding(16, thread="threadIdx.y"):
                    for tx in T.thread_binding(16, thread="threadIdx.x"):
                        As[ty, tx] = A[by * 16 + ty, ko * 16 + tx]
                        Bs[ty, tx] = B[ko * 16 + ty, bx * 16 + tx]
                for ty in T.thread_binding(16, thread="threadIdx.y"):
                    for tx in T.thread_binding(16, thread="threadIdx.x"):
                        for ki in range(16):
                            acc[0] = acc[0] + As[ty, ki] * Bs[ki, tx]
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    C[by * 16 + ty, bx * 16 + tx] = acc[0]
'''


def matmul_inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((64, 64)).astype("float32"),
            rng.standard_normal((64, 64)).astype("float32"))


def test_a_shared_memory_tiled_matmul_gets_its_barriers_and_computes_the_product():
    func = parse(TILED_MATMUL)
    a, b = matmul_inputs()
    with pytest.raises(InterpError, match="data race on buffer (As|Bs)"):
        run(func, a, b, np.zeros((64, 64), "float32"))  # as written: no barrier
    rt = tirfun.build(func, target="cuda")
    text = rt.lowered.script()
    assert text.count('T.tvm_storage_sync("shared")') == 2, text
    assert "bar.sync" in rt.get_source("ptx")  # LLVM may unroll the loop over ko
    c = np.zeros((64, 64), "float32")
    launches = run_split(rt, a, b, c)
    assert launches == [("main_kernel", (4, 4, 1), (16, 16, 1))]
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-4, atol=1e-4)
    # the lowered program under the GPU semantics: no race, the same bits
    d = np.zeros((64, 64), "float32")
    run(rt.lowered["main"], a, b, d)
    assert c.tobytes() == d.tobytes()
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)


def test_the_tour_gpu_step_shows_the_ptx_and_runs_as_far_as_the_machine_allows(capsys):
    from tirfun import tour

    tour.tour_gpu(tour.tour_schedule())
    out = capsys.readouterr().out
    assert ".entry main_kernel(" in out and 'T.call_packed("main_kernel"' in out
    if _has_gpu():
        assert "on cuda(0): b = [1. 2. 3. 4. 5. 6. 7. 8.]" in out
        return
    assert ("accepts the PTX" in out) == (ptxas_path() is not None)
    assert "launches [('main_kernel', (2, 1, 1), (2, 1, 1))], b = [1. 2. 3. 4. 5. 6. 7. 8.]" in out
    # the shared-memory matmul a schedule builds: its trace, and its product
    assert "sch.compute_at(" in out and "sch.decompose_reduction(" in out
    assert "lowered with 2 barriers per step of k" in out
    assert "the product with the interpreter as the GPU (every thread, barriers, no race): bit for bit" in out
    assert "The tour stops here, before running on a GPU" in out


def test_host_code_that_reads_gpu_memory_is_refused():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    if A[0] > T.float32(0):
        for i in T.thread_binding(8, thread="threadIdx.x"):
            B[i] = A[i]
'''
    with pytest.raises(BuildError, match=r"(?s)the host code reads A, which lives in the GPU's "
                                         r"memory.*if A\[0\] > T.float32\(0.0\):"):
        tirfun.build(parse(src), target="cuda")


def test_a_shared_stage_filled_by_another_kernel_is_refused_as_the_interpreter_refuses_it():
    # TVM's schedule before compute_at: the cache stage is its own kernel,
    # whose shared buffer the reading kernel never sees
    sch = tirfun.Schedule(parse(VECTOR_ADD.replace("8", "64")))
    i0, i1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 32])
    stage = sch.cache_read(sch.get_block("B"), 0, "shared")
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    s0, s1 = sch.split(sch.get_loops(stage)[0], [None, 32])
    sch.bind(s0, "blockIdx.x")
    sch.bind(s1, "threadIdx.x")
    words = (r"(?s)buffer A_shared of scope 'shared' is allocated outside the kernels and used in a kernel "
             r"and in another kernel.*one per thread block.*in a kernel:\n    A_shared\[v0\] = A\[v0\]"
             r".*in another kernel:\n    B\[vi\] = A_shared\[vi\] \+ T.float32\(1.0\)")
    with pytest.raises(BuildError, match=r"(?s)function main: " + words[4:]):
        tirfun.build(sch.mod, target="cuda")
    with pytest.raises(InterpError, match=words):
        run(sch.mod["main"], np.zeros(64, "float32"), np.zeros(64, "float32"))
    # moved into the reading kernel, the stage builds and computes the sum
    sch = tirfun.Schedule(parse(VECTOR_ADD.replace("8", "64")))
    i0, i1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 32])
    stage = sch.cache_read(sch.get_block("B"), 0, "shared")
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    sch.compute_at(stage, i1)
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    run_split(tirfun.build(sch.mod, target="cuda"), a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_a_symbolic_size_reaches_the_kernel_and_the_launch():
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for bx in T.thread_binding((n + 31) // 32, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(n, bx * 32 + tx)
                T.where(bx * 32 + tx < n)
                B[vi] = A[vi] * T.float32(3)
'''
    rt = tirfun.build(parse(src), target="cuda")
    (kernel,) = rt.kernels
    assert [v.name for v in kernel.args] == ["a", "b", "n"]
    assert 'T.call_packed("main_kernel", a, b, n, (n + 31) // 32, 1, 1, 32, 1, 1)' in rt.get_source("tir")
    a = np.arange(70, dtype="float32")
    b = np.zeros(70, "float32")
    assert run_split(rt, a, b, 70) == [("main_kernel", (3, 1, 1), (32, 1, 1))]
    np.testing.assert_array_equal(b, a * np.float32(3))
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)


def test_tirfun_lower_for_cuda_shows_the_barriers():
    mod = tirfun.IRModule({"main": parse(REVERSE)})
    for target in ("cuda", Target("cuda -arch=sm_90"), "nvidia/nvidia-a100"):
        assert 'T.tvm_storage_sync("shared")' in tirfun.lower(mod, target=target).script()
    assert "tvm_storage_sync" not in tirfun.lower(mod).script()


def test_a_launched_thread_is_the_kernels_own_index_not_a_parameter():
    # T.launch_thread binds tx inside the kernel: the host has no value for it
    src = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    tx = T.launch_thread("threadIdx.x", 8)
    S[tx] = A[tx]
    T.tvm_storage_sync("shared")
    B[tx] = S[7 - tx]
'''
    rt = tirfun.build(parse(src), target="cuda")
    assert 'T.call_packed("main_kernel", A_handle, B_handle, 1, 1, 1, 8, 1, 1)' in rt.get_source("tir")
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    assert run_split(rt, a, b) == [("main_kernel", (1, 1, 1), (8, 1, 1))]
    np.testing.assert_array_equal(b, a[::-1])
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)


# -- failures inside LLVM ---------------------------------------------------------

# lane 0 clamps a float converted to uint64 to 0: as one vector umin, LLVM 22's
# NVPTX instruction selection asks for an integer of 0 bits and aborts
CLAMP_TO_RAMP = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((12,), "float64"), f: T.Buffer((12,), "uint64")):
    for t in T.thread_binding(2, thread="threadIdx.x"):
        for i in T.vectorized(6):
            with T.block("f"):
                vi = T.axis.spatial(12, t * 6 + i)
                f[vi] = T.min(T.Cast("uint64", A[vi] * T.float64(1000)), T.Cast("uint64", vi % 6))
'''

# the same clamp as LLVM IR, for the PTX step alone
ABORTING_NVPTX_IR = '''
target triple = "nvptx64-nvidia-cuda"
declare <6 x i64> @llvm.umin.v6i64(<6 x i64>, <6 x i64>)
define ptx_kernel void @k(ptr %p, ptr %q) {
  %v = load <6 x double>, ptr %p, align 8
  %w = fptoui <6 x double> %v to <6 x i64>
  %u = call <6 x i64> @llvm.umin.v6i64(<6 x i64> %w, <6 x i64> <i64 0, i64 1, i64 2, i64 3, i64 4, i64 5>)
  store <6 x i64> %u, ptr %q, align 8
  ret void
}
'''


def test_a_vectorized_integer_min_is_computed_lane_by_lane_and_builds():
    rt = tirfun.build(parse(CLAMP_TO_RAMP), target="cuda -arch=sm_80")
    assert "umin.v6i64" not in rt.get_source("ll")
    a = np.linspace(0.0, 0.011, 12)
    f = np.zeros(12, "uint64")
    run_split(rt, a, f)
    expected = np.zeros(12, "uint64")
    run(parse(CLAMP_TO_RAMP), a, expected)
    np.testing.assert_array_equal(f, expected)
    assert expected.tolist() == [min(int(x * 1000), i % 6) for i, x in enumerate(a)]
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), "sm_80")


def test_an_abort_inside_llvm_while_generating_ptx_is_a_build_error():
    from tirfun.runtime.cuda_build import ptx_of

    target = Target("cuda -arch=sm_80")
    try:
        _, ptx = ptx_of(ABORTING_NVPTX_IR, target, ["k"], [])
    except BuildError as err:  # LLVM 22 aborts; this process must live on and say so
        assert "generating PTX with LLVM's NVPTX backend failed inside LLVM" in str(err)
    else:  # an LLVM that compiles it
        assert ".entry k" in ptx
    # the process and LLVM still work after the child died
    rt = tirfun.build(seed_schedule(), target=target)
    assert ".entry main_kernel" in rt.get_source("ptx")
