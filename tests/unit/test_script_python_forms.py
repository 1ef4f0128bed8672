"""Python forms that TVM's parser accepts in TensorIR: unpacking with ``*``
and ``**``, a name or a starred name bound to several loops of a grid, a
tuple of indices, Python's builtins in a decorated function, ``and``/``or``
of vector conditions, a no-op ``T.reinterpret`` and a macro defined in a
class. Each parses to the function written out by hand, prints and parses
back to the same function, and runs in the interpreter as numpy says."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.analysis.equality import assert_structural_equal, structural_equal
from tirfun.errors import ParseError
from tirfun.interp import run as interp_run
from tirfun.nodes import Call
from tirfun.script import from_source
from tirfun.script import tir as T

HEAD = "from tirfun.script import tir as T\n"


def roundtrip(func):
    """``func`` prints and parses back to an equal function; returns it."""
    printed = func.script()
    again = from_source(printed)
    assert structural_equal(func, again), printed
    assert again.script() == printed
    return func


def run(func, *arrays):
    """The arrays after the interpreter ran ``func`` on copies of them."""
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    interp_run(func, *out)
    return out


# ---------------------------------------------------------------- * and ** unpacking

DIMS = (3, 4)


def test_starred_items_in_shapes_and_grids():
    @T.prim_func(private=True)
    def starred(a: T.handle):
        A = T.match_buffer(a, [2, *DIMS], "int32")
        for i, j, k in T.grid(*A.shape):
            A[i, j, k] = i * 100 + j * 10 + k

    @T.prim_func(private=True)
    def written_out(A: T.Buffer((2, 3, 4), "int32")):
        for i, j, k in T.grid(2, 3, 4):
            A[i, j, k] = i * 100 + j * 10 + k

    assert_structural_equal(starred, written_out)
    roundtrip(starred)
    (a,) = run(starred, np.zeros((2, 3, 4), "int32"))
    i, j, k = np.indices((2, 3, 4))
    np.testing.assert_array_equal(a, i * 100 + j * 10 + k)


def test_starred_items_in_text():
    text = HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(*A.shape):
        B[(*[i], j)] = T.max(*[A[i, j], T.float32(0)])
'''
    f = roundtrip(from_source(text))
    expected = from_source(HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
    for i, j in T.grid(2, 3):
        B[i, j] = T.max(A[i, j], T.float32(0))
''')
    assert_structural_equal(f, expected)
    a = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    _, b = run(f, a, np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_double_star_keywords():
    options = {"dtype": "int32", "scope": "global"}

    @T.prim_func(private=True)
    def spread(a: T.handle):
        A = T.match_buffer(a, (4,), **options)
        for i in range(4):
            A[i] = i

    text = HEAD + '''
@T.prim_func(private=True)
def spread(a: T.handle):
    A = T.match_buffer(a, (4,), **{"dtype": "int32"})
    for i in range(4):
        A[i] = i
'''
    assert_structural_equal(spread, from_source(text))
    (a,) = run(roundtrip(spread), np.zeros(4, "int32"))
    np.testing.assert_array_equal(a, np.arange(4))


@pytest.mark.parametrize("line, message", [
    ("    T.evaluate(T.max(*n))", "only a tuple or a list can be unpacked with *, got the int32 variable n"),
    ("    A = T.match_buffer(a, (4,), **{1: 2})",
     "only a dict with string keys can be unpacked with **, got a dict"),
    ('    A = T.match_buffer(a, (4,), dtype="int32", **{"dtype": "int8"})',
     "the keyword argument 'dtype' is given twice"),
])
def test_unpacking_errors(line, message):
    text = HEAD + f"@T.prim_func\ndef f(a: T.handle, n: T.int32):\n{line}\n"
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert info.value.message == message


# ---------------------------------------------------------------- loop targets


def test_one_name_for_the_loops_of_a_grid():
    text = HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((2, 3, 4), "int32")):
    for iters in T.grid(*A.shape):
        A[iters] = iters[0] * 100 + iters[1] * 10 + iters[2]
'''
    f = roundtrip(from_source(text))
    assert [loop.loop_var.name for loop in (f.body, f.body.body, f.body.body.body)] == \
        ["iters_0", "iters_1", "iters_2"]
    (a,) = run(f, np.zeros((2, 3, 4), "int32"))
    i, j, k = np.indices((2, 3, 4))
    np.testing.assert_array_equal(a, i * 100 + j * 10 + k)


def test_starred_loop_target_in_a_reduction():
    @T.prim_func(private=True)
    def starred(a: T.handle, b: T.handle):
        A = T.match_buffer(a, [*DIMS, 5], "int32")
        B = T.match_buffer(b, DIMS, "int32")
        for *spatial, reduction in T.grid(*A.shape):
            with T.block("reduce"):
                vs = T.axis.remap("SS", spatial)
                vr = T.axis.reduce(5, reduction)
                with T.init():
                    B[vs] = T.int32(0)
                B[vs] = B[vs] + A[(*vs, vr)]

    @T.prim_func(private=True)
    def written_out(A: T.Buffer((3, 4, 5), "int32"), B: T.Buffer((3, 4), "int32")):
        for i, j, k in T.grid(3, 4, 5):
            with T.block("reduce"):
                vi, vj = T.axis.remap("SS", [i, j])
                vk = T.axis.reduce(5, k)
                with T.init():
                    B[vi, vj] = T.int32(0)
                B[vi, vj] = B[vi, vj] + A[vi, vj, vk]

    assert_structural_equal(starred, written_out)
    roundtrip(starred)
    a = np.arange(60, dtype="int32").reshape(3, 4, 5)
    _, b = run(starred, a, np.full((3, 4), 7, "int32"))
    np.testing.assert_array_equal(b, a.sum(axis=2))


@pytest.mark.parametrize("target, message", [
    ("i, j", "T.grid makes 3 loop variables but 2 names are given"),
    ("i, j, k, m, *rest", "T.grid makes 3 loop variables but 4 names are given"),
    ("*i, *j", "a for statement unpacks into at most one starred name"),
    ("i, *i", "'i' is used twice as a loop variable"),
    ("i, (j, k), m", "a loop variable must be a name"),
])
def test_loop_target_errors(target, message):
    text = HEAD + f"@T.prim_func\ndef f():\n    for {target} in T.grid(2, 3, 4):\n        T.evaluate(0)\n"
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert info.value.message == message


# ---------------------------------------------------------------- Python's builtins


def test_builtins_in_a_decorated_function():
    @T.prim_func(private=True)
    def with_builtins(a: T.handle):
        A = T.match_buffer(a, [len(DIMS), *DIMS], "int32")
        for i, j, k in T.grid(*A.shape):
            A[i, j, k] = T.int32(1 + len(A.shape) + max(DIMS) + int(2.5))

    @T.prim_func(private=True)
    def evaluated(A: T.Buffer((2, 3, 4), "int32")):
        for i, j, k in T.grid(2, 3, 4):
            A[i, j, k] = 10

    assert_structural_equal(with_builtins, evaluated)
    (a,) = run(roundtrip(with_builtins), np.zeros((2, 3, 4), "int32"))
    np.testing.assert_array_equal(a, np.full((2, 3, 4), 10))


def test_a_builtin_failing_is_reported_where_it_is_called():
    with pytest.raises(ParseError, match=r"max\(\.\.\.\) failed") as info:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = max(A[1], A[2])
    assert info.value.source_line.strip() == "A[0] = max(A[1], A[2])"


# ---------------------------------------------------------------- and / or of vectors


def test_and_or_of_vector_conditions_are_lane_wise():
    text = HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32")):
    for i in range(2):
        C[i * 4:i * 4 + 4] = T.Select((A[i * 4:i * 4 + 4] > 0) and (B[i * 4:i * 4 + 4] > 0) or (i == 1),
                                      T.Broadcast(1, 4), T.Broadcast(0, 4))
'''
    f = roundtrip(from_source(text))
    select = f.body.body.value
    assert isinstance(select.condition, Call) and select.condition.op == "tir.bitwise_or"
    assert select.condition.args[0].op == "tir.bitwise_and"
    a = np.array([1, -1, 2, -2, 1, -1, 2, -2], "float32")
    b = np.array([1, 1, -1, -1, 1, 1, -1, -1], "float32")
    _, _, c = run(f, a, b, np.zeros(8, "int32"))
    expected = ((a > 0) & (b > 0)) | (np.arange(8) >= 4)
    np.testing.assert_array_equal(c, expected.astype("int32"))
    built = np.zeros(8, "int32")
    tirfun.build(f, target="llvm")(a, b, built)
    np.testing.assert_array_equal(built, c)


def test_not_of_a_vector_condition():
    f = from_source(HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "int32")):
    C[0:4] = T.Select(not (A[0:4] > 0), T.Broadcast(1, 4), T.Broadcast(0, 4))
''')
    a = np.array([1, -1, 0, 2], "float32")
    _, c = run(roundtrip(f), a, np.zeros(4, "int32"))
    np.testing.assert_array_equal(c, [0, 1, 1, 0])
    built = np.zeros(4, "int32")
    tirfun.build(f, target="llvm")(a, built)
    np.testing.assert_array_equal(built, c)


def test_select_condition_lanes_must_match_the_values():
    with pytest.raises(ParseError) as info:
        from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32")):
    C[0:4] = T.Select(A[0:8] > 0, T.Broadcast(1, 4), T.Broadcast(0, 4))
''')
    assert info.value.message == ("the condition of T.Select must be a bool condition or a vector "
                                  "of 4 bools, got a boolx8 expression")


def test_and_of_scalar_conditions_stays_logical():
    f = from_source(HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    for i in range(4):
        A[i] = T.Select(i > 0 and i < n, 1, 0)
''')
    assert type(f.body.body.value.condition).__name__ == "And"
    a, _ = run(roundtrip(f), np.zeros(4, "int32"), 3)
    np.testing.assert_array_equal(a, [0, 1, 1, 0])


def test_and_of_vectors_of_different_lanes_is_refused():
    with pytest.raises(ParseError) as info:
        from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    T.evaluate((A[0:4] > 0) and (A[0:8] > 0))
''')
    assert info.value.line == 5


# ---------------------------------------------------------------- reinterpret


def test_reinterpret_to_the_same_type_is_the_value():
    f = from_source(HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "int32")):
    for i in range(4):
        B[i] = T.reinterpret("float32", A[i])
        C[i] = T.reinterpret("int32", A[i])
''')
    expected = from_source(HEAD + '''
@T.prim_func(private=True)
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "int32")):
    for i in range(4):
        B[i] = A[i]
        C[i] = T.reinterpret("int32", A[i])
''')
    assert_structural_equal(f, expected)
    a = np.array([1.5, -2.0, 0.0, 3.25], "float32")
    _, b, c = run(roundtrip(f), a, np.zeros(4, "float32"), np.zeros(4, "int32"))
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(c, a.view("int32"))


# ---------------------------------------------------------------- macros in classes


class Copier:
    """A helper whose macro reads its own fields, as a method does."""

    def __init__(self, n: int):
        self.n = n

    @T.macro
    def copy(self, dst, src):
        for i in range(self.n):
            dst[i] = src[i] + T.float32(1)


def test_macro_read_from_an_instance_is_bound_to_it():
    copier = Copier(3)

    @T.prim_func(private=True)
    def with_macro(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        copier.copy(B, A)

    @T.prim_func(private=True)
    def written_out(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(3):
            B[i] = A[i] + T.float32(1)

    assert_structural_equal(with_macro, written_out)
    a = np.arange(4, dtype="float32")
    _, b = run(roundtrip(with_macro), a, np.zeros(4, "float32"))
    np.testing.assert_array_equal(b, [1, 2, 3, 0])


# ---------------------------------------------------------------- modules


def test_a_class_without_functions_is_an_empty_module():
    from tirfun.nodes import IRModule
    from tirfun.script import ir as I

    @I.ir_module
    class Blank:
        pass

    assert isinstance(Blank, IRModule) and len(Blank.functions) == 0
    assert from_source(Blank.script()) == Blank


def test_a_function_of_a_module_class_must_be_a_prim_func():
    from tirfun.script import ir as I

    with pytest.raises(ParseError, match=r"@I.ir_module: M.helper is not a @T.prim_func function"):
        @I.ir_module
        class M:
            def helper(self):
                return 1

            @T.prim_func
            def main(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(1)


# ---------------------------------------------------------------- TVM's bracket spellings


def test_buffer_and_ptr_with_brackets_are_the_calls():
    @T.prim_func(private=True)
    def brackets(A_data: T.handle("float32"), C: T.Buffer[(4, 4), "int32"], D: T.Buffer[16]):
        A = T.decl_buffer(32, "float32", data=A_data)
        B_data: T.Ptr[T.float32] = T.address_of(A[16])
        B = T.decl_buffer(16, "float32", data=B_data)
        for i in range(16):
            B[i] = A[i] * T.float32(2)
            D[i] = A[i]
        C[0, 0] = 1

    @T.prim_func(private=True)
    def calls(A_data: T.handle("float32"), C: T.Buffer((4, 4), "int32"), D: T.Buffer(16)):
        A = T.decl_buffer(32, "float32", data=A_data)
        B_data: T.handle("float32") = T.address_of(A[16])
        B = T.decl_buffer(16, "float32", data=B_data)
        for i in range(16):
            B[i] = A[i] * T.float32(2)
            D[i] = A[i]
        C[0, 0] = 1

    assert_structural_equal(brackets, calls)
    text = brackets.script()
    assert_structural_equal(from_source(text.replace('C: T.Buffer((4, 4), "int32")', 'C: T.Buffer[(4, 4), "int32"]')
                                        .replace('B_data: T.handle("float32", "global")', "B_data: T.Ptr[T.float32]")),
                            brackets)
    assert T.Buffer[(4, 4), "int32"] == T.Buffer((4, 4), "int32")
    assert T.Ptr["float32", "shared"].type_annotation == T.ptr("float32", "shared").type_annotation
