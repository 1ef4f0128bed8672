"""PrimFunc.specialize: parameters bound to values, as TVM's specialize."""

import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import NodeError
from tirfun.interp import run
from tirfun.nodes import IntImm, Var
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.tir import decl_buffer

HEADER = "from tirfun.script import tir as T\n"


def parse(text: str):
    return from_source(HEADER + text)


MATMUL = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle, n: T.int32):
    m = T.int32()
    A = T.match_buffer(a, [m, n])
    B = T.match_buffer(b, [m, n])
    C = T.match_buffer(c, [m, m])
    for i, j, k in T.grid(m, m, n):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')

MATMUL_128 = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, [128, 128])
    B = T.match_buffer(b, [128, 128])
    C = T.match_buffer(c, [128, 128])
    for i, j, k in T.grid(128, 128, 128):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')

MATMUL_M_128 = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    m = T.int32()
    A = T.match_buffer(a, [m, 128])
    B = T.match_buffer(b, [m, 128])
    C = T.match_buffer(c, [m, m])
    for i, j, k in T.grid(m, m, 128):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')

DIFFERENCE = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n - 1):
        with T.block("B"):
            vi = T.axis.spatial(n - 1, i)
            B[vi] = A[vi + 1] - A[vi]
''')

DIFFERENCE_16 = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,))
    B = T.match_buffer(b, (16,))
    for i in range(15):
        with T.block("B"):
            vi = T.axis.spatial(15, i)
            B[vi] = A[vi + 1] - A[vi]
''')


def param(func, name):
    (p,) = [p for p in func.params if p.name == name]
    return p


def test_the_docstring_example_runs_and_builds_to_the_general_functions_results():
    special = DIFFERENCE.specialize({"b": T.Buffer((16,))})
    assert_structural_equal(special, DIFFERENCE_16)
    assert verify(special) is special
    a = np.random.default_rng(0).random(16, dtype=np.float32)
    expected, got, built = np.zeros(16, "float32"), np.zeros(16, "float32"), np.zeros(16, "float32")
    run(DIFFERENCE, a, expected)
    run(special, a, got)
    tirfun.build(IRModule({"main": special}))(a, built)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(built, expected)
    np.testing.assert_array_equal(expected[:15], a[1:] - a[:-1])


def test_a_buffer_gives_every_variable_of_the_signature_its_value():
    a = param(MATMUL, "a")
    special = MATMUL.specialize({a: decl_buffer((128, 128))})
    assert_structural_equal(special, MATMUL_128)
    # n and m were read off the buffer; n was a parameter and leaves
    assert [p.name for p in special.params] == ["a", "b", "c"]


def test_a_scalar_takes_a_number_or_an_expression():
    n = param(MATMUL, "n")
    assert_structural_equal(MATMUL.specialize({n: 128}), MATMUL_M_128)
    assert_structural_equal(MATMUL.specialize({"n": IntImm("int32", 128)}), MATMUL_M_128)
    x = Var("x")
    symbolic = MATMUL.specialize({n: x * 8})
    assert symbolic.buffer_map[param(symbolic, "a")].shape[1] == x * 8
    assert "for i, j, k in T.grid(m, m, x * 8):" in symbolic.script()


def test_nothing_to_bind_returns_the_function_itself():
    assert MATMUL.specialize({}) is MATMUL


def test_strides_and_offset_take_their_values_and_constants_fold():
    func = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle, m: T.int32, n: T.int32, p: T.int32, q: T.int32):
    A = T.match_buffer(a, (m, n), "float32", strides=[p, 1], elem_offset=q)
    B = T.match_buffer(b, (m, n), "float32", strides=[p, 1], elem_offset=q)
    for i, j in T.grid(m, n):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
''')
    expected = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 6), "float32", strides=[8, 1], elem_offset=2)
    B = T.match_buffer(b, (4, 6), "float32", strides=[8, 1], elem_offset=2)
    for i, j in T.grid(4, 6):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
''')
    through_buffer = func.specialize({"a": decl_buffer((4, 6), strides=[8, 1], elem_offset=2)})
    through_scalars = func.specialize({"m": 4, "n": 6, "p": 8, "q": 2})
    assert_structural_equal(through_buffer, expected)
    assert_structural_equal(through_scalars, expected)
    # one parameter for another
    renamed = func.specialize({"q": param(func, "n")})
    assert renamed.buffer_map[param(renamed, "a")].elem_offset == param(func, "n")


def test_operators_whose_operands_became_constants_are_folded():
    func = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, [n // 8, 8], "int32")
    B = T.match_buffer(b, [n], "int32")
    for i in range(n - 1):
        with T.block("B"):
            vi = T.axis.spatial(n - 1, i)
            B[vi] = A[vi // 8, vi % 8] + (n + 1) * 42
''')
    expected = parse('''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, [2, 8], "int32")
    B = T.match_buffer(b, [16], "int32")
    for i in range(15):
        with T.block("B"):
            vi = T.axis.spatial(15, i)
            B[vi] = A[vi // 8, vi % 8] + 714
''')
    assert_structural_equal(func.specialize({"b": decl_buffer([16], "int32")}), expected)


def test_a_fold_that_would_divide_by_zero_or_overflow_is_not_made():
    func = parse('''
@T.prim_func
def main(B: T.Buffer((2,), "int32"), n: T.int32):
    B[0] = 7 // n
    B[1] = n * 2
''')
    by_zero = func.specialize({"n": 0})
    assert "B[0] = T.FloorDiv(7, 0)" in by_zero.script()
    big = func.specialize({"n": 2**31 - 1})
    assert "B[1] = T.Mul(2147483647, 2)" in big.script()


def test_the_declared_buffers_of_a_body_take_the_values_too():
    func = parse('''
@T.prim_func(private=True)
def main(A_data: T.handle("float32"), A_size: T.int32):
    A_buf = T.decl_buffer(A_size, "float32", data=A_data)
    for i in range(A_size):
        A_buf[i] = A_buf[i] * T.float32(2)
''')
    expected = parse('''
@T.prim_func(private=True)
def main(A_data: T.handle("float32")):
    A_buf = T.decl_buffer(16, "float32", data=A_data)
    for i in range(16):
        A_buf[i] = A_buf[i] * T.float32(2)
''')
    assert_structural_equal(func.specialize({"A_size": 16}), expected)


def test_a_buffer_parameter_may_take_another_parameters_buffer():
    func = parse('''
@T.prim_func(private=True)
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    A_flat = T.decl_buffer([256], "float32", data=A.data)
    B_flat = T.decl_buffer([256], "float32", data=B.data)
    for i in range(256):
        B_flat[i] = A_flat[i] * T.float32(2)
''')
    A = func.buffer_map[func.params[0]]
    special = func.specialize({func.params[1]: A})
    B = special.buffer_map[special.params[1]]
    # B now points where A does, and so does every view of it
    assert len(special.params) == 2
    assert B.data == func.params[0]
    assert "B_flat = T.decl_buffer((256,), data=A.data)" in special.script()


def test_a_pointer_that_takes_an_expression_is_bound_where_it_is_declared():
    func = parse('''
@T.prim_func(private=True)
def main(A_data: T.handle("float32"), B_data: T.handle("float32")):
    A_buf = T.decl_buffer(32, "float32", data=A_data)
    B_buf = T.decl_buffer(16, "float32", data=B_data)
    for i in range(16):
        B_buf[i] = A_buf[i] * T.float32(2)
''')
    expected = parse('''
@T.prim_func(private=True)
def main(A_data: T.handle("float32")):
    A_buf = T.decl_buffer(32, "float32", data=A_data)
    B_data: T.handle("float32") = T.address_of(A_buf[16])
    B_buf = T.decl_buffer(16, "float32", data=B_data)
    for i in range(16):
        B_buf[i] = A_buf[i] * T.float32(2)
''')
    A_buf = func.body.buffer
    assert_structural_equal(func.specialize({"B_data": tirfun.tir.address_of(A_buf[16])}), expected)


@pytest.mark.parametrize("make_map, message", [
    (lambda f: {"k": 4}, r"^specialize: k is not a parameter of the function \(its parameters: a, b, c, n\)$"),
    # names are identities: Var("n") is the parameter, an int64 n is not
    (lambda f: {Var("n", "int64"): 4}, r"^specialize: n is not a parameter"),
    (lambda f: {3: 4}, r"^specialize: the keys are parameters or their names, got int 3$"),
    (lambda f: {"a": 4}, r"^specialize: parameter a is viewed as buffer A; give it a Buffer, got int 4$"),
    (lambda f: {"n": decl_buffer((4,))}, r"^specialize: parameter n has no buffer; give it an expression of "
                                        r"type int32, got buffer buffer$"),
    (lambda f: {"n": "four"}, r"^specialize: parameter n takes an expression or a number, got str 'four'$"),
    (lambda f: {"n": 2**40}, r"^specialize: 1099511627776 does not fit parameter n's type int32$"),
    (lambda f: {"n": 0.5}, r"^specialize: parameter n is a int32; 0.5 is not a value of it$"),
    (lambda f: {"n": Var("x", "int64")}, r"^specialize: parameter n is a int32, the value x a int64$"),
    (lambda f: {"a": decl_buffer((4, 4, 4))}, r"^specialize: buffer A has 2 dimensions, the buffer given for "
                                            r"it 3$"),
    (lambda f: {"a": decl_buffer((4, 4), strides=[4, 1])}, r"^specialize: buffer A has 0 strides, the "
                                                           r"buffer given for it 2$"),
    (lambda f: {"a": decl_buffer((4, 4), data_alignment=16)}, r"^specialize: buffer A is aligned to 64 "
                                                              r"bytes, the buffer given for it to 16$"),
    (lambda f: {"a": decl_buffer((4, 4)), "n": 8}, r"^specialize: variable n takes two values: "),
    (lambda f: {"a": decl_buffer((4, 4)), "b": decl_buffer((8, 4))}, r"^specialize: variable m takes two "
                                                                     r"values: 4 \(dimension 0 of buffer A\) and "
                                                                     r"8 \(dimension 0 of buffer B\)$"),
    (lambda f: {"a": decl_buffer((Var("k", "int64"), 4))}, r"^specialize: dimension 0 of buffer A is m, a "
                                                         r"int32, and the buffer given has k there, a int64$"),
    (lambda f: [1], r"^specialize takes a mapping from parameters to values, got list$"),
])
def test_mistakes_are_node_errors_that_say_what_is_wrong(make_map, message):
    with pytest.raises(NodeError, match=message):
        MATMUL.specialize(make_map(MATMUL))


def test_a_dimension_that_is_not_a_variable_cannot_take_a_value():
    func = parse('''
@T.prim_func
def main(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 2,))
    for i in range(n * 2):
        with T.block("A"):
            vi = T.axis.spatial(n * 2, i)
            A[vi] = T.float32(0)
''')
    with pytest.raises(NodeError, match=r"^specialize: dimension 0 of buffer A is n \* 2, which is not a "
                                        r"variable, and the buffer given has 8 there"):
        func.specialize({"a": decl_buffer((8,))})
    # the same expression is no conflict
    assert func.specialize({"a": decl_buffer((param(func, "n") * 2,))}) is func


def test_a_literal_of_another_width_gives_its_number():
    assert_structural_equal(MATMUL.specialize({"a": decl_buffer((IntImm("int64", 4), 4))}),
                            MATMUL.specialize({"a": decl_buffer((4, 4))}))
    assert_structural_equal(MATMUL.specialize({"n": IntImm("int64", 4)}), MATMUL.specialize({"n": 4}))
