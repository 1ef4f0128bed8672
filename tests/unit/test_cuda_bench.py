"""The kernels of ``benchmarks/gpu.py``, checked without a GPU: small
instances run with the interpreter as the GPU, the benchmark's tiling
assembled by ptxas."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tirfun
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "gpu.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("cuda_benchmarks", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tiled_matmul_computes_the_product(bench):
    rt = tirfun.build(bench.tiled_matmul(32, bm=16, bn=16, bk=4, tm=4, tn=4, vec=1), target="cuda")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 32)).astype("float32")
    b = rng.standard_normal((32, 32)).astype("float32")
    c = np.zeros((32, 32), "float32")
    assert run_split(rt, a, b, c) == [("main_kernel", (2, 2, 1), (4, 4, 1))]
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-5, atol=1e-5)
    # one barrier before each step's loads, one between the loads and the products
    assert rt.lowered.script().count('T.tvm_storage_sync("shared")') == 2


def test_the_elementwise_kernel(bench):
    rt = tirfun.build(bench.elementwise(1 << 12), target="cuda")
    a = np.arange(1 << 12, dtype="float32")
    b = np.zeros_like(a)
    assert run_split(rt, a, b) == [("main_kernel", (4, 1, 1), (256, 1, 1))]
    np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))
    assert "ld.global.nc.v4" in rt.get_source("ptx") and "st.global.v4" in rt.get_source("ptx")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (NVIDIA's PTX assembler) is not installed")
def test_the_benchmark_tiling_is_accepted_by_ptxas(bench):
    rt = tirfun.build(bench.tiled_matmul(256), target="cuda -arch=sm_90 -fast-math-contract")
    ptx = rt.get_source("ptx")
    assert "fma.rn.f32" in ptx and "ld.shared.v4" in ptx and ".local" not in ptx
    ptxas_check(ptx, "sm_90")


def test_without_a_gpu_the_benchmark_says_so(bench, capsys):
    try:
        tirfun.cuda(0)
    except tirfun.TirfunError:
        assert bench.main([]) == 0
        assert "measures a GPU, and there is none here" in capsys.readouterr().out
    else:
        pytest.skip("a GPU is present: the benchmark would run")
