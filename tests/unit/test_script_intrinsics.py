"""TVM's expression and call intrinsics in TVMScript: each parses, prints
back as TVM prints it, verifies, and either runs (the interpreter agreeing
with numpy and compiled code agreeing with the interpreter) or is refused
by the interpreter and the CPU build with a message naming it and the
target it needs."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import BuildError, InterpError, ParseError
from tirfun.interp import run
from tirfun.lower.simplify import simplify_expr
from tirfun.nodes import AttrStmt, Call, FloorDiv
from tirfun.nodes.reducer import CommReducer
from tirfun.nodes.target import TargetConfig
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.tir.intrinsics import INTRINSICS, PACKED_RUNTIME

HEADER = "# from tirfun.script import tir as T\n\n@T.prim_func\n"


def func_text(params: str, body: str) -> str:
    """The printed text of a function with these parameters and body lines."""
    lines = "".join(f"    {line}\n" for line in body.strip("\n").split("\n"))
    return f"{HEADER}def main({params}):\n{lines}"


def round_trip(text: str):
    """Parse ``text``, check it prints back exactly and verifies."""
    func = from_source(text)
    assert func.script() == text.rstrip("\n")
    again = from_source(func.script())
    assert again == func
    verify(func)
    return func


def both(func, *arrays):
    """Interpreter and compiled results on copies of ``arrays``."""
    expected = [a.copy() for a in arrays]
    actual = [a.copy() for a in arrays]
    run(func, *expected)
    tirfun.build(func)(*actual)
    return expected, actual


# --------------------------------------------------------------------------
# intrinsics that need a GPU or TVM's runtime: parse, print, verify, refuse


def _sample_args(entry) -> str:
    parts = []
    if entry.dtype == "first":
        parts.append('"float32"')
    for i, p in enumerate(entry.params):
        if p.startswith("*"):
            parts += ["0", "1"]
        elif entry.dtype == "last" and i == len(entry.params) - 1:
            parts.append('"handle"')
        elif entry.dtype == f"arg:{i}":
            parts.append("A[0]")
        else:
            parts.append(str(i))
    return ", ".join(parts)


_PRINTED = {"tvm_call_packed": "call_packed", "tvm_call_cpacked": "call_cpacked",
            "tvm_call_packed_lowered": "call_packed_lowered",
            "tvm_call_cpacked_lowered": "call_cpacked_lowered"}
REFUSED = sorted(n for n, e in INTRINSICS.items() if e.needs is not None)
# GPU intrinsics with a meaning for one thread, which the interpreter gives
INTERPRETED = {"mma_fill"}


@pytest.mark.parametrize("name", REFUSED)
def test_target_bound_intrinsic_round_trips_and_is_refused_naming_the_target(name):
    entry = INTRINSICS[name]
    call = f"T.{_PRINTED.get(name, name)}({_sample_args(entry)})"
    func = round_trip(func_text('A: T.Buffer((4,), "float32")', call))
    (stmt_call,) = [func.body.value]
    assert isinstance(stmt_call, Call) and stmt_call.op == f"tir.{name}"
    need = entry.needs if entry.needs == PACKED_RUNTIME else f"target {entry.needs}"
    pattern = rf"T\.{name} .*needs {re.escape(need)}"
    if name not in INTERPRETED:
        with pytest.raises(InterpError, match=pattern):
            run(func, np.zeros(4, "float32"))
    with pytest.raises(BuildError, match=pattern):
        tirfun.build(func)


def test_gpu_intrinsics_name_cuda_and_keep_their_dtype():
    text = func_text('A: T.Buffer((4,), "float16")',
                     'T.ptx_ldmatrix("float16", T.bool(False), 4, ".b16", A[0], 0, A[1], 0)\n'
                     'T.mma_fill("float16", 8, A[0], 0)\n'
                     'T.tvm_warp_shuffle_down(T.tvm_warp_activemask(), A[0], 1, 32, 32)')
    func = round_trip(text)
    calls = [s.value for s in func.body.seq]
    assert [c.dtype for c in calls] == ["float16", "float16", "float16"]
    assert calls[2].args[0].dtype == "uint32"
    with pytest.raises(BuildError, match="T.ptx_ldmatrix is an inline PTX instruction: it needs target cuda"):
        tirfun.build(func)


def test_call_packed_is_printed_under_tvms_name():
    func = round_trip(func_text("x: T.int32", 'T.call_packed("my_func", x)'))
    assert func.body.value.op == "tir.tvm_call_packed"
    assert from_source(func_text("x: T.int32", 'T.tvm_call_packed("my_func", x)')) == func


def test_tvm_struct_get_takes_its_dtype_last():
    func = round_trip(func_text("h: T.handle", 'v: T.int64 = T.tvm_struct_get(h, 0, 4, "int64")\n'
                                "T.evaluate(v)"))
    assert func.body.value.dtype == "int64"


# --------------------------------------------------------------------------
# ceildiv


def test_ceildiv_builds_tvms_floordiv_and_prints_it():
    func = round_trip(func_text('A: T.Buffer((8,), "int32"), n: T.int32', "A[0] = (n + 4 - 1) // 4"))
    parsed = from_source(func_text('A: T.Buffer((8,), "int32"), n: T.int32', "A[0] = T.ceildiv(n, 4)"))
    assert parsed == func
    assert isinstance(func.body.value, FloorDiv)
    assert T.ceildiv(7, 2) == T.int32(4) and T.ceildiv(-7, 2) == T.int32(-3)


def test_ceildiv_refuses_floats():
    with pytest.raises(ParseError, match="ceildiv needs integer operands"):
        from_source(func_text('A: T.Buffer((8,), "float32")', "A[0] = T.ceildiv(A[1], A[2])"))


CEILDIV = from_source(func_text('A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), '
                                'C: T.Buffer((64,), "int32")',
                                "for i in range(64):\n    C[i] = T.ceildiv(A[i], B[i])"))


@settings(deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=64, max_size=64),
       st.lists(st.integers(1, 50), min_size=64, max_size=64))
def test_ceildiv_interpreted_and_compiled_agree_with_numpy(a, b):
    a = np.array(a, "int32")
    b = np.array(b, "int32")
    c = np.zeros(64, "int32")
    (_, _, interp_c), (_, _, compiled_c) = both(CEILDIV, a, b, c)
    np.testing.assert_array_equal(interp_c, -(-a // b))
    np.testing.assert_array_equal(compiled_c, interp_c)


# --------------------------------------------------------------------------
# hints: assume, likely (with dtype=), thread_invariant, profile markers


def test_hints_mean_their_value_and_compile():
    text = func_text('A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")',
                     "for i in range(16):\n"
                     "    T.assume(i < 16)\n"
                     "    T.start_profile_intrinsic(3)\n"
                     "    if T.likely(i < 10):\n"
                     "        B[i] = A[i] * T.float32(2.0)\n"
                     "    if T.tvm_thread_invariant(i < 12) and T.ignore_loop_partition(i >= 10):\n"
                     "        B[i] = T.float32(-1.0)\n"
                     "    T.end_profile_intrinsic(3)")
    func = round_trip(text)
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    (_, interp_b), (_, compiled_b) = both(func, a, b)
    expected = np.where(np.arange(16) < 10, a * 2, np.where(np.arange(16) < 12, -1.0, 0.0))
    np.testing.assert_array_equal(interp_b, expected.astype("float32"))
    np.testing.assert_array_equal(compiled_b, interp_b)


def test_likely_takes_and_drops_dtype():
    with_dtype = from_source(func_text("x: T.int32", 'if T.likely(x < 3, dtype="bool"):\n    T.evaluate(0)'))
    plain = from_source(func_text("x: T.int32", "if T.likely(x < 3):\n    T.evaluate(0)"))
    assert with_dtype == plain
    assert T.likely(True) == T.bool(True)  # TVM leaves a constant as it is


@pytest.mark.parametrize("call", [
    "T.shift_left(x, 2{})", "T.shift_right(x, 1{})", "T.bitwise_and(x, 6{})", "T.bitwise_or(x, 8{})",
    "T.bitwise_xor(x, 5{})", "T.bitwise_not(x{})",
])
def test_bitwise_calls_take_and_drop_dtype(call):
    # TVM's T wrappers of these intrinsics drop a dtype= keyword
    plain = func_text('A: T.Buffer((4,), "int32"), x: T.int32', f"A[0] = {call.format('')}")
    func = round_trip(plain)
    assert from_source(plain.replace(call.format(""), call.format(', dtype="int32"'))) == func
    a = np.zeros(4, "int32")
    (interp_a, _), (compiled_a, _) = both(func, a, np.int32(13))
    expected = {"shift_left": 13 << 2, "shift_right": 13 >> 1, "bitwise_and": 13 & 6,
                "bitwise_or": 13 | 8, "bitwise_xor": 13 ^ 5, "bitwise_not": ~13}[call.split("(")[0][2:]]
    assert interp_a[0] == expected and compiled_a[0] == expected


def test_ret_takes_and_drops_dtype():
    text = func_text("x: T.int8, y: T.int8", "T.ret(x * y)").replace("def main(x: T.int8, y: T.int8):",
                                                                      "def main(x: T.int8, y: T.int8) -> T.int8:")
    func = from_source(text)
    assert from_source(text.replace("T.ret(x * y)", 'T.ret(x * y, dtype="int8")')) == func
    assert run(func, np.int8(7), np.int8(3)) == 21


def test_address_of_takes_and_drops_dtype():
    text = func_text('A: T.Buffer((4,), "float32")', 'T.call_extern("int32", "consume", T.address_of(A[1]))')
    func = round_trip(text)
    assert from_source(text.replace("T.address_of(A[1])", 'T.address_of(A[1], dtype="handle")')) == func


# --------------------------------------------------------------------------
# extern C functions and LLVM intrinsics


def test_call_extern_with_dtype_keyword_runs_libm():
    keyword = from_source(func_text(
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")',
        'for i in range(8):\n    B[i] = T.call_extern("expf", A[i], dtype="float32") + '
        'T.call_pure_extern("fabsf", A[i], dtype="float32")'))
    positional = round_trip(func_text(
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")',
        'for i in range(8):\n    B[i] = T.call_extern("float32", "expf", A[i]) + '
        'T.call_pure_extern("float32", "fabsf", A[i])'))
    assert keyword == positional
    a = np.linspace(-2, 2, 8, dtype="float32")
    (_, interp_b), (_, compiled_b) = both(keyword, a, np.zeros(8, "float32"))
    expected = np.exp(a.astype("float64")) + np.abs(a)
    np.testing.assert_allclose(interp_b, expected, rtol=1e-6)
    np.testing.assert_allclose(compiled_b, interp_b, rtol=1e-6)


LLVM_EXACT = func_text(
    'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "int32")',
    'for i in range(16):\n'
    '    B[i] = T.call_llvm_pure_intrin("float32", "llvm.fabs", A[i]) + '
    'T.call_llvm_intrin("float32", "llvm.maxnum", A[i], T.float32(0.5)) + '
    'T.call_llvm_pure_intrin("float32", "llvm.floor", A[i]) + '
    'T.call_llvm_pure_intrin("float32", "llvm.sqrt", T.call_llvm_pure_intrin("float32", "llvm.fabs", A[i]))\n'
    '    C[i] = T.call_llvm_pure_intrin("int32", "llvm.ctpop", i) + '
    'T.call_llvm_pure_intrin("int32", "llvm.ctlz", i, T.bool(False))')


def test_llvm_intrinsics_compile_to_the_interpreters_results():
    func = round_trip(LLVM_EXACT)
    a = np.linspace(-3, 3, 16, dtype="float32")
    (_, interp_b, interp_c), (_, compiled_b, compiled_c) = both(
        func, a, np.zeros(16, "float32"), np.zeros(16, "int32"))
    expected = (np.abs(a) + np.maximum(a, np.float32(0.5)) + np.floor(a) + np.sqrt(np.abs(a)))
    np.testing.assert_array_equal(interp_b, expected)
    np.testing.assert_array_equal(compiled_b, interp_b)
    i = np.arange(16)
    popcount = np.array([bin(v).count("1") for v in i])
    clz = np.array([32 - int(v).bit_length() for v in i])
    np.testing.assert_array_equal(interp_c, popcount + clz)
    np.testing.assert_array_equal(compiled_c, interp_c)


def test_llvm_math_intrinsic_is_close_to_the_interpreter():
    func = from_source(func_text('A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")',
                                 'for i in range(16):\n'
                                 '    B[i] = T.call_llvm_pure_intrin("float32", "llvm.sin", A[i])'))
    a = np.linspace(-3, 3, 16, dtype="float32")
    (_, interp_b), (_, compiled_b) = both(func, a, np.zeros(16, "float32"))
    np.testing.assert_allclose(interp_b, np.sin(a.astype("float64")), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(compiled_b, interp_b, rtol=1e-6, atol=1e-7)


def test_unknown_llvm_intrinsics_are_refused_by_name():
    func = from_source(func_text('A: T.Buffer((4,), "float32")',
                                 'A[0] = T.call_llvm_pure_intrin("float32", "llvm.nosuch", A[1])'))
    with pytest.raises(InterpError, match="does not know the LLVM intrinsic 'llvm.nosuch'"):
        run(func, np.zeros(4, "float32"))
    with pytest.raises(BuildError, match="cannot call the LLVM intrinsic llvm.nosuch"):
        tirfun.build(func)
    wrong = from_source(func_text('A: T.Buffer((4,), "float32")',
                                  'A[0] = T.call_llvm_pure_intrin("float32", "llvm.copysign", A[1], 2)'))
    with pytest.raises(BuildError, match="llvm.copysign returning float32 takes arguments of "
                                         "float32, float32, got float32, int32"):
        tirfun.build(wrong)
    with pytest.raises(ParseError, match="names the LLVM intrinsic as a string"):
        from_source(func_text('A: T.Buffer((4,), "float32")',
                              'A[0] = T.call_llvm_pure_intrin("float32", T.float32(5), A[1])'))


def test_vector_halves_and_combination():
    func = round_trip(func_text(
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")',
        'B[0:4] = T.vectorhigh("float32x4", A[0:8])\n'
        'B[4:8] = T.vectorlow("float32x4", T.vectorcombine("float32x8", A[4:8], A[0:4]))'))
    a = np.arange(8, dtype="float32")
    (_, interp_b), (_, compiled_b) = both(func, a, np.zeros(8, "float32"))
    np.testing.assert_array_equal(interp_b, np.concatenate([a[4:], a[4:]]))
    np.testing.assert_array_equal(compiled_b, interp_b)


# --------------------------------------------------------------------------
# comm_reducer and the thread all-reduce it scopes

ALLREDUCE = func_text(
    'A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")',
    'red = T.allocate([1], "float32", "local")\n'
    'red_1 = T.decl_buffer((1,), data=red, scope="local")\n'
    'for tx in T.thread_binding(32, thread="threadIdx.x"):\n'
    '    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)]), "reduce_scope", '
    'T.reinterpret("handle", T.uint64(0))):\n'
    '        T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red_1[0], tx)\n'
    '    B[0] = red_1[0]')

ARGMAX_SCOPE = func_text(
    'A: T.Buffer((8,), "float32")',
    'T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0), '
    'T.Select(x1 >= y1, x1, y1)), [-1, T.float32("-inf")]), "reduce_scope", '
    'T.reinterpret("handle", T.uint64(0)))\n'
    'for i in range(8):\n'
    '    A[i] = A[i] + T.float32(1.0)')


def test_comm_reducer_round_trips_and_the_allreduce_needs_cuda():
    func = round_trip(ALLREDUCE)
    attr = func.body.body.body.body.seq[0]
    assert isinstance(attr, AttrStmt) and isinstance(attr.node, CommReducer)
    assert attr.node.dtypes == ("float32",)
    with pytest.raises(InterpError, match="T.tvm_thread_allreduce .*needs target cuda"):
        run(func, np.zeros(32, "float32"), np.zeros(1, "float32"))
    with pytest.raises(BuildError, match="T.tvm_thread_allreduce .*needs target cuda"):
        tirfun.build(func)


def test_tuple_comm_reducer_combines_like_argmax_and_its_scope_runs():
    func = round_trip(ARGMAX_SCOPE)
    reducer = func.body.node
    assert reducer.dtypes == ("int32", "float32")
    values = np.array([0.5, 3.0, -1.0, 3.0, 2.0], "float32")
    best = list(reducer.identity_element)
    for index, value in enumerate(values):
        best = [simplify_expr(e) for e in reducer(best, [T.int32(index), T.float32(float(value))])]
    assert [b.value for b in best] == [int(np.argmax(values)), float(values.max())]
    a = np.arange(8, dtype="float32")
    (interp_a,), (compiled_a,) = both(func, a)
    np.testing.assert_array_equal(interp_a, a + 1)
    np.testing.assert_array_equal(compiled_a, interp_a)


def test_comm_reducer_from_python_matches_the_parsed_one():
    func = from_source(ARGMAX_SCOPE)
    made = T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0), T.Select(x1 >= y1, x1, y1)),
                          [-1, T.float32("-inf")])
    assert structural_equal(made, func.body.node)
    renamed = T.comm_reducer(lambda a, b, c, d: (T.Select(b >= d, a, c), T.Select(b >= d, b, d)),
                             [-1, T.float32("-inf")])
    assert structural_equal(renamed, made)
    assert not structural_equal(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]),
                                T.comm_reducer(lambda x, y: x * y, [T.float32(0)]))


@pytest.mark.parametrize("text, message", [
    ("T.comm_reducer(lambda x, y, z: x + y, [T.float32(0)])", "takes 2 parameters"),
    ("T.comm_reducer(lambda x0, x1, y0, y1: x0 + y0, [0, T.float32(0)])", "returns 1 value"),
    ("T.comm_reducer(T.max, [T.float32(0)])", "must be written as a lambda"),
    ("T.comm_reducer(lambda x, y: x < y, [T.float32(0)])", "float32"),
])
def test_comm_reducer_mistakes_are_parse_errors(text, message):
    src = func_text('A: T.Buffer((1,), "float32")', f'with T.attr({text}, "reduce_scope", 0):\n    A[0] = A[0]')
    with pytest.raises(ParseError, match=message):
        from_source(src)


# --------------------------------------------------------------------------
# T.target


def test_target_values_print_as_tvm_exports_them():
    text = func_text('A: T.Buffer((8,), "float32")',
                     'T.func_attr({"target": T.target({"keys": ["cpu"], "kind": "llvm", "mcpu": "generic", "tag": ""})})\n'
                     'T.attr(T.target({"keys": ["cuda", "gpu"], "kind": "cuda", "tag": ""}), "target", 0)\n'
                     "for i in range(8):\n"
                     "    A[i] = T.float32(1.0)")
    func = round_trip(text)
    from_string = from_source(text.replace(
        'T.target({"keys": ["cpu"], "kind": "llvm", "mcpu": "generic", "tag": ""})',
        'T.target("llvm -mcpu=generic")'))
    assert from_string == func
    assert isinstance(func.attrs["target"], TargetConfig) and func.attrs["target"].kind == "llvm"
    a = np.zeros(8, "float32")
    tirfun.build(func)(a)
    np.testing.assert_array_equal(a, np.ones(8, "float32"))
    assert T.target("cuda", host="llvm").config["host"]["kind"] == "llvm"
    with pytest.raises(ParseError, match="T.target takes a target string"):
        from_source(func_text('A: T.Buffer((1,), "float32")', 'T.func_attr({"target": T.target(3)})'))


def test_math_of_the_namespace_is_unchanged():
    # the new names sit beside the math intrinsics without shadowing them
    assert math.isclose(float(T.float32(2.0).value), 2.0)
    assert T.ceildiv is not None and T.comm_reducer is not None


@pytest.mark.parametrize("body", [
    'B[i] = T.call_llvm_pure_intrin("float32", "llvm.fabs", A[i])',
    'C[i] = T.call_llvm_pure_intrin("int32", "llvm.ctlz", C[i], T.bool(False))',
    'B[i] = T.call_pure_extern("float32", "fabsf", A[i])',
    "if T.likely(i < 3):\n        B[i] = A[i]",
])
def test_intrinsics_in_vectorized_loops_compile_to_the_interpreters_results(body):
    func = from_source(func_text(
        'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32")',
        f"for i in T.vectorized(8):\n    {body}"))
    args = [np.linspace(-2, 2, 8).astype("float32"), np.zeros(8, "float32"), np.arange(8, dtype="int32")]
    expected, actual = both(func, *args)
    for x, y in zip(expected, actual):
        np.testing.assert_array_equal(y, x)


def test_node_constructors_build_the_node_named():
    explicit = from_source(func_text(
        'A: T.Buffer((4,), "float32")',
        'A[0] = T.BufferLoad(A, [1]) + T.Call("float32", "tir.exp", [T.FloatImm("float32", 1.5)])\n'
        'A[1] = T.Cast("float32", T.IntImm("int64", 3))\n'
        'T.call_extern("int32", "puts", T.StringImm("hi"))'))
    printed = round_trip(func_text(
        'A: T.Buffer((4,), "float32")',
        'A[0] = A[1] + T.exp(T.float32(1.5))\n'
        'A[1] = T.Cast("float32", T.int64(3))\n'
        'T.call_extern("int32", "puts", "hi")'))
    assert explicit == printed
    with pytest.raises(ParseError, match="T.BufferLoad loads from a buffer"):
        from_source(func_text('A: T.Buffer((4,), "float32")', "A[0] = T.BufferLoad(1, [0])"))


MMA_FILL = func_text(
    'A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")',
    'C = T.allocate([8], "float32", "local")\n'
    'Cb = T.decl_buffer((8,), data=C, scope="local")\n'
    "for i in range(8):\n"
    "    Cb[i] = A[i]\n"
    'T.mma_fill("float32", 4, C, 2)\n'
    "for i_1 in range(8):\n"
    "    B[i_1] = Cb[i_1]")


def test_mma_fill_zeroes_one_threads_fragment_in_the_interpreter():
    func = round_trip(MMA_FILL)
    a = np.arange(1, 9, dtype="float32")
    b = np.zeros(8, "float32")
    run(func, a, b)
    expected = a.copy()
    expected[2:6] = 0
    np.testing.assert_array_equal(b, expected)
    with pytest.raises(BuildError, match="T.mma_fill .*needs target cuda"):
        tirfun.build(func)
    beyond = from_source(MMA_FILL.replace('T.mma_fill("float32", 4, C, 2)', 'T.mma_fill("float32", 4, C, 6)'))
    with pytest.raises(InterpError, match="out-of-bounds store to buffer C"):
        run(beyond, a, b)
    wrong = from_source(MMA_FILL.replace('T.mma_fill("float32", 4, C, 2)', 'T.mma_fill("float16", 4, C, 2)'))
    with pytest.raises(InterpError, match="T.mma_fill of float16 values into C, which holds float32"):
        run(wrong, a, b)


DP4A = func_text(
    'A: T.Buffer((16,), "int8"), B: T.Buffer((16,), "uint8"), C: T.Buffer((4,), "int32")',
    "for i in range(4):\n"
    '    C[i] = T.dp4a("int32", A[i * 4:i * 4 + 4], B[i * 4:i * 4 + 4], C[i])')


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dp4a_interpreted_and_compiled_agree_with_numpy(seed):
    func = from_source(DP4A)
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, 16).astype("int8")
    b = rng.integers(0, 256, 16).astype("uint8")
    c = rng.integers(-2**31, 2**31, 4).astype("int32")
    (_, _, interp_c), (_, _, compiled_c) = both(func, a, b, c)
    total = c.astype(np.int64) + (a.astype(np.int64) * b).reshape(4, 4).sum(axis=1)
    expected = ((total + 2**31) % 2**32 - 2**31).astype("int32")  # int32 wraps around
    np.testing.assert_array_equal(interp_c, expected)
    np.testing.assert_array_equal(compiled_c, interp_c)


def test_dp4a_reads_tvms_call_and_its_printed_form():
    printed = round_trip(DP4A)
    called = from_source(DP4A.replace('T.dp4a("int32", ', "T.dp4a("))
    assert called == printed
    with pytest.raises(ParseError, match="T.dp4a multiplies int8x4 or uint8x4 vectors"):
        from_source(DP4A.replace("A[i * 4:i * 4 + 4], B", "C[i], B"))


def test_reducers_and_targets_print_on_their_own():
    assert T.comm_reducer(lambda x, y: x + y, [T.float32(0)]).script() == \
        "T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])"
    assert T.target("cuda").script() == 'T.target({"keys": ["cuda", "gpu"], "kind": "cuda", "tag": ""})'


def test_a_decorated_function_reads_the_combiner_lambda_without_running_it():
    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        with T.attr(T.comm_reducer(lambda a, b: T.max(a, b), [T.float32(0)]), "reduce_scope",
                    T.reinterpret("handle", T.uint64(0))):
            for i in range(8):
                A[i] = T.Cast("float32", T.ceildiv(i, 3))

    reducer = main.body.node
    assert isinstance(reducer, CommReducer) and [v.name for v in reducer.lhs + reducer.rhs] == ["a", "b"]
    a = np.zeros(8, "float32")
    (interp_a,), (compiled_a,) = both(main, a)
    np.testing.assert_array_equal(interp_a, -(-np.arange(8) // 3))
    np.testing.assert_array_equal(compiled_a, interp_a)


Q_MULTIPLY = func_text(
    'A: T.Buffer((64,), "int32"), M: T.Buffer((64,), "int32"), S: T.Buffer((64,), "int32"), '
    'C: T.Buffer((64,), "int32"), D: T.Buffer((64,), "int32")',
    "for i in range(64):\n"
    "    C[i] = T.q_multiply_shift(A[i], M[i], 31, S[i])\n"
    "    D[i] = T.q_multiply_shift(A[i], 1073741824, 31, -3)")


def _q_multiply_reference(x: int, y: int, q: int, s: int) -> int:
    """TVM's definition, in Python integers: shift left by s when s > 0,
    multiply in 64 bits, round and shift right by q (+ -s when s < 0)."""
    x = int(x) << max(s, 0)
    x *= int(y)
    total = max(-s, 0) + q
    x = (x + (1 << (total - 1))) >> total
    return (x + 2**31) % 2**32 - 2**31


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_q_multiply_shift_interpreted_and_compiled_agree_with_tvms_definition(seed):
    func = round_trip(Q_MULTIPLY)
    rng = np.random.default_rng(seed)
    a = rng.integers(-2**20, 2**20, 64).astype("int32")
    m = rng.integers(2**30, 2**31 - 1, 64).astype("int32")
    s = rng.integers(-8, 8, 64).astype("int32")
    zeros = np.zeros(64, "int32")
    expected, actual = both(func, a, m, s, zeros, zeros)
    reference = [_q_multiply_reference(x, y, 31, int(k)) for x, y, k in zip(a, m, s)]
    np.testing.assert_array_equal(expected[3], reference)
    # y = 1 << 30 is TVM's power-of-two shortcut: a rounding shift right by 1 - s
    np.testing.assert_array_equal(expected[4], (a.astype(np.int64) + (1 << 3)) >> 4)
    for x, y in zip(expected, actual):
        np.testing.assert_array_equal(y, x)


def test_q_multiply_shift_per_axis_takes_the_shifts_apart():
    func = round_trip(func_text(
        'A: T.Buffer((64,), "int32"), M: T.Buffer((64,), "int32"), S: T.Buffer((64,), "int32"), '
        'C: T.Buffer((64,), "int32")',
        "for i in range(64):\n"
        "    C[i] = T.q_multiply_shift_per_axis(A[i], M[i], T.max(S[i], 0), T.max(0 - S[i], 0), "
        "31, S[i] > 0, S[i] < 0)"))
    rng = np.random.default_rng(7)
    a = rng.integers(-2**20, 2**20, 64).astype("int32")
    m = rng.integers(2**30, 2**31 - 1, 64).astype("int32")
    s = rng.integers(-8, 8, 64).astype("int32")
    expected, actual = both(func, a, m, s, np.zeros(64, "int32"))
    reference = [_q_multiply_reference(x, y, 31, int(k)) for x, y, k in zip(a, m, s)]
    np.testing.assert_array_equal(expected[3], reference)
    np.testing.assert_array_equal(actual[3], expected[3])


def test_a_gpu_intrinsic_the_cuda_build_lacks_says_so_on_target_cuda():
    func = from_source('from tirfun.script import tir as T\n'
                       '@T.prim_func\n'
                       'def main(A: T.Buffer((32,), "uint32")):\n'
                       '    for i in T.thread_binding(32, thread="threadIdx.x"):\n'
                       '        A[i] = T.tvm_warp_activemask()\n')
    with pytest.raises(BuildError, match="T.tvm_warp_activemask is a warp-level operation: tirfun's "
                                         "CUDA build does not support it yet"):
        tirfun.build(func, target="cuda")


def test_an_llvm_intrinsic_named_by_its_numeric_id_parses_and_the_builds_refuse_it():
    # older TVM printed LLVM's numeric intrinsic id; the numbering is LLVM's
    # own, so the program parses and prints back, and the builds say why not
    from tirfun.script import from_source

    text = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.call_llvm_pure_intrin("float32", T.uint32(97), T.uint32(1), A[i])
'''
    func = from_source(text)
    assert 'T.call_llvm_pure_intrin("float32", T.uint32(97), T.uint32(1), A[i])' in func.script()
    assert structural_equal(from_source(func.script()), func)
    with pytest.raises(BuildError, match="needs the intrinsic's name"):
        tirfun.build(func)
    with pytest.raises(InterpError, match="does not know the LLVM intrinsic None"):
        tirfun.interp.run(func, np.zeros(4, "float32"), np.zeros(4, "float32"))
    with pytest.raises(ParseError, match="names the LLVM intrinsic as a string"):
        from_source(text.replace("T.uint32(97)", "A[0]"))


def test_a_call_of_a_dtype_its_T_spelling_would_not_give_prints_as_the_call_node():
    text = HEADER + 'def main():\n    T.Call("void", "tir.tvm_call_packed", ["dummy_function_name"])\n'
    func = round_trip(text)
    assert func.body.value.dtype == "void"
    # the int32 call that T.call_packed makes keeps its spelling
    assert "T.call_packed(" in round_trip(HEADER + 'def main():\n    T.call_packed("f")\n').script()


def test_tvm_names_a_script_may_use_through_import_tvm():
    text = ('import tvm\nfrom tvm.script import tir as T\n\n@T.prim_func\ndef main():\n'
            '    T.func_attr({"target": tvm.target.Target("llvm", host="llvm")})\n'
            '    T.Call("void", tvm.ir.Op.get("tir.tvm_call_packed"), ["f"])\n')
    func = from_source(text)
    spelled = from_source(HEADER + 'def main():\n    T.func_attr({"target": T.target("llvm", host="llvm")})\n'
                          '    T.Call("void", "tir.tvm_call_packed", ["f"])\n')
    assert func == spelled


def test_tvm_tir_functions_in_a_script_read_from_text():
    head = 'import tvm\nfrom tvm.script import tir as T\n\n@T.prim_func\n'
    body = ('def main(A: T.Buffer((2,), "bool"), B: T.Buffer((2,), "float32")):\n'
            '    A[0] = A[1] == {true}\n'
            '    B[0] = {exp}(B[1]) + {one}\n')
    with_tvm = from_source(head + body.format(true='tvm.tir.const(True, "bool")', exp="tvm.tir.exp",
                                               one='tvm.tir.const(1, "float32")'))
    with_t = from_source(head + body.format(true="T.bool(True)", exp="T.exp", one="T.float32(1)"))
    assert with_tvm == with_t
    a, b = np.array([False, True]), np.array([0, 1], "float32")
    run(with_tvm, a, b)
    assert a[0] and abs(b[0] - (np.e + 1)) < 1e-6


def test_a_reinterpret_changing_the_size_prints_as_the_call_node():
    # T.reinterpret refuses it; T.call_intrin builds it, as TVM's IR holds it
    text = (HEADER + 'def main(A: T.Buffer((4,), "uint32"), B: T.Buffer((4,), "uint8")):\n'
            '    B[0] = T.call_intrin("uint8", "tir.reinterpret", A[0])\n')
    func = from_source(text)
    printed = func.script()
    assert 'T.Call("uint8", "tir.reinterpret", [A[0]])' in printed
    assert from_source(printed) == func
