"""The simplification pass: each rule, and that it never changes a value."""

import ml_dtypes
import numpy as np
import pytest

from tirfun import IRModule, tir
from tirfun.analysis.traversal import walk
from tirfun.interp import run
from tirfun.lower import simplify
from tirfun.lower.simplify import simplify_expr, simplify_stmt
from tirfun.nodes import FloatImm, For, IfThenElse, IntImm, Var
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

i, j, k = Var("i"), Var("j"), Var("k")
x = Var("x", "float32")
u = Var("u", "uint32")
ENV = {i: (0, 7), j: (0, 3), k: (0, 255)}


def text(e) -> str:
    return simplify_expr(e, ENV).script()


@pytest.mark.parametrize("expr, expected", [
    (tir.Add(IntImm("int32", 2), IntImm("int32", 3)), "5"),
    (tir.Mul(i, IntImm("int32", 1)), "i"),
    (tir.Mul(IntImm("int32", 1), i), "i"),
    (tir.Add(i, IntImm("int32", 0)), "i"),
    (tir.Sub(i, IntImm("int32", 0)), "i"),
    (tir.Mul(i, IntImm("int32", 0)), "0"),
    (tir.Sub(i, i), "0"),
    ((i * 4 + j) * 8 + k - j * 8, "i * 32 + k"),
    (tir.floordiv(i * 4 + j, 4), "i"),
    (tir.floormod(i * 4 + j, 4), "j"),
    (tir.floordiv(i * 8 + j + 4, 4), "i * 2 + 1"),
    (tir.floordiv(i * 4 + k, 4), "i + k // 4"),
    (tir.floormod(i * 4 + k, 4), "k % 4"),
    (tir.floordiv(j, 1), "j"),
    (tir.floormod(j, 1), "0"),
    (tir.floordiv(k, 8) * 8 + tir.floormod(k, 8), "k"),
    (tir.truncdiv(k - 9, 8) * 16 + tir.truncmod(k - 9, 8) * 2, "k * 2 - 18"),
    (tir.truncdiv(i * 4 + j, 4), "i"),
    (tir.min(j, i + 4), "j"),
    (tir.max(j, i + 4), "i + 4"),
])
def test_integer_rules(expr, expected):
    assert text(expr) == expected


@pytest.mark.parametrize("expr, expected", [
    (tir.LT(j, IntImm("int32", 4)), "T.bool(True)"),
    (tir.GE(i, IntImm("int32", 8)), "T.bool(False)"),
    (tir.LT(i * 4 + j, IntImm("int32", 32)), "T.bool(True)"),
    (tir.EQ(i * 4 + j, IntImm("int32", 40)), "T.bool(False)"),
    (tir.NE(i, i), "T.bool(False)"),
    # a sum at its smallest value: each variable at its lower bound
    (tir.EQ(k * 4 + j, IntImm("int32", 0)), "k == 0 and j == 0"),
    (tir.LE(i * 4 + j, IntImm("int32", 0)), "i == 0 and j == 0"),
    (tir.And(tir.LT(j, IntImm("int32", 4)), tir.LT(i, k)), "i < k"),
])
def test_conditions_proven_from_bounds(expr, expected):
    assert text(expr) == expected


def test_float_rules_keep_every_value_exact():
    assert text(x * FloatImm("float32", 1.0)) == "x"
    assert text(x / FloatImm("float32", 1.0)) == "x"
    assert text(x - FloatImm("float32", 0.0)) == "x"
    # x + 0.0 turns -0.0 into 0.0, so it stays
    kept = tir.Add(x, FloatImm("float32", 0.0))
    assert simplify_expr(kept, ENV) == kept
    # x * 0.0 is NaN for an infinite x, so it stays
    kept = tir.Mul(x, FloatImm("float32", 0.0))
    assert simplify_expr(kept, ENV) == kept


def test_float_folding_rounds_like_the_dtype():
    a, b = FloatImm("float32", 0.1), FloatImm("float32", 0.2)
    folded = simplify_expr(tir.Add(a, b))
    assert isinstance(folded, FloatImm)
    assert folded.value == float(np.float32(0.1) + np.float32(0.2))


@pytest.mark.parametrize("literal, target, expected", [
    # found by the soak: the float32 literal 0.1 widens to float32's 0.1
    (FloatImm("float32", 0.1), "float64", float(np.float64(np.float32(0.1)))),
    # 2**24 + 1 is not a float32: the literal is 2**24, and so is the int
    (FloatImm("float32", 16777217.0), "int32", 16777216),
    # 1e-10 is 0 in float16, so its cast to bool is false
    (FloatImm("float16", 1e-10), "bool", 0),
    (FloatImm("float16", 0.1), "float32", float(np.float32(np.float16(0.1)))),
    # bfloat16 folds too, rounded as ml_dtypes rounds it, both ways
    (FloatImm("bfloat16", 0.1), "float32", float(np.float32(ml_dtypes.bfloat16(0.1)))),
    (FloatImm("float32", 1.00390625), "bfloat16", float(ml_dtypes.bfloat16(np.float32(1.00390625)))),
    (FloatImm("bfloat16", 3.7), "int8", 3),
])
def test_a_cast_of_a_literal_folds_the_value_its_dtype_holds(literal, target, expected):
    folded = simplify_expr(tir.Cast(target, literal))
    assert folded.value == expected
    f = from_source(f"""@T.prim_func
def main(B: T.Buffer((1,), "{target}")):
    for i in range(1):
        B[i] = T.Cast("{target}", T.{literal.dtype}({literal.value!r}))
""")
    assert_equivalent(f, simplify(IRModule({"main": f}))["main"])


@pytest.mark.parametrize("op, dtype, a, b", [
    # the interpreter's min and max keep the second operand on a tie: -0.0 here
    (tir.Min, "float32", 0.0, -0.0),
    (tir.Max, "float32", -0.0, 0.0),
    # bfloat16 and float8 fold too, rounded once from the exact result
    (tir.Add, "bfloat16", 1.0, 0.00390625),  # a tie, to even: 1.0
    (tir.Add, "bfloat16", 1.0, 0.01171875),
    (tir.Div, "bfloat16", 1.0, 3.0),
    (tir.Mul, "float8_e4m3fn", 1.375, 1.375),
    (tir.Sub, "float8_e5m2", 3.0, 0.375),
    (tir.Mul, "float16", 0.1, 0.3),
])
def test_arithmetic_of_two_literals_folds_as_the_interpreter_computes(op, dtype, a, b):
    folded = simplify_expr(op(FloatImm(dtype, a), FloatImm(dtype, b)))
    assert isinstance(folded, FloatImm)
    name = {tir.Min: "T.min", tir.Max: "T.max"}.get(op)
    sign = {tir.Add: "+", tir.Sub: "-", tir.Mul: "*", tir.Div: "/"}.get(op)
    la, lb = f"T.{dtype}({a!r})", f"T.{dtype}({b!r})"
    value = f"{name}({la}, {lb})" if name else f"{la} {sign} {lb}"
    f = from_source(f"""@T.prim_func
def main(B: T.Buffer((1,), "{dtype}")):
    for i in range(1):
        B[i] = {value}
""")
    out = np.zeros(1, ml_dtypes.bfloat16 if dtype == "bfloat16" else getattr(ml_dtypes, dtype, dtype))
    run(f, out)
    computed = float(out[0])
    assert folded.value == computed
    assert np.signbit(folded.value) == np.signbit(computed)
    assert_equivalent(f, simplify(IRModule({"main": f}))["main"])


def test_integer_folding_wraps_like_the_dtype():
    folded = simplify_expr(tir.Add(IntImm("int8", 100), IntImm("int8", 100)))
    expected = (np.array([100], np.int8) + np.array([100], np.int8))[0]
    assert folded == IntImm("int8", int(expected))


def test_unsigned_comparisons_are_not_decided_by_signed_bounds():
    e = tir.LT(u - IntImm("uint32", 1), IntImm("uint32", 5))
    assert simplify_expr(e, {u: (0, 3)}).script() != "T.bool(True)"


def test_statement_rules():
    A = tir.decl_buffer((8,), "float32", name="A")
    store = tir.BufferStore(A, FloatImm("float32", 1.0), [i])
    # a loop of extent 1 becomes its body with the variable replaced
    one = simplify_stmt(For(i, 3, 1, "serial", store))
    assert one.script() == "A[3] = T.float32(1.0)"
    # a loop of extent 0 disappears
    assert simplify_stmt(For(i, 0, 0, "serial", store)).script() == "T.evaluate(0)"
    # a test proven true by the loop bounds is removed
    guarded = For(i, 0, 8, "serial", IfThenElse(tir.LT(i, IntImm("int32", 8)), store))
    out = simplify_stmt(guarded)
    assert not any(isinstance(n, IfThenElse) for n in walk(out))


def test_simplify_preserves_meaning_on_a_lowered_program():
    src = """
@T.prim_func
def main(A: T.Buffer((6, 8), "int32"), B: T.Buffer((48,), "int32")):
    for f in range(48):
        with T.block("B"):
            vi = T.axis.spatial(6, f // 8)
            vj = T.axis.spatial(8, f % 8)
            B[vi * 8 + vj] = A[vi, vj] * 1 + 0
"""
    f = from_source(src)
    from tirfun.lower import lower_blocks

    lowered = lower_blocks(IRModule({"main": f}))
    out = simplify(lowered)
    loads = [n for n in walk(out["main"].body) if isinstance(n, tir.BufferStore)]
    assert loads[0].value.script() == "A[f // 8, f % 8]"
    assert loads[0].indices[0].script() == "f"
    assert_equivalent(f, out["main"])
