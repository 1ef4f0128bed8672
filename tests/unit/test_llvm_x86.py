"""x86 dot-product intrinsics through ``T.call_llvm_pure_intrin``, as TVM's
x86 tensor intrinsics call them (with TVM's count of signature arguments),
and ``T.reinterpret`` between vectors of other lane counts. The
interpreter gives each its meaning lane by lane; the build must agree bit
for bit, and numpy says what the right answer is. The build runs only on a
CPU with the feature (LLVM cannot select the instruction otherwise; the
build refuses it first, which is tested everywhere)."""

import numpy as np
import pytest

import tirfun
from tirfun import interp
from tirfun.errors import BuildError
from tirfun.script import from_source
from tirfun.target import Target, host_description

HOST_FEATURES = host_description()[2].split(",")


def _needs(feature):
    return pytest.mark.skipif(f"+{feature}" not in HOST_FEATURES, reason=f"the CPU has no {feature}")


def _wrap32(x):
    return ((x + 2**31) % 2**32 - 2**31).astype(np.int32)


VPDPBUSD = from_source('''
@T.prim_func
def dot(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((16,), "int32")):
    a: T.int32x16 = T.reinterpret("int32x16", A[0:64])
    b: T.int32x16 = T.reinterpret("int32x16", B[0:64])
    C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C[0:16], a, b)
''')

PMADD = from_source('''
@T.prim_func
def dot(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((16,), "int32")):
    pairs: T.int16x32 = T.call_llvm_pure_intrin("int16x32", "llvm.x86.avx512.pmaddubs.w.512", T.uint32(2),
                                                A[0:64], B[0:64])
    C[0:16] = C[0:16] + T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.pmaddw.d.512", T.uint32(2),
                                                pairs, T.Broadcast(T.int16(1), 32))
''')


def _operands(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, 64, dtype=np.uint8)
    b = rng.integers(-128, 128, 64, dtype=np.int8)
    c = rng.integers(-2**31, 2**31, 16, dtype=np.int64).astype(np.int32)
    # the extremes, where the sums wrap or saturate
    a[:8], b[:8] = 255, -128
    c[0] = 2**31 - 1
    return a, b, c


def _vpdpbusd(a, b, c):
    return _wrap32(c.astype(np.int64) + (a.astype(np.int64) * b.astype(np.int64)).reshape(16, 4).sum(1))


def _pmadd(a, b, c):
    products = (a.astype(np.int64) * b.astype(np.int64)).reshape(32, 2).sum(1)
    pairs = np.clip(products, -32768, 32767)
    return _wrap32(c.astype(np.int64) + pairs.reshape(16, 2).sum(1))


@pytest.mark.parametrize("func, reference", [(VPDPBUSD, _vpdpbusd), (PMADD, _pmadd)], ids=["vpdpbusd", "pmadd"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_interpreter_computes_the_x86_dot_products(func, reference, seed):
    a, b, c = _operands(seed)
    got = c.copy()
    interp.run(func, a, b, got)
    assert np.array_equal(got, reference(a, b, c))


@_needs("avx512vnni")
def test_the_build_calls_vpdpbusd_as_the_interpreter_reads_it():
    a, b, c = _operands(3)
    want, got = c.copy(), c.copy()
    interp.run(VPDPBUSD, a, b, want)
    tirfun.build(VPDPBUSD)(a, b, got)
    assert np.array_equal(got, want)


@_needs("avx512bw")
def test_the_build_calls_pmaddubsw_and_pmaddwd_as_the_interpreter_reads_them():
    a, b, c = _operands(4)
    want, got = c.copy(), c.copy()
    interp.run(PMADD, a, b, want)
    tirfun.build(PMADD)(a, b, got)
    assert np.array_equal(got, want)


def test_the_build_refuses_an_intrinsic_the_target_cannot_select():
    target = Target("llvm", features="-avx512vnni")
    with pytest.raises(BuildError, match="needs the CPU feature avx512vnni"):
        tirfun.build(VPDPBUSD, target=target)


def test_an_intrinsic_called_with_other_types_is_refused_by_both():
    func = from_source(VPDPBUSD.script().replace('T.reinterpret("int32x16", B[0:64])', 'T.int32x16(1)'))
    bad = from_source(func.script().replace("C[0:16], a, b)", "C[0:16], a)"))
    a, b, c = _operands(0)
    with pytest.raises(tirfun.errors.InterpError, match="vpdpbusd"):
        interp.run(bad, a, b, c.copy())
    with pytest.raises(BuildError, match="vpdpbusd"):
        tirfun.build(bad)


REINTERPRET = from_source('''
@T.prim_func
def lanes(A: T.Buffer((16,), "uint8"), B: T.Buffer((4,), "int32"), C: T.Buffer((16,), "uint8"),
          D: T.Buffer((4,), "float32"), E: T.Buffer((4,), "int32")):
    for i in range(4):
        B[i] = T.reinterpret("int32", A[i * 4:i * 4 + 4])
    C[0:16] = T.reinterpret("uint8x16", B[0:4] + T.Broadcast(1, 4))
    D[0:4] = T.reinterpret("float32x4", T.reinterpret("uint8x16", E[0:4]))
''')


def test_reinterpret_between_lane_counts_reads_the_bytes_in_order():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, 16, dtype=np.uint8)
    e = rng.integers(-2**31, 2**31, 4, dtype=np.int64).astype(np.int32)
    outs = {}
    for how in ("interp", "build"):
        b, c, d = np.zeros(4, np.int32), np.zeros(16, np.uint8), np.zeros(4, np.float32)
        (interp.run if how == "interp" else tirfun.build(REINTERPRET))(
            *((REINTERPRET,) if how == "interp" else ()), a, b, c, d, e)
        outs[how] = (b, c, d)
    b, c, d = outs["interp"]
    assert np.array_equal(b, a.view(np.int32))
    assert np.array_equal(c, (a.view(np.int32) + np.int32(1)).view(np.uint8))
    assert np.array_equal(d.view(np.int32), e)
    for x, y in zip(outs["interp"], outs["build"]):
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8))


def test_tvms_count_of_signature_arguments_is_read_for_every_llvm_intrinsic():
    func = from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.call_llvm_pure_intrin("float32", "llvm.fabs", T.uint32(1), A[i])
''')
    a = np.array([-1.5, 2.0, -0.0, 3.25], np.float32)
    want, got = np.zeros(4, np.float32), np.zeros(4, np.float32)
    interp.run(func, a, want)
    tirfun.build(func)(a, got)
    assert np.array_equal(want, np.abs(a)) and np.array_equal(got, want)
