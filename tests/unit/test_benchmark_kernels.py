"""The hand-written kernels of ``benchmarks/cpu.py`` (written as the
TVMScript their block schedules produce) compute what the interpreter
computes, at small sizes: exactly under ``-math=exact``, within
``FAST_MATH_ULPS`` under ``-math=fast``."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import tirfun
from tirfun.interp import run as interp_run
from tirfun.testing.equivalence import compare_arrays, ulps_for

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "cpu.py"


def _benchmarks():
    spec = importlib.util.spec_from_file_location("tirfun_benchmarks_cpu", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _benchmarks()


def _check(mod, args, math):
    func = mod["main"]
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(mod, *expected)
    tirfun.build(mod, target=f"llvm -math={math}")(*actual)
    for p, x, y in zip(func.params, expected, actual):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype, ulps_for(func, math=math))
        assert problem is None, problem


@pytest.mark.parametrize("math", ["exact", "fast"])
def test_softmax_kernel(math):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((8, 64)) * 20).astype(np.float32)
    out = np.zeros_like(x)
    _check(bench.softmax(8, 64), [x, out], math)
    result = np.zeros_like(x)
    tirfun.build(bench.softmax(8, 64), target=f"llvm -math={math}")(x, result)
    np.testing.assert_allclose(result, bench.numpy_softmax(x), rtol=1e-5, atol=1e-30)


def test_row_sum_rfactor_kernel():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((8, 128)).astype(np.float32)
    _check(bench.row_sum_rfactor(8, 128), [a, np.zeros(8, np.float32)], "exact")


@pytest.mark.parametrize("math", ["exact", "fast"])
def test_exp_kernel(math):
    x = np.linspace(-100, 100, 256, dtype=np.float32)
    _check(bench.exp_elementwise(256), [x, np.zeros_like(x)], math)
