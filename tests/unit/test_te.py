"""te: tensors, computes, reducers, and the PrimFuncs create_prim_func builds."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun import te, tir
from tirfun.errors import NodeError
from tirfun.interp import run
from tirfun.nodes import Block, BlockRealize, For, IntImm, IterVarType, SeqStmt, Var
from sequential import ordered_reduce, ordered_sum

RNG = np.random.default_rng(3)

TUTORIAL_TEXT = '''\
# from tirfun.script import ir as I
# from tirfun.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i0 in range(8):
            with T.block("B"):
                v_i0 = T.axis.spatial(8, i0)
                T.reads(A[v_i0])
                T.writes(B[v_i0])
                B[v_i0] = A[v_i0] + T.float32(1.0)'''

MATMUL_TEXT = '''\
# from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    for x, y, k in T.grid(128, 128, 128):
        with T.block("C"):
            v_x, v_y, v_k = T.axis.remap("SSR", [x, y, k])
            T.reads(A[v_x, v_k], B[v_y, v_k])
            T.writes(C[v_x, v_y])
            with T.init():
                C[v_x, v_y] = T.float32(0.0)
            C[v_x, v_y] = C[v_x, v_y] + A[v_x, v_k] * B[v_y, v_k]'''


def tutorial_func():
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    return te.create_prim_func([A, B])


def test_tutorial_program_prints_as_the_tutorial_shows():
    assert tirfun.IRModule({"main": tutorial_func()}).script() == TUTORIAL_TEXT


def test_matmul_from_the_create_prim_func_docstring_prints_as_tvm_prints_it():
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    k = te.reduce_axis((0, 128), "k")
    C = te.compute((128, 128), lambda x, y: te.sum(A[x, k] * B[y, k], axis=k), name="C")
    assert te.create_prim_func([A, B, C]).script() == MATMUL_TEXT


def test_create_prim_func_structure():
    f = tutorial_func()
    assert [p.name for p in f.params] == ["var_A", "var_B"]
    assert all(p.dtype == "handle" for p in f.params)
    assert [f.buffer_map[p].name for p in f.params] == ["A", "B"]
    assert dict(f.attrs) == {"global_symbol": "main", "tir.noalias": True}
    root = f.body
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    loop = root.block.body
    assert isinstance(loop, For) and loop.loop_var == Var("i0", "int32") and loop.kind == "serial"
    block = loop.body.block
    assert block.name_hint == "B"
    assert [iv.var.name for iv in block.iter_vars] == ["v_i0"]
    assert list(loop.body.iter_values) == [loop.loop_var]


def test_axis_names_follow_the_lambda():
    A = te.placeholder((2, 3, 4), name="A")
    named = te.compute((2, 3, 4), lambda a, b, c: A[a, b, c], name="named")
    mixed = te.compute((2, 3, 4), lambda a, *rest: A[a, rest[0], rest[1]], name="mixed")
    chosen = te.compute((2, 3, 4), lambda *i: A(*i), name="chosen", varargs_names=["p", "q", "r"])
    assert [iv.var.name for iv in named.op.axis] == ["a", "b", "c"]
    assert [iv.var.name for iv in mixed.op.axis] == ["a", "i0", "i1"]
    assert [iv.var.name for iv in chosen.op.axis] == ["p", "q", "r"]


def test_reduction_block_has_init_and_reduce_iteration_variable():
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), "k")
    B = te.compute((4,), lambda i: te.max(A[i, k], axis=k), name="B")
    f = te.create_prim_func([A, B])
    block = f.body.block.body.body.body.block
    assert [iv.iter_type for iv in block.iter_vars] == [IterVarType.DataPar, IterVarType.CommReduce]
    assert block.init is not None
    # te.max starts from the smallest finite float32, as TVM's min_value
    assert block.init.value.value == -float(np.finfo(np.float32).max)
    assert [r.buffer.name for r in block.reads] == ["A"]
    assert [r.buffer.name for r in block.writes] == ["B"]


def test_intermediate_tensors_are_allocated_in_the_root_block_and_names_are_unique():
    A = te.placeholder((3, 4), name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] * 2.0, name="compute")
    C = te.compute((3, 4), lambda i, j: B[i, j] + 1.0, name="compute")
    f = te.create_prim_func([A, C])
    root = f.body.block
    assert [b.name for b in root.alloc_buffers] == ["compute"]
    assert [f.buffer_map[p].name for p in f.params] == ["A", "compute_1"]
    nests = root.body
    assert isinstance(nests, SeqStmt)
    loops = [nests[0].loop_var.name, nests[0].body.loop_var.name,
             nests[1].loop_var.name, nests[1].body.loop_var.name]
    assert loops == ["i", "j", "i_1", "j_1"]
    names = [s.body.body.block.name_hint for s in nests]
    assert names == ["compute", "compute_1"]
    a, c = RNG.uniform(-1, 1, (3, 4)).astype("float32"), np.zeros((3, 4), "float32")
    run(f, a, c)
    np.testing.assert_array_equal(c, a * 2 + 1)


def test_symbolic_sizes_become_match_buffers():
    n = te.var("n")
    A = te.placeholder((n, 2), name="A")
    B = te.compute((n, 2), lambda i, j: A[i, j] + 1.0, name="B")
    text = te.create_prim_func([A, B]).script()
    assert "def main(var_A: T.handle, var_B: T.handle):" in text
    assert "n = T.int32()" in text
    assert "A = T.match_buffer(var_A, (n, 2))" in text


def test_custom_comm_reducer():
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, t), name="product")
    A = te.placeholder((3, 5), name="A")
    k = te.reduce_axis((0, 5), "k")
    B = te.compute((3,), lambda i: product(A[i, k], axis=k), name="B")
    a, b = RNG.uniform(0.5, 1.5, (3, 5)).astype("float32"), np.zeros(3, "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, ordered_reduce(np.multiply, a, 1, 1))


def test_te_reducers_are_the_tir_comm_reducer_node():
    from tirfun.nodes.reducer import CommReducer

    A = te.placeholder((3, 5), name="A")
    k = te.reduce_axis((0, 5), "k")
    B = te.compute((3,), lambda i: te.sum(A[i, k], axis=k), name="B")
    combiner = B.op.body[0].combiner
    assert te.CommReducer is CommReducer and type(combiner) is CommReducer
    x, y = combiner.lhs[0], combiner.rhs[0]
    assert combiner([x], [y]) == [x + y]
    assert combiner.script() == "T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])"


def test_reduction_where_skips_points():
    A = te.placeholder((3, 6), name="A")
    k = te.reduce_axis((0, 6), "k")
    B = te.compute((3,), lambda i: te.sum(A[i, k], axis=k, where=k < i + 3), name="B")
    a, b = RNG.uniform(-1, 1, (3, 6)).astype("float32"), np.zeros(3, "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, [ordered_sum(a[i, :i + 3], 0) for i in range(3)])


def test_max_and_min_of_values_and_multiple_reduce_axes():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: te.max(A[i], 0.0) + te.min(A[i], 0.5), name="B")
    M = te.placeholder((2, 3, 4), name="M")
    r1, r2 = te.reduce_axis((0, 3), "r1"), te.reduce_axis((0, 4), "r2")
    S = te.compute((2,), lambda i: te.sum(M[i, r1, r2], axis=[r1, r2]), name="S")
    a, b = RNG.uniform(-1, 1, 4).astype("float32"), np.zeros(4, "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0) + np.minimum(a, np.float32(0.5)))
    m, s = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32"), np.zeros(2, "float32")
    run(te.create_prim_func([M, S]), m, s)
    np.testing.assert_array_equal(s, ordered_sum(m, (1, 2)))


def test_reduce_axis_in_index_arithmetic():
    A = te.placeholder((8,), name="A")
    r = te.reduce_axis((0, 3), "r")
    B = te.compute((6,), lambda i: te.sum(A[i + r] * 2.0, axis=r), name="B")
    a, b = RNG.uniform(-1, 1, 8).astype("float32"), np.zeros(6, "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, [ordered_sum(a[i:i + 3] * np.float32(2), 0) for i in range(6)])


def test_zero_dimensional_computes():
    A = te.placeholder((5,), name="A")
    k = te.reduce_axis((0, 5), "k")
    S = te.compute((), lambda: te.sum(A[k], axis=k), name="S")
    f = te.create_prim_func([A, S])
    assert [iv.var.name for iv in f.body.block.body.body.block.iter_vars] == ["v_k"]
    a, s = RNG.uniform(-1, 1, 5).astype("float32"), np.zeros((), "float32")
    run(f, a, s)
    np.testing.assert_array_equal(s, ordered_sum(a, 0))
    # without any axis the block still gets one trivial iteration variable, as in TVM
    D = te.compute((), lambda: A[2] * 2.0, name="D")
    g = te.create_prim_func([A, D])
    realize = g.body.block.body
    assert [iv.var.name for iv in realize.block.iter_vars] == ["vi"]
    assert list(realize.iter_values) == [IntImm("int32", 0)]
    d = np.zeros((), "float32")
    run(g, a, d)
    assert d == a[2] * 2


def test_int64_shapes_give_int64_loops():
    A = te.placeholder((IntImm("int64", 4),), name="A")
    B = te.compute((IntImm("int64", 4),), lambda i: A[i] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    loop = f.body.block.body
    assert loop.loop_var.dtype == "int64"


def test_te_errors():
    A = te.placeholder((3, 4), name="A")
    with pytest.raises(NodeError, match="takes 1 indices but the shape has 2 dimensions"):
        te.compute((3, 4), lambda i: A[i, 0], name="B")
    with pytest.raises(NodeError, match="tensor A has 2 dimensions, indexed with 1"):
        te.compute((3,), lambda i: A[i], name="B")
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(NodeError, match="a reduction must be the whole body of a compute"):
        te.compute((3,), lambda i: te.sum(A[i, k], axis=k) * 2.0, name="B")
    B = te.compute((3, 4), lambda i, j: A[i, j], name="B")
    with pytest.raises(NodeError,
                       match="placeholder A is read by the program but is not one of the arguments"):
        te.create_prim_func([B])
    with pytest.raises(NodeError, match="a shape dimension cannot be negative"):
        te.placeholder((-1,), name="bad")
    with pytest.raises(NodeError, match="either all values of one reduction or none"):
        te.compute((3,), lambda i: (te.sum(A[i, k], axis=k), A[i, 1]), name="two")
    with pytest.raises(NodeError, match="needs an axis"):
        te.sum(A[0, 0])
    with pytest.raises(NodeError, match="tensor A appears twice among the arguments"):
        te.create_prim_func([A, A, B])


def test_create_prim_func_output_is_accepted_by_the_verifier():
    from tirfun.analysis.verify import verify

    A = te.placeholder((4, 5), name="A")
    k = te.reduce_axis((0, 5), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    C = te.compute((4,), lambda i: B[i] * 2.0, name="C")
    verify(te.create_prim_func([A, C]))


def test_tensor_shape_dtype_and_ops():
    A = te.placeholder((3, 4), dtype="int32", name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] * 2, name="B")
    assert [int(d) for d in B.shape] == [3, 4]
    assert B.dtype == "int32" and B.ndim == 2 and B.name == "B"
    assert B.op.input_tensors[0] is A
    assert isinstance(B.op.body[0].b, IntImm)
    assert isinstance(tutorial_func().body.block, Block)


def test_compute_attrs_become_block_annotations():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B", attrs={"layout": "NCHW"})
    block = te.create_prim_func([A, B]).body.block.body.body.block
    assert dict(block.annotations) == {"layout": "NCHW"}
