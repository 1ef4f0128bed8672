"""float8_e4m3fn, float8_e5m2 and float4_e2m1fn (TVM v0.20's narrow floats,
ml_dtypes' arrays): parsed, printed, interpreted and built for the CPU,
where they compute in double and round every result, in agreement with
the interpreter and with ml_dtypes bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.numpy_dtypes import mini_float
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.testing.equivalence import compare_arrays

NAMES = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn")


def _doubles() -> np.ndarray:
    """Every value of each format, the midpoints between neighbours and
    points just beside them, specials, huge and tiny values."""
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e300, 5e-324, 1e-30]
    for name in NAMES:
        exact = np.arange(256, dtype=np.uint8).view(mini_float(name)).astype(np.float64)
        exact = np.unique(exact[np.isfinite(exact)])
        mids = (exact[1:] + exact[:-1]) / 2
        values += list(exact) + list(mids) + list(np.nextafter(mids, np.inf)) + \
            list(np.nextafter(mids, -np.inf)) + list(exact * 1.0625) + list(exact[-1:] * 1.07)
    return np.array(values, dtype=np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_casts_round_as_ml_dtypes_rounds(name):
    x = _doubles()
    n = len(x)
    func = from_source(f'''
@T.prim_func
def main(A: T.Buffer(({n},), "float64"), B: T.Buffer(({n},), "{name}"), C: T.Buffer(({n},), "float32")):
    for i in range({n}):
        B[i] = T.Cast("{name}", A[i])
        C[i] = T.Cast("float32", T.Cast("{name}", A[i]))
''')
    with np.errstate(invalid="ignore", over="ignore"):
        expected = x.astype(mini_float(name))
    for run in (tirfun.interp.run, tirfun.build(func)):
        b, c = np.zeros(n, mini_float(name)), np.zeros(n, "float32")
        run(func, x, b, c) if run is tirfun.interp.run else run(x, b, c)
        assert b.view(np.uint8).tolist() == expected.view(np.uint8).tolist()
        assert compare_arrays("C", expected.astype(np.float32), c, "float32") is None


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_arithmetic_rounds_every_result(name, kind):
    func = from_source(f'''
@T.prim_func
def main(A: T.Buffer((16,), "{name}"), B: T.Buffer((16,), "{name}"), C: T.Buffer((16,), "{name}"), D: T.Buffer((16,), "float32")):
    for i in T.{kind}(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = (A[vi] * B[vi] + T.{name}(1.5)) / (T.fabs(B[vi]) + T.{name}(0.5))
            D[vi] = T.Cast("float32", T.sqrt(T.fabs(A[vi] - B[vi])) + T.exp(C[vi]))
''')
    assert f"T.{name}(1.5)" in func.script()
    assert from_source(func.script()) == func
    rng = np.random.default_rng(7)
    dtype = mini_float(name)
    a = rng.uniform(-6, 6, 16).astype(dtype)
    b = rng.uniform(-6, 6, 16).astype(dtype)
    # the meaning: every operation in double, rounded to the format
    r = lambda v: np.asarray(v, np.float64).astype(dtype).astype(np.float64)  # noqa: E731
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        expected = r(r(r(fa * fb) + 1.5) / r(np.abs(fb) + 0.5))
    outs = []
    for run in ("interp", "build"):
        c, d = np.zeros(16, dtype), np.zeros(16, "float32")
        if run == "interp":
            tirfun.interp.run(func, a, b, c, d)
        else:
            tirfun.build(func)(a, b, c, d)
        outs.append((c, d))
    (ci, di), (cb, db) = outs
    assert ci.view(np.uint8).tolist() == cb.view(np.uint8).tolist()
    assert compare_arrays("C", expected.astype(dtype), ci, name) is None
    assert compare_arrays("D", di, db, "float32") is None


def test_names_limits_and_python_helpers():
    assert T.float8_e4m3fn(1.5).dtype == "float8_e4m3fn"
    assert T.float4_e2m1fn(7.0).value == 7.0  # a literal keeps its value; stores round it
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((3,), "float8_e4m3fn"), B: T.Buffer((3,), "float8_e5m2"), C: T.Buffer((1,), "float32")):
    A[0] = T.max_value("float8_e4m3fn")
    A[1] = T.min_value("float8_e4m3fn")
    B[0] = T.max_value("float8_e5m2")
    A[2] = T.Cast("float8_e4m3fn", B[0])
    B[1] = T.max_value("bfloat16")
    B[2] = T.Cast("float8_e5m2", C[0]) * T.float8_e5m2(0.3)
''')
    for run in ("interp", "build"):
        a, b = np.zeros(3, mini_float("float8_e4m3fn")), np.zeros(3, mini_float("float8_e5m2"))
        c = np.array([0.3], "float32")
        (tirfun.interp.run(func, a, b, c) if run == "interp" else tirfun.build(func)(a, b, c))
        assert a.astype(np.float64)[:2].tolist() == [448.0, -448.0]
        assert np.isnan(a.astype(np.float64)[2])  # 57344 is past e4m3fn's largest value
        assert b.astype(np.float64)[0] == 57344.0
        assert b.astype(np.float64)[1] == np.inf  # bfloat16's largest value is past e5m2's
        # literals are the format's nearest value: 0.3 is 0.3125, squared 0.09765625 -> 0.09375
        assert b.astype(np.float64)[2] == 0.09375


@pytest.mark.parametrize("name", NAMES)
def test_a_scalar_parameter_of_a_narrow_float_passes_from_python(name):
    # the argument is rounded to the format, as the interpreter rounds it,
    # and computes in double like every other value of the format
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer((2,), "{name}"), x: T.{name}):
    A[0] = x
    A[1] = A[1] * x + x
''')
    rt = tirfun.build(func)
    values = list(_doubles()[::7]) + [np.array(1.5, mini_float(name))[()], np.float32(0.3), 2]
    for x in values:
        a = np.array([0.0, 1.5], mini_float(name))
        interpreted, compiled = a.copy(), a.copy()
        tirfun.interp.run(func, interpreted, x)
        rt(compiled, x)
        assert interpreted.view(np.uint8).tolist() == compiled.view(np.uint8).tolist(), x
        with np.errstate(over="ignore", invalid="ignore"):
            rounded = np.array(float(x)).astype(mini_float(name))
        assert interpreted.view(np.uint8)[0] == rounded.view(np.uint8) or np.isnan(float(x))


@pytest.mark.parametrize("name", NAMES)
def test_a_narrow_float_crosses_a_call_between_functions_and_returns(name):
    mod = from_source(f'''from tirfun.script import ir as I
from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def twice(x: T.{name}) -> T.{name}:
        T.ret(x + x)

    @T.prim_func
    def main(A: T.Buffer((1,), "{name}"), x: T.{name}) -> T.{name}:
        A[0] = Module.twice(x)
        T.ret(A[0] * x)
''')
    rt = tirfun.build(mod)
    for x in (0.75, -1.5, 3.0, 1e9):
        a, b = np.zeros(1, mini_float(name)), np.zeros(1, mini_float(name))
        expected = tirfun.interp.run(mod, a, x)
        got = rt(b, x)
        assert a.view(np.uint8).tolist() == b.view(np.uint8).tolist()
        assert np.array(expected).astype(mini_float(name)).view(np.uint8) == \
            np.array(got).astype(mini_float(name)).view(np.uint8)
