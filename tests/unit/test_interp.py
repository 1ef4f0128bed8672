"""The reference interpreter: results against numpy, TIR's semantics, and
every error it reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tirfun import te, tir
from tirfun.errors import ArgumentError, InterpError
from tirfun.interp import compile_func, evaluate, run
from tirfun.nodes import (
    Allocate, AssertStmt, AttrStmt, Block, BlockRealize, Broadcast, Buffer, BufferRegion,
    BufferStore, Cast, DeclBuffer, Evaluate, FloatImm, For, IfThenElse, IntImm, IRModule, IterVar,
    LetStmt,
    MatchBufferRegion, PrimFunc, Ramp, Range, Select, SeqStmt, Var,
)
from sequential import libm, ordered_matmul, ordered_sum

RNG = np.random.default_rng(7)


def rand(*shape, dtype="float32"):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def func_of(body, *buffers, scalars=(), root=True):
    """A PrimFunc over ``buffers`` (as parameters, in order) then ``scalars``."""
    params, buffer_map = [], {}
    for b in buffers:
        h = Var(f"{b.name}_handle", "handle")
        params.append(h)
        buffer_map[h] = b
    params.extend(scalars)
    if root:
        body = BlockRealize([], True, Block([], [], [], "root", body))
    return PrimFunc(params, body, buffer_map=buffer_map)


def spatial_block(name, extents, body_fn, init_fn=None, reduce_mask=None, predicate=True):
    """Loops i0, i1... over ``extents`` around one block with variables v0, v1...;
    ``body_fn(*vars)`` gives the body statement."""
    loops = [Var(f"{name}_i{k}") for k in range(len(extents))]
    vs = [Var(f"{name}_v{k}") for k in range(len(extents))]
    kinds = reduce_mask or ["DataPar"] * len(extents)
    ivs = [IterVar(Range(0, e), v, kind) for e, v, kind in zip(extents, vs, kinds)]
    block = Block(ivs, [], [], name, body_fn(*vs), init=None if init_fn is None else init_fn(*vs))
    stmt = BlockRealize(loops, predicate if not callable(predicate) else predicate(*loops), block)
    for lv, e in reversed(list(zip(loops, extents))):
        stmt = For(lv, 0, e, "serial", stmt)
    return stmt


# ----------------------------------------------------------------------------- te programs


def test_elementwise():
    A = te.placeholder((5, 7), name="A")
    B = te.placeholder((5, 7), name="B")
    C = te.compute((5, 7), lambda i, j: A[i, j] * B[i, j] - 0.5, name="C")
    a, b, c = rand(5, 7), rand(5, 7), np.zeros((5, 7), "float32")
    run(te.create_prim_func([A, B, C]), a, b, c)
    np.testing.assert_array_equal(c, a * b - np.float32(0.5))


def test_broadcast_add():
    A = te.placeholder((4, 6), name="A")
    B = te.placeholder((6,), name="B")
    C = te.compute((4, 6), lambda i, j: A[i, j] + B[j], name="C")
    a, b, c = rand(4, 6), rand(6), np.zeros((4, 6), "float32")
    run(te.create_prim_func([A, B, C]), a, b, c)
    np.testing.assert_array_equal(c, a + b[None, :])


def test_matmul():
    A = te.placeholder((8, 5), name="A")
    B = te.placeholder((5, 6), name="B")
    k = te.reduce_axis((0, 5), "k")
    C = te.compute((8, 6), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    a, b, c = rand(8, 5), rand(5, 6), rand(8, 6)
    run(te.create_prim_func([A, B, C]), a, b, c)
    np.testing.assert_array_equal(c, ordered_matmul(a, b))


def test_batched_matmul():
    A = te.placeholder((3, 4, 5), name="A")
    B = te.placeholder((3, 5, 2), name="B")
    k = te.reduce_axis((0, 5), "k")
    C = te.compute((3, 4, 2), lambda b, i, j: te.sum(A[b, i, k] * B[b, k, j], axis=k), name="C")
    a, b, c = rand(3, 4, 5), rand(3, 5, 2), rand(3, 4, 2)
    run(te.create_prim_func([A, B, C]), a, b, c)
    np.testing.assert_array_equal(c, ordered_matmul(a, b))


@pytest.mark.parametrize("reducer, reference", [(te.sum, ordered_sum), (te.max, np.max),
                                                (te.min, np.min)])
def test_row_reductions(reducer, reference):
    A = te.placeholder((6, 9), name="A")
    k = te.reduce_axis((0, 9), "k")
    B = te.compute((6,), lambda i: reducer(A[i, k], axis=k), name="B")
    a, b = rand(6, 9), rand(6)
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, reference(a, 1))


def test_softmax_over_several_blocks():
    A = te.placeholder((4, 10), name="A")
    k1 = te.reduce_axis((0, 10), "k")
    mx = te.compute((4,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    ex = te.compute((4, 10), lambda i, j: te.exp(A[i, j] - mx[i]), name="ex")
    k2 = te.reduce_axis((0, 10), "k")
    sm = te.compute((4,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    out = te.compute((4, 10), lambda i, j: ex[i, j] / sm[i], name="out")
    a, o = rand(4, 10) * 3, np.zeros((4, 10), "float32")
    run(te.create_prim_func([A, out]), a, o)
    e = libm(math.exp, a - a.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(o, e / ordered_sum(e, 1)[:, None])


def test_small_conv2d():
    X = te.placeholder((2, 6, 5), name="X")      # channels, height, width
    W = te.placeholder((3, 2, 3, 2), name="W")   # filters, channels, kh, kw
    rc = te.reduce_axis((0, 2), "rc")
    ry = te.reduce_axis((0, 3), "ry")
    rx = te.reduce_axis((0, 2), "rx")
    Y = te.compute((3, 4, 4), lambda f, y, x: te.sum(X[rc, y + ry, x + rx] * W[f, rc, ry, rx],
                                                     axis=[rc, ry, rx]), name="Y")
    x, w, y = rand(2, 6, 5), rand(3, 2, 3, 2), np.zeros((3, 4, 4), "float32")
    run(te.create_prim_func([X, W, Y]), x, w, y)
    expected = np.zeros((3, 4, 4), "float32")
    for f in range(3):
        for i in range(4):
            for j in range(4):
                expected[f, i, j] = ordered_sum(x[:, i:i + 3, j:j + 2] * w[f], (0, 1, 2))
    np.testing.assert_array_equal(y, expected)


def test_transpose():
    A = te.placeholder((3, 5), name="A")
    B = te.compute((5, 3), lambda i, j: A[j, i], name="B")
    a, b = rand(3, 5), np.zeros((5, 3), "float32")
    run(te.create_prim_func([A, B]), a, b)
    np.testing.assert_array_equal(b, a.T)


def test_symbolic_size_bound_from_array_shape():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    f = te.create_prim_func([A, B])
    for size in (1, 4, 9):
        a, b = rand(size), np.zeros(size, "float32")
        run(f, a, b)
        np.testing.assert_array_equal(b, a * 2)


def test_module_runs_its_main_or_only_function():
    A = te.placeholder((3,), name="A")
    B = te.compute((3,), lambda i: A[i] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    for mod in (IRModule({"main": f}), IRModule({"other": f})):
        a, b = rand(3), np.zeros(3, "float32")
        run(mod, a, b)
        np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(InterpError, match="none is named main"):
        run(IRModule({"f": f, "g": f}), rand(3), rand(3))


# ----------------------------------------------------------------------------- semantics


def _scalar_program(dtype, value_fn, operands):
    """out[0] = value_fn(*loads of one-element buffers of ``operands`` dtypes)."""
    bufs = [Buffer(f"X{k}", [1], dt) for k, dt in enumerate(operands)]
    out = Buffer("out", [1], dtype)
    body = BufferStore(out, value_fn(*[b[0] for b in bufs]), [0])
    return func_of(body, *bufs, out)


def _eval(dtype, value_fn, *values):
    operands = [np.asarray(v).dtype.name for v in values]
    f = _scalar_program(dtype, value_fn, operands)
    out = np.zeros(1, dtype=dtype)
    run(f, *[np.array([v]) for v in values], out)
    return out[0]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_arithmetic_wraps_as_the_dtype(dtype):
    info = np.iinfo(dtype)
    values = RNG.integers(info.min, info.max, size=(20, 2), endpoint=True, dtype=dtype)
    for a, b in values:
        with np.errstate(over="ignore"):
            assert _eval(dtype, lambda x, y: x + y, a, b) == a + b
            assert _eval(dtype, lambda x, y: x * y, a, b) == a * b
            assert _eval(dtype, lambda x, y: x - y, a, b) == a - b


def test_floor_and_truncated_division_on_negative_numbers():
    for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2), (-1, 3), (6, -3)]:
        x, y = np.int32(a), np.int32(b)
        assert _eval("int32", tir.floordiv, x, y) == a // b
        assert _eval("int32", tir.floormod, x, y) == a % b
        assert _eval("int32", tir.truncdiv, x, y) == int(np.trunc(a / b))
        assert _eval("int32", tir.truncmod, x, y) == np.fmod(a, b)


def test_integer_division_by_zero_is_an_interp_error():
    with pytest.raises(InterpError, match="division by zero") as info:
        _eval("int32", tir.floordiv, np.int32(3), np.int32(0))
    assert "out" in str(info.value)  # the statement storing into out


def test_float_division_by_zero_gives_ieee_results():
    assert _eval("float32", lambda x, y: x / y, np.float32(1), np.float32(0)) == np.inf
    assert _eval("float32", lambda x, y: x / y, np.float32(-1), np.float32(0)) == -np.inf
    assert np.isnan(_eval("float32", lambda x, y: x / y, np.float32(0), np.float32(0)))


def test_casts_behave_as_in_c():
    for v in [-2.7, 2.7, -0.5, 100.9]:
        assert _eval("int32", lambda x: Cast("int32", x), np.float32(v)) == int(np.float32(v))
    for v in [300, -129, 127, 65535]:
        assert _eval("int8", lambda x: Cast("int8", x), np.int32(v)) == np.int32(v).astype(np.int8)
        assert _eval("uint8", lambda x: Cast("uint8", x), np.int32(v)) == np.int32(v).astype(np.uint8)
    for v in RNG.uniform(-10, 10, size=10):
        assert _eval("float32", lambda x: Cast("float32", x), np.float64(v)) == np.float32(v)
    assert _eval("bool", lambda x: Cast("bool", x), np.float32(0.25)) == np.True_


def test_float32_operations_round_after_each_step():
    # (x * y) + z with float32 rounding of the product, as numpy computes in float32
    for x, y, z in RNG.uniform(-1, 1, size=(50, 3)).astype(np.float32):
        got = _eval("float32", lambda a, b, c: a * b + c, x, y, z)
        assert got == np.float32(x * y) + z


def test_float16_buffers_round_to_half_precision():
    for x, y in RNG.uniform(-4, 4, size=(20, 2)).astype(np.float16):
        assert _eval("float16", lambda a, b: a * b + b, x, y) == np.float16(np.float16(x * y) + y)


def test_bfloat16_buffers_are_ml_dtypes_arrays():
    import ml_dtypes

    A, B = Buffer("A", [4], "bfloat16"), Buffer("B", [4], "bfloat16")
    i = Var("i")
    f = func_of(For(i, 0, 4, "serial", BufferStore(B, A[i] * 2.0, [i])), A, B, root=False)
    a = np.array([0.5, -1.25, 3.0, 0.09375], ml_dtypes.bfloat16)
    b = np.zeros(4, ml_dtypes.bfloat16)
    run(f, a, b)
    np.testing.assert_array_equal(b.view(np.uint16), (a * 2).view(np.uint16))
    with pytest.raises(ArgumentError, match="bfloat16"):
        run(f, a.view(np.uint16), b)


def test_bfloat16_rounds_as_ml_dtypes_from_the_exact_value():
    import ml_dtypes

    # 1 + 2**-8 + 2**-40 is just above a tie: rounding through float32 first
    # would land on the tie and then round down to 1.0
    A, B = Buffer("A", [3], "float64"), Buffer("B", [3], "bfloat16")
    i = Var("i")
    f = func_of(For(i, 0, 3, "serial", BufferStore(B, Cast("bfloat16", A[i]), [i])), A, B, root=False)
    a = np.array([1 + 2.0**-8 + 2.0**-40, 3.4e38, -(2.0**-134) * 1.5])
    b = np.zeros(3, ml_dtypes.bfloat16)
    run(f, a, b)
    np.testing.assert_array_equal(b.view(np.uint16), a.astype(ml_dtypes.bfloat16).view(np.uint16))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "sin", "atan", "erf",
                                  "floor", "ceil", "round", "trunc", "fabs", "log1p"])
def test_unary_math_intrinsics_follow_numpy(name):
    reference = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "round": np.rint,
                 "erf": np.vectorize(math.erf), "fabs": np.abs}.get(name, getattr(np, name, None))
    values = RNG.uniform(0.01, 3, size=8) if name in ("log", "sqrt", "log1p") else RNG.uniform(-3, 3, size=8)
    for v in values:
        got = _eval("float64", lambda x: getattr(tir, name)(x), np.float64(v))
        assert got == pytest.approx(float(reference(v)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["pow", "atan2", "fmod", "hypot", "copysign"])
def test_binary_math_intrinsics_follow_numpy(name):
    reference = {"pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot,
                 "copysign": np.copysign}[name]
    for a, b in RNG.uniform(0.1, 3, size=(8, 2)):
        got = _eval("float64", lambda x, y: getattr(tir, name)(x, y), np.float64(a), np.float64(-b))
        assert got == pytest.approx(float(reference(a, -b)), rel=1e-12)


def test_math_intrinsics_give_ieee_special_values():
    assert _eval("float32", tir.log, np.float32(0)) == -np.inf
    assert np.isnan(_eval("float32", tir.sqrt, np.float32(-1)))
    assert _eval("float32", tir.exp, np.float32(1000)) == np.inf
    assert _eval("bool", tir.isnan, np.float32(np.nan))
    assert _eval("bool", tir.isinf, np.float32(-np.inf))


def test_bitwise_operations_and_shifts_follow_numpy():
    for a, b in RNG.integers(-1000, 1000, size=(10, 2)).astype(np.int32):
        s = np.int32(abs(int(b)) % 8)
        assert _eval("int32", lambda x, y: x & y, a, b) == a & b
        assert _eval("int32", lambda x, y: x | y, a, b) == a | b
        assert _eval("int32", lambda x, y: x ^ y, a, b) == a ^ b
        assert _eval("int32", lambda x: ~x, a) == ~a
        assert _eval("int32", lambda x, y: x << y, a, s) == np.left_shift(a, s)
        assert _eval("int32", lambda x, y: x >> y, a, s) == np.right_shift(a, s)


def test_popcount_and_count_leading_zeros():
    for v in RNG.integers(-2**31, 2**31, size=10).astype(np.int32):
        assert _eval("int32", tir.popcount, v) == bin(int(v) & 0xFFFFFFFF).count("1")
        assert _eval("int32", tir.clz, v) == 32 - (int(v) & 0xFFFFFFFF).bit_length()


def test_select_evaluates_both_sides_but_if_then_else_only_one():
    A, B = Buffer("A", [4]), Buffer("B", [4])
    i = Var("i")
    guarded = tir.if_then_else(i > 0, A[i - 1], FloatImm("float32", 0.0))
    f = func_of(For(i, 0, 4, "serial", BufferStore(B, guarded, [i])), A, B)
    a, b = rand(4), np.zeros(4, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, np.concatenate([[0], a[:3]]))
    both = Select(i > 0, A[i - 1], FloatImm("float32", 0.0))
    g = func_of(For(i, 0, 4, "serial", BufferStore(B, both, [i])), A, B)
    with pytest.raises(InterpError, match=r"out-of-bounds load from buffer A at index \(-1,\)"):
        run(g, a, b)


def test_ramp_and_broadcast_are_vectors():
    A, B = Buffer("A", [8]), Buffer("B", [8])
    i = Var("i")
    body = BufferStore(B, A[Ramp(i * 4, 1, 4)] + Broadcast(FloatImm("float32", 1.0), 4),
                       [Ramp(i * 4, 1, 4)])
    f = func_of(For(i, 0, 2, "vectorized", body), A, B)
    a, b = rand(8), np.zeros(8, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_thread_bound_and_other_loop_kinds_run_as_serial_loops():
    A, B = Buffer("A", [2, 3, 4]), Buffer("B", [2, 3, 4])
    i, j, k = Var("i"), Var("j"), Var("k")
    body = For(i, 0, 2, "thread_binding",
               For(j, 0, 3, "parallel",
                   For(k, 0, 4, "unrolled", BufferStore(B, A[i, j, k] * 3.0, [i, j, k]))),
               thread_binding="blockIdx.x")
    a, b = rand(2, 3, 4), np.zeros((2, 3, 4), "float32")
    run(func_of(body, A, B), a, b)
    np.testing.assert_array_equal(b, a * 3)


def test_reduction_init_runs_at_the_start_of_a_shifted_domain():
    A, B = Buffer("A", [3, 8]), Buffer("B", [3])
    i, k, vi, vk = Var("i"), Var("k"), Var("vi"), Var("vk")
    block = Block([IterVar(Range(0, 3), vi, "DataPar"), IterVar(Range(2, 4), vk, "CommReduce")],
                  [], [], "B", BufferStore(B, B[vi] + A[vi, vk], [vi]),
                  init=BufferStore(B, FloatImm("float32", 0.0), [vi]))
    body = For(i, 0, 3, "serial", For(k, 2, 4, "serial", BlockRealize([i, k], True, block)))
    a, b = rand(3, 8), rand(3)
    run(func_of(body, A, B), a, b)
    np.testing.assert_array_equal(b, ordered_sum(a[:, 2:6], 1))


def test_block_predicate_skips_the_whole_block():
    # 10 elements through an outer loop of 3 and an inner loop of 4
    A, B = Buffer("A", [10]), Buffer("B", [10])
    i0, i1, vi = Var("i0"), Var("i1"), Var("vi")
    block = Block([IterVar(Range(0, 10), vi, "DataPar")], [], [], "B", BufferStore(B, A[vi] + 1.0, [vi]))
    body = For(i0, 0, 3, "serial", For(i1, 0, 4, "serial",
                                       BlockRealize([i0 * 4 + i1], i0 * 4 + i1 < 10, block)))
    a, b = rand(10), np.zeros(10, "float32")
    run(func_of(body, A, B), a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_block_iteration_value_outside_its_domain_is_an_error():
    A = Buffer("A", [10])
    i, vi = Var("i"), Var("vi")
    block = Block([IterVar(Range(0, 8), vi, "DataPar")], [], [], "blk",
                  BufferStore(A, FloatImm("float32", 1.0), [vi]))
    body = For(i, 0, 10, "serial", BlockRealize([i], True, block))
    with pytest.raises(InterpError,
                       match=r"block blk: iteration variable vi = 8 lies outside its domain \[0, 8\)"):
        run(func_of(body, A), np.zeros(10, "float32"))


def test_alloc_buffer_is_scratch_space():
    A, C = Buffer("A", [6]), Buffer("C", [6])
    T_ = Buffer("T", [6])
    i, j = Var("i"), Var("j")
    body = SeqStmt([For(i, 0, 6, "serial", BufferStore(T_, A[i] * 2.0, [i])),
                    For(j, 0, 6, "serial", BufferStore(C, T_[5 - j] + 1.0, [j]))])
    root = BlockRealize([], True, Block([], [], [], "root", body, alloc_buffers=[T_]))
    f = func_of(root, A, C, root=False)
    a, c = rand(6), np.zeros(6, "float32")
    run(f, a, c)
    np.testing.assert_array_equal(c, (a * 2)[::-1] + 1)


def test_match_buffer_views_a_region():
    A, B = Buffer("A", [4, 6]), Buffer("B", [4])
    i, vi = Var("i"), Var("vi")
    sub = Buffer("sub", [3])
    j = Var("j")
    inner = For(j, 0, 3, "serial", BufferStore(B, B[vi] + sub[j], [vi]))
    block = Block([IterVar(Range(0, 4), vi, "DataPar")], [], [], "rowsum",
                  SeqStmt([BufferStore(B, FloatImm("float32", 0.0), [vi]), inner]),
                  match_buffers=[MatchBufferRegion(sub, BufferRegion(A, [Range(vi, 1), Range(2, 3)]))])
    f = func_of(For(i, 0, 4, "serial", BlockRealize([i], True, block)), A, B)
    a, b = rand(4, 6), np.zeros(4, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, ordered_sum(a[:, 2:5], 1))


def test_lowered_forms_allocate_declbuffer_let_attr_assert():
    # A's parameter buffer is 2-D; the body reads it through a flat view of its data
    B = Buffer("B", [16])
    flat_a = Buffer("A_flat", [16], data=Var("A_data", "handle"))
    scratch_var = Var("scratch", "handle")
    scratch = Buffer("S", [16], data=scratch_var)
    tx, i, two = Var("tx"), Var("i"), Var("two")
    fill = AttrStmt(IterVar(Range(0, 16), tx, "ThreadIndex", "threadIdx.x"), "thread_extent", 16,
                    BufferStore(scratch, flat_a[tx] * 2.0, [tx]))
    copy = For(i, 0, 16, "serial", LetStmt(two, IntImm("int32", 2),
                                           BufferStore(B, scratch[i] + Cast("float32", two), [i])))
    body = DeclBuffer(flat_a, Allocate(scratch_var, "float32", [16], True,
                                       DeclBuffer(scratch, AssertStmt(IntImm("bool", 1), "fine",
                                                                      SeqStmt([fill, copy, Evaluate(0)])))))
    h_a, h_b = Var("a", "handle"), Var("b", "handle")
    f = PrimFunc([h_a, h_b], body, buffer_map={h_a: Buffer("A", [4, 4], data=flat_a.data), h_b: B})
    a, b = rand(4, 4), np.zeros(16, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, a.reshape(-1) * 2 + 2)


def test_failed_assert_is_an_interp_error_with_its_message():
    A = Buffer("A", [2])
    n = Var("n")
    body = AssertStmt(n < 5, "n must be small", BufferStore(A, FloatImm("float32", 1.0), [0]))
    f = func_of(body, A, scalars=[n], root=False)
    run(f, np.zeros(2, "float32"), 3)
    with pytest.raises(InterpError, match="assertion failed: n must be small"):
        run(f, np.zeros(2, "float32"), 7)


def test_call_extern_runs_libm_functions_and_rejects_others():
    x = np.float32(0.7)
    assert _eval("float32", lambda v: tir.call_extern("float32", "expf", v), x) == np.float32(math.exp(x))
    with pytest.raises(InterpError, match="unsupported extern function 'my_kernel'"):
        _eval("float32", lambda v: tir.call_extern("float32", "my_kernel", v), x)


def test_ret_returns_a_value():
    n = Var("n")
    f = PrimFunc([n], Evaluate(tir.ret(n * 3)))
    assert run(f, 5) == 15


def test_deep_loop_nests_run():
    # deeper than Python allows for nested blocks in one function
    A = Buffer("A", [1])
    loops = [Var(f"l{k}") for k in range(25)]
    body = BufferStore(A, A[0] + FloatImm("float32", 1.0), [0])
    for lv in reversed(loops):
        body = For(lv, 0, 2 if lv.name in ("l0", "l24") else 1, "serial", body)
    a = np.zeros(1, "float32")
    run(func_of(body, A), a)
    assert a[0] == 4


def test_deep_nests_keep_symbolic_shapes_and_views():
    # the inner statements continue in a separate generated function, which
    # must still see the sizes bound at the top
    n = Var("n")
    A, B = Buffer("A", [n]), Buffer("B", [n])
    i = Var("i")
    body = BufferStore(B, A[i] * 2.0, [i])
    for k in range(20):
        body = For(Var(f"u{k}"), 0, 1, "serial", body)
    f = func_of(For(i, 0, n, "serial", body), A, B, scalars=[n])
    a, b = rand(5), np.zeros(5, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_deeply_nested_conditions_and_expressions():
    A = Buffer("A", [1], "int32")
    x = Var("x")
    body = BufferStore(A, A[0] + 1, [0])
    for k in range(120):
        body = IfThenElse(x > k, body)
    value = A[0]
    for k in range(400):
        value = value + (k % 3)
    body = SeqStmt([body, BufferStore(A, value, [0])])
    f = func_of(body, A, scalars=[x], root=False)
    a = np.zeros(1, "int32")
    run(f, a, 200)
    assert a[0] == 1 + sum(k % 3 for k in range(400))
    a[0] = 0
    run(f, a, 50)
    assert a[0] == sum(k % 3 for k in range(400))


def test_evaluate_computes_expressions_of_sizes():
    n = Var("n")
    assert evaluate(tir.floordiv(n * 3 + 1, 2), n=5) == 8


def test_compiled_source_is_python_of_the_function():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    source = compile_func(te.create_prim_func([A, B])).source
    assert "for x_i in range(8):" in source
    compile(source, "<check>", "exec")


# ----------------------------------------------------------------------------- errors


def _store_out_of_bounds():
    A, B = Buffer("A", [8]), Buffer("B", [8])
    i, vi = Var("i"), Var("vi")
    block = Block([IterVar(Range(0, 8), vi, "DataPar")], [], [], "shift",
                  BufferStore(B, A[vi], [vi + 1]))
    return func_of(For(i, 0, 8, "serial", BlockRealize([i], True, block)), A, B)


def test_out_of_bounds_store_names_buffer_index_block_statement_and_variables():
    with pytest.raises(InterpError) as info:
        run(_store_out_of_bounds(), rand(8), np.zeros(8, "float32"))
    message = str(info.value)
    assert "out-of-bounds store to buffer B at index (8,); its shape is (8,)" in message
    assert 'in block "shift"' in message
    assert "i = 7" in message and "vi = 7" in message
    assert "B[vi + 1] = A[vi]" in message


def test_negative_index_is_out_of_bounds_not_wrapped():
    A, B = Buffer("A", [4]), Buffer("B", [4])
    i = Var("i")
    f = func_of(For(i, 0, 4, "serial", BufferStore(B, A[i - 1], [i])), A, B)
    with pytest.raises(InterpError, match=r"out-of-bounds load from buffer A at index \(-1,\)"):
        run(f, rand(4), np.zeros(4, "float32"))


def test_argument_errors_name_the_parameter():
    A = te.placeholder((4, 3), name="A")
    B = te.compute((4, 3), lambda i, j: A[i, j] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    a, b = rand(4, 3), np.zeros((4, 3), "float32")
    with pytest.raises(ArgumentError, match=r"takes 2 arguments \(A, B\), got 3"):
        run(f, a, b, b)
    with pytest.raises(ArgumentError, match="missing the argument for parameter B"):
        run(f, a)
    with pytest.raises(ArgumentError, match=r"buffer B has shape \(3, 4\), expected \(4, 3\)"):
        run(f, a, np.zeros((3, 4), "float32"))
    with pytest.raises(ArgumentError, match="buffer A has element type float64, expected float32"):
        run(f, a.astype("float64"), b)
    with pytest.raises(ArgumentError, match="buffer A has 1 dimensions, expected 2"):
        run(f, np.zeros(12, "float32"), b)
    with pytest.raises(ArgumentError, match="parameter A must be a numpy array, got list"):
        run(f, [[0.0] * 3] * 4, b)
    with pytest.raises(ArgumentError, match="no parameter 'C'"):
        run(f, a, b, C=b)


def test_scalars_by_name_and_position():
    A = Buffer("A", [6], "int32")
    n, i = Var("n"), Var("i")
    f = func_of(For(i, 0, 6, "serial", BufferStore(A, i * n, [i])), A, scalars=[n], root=False)
    a = np.zeros(6, "int32")
    run(f, a, n=3)
    np.testing.assert_array_equal(a, np.arange(6) * 3)
    run(f, a, 5)
    np.testing.assert_array_equal(a, np.arange(6) * 5)
    with pytest.raises(ArgumentError, match="parameter n: 4294967296 does not fit in int32"):
        run(f, a, 2**32)
    with pytest.raises(ArgumentError, match="no value for n"):
        run(f, a)


def test_one_size_variable_must_agree_across_arrays():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    with pytest.raises(ArgumentError, match="buffer B is 5, but n is already 4"):
        run(te.create_prim_func([A, B]), rand(4), rand(5))


def test_read_only_and_non_contiguous_arrays():
    A = te.placeholder((3, 4), name="A")
    B = te.compute((3, 4), lambda i, j: A[i, j] - 1.0, name="B")
    f = te.create_prim_func([A, B])
    a = rand(3, 4)
    a.setflags(write=False)
    big = np.zeros((3, 8), "float32")
    run(f, a, big[:, ::2])
    np.testing.assert_array_equal(big[:, ::2], a - 1)
    np.testing.assert_array_equal(big[:, 1::2], 0)
    with pytest.raises(InterpError, match="read-only"):
        run(f, rand(3, 4), a)


# ----------------------------------------------------------------------------- TVMScript programs


def parse(text):
    from tirfun.script import from_source

    return from_source(text)


MM_RELU = '''
from tirfun.script import tir as T

@T.prim_func
def mm_relu(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
            C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((16, 8), dtype="float32")
    for i, j, k in T.grid(16, 8, 12):
        with T.block("Y"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(8, j)
            vk = T.axis.reduce(12, k)
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(8, j)
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def test_tvmscript_reduction_with_init_and_alloc_buffer():
    a, b, c = rand(16, 12), rand(12, 8), rand(16, 8)
    run(parse(MM_RELU), a, b, c)
    np.testing.assert_array_equal(c, np.maximum(ordered_matmul(a, b), 0))


SPLIT_WITH_WHERE = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i0, i1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < 10)
            B[vi] = A[vi] * T.float32(2)
'''


def test_tvmscript_where_predicate():
    a, b = rand(10), np.zeros(10, "float32")
    run(parse(SPLIT_WITH_WHERE), a, b)
    np.testing.assert_array_equal(b, a * 2)


BLOCK_SCRATCH = '''
from tirfun.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 4))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("row"):
            vi = T.axis.spatial(n, i)
            S = T.alloc_buffer((4,))
            for j in range(4):
                S[j] = T.if_then_else(A[vi, j] > T.float32(0), A[vi, j], T.float32(0))
            B[vi] = S[0] + S[1] + S[2] + S[3]
'''


def test_tvmscript_block_scratch_buffer_and_symbolic_size():
    f = parse(BLOCK_SCRATCH)
    a, b = rand(5, 4), np.zeros(5, "float32")
    run(f, a, b)
    np.testing.assert_array_equal(b, ordered_sum(np.maximum(a, 0), 1))
    c = np.zeros(5, "float32")
    run(f, a, c, n=5)
    np.testing.assert_array_equal(b, c)
    with pytest.raises(ArgumentError,
                       match="dimension 0 of the argument for buffer A is 5, but n is already 6"):
        run(f, a, c, n=6)


THREADS = '''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_2 in T.thread_binding(2, thread="threadIdx.x"):
            for i_1 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(8, i_0 * 4 + i_1 * 2 + i_2)
                    B[vi] = A[vi] + T.float32(1)
'''


def test_tvmscript_scheduled_tutorial_with_thread_bindings():
    a, b = rand(8), np.zeros(8, "float32")
    run(parse(THREADS), a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_vector_let_statement_binds_every_lane():
    # x: int8x4 = B[i*4 : i*4+4]; C[i, i+4, i+8, i+12] = x  -- a transpose by lanes
    from tirfun.nodes import Buffer, BufferLoad, BufferStore, For, LetStmt, PrimFunc, Ramp, Var

    B, C = Buffer("B", [16], "int8"), Buffer("C", [16], "int8")
    i, x = Var("i"), Var("x", "int8x4")
    body = LetStmt(x, BufferLoad(B, [Ramp(i * 4, 1, 4)]), BufferStore(C, x, [Ramp(i, 4, 4)]))
    b_handle, c_handle = Var("b", "handle"), Var("c", "handle")
    f = PrimFunc([b_handle, c_handle], For(i, 0, 4, "serial", body),
                 buffer_map={b_handle: B, c_handle: C})
    b = np.arange(16, dtype="int8")
    c = np.zeros(16, dtype="int8")
    run(f, b, c)
    np.testing.assert_array_equal(c, b.reshape(4, 4).T.reshape(-1))


def test_a_data_pointer_evaluated_alone_names_its_storage():
    # TVM's tests write T.evaluate(D.data) for an opaque use of an
    # allocation; it computes nothing, and the interpreter and the build run it
    import tirfun
    from tirfun.script import from_source

    func = from_source('''
from tirfun.script import tir as T
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    D = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            D[vi] = A[vi] * T.float32(2)
            T.evaluate(D.data)
            T.evaluate(A.data)
            B[vi] = D[vi]
''')
    a = rand(4)
    interpreted, built = np.zeros(4, "float32"), np.zeros(4, "float32")
    run(func, a, interpreted)
    tirfun.build(func)(a, built)
    np.testing.assert_array_equal(interpreted, a * 2)
    np.testing.assert_array_equal(built, interpreted)


def test_an_error_at_an_instruction_without_a_line_still_becomes_an_interp_error():
    # Python 3.11 gives some instructions no line number: an exception a
    # signal handler raises there (a caller's timeout) carries None
    from tirfun.interp.compile import compile_in_module, line_info
    from tirfun.script import from_source

    compiled = compile_in_module(IRModule({"main": from_source(_ONE_STORE)}), "main")
    assert line_info(compiled.table, None) is None
    assert line_info(compiled.table, len(compiled.table) + 1) is None
    assert line_info(compiled.table, 1) is compiled.table[0]


_ONE_STORE = """
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(1)
"""
