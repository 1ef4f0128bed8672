"""The node-construction API of ``tirfun.tir`` as TVM users call it:
Buffer methods (vload, vstore, access_ptr, offset_of, get_flattened_buffer),
IndexMap methods (map_indices, map_shape, inverse, map_ndarray), the
expression helpers (shifts, division, bit operations, NaN tests, limits),
and what each refuses. Loads, stores and maps are checked by what they
compute: the interpreter runs them, numpy says what they should give."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tirfun
from tirfun import tir
from tirfun.analysis.equality import assert_structural_equal
from tirfun.errors import NodeError
from tirfun.interp import run
from tirfun.nodes import Broadcast, BufferLoad, Cast, IntImm, Ramp


def _pointer(name: str = "A_data") -> tir.Var:
    return tir.Var(name, "handle")


def _func(params, body, buffer_map):
    return tir.PrimFunc(params, body, buffer_map=buffer_map)


# ---------------------------------------------------------------- Buffer methods


def test_vload_and_vstore_move_vectors_along_the_last_axis():
    A = tir.decl_buffer((4, 8), "float32", "A")
    B = tir.decl_buffer((4, 8), "float32", "B")
    assert A.vload([1, 2]).indices[1].value == 2  # a scalar load keeps its indices
    load = A.vload([1, 4], "float32x4")
    assert isinstance(load.indices[1], Ramp) and load.dtype == "float32x4"
    store = B.vstore([2, 0], load)
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    func = _func([a, b], store, {a: A, b: B})
    x = np.arange(32, dtype="float32").reshape(4, 8)
    y = np.zeros((4, 8), "float32")
    run(func, x, y)
    expected = np.zeros((4, 8), "float32")
    expected[2, 0:4] = x[1, 4:8]
    np.testing.assert_array_equal(y, expected)


def test_vload_refuses_another_element_type_and_a_wrong_rank():
    A = tir.decl_buffer((8,), "float32", "A")
    with pytest.raises(NodeError, match="cannot access int32x4 in buffer A of float32"):
        A.vload([0], "int32x4")
    with pytest.raises(NodeError, match="A.vload: buffer A has 1 dimensions, got 2 indices"):
        A.vload([0, 1])


def test_access_ptr_spans_from_the_offset_to_the_end_as_tvms():
    m, n = tir.Var("m", "int32"), tir.Var("n", "int32")
    A = tir.decl_buffer((m, n), "float32", "A", data=_pointer())
    ptr = A.access_ptr("rw")
    assert ptr.op == "tir.tvm_access_ptr" and ptr.dtype == "handle"
    assert ptr.args[0].dtype == "float32" and ptr.args[1] is A.data
    assert_structural_equal(ptr.args[3], m * n)
    assert ptr.args[4].value == A.READ | A.WRITE == 3
    assert A.access_ptr("w").args[4].value == tir.Buffer.WRITE
    assert_structural_equal(A.access_ptr("r", offset=100).args[3], m * n - 100)
    strided = tir.decl_buffer((m, n), "float32", "S", data=_pointer(), strides=[n + 1, 1])
    assert_structural_equal(strided.access_ptr("rw").args[3], (n + 1) * m)
    assert strided.access_ptr("rw", offset=100, extent=100).args[3].value == 100
    lanes = A.access_ptr("r", content_lanes=4, offset=8)
    assert lanes.args[0].dtype == "float32x4"
    assert_structural_equal(lanes.args[2], tir.floordiv(IntImm("int32", 8), 4))


def test_access_ptr_needs_a_pointer_and_a_mask_of_r_and_w():
    A = tir.decl_buffer((8,), "float32", "A")
    with pytest.raises(NodeError, match="buffer A has no data variable"):
        A.access_ptr("r")
    A = tir.decl_buffer((8,), "float32", "A", data=_pointer())
    with pytest.raises(NodeError, match="unknown access mask 'x'"):
        A.access_ptr("x")


def test_offset_of_is_the_flat_index_the_program_reads():
    """offset_of gives the index into the flat memory, element offset
    included, simplified as TVM simplifies it; the flattened buffer read at
    that index gives the element."""
    n = tir.Var("n", "int32")
    A = tir.decl_buffer((tir.Var("m", "int32"), n), "float32", elem_offset=100)
    assert_structural_equal(A.offset_of([2, 3]), [n * 2 + 103])
    B = tir.decl_buffer((3, 4, 5), "float32", "B")
    (flat,) = B.offset_of([1, 2, 3])
    assert flat.value == np.ravel_multi_index((1, 2, 3), (3, 4, 5))
    strided = tir.decl_buffer((3, 4), "float32", "S", strides=[10, 2])
    assert strided.offset_of([2, 3])[0].value == 26
    separated = tir.decl_buffer((4, 16, 32), "float32", "T", axis_separators=[2])
    assert [e.value for e in separated.offset_of([1, 2, 3])] == [18, 3]


def test_get_flattened_buffer_keeps_the_memory_and_follows_the_separators():
    data = _pointer("buf_data")
    buf = tir.decl_buffer([16, 32], "float32", "buf", data=data)
    flat = buf.get_flattened_buffer()
    assert flat.data is data and [d.value for d in flat.shape] == [512]
    one = tir.decl_buffer([16], "float32", "one")
    assert one.get_flattened_buffer() is one
    sep = tir.decl_buffer([4, 16, 32], axis_separators=[2]).get_flattened_buffer()
    assert [d.value for d in sep.shape] == [64, 32] and [s.value for s in sep.axis_separators] == [1]
    strided = tir.decl_buffer([4, 8], strides=[10, 1]).get_flattened_buffer()
    assert [d.value for d in strided.shape] == [40] and not strided.strides


def test_a_buffer_refuses_axis_separators_outside_its_dimensions():
    with pytest.raises(NodeError, match=r"axis separators must lie within 0..1"):
        tir.decl_buffer([1], axis_separators=[1, 2])
    with pytest.raises(NodeError, match="axis separators must be in increasing order"):
        tir.decl_buffer([2, 2, 2], axis_separators=[2, 1])
    with pytest.raises(ValueError):  # as TVM's ValueError
        tir.decl_buffer([1], axis_separators=[3])


# ---------------------------------------------------------------- IndexMap


def test_index_map_applies_to_indices_and_shapes():
    m = tir.IndexMap.from_func(lambda i: [i // 4, i % 4])
    assert [e.value for e in m.map_indices([42])] == [10, 2]
    wide = m.map_indices([IntImm("int64", 42)])
    assert [(e.dtype, e.value) for e in wide] == [("int64", 10), ("int64", 2)]
    assert [e.value for e in m.map_shape([14])] == [4, 4]  # a padded box
    assert [e.dtype for e in m.map_shape([IntImm("int64", 16)])] == ["int64", "int64"]
    n = tir.Var("n", "int32")
    outer, inner = m.map_shape([n])
    assert inner.value == 4
    for size in (1, 4, 14, 16, 17):  # the outer extent covers every i // 4 for i < n
        assert _value(outer, {n: size}) == (size - 1) // 4 + 1
    with pytest.raises(NodeError, match="constant positive sizes"):
        m.inverse([n])


def test_index_map_inverse_undoes_the_map_on_every_index():
    m = tir.IndexMap.from_func(lambda i, j: [j // 4, i, j % 4])
    inv = m.inverse([3, 8])
    assert inv.is_equivalent_to(tir.IndexMap.from_func(lambda a, b, c: [b, a * 4 + c]))
    for i in range(3):
        for j in range(8):
            back = inv.map_indices(m.map_indices([i, j]))
            assert [e.value for e in back] == [i, j]
    assert not inv.is_equivalent_to(tir.IndexMap.from_func(lambda a, b, c: [b, a * 4 - c]))


def test_index_map_without_an_inverse_over_a_shape_says_so():
    m = tir.IndexMap.from_func(lambda i: [i // 4, i % 4])
    with pytest.raises(NodeError, match=r"is not one to one over the shape \['14'\]"):
        m.inverse([14])


def test_map_ndarray_moves_each_element_where_the_map_sends_its_index():
    m = tir.IndexMap.from_func(lambda i0, i1, i2, i3: (i3 // 32, i0, i2 // 8, i3 % 32 // 16, i1,
                                                       i2 % 8, i3 % 16))
    x = np.random.default_rng(0).standard_normal((3, 3, 16, 64)).astype("float32")
    out = m.map_ndarray(tirfun.nd.array(x)).numpy()
    expected = np.zeros((2, 3, 2, 2, 3, 8, 16), "float32")
    for i0, i1, i2, i3 in np.ndindex(*x.shape):
        expected[i3 // 32, i0, i2 // 8, i3 % 32 // 16, i1, i2 % 8, i3 % 16] = x[i0, i1, i2, i3]
    np.testing.assert_array_equal(out, expected)
    transpose = tir.IndexMap.from_func(lambda a, b: (b, a))
    np.testing.assert_array_equal(transpose.map_ndarray(x[0, 0]).numpy(), x[0, 0].T)


# ---------------------------------------------------------------- expression helpers


def test_shift_amounts_outside_the_type_are_refused_as_by_tvm():
    x = tir.Var("x", "int32")
    for amount in (-1, 32):
        with pytest.raises(NodeError, match=f"the shift amount {amount} is not within 0..31"):
            x << amount
        with pytest.raises(NodeError, match="is not within 0..31"):
            x >> amount
    assert (x << 31).args[1].value == 31
    assert str(10 >> x) == "T.shift_right(10, x)" and str(10 << x) == "T.shift_left(10, x)"


def test_a_shift_a_python_int_starts_computes_as_c():
    A = tir.decl_buffer((4,), "int32", "A")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 4, "serial", tir.BufferStore(A, (40 >> i) + (1 << i), [i]))
    a = tir.Var("a", "handle")
    out = np.zeros(4, "int32")
    run(_func([a], body, {a: A}), out)
    np.testing.assert_array_equal(out, [(40 >> k) + (1 << k) for k in range(4)])


def test_bitwise_not_of_a_float_is_refused():
    with pytest.raises(NodeError, match="bitwise_not needs an integer operand, got float32"):
        ~tir.const(1.5, "float32")
    assert (~tir.Var("b", "int8")).dtype == "int8"


@pytest.mark.parametrize("helper", [tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod, tir.div])
def test_division_by_the_constant_zero_is_refused(helper):
    with pytest.raises(NodeError, match="division by the constant zero"):
        helper(tir.const(5, "int32"), tir.const(0, "int32"))
    with pytest.raises(NodeError, match="division by the constant zero"):
        helper(tir.Var("x", "int32"), 0)


def test_nan_tests_of_integers_are_constants_and_of_floats_calls():
    z, k = tir.Var("z", "int32"), tir.Var("k", "int8x2")
    assert str(tir.isnan(z)) == "T.bool(False)" and str(tir.isinf(z)) == "T.bool(False)"
    assert str(tir.isfinite(z)) == "T.bool(True)"
    assert tir.isnan(k).dtype == "boolx2"
    assert str(tir.isnan(tir.Var("x", "float32"))) == "T.isnan(x)"


def test_limits_infinity_reinterpret_and_vscale():
    assert str(tir.infinity("float16")) == 'T.float16("inf")'
    assert tir.max_value("float32").value == np.finfo("float32").max
    assert tir.min_value("float64").value == -np.finfo("float64").max
    assert (tir.min_value("int8").value, tir.max_value("uint16").value) == (-128, 65535)
    with pytest.raises(NodeError, match="infinity needs a float dtype"):
        tir.infinity("int32")
    bits = tir.reinterpret("int32", tir.const(1.0, "float32"))
    assert bits.dtype == "int32" and bits.op == "tir.reinterpret"
    with pytest.raises(NodeError, match="cannot change the size"):
        tir.reinterpret("int64", tir.const(1.0, "float32"))
    assert str(tir.vscale() * 4) == "T.vscale() * 4"
    assert math.isinf(tir.infinity("float32").value)


def test_reinterpret_and_pure_extern_calls_run():
    A = tir.decl_buffer((1,), "int32", "A")
    body = tir.BufferStore(A, tir.reinterpret("int32", tir.const(1.0, "float32")), [0])
    a = tir.Var("a", "handle")
    out = np.zeros(1, "int32")
    run(_func([a], body, {a: A}), out)
    assert out[0] == np.float32(1.0).view(np.int32)
    call = tir.call_pure_extern("float32", "expf", tir.const(0.0, "float32"))
    assert call.op == "tir.call_pure_extern" and call.args[0].value == "expf"


def test_a_scalar_cast_to_a_vector_type_is_broadcast():
    x = tir.Var("x", "float32")
    v = x.astype("float32x4")
    assert isinstance(v, Broadcast) and v.lanes == 4 and v.value is x
    w = x.astype("int32x4")
    assert isinstance(w, Broadcast) and isinstance(w.value, Cast) and w.dtype == "int32x4"


def test_numpy_scalars_are_constants_of_their_own_type():
    for value in (np.uint8(1), np.int64(3), np.float16(1), np.float64(1), np.bool_(True)):
        c = tir.const(value)
        assert c.dtype == ("bool" if value.dtype == np.bool_ else str(value.dtype))
    assert tir.const(1.0).dtype == "float32" and tir.const(1).dtype == "int32"


def test_an_expression_used_as_a_python_bool_is_a_value_error_as_in_tvm():
    x = tir.Var("x", "int32")
    with pytest.raises(ValueError, match="has no Python truth value"):
        bool(x < 1 and x > 0)


def test_buffer_load_helpers_keep_the_buffer():
    A = tir.decl_buffer((8,), "float32", "A")
    load = A.vload(3)
    assert isinstance(load, BufferLoad) and load.buffer is A


def test_a_variable_typed_by_a_pointer_type_is_a_handle_pointing_there():
    ptype = tirfun.nodes.PointerType("float32", "shared")
    v = tir.Var("buf", ptype)
    assert v.dtype == "handle" and v.type_annotation is ptype
    assert ptype.element_type == "float32" and ptype.storage_scope == "shared"
    t = tirfun.te.var("array", ptype)
    assert t.dtype == "handle" and t.type_annotation is ptype
    alloc = tir.Allocate(v, "float32", [4], True, tir.Evaluate(0))
    assert alloc.buffer_var is v


def test_lanes_given_as_integer_constants_are_lane_counts():
    ramp = tir.Ramp(0, 1, IntImm("int64", 4))
    assert ramp.lanes == 4 and ramp.dtype == "int32x4"
    assert tir.Broadcast(tir.const(1.0, "float32"), IntImm("int32", 8)).dtype == "float32x8"
    with pytest.raises(NodeError, match="tirfun has no scalable vectors"):
        tir.Ramp(0, 1, tir.vscale() * 4)
    with pytest.raises(NodeError, match="Broadcast needs at least 2 lanes, got 1"):
        tir.Broadcast(tir.const(1.0, "float32"), 1)


def test_a_buffer_among_a_functions_parameters_gets_a_handle_parameter():
    """As TVM's PrimFunc constructor: the buffer is bound to a handle
    parameter of its own, so the function is called with an array there."""
    n = tir.Var("n", "int32")
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 4, "serial", tir.BufferStore(A, tir.Cast("float32", n + i), [i]))
    func = tir.PrimFunc([n, A], body)
    assert [p.name for p in func.params] == ["n", "var_A"] and func.params[1].dtype == "handle"
    assert func.buffer_map[func.params[1]] is A
    out = np.zeros(4, "float32")
    run(func, 10, out)
    np.testing.assert_array_equal(out, [10, 11, 12, 13])
    clash = tir.PrimFunc([tir.Var("var_A", "handle"), A], tir.Evaluate(0))
    assert [p.name for p in clash.params] == ["var_A", "var_A_1"]


def _value(e, env):
    """An integer or bool expression's value at ``env`` (by the interpreter's
    arithmetic: the simplifier folds it once the variables are constants)."""
    from tirfun.analysis.arith.simplify import simplify_expr
    from tirfun.rewrites.exprs import substitute_expr

    out = simplify_expr(substitute_expr(e, {v: IntImm(v.dtype, x) for v, x in env.items()}))
    assert isinstance(out, IntImm), out
    return out.value


@pytest.mark.parametrize("forward, shape", [
    (lambda i: [i // 4, i % 4], [16]),
    (lambda i: [i // 4, i % 4], [15]),
    (lambda i: [(i + 1) // 4, (i + 1) % 4], [14]),
    (lambda i, j: [(i + 1) // 4, (j + 5) // 8, (i + 1) % 4, (j + 5) % 8], [14, 31]),
    (lambda i: [(i // 4) % 8, i // 32, i % 4], [116]),
    (lambda i: [(i + 5) // 32, ((i + 5) // 4) % 8, (i + 5) % 4], [123]),
])
def test_non_surjective_inverse_undoes_the_map_and_marks_the_padding(forward, shape):
    """Every index of the box comes back through the inverse; exactly the
    places of the new box that no index reaches satisfy the predicate."""
    m = tir.IndexMap.from_func(forward)
    inverse, padding = m.non_surjective_inverse(shape)
    new_shape = [d.value for d in m.map_shape(shape)]
    reached = set()
    for idx in np.ndindex(*shape):
        new = tuple(e.value for e in m.map_indices(list(idx)))
        reached.add(new)
        assert tuple(e.value for e in inverse.map_indices(list(new))) == idx
    for new in np.ndindex(*new_shape):
        env = dict(zip(inverse.initial_indices, new))
        assert bool(_value(padding, env)) == (new not in reached), new


def test_a_map_with_no_padded_inverse_says_so():
    m = tir.IndexMap.from_func(lambda i: [i // 4, i // 2])
    with pytest.raises(NodeError, match="not one to one over the shape .* even into a padded box"):
        m.non_surjective_inverse([8])


def test_a_handle_or_a_string_cannot_be_cast_to_a_value_type():
    with pytest.raises(NodeError, match="cannot cast a handle"):
        tir.StringImm("s").astype("int32")
    with pytest.raises(NodeError, match="cannot cast a handle"):
        tir.Var("p", "handle").astype("uint64")


def test_an_iter_var_from_a_pair_and_a_name_as_tvms_constructor_takes():
    iv = tir.IterVar((2, 6), "k", 2)
    assert (iv.dom.min.value, iv.dom.extent.value) == (2, 4)
    assert iv.var.name == "k" and iv.var.dtype == "int32" and iv.iter_type == "CommReduce"
    wide = tir.IterVar((IntImm("int64", 0), IntImm("int64", 8)), None, "DataPar")
    assert wide.var.name == "iter" and wide.var.dtype == "int64"
    with pytest.raises(NodeError, match=r"an IterVar's domain is a Range or \(begin, end\)"):
        tir.IterVar((0, 1, 2), "x", 0)


def test_an_integer_constant_equals_a_python_number_of_its_value_as_in_tvm():
    # TVM folds ``IntImm == 128`` to a true constant, and TVM users write
    # ``assert sch.get(loop).extent == 128``
    from tirfun import Schedule
    from tirfun.script import from_source
    from tirfun.script import tir as T

    sch = Schedule(from_source("""
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(0)
"""))
    outer, inner = sch.split(sch.get_loops("B")[0], [None, 16])
    assert sch.get(outer).extent == 8 and sch.get(inner).extent == 16
    assert sch.get(inner).extent != 8
    assert T.bool(True) == True and True == T.bool(True)  # noqa: E712 - the comparison under test
    assert IntImm("int64", 5) == 5 and 5 == IntImm("int64", 5)
    # between nodes, equality stays structural: the dtype counts
    assert IntImm("int32", 5) != IntImm("int64", 5)
    # and an IntImm is a key apart from the number
    assert len({IntImm("int32", 5): "node", 5: "number"}) == 2
