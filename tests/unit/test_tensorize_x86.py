"""TVM's x86 tensor intrinsics (``tirfun.tir.tensor_intrin.x86``) on an
unsigned-by-signed byte matmul in TVM's packed layout: the interpreter
gives the tensorized program its meaning (the intrinsics' instructions
lane by lane), numpy says the right answer, and the build, on a CPU with
the instructions, computes it bit for bit."""

import numpy as np
import pytest

import tirfun
from tirfun import interp, te
from tirfun.target import host_description
from tirfun.tir.tensor_intrin.x86 import AVX512_DOT_16x4_INTRIN, VNNI_DOT_16x4_INTRIN

FEATURES = host_description()[2].split(",")
N = 32


def _matmul(index_dtype=None):
    X = te.placeholder((N, N), name="X", dtype="uint8")
    W = te.placeholder((N, N), name="W", dtype="int8")
    k = te.reduce_axis((0, N), name="k")
    out = te.compute((N, N), lambda i, j: te.sum(X[i, k].astype("int32") * W[j, k].astype("int32"), axis=k),
                     name="compute")
    return te.create_prim_func([X, W, out], index_dtype_override=index_dtype)


def _tensorized(intrin, index_dtype=None):
    sch = tirfun.Schedule(_matmul(index_dtype))
    block = sch.get_block("compute")
    sch.transform_layout(block, "W", lambda i, j: [i // 16, j // 4, i % 16, j % 4])
    _, j, k = sch.get_loops(block)
    _, ji = sch.split(j, factors=[None, 16])
    ko, ki = sch.split(k, factors=[None, 4])
    sch.reorder(ko, ji, ki)
    sch.decompose_reduction(block, ko)
    sch.tensorize(ji, intrin)
    return sch


def _operands(seed, high=256):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, high, (N, N), dtype=np.uint8)
    w = rng.integers(-128, 128, (N, N), dtype=np.int8)
    packed = w.reshape(N // 16, 16, N // 4, 4).transpose(0, 2, 1, 3).copy()
    return x, packed, x.astype(np.int64) @ w.astype(np.int64).T


@pytest.mark.parametrize("index_dtype", [None, "int64"])
@pytest.mark.parametrize("intrin, feature", [(VNNI_DOT_16x4_INTRIN, "avx512vnni"),
                                             (AVX512_DOT_16x4_INTRIN, "avx512bw")], ids=["vnni", "avx512"])
def test_a_byte_matmul_tensorized_with_an_x86_intrinsic(intrin, feature, index_dtype):
    # with int64 indices the intrinsic's int32 description and
    # implementation take the block's index dtype: the packed window
    # W[v_j_o + v_j_i // 16, ...] is still the single index v_j_o
    sch = _tensorized(intrin, index_dtype)
    assert "llvm.x86.avx512" in sch.mod["main"].script()
    # small enough that pmaddubsw's 16-bit pairs do not saturate
    x, packed, want = _operands(0, high=64)
    got = np.zeros((N, N), np.int32)
    interp.run(sch.mod["main"], x, packed, got)
    assert np.array_equal(got, want)
    if f"+{feature}" not in FEATURES:
        pytest.skip(f"the CPU has no {feature}")
    built = np.zeros((N, N), np.int32)
    tirfun.build(sch.mod)(x, packed, built)
    assert np.array_equal(built, got)


def test_vnni_is_exact_where_the_avx512_pairs_saturate():
    # every byte at its extreme: 255 * -128 twice overflows 16 bits, which
    # pmaddubsw saturates; vpdpbusd sums in 32 bits
    x = np.full((N, N), 255, np.uint8)
    packed = np.full((N // 16, N // 4, 16, 4), -128, np.int8)
    want = np.full((N, N), 255 * -128 * N, np.int64)
    results = {}
    for name in (VNNI_DOT_16x4_INTRIN, AVX512_DOT_16x4_INTRIN):
        got = np.zeros((N, N), np.int32)
        interp.run(_tensorized(name).mod["main"], x, packed, got)
        results[name] = got
    assert np.array_equal(results[VNNI_DOT_16x4_INTRIN], want)
    assert np.all(results[AVX512_DOT_16x4_INTRIN] == -32768 * N // 2)
