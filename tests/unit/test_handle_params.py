"""A public function with a bare ``T.handle`` parameter (one no buffer is
matched to) builds and is called as TVM's packed calling convention allows:
with an array, whose data pointer it receives, or with None, a null pointer
that ``T.isnullptr`` tests."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.errors import ArgumentError, InterpError
from tirfun.script import from_source

OPTIONAL = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), h: T.handle):
    B = T.decl_buffer((4,), "float32", data=h)
    for i in range(4):
        if T.isnullptr(h):
            A[i] = T.float32(-1)
        else:
            A[i] = B[i] * T.float32(2)
'''


@pytest.mark.parametrize("given", ["none", "numpy", "ndarray"])
def test_a_bare_handle_takes_an_array_or_none(given):
    func = from_source(OPTIONAL)
    assert "T.isnullptr(h)" in func.script()
    source = np.arange(4, dtype="float32") + 1
    compiled_arg = {"none": None, "numpy": source, "ndarray": tirfun.nd.array(source)}[given]
    interp_arg = None if given == "none" else source
    expected = np.full(4, -1, "float32") if given == "none" else source * 2
    compiled, interpreted = np.zeros(4, "float32"), np.zeros(4, "float32")
    tirfun.build(func)(compiled, compiled_arg)
    tirfun.interp.run(func, interpreted, interp_arg)
    assert compiled.tobytes() == interpreted.tobytes() == expected.tobytes()


def test_the_handle_is_written_through():
    text = '''
@T.prim_func
def main(h: T.handle, n: T.int32):
    B = T.decl_buffer((n,), "int32", data=h)
    for i in range(n):
        B[i] = i * i
'''
    func = from_source(text)
    compiled, interpreted = np.zeros(6, "int32"), np.zeros(6, "int32")
    tirfun.build(func)(compiled, 5)
    tirfun.interp.run(func, interpreted, 5)
    assert compiled.tolist() == interpreted.tolist() == [0, 1, 4, 9, 16, 0]


def test_none_where_the_function_does_not_test_for_it_is_refused():
    text = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), h: T.handle):
    B = T.decl_buffer((4,), "float32", data=h)
    for i in range(4):
        A[i] = B[i]
'''
    func = from_source(text)
    rt = tirfun.build(func)
    with pytest.raises(ArgumentError, match="function main, parameter h: None \\(a null pointer\\) "
                       "is accepted only by a function that tests this handle with T.isnullptr"):
        rt(np.zeros(4, "float32"), None)
    # the interpreter names the load through the null pointer
    with pytest.raises(InterpError, match="a load through a null pointer"):
        tirfun.interp.run(func, np.zeros(4, "float32"), None)


def test_other_values_for_a_handle_are_argument_errors():
    rt = tirfun.build(from_source(OPTIONAL))
    with pytest.raises(ArgumentError, match="function main, parameter h: a T.handle takes an array "
                       r"\(tirfun.nd.array, numpy.ndarray or any DLPack array\) or None, got int"):
        rt(np.zeros(4, "float32"), 3)
    with pytest.raises(ArgumentError, match="parameter h: the array is not C-contiguous"):
        rt(np.zeros(4, "float32"), np.zeros(8, "float32")[::2])
