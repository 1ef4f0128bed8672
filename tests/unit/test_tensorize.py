"""tensorize: a block's computation replaced by a tensor intrinsic's
implementation, after checking it computes what the description computes.

Every schedule here is compared with the interpreter before and after, and
the LLVM build against the interpreter, bit for bit: the implementations
keep the order of every float sum, so the results are exact."""

import numpy as np
import pytest

import tirfun
from tirfun import interp, tir
from tirfun import rewrites as R
from tirfun.rewrites.index_dtype import normalize_index_dtype
from tirfun.rewrites.pipeline import Pipeline
from tirfun.script import from_source
from tirfun.tir.tensor_intrin import TensorIntrinError

DOT4_DESC = from_source('''
@T.prim_func
def dot4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=1)
    C = T.match_buffer(c, (), offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        for k in range(4):
            with T.block("update"):
                vk = T.axis.remap("R", [k])
                C[()] = C[()] + A[vk] * B[vk]
''')

# the same sum, unrolled: what a hand-written kernel would do
DOT4_IMPL = from_source('''
@T.prim_func
def dot4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=1)
    C = T.match_buffer(c, (), offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        for k in T.unroll(4):
            C[()] = C[()] + A[k] * B[k]
''')

MMA_DESC = from_source('''
@T.prim_func
def mma_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), align=64, offset_factor=1)
    B = T.match_buffer(b, (16, 16), align=64, offset_factor=1)
    C = T.match_buffer(c, (16, 16), align=64, offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block("update"):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]
''')

# a register-tile order: k outside the vectorized j, each C[i, j] still
# summed over k in order
MMA_IMPL = from_source('''
@T.prim_func
def mma_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), align=64, offset_factor=1)
    B = T.match_buffer(b, (16, 16), align=64, offset_factor=1)
    C = T.match_buffer(c, (16, 16), align=64, offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, k in T.grid(16, 16):
            for j in T.vectorized(16):
                with T.block("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')

MATMUL = from_source('''
@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
           C: T.Buffer((128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')

BATCH_MATMUL = from_source('''
@T.prim_func
def batch_matmul(A: T.Buffer((4, 32, 32), "float32"), B: T.Buffer((4, 32, 32), "float32"),
                 C: T.Buffer((4, 32, 32), "float32")):
    for n, i, j in T.grid(4, 32, 32):
        with T.block("init"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            C[vn, vi, vj] = T.float32(0)
    for n, i, j, k in T.grid(4, 32, 32, 32):
        with T.block("update"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            C[vn, vi, vj] = C[vn, vi, vj] + A[vn, vi, vk] * B[vn, vj, vk]
''')

DOT_ROWS = from_source('''
@T.prim_func
def rows(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            C[vi] = C[vi] + A[vi, vk] * B[vi, vk]
''')


def _arrays(func, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        buf = func.buffer_map[p]
        shape = tuple(int(s.value) for s in buf.shape)
        out.append(rng.standard_normal(shape).astype(str(buf.dtype)))
    return out


def _same_meaning(before, after):
    """The interpreter gives the same outputs before and after, and the
    LLVM build the interpreter's, bit for bit."""
    args = _arrays(before)
    ref = [a.copy() for a in args]
    interp.run(before, *ref)
    got = [a.copy() for a in args]
    interp.run(after, *got)
    built = [a.copy() for a in args]
    tirfun.build(tirfun.IRModule({"main": after}))(*built)
    for r, g, b in zip(ref, got, built):
        assert np.array_equal(r.view(np.uint32), g.view(np.uint32))
        assert np.array_equal(g.view(np.uint32), b.view(np.uint32))


def _tiled_matmul():
    sch = tirfun.Schedule(MATMUL, debug_mask="all")
    update = sch.get_block("update")
    i, j, k = sch.get_loops(update)
    io, ii = sch.split(i, factors=[None, 16])
    jo, ji = sch.split(j, factors=[None, 16])
    ko, ki = sch.split(k, factors=[None, 16])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.decompose_reduction(update, ko)
    return sch, ii


def test_tensorize_a_tiled_matmul_with_a_16x16x16_kernel():
    sch, ii = _tiled_matmul()
    sch.tensorize(ii, tir.TensorIntrin(MMA_DESC, MMA_IMPL))
    func = sch.mod["main"]
    # the block holds the kernel's loops, over views of the 16x16 windows
    block = sch.get(sch.get_block("update_update_o"))
    views = {m.buffer.name: m.source.buffer.name for m in block.match_buffers}
    assert views == {"A_1": "A", "B_1": "B", "C_1": "C"}
    assert "T.vectorized(16)" in func.script()
    _same_meaning(MATMUL, func)


def test_tensorize_by_registered_name_replays_from_the_trace_and_its_json():
    tir.TensorIntrin.register("tirfun_test_mma", MMA_DESC, MMA_IMPL, override=True)
    sch, ii = _tiled_matmul()
    sch.tensorize(ii, "tirfun_test_mma")
    mod = tirfun.IRModule({"main": MATMUL})
    assert sch.trace(mod) == sch.mod
    assert Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    # the record holds the intrinsic itself, and prints its name
    assert sch.trace.rewrites[-1].python_call() == "sch.tensorize(LoopRef(\"i_1\", \"main\"), 'tirfun_test_mma')"


def test_tensorize_by_an_unregistered_intrinsic_replays_from_the_python_trace():
    # an intrinsic without a name is written out whole in the Python trace,
    # as the TVMScript of its two functions, so the trace still runs
    sch, ii = _tiled_matmul()
    sch.tensorize(ii, tir.TensorIntrin(MMA_DESC, MMA_IMPL))
    text = sch.trace.as_python()
    assert "from tirfun.script import from_source" in text and "tir.TensorIntrin(from_source(" in text
    namespace = {}
    exec(text, namespace)
    again = tirfun.Schedule(tirfun.IRModule({"main": MATMUL}))
    namespace["apply_trace"](again)
    assert again.mod == sch.mod


def test_tensorize_a_block_made_by_blockize_keeps_its_init():
    sch = tirfun.Schedule(DOT_ROWS)
    _, k = sch.get_loops(sch.get_block("dot"))
    _, k1 = sch.split(k, [None, 4])
    outer = sch.blockize(k1)
    sch.tensorize(outer, tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    _same_meaning(DOT_ROWS, sch.mod["main"])


def test_tensorize_a_reduction_keeps_the_outer_init():
    func = from_source('''
@T.prim_func
def rows(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * B[vi, vk]
''')
    sch = tirfun.Schedule(func)
    _, k = sch.get_loops(sch.get_block("dot"))
    _, k1 = sch.split(k, [None, 4])
    sch.tensorize(k1, tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    block = sch.get(sch.get_block("dot_o"))
    assert block.init is not None
    _same_meaning(func, sch.mod["main"])


def test_tensorize_a_batch_keeps_the_leading_dimension_a_single_index():
    sch = tirfun.Schedule(BATCH_MATMUL)
    update = sch.get_block("update")
    _, i, j, k = sch.get_loops(update)
    io, ii = sch.split(i, [None, 16])
    jo, ji = sch.split(j, [None, 16])
    ko, ki = sch.split(k, [None, 16])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.tensorize(ii, tir.TensorIntrin(MMA_DESC, MMA_IMPL))
    block = sch.get(sch.get_block("update_o"))
    for m in block.match_buffers:
        first = m.source.region[0]
        assert first.extent.value == 1  # the batch: one index, not a window
        assert len(m.buffer.shape) == 2
    _same_meaning(BATCH_MATMUL, sch.mod["main"])


def test_tensorize_renames_the_implementations_names_apart_from_the_functions():
    # the implementation names its loop k and its buffers A, B, C, as the
    # function does: they become fresh names, so names stay identities
    sch = tirfun.Schedule(DOT_ROWS)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    sch.tensorize(tirfun.rewrites.LoopRef("k_1"), tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    text = sch.mod["main"].script()
    assert "A_1 = T.match_buffer(A[" in text and "C_1[()] = C_1[()] + A_1[k] * B_1[k]" in text
    # the new loop is a loop of the function like any other
    sch.unroll(sch.get_loops(sch.get_block("dot_o"))[0])
    _same_meaning(DOT_ROWS, sch.mod["main"])


def _refusal(func, loop, intrin):
    return R.tensorize(R.LoopRef(loop), intrin).violations(tirfun.IRModule({"main": func}))


def test_tensorize_refuses_a_window_of_another_extent():
    sch = tirfun.Schedule(DOT_ROWS)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 8])
    (err,) = _refusal(sch.mod["main"], "k_1", tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    assert isinstance(err, R.TensorIntrinMismatchError)
    assert "extent" in err.reason or "loop" in err.reason


def test_tensorize_refuses_another_computation():
    func = from_source(DOT_ROWS.script().replace("A[vi, vk] * B[vi, vk]", "(A[vi, vk] + B[vi, vk])"))
    sch = tirfun.Schedule(func)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    (err,) = _refusal(sch.mod["main"], "k_1", tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    assert isinstance(err, R.TensorIntrinMismatchError)
    assert "A[vi_o, vk_o * 4 + vk_i] + B[vi_o, vk_o * 4 + vk_i]" in err.reason


def test_tensorize_refuses_buffers_of_another_dtype():
    func = from_source(DOT_ROWS.script().replace('"float32"', '"float16"').replace("T.float32", "T.float16"))
    sch = tirfun.Schedule(func)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    (err,) = _refusal(sch.mod["main"], "k_1", tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    assert isinstance(err, R.TensorIntrinMismatchError) and "float16" in err.reason


def test_tensorize_refuses_arithmetic_of_another_float_type_that_tvm_would_take():
    # the buffers agree, but the block rounds each product to half
    # precision: TVM compares only whether both are floats; the result
    # would differ
    func = from_source(DOT_ROWS.script().replace(
        "A[vi, vk] * B[vi, vk]", 'T.Cast("float32", T.Cast("float16", A[vi, vk] * B[vi, vk]))'))
    desc = from_source(DOT4_DESC.script().replace(
        "A[vk] * B[vk]", 'T.Cast("float32", T.Cast("float32", A[vk] * B[vk]))'))
    impl = DOT4_IMPL
    sch = tirfun.Schedule(func)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    (err,) = _refusal(sch.mod["main"], "k_1", tir.TensorIntrin(desc, impl))
    assert isinstance(err, R.TensorIntrinMismatchError) and "float16" in err.reason


def test_tensorize_reports_what_blockize_cannot_do():
    # after decompose_reduction, loop i_0 holds the init nest and the update
    sch, _ = _tiled_matmul()
    (err,) = R.tensorize(R.LoopRef("i_0"), tir.TensorIntrin(MMA_DESC, MMA_IMPL)).violations(sch.mod)
    assert isinstance(err, R.NonSingleChildBlockError) and err.primitive == "tensorize"


def test_tensorize_by_an_unknown_name_is_an_argument_error():
    sch, ii = _tiled_matmul()
    with pytest.raises(tirfun.errors.ScheduleError, match="no tensor intrinsic is registered"):
        sch.tensorize(ii, "tirfun_test_no_such_intrinsic")
    assert tir.TensorIntrin.get("tirfun_test_no_such_intrinsic", allow_missing=True) is None
    with pytest.raises(TensorIntrinError):
        tir.TensorIntrin.get("tirfun_test_no_such_intrinsic")


def test_tensor_intrin_refuses_functions_that_do_not_fit_together():
    two = from_source('''
@T.prim_func
def two(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=1)
    with T.block("root"):
        T.reads(A[0:4])
        T.writes(B[0:4])
        for k in range(4):
            B[k] = A[k]
''')
    with pytest.raises(TensorIntrinError, match="3 parameters and impl 2"):
        tir.TensorIntrin(DOT4_DESC, two)
    with pytest.raises(TensorIntrinError, match="must be a PrimFunc"):
        tir.TensorIntrin(DOT4_DESC, "dot4_impl")
    tir.TensorIntrin.register("tirfun_test_dot4", DOT4_DESC, DOT4_IMPL, override=True)
    with pytest.raises(TensorIntrinError, match="registered already"):
        tir.TensorIntrin.register("tirfun_test_dot4", DOT4_DESC, DOT4_IMPL)


def test_parameters_with_an_offset_factor_have_an_offset_variable_bound_to_zero_in_the_build():
    # TVM gives such a parameter an offset variable (read from the argument
    # at entry); tirfun passes arrays at their first element, so it is 0
    func = from_source('''
@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), offset_factor=1)
    B = T.match_buffer(b, (4,), offset_factor=1)
    for i in range(4):
        B[i] = A[i] + T.Cast("float32", A.elem_offset)
''')
    a = func.buffer_map[func.params[0]]
    assert isinstance(a.elem_offset, tir.Var) and a.elem_offset.name == "A_elem_offset"
    assert from_source(func.script()) == func
    x = np.arange(4, dtype=np.float32)
    want = np.zeros(4, np.float32)
    interp.run(func, x, want)
    got = np.zeros(4, np.float32)
    tirfun.build(func)(x, got)
    assert np.array_equal(want, x) and np.array_equal(got, want)


UNPACK = from_source('''
@T.prim_func
def unpack(A: T.Buffer((4,), "int32"), B: T.Buffer((32,), "int32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.bitwise_and(T.shift_right(A[vi // 8], vi % 8 * 4), 15)
''')

UNPACK8_DESC = from_source('''
@T.prim_func
def unpack8_desc(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (1,), "int32", offset_factor=1)
    B = T.match_buffer(b, (8,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:1])
        T.writes(B[0:8])
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.bitwise_and(T.shift_right(A[vi // 8], vi % 8 * 4), 15)
''')


def test_tensorize_proves_index_arithmetic_written_another_way():
    # after blockize the block reads A[(vi_o * 8 + vi_i) // 8] and shifts by
    # (vi_o * 8 + vi_i) % 8 * 4, where the description has A[vi // 8] and
    # vi % 8 * 4: equal for vi in [0, 8), as the ranges prove
    sch = tirfun.Schedule(UNPACK)
    (i,) = sch.get_loops(sch.get_block("B"))
    _, i1 = sch.split(i, [None, 8])
    sch.tensorize(i1, tir.TensorIntrin(UNPACK8_DESC, UNPACK8_DESC))
    _same_meaning(UNPACK, sch.mod["main"])
    # with int64 indices: the description, retyped, is proved the same way
    wide = normalize_index_dtype(UNPACK, "int64")
    sch = tirfun.Schedule(wide)
    (i,) = sch.get_loops(sch.get_block("B"))
    _, i1 = sch.split(i, [None, 8])
    sch.tensorize(i1, tir.TensorIntrin(UNPACK8_DESC, UNPACK8_DESC))
    a = np.array([0x12345678, -0x789ABCDF, 0x7FFFFFFF, -1], np.int32)
    want, got, built = (np.zeros(32, np.int32) for _ in range(3))
    interp.run(UNPACK, a, want)
    interp.run(sch.mod["main"], a, got)
    tirfun.build(sch.mod)(a, built)
    assert np.array_equal(want, got) and np.array_equal(got, built)
    # without the range the shift is another one: vi % 4 is not vi % 8
    other = from_source(UNPACK8_DESC.script().replace("vi % 8 * 4", "vi % 4 * 4"))
    errors = R.tensorize(R.LoopRef("i_1"), tir.TensorIntrin(other, other)).violations(
        R.split("i", [None, 8])(tirfun.IRModule({"main": UNPACK})))
    assert [type(e) for e in errors] == [R.TensorIntrinMismatchError]


DOT_16X4_DESC = from_source('''
@T.prim_func
def dot_16x4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        for i in T.serial(0, 16):
            for k in T.serial(0, 4):
                with T.block("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")
''')


def test_tensorize_an_int8_matmul_over_a_packed_layout():
    # TVM's 16x4 dot-product schedule: W packed as [j // 16, k // 4, j % 16,
    # k % 4]; the block's window of W is W[v_j_o + v_j_i // 16, ...], whose
    # leading indices are the single v_j_o only for v_j_i in [0, 16)
    X = tirfun.te.placeholder((32, 32), name="X", dtype="uint8")
    W = tirfun.te.placeholder((32, 32), name="W", dtype="int8")
    ak = tirfun.te.reduce_axis((0, 32), name="k")
    out = tirfun.te.compute((32, 32), lambda i, j: tirfun.te.sum(
        X[i, ak].astype("int32") * W[j, ak].astype("int32"), axis=ak), name="compute")
    func = tirfun.te.create_prim_func([X, W, out])
    sch = tirfun.Schedule(func)
    block = sch.get_block("compute")
    sch.transform_layout(block, "W", lambda i, j: [i // 16, j // 4, i % 16, j % 4])
    _, j, k = sch.get_loops(block)
    _, ji = sch.split(j, factors=[None, 16])
    ko, ki = sch.split(k, factors=[None, 4])
    sch.reorder(ko, ji, ki)
    sch.decompose_reduction(block, ko)
    packed = sch.mod["main"]
    sch.tensorize(ji, tir.TensorIntrin(DOT_16X4_DESC, DOT_16X4_DESC))
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (32, 32), dtype=np.uint8)
    w = rng.integers(-128, 128, (32, 32), dtype=np.int8)
    wp = w.reshape(2, 16, 8, 4).transpose(0, 2, 1, 3).copy()
    want = x.astype(np.int32) @ w.astype(np.int32).T
    for f in (packed, sch.mod["main"]):
        got = np.zeros((32, 32), np.int32)
        interp.run(f, x, wp, got)
        assert np.array_equal(got, want)
    built = np.zeros((32, 32), np.int32)
    tirfun.build(sch.mod)(x, wp, built)
    assert np.array_equal(built, want)


def test_tensor_intrin_refuses_a_description_with_a_free_variable():
    # a description reading a variable it does not bind would match a block
    # reading one of that name, and carry it into the schedule unbound
    desc = from_source(DOT4_DESC.script())
    free = tir.Var("r", "int32")
    body = desc.body.block.body.body.block.body
    bad_body = tir.BufferStore(body.buffer, body.value + tir.Cast("float32", free), body.indices)
    inner = desc.body.block.body.body.block
    from tirfun.nodes.base import with_fields
    bad = desc.with_body(with_fields(desc.body, block=with_fields(
        desc.body.block, body=with_fields(desc.body.block.body, body=with_fields(
            desc.body.block.body.body, block=with_fields(inner, body=bad_body))))))
    with pytest.raises(TensorIntrinError, match="desc is not a well-formed function.*r"):
        tir.TensorIntrin(bad, DOT4_IMPL)


DOT_ROWS_INT64 = from_source('''
@T.prim_func
def rows(A: T.Buffer((T.int64(8), T.int64(16)), "float32"), B: T.Buffer((T.int64(8), T.int64(16)), "float32"),
         C: T.Buffer((T.int64(8),), "float32")):
    for i, k in T.grid(T.int64(8), T.int64(16)):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            C[vi] = C[vi] + A[vi, vk] * B[vi, vk]
''')

DOT_ROWS_INT64_TENSORIZED = from_source('''
@T.prim_func
def rows(A: T.Buffer((T.int64(8), T.int64(16)), "float32"), B: T.Buffer((T.int64(8), T.int64(16)), "float32"),
         C: T.Buffer((T.int64(8),), "float32")):
    for i, k_0 in T.grid(T.int64(8), T.int64(4)):
        with T.block("dot_o"):
            vi_o, vk_o = T.axis.remap("SR", [i, k_0])
            T.reads(C[vi_o], A[vi_o, vk_o * T.int64(4):vk_o * T.int64(4) + T.int64(4)],
                    B[vi_o, vk_o * T.int64(4):vk_o * T.int64(4) + T.int64(4)])
            T.writes(C[vi_o])
            A_1_elem_offset = T.int64()
            A_1 = T.match_buffer(A[vi_o, vk_o * T.int64(4):vk_o * T.int64(4) + T.int64(4)], (T.int64(4),),
                                 elem_offset=A_1_elem_offset, offset_factor=1)
            B_1_elem_offset = T.int64()
            B_1 = T.match_buffer(B[vi_o, vk_o * T.int64(4):vk_o * T.int64(4) + T.int64(4)], (T.int64(4),),
                                 elem_offset=B_1_elem_offset, offset_factor=1)
            C_1_elem_offset = T.int64()
            C_1 = T.match_buffer(C[vi_o], (), elem_offset=C_1_elem_offset, offset_factor=1)
            for k in T.unroll(T.int64(4)):
                C_1[()] = C_1[()] + A_1[k] * B_1[k]
''')


def test_tensorize_an_int64_block_retypes_the_implementations_indices():
    # the intrinsic is written with int32 indices; the block's buffers are
    # int64-indexed: the implementation's shapes, offsets, loop and indices
    # become int64, as TVM retypes them, so an offset into a buffer past
    # 2**31 elements fits its variable
    sch = tirfun.Schedule(DOT_ROWS_INT64)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    sch.tensorize(tirfun.rewrites.LoopRef("k_1"), tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    tirfun.assert_structural_equal(sch.mod["main"], DOT_ROWS_INT64_TENSORIZED)
    _same_meaning(DOT_ROWS_INT64, sch.mod["main"])


def test_tensorize_an_int32_block_with_an_int64_intrinsic_takes_the_blocks_indices():
    # an implementation written with int64 indices throughout
    impl = from_source('''
@T.prim_func
def dot4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (T.int64(4),), offset_factor=1)
    B = T.match_buffer(b, (T.int64(4),), offset_factor=1)
    C = T.match_buffer(c, (), offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[T.int64(0):T.int64(4)], B[T.int64(0):T.int64(4)])
        T.writes(C[()])
        for k in T.unroll(T.int64(4)):
            C[()] = C[()] + A[k] * B[k]
''')
    wide = tir.TensorIntrin(DOT4_DESC, impl)
    sch = tirfun.Schedule(DOT_ROWS)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    sch.tensorize(tirfun.rewrites.LoopRef("k_1"), wide)
    text = sch.mod["main"].script()
    assert "for k in T.unroll(4):" in text and "T.int64" not in text
    _same_meaning(DOT_ROWS, sch.mod["main"])


def test_an_intrinsic_that_cannot_be_retyped_is_used_as_written(monkeypatch):
    # were a node of the intrinsic not retypable, tensorize would compare
    # and use it as written (mixed index dtypes, which it allows), not fail
    # from inside
    import importlib

    from tirfun.errors import NodeError

    module = importlib.import_module("tirfun.rewrites.tensorize")

    def refuse(func, dtype):
        raise NodeError("cannot retype")

    monkeypatch.setattr(module, "normalize_index_dtype", refuse)
    sch = tirfun.Schedule(DOT_ROWS_INT64)
    _, k = sch.get_loops(sch.get_block("dot"))
    sch.split(k, [None, 4])
    sch.tensorize(tirfun.rewrites.LoopRef("k_1"), tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    assert "A_1_elem_offset = T.int32()" in sch.mod["main"].script()
    _same_meaning(DOT_ROWS_INT64, sch.mod["main"])


def test_tensorize_a_matmul_of_a_symbolic_number_of_row_tiles():
    # n tiles of 16 rows: blockize divides vi = i_0 * 16 + i_1 over n * 16
    # with the outer variable over n, so the 16x16x16 kernel still applies
    func = from_source('''
@T.prim_func
def matmul(a: T.handle, B: T.Buffer((128, 128), "float32"), c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 16, 128))
    C = T.match_buffer(c, (n * 16, 128))
    for i, j, k in T.grid(n * 16, 128, 128):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
''')
    sch = tirfun.Schedule(func, debug_mask="all")
    update = sch.get_block("update")
    i, j, k = sch.get_loops(update)
    io, ii = sch.split(i, factors=[None, 16])
    jo, ji = sch.split(j, factors=[None, 16])
    ko, ki = sch.split(k, factors=[None, 16])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.decompose_reduction(update, ko)
    sch.tensorize(ii, tir.TensorIntrin(MMA_DESC, MMA_IMPL))
    block = sch.get(sch.get_block("update_update_o"))
    assert block.iter_vars[0].dom.extent == func.params[3]  # the outer rows span n
    rng = np.random.default_rng(4)
    a = rng.standard_normal((48, 128)).astype("float32")
    b = rng.standard_normal((128, 128)).astype("float32")
    want, got, built = (np.zeros((48, 128), np.float32) for _ in range(3))
    interp.run(func, a, b, want, 3)
    interp.run(sch.mod["main"], a, b, got, 3)
    tirfun.build(sch.mod)(a, b, built, 3)
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32))
    assert np.array_equal(got.view(np.uint32), built.view(np.uint32))


TWO_DOTS = from_source('''
@T.prim_func
def two(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32"),
        D: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            C[vi] = C[vi] + A[vi, vk] * B[vi, vk]
    for i, k in T.grid(8, 16):
        with T.block("dot2"):
            vi, vk = T.axis.remap("SR", [i, k])
            D[vi] = D[vi] + A[vi, vk] * B[vi, vk]
''')


def _tensorize_both_dots(first, second):
    sch = tirfun.Schedule(TWO_DOTS, debug_mask="all")
    for block, intrin in (("dot", first), ("dot2", second)):
        _, k = sch.get_loops(sch.get_block(block))
        _, k1 = sch.split(k, [None, 4])
        sch.tensorize(k1, intrin)
    return sch.mod["main"]


def test_one_intrinsic_tensorizes_many_blocks_as_fresh_copies_of_it_would():
    # what tensorize derives from an intrinsic is kept for the next block:
    # the second block still gets names fresh in the function then (A_2,
    # not the first block's A_1), and the result is the one two separate
    # intrinsic objects give
    shared = tir.TensorIntrin(DOT4_DESC, DOT4_IMPL)
    func = _tensorize_both_dots(shared, shared)
    assert func == _tensorize_both_dots(tir.TensorIntrin(DOT4_DESC, DOT4_IMPL),
                                        tir.TensorIntrin(DOT4_DESC, DOT4_IMPL))
    text = func.script()
    assert "C_1[()] = C_1[()] + A_1[k] * B_1[k]" in text and "C_2[()] = C_2[()] + A_2[k_1] * B_2[k_1]" in text
    _same_meaning(TWO_DOTS, func)


def test_one_intrinsic_serves_blocks_of_both_index_dtypes():
    # an int64 block after an int32 one: the intrinsic is retyped for each
    shared = tir.TensorIntrin(DOT4_DESC, DOT4_IMPL)
    for func in (DOT_ROWS, DOT_ROWS_INT64, DOT_ROWS):
        sch = tirfun.Schedule(func)
        _, k = sch.get_loops(sch.get_block("dot"))
        sch.split(k, [None, 4])
        sch.tensorize(tirfun.rewrites.LoopRef("k_1"), shared)
        if func is DOT_ROWS_INT64:
            tirfun.assert_structural_equal(sch.mod["main"], DOT_ROWS_INT64_TENSORIZED)
        else:
            assert "T.int64" not in sch.mod["main"].script()
        _same_meaning(func, sch.mod["main"])


def test_tensorize_at_a_loop_is_blockize_then_tensorize_of_the_new_block():
    # at a loop, tensorize puts blockize's block in place only once it is
    # tensorized; the names it then chooses are those of the function with
    # that block in place: the implementation's vi, vj, vk take the names
    # the block's own iteration variables gave up, as in two steps
    with_init = from_source('''
@T.prim_func
def rows(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("dot"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * B[vi, vk]
''')
    mma = tir.TensorIntrin(MMA_DESC, MMA_IMPL)
    dot4 = tir.TensorIntrin(DOT4_DESC, DOT4_IMPL)
    tiled, ii = _tiled_matmul()
    cases = [(tiled.mod, tiled.get(ii).loop_var.name, mma)]
    # an implementation whose loop is named as blockize names the new block:
    # block names are names in use too, so the loop becomes dot_o_1
    named_like_the_block = tir.TensorIntrin(DOT4_DESC, from_source(DOT4_IMPL.script().replace(
        "for k in T.unroll(4):", "for dot_o in T.unroll(4):").replace("A[k] * B[k]", "A[dot_o] * B[dot_o]")))
    for func, intrin in ((DOT_ROWS, dot4), (with_init, dot4), (DOT_ROWS_INT64, dot4), (DOT_ROWS, named_like_the_block)):
        mod = R.split("k", [None, 4])(tirfun.IRModule({"main": func}))
        cases.append((mod, "k_1", intrin))
    for mod, loop, intrin in cases:
        at_loop = R.tensorize(R.LoopRef(loop), intrin)(mod)
        outcome = R.blockize(loop).run(mod)
        in_two = R.tensorize(outcome.result, intrin)(outcome.mod)
        assert at_loop == in_two
        tirfun.assert_structural_equal(at_loop["main"], in_two["main"])
    text = R.tensorize(R.LoopRef(cases[0][1]), mma)(cases[0][0])["main"].script()
    # the matmul's block bound vi, vj, vk; blockize replaced them by vi_o, vi_i...
    assert 'vi, vj, vk = T.axis.remap("SSR", [i, j, k])' in text
    assert "for dot_o_1 in T.unroll(4):" in R.tensorize(R.LoopRef("k_1"), named_like_the_block)(cases[-1][0])[
        "main"].script()


COPY4 = from_source("""
@T.prim_func
def main(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
""")

COPY4_DESC = from_source("""
@T.prim_func
def desc(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "int32")
    B = T.match_buffer(b, (4,), "int32")
    with T.block("root"):
        T.reads(A[0:4])
        T.writes(B[0:4])
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
""")

COPY4_IMPL = from_source("""
@T.prim_func
def impl(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "int32")
    B = T.match_buffer(b, (4,), "int32")
    with T.block("root"):
        T.reads(A[0:4])
        T.writes(B[0:4])
        T.call_extern("handle", "copy4", B.data, A.data)
""")


def test_tensorize_by_an_implementation_naming_its_pointers_prints_them_as_buffer_data():
    # the implementation's buffers point at their parameters; in the block
    # they are views with pointers of their own, printed ``A_1.data`` as the
    # implementation is written (and as TVM prints it), not as handles the
    # views are declared with
    sch = tirfun.Schedule(COPY4)
    _, inner = sch.split(sch.get_loops("B")[0], [None, 4])
    sch.tensorize(inner, tir.TensorIntrin(COPY4_DESC, COPY4_IMPL))
    text = sch.mod.script()
    assert 'T.call_extern("handle", "copy4", B_1.data, A_1.data)' in text
    assert "T.handle()" not in text and "data=" not in text
    assert from_source(text) == sch.mod
    block = sch.get(sch.get_block("B_o"))
    views = {m.buffer.name: m.buffer.data for m in block.match_buffers}
    assert set(views) == {"A_1", "B_1"} and all(v is not None for v in views.values())
    assert sch.mod["main"].params[0] not in set(views.values())
