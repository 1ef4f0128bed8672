"""The CUDA target on a GPU: these tests run only where a GPU is present
(cuda-python, a driver and a device), and skip with the reason elsewhere."""

import numpy as np
import pytest

import tirfun
from tirfun.errors import ArgumentError, TirfunError
from tirfun.interp import run


def _gpu_or_reason():
    try:
        return tirfun.cuda(0), None
    except TirfunError as err:
        return None, str(err)


DEV, REASON = _gpu_or_reason()
pytestmark = pytest.mark.skipif(DEV is None, reason=f"no GPU: {REASON}")


def _unit():
    import test_cuda_build as unit  # the programs and schedules of the GPU-less tests

    return unit


def test_the_seed_vector_add_runs_on_the_gpu():
    unit = _unit()
    rt = tirfun.build(unit.seed_schedule(), target="cuda")
    assert rt.target.arch == f"sm_{DEV.compute_version.replace('.', '')}"
    a = tirfun.nd.array(np.arange(8, dtype="float32"), DEV)
    b = tirfun.nd.array(np.zeros(8, dtype="float32"), DEV)
    rt(a, b)
    np.testing.assert_array_equal(b.numpy(), np.arange(8, dtype="float32") + 1)
    b.copyfrom(np.full(8, 7, "float32"))
    np.testing.assert_array_equal(b.numpy(), np.full(8, 7, "float32"))
    with pytest.raises(ArgumentError, match="the function runs on a GPU"):
        rt(np.zeros(8, "float32"), b)
    timing = rt.time_evaluator("main", DEV, number=5, repeat=2)(a, b)
    assert len(timing.results) == 2 and timing.mean > 0


def test_the_shared_memory_matmul_on_the_gpu_equals_the_interpreter():
    unit = _unit()
    func = unit.parse(unit.TILED_MATMUL)
    rt = tirfun.build(func, target="cuda")
    a, b = unit.matmul_inputs()
    expected = np.zeros((64, 64), "float32")
    run(rt.lowered["main"], a, b, expected)
    c = tirfun.nd.array(np.zeros((64, 64), "float32"), DEV)
    rt(tirfun.nd.array(a, DEV), tirfun.nd.array(b, DEV), c)
    assert c.numpy().tobytes() == expected.tobytes()


def test_the_schedule_built_matmul_on_the_gpu_equals_the_interpreter():
    from tirfun.examples import gpu_schedules

    sch = gpu_schedules.tiled_matmul(64, bm=32, bn=32, bk=8, tm=4, tn=4, vec=2)
    rt = tirfun.build(sch.mod, target="cuda")
    a, b = _unit().matmul_inputs()
    expected = np.zeros((64, 64), "float32")
    run(rt.lowered["main"], a, b, expected)
    c = tirfun.nd.array(np.zeros((64, 64), "float32"), DEV)
    rt(tirfun.nd.array(a, DEV), tirfun.nd.array(b, DEV), c)
    assert c.numpy().tobytes() == expected.tobytes()


def test_the_benchmark_matmul_schedule_on_the_gpu():
    from tirfun.examples import gpu_schedules

    n = 512
    rt = tirfun.build(gpu_schedules.tiled_matmul(n).mod, target="cuda -fast-math-contract")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    c = tirfun.nd.empty((n, n), "float32", DEV)
    rt(tirfun.nd.array(a, DEV), tirfun.nd.array(b, DEV), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float64") @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("seed", range(40))
def test_random_thread_bound_programs_on_the_gpu_equal_the_interpreter(seed):
    from tirfun.testing import gpu_soak

    outcome, detail = gpu_soak.check_seed(seed, gpu_soak.on_gpu)
    if outcome == "skipped":
        pytest.skip(detail)
    # bit for bit, but for float64 math functions: libdevice's and the C
    # library's round a few ulps apart (at most gpu_soak.LIBDEVICE_ULPS)
    assert outcome in ("ok", "libdevice"), f"seed {seed}: {detail}"


def test_dlpack_round_trips_with_torch_or_cupy():
    unit = _unit()
    rt = tirfun.build(unit.seed_schedule(), target="cuda")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        a = torch.arange(8, dtype=torch.float32, device="cuda")
        b = torch.zeros(8, dtype=torch.float32, device="cuda")
        rt(a, b)  # DLPack arrays pass directly, without copies
        assert b.cpu().numpy().tolist() == (np.arange(8) + 1).tolist()
        nd = tirfun.nd.from_dlpack(b)
        assert nd.device == DEV and nd.data_ptr == b.data_ptr()
        back = torch.from_dlpack(nd)
        assert back.data_ptr() == b.data_ptr()
        return
    try:
        import cupy
    except ImportError:
        pytest.skip("neither torch with CUDA nor cupy is installed")
    a = cupy.arange(8, dtype="float32")
    b = cupy.zeros(8, dtype="float32")
    rt(a, b)
    assert cupy.asnumpy(b).tolist() == (np.arange(8) + 1).tolist()
    nd = tirfun.nd.from_dlpack(b)
    assert nd.data_ptr == b.data.ptr
    assert cupy.from_dlpack(nd).data.ptr == b.data.ptr


def _allreduce_unit():
    import test_cuda_allreduce as unit  # the shapes and programs of the GPU-less tests

    return unit


@pytest.mark.parametrize("reducer,dtype", [("sum", "float32"), ("sum", "int64"),
                                           ("argmax", "float32"), ("min", "float64")])
def test_cross_thread_reductions_on_the_gpu_equal_the_lowered_program(reducer, dtype):
    from tirfun.testing.draw_allreduce import (
        ThreadReduction, expected_result, inputs, thread_reduction_module,
    )

    for threads, inner, row_threads, on in _allreduce_unit().SHAPES:
        spec = ThreadReduction(reducer, dtype, 5, 3 * threads + 1, threads, inner, row_threads, on)
        mod = thread_reduction_module(spec)
        rt = tirfun.build(mod, target="cuda")
        args = inputs(spec, threads)
        lowered = [np.copy(x) for x in args]
        run(rt.lowered["main"], *lowered)
        on_gpu = [tirfun.nd.array(x, DEV) for x in args]
        rt(*on_gpu)
        for want, got, model in zip(lowered[1:], on_gpu[1:], expected_result(spec, args[0])):
            assert got.numpy().tobytes() == want.tobytes(), spec
            assert got.numpy().tobytes() == model.tobytes(), spec


def test_the_thread_bound_softmax_on_the_gpu_equals_the_lowered_program():
    from tirfun.script import from_source

    unit = _allreduce_unit()
    rt = tirfun.build(from_source(unit.SOFTMAX), target="cuda")
    a, out = unit.softmax_inputs()
    expected = np.copy(out)
    run(rt.lowered["main"], a, expected)
    got = tirfun.nd.array(out, DEV)
    rt(tirfun.nd.array(a, DEV), got)
    assert got.numpy().tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_fmod_on_the_gpu_is_cs_fmod(dtype):
    # the GPU soak found LLVM's frem expansion wrong: fmod(-inf, inf) was
    # -inf, a zero remainder of a negative x was +0
    from tirfun.lower.nvptx_codegen import find_libdevice
    from tirfun.testing.equivalence import compare_arrays

    if find_libdevice() is None:
        pytest.skip("libdevice (for fmod) is not installed")
    unit = _unit()
    rt = tirfun.build(unit.parse(unit.FMOD.replace("DT", dtype)), target="cuda")
    a, b = unit.fmod_inputs(dtype)
    c, d = tirfun.nd.empty(a.shape, dtype, DEV), tirfun.nd.empty(a.shape, dtype, DEV)
    rt(tirfun.nd.array(a, DEV), tirfun.nd.array(b, DEV), c, d)
    want = unit.expected_fmod(a, b)
    assert compare_arrays("C", want, c.numpy(), dtype) is None
    assert compare_arrays("D", want, d.numpy(), dtype) is None
