"""``script()`` takes TVM's keyword arguments."""

from __future__ import annotations

import pytest

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.errors import NodeError
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.script.script_options import IGNORED


@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)


def test_line_numbers_are_right_aligned_as_tvm_prints_them():
    text = add_one.script()
    numbered = add_one.script(print_line_numbers=True)
    lines = text.split("\n")
    width = len(str(len(lines))) + 1
    assert numbered.split("\n") == [f"{i + 1} ".rjust(width) + line for i, line in enumerate(lines)]
    assert numbered.split("\n")[0] == " 1 # from tirfun.script import tir as T"
    assert numbered.split("\n")[-1].startswith(f"{len(lines)} ")


def test_indent_prefix_and_name():
    text = add_one.script(indent_spaces=2, tir_prefix="tx", name="kernel")
    assert "@tx.prim_func\ndef kernel(A: tx.Buffer((8,), \"float32\")" in text
    assert "\n  for i in range(8):\n    with tx.block(\"B\"):\n" in text
    assert "T." not in text
    # the text is TVMScript still: two-space indentation parses back
    back = from_source(add_one.script(indent_spaces=2))
    assert structural_equal(back, add_one) and back == add_one
    mod = tirfun.IRModule({"main": add_one})
    assert "@IR.ir_module\nclass Kernels:\n" in mod.script(ir_prefix="IR", name="Kernels")


def test_renamed_function_keeps_its_symbol():
    text = add_one.script(name="kernel")
    assert 'T.func_attr({"global_symbol": "add_one"})' in text
    assert from_source(text) == add_one


@pytest.mark.parametrize("option", sorted(IGNORED))
def test_tvm_options_without_effect_are_accepted(option):
    value = {"show_meta": True, "verbose_expr": True, "syntax_sugar": False,
             "show_object_address": True, "num_context_lines": 2, "obj_to_underline": [add_one],
             "obj_to_annotate": {add_one: "here"}}.get(option, IGNORED[option])
    assert add_one.script(**{option: value}) == add_one.script()


def test_bad_options_are_refused():
    with pytest.raises(NodeError, match="script\\(\\) got an unexpected keyword argument 'colour'"):
        add_one.script(colour=True)
    with pytest.raises(NodeError, match="indent_spaces must be a positive int"):
        add_one.script(indent_spaces=0)
    with pytest.raises(NodeError, match="tir_prefix must be a Python identifier"):
        add_one.script(tir_prefix="T.x")
    with pytest.raises(TypeError):  # NodeError is a TypeError, as Python's own
        add_one.script(nmae="x")
