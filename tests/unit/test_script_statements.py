"""Statements and buffer forms of TVMScript beyond blocks and loops: each
parses, prints back as TVM prints it, round-trips, runs in the interpreter as
numpy says it should, and builds for the CPU to the interpreter's results."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun.analysis.traversal import walk
from tirfun.nodes import BlockRealize, IntImm
from tirfun.analysis.equality import structural_equal
from tirfun.errors import BuildError, ParseError
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from tirfun.testing.equivalence import compare_arrays, random_inputs

HEAD = "from tirfun.script import tir as T\n"


def roundtrip(text: str):
    """Parse ``text``; its printed form parses back to an equal function."""
    parsed = from_source(text)
    printed = parsed.script()
    again = from_source(printed)
    assert structural_equal(parsed, again), printed
    assert again.script() == printed
    return parsed


def interpret(func, *arrays):
    """Run ``func`` in the interpreter on copies of ``arrays``."""
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    interp_run(func, *out)
    return out


def compiled_matches_interpreter(mod, trials: int = 2):
    """The CPU build computes the interpreter's results on random inputs."""
    func = mod["main"] if isinstance(mod, IRModule) else mod
    rt = tirfun.build(mod, target="llvm")
    for trial in range(trials):
        args = random_inputs(func, np.random.default_rng([7, trial]))
        expected = interpret(func, *args)
        actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        rt(*actual)
        for p, x, y in zip(func.params, expected, actual):
            if isinstance(x, np.ndarray):
                buf = func.buffer_map[p]
                problem = compare_arrays(buf.name, x, y, buf.dtype)
                assert problem is None, problem


# ---------------------------------------------------------------- while

WHILE = HEAD + '''
@T.prim_func
def main(A: T.Buffer((16,), "int32"), n: T.int32):
    k = T.alloc_buffer((1,), "int32")
    k[0] = 0
    while k[0] < n:
        A[k[0]] = A[k[0]] * 2 + k[0]
        k[0] = k[0] + 3
'''


def test_while_prints_as_tvm_does():
    func = roundtrip(WHILE)
    assert "    while k[0] < n:\n        A[k[0]] = A[k[0]] * 2 + k[0]\n" in func.script()


def test_while_runs_as_python_would():
    a = np.arange(16, dtype="int32")
    (out, _) = interpret(roundtrip(WHILE), a, 10)
    expected = a.copy()
    for k in range(0, 10, 3):
        expected[k] = expected[k] * 2 + k
    np.testing.assert_array_equal(out, expected)


def test_while_compiles_to_the_interpreters_results():
    func = from_source(WHILE)
    rt = tirfun.build(func, target="llvm")
    a = np.arange(16, dtype="int32")
    for n in (0, 1, 10, 16):
        (expected, _) = interpret(func, a, n)
        got = a.copy()
        rt(got, n)
        np.testing.assert_array_equal(got, expected)


def test_while_else_is_refused():
    with pytest.raises(ParseError, match="while-else is not supported"):
        from_source(HEAD + '@T.prim_func\ndef main(A: T.Buffer((1,), "int32")):\n'
                    '    while A[0] < 3:\n        A[0] = A[0] + 1\n    else:\n        A[0] = 0\n')


def test_while_condition_must_be_a_scalar():
    with pytest.raises(ParseError, match="the condition of a while loop must be a bool condition"):
        from_source(HEAD + '@T.prim_func\ndef main(A: T.Buffer((2,), "int32")):\n'
                    '    while A[0:2]:\n        A[0] = A[0] + 1\n')


# ---------------------------------------------------------------- stores cast as TVM casts

def test_an_int_expression_stored_into_a_float_buffer_is_cast():
    func = roundtrip(HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = B[i] * 2
''')
    assert 'A[i] = T.Cast("float32", B[i] * 2)' in func.script()
    b = np.array([1, -2, 3, 7], dtype="int32")
    (a, _) = interpret(func, np.zeros(4, "float32"), b)
    np.testing.assert_array_equal(a, (b * 2).astype("float32"))
    compiled_matches_interpreter(func)


# ---------------------------------------------------------------- buffer methods

VLOAD = HEAD + '''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 2):
        B.vstore([i, j * 4], A.vload([i, j * 4], "float32x4") + T.Broadcast(T.float32(1), 4))
'''


def test_vload_and_vstore_are_ramp_accesses_of_the_last_index():
    func = roundtrip(VLOAD)
    assert ("B[i, j * 4:j * 4 + 4] = A[i, j * 4:j * 4 + 4] + T.Broadcast(T.float32(1.0), 4)"
            in func.script())
    a = np.arange(32, dtype="float32").reshape(4, 8)
    (_, b) = interpret(func, a, np.zeros((4, 8), "float32"))
    np.testing.assert_array_equal(b, a + 1)
    compiled_matches_interpreter(func)


def test_vload_of_a_scalar_dtype_is_a_plain_load():
    func = roundtrip(HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        B.vstore(i, A.vload(3 - i))
''')
    assert "B[i] = A[3 - i]" in func.script()


@pytest.mark.parametrize("call, message", [
    ('A.vload([0], "int32x4")', r"A.vload: int32x4 does not hold elements of buffer A \(float32\)"),
    ('A.vload([0, 1], "float32x4")', "A.vload: buffer A has 1 dimensions but begin has 2 indices"),
    ('A.vload([0], "float32x4", predicate=T.bool(True))',
     "the predicate of A.vload has 1 lanes, but the value has 4; the number of lanes must match"),
    ('A.vload([0], "float32x4", predicate=T.Broadcast(1, 4))',
     "the predicate of A.vload is a mask of bool lanes, got .* of int32x4"),
    ("A.vsave([0])", "buffers have no attribute 'vsave'"),
])
def test_buffer_method_mistakes(call, message):
    with pytest.raises(ParseError, match=message):
        from_source(HEAD + '@T.prim_func\ndef main(A: T.Buffer((8,), "float32")):\n'
                    f'    T.evaluate({call})\n')


def test_a_store_cannot_be_assigned():
    with pytest.raises(ParseError, match="a statement has no value to assign"):
        from_source(HEAD + '@T.prim_func\ndef main(A: T.Buffer((8,), "float32")):\n'
                    '    x = A.vstore([0], T.float32(1))\n')


# ---------------------------------------------------------------- T.Buffer over T.allocate

ALLOCATE_VIEW = HEAD + '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    tmp = T.allocate([8], "float32", "global")
    tmp_1 = T.Buffer((8,), data=tmp)
    for i in range(8):
        tmp_1[i] = A[i] * T.float32(2)
    for i in range(8):
        B[i] = tmp_1[7 - i]
'''


def test_a_buffer_over_an_allocation_prints_after_the_allocation():
    func = roundtrip(ALLOCATE_VIEW)
    assert ('    tmp = T.allocate([8], "float32", "global")\n'
            '    tmp_1 = T.Buffer((8,), data=tmp)\n    for i in range(8):\n') in func.script()
    a = np.arange(8, dtype="float32")
    (_, b) = interpret(func, a, np.zeros(8, "float32"))
    np.testing.assert_array_equal(b, (a * 2)[::-1])
    compiled_matches_interpreter(func)


def test_a_buffer_over_an_allocation_is_refused_outside_it():
    from tirfun.errors import VerifyError

    with pytest.raises(VerifyError, match="undeclared buffer"):
        from_source(HEAD + '''
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    p = T.handle("float32")
    V = T.Buffer((8,), data=p)
    B[0] = V[0]
''')


# ---------------------------------------------------------------- buffer_type="auto"

AUTO = HEAD + '''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 1), "float32", buffer_type="auto")
    B = T.match_buffer(b, (4, 4), "float32")
    for i, j in T.grid(4, 4):
        B[i, j] = A[i, 0] * T.float32(2)
'''


def test_an_auto_broadcast_buffer_gets_stride_variables_as_in_tvm():
    func = roundtrip(AUTO)
    buf = next(b for b in func.buffer_map.values() if b.name == "A")
    assert buf.buffer_type == "auto" and len(buf.strides) == 2
    assert 'buffer_type="auto"' in func.script()


def test_an_auto_broadcast_buffer_runs_and_builds():
    func = from_source(AUTO)
    a = np.arange(4, dtype="float32").reshape(4, 1)
    (_, b) = interpret(func, a, np.zeros((4, 4), "float32"))
    np.testing.assert_array_equal(b, np.broadcast_to(a * 2, (4, 4)))
    rt = tirfun.build(func, target="llvm")
    got = np.zeros((4, 4), "float32")
    rt(a, got)
    np.testing.assert_array_equal(got, b)


def test_an_unknown_buffer_type_is_refused():
    with pytest.raises(ParseError, match="buffer_type must be 'auto' or 'default', got 'broadcast'"):
        from_source(HEAD + '@T.prim_func\ndef main(a: T.handle):\n'
                    '    A = T.match_buffer(a, (4,), buffer_type="broadcast")\n    A[0] = T.float32(0)\n')


# ---------------------------------------------------------------- I.module_attrs

MODULE_ATTRS = '''# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    I.module_attrs({"system_lib_prefix": "lib_", "version": 2})
    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(1.0)
'''


def test_module_attrs_parse_and_print_back_as_written():
    mod = from_source(MODULE_ATTRS)
    assert dict(mod.attrs) == {"system_lib_prefix": "lib_", "version": 2}
    assert mod.script() + "\n" == MODULE_ATTRS
    assert structural_equal(from_source(mod.script()), mod)


def test_module_attrs_in_a_decorated_class():
    from tirfun.script import ir as I
    from tirfun.script import tir as T

    @I.ir_module
    class Module:
        I.module_attrs({"version": 2})

        @T.prim_func
        def main(A: T.Buffer((8,), "float32")):
            A[0] = T.float32(1.0)

    assert dict(Module.attrs) == {"version": 2}


def test_module_attrs_twice_is_refused():
    text = MODULE_ATTRS.replace("class Module:\n", 'class Module:\n    I.module_attrs({"a": 1})\n')
    text = text.replace("# from", "from")
    with pytest.raises(ParseError, match="I.module_attrs is given twice in the module"):
        from_source(text)


# ---------------------------------------------------------------- T.allocate_const

ALLOCATE_CONST = HEAD + '''
@T.prim_func
def main(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
    w = T.allocate_const([0.5, -1.0, 2.0, 3.25, 0.1, 7.0], "float32", [2, 3])
    W = T.Buffer((2, 3), data=w)
    for i, j in T.grid(2, 3):
        B[i, j] = A[i, j] * W[i, j]
'''


def test_allocate_const_prints_as_tvm_does_with_values_rounded_to_the_dtype():
    func = roundtrip(ALLOCATE_CONST)
    assert ('    w = T.allocate_const([0.5, -1.0, 2.0, 3.25, 0.10000000149011612, 7.0], "float32", '
            '[2, 3])\n    W = T.Buffer((2, 3), data=w)\n') in func.script()


def test_allocate_const_runs_and_builds():
    func = from_source(ALLOCATE_CONST)
    weights = np.array([0.5, -1.0, 2.0, 3.25, 0.1, 7.0], dtype="float32").reshape(2, 3)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    (_, b) = interpret(func, a, np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(b, a * weights)
    compiled_matches_interpreter(func)


@pytest.mark.parametrize("dtype, data", [("int8", [1, -2, 3, 127]), ("uint16", [0, 1, 65535, 7]),
                                         ("float16", [0.5, -2.0, 65504.0, 1e-3]),
                                         ("float64", [0.1, -2.5, 1e300, 3.0])])
def test_allocate_const_of_every_numpy_dtype(dtype, data):
    func = roundtrip(HEAD + f'''
@T.prim_func
def main(B: T.Buffer((4,), "{dtype}")):
    c = T.allocate_const({data!r}, "{dtype}", [4])
    C = T.Buffer((4,), "{dtype}", data=c)
    for i in range(4):
        B[i] = C[3 - i]
''')
    (b,) = interpret(func, np.zeros(4, dtype))
    np.testing.assert_array_equal(b, np.asarray(data, dtype=dtype)[::-1])
    compiled_matches_interpreter(func)


@pytest.mark.parametrize("call, message", [
    ('T.allocate_const([1, 2, 3], "int32", [4])', "the extents hold 4 values but 3 are given"),
    ('T.allocate_const([1, 2, 300, 4], "int8", [4])', "the data do not fit int8"),
    ('T.allocate_const([1, 2, 3, 4], "bool", [4])', "holds integers or floats, not bool"),
    ('T.allocate_const([1, 2, 3, "x"], "int32", [4])', "data must be numbers, got a string"),
])
def test_allocate_const_mistakes(call, message):
    with pytest.raises(ParseError, match=message):
        from_source(HEAD + f'@T.prim_func\ndef main(A: T.Buffer((4,), "int32")):\n    c = {call}\n'
                    '    A[0] = 0\n')


# ---------------------------------------------------------------- T.realize

REALIZE = HEAD + '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    C = T.Buffer((8,))
    with T.realize(C[0:8], "global"):
        for i in range(8):
            C[i] = A[i] + T.float32(1)
        for i in range(8):
            B[i] = C[i] * T.float32(2)
'''


def test_realize_prints_as_tvm_does():
    func = roundtrip(REALIZE)
    assert ('    C = T.Buffer((8,))\n    T.realize(C[0:8], "global")\n    for i in range(8):\n'
            in func.script())


def test_realize_runs_in_the_interpreter():
    a = np.arange(8, dtype="float32")
    (_, b) = interpret(from_source(REALIZE), a, np.zeros(8, "float32"))
    np.testing.assert_array_equal(b, (a + 1) * 2)


def test_realize_is_refused_by_the_build_as_by_tvms():
    with pytest.raises(BuildError, match=r"T.realize of buffer C \(BufferRealize\) cannot be built "
                       r"for the CPU \(llvm\)"):
        tirfun.build(from_source(REALIZE), target="llvm")


def test_allocate_const_keeps_non_finite_values_and_the_sign_of_zero():
    func = roundtrip(HEAD + '''
@T.prim_func
def main(B: T.Buffer((4,), "float32")):
    c = T.allocate_const([T.float32("inf"), T.float32("nan"), -0.0, 0.0], "float32", [4])
    C = T.Buffer((4,), data=c)
    for i in range(4):
        B[i] = C[i]
''')
    assert 'T.allocate_const([T.float32("inf"), T.float32("nan"), -0.0, 0.0], "float32", [4])' \
        in func.script()
    expected = np.array([np.inf, np.nan, -0.0, 0.0], "float32")
    (b,) = interpret(func, np.ones(4, "float32"))
    np.testing.assert_array_equal(b.view("uint32") & 0xFF800000, expected.view("uint32") & 0xFF800000)
    assert np.isnan(b[1]) and np.signbit(b[2]) and not np.signbit(b[3])
    got = np.ones(4, "float32")
    tirfun.build(func, target="llvm")(got)
    assert np.isnan(got[1]) and np.signbit(got[2]) and not np.signbit(got[3]) and got[0] == np.inf


# ---------------------------------------------------------------- lets, regions, separators

LETS = HEAD + '''
@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        x: T.int32 = A[i] * 3
        y = T.int32()
        z = T.int32()
        with T.LetStmt(x + 1, var=y):
            B[i] = T.Let(z * 2, where={z: y + x}) + x
'''


def test_let_forms_run_and_build():
    func = roundtrip(LETS)
    assert "        x: T.int32 = A[i] * 3\n" in func.script()
    a = np.arange(8, dtype="int32") - 3
    (_, b) = interpret(func, a, np.zeros(8, "int32"))
    x = a * 3
    np.testing.assert_array_equal(b, ((x + 1) + x) * 2 + x)
    compiled_matches_interpreter(func)


REGIONS = HEAD + '''
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:16])
            T.writes(B[vi, 0:16])
            S = T.match_buffer(A[vi, 0:16], (16,))
            D = T.match_buffer(B[vi, 0:16], (16,))
            for j in range(16):
                D[j] = S[j] + S[15 - j]
'''


def test_region_slices_in_reads_writes_and_match_buffer():
    func = roundtrip(REGIONS)
    text = func.script()
    assert "T.reads(A[vi, 0:16])" in text and "S = T.match_buffer(A[vi, 0:16], (16,))" in text
    a = np.arange(64, dtype="float32").reshape(4, 16)
    (_, b) = interpret(func, a, np.zeros((4, 16), "float32"))
    np.testing.assert_array_equal(b, a + a[:, ::-1])
    compiled_matches_interpreter(func)


SEPARATORS = HEAD + '''
@T.prim_func
def main(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 4), axis_separators=[1])
    B = T.match_buffer(b, (4, 4))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C = T.alloc_buffer((2, 2), axis_separators=[1])
            C[vi % 2, vj % 2] = A[vi, vj]
            B[vi, vj] = C[vi % 2, vj % 2] * T.float32(2)
'''


def test_axis_separators_print_back_and_flatten_on_the_cpu():
    func = roundtrip(SEPARATORS)
    assert "A = T.match_buffer(a, (4, 4), axis_separators=[1])" in func.script()
    a = np.arange(16, dtype="float32").reshape(4, 4)
    (_, b) = interpret(func, a, np.zeros((4, 4), "float32"))
    np.testing.assert_array_equal(b, a * 2)
    # separators describe device memory of several dimensions (textures);
    # TVM's LLVM code generation stops on them, tirfun's CPU build flattens
    # the buffer over all its axes, which computes the same values
    compiled_matches_interpreter(func)


# ---------------------------------------------------------------- hostile variants

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tirfun.errors import TirfunError  # noqa: E402


@given(st.sampled_from([WHILE, VLOAD, ALLOCATE_VIEW, AUTO, ALLOCATE_CONST, REALIZE, MODULE_ATTRS]),
       st.data())
def test_mutated_statement_sources_end_in_tirfun_errors(text, data):
    """Whatever the text, parsing it (and printing what parses) raises only
    tirfun's errors."""
    text = text.replace("# from", "from")
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text) - 1))
        action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(st.sampled_from(list("()[]:,.=+-*/<>%'\"#\n 0123456789kiwcAB")
                                          + ["T.", "float32", "int8", "    ", "while ", "-0.0",
                                             "T.allocate_const(", ".vload(", "auto"]))
        if action == "delete":
            text = text[:pos] + text[pos + 1:]
        elif action == "insert":
            text = text[:pos] + piece + text[pos:]
        else:
            text = text[:pos] + piece + text[pos + 1:]
    try:
        parsed = from_source(text)
        from_source(parsed.script())
    except TirfunError:
        pass


def test_t_let_binds_a_declared_variable_as_a_let_statement():
    func = roundtrip(HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "int32")):
    x = T.int32()
    y = T.int32()
    with T.let(x, A[0] + 1):
        for i in range(4):
            A[i] = T.let(y, x * 2, A[i] + y)
''')
    assert "x: T.int32 = A[0] + 1" in func.script()
    a = np.array([3, 1, 4, 1], dtype="int32")
    (out,) = interpret(func, a)
    np.testing.assert_array_equal(out, a + (a[0] + 1) * 2)


@pytest.mark.parametrize("annotation", ['T.handle("float32", "global")', 'T.handle("float32x4")',
                                        "T.handle()", "T.handle"])
def test_handle_annotations_in_tvms_forms_parse(annotation):
    func = roundtrip(HEAD + f'''
@T.prim_func
def main(a: {annotation}, B: T.Buffer((4,), "float32")):
    p = T.handle("float32", "shared")
    B[0] = T.float32(1)
''')
    assert func.params[0].dtype.is_handle


# ---------------------------------------------------------------- check_well_formed

NOT_WELL_FORMED = '''
    @T.prim_func
    def main(B: T.Buffer((8,), "float32")):
        p = T.handle("float32")
        V = T.Buffer((8,), data=p)
        B[0] = V[0]
'''


def test_a_module_that_says_check_well_formed_false_is_not_checked():
    from tirfun.errors import VerifyError
    from tirfun.script import ir as I
    from tirfun.script import tir as T

    # as in TVM, I.ir_module(check_well_formed=False) turns the check off for
    # every function of the class, in a source and in Python
    text = HEAD + "from tirfun.script import ir as I\n\n@I.ir_module{}\nclass Module:" + NOT_WELL_FORMED
    with pytest.raises(VerifyError, match="undeclared buffer"):
        from_source(text.format(""))
    mod = from_source(text.format("(check_well_formed=False)"))
    assert "main" in mod.functions
    with pytest.raises(VerifyError, match="undeclared buffer"):
        @I.ir_module
        class Checked:
            @T.prim_func
            def main(B: T.Buffer((8,), "float32")):
                p = T.handle("float32")
                V = T.Buffer((8,), data=p)
                B[0] = V[0]

    @I.ir_module(check_well_formed=False)
    class Unchecked:
        @T.prim_func
        def main(B: T.Buffer((8,), "float32")):
            p = T.handle("float32")
            V = T.Buffer((8,), data=p)
            B[0] = V[0]

    assert Unchecked["main"].script() == mod["main"].script()


def test_a_function_that_says_check_well_formed_false_in_a_source_is_not_checked():
    text = HEAD + "\n@T.prim_func(check_well_formed=False)" + NOT_WELL_FORMED.replace(
        "    @T.prim_func\n", "").replace("\n    ", "\n")
    assert "V = T.Buffer((8,), data=p)" in from_source(text).script()


def test_the_data_of_a_declared_buffer_view_is_a_pointer_of_its_own():
    # TVM's decl_buffer gives a buffer declared without data= a pointer,
    # which the program may name (here, for an extern call)
    func = from_source(HEAD + '''
@T.prim_func(check_well_formed=False)
def main():
    temp = T.Buffer([1], dtype="float32", scope="local")
    T.evaluate(T.call_extern("int32", "consume", temp.data))
''')
    text = func.script()
    assert 'T.call_extern("int32", "consume", temp_data)' in text
    assert from_source(text, check_well_formed=False).script() == text


# ---------------------------------------------------------------- number conditions

NUMBER_CONDITIONS = HEAD + '''
@T.prim_func
def main(A: T.Buffer((10,), "int32"), x: T.float32):
    k = T.alloc_buffer((1,), "int32")
    for i in range(10):
        if i % 3:
            A[i] = A[i] + 1
        if x:
            A[i] = A[i] * 2
    k[0] = 3
    while k[0]:
        A[k[0]] = A[k[0]] + 100
        k[0] = k[0] - 1
'''


def test_a_number_is_a_condition_where_it_is_not_zero():
    # TVM's If and While take a scalar of any number type, true where not zero
    func = roundtrip(NUMBER_CONDITIONS)
    written_out = from_source(NUMBER_CONDITIONS.replace("if i % 3:", "if i % 3 != 0:")
                              .replace("if x:", "if x != T.float32(0):")
                              .replace("while k[0]:", "while k[0] != 0:"))
    assert structural_equal(func, written_out)
    for x in (0.0, -0.5):
        a = np.arange(10, dtype="int32")
        out, _ = interpret(func, a, x)
        expected = a + (np.arange(10) % 3 != 0)
        if x:
            expected = expected * 2
        expected[1:4] += 100
        np.testing.assert_array_equal(out, expected)
    compiled_matches_interpreter(func)


def test_a_vector_is_no_branch_condition():
    with pytest.raises(ParseError, match="the condition of an if statement must be a bool condition"):
        from_source(HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "int32")):
    if A[0:4]:
        A[0] = 1
''')


# ---------------------------------------------------------------- match_buffer of a region

MATCHED_TILES = HEAD + '''
@T.prim_func
def main(A: T.Buffer((32, 32), "int32")):
    for iters in T.grid(2, 2, 16, 16):
        with T.block("compute"):
            tile_i, tile_j, i, j = T.axis.remap("SSSS", iters)
            elem_offset = T.int32()
            B = T.match_buffer(A[tile_i * 16:(tile_i + 1) * 16, tile_j * 16:(tile_j + 1) * 16],
                               dtype="float32", elem_offset=elem_offset)
            B[i, j] = elem_offset + i
'''


def test_a_region_matched_without_a_shape_gives_shape_and_dtype():
    # as TVM's match_buffer: without a shape, a dtype= given is not used
    func = roundtrip(MATCHED_TILES)
    block = func.body.block.body.body.body.body.body.block
    assert block.match_buffers[0].buffer.dtype == "int32"
    assert [int(d) for d in block.match_buffers[0].buffer.shape] == [16, 16]
    (a,) = interpret(func, np.zeros((32, 32), "int32"))
    rows, cols = np.indices((32, 32))
    np.testing.assert_array_equal(a, (rows // 16 * 16) * 32 + cols // 16 * 16 + rows % 16)


# ---------------------------------------------------------------- axis bindings of another type

AXIS_BINDINGS = HEAD + '''
@T.prim_func
def main(A: T.Buffer((), "int32"), B: T.Buffer((4,), "int32")):
    with T.block("const"):
        vi = T.axis.spatial(1, T.int64(0))
        A[()] = 16 + vi
    for i in range(T.int64(4)):
        with T.block("copy"):
            vj = T.axis.spatial(4, i)
            B[vj] = A[()] + vj
'''


def test_an_axis_bound_to_another_integer_type_takes_the_value_in_its_own():
    # TVM keeps T.axis.spatial(1, T.int64(0)) with an int32 variable and an
    # int64 binding; the binding takes the variable's type here
    func = roundtrip(AXIS_BINDINGS)
    realizes = [s for s in walk(func.body) if type(s) is BlockRealize and s.block.iter_vars]
    assert [str(r.block.iter_vars[0].var.dtype) for r in realizes] == ["int32", "int32"]
    assert realizes[0].iter_values[0] == IntImm("int32", 0)
    assert realizes[1].iter_values[0].dtype == "int32"
    a, b = interpret(func, np.zeros((), "int32"), np.zeros(4, "int32"))
    assert a[()] == 16
    np.testing.assert_array_equal(b, [16, 17, 18, 19])


# ---------------------------------------------------------------- T.LetStmt declaring its variable

LET_DECLARED = HEAD + '''
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    with T.LetStmt(T.address_of(A[1, 0]), var=T.handle("float32")) as row_data:
        row = T.decl_buffer(8, "float32", data=row_data)
        for i in range(8):
            B[0, i] = row[i] * T.float32(2)
    B[1, 0] = T.float32(7)
'''


def test_let_stmt_var_may_be_a_new_typed_variable():
    func = roundtrip(LET_DECLARED)
    assert 'with T.LetStmt(T.address_of(A[1, 0]), var=T.handle("float32", "global")) as row_data:' \
        in func.script()
    let = func.body[0]
    assert let.var.name == "row_data" and let.var.type_annotation.element == "float32"
    a = np.arange(32, dtype="float32").reshape(4, 8)
    _, b = interpret(func, a, np.zeros((4, 8), "float32"))
    np.testing.assert_array_equal(b[0], a[1] * 2)
    assert b[1, 0] == 7
    compiled_matches_interpreter(func)


def test_a_parameter_annotated_with_an_offset_factor_has_an_offset_variable():
    # as TVM's match of a parameter: offset_factor without elem_offset gives a variable
    text = HEAD + '''
@T.prim_func
def main(A: T.Buffer((16,), "float32", align=64, offset_factor=1), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i] + T.float32(1)
'''
    func = roundtrip(text)
    a_buf = func.buffer_map[func.params[0]]
    assert a_buf.elem_offset is not None and a_buf.elem_offset.name == "A_elem_offset"
    assert structural_equal(func, from_source(text.replace(
        'A: T.Buffer((16,), "float32", align=64, offset_factor=1)', "a: T.handle").replace(
        "):\n    for", '):\n    A = T.match_buffer(a, (16,), offset_factor=1)\n    for', 1)))
    a = np.arange(16, dtype="float32")
    _, b = interpret(func, a, np.zeros(16, "float32"))
    np.testing.assert_array_equal(b, a + 1)


# ---------------------------------------------------------------- variables made in Python


def test_a_python_made_variable_is_named_not_let_bound_and_can_define_an_offset():
    """``off = te.var(...)`` before ``T.match_buffer(..., elem_offset=off)``:
    the name stands for the variable itself (no let), so the match_buffer
    still stands at the top of the function and defines it, as in TVM."""
    from tirfun import te
    from tirfun.nodes import LetStmt
    from tirfun.script import tir as T

    @T.prim_func
    def func(a: T.handle, b: T.handle):
        off_a = te.var("elem_offset")
        n = te.var("n")
        A = T.match_buffer(a, (n,), elem_offset=off_a)
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2) + T.Cast("float32", off_a)

    assert not isinstance(func.body, LetStmt)
    buf_a = func.buffer_map[func.params[0]]
    assert isinstance(buf_a.elem_offset, tirfun.nodes.Var)
    assert buf_a.shape[0] is func.buffer_map[func.params[1]].shape[0]
    again = from_source(func.script())
    assert structural_equal(func, again)
    a = np.arange(5, dtype="float32")
    b = np.zeros(5, "float32")
    (b_out,) = interpret(func, a, b)[1:]
    np.testing.assert_array_equal(b_out, a * 2)  # a whole array starts at offset 0
    compiled_matches_interpreter(func)


def test_a_variable_already_named_in_the_function_is_still_let_bound():
    text = HEAD + '''
@T.prim_func
def main(A: T.Buffer((4,), "int32"), n: T.int32):
    m = n
    for i in range(4):
        A[i] = m + i
'''
    func = from_source(text)
    assert isinstance(func.body, tirfun.nodes.LetStmt)
    (a,) = interpret(func, np.zeros(4, "int32"), 3)[:1]
    np.testing.assert_array_equal(a, np.arange(4) + 3)



def test_a_te_variable_from_the_python_scope_becomes_a_variable_of_the_function():
    """A size made with ``te.var`` outside the function is a size inside it,
    as in TVM; the function's variable is a plain one, so the interpreter
    and the CPU build bind it from the arrays."""
    from tirfun import te
    from tirfun.script import tir as T
    from tirfun.te.tensor import TeVar
    from tirfun.analysis.traversal import walk

    n = te.var("n")

    @T.prim_func
    def func(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2) + T.Cast("float32", n)

    assert not any(type(x) is TeVar for x in walk(func))
    text = func.script()
    assert "A = T.match_buffer(a, (" in text  # a symbolic shape is no T.Buffer annotation
    again = from_source(text)
    assert structural_equal(func, again)
    a = np.arange(5, dtype="float32")
    (b_out,) = interpret(func, a, np.zeros(5, "float32"))[1:]
    np.testing.assert_array_equal(b_out, a * 2 + 5)
    compiled_matches_interpreter(func)


def test_naming_a_te_size_from_the_python_scope_names_that_size():
    """``m = A.shape[0]`` where the size is a te variable of the Python
    scope: ``m`` names that very variable (TVM renames it), so the loop
    runs over the array's length."""
    from tirfun import te
    from tirfun.script import tir as T

    n = te.var("n")

    @T.prim_func
    def func(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        m = A.shape[0]
        for i in range(m):
            with T.block("B"):
                vi = T.axis.spatial(m, i)
                B[vi] = A[vi] + T.float32(1)

    assert func.buffer_map[func.params[0]].shape[0].name == "m"
    assert structural_equal(from_source(func.script()), func)
    a = np.arange(6, dtype="float32")
    (b,) = interpret(func, a, np.zeros(6, "float32"))[1:]
    np.testing.assert_array_equal(b, a + 1)
    compiled_matches_interpreter(func)
