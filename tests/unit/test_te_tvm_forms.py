"""create_prim_func on the te programs TVM's own tests and tutorials write:
variables that share a name, repeated compute names, scalar arguments,
int64 indices, computes with several outputs, tuple reductions (argmax)
and layout-free placeholders. Each result is compared with the TVMScript
TVM gives for it, and run."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun import te, tir
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import NodeError
from tirfun.interp import run
from tirfun.script import from_source
from tirfun.script import tir as T


def _round_trips(func):
    verify(func)
    parsed = from_source(func.script())
    assert_structural_equal(parsed, func)
    assert parsed.script() == func.script()


def test_a_size_and_a_reduction_axis_named_alike_stay_two_variables():
    m, n, k_size = te.var("m"), te.var("n"), te.var("k")
    A = te.placeholder((m, k_size), "float32", name="A")
    B = te.placeholder((k_size, n), "float32", name="B")
    k = te.reduce_axis((0, k_size), "k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    text = func.script()
    assert "    m, k = T.int32(), T.int32()\n    A = T.match_buffer(var_A, (m, k))\n" in text
    assert "for i, j, k_1 in T.grid(m, n, k):" in text
    assert 'v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k_1])' in text
    _round_trips(func)
    a = np.random.default_rng(0).uniform(-1, 1, (3, 5)).astype("float32")
    b = np.random.default_rng(1).uniform(-1, 1, (5, 4)).astype("float32")
    c = np.zeros((3, 4), "float32")
    run(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_two_te_variables_with_one_name_are_two_sizes():
    n1, n2 = te.var("n"), te.var("n")
    A = te.placeholder((n1,), name="A")
    B = te.placeholder((n2,), name="B")
    C = te.compute((n1, n2), lambda i, j: A[i] * B[j], name="C")
    func = te.create_prim_func([A, B, C])
    text = func.script()
    assert "n = T.int32()" in text and "n_1 = T.int32()" in text
    assert "C = T.match_buffer(var_C, (n, n_1))" in text
    _round_trips(func)
    a, b = np.arange(2, dtype="float32"), np.arange(3, dtype="float32")
    c = np.zeros((2, 3), "float32")
    tirfun.build(func)(a, b, c)
    np.testing.assert_array_equal(c, np.outer(a, b))


def test_a_te_variable_among_the_arguments_is_a_scalar_parameter():
    n = te.var("n")
    alpha = te.var("alpha", "float32")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * alpha, name="B")
    func = te.create_prim_func([A, alpha, B])
    assert [p.name for p in func.params] == ["var_A", "alpha", "var_B"]
    assert func.params[1].dtype == "float32"
    _round_trips(func)
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    run(func, a, np.float32(2.5), b)
    np.testing.assert_array_equal(b, a * np.float32(2.5))


def test_a_variable_that_is_no_size_and_no_argument_is_reported():
    beta = te.var("beta", "float32")
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + beta, name="B")
    with pytest.raises(NodeError, match="compute B uses the variable beta, which is neither an "
                                        "axis, nor a size of a tensor, nor an argument"):
        te.create_prim_func([A, B])


def test_repeated_compute_names_give_unique_block_names():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda x, y: A[x, y] * 2, name="main")
    C = te.compute((16, 16), lambda x, y: B[x, y] + 1, name="main")
    func = te.create_prim_func([A, C])
    sch = tirfun.Schedule(func)
    assert sch.get_block("main_1").name == "main_1"
    # as in TVM, the names are made unique when the function is made: the
    # first block is "main", with nothing ambiguous about it
    first = sch.get_block("main")
    assert sch.get(first).body.value.b.value == 2  # B = A * 2, the first compute
    assert sch.get_loops(first)
    k1, k2 = te.reduce_axis((0, 16), "k1"), te.reduce_axis((0, 16), "k2")
    S = te.compute((16,), lambda i: te.sum(A[i, k1], axis=k1), name="sum")
    R = te.compute((), lambda: te.sum(S[k2], axis=k2), name="sum")
    sch = tirfun.Schedule(te.create_prim_func([A, R]))
    assert sch.get_block("sum_1").name == "sum_1"
    assert len(sch.get(sch.get_block("sum")).iter_vars) == 2  # the row sums: i and k1
    assert len(sch.get(sch.get_block("sum_1")).iter_vars) == 1
    # a primitive on the first block: the result still computes the sums
    sch.split(sch.get_loops("sum")[1], factors=[4, 4])
    a = np.random.default_rng(0).uniform(-1, 1, (16, 16)).astype("float32")
    r = np.zeros((), "float32")
    run(sch.mod["main"], a, r)
    np.testing.assert_allclose(r, a.sum(), rtol=1e-4)


def test_index_dtype_override_makes_every_index_int64():
    k = te.reduce_axis((0, 128), "k")
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C")
    func = te.create_prim_func([A, B, C], index_dtype_override="int64")

    @T.prim_func
    def expected(A: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                 B: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                 C: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i0, j0, k0 in T.grid(T.int64(128), T.int64(128), T.int64(128)):
            with T.block("C"):
                i, j, kk = T.axis.remap("SSR", [i0, j0, k0])
                with T.init():
                    C[i, j] = T.float32(0)
                C[i, j] = C[i, j] + A[i, kk] * B[j, kk]

    assert_structural_equal(func, expected)
    _round_trips(func)


def test_index_dtype_override_keeps_values_of_their_own_type():
    n = te.var("n")
    A = te.placeholder((n,), "int32", name="A")
    B = te.compute((n,), lambda i: A[i] + i, name="B")
    func = te.create_prim_func([A, B], index_dtype_override="int64")
    text = func.script()
    assert "n = T.int64()" in text and "B[v_i] = A[v_i] + T.Cast(\"int32\", v_i)" in text
    _round_trips(func)
    a, b = np.arange(5, dtype="int32") * 3, np.zeros(5, "int32")
    tirfun.build(func)(a, b)
    np.testing.assert_array_equal(b, a + np.arange(5))
    with pytest.raises(NodeError, match="index_dtype_override must be an integer type"):
        te.create_prim_func([A, B], index_dtype_override="float32")


def test_a_compute_with_several_outputs_has_one_block_per_output_in_one_loop_nest():
    n, m = te.var("n"), te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")
    assert (B0.name, B1.name) == ("B.v0", "B.v1")

    @T.prim_func
    def expected(a0: T.handle, a1: T.handle, b0: T.handle, b1: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        m = T.int32()
        n = T.int32()
        A0 = T.match_buffer(a0, (m, n))
        A1 = T.match_buffer(a1, (m, n))
        B0 = T.match_buffer(b0, (m, n))
        B1 = T.match_buffer(b1, (m, n))
        for i0, i1 in T.grid(m, n):
            with T.block("B.v0"):
                i, j = T.axis.remap("SS", [i0, i1])
                B0[i, j] = A0[i, j] + T.float32(2)
            with T.block("B.v1"):
                i2, j2 = T.axis.remap("SS", [i0, i1])
                B1[i2, j2] = A1[i2, j2] * T.float32(3)

    func = te.create_prim_func([A0, A1, B0, B1])
    assert_structural_equal(func, expected)
    assert "var_B_v0: T.handle" in func.script()
    _round_trips(func)
    a0, a1 = np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")
    b0, b1 = np.zeros((2, 3), "float32"), np.zeros((2, 3), "float32")
    tirfun.build(func)(a0, a1, b0, b1)
    np.testing.assert_array_equal(b0, a0 + 2)
    np.testing.assert_array_equal(b1, a1 * 3)


def _argmax():
    def combine(x, y):
        better = x[1] >= y[1]
        return tir.Select(better, x[0], y[0]), tir.Select(better, x[1], y[1])

    def identity(index_dtype, value_dtype):
        return tir.const(-1, index_dtype), te.min_value(value_dtype)

    return te.comm_reducer(combine, identity, name="argmax")


def test_argmax_is_one_block_writing_both_outputs_through_let_bindings():
    argmax = _argmax()
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="float32")
    k = te.reduce_axis((0, n), "k")
    max_idx, max_val = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k),
                                  name="argmax")

    @T.prim_func
    def expected(var_idx: T.handle, var_val: T.handle, var_argmax_v0: T.handle,
                 var_argmax_v1: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        m = T.int32()
        n = T.int32()
        idx = T.match_buffer(var_idx, [m, n], dtype="int32")
        val = T.match_buffer(var_val, [m, n], dtype="float32")
        argmax_v0 = T.match_buffer(var_argmax_v0, [m], dtype="int32")
        argmax_v1 = T.match_buffer(var_argmax_v1, [m], dtype="float32")
        for i0, i1 in T.grid(m, n):
            with T.block("argmax"):
                i, kk = T.axis.remap("SR", [i0, i1])
                T.reads(val[i, kk], idx[i, kk])
                T.writes(argmax_v0[i], argmax_v1[i])
                with T.init():
                    argmax_v0[i] = T.int32(-1)
                    argmax_v1[i] = T.min_value("float32")
                v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= val[i, kk], argmax_v0[i], idx[i, kk])
                v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= val[i, kk], argmax_v1[i],
                                                  val[i, kk])
                argmax_v0[i] = v_argmax_v0
                argmax_v1[i] = v_argmax_v1

    func = te.create_prim_func([idx, val, max_idx, max_val])
    assert_structural_equal(func, expected)
    _round_trips(func)
    rng = np.random.default_rng(3)
    values = rng.permutation(24).reshape(4, 6).astype("float32")
    indices = np.tile(np.arange(6, dtype="int32"), (4, 1))
    expect_idx, expect_val = values.argmax(axis=1), values.max(axis=1)
    out_idx, out_val = np.zeros(4, "int32"), np.zeros(4, "float32")
    run(func, indices, values, out_idx, out_val)
    np.testing.assert_array_equal(out_idx, expect_idx)
    np.testing.assert_array_equal(out_val, expect_val)
    out_idx[:], out_val[:] = 0, 0
    tirfun.build(func)(indices, values, out_idx, out_val)
    np.testing.assert_array_equal(out_idx, expect_idx)
    np.testing.assert_array_equal(out_val, expect_val)


def test_tuple_reduction_errors():
    argmax = _argmax()
    A = te.placeholder((3, 4), name="A")
    I = te.placeholder((3, 4), "int32", name="I")
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(NodeError, match="the reduction has 2 values but the compute returns 1"):
        te.compute((3,), lambda i: argmax((I[i, k], A[i, k]), axis=k)[:1], name="half")
    with pytest.raises(NodeError, match="output 0 is not value 0 of the same reduction"):
        te.compute((3,), lambda i: tuple(reversed(argmax((I[i, k], A[i, k]), axis=k))), name="r")
    bad = te.comm_reducer(lambda x, y: x[0], lambda t0, t1: (tir.const(0, t0), tir.const(0, t1)))
    with pytest.raises(NodeError, match="the combination has 1 values for 2 dtypes"):
        bad((I[0, k], A[0, k]), axis=k)


def test_layout_free_placeholders_become_layout_free_buffers():
    k = te.reduce_axis((0, 128), "k")
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C",
                   attrs={"layout_free_placeholders": [B]})
    D = te.compute((128, 128), lambda x, y: C[x, y] + 1, name="D",
                   attrs={"layout_free_placeholders": [C], "workload": "dropped"})

    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 D: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True, "layout_free_buffers": [1]})
        C = T.alloc_buffer([128, 128], dtype="float32")
        for i0, i1, i2 in T.grid(128, 128, 128):
            with T.block("C"):
                x, y, kk = T.axis.remap("SSR", [i0, i1, i2])
                with T.init():
                    C[x, y] = T.float32(0)
                C[x, y] = C[x, y] + A[x, kk] * B[y, kk]
        for i0, i1 in T.grid(128, 128):
            with T.block("D"):
                T.block_attr({"layout_free_placeholders": [C]})
                x, y = T.axis.remap("SS", [i0, i1])
                D[x, y] = C[x, y] + T.float32(1)

    func = te.create_prim_func([A, B, D])
    assert_structural_equal(func, expected)
    _round_trips(func)


def _copy_twice():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.extern((n,), [B], lambda ins, outs: tir.call_extern(
        "handle", "memcpy", outs[0].data, ins[0].data, n.astype("int64") * 4), name="C")
    D = te.compute((n,), lambda i: C[i] + 1.0, name="D")
    return A, B, C, D


def test_extern_calls_a_c_function_of_the_process_in_an_opaque_block():
    A, B, C, D = _copy_twice()
    assert C.shape[0] is A.shape[0] and C.dtype == "float32" and C.op.input_tensors == [B]
    func = te.create_prim_func([A, D])
    text = func.script()
    assert ('    with T.block("C"):\n        T.reads()\n        T.writes()\n'
            '        T.call_extern("handle", "memcpy", C.data, B.data, T.Cast("int64", n) * T.int64(4))\n'
            ) in text
    # as TVM prints them: the allocations' own pointers are B.data and C.data
    assert "    B = T.alloc_buffer((n,))\n    C = T.alloc_buffer((n,))\n" in text
    _round_trips(func)
    x, y = np.arange(6, dtype="float32"), np.zeros(6, "float32")
    tirfun.build(func)(x, y)
    np.testing.assert_array_equal(y, x * 2 + 1)
    with pytest.raises(tirfun.InterpError, match="unsupported extern function 'memcpy'"):
        run(func, x, y)


def test_extern_buffers_are_the_argument_buffers_and_several_outputs_are_a_list():
    A = te.placeholder((4,), name="A")
    outs = te.extern([(4,), (4,)], [A], lambda ins, outs: tir.call_extern(
        "handle", "memcpy", outs[1].data, ins[0].data, tir.const(16, "int64")), name="E")
    assert isinstance(outs, list) and [t.name for t in outs] == ["E.v0", "E.v1"]
    func = te.create_prim_func([A, *outs])
    assert [func.buffer_map[p].name for p in func.params] == ["A", "E", "E_1"]
    x, e0, e1 = np.arange(4, dtype="float32"), np.zeros(4, "float32"), np.zeros(4, "float32")
    tirfun.build(func)(x, e0, e1)
    np.testing.assert_array_equal(e1, x)
    m = te.var("m")
    first, second = te.extern([(4,), (m,)], [A], lambda ins, outs: tir.call_extern(
        "handle", "memcpy", outs[1].data, ins[0].data, tir.const(16, "int64")), name="F")
    assert second.shape[0] is m
    func = te.create_prim_func([A, first, second])
    # as TVM declares them, an extern's buffers have a variable element
    # offset, and an argument's data pointer is its handle parameter
    assert "F_1 = T.match_buffer(var_F_1, (m,), data=var_F_1, elem_offset=elem_offset_2)" \
        in func.script()
    _round_trips(func)
    x, f0, f1 = np.arange(4, dtype="float32"), np.zeros(4, "float32"), np.zeros(6, "float32")
    tirfun.build(func)(x, f0, f1)
    np.testing.assert_array_equal(f1[:4], x)


def test_call_packed_is_refused_by_the_build_naming_it():
    A = te.placeholder((4,), name="A")
    P = te.extern((4,), [A], lambda ins, outs: te.call_packed("my.packed.fn", ins[0], outs[0]),
                  name="P")
    func = te.create_prim_func([A, P])
    # the extern's one block is the function's root, as in TVM
    assert func.body.block.name_hint == "P"
    call = func.body.block.body.value
    assert call.op == "tir.tvm_call_packed"
    # buffers are passed as TVM passes them: array descriptors of pointer,
    # shape, no strides, rank, element type and element offset
    assert call.args[0].value == "my.packed.fn"
    for arg, param in zip(call.args[1:], func.params):
        assert arg.op == "tir.tvm_stack_make_array"
        data, shape, strides, ndim, kind, offset = arg.args
        buf = func.buffer_map[param]
        assert data is param and shape.op == "tir.tvm_stack_make_shape"
        assert [d.value for d in shape.args] == [4] and strides.value == 0 and ndim.value == 1
        assert kind.dtype == "float32" and kind.value == 0.0 and offset is buf.elem_offset
    _round_trips(func)
    with pytest.raises(tirfun.BuildError, match="tvm_call_packed"):
        tirfun.build(func)


def test_extern_errors():
    A = te.placeholder((4,), name="A")
    I = te.placeholder((4,), "int32", name="I")
    with pytest.raises(NodeError, match="cannot infer the output dtype from the inputs; pass dtype="):
        te.extern((4,), [A, I], lambda ins, outs: tir.call_extern("handle", "f"))
    with pytest.raises(NodeError, match="fcompute must return a statement or an expression"):
        te.extern((4,), [A], lambda ins, outs: "nothing")
    with pytest.raises(NodeError, match="the inputs must be te tensors"):
        te.extern((4,), [np.zeros(4)], lambda ins, outs: tir.call_extern("handle", "f"))


def test_an_extern_between_computes_reads_its_input_at_the_argument_offset():
    """An extern's buffers have variable element offsets, as TVM declares
    them: an argument's is bound from the array, an allocation's is 0."""
    A = te.placeholder((4,), name="A")
    i = tir.Var("i", "int32")
    E = te.extern((4,), [A], lambda ins, outs: tir.For(
        i, 0, 4, "serial", tir.BufferStore(outs[0], ins[0][i] * 2.0, [i])), name="E")
    C = te.compute((4,), lambda j: E[j] + 1.0, name="C")
    func = te.create_prim_func([A, C])
    buf_a = func.buffer_map[func.params[0]]
    assert isinstance(buf_a.elem_offset, tir.Var)
    (e_buf,) = func.body.block.alloc_buffers
    assert e_buf.name == "E" and e_buf.elem_offset is None  # an allocation starts its memory
    _round_trips(func)
    a, c = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    run(func, a, c)
    np.testing.assert_array_equal(c, a * 2 + 1)
    built = np.zeros(4, "float32")
    tirfun.build(func)(a, built)
    np.testing.assert_array_equal(built, c)


def test_an_extern_call_of_the_empty_dtype_is_a_void_call():
    """``call_extern("", ...)``: TVM reads the empty dtype as void."""
    A = te.placeholder((4,), name="A")
    C = te.extern((4,), [A], lambda ins, outs: tir.call_extern(
        "", "myfunc", ins[0].data, outs[0].data), name="C")
    func = te.create_prim_func([A, C])
    call = func.body.block.body.value
    assert call.dtype == "void" and call.dtype.is_void
    _round_trips(func)


def _nested_sum(shape):
    """sum over r1 < i1, r2 < r1 of x[i0, i1, i2, r1, r2]: a reduction
    axis whose range depends on a spatial axis, and one on another
    reduction axis."""
    x = te.placeholder(shape, "float32", "x")

    def fcompute(*axes):
        r1 = te.reduce_axis(tir.Range.from_min_extent(0, axes[1]), "r1")
        r2 = te.reduce_axis(tir.Range.from_min_extent(0, r1), "r2")
        return te.sum(x(*axes, r1, r2), [r1, r2])

    return x, te.compute(shape[:3], fcompute, name="S")


def test_reduction_axes_with_dependent_ranges_nest_blocks_as_tvm_and_sum_once():
    """As TVM nests them: each level of dependency gets its own loops and a
    block (S_l1, S_l2) whose deeper blocks rebind the outer variables. The
    sum starts once per output element, in the block above the first
    reduction loop, so an empty range (i1 = 0) sums to 0. (TVM puts an
    init in every block with a reduction axis: the sum over an empty range
    is never initialised, and the deeper init, whose rebound r1 is always
    at its minimum, resets the sum at each r1.)"""
    shape = (3, 5, 2, 5, 5)
    x, S = _nested_sum(shape)
    func = te.create_prim_func([x, S])
    verify(func)
    text = func.script()
    assert 'with T.block("S_l1"):' in text and 'with T.block("S_l2"):' in text
    assert "for r1 in range(v_i1):" in text and "for r2 in range(v_r1):" in text
    assert "with T.init():" not in text
    assert "S[v_i0, v_i1, v_i2] = T.float32(0.0)\n            for r1 in range(v_i1):" in text
    _round_trips(func)
    a = np.random.default_rng(3).uniform(-1, 1, shape).astype("float32")
    out = np.full(shape[:3], np.nan, "float32")
    run(func, a, out)
    expected = np.zeros(shape[:3])
    for i1 in range(shape[1]):
        for r1 in range(i1):
            expected[:, i1, :] += a[:, i1, :, r1, :r1].sum(axis=-1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    built = np.full(shape[:3], np.nan, "float32")
    tirfun.build(func)(a, built)
    np.testing.assert_array_equal(built, out)


def test_an_outermost_reduction_axis_with_a_dependent_one_initialises_in_its_block():
    """r1 < 4 at the outermost level, r2 < r1 below it: the outer block's
    T.init starts the sum (at r1 = 0, before any r2), the inner block only
    adds."""
    A = te.placeholder((3, 4, 4), name="A")
    r1 = te.reduce_axis((0, 4), "r1")
    r2 = te.reduce_axis(tir.Range.from_min_extent(0, r1), "r2")
    S = te.compute((3,), lambda i: te.sum(A[i, r1, r2], axis=[r1, r2]), name="S")
    func = te.create_prim_func([A, S])
    verify(func)
    text = func.script()
    assert text.count("with T.init():") == 1
    assert text.index("with T.init():") < text.index('with T.block("S"):')
    _round_trips(func)
    a = np.random.default_rng(5).uniform(-1, 1, (3, 4, 4)).astype("float32")
    out = np.full(3, np.nan, "float32")
    run(func, a, out)
    np.testing.assert_allclose(out, np.tril(a, -1).sum(axis=(1, 2)), rtol=1e-5, atol=1e-6)
    built = np.full(3, np.nan, "float32")
    tirfun.build(func)(a, built)
    np.testing.assert_array_equal(built, out)


def test_a_schedule_works_on_the_nested_blocks():
    x, S = _nested_sum((2, 4, 2, 4, 4))
    sch = tirfun.Schedule(te.create_prim_func([x, S]))
    outer = sch.get_block("S_l1")
    sch.reorder(*reversed(sch.get_loops(outer)))
    a = np.random.default_rng(4).uniform(-1, 1, (2, 4, 2, 4, 4)).astype("float32")
    before, after = np.zeros((2, 4, 2), "float32"), np.zeros((2, 4, 2), "float32")
    run(te.create_prim_func([x, S]), a, before)
    run(sch.mod["main"], a, after)
    np.testing.assert_array_equal(after, before)



def test_a_reduction_with_initial_values_starts_from_them():
    """``te.sum(..., init=S[i])`` starts each sum at ``S[i]``: the block's
    init stores it (TVM's create_prim_func stores the identity instead,
    dropping the initial value)."""
    A = te.placeholder((4, 8), name="A")
    S = te.placeholder((4,), name="S")
    k = te.reduce_axis((0, 8), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, init=S[i]), name="B")
    func = te.create_prim_func([A, S, B])
    assert "with T.init():\n                B[v_i] = S[v_i]" in func.script()
    _round_trips(func)
    rng = np.random.default_rng(6)
    a, init = rng.uniform(-1, 1, (4, 8)).astype("float32"), rng.uniform(-1, 1, 4).astype("float32")
    out = np.zeros(4, "float32")
    run(func, a, init, out)
    np.testing.assert_allclose(out, a.sum(axis=1) + init, rtol=1e-5, atol=1e-6)
    built = np.zeros(4, "float32")
    tirfun.build(func)(a, init, built)
    np.testing.assert_array_equal(built, out)
    m = te.compute((4,), lambda i: te.max(A[i, k], axis=k, init=0.5), name="M")
    out = np.zeros(4, "float32")
    run(te.create_prim_func([A, m]), a, out)
    np.testing.assert_array_equal(out, np.maximum(a.max(axis=1), np.float32(0.5)))


def test_initial_values_are_checked():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), "k")
    with pytest.raises(NodeError, match="must have the dtypes of its values \\(float32\\), got int32"):
        te.sum(A[0, k], axis=k, init=tir.const(1, "int32"))
    with pytest.raises(NodeError, match="2 initial values for 1 values"):
        te.sum(A[0, k], axis=k, init=[0.0, 1.0])
    with pytest.raises(NodeError, match="needs an axis to reduce over"):
        te.max(A[0, 0], A[0, 1], init=0.0)
