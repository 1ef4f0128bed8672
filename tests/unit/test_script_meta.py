"""Meta-programming in decorated functions (values and functions of the
enclosing Python scope, T.meta_var, T.macro, list comprehensions), and the
guarantee that TVMScript read from text runs no Python at all."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tirfun.errors import ParseError
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from tirfun.script import tir as T

N = 8
CONFIG = {"scale": 3}


def double(x):
    return x * 2


def square_shape(n):
    return (n, n)


@T.macro
def add_one(buf, i):
    buf[i] = buf[i] + T.float32(1)


@T.macro(hygienic=False)
def scale_b(i):
    B[i] = B[i] * T.float32(CONFIG["scale"])  # noqa: F821 - B is the caller's


@T.macro
def uses_caller_name(i):
    B[i] = T.float32(0)  # noqa: F821 - hygienic: B is not defined here


def test_helpers_and_constants_of_the_enclosing_scope_compute_shapes():
    @T.prim_func
    def f(A: T.Buffer(square_shape(N // 2), "float32"), B: T.Buffer((double(N),), "float32")):
        for i, j in T.grid(N // 2, N // 2):
            B[i * 4 + j] = A[i, j] * T.float32(CONFIG["scale"])

    assert 'A: T.Buffer((4, 4), "float32"), B: T.Buffer((16,), "float32")' in f.script()
    a = np.arange(16, dtype="float32").reshape(4, 4)
    b = np.zeros(16, "float32")
    interp_run(f, a, b)
    np.testing.assert_array_equal(b, a.reshape(16) * 3)


def test_meta_var_binds_a_value_without_a_let():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            x = T.meta_var(A[i] * T.float32(2))
            lo, hi = T.meta_var((0, 7))
            B[i] = x + A[hi - i] * T.float32(lo + 3)

    assert "B[i] = A[i] * T.float32(2.0) + A[7 - i] * T.float32(3.0)" in f.script()
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    interp_run(f, a, b)
    np.testing.assert_array_equal(b, a * 2 + a[::-1] * 3)


def test_macros_expand_where_they_are_called():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i]
            add_one(B, i)
            scale_b(i)
            add_one(buf=B, i=i)

    text = f.script()
    assert text.count("B[i] = B[i] + T.float32(1.0)") == 2
    assert "B[i] = B[i] * T.float32(3.0)" in text
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    interp_run(f, a, b)
    np.testing.assert_array_equal(b, (a + 1) * 3 + 1)


def test_a_hygienic_macro_does_not_see_the_callers_names():
    with pytest.raises(ParseError, match="undefined name 'B'"):
        @T.prim_func
        def f(B: T.Buffer((8,), "float32")):
            for i in range(8):
                uses_caller_name(i)


def test_a_macro_called_with_wrong_arguments():
    with pytest.raises(ParseError, match="macro add_one: missing a required argument: 'i'"):
        @T.prim_func
        def f(B: T.Buffer((8,), "float32")):
            add_one(B)


def test_a_failing_helper_is_reported_where_it_is_called():
    def broken(n):
        raise ValueError("no shape for you")

    with pytest.raises(ParseError, match=r"broken\(\.\.\.\) raised ValueError: no shape for you") as info:
        @T.prim_func
        def f(A: T.Buffer(broken(4), "float32")):
            A[0] = T.float32(0)
    assert info.value.line > 0


def test_list_comprehensions_are_evaluated_while_parsing():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.func_attr({"offsets": [k * 2 for k in range(4) if k != 1]})
        for i in range(4):
            A[i] = T.float32(0)

    assert f.attrs["offsets"] == [0, 4, 6]


# ---------------------------------------------------------------- from_source runs nothing

HEAD = 'from tirfun.script import tir as T\n@T.prim_func\ndef main(A: T.Buffer((8,), "float32")):\n'


_EVENTS: list = []
_RECORDING: list = []


def _audit(event, args):
    if _RECORDING and event in ("exec", "os.system", "subprocess.Popen", "open"):
        _EVENTS.append(event)


sys.addaudithook(_audit)  # hooks cannot be removed; this one records only while _RECORDING


def record_call(*args):
    """A function of this module that text must never reach."""
    _EVENTS.append("record_call")


@pytest.mark.parametrize("line, message", [
    ("    A[0] = T.float32(len([1, 2]))", "undefined name 'len'"),
    ("    print(1)", "undefined name 'print'"),
    ("    __import__('os').system('true')", "undefined name '__import__'"),
    ("    T.evaluate(eval('1'))", "undefined name 'eval'"),
    ("    exec('import os')", "undefined name 'exec'"),
    ("    record_call()", "undefined name 'record_call'"),
    ("    x = A.__class__", "buffers have no attribute '__class__'"),
    ("    x = T.__dict__", r"unknown name T.__dict__"),
    ("    x = [c for c in ().__class__.__mro__]", "a tuple has no attribute '__class__'"),
    ("    x = [open(f) for f in ['/etc/passwd']]", "undefined name 'open'"),
])
def test_text_cannot_reach_python(line, message):
    _EVENTS.clear()
    _RECORDING.append(True)
    try:
        with pytest.raises(ParseError, match=message):
            from_source(HEAD + line + "\n")
    finally:
        _RECORDING.clear()
    assert _EVENTS == []


def test_python_values_never_enter_text():
    # a module-level name of a source holds script values only; a call of one is refused
    with pytest.raises(ParseError, match="cannot be called in TVMScript"):
        from_source("from tirfun.script import tir as T\nn = 4\n@T.prim_func\n"
                    "def main(A: T.Buffer((8,), 'float32')):\n    A[n(1)] = T.float32(0)\n")


def declare(*args, **kwargs):
    return T.decl_buffer(*args, **kwargs)


def scratch(shape):
    return T.alloc_buffer(shape, "float32")


def test_a_helper_returning_a_scoped_script_call_makes_it_where_it_is_called():
    # TVM's builder makes the statement wherever T.decl_buffer runs, so its
    # tests wrap it in Python helpers: the helper's result stands for the
    # call at the helper's call site
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        B = scratch((4,))
        K = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
        K_buf = declare([4], data=K)
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * K_buf[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = B[vi] + T.float32(1)

    @T.prim_func
    def f_direct(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,), "float32")
        K = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
        K_buf = T.decl_buffer([4], data=K)
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * K_buf[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = B[vi] + T.float32(1)

    from tirfun.analysis.equality import assert_structural_equal

    assert_structural_equal(f.with_attr("global_symbol", "g"), f_direct.with_attr("global_symbol", "g"))
    a, c = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    interp_run(f, a, c)
    np.testing.assert_array_equal(c, a * np.array([1, 2, 3, 4], "float32") + 1)
    # outside a function, the call is a value that says what it is
    assert repr(declare([4])) == "<T.decl_buffer(...) outside a @T.prim_func function>"


def test_tir_call_tir_calls_a_function_of_the_module():
    # TVM's Python form of Module.sub(...) inside a decorated function
    from tirfun import tir
    from tirfun.script import ir as I

    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((1,), "int32")):
            A[0] = tir.call_tir(Mod.twice, 21)

        @T.prim_func(private=True)
        def twice(x: T.int32) -> T.int32:
            T.ret(x * 2)

    a = np.zeros(1, "int32")
    interp_run(Mod, a)
    assert a[0] == 42
    with pytest.raises(Exception, match="call_tir calls a function of the module"):
        tir.call_tir("twice")
