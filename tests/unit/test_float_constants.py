"""Float constants are their bits: ``0.0`` and ``-0.0`` are different
programs, a NaN constant equals itself, and the interpreter, every lowering
pass, the printer and the compiled code keep the difference."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun.analysis.equality import structural_equal, structural_hash
from tirfun.interp import run as interp_run
from tirfun.lower import PASSES
from tirfun.nodes import FloatImm
from tirfun.nodes.dtype import DataType
from tirfun.testing.equivalence import compare_arrays

NAN = float("nan")


def _sign(x) -> float:
    return math.copysign(1.0, float(x))


def _program(constant: str, op: str = "/", dtype: str = "float32") -> IRModule:
    return IRModule.from_expr(tirfun.script.from_source(f'''@T.prim_func
def main(A: T.Buffer((4,), "{dtype}"), B: T.Buffer((4,), "{dtype}")):
    T.func_attr({{"tir.noalias": True}})
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.{dtype}(1) {op} (A[vi] * T.{dtype}({constant}))'''))


def test_signed_zeros_are_different_constants():
    plus, minus = FloatImm("float32", 0.0), FloatImm("float32", -0.0)
    assert plus != minus
    assert len({plus, minus}) == 2
    assert not structural_equal(plus, minus)
    assert structural_hash(plus) != structural_hash(minus)


def test_a_nan_constant_equals_itself_and_keeps_its_sign():
    a, b = FloatImm("float64", NAN), FloatImm("float64", float("nan"))
    assert a == b and hash(a) == hash(b)
    negative = FloatImm("float64", -NAN)
    assert negative != a
    assert structural_equal(a, b) and not structural_equal(a, negative)
    assert FloatImm("float32", 1.5) == FloatImm("float32", 1.5)


def test_interpreter_cache_tells_signed_zeros_apart():
    a = np.ones(4, "float32")
    results = []
    for constant in ("0.0", "-0.0", "0.0"):
        b = np.zeros(4, "float32")
        interp_run(_program(constant), a, b)
        results.append(b)
    assert np.all(results[0] == np.inf)
    assert np.all(results[1] == -np.inf)
    assert np.all(results[2] == np.inf)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_code_and_build_cache_tell_signed_zeros_apart(dtype):
    a = np.ones(4, dtype)
    for constant, expected in (("0.0", np.inf), ("-0.0", -np.inf), ("0.0", np.inf)):
        b = np.zeros(4, dtype)
        tirfun.build(_program(constant, dtype=dtype))(a, b)
        assert np.all(b == expected), (constant, b)


@pytest.mark.parametrize("constant", ["0.0", "-0.0", '"nan"', '"-nan"', '"inf"', '"-inf"'])
def test_every_pass_and_the_build_keep_special_constants(constant):
    mod = _program(constant, op="+")
    a = np.array([1.0, -1.0, 0.0, -0.0], "float32")
    expected = np.zeros(4, "float32")
    interp_run(mod, a.copy(), expected)
    for name, run in PASSES:
        mod = run(mod)
        got = np.zeros(4, "float32")
        interp_run(mod, a.copy(), got)
        assert compare_arrays("B", expected, got, "float32") is None, name
    compiled = np.zeros(4, "float32")
    tirfun.build(_program(constant, op="+"))(a.copy(), compiled)
    assert compare_arrays("B", expected, compiled, "float32") is None


def test_adding_plus_zero_is_not_dropped():
    # -0.0 + 0.0 is +0.0: x + 0.0 is not x, x - 0.0 and x + -0.0 are
    for op, constant, sign in (("+", "0.0", 1.0), ("-", "0.0", -1.0), ("+", "-0.0", -1.0)):
        mod = tirfun.script.from_source(f'''@T.prim_func
def main(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            B[vi] = A[vi] {op} T.float32({constant})''')
        a = np.array([-0.0, -0.0], "float32")
        interpreted, compiled = np.ones(2, "float32"), np.ones(2, "float32")
        interp_run(mod, a, interpreted)
        tirfun.build(mod)(a, compiled)
        assert [_sign(x) for x in interpreted] == [sign, sign], (op, constant)
        assert [_sign(x) for x in compiled] == [sign, sign], (op, constant)


@pytest.mark.parametrize("value", [0.0, -0.0, NAN, -NAN, math.inf, -math.inf, 5e-324, 1e300])
def test_special_constants_print_and_parse_to_the_same_bits(value):
    mod = tirfun.script.from_source(f'''@T.prim_func
def main(B: T.Buffer((1,), "float64")):
    B[0] = T.float64(0)''')
    func = mod
    store = func.body
    func = attrs.evolve(func, body=attrs.evolve(store, value=FloatImm("float64", value)))
    printed = IRModule({"main": func}).script()
    again = tirfun.script.from_source(printed)["main"]
    assert again == func, printed


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("value", [
    # found by the soak: LLVM's InstCombine made max(max(0.0, x), 0.0)
    # into max(0.0, x), -0.0 for x = -0.0 where +0.0 is right
    "T.max(T.max(z, A[i]), z)",
    "T.min(T.min(z, A[i]), z)",
    "T.max(z, T.max(A[i], z))",
    "T.min(T.min(A[i], B[i]), B[i])",
    "T.max(T.max(A[i], B[i]), A[i])",
    "T.max(T.min(z, A[i]), z)",
])
def test_nested_min_and_max_keep_signed_zeros_and_nans_when_compiled(dtype, value):
    src = f'''@T.prim_func
def main(A: T.Buffer((8,), "{dtype}"), B: T.Buffer((8,), "{dtype}"), C: T.Buffer((8,), "{dtype}")):
    z = T.{dtype}(0)
    for i in range(8):
        C[i] = {value}
'''
    func = tirfun.script.from_source(src)
    a = np.array([-0.0, 0.0, np.nan, -1.0, 1.0, -0.0, 0.0, np.nan], dtype)
    b = np.array([0.0, -0.0, 1.0, np.nan, -0.0, -0.0, 0.0, 2.0], dtype)
    interpreted, compiled = np.full(8, 7, dtype), np.full(8, 7, dtype)
    interp_run(func, a, b, interpreted)
    tirfun.build(func)(a, b, compiled)
    assert compare_arrays("C", interpreted, compiled, DataType(dtype)) is None, (interpreted, compiled)
