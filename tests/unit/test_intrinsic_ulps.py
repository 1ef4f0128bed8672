"""Compiled math intrinsics against the interpreter, per dtype: exact, or
within the ulps that ``INTRINSIC_ULPS`` grants that intrinsic (the one place
where compiled code and the interpreter may differ), and under the target's
``-math=fast`` within ``FAST_MATH_ULPS`` as well."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun.interp import run as interp_run
from tirfun.interp.intrinsics import FLOAT_BINARY, FLOAT_UNARY
from tirfun.testing.equivalence import FAST_MATH_ULPS, INTRINSIC_ULPS, compare_arrays

N = 256
# which input each intrinsic reads: X in (-3, 3), P in (0, 3), U in (-0.9, 0.9)
_POSITIVE = {"log", "log2", "log10", "sqrt", "rsqrt", "log1p", "acosh"}
_UNIT = {"asin", "acos", "atanh"}


def _argument(name: str) -> str:
    if name == "acosh":
        return "P[v] + T.{dt}(1)"
    return "P[v]" if name in _POSITIVE else "U[v]" if name in _UNIT else "X[v]"


def _module(dtype: str) -> tuple[IRModule, list[str]]:
    names = sorted(FLOAT_UNARY) + sorted(FLOAT_BINARY)
    outputs = ", ".join(f'{n}_out: T.Buffer(({N},), "{dtype}")' for n in names)
    lines = [f'''@T.prim_func
def main(X: T.Buffer(({N},), "{dtype}"), P: T.Buffer(({N},), "{dtype}"),
         U: T.Buffer(({N},), "{dtype}"), {outputs}):
    T.func_attr({{"tir.noalias": True}})''']
    for n in names:
        arg = _argument(n).format(dt=dtype)
        call = f"T.{n}({arg}, X[({N} - 1) - v])" if n in FLOAT_BINARY else f"T.{n}({arg})"
        lines.append(f'''    for i in range({N}):
        with T.block("{n}"):
            v = T.axis.spatial({N}, i)
            {n}_out[v] = {call}''')
    return IRModule.from_expr(tirfun.script.from_source("\n".join(lines))), names


@pytest.mark.parametrize("math", ["exact", "fast"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_each_intrinsic_is_within_its_ulps(dtype, math):
    mod, names = _module(dtype)
    held = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(11)
    inputs = [rng.uniform(-3, 3, N), rng.uniform(0, 3, N), rng.uniform(-0.9, 0.9, N)]
    inputs = [a.astype(held) for a in inputs]
    expected = [np.zeros(N, held) for _ in names]
    actual = [np.zeros(N, held) for _ in names]
    interp_run(mod, *[a.copy() for a in inputs], *expected)
    tirfun.build(mod, target=f"llvm -math={math}")(*[a.copy() for a in inputs], *actual)

    def ulps(name):
        fast = FAST_MATH_ULPS.get(name, 0) if math == "fast" and dtype != "float64" else 0
        return max(INTRINSIC_ULPS.get(name, 0), fast)

    problems = [compare_arrays(f"{n}_out", x, y, dtype, ulps(n))
                for n, x, y in zip(names, expected, actual)]
    assert not [p for p in problems if p], [p for p in problems if p]


def test_exp10_hypot_and_pow_agree_bit_for_bit_even_through_a_chain():
    # found by the soak: sin(exp10(sin(x))) turned exp10's 2-ulp slack into
    # 12 ulps of sin's result; the interpreter now calls the C library's
    # exp10 and hypot, as compiled code does, and compiled code calls the C
    # library's pow as it is (LLVM made pow(x, 0.5) a sqrt): all exact
    from tirfun.interp.intrinsics import C_EXP10, C_HYPOT

    if C_EXP10 is None or C_HYPOT is None:
        pytest.skip("the C library has no exp10 or hypot")
    assert not INTRINSIC_ULPS
    mod = IRModule.from_expr(tirfun.script.from_source(f'''@T.prim_func
def main(X: T.Buffer(({N},), "float64"), Y: T.Buffer(({N},), "float64"),
         A: T.Buffer(({N},), "float64"), B: T.Buffer(({N},), "float32")):
    for i in range({N}):
        A[i] = T.sin(T.exp10(T.sin(X[i]))) + T.hypot(X[i], Y[i]) * T.float64(1000) + T.sin(
            T.pow(T.fabs(Y[i]), T.float64(0.5)) * T.float64(1000))
        B[i] = T.Cast("float32", T.exp10(X[i])) + T.hypot(T.Cast("float32", X[i]), T.Cast("float32", Y[i]))
'''))
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-3, 3, N), rng.uniform(-3, 3, N)
    expected = [np.zeros(N), np.zeros(N, "float32")]
    actual = [np.zeros(N), np.zeros(N, "float32")]
    interp_run(mod, x, y, *expected)
    tirfun.build(mod)(x, y, *actual)
    for e, a in zip(expected, actual):
        assert e.tobytes() == a.tobytes()
