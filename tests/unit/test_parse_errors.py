"""Every parse error: its exact message, where it points, and its hint."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tirfun.errors import ParseError, TirfunError
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.script.parser_source import MAX_DEPTH, MAX_SOURCE_CHARS

HEADER = ('@T.prim_func\n'
          'def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8, 8), "int32"), n: T.int32):\n')

SIGNATURE_HINT = "the signature is T.axis.spatial(dom, binding, dtype='int32')"
ALLOC_HINT = ("the signature is T.alloc_buffer(shape, dtype='float32', data=None, strides=None, "
              "elem_offset=None, scope='global', align=-1, offset_factor=0, "
              "buffer_type='default', axis_separators=None)")
DECL_HINT = "declarations of a block come before its loops, conditions and lets"
NAME_HINT = ("a name must be a parameter, a loop or block variable, a buffer, or a value of the "
             "enclosing Python scope")

# (body, message, line, column, hint); the line and column are 1-based
CASES = {
    "unknown T name": (
        "    A[0] = T.expp(A[1])\n",
        "unknown name T.expp", 3, 12, "did you mean T.exp?"),
    "unknown axis kind": (
        "    for i in range(8):\n        with T.block('b'):\n            vi = T.axis.spacial(8, i)\n",
        "unknown name T.axis.spacial", 5, 18, "did you mean T.axis.spatial?"),
    "too many arguments": (
        "    for i in range(8):\n        with T.block('b'):\n            vi = T.axis.spatial(8, i, 'int32', 3)\n",
        "T.axis.spatial() takes from 2 to 3 positional arguments but 4 were given", 5, 48,
        SIGNATURE_HINT),
    "missing argument": (
        "    for i in range(8):\n        with T.block('b'):\n            vi = T.axis.spatial(8)\n",
        "T.axis.spatial() missing required argument 'binding'", 5, 18, SIGNATURE_HINT),
    "unknown keyword": (
        "    C = T.alloc_buffer((4,), dtyp='float32')\n",
        "T.alloc_buffer() got an unexpected keyword argument 'dtyp'", 3, 35, ALLOC_HINT),
    "argument given twice": (
        "    C = T.alloc_buffer((4,), 'float32', dtype='float32')\n",
        "T.alloc_buffer() got multiple values for argument 'dtype'", 3, 47, ALLOC_HINT),
    "undefined variable": (
        "    for i in range(8):\n        A[i] = A[j]\n",
        "undefined name 'j'", 4, 18, NAME_HINT),
    "misspelt variable": (
        "    for idx in range(8):\n        A[idx] = A[idy]\n",
        "undefined name 'idy'", 4, 20, "did you mean 'idx'?"),
    "store of the wrong number of lanes": (
        "    A[0:4] = B[0, 0]\n",
        "cannot store an int32 value into buffer A of float32x4", 3, 14,
        'convert the value with T.Cast("float32x4", ...)'),
    "store of a float literal out of the buffer's range": (
        "    B[0, 0] = 3e10\n",
        "cannot store the float literal 30000000000.0 into buffer B of int32", 3, 15, ""),
    "float loop extent": (
        "    for i in range(2.5):\n        A[0] = 1.0\n",
        "the bounds of a loop must be integers, got a float", 3, 20,
        "range takes integer extents, such as range(8) or range(n) for an int32 n"),
    "float expression as loop extent": (
        "    for i in T.parallel(A[0]):\n        A[0] = 1.0\n",
        "the bounds of a loop must be integers, got a float32 expression", 3, 25,
        "T.parallel takes integer extents, such as range(8) or range(n) for an int32 n"),
    "while with a vector condition": (
        "    while A[0:2] < 1.0:\n        A[0] = 1.0\n",
        "the condition of a while loop must be a bool condition, got a boolx2 expression", 3, 11, ""),
    "lambda": (
        "    A[0] = (lambda x: x)(1.0)\n",
        "lambda expressions are not supported in TVMScript", 3, 13, ""),
    "try": (
        "    try:\n        A[0] = 1.0\n    finally:\n        pass\n",
        "try statements are not supported in TVMScript", 3, 5, ""),
    "class inside a function": (
        "    class C:\n        pass\n",
        "class definitions inside a function are not supported in TVMScript", 3, 5, ""),
    "nested function": (
        "    def g():\n        pass\n",
        "function definitions inside a function are not supported in TVMScript", 3, 5, ""),
    "import inside a function": (
        "    import os\n",
        "import statements inside a function are not supported in TVMScript", 3, 5,
        "import at the top of the file"),
    "break": (
        "    for i in range(8):\n        break\n",
        "break statements are not supported in TVMScript", 4, 9, ""),
    "comprehension": (
        "    T.evaluate({i for i in range(3)})\n",
        "set comprehensions are not supported in TVMScript", 3, 16, ""),
    "too many indices in a store": (
        "    A[0, 1] = 1.0\n",
        "buffer A has 1 dimension but is indexed with 2 indices", 3, 5, "A has shape (8,)"),
    "too few indices in a load": (
        "    A[0] = T.Cast('float32', B[1])\n",
        "buffer B has 2 dimensions but is indexed with 1 index", 3, 30, "B has shape (8, 8)"),
    "remap kinds do not match the loops": (
        "    for i, j in T.grid(8, 8):\n        with T.block('b'):\n            vi, vj = T.axis.remap('SSR', [i, j])\n",
        "T.axis.remap: the kind string 'SSR' has 3 kinds but 2 loop variables are given", 5, 35,
        "give one kind (S for spatial, R for reduction) per loop variable"),
    "remap kind letter": (
        "    for i, j in T.grid(8, 8):\n        with T.block('b'):\n            vi, vj = T.axis.remap('SX', [i, j])\n",
        "T.axis.remap: unknown kind 'X' in 'SX'", 5, 35, "kinds are S (spatial) and R (reduction)"),
    "remap of a non-loop variable": (
        "    for i in range(8):\n        with T.block('b'):\n            vi = T.axis.remap('S', [n])\n",
        "T.axis.remap: n is not the variable of an enclosing loop", 5, 36, ""),
    "chained comparison": (
        "    for i in range(8):\n        if 0 < i < 4:\n            A[i] = 1.0\n",
        "chained comparisons such as a < b < c are not supported in TVMScript", 4, 12,
        "write (a < b) and (b < c)"),
    "Python syntax": (
        "    A[0] = = 1\n",
        "invalid Python syntax: invalid syntax", 3, 12, ""),
    "axis outside a block": (
        "    vi = T.axis.spatial(8, 0)\n",
        "T.axis.spatial must be called directly inside a T.block", 3, 10, DECL_HINT),
    "reads inside a loop of the block": (
        "    with T.block('b'):\n        for i in range(2):\n            T.reads(A[i])\n",
        "T.reads must be called directly inside a T.block", 5, 13, DECL_HINT),
    "duplicate reads": (
        "    with T.block('b'):\n        T.reads(A[0])\n        T.reads(A[1])\n",
        "duplicate T.reads in block 'b'", 5, 9, ""),
    "alloc_buffer inside a loop": (
        "    for i in range(2):\n        C = T.alloc_buffer((4,))\n",
        "T.alloc_buffer must be called directly inside a T.block or at the top of the function",
        4, 13, DECL_HINT),
    "init outside a block": (
        "    with T.init():\n        A[0] = 1.0\n",
        "T.init must be called directly inside a T.block", 3, 10, DECL_HINT),
    "name bound twice": (
        "    x = n + 1\n    x = n + 2\n",
        "'x' is already defined in this scope", 4, 5,
        "TVMScript binds each name once per scope; choose a new name"),
    "declaration not assigned": (
        "    T.alloc_buffer((4,))\n",
        "the result of T.alloc_buffer must be assigned to a name", 3, 5, ""),
    "unknown dtype": (
        "    C = T.alloc_buffer((4,), 'float33')\n",
        "unsupported data type 'float33': float comes in 16, 32, 64 bits", 3, 30, ""),
    "if on a vector": (
        "    if A[0:4]:\n        A[0] = 1.0\n",
        "the condition of an if statement must be a bool condition, got a buffer region",
        3, 8, ""),
    "node rule broken inside an expression": (
        "    A[0] = T.Select(n < 1, A[1], B[0, 0])\n",
        "Select branches differ in dtype: float32 and int32", 3, 12, ""),
    "unknown thread tag": (
        "    for i in T.thread_binding(8, thread='threadIdx.w'):\n        A[0] = 1.0\n",
        "unknown thread tag 'threadIdx.w'", 3, 41,
        "expected one of blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, "
        "threadIdx.z, vthread, vthread.x, vthread.y, vthread.z"),
    "match_buffer of a scalar": (
        "    C = T.match_buffer(n, (4,))\n",
        "T.match_buffer: parameter n is an int32 scalar, not a handle", 3, 24, ""),
    "integer true division": (
        "    B[0, 0] = n / 2\n",
        "'/' on integers is ambiguous in TIR: use floordiv/floormod (Python's // and %) or "
        "truncdiv/truncmod explicitly", 3, 15, ""),
    "huge power": (
        "    A[0] = T.float32(10 ** 100000)\n",
        "the power is too large to compute", 3, 22, ""),
    "let of the wrong dtype": (
        "    x: T.int64 = n\n",
        "expected an int64 value, got the int32 variable n", 3, 18,
        'convert it with T.Cast("int64", ...)'),
    "for over a list": (
        "    for i in [1, 2]:\n        A[0] = 1.0\n",
        "a for loop must iterate over range(...), T.serial, T.parallel, T.vectorized, T.unroll, "
        "T.thread_binding or T.grid, not a list", 3, 14, ""),
    "match_buffer larger than its region": (
        "    with T.block():\n        C = T.match_buffer(B[0, 0:4], (5,), \"int32\")\n"
        "        T.evaluate(0)\n",
        "T.match_buffer: C cannot view B's region: its shape (5,) does not fit the region's extent 4",
        4, 13, ""),
    "starred argument that is no sequence": (
        "    T.evaluate(T.max(*n))\n",
        "only a tuple or a list can be unpacked with *, got the int32 variable n", 3, 23, ""),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_message_and_location(case):
    body, message, line, column, hint = CASES[case]
    text = HEADER + body
    with pytest.raises(ParseError) as info:
        from_source(text, filename="kernel.py")
    err = info.value
    assert (err.message, err.line, err.column, err.hint) == (message, line, column, hint)
    assert err.filename == "kernel.py"
    assert err.source_line == text.splitlines()[line - 1]


def test_rendered_error_has_the_caret_under_the_culprit():
    with pytest.raises(ParseError) as info:
        from_source(HEADER + "    A[0] = T.expp(A[1])\n", filename="kernel.py")
    assert str(info.value) == (
        "kernel.py:3:12: error: unknown name T.expp\n"
        "        A[0] = T.expp(A[1])\n"
        "               ^\n"
        "hint: did you mean T.exp?")


def test_private_function_with_global_symbol():
    text = '@T.prim_func(private=True)\ndef f():\n    T.func_attr({"global_symbol": "f"})\n'
    with pytest.raises(ParseError) as info:
        from_source(text)
    err = info.value
    assert (err.message, err.line, err.column) == (
        "a private function may not have a global_symbol attribute", 3, 17)


@pytest.mark.parametrize("text, message", [
    ("import os\n", "cannot import os in TVMScript"),
    ("x = 1\n", "the source defines no @T.prim_func function and no @I.ir_module class"),
    ("def f():\n    pass\n", "function f must be decorated with @T.prim_func"),
    ("@T.prim_func\ndef f():\n    pass\n@T.prim_func\ndef g():\n    pass\n",
     "the source defines more than one @T.prim_func function"),
    ("@T.prim_func\ndef f(a):\n    pass\n", "parameter a needs a type annotation"),
    ("@T.prim_func\ndef f(a: T.handle = None):\n    pass\n",
     "parameter defaults are not supported in TVMScript"),
    ("print(1)\n", "Expr statements are not supported at the top level of TVMScript"),
    ("@I.ir_module\nclass M:\n    x = 1\n", "Assign statements are not supported in an @I.ir_module class"),
])
def test_module_level_errors(text, message):
    with pytest.raises(ParseError) as info:
        from_source(text)
    assert info.value.message == message


def test_deep_nesting_is_a_parse_error_not_a_recursion_error():
    deep = HEADER + "    A[0] = " + "1.0 + " * (MAX_DEPTH + 50) + "1.0\n"
    with pytest.raises(ParseError) as info:
        from_source(deep)
    assert info.value.message == f"the source is nested too deeply (more than {MAX_DEPTH} levels)"
    assert (info.value.line, info.value.column) == (3, 5)
    nested = HEADER + "    A[0] = " + "-" * 100_000 + "1.0\n"
    with pytest.raises(ParseError, match="nested too deeply"):
        from_source(nested)
    parens = HEADER + "    A[0] = " + "(" * 500 + "1.0" + ")" * 500 + "\n"
    with pytest.raises(ParseError, match="too many nested parentheses"):
        from_source(parens)


def test_huge_input_is_a_parse_error():
    with pytest.raises(ParseError, match="the source is too large"):
        from_source(HEADER + "    pass\n" + "#" * MAX_SOURCE_CHARS)


def test_non_text_input():
    with pytest.raises(ParseError, match="TVMScript source must be a str, got bytes"):
        from_source(b"@T.prim_func\ndef f():\n    pass\n")


def test_errors_in_decorated_functions_point_into_this_file():
    import numpy as np

    def define():
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = np.float32(2) + nope  # noqa: F821
        return f

    with pytest.raises(ParseError) as info:
        define()
    err = info.value
    first = inspect.getsourcelines(define)[1]
    assert err.filename == __file__
    assert (err.message, err.line, err.column) == ("undefined name 'nope'", first + 3, 36)
    assert err.source_line.strip() == "A[0] = np.float32(2) + nope  # noqa: F821"


def test_values_of_the_enclosing_scope_are_checked():
    table = {"a": 1}

    with pytest.raises(ParseError, match="the attribute __class__ cannot be used in TVMScript"):
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = table.__class__


# --------------------------------------------------------------------------
# whatever the text, the parser ends in a tirfun error, never a Python one

VALID = '''@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 8), "float32")
    C = T.alloc_buffer((8,), scope="local")
    for i, j in T.grid(n, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + A[vi, vj] * 2.0
    for k in T.parallel(8):
        x: T.float32 = C[k]
        if k < 4:
            A[0, k] = T.exp(x)
        else:
            A[0, k] = T.Select(x > 0.0, x, T.float32(0))
'''


@given(st.data())
def test_mutated_sources_never_raise_python_errors(data):
    text = VALID
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(text) - 1))
        action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(st.sampled_from(list("()[]:,.=+-*/<>%'\"#\n 0123456789abcdefTijkxnC")
                                          + ["T.", "float32", "    ", "with ", "for "]))
        if action == "delete":
            text = text[:pos] + text[pos + 1:]
        elif action == "insert":
            text = text[:pos] + piece + text[pos:]
        else:
            text = text[:pos] + piece + text[pos + 1:]
    try:
        from_source(text)
    except TirfunError:
        pass
