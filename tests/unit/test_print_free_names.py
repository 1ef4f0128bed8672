"""A variable or a buffer that nothing in a function binds (a free ``n``, a
view ``B = T.Buffer(..., data=A.data)`` of lowered code) is declared once,
where its uses meet, as TVM prints it; declared again in each scope that
uses it, it would parse back as several names, and the function would not
survive printing."""

from __future__ import annotations

import numpy as np

from tirfun.analysis.equality import assert_structural_equal
from tirfun.interp import run as interp_run
from tirfun.nodes import Evaluate, For, ForKind, IntImm, LetStmt, PrimFunc, SeqStmt, Var
from tirfun.script import from_source

HEAD = "from tirfun.script import tir as T\n"


def reparsed(func, check_well_formed: bool = True):
    """``func`` printed and parsed back: equal to it, and printed alike."""
    printed = func.script()
    again = from_source(printed, check_well_formed=check_well_formed)
    assert_structural_equal(func, again)
    assert again.script() == printed
    return printed


def test_a_view_used_in_sibling_loops_is_declared_once():
    f = from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    B = T.Buffer((4, 4), data=A.data)
    for i in range(4):
        B[i, 0] = T.Cast("float32", n)
    for i in range(4):
        B[i, 1] = B[i, 0] + T.float32(1)
''')
    printed = reparsed(f)
    assert printed.count("B = T.Buffer((4, 4), data=A.data)") == 1
    assert "B_1" not in printed
    a = np.zeros(16, "float32")
    interp_run(f, a, 5)
    expected = np.zeros((4, 4), "float32")
    expected[:, 0], expected[:, 1] = 5, 6
    np.testing.assert_array_equal(a, expected.ravel())


def test_a_view_of_a_let_bound_pointer_is_declared_inside_the_let():
    f = from_source(HEAD + '''
@T.prim_func
def f(n: T.int32):
    C = T.Buffer([16], dtype="float32")
    with T.LetStmt(T.TVMBackendAllocWorkspace(1, 0, T.uint64(64), 2, 32), var=C.data):
        for i in range(4):
            C[i] = T.float32(0)
        for i in range(4):
            C[i] = C[i] + T.float32(1)
''', check_well_formed=False)
    printed = reparsed(f, check_well_formed=False)
    lines = [line.strip() for line in printed.splitlines()]
    let = lines.index("C_data: T.handle = T.TVMBackendAllocWorkspace(1, 0, T.uint64(64), 2, 32)")
    assert lines[let + 1] == "C = T.Buffer((16,), data=C_data)"
    assert lines.count("C = T.Buffer((16,), data=C_data)") == 1


def test_a_free_variable_used_in_sibling_loops_is_declared_once():
    f = from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    n = T.int32()
    for i in range(4):
        A[i] = n
    for i in range(4):
        A[i + 4] = n + 1
''', check_well_formed=False)
    printed = reparsed(f, check_well_formed=False)
    assert printed.count("n = T.int32()") == 1
    assert printed.splitlines()[4].strip() == "n = T.int32()"


def test_a_free_name_used_in_one_scope_stays_declared_there():
    f = from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in range(4):
        n = T.int32()
        A[i] = n
    for i in range(4):
        A[i + 4] = 1
''', check_well_formed=False)
    lines = reparsed(f, check_well_formed=False).splitlines()
    first_loop = next(k for k, line in enumerate(lines) if line.strip().startswith("for i in"))
    assert lines[first_loop + 1] == "        n = T.int32()"


def test_a_deep_nest_of_lets_prints_without_recursion():
    n = Var("n", "int32")
    i, j = Var("i", "int32"), Var("j", "int32")
    zero, four = IntImm("int32", 0), IntImm("int32", 4)
    body = SeqStmt([For(i, zero, four, ForKind.SERIAL, Evaluate(n + i)),
                    For(j, zero, four, ForKind.SERIAL, Evaluate(n + j))])
    for k in range(3000):
        body = LetStmt(Var(f"x{k}", "int32"), IntImm("int32", k), body)
    printed = reparsed(PrimFunc([], body), check_well_formed=False)
    assert printed.count("n = T.int32()") == 1


def test_a_view_used_in_both_branches_of_an_if_is_declared_before_it():
    f = from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    B = T.Buffer((8,), "int32", data=A.data)
    if n > 0:
        B[0] = 10
    else:
        B[0] = 20
''')
    printed = reparsed(f)
    lines = [line.strip() for line in printed.splitlines()]
    assert lines.count('B = T.Buffer((8,), "int32", data=A.data)') == 1
    assert lines.index('B = T.Buffer((8,), "int32", data=A.data)') < lines.index("if n > 0:")
    for n, first in ((1, 10), (0, 20)):
        a = np.zeros(8, "int32")
        interp_run(f, a, n)
        assert a[0] == first


def test_a_view_used_in_a_block_init_and_body_is_declared_once():
    f = from_source(HEAD + '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((1,), "float32")):
    S = T.Buffer((1,), data=C.data)
    for k in range(8):
        with T.block("sum"):
            vk = T.axis.reduce(8, k)
            with T.init():
                S[0] = T.float32(0)
            S[0] = S[0] + A[vk]
''')
    printed = reparsed(f)
    assert printed.count("S = T.Buffer((1,), data=C.data)") == 1
    a = np.arange(8, dtype="float32")
    c = np.full(1, 5, "float32")
    interp_run(f, a, c)
    assert c[0] == a.sum()
