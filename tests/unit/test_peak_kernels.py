"""The packed matmul and the 3x3 convolution of ``benchmarks/cpu.py``: the
compiled kernels compute what the interpreter computes (bit for bit in exact
IEEE arithmetic; within the stated bound of contraction under
``-fast-math-contract``), and the accumulator tile lives in registers."""

import importlib.util
import pathlib
import re

import numpy as np
import pytest

import tirfun
from tirfun.interp import run as interp_run
from tirfun.runtime.target import host_description

_CPU = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "cpu.py"
_spec = importlib.util.spec_from_file_location("benchmarks_cpu", _CPU)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

#: float32's unit roundoff
U32 = 2.0 ** -24


def contraction_bound(terms: int, magnitudes: np.ndarray) -> np.ndarray:
    """How far a contracted sum of ``terms`` products may lie from the exact
    build's: each is within gamma_n * sum |a*b| of the true sum (the dot
    product bound, the order of the additions fixed by the program, one
    rounding fewer per term when fused), so the two differ by at most twice
    that. ``magnitudes`` is sum |a*b| per result."""
    gamma = terms * U32 / (1 - terms * U32)
    return 2 * gamma * magnitudes


def run_both(mod, target, args):
    """(interpreter's outputs, compiled outputs) on copies of ``args``."""
    func = mod["main"]
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(func, *expected)
    tirfun.build(mod, target=target)(*actual)
    return expected, actual


def matmul_inputs(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    return [a, b, np.full((n, n), np.nan, np.float32)]


def conv_inputs(c, k, size, seed):
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((1, c, size, size)).astype(np.float32)
    weights = rng.standard_normal((k, c, 3, 3)).astype(np.float32)
    return [image, weights, np.full((1, k, size, size), np.nan, np.float32)]


@pytest.mark.parametrize("seed", [0, 1])
def test_packed_matmul_is_the_interpreters_bit_for_bit(seed):
    mod = bench.packed_matmul(64, rows=8, cols=32)
    args = matmul_inputs(64, seed)
    expected, actual = run_both(mod, "llvm", args)
    np.testing.assert_array_equal(actual[2].view(np.uint32), expected[2].view(np.uint32))
    # and it is a matrix product (the interpreter is not wrong in the same way)
    np.testing.assert_allclose(expected[2], args[0].astype(np.float64) @ args[1], rtol=1e-4, atol=1e-4)


def test_packed_matmul_contracted_stays_within_the_contraction_bound():
    n = 64
    mod = bench.packed_matmul(n, rows=8, cols=32)
    args = matmul_inputs(n, 2)
    expected, actual = run_both(mod, "llvm -fast-math-contract", args)
    magnitudes = np.abs(args[0]).astype(np.float64) @ np.abs(args[1]).astype(np.float64)
    gap = np.abs(actual[2].astype(np.float64) - expected[2])
    assert np.all(gap <= contraction_bound(n, magnitudes))


@pytest.mark.parametrize("size, lanes", [(16, 8), (8, 4)])
def test_conv2d_is_the_interpreters_bit_for_bit(size, lanes):
    mod = bench.conv2d_nchw(channels=8, filters=8, size=size, tile=4, lanes=lanes)
    args = conv_inputs(8, 8, size, size)
    expected, actual = run_both(mod, "llvm", args)
    np.testing.assert_array_equal(actual[2].view(np.uint32), expected[2].view(np.uint32))
    reference = bench.conv2d_reference(args[0].astype(np.float64), args[1].astype(np.float64))
    np.testing.assert_allclose(expected[2], reference, rtol=1e-4, atol=1e-4)


def test_conv2d_contracted_stays_within_the_contraction_bound():
    c, size = 8, 16
    mod = bench.conv2d_nchw(channels=c, filters=8, size=size, tile=4, lanes=8)
    args = conv_inputs(c, 8, size, 3)
    expected, actual = run_both(mod, "llvm -fast-math-contract", args)
    magnitudes = bench.conv2d_reference(np.abs(args[0]).astype(np.float64),
                                        np.abs(args[1]).astype(np.float64))
    gap = np.abs(actual[2].astype(np.float64) - expected[2])
    assert np.all(gap <= contraction_bound(9 * c, magnitudes))


def _blocks(ll: str) -> dict[str, str]:
    """The basic blocks of LLVM IR text, by label."""
    out, label = {}, None
    for line in ll.splitlines():
        m = re.match(r"^([\w.$-]+):", line)
        if m:
            label = m.group(1)
            out[label] = ""
        elif line.startswith("}"):
            label = None
        elif label is not None:
            out[label] += line + "\n"
    return out


def _hot_loops(ll: str, vector: str) -> list[str]:
    """Blocks that branch back to themselves and add ``vector`` values: the
    reduction loop's body after LLVM's optimisation."""
    found = []
    for label, body in _blocks(ll).items():
        branches = re.findall(r"\bbr\b[^\n]*", body)
        loops_back = any(f"%{label}" in re.split(r"[,\s]+", b) for b in branches)
        if loops_back and re.search(rf"(fadd|fma\w*)[^\n]*{re.escape(vector)}", body):
            found.append(body)
    return found


@pytest.mark.parametrize("target", ["llvm", "llvm -fast-math-contract"])
def test_matmul_accumulator_tile_stays_in_registers(target):
    rows, cols = 8, 32
    rt = tirfun.build(bench.packed_matmul(64, rows=rows, cols=cols), target=target)
    ll = rt.get_source("ll")
    # the tile's stack slot is gone: its elements became SSA values
    assert not re.search(r"%C_local\w*\s*=\s*alloca", ll)
    # the k loop, once per copy of the parallel loop's body (run on the pool,
    # or on this thread in a forked child)
    loops = _hot_loops(ll, f"<{cols} x float>")
    assert loops
    for body in loops:
        assert "store" not in body
        # one vector of the B panel and one element of each of the tile's rows
        # of A per step of k; nothing else is read: the tile is carried in
        # registers from one step to the next
        vector_loads = re.findall(rf"= load <{cols} x float>", body)
        scalar_loads = re.findall(r"= load float,", body)
        assert vector_loads and len(scalar_loads) == rows * len(vector_loads)
        assert len(re.findall(r"\bload\b", body)) == len(vector_loads) + len(scalar_loads)
        assert len(re.findall(rf"= phi <{cols} x float>", body)) == rows
    if target != "llvm" and "+fma" in host_description()[2].split(","):
        assert re.search(r"\bvfmadd\w*ps\b", rt.get_source("asm"))


def test_conv2d_accumulator_tile_stays_in_registers():
    tile, size, lanes = 4, 16, 8
    rt = tirfun.build(bench.conv2d_nchw(channels=8, filters=8, size=size, tile=tile, lanes=lanes))
    ll = rt.get_source("ll")
    assert not re.search(r"%O_local\w*\s*=\s*alloca", ll)
    loops = _hot_loops(ll, f"<{lanes} x float>")
    assert loops
    for body in loops:
        assert "store" not in body
        assert len(re.findall(rf"= phi <{lanes} x float>", body)) == tile * size // lanes


def test_kernel_shapes_that_do_not_tile_are_refused():
    with pytest.raises(ValueError, match="multiple of rows=8"):
        bench.packed_matmul(60)
    with pytest.raises(ValueError, match="multiple of lanes=8"):
        bench.conv2d_nchw(size=12)
