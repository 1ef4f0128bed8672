"""The names of ``tvm.runtime``, ``tvm.ir``, ``tvm.tir`` and ``tvm.error``
that build nodes, served by tirfun as TVM's users call them: each gives
tirfun's node, and what the node computes is checked where it runs."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
import tirfun.compat.tvm as tvm
from tirfun.errors import TirfunError
from tirfun.interp import run
from tirfun.nodes import FloatImm, IntImm, PointerType


def test_runtime_const_and_convert_give_tvms_default_types():
    assert tvm.runtime.const(1).dtype == "int32" and tvm.runtime.const(2**40).dtype == "int64"
    assert tvm.runtime.const(1.5).dtype == "float32" and tvm.runtime.const(True).dtype == "bool"
    assert tvm.runtime.const(3, "int8") == IntImm("int8", 3)
    assert tvm.runtime.convert(1) == IntImm("int32", 1)
    assert tvm.runtime.convert(0.5) == FloatImm("float32", 0.5)
    assert tvm.runtime.convert([1, (2.0, "s")]) == [IntImm("int32", 1),
                                                   [FloatImm("float32", 2.0), "s"]]
    assert tvm.runtime.convert({"k": 2}) == {"k": IntImm("int32", 2)}
    x = tvm.tir.Var("x", "int32")
    assert tvm.runtime.convert(x) is x


def test_pointer_types_describe_handle_variables():
    ptype = tvm.ir.PointerType(tvm.ir.PrimType("float"))
    assert ptype == PointerType("float32", "global")
    assert isinstance(ptype.element_type, tvm.ir.PrimType) and ptype.element_type == "float32"
    assert not isinstance("float32", tvm.ir.PrimType)
    scoped = tvm.ir.PointerType(tvm.ir.PrimType("int8"), "shared")
    assert scoped.scope == "shared" and scoped.element == "int8"
    v = tvm.tir.Var("p", "handle", scoped)
    assert v.type_annotation == scoped


def test_decl_buffer_has_a_pointer_of_its_own_as_in_tvm():
    buf = tvm.tir.decl_buffer((4, 8), "float32", "A")
    assert buf.data is not None and buf.data.dtype == "handle"
    assert buf.data.type_annotation == PointerType("float32", "global")
    assert tvm.tir.decl_buffer((2,), "bool", "M").data.type_annotation.element == "int8"
    assert buf.get_flattened_buffer().data is buf.data
    ptr = buf.access_ptr("r", offset=8)
    assert ptr.args[1] is buf.data and ptr.args[3].value == 24


def test_a_function_built_from_decl_buffers_runs():
    A = tvm.tir.decl_buffer((8,), "float32", "A")
    B = tvm.tir.decl_buffer((8,), "float32", "B")
    i = tvm.tir.Var("i", "int32")
    body = tvm.tir.For(i, 0, 8, "serial", B.vstore([i], A.vload([i]) * 2.0))
    a, b = tvm.tir.Var("a", "handle"), tvm.tir.Var("b", "handle")
    func = tvm.tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})
    x, y = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    run(func, x, y)
    np.testing.assert_array_equal(y, x * 2)
    built = np.zeros(8, "float32")
    tirfun.build(func)(x, built)
    np.testing.assert_array_equal(built, y)


def test_tir_names_tvm_has():
    assert str(tvm.tir.vscale()) == "T.vscale()"
    assert str(tvm.tir.infinity("float64")) == 'T.float64("inf")'
    assert tvm.tir.SizeVar("n", "int64").dtype == "int64"
    v = tvm.tir.Shuffle([tvm.tir.const(1, "int32x2"), tvm.tir.const(2, "int32x2")], [0, 3])
    assert v.dtype == "int32x2"
    assert tvm.tir.Reduce is tirfun.te.reduce.Reduce
    assert tvm.tir.CommReducer is tirfun.nodes.reducer.CommReducer


def test_tvm_error_is_tirfuns_base_error():
    assert tvm.error.TVMError is TirfunError
    with pytest.raises(tvm.error.TVMError):
        tvm.tir.floordiv(tvm.tir.Var("x", "int32"), 0)


def test_assert_prim_expr_equal_compares_values_not_spellings():
    n = tvm.tir.Var("n", "int32")
    tvm.testing.assert_prim_expr_equal(n * 2 + 3 + 100, 103 + n * 2)
    with pytest.raises(TirfunError, match="not equal"):
        tvm.testing.assert_prim_expr_equal(n * 2, n * 3)


def test_installed_the_names_import_as_tvms():
    import tirfun.compat

    module = tirfun.compat.install()
    try:
        from tvm.error import TVMError
        from tvm.runtime import const

        assert module.error.TVMError is TVMError and const(1).dtype == "int32"
    finally:
        tirfun.compat.uninstall()


def test_arith_analyzer_simplifies_and_proves_within_bound_ranges():
    ana = tvm.arith.Analyzer()
    i, j = tvm.tir.Var("i", "int32"), tvm.tir.Var("j", "int32")
    assert ana.simplify(tvm.tir.const(42, "int32") // 4).value == 10
    assert ana.can_prove_equal(i * 4 + j, j + 4 * i)
    assert not ana.can_prove_equal(i * 4 + j, i * 4 - j)
    assert not ana.can_prove(i < 8)
    ana.bind(i, tvm.ir.Range(0, 8))
    assert ana.can_prove(i < 8) and not ana.can_prove(i < 7)
    assert ana.simplify(tvm.tir.floordiv(i, 8)).value == 0  # i lies in [0, 8)


def test_ir_range_is_begin_and_end_as_in_tvm():
    """``tvm.ir.Range(2, 5)`` is [2, 5): extent 3 (tirfun's own Range takes
    a min and an extent); a loop over it runs three times."""
    r = tvm.ir.Range(2, 5)
    assert (r.min.value, r.extent.value) == (2, 3) and isinstance(r, tvm.ir.Range)
    whole = tvm.ir.Range(tvm.tir.Var("n", "int64"))
    assert whole.min.dtype == "int64" and whole.min.value == 0
    assert tvm.ir.Range.from_min_extent(2, 5).extent.value == 5
    k = tirfun.te.reduce_axis(tvm.ir.Range(2, 5), "k")
    A = tirfun.te.placeholder((8,), name="A")
    S = tirfun.te.compute((), lambda: tirfun.te.sum(A[k], axis=k), name="S")
    x = np.arange(8, dtype="float32")
    out = np.zeros((), "float32")
    run(tirfun.te.create_prim_func([A, S]), x, out)
    assert out == x[2:5].sum()


def test_a_reduce_built_by_hand_has_a_true_condition_by_default():
    k = tvm.tir.IterVar((0, 4), "k", 2)
    A = tirfun.te.placeholder((4,), name="A")
    combiner = tirfun.te.sum.combiner("float32")
    red = tvm.tir.Reduce(combiner, [A[k.var]], [k], None, 0)
    assert red.condition.value == 1 and red.dtype == "float32"
    S = tirfun.te.compute((), lambda: red, name="S")
    x = np.arange(4, dtype="float32")
    out = np.zeros((), "float32")
    run(tirfun.te.create_prim_func([A, S]), x, out)
    assert out == x.sum()
