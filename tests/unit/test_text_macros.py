"""``@T.macro`` written in script text: a template that ``from_source``
expands at each call site without running Python, hygienic as TVM's
macros are (names read where the macro is defined, or with
``hygienic=False`` where it is called)."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.errors import ParseError
from tirfun.script import from_source

HEAD = "from tirfun.script import tir as T\n\n"

MAIN = '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
'''


def test_a_text_macro_expands_at_each_call_with_its_arguments_and_defaults():
    func = from_source(HEAD + '''SCALE = 2.0

@T.macro
def scaled_add(dst, src, i, k=T.float32(1.0)):
    dst[i] = src[i] * T.float32(SCALE) + k

''' + MAIN + '''    for i in range(4):
        scaled_add(B, A, i)
    for j in range(2):
        scaled_add(src=A, dst=B, i=j, k=T.float32(5.0))
''')
    assert func.script().splitlines()[4:] == [
        "    for i in range(4):",
        "        B[i] = A[i] * T.float32(2.0) + T.float32(1.0)",
        "    for j in range(2):",
        "        B[j] = A[j] * T.float32(2.0) + T.float32(5.0)",
    ]
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    tirfun.interp.run(func, a, b)
    assert b.tolist() == [5, 7, 5, 7]
    compiled = np.zeros(4, "float32")
    tirfun.build(func)(a, compiled)
    assert compiled.tolist() == b.tolist()


HYGIENE = HEAD + '''V = 1

@T.macro{decorator}
def put(i):
    B[i] = T.float32(V)

''' + MAIN + '''    V = T.meta_var(2)
    for i in range(4):
        put(i)
'''


def test_a_hygienic_macro_reads_names_where_it_is_defined():
    with pytest.raises(ParseError, match="undefined name 'B'") as info:
        from_source(HYGIENE.format(decorator=""))
    assert info.value.line == 7  # in the macro's body, where B is read


def test_a_non_hygienic_macro_reads_names_where_it_is_called():
    func = from_source(HYGIENE.format(decorator="(hygienic=False)"))
    b = np.zeros(4, "float32")
    tirfun.interp.run(func, np.zeros(4, "float32"), b)
    assert b.tolist() == [2, 2, 2, 2]  # the caller's V, not the module's
    text = HYGIENE.format(decorator="(hygienic=True)").replace("    B[i]", "    A[i]")
    with pytest.raises(ParseError, match="undefined name 'A'"):
        from_source(text)


def test_macros_nest_and_live_in_an_ir_module_class():
    mod = from_source('''from tirfun.script import ir as I
from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.macro
    def inc(buf, i):
        buf[i] = buf[i] + T.float32(1.0)

    @T.macro
    def inc_twice(buf, i):
        inc(buf, i)
        inc(buf, i)

    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        for i in range(4):
            inc_twice(A, i)
''')
    assert list(mod) == ["main"]
    a = np.arange(4, dtype="float32")
    tirfun.interp.run(mod, a)
    assert a.tolist() == [2, 3, 4, 5]


@pytest.mark.parametrize("text, message", [
    ("@T.macro\ndef m(i):\n    A[i] = T.float32(0)\n\n" + MAIN + "    m()\n",
     "macro m: missing a required argument: 'i'"),
    ("@T.macro\ndef m(i):\n    A[i] = T.float32(0)\n\n" + MAIN + "    m(1, j=2)\n",
     "macro m: got an unexpected keyword argument 'j'"),
    ("@T.macro\ndef m(*i):\n    pass\n\n" + MAIN + "    m()\n",
     r"macro m: \*args parameters are not supported in TVMScript text"),
    ("@T.macro(hygienic=3)\ndef m(i):\n    pass\n\n" + MAIN + "    m(1)\n",
     r"T.macro\(hygienic=...\) takes True or False"),
    ("@T.macro(inline=True)\ndef m(i):\n    pass\n\n" + MAIN + "    m(1)\n",
     "T.macro\\(\\) got an unexpected keyword argument 'inline'"),
    ("@T.macro\ndef m(i):\n    m(i)\n\n" + MAIN + "    m(1)\n",
     "macro m expands more than 32 levels deep"),
    ("@T.macro\ndef m(i):\n    pass\n\nX = m(1)\n" + MAIN + "    pass\n",
     "the macro m can only be called inside a function body"),
    (MAIN + "    T.macro(1)\n", "T.macro cannot be called inside a TVMScript function"),
])
def test_text_macro_mistakes(text, message):
    with pytest.raises(ParseError, match=message):
        from_source(HEAD + text)
