"""normalize_index_dtype: a function's index arithmetic retyped to one
integer dtype, as TVM's IndexDataTypeNormalizer retypes a tensor
intrinsic's implementation before tensorize puts it in place."""

import numpy as np

import tirfun
from tirfun import interp
from tirfun.rewrites.index_dtype import normalize_index_dtype
from tirfun.script import from_source

BEFORE = from_source('''
@T.prim_func
def f(a: T.handle, d: T.handle):
    A = T.match_buffer(a, (4, 8), offset_factor=1)
    D = T.match_buffer(d, (4,), "int32")
    with T.block("root"):
        T.reads()
        T.writes(A[0:4, 0:8], D[0:4])
        for i, j in T.grid(4, 8):
            if i * 8 + j < 30:
                A[i, j] = T.Cast("float32", i * 8 + j) + T.float32(0.5)
            else:
                A[i, j] = T.float32(0)
        for i in range(4):
            D[i] = i * 3 + T.Cast("int32", A[i, 0])
''')

# indices, shapes, the offset variable, loops and the condition's
# comparison become int64; the loop variable's other uses follow it (the
# literals beside it widened), and the value stored into the int32 buffer
# is cast back to it
AFTER = from_source('''
@T.prim_func
def f(a: T.handle, D: T.Buffer((T.int64(4),), "int32")):
    A_elem_offset = T.int64()
    A = T.match_buffer(a, (T.int64(4), T.int64(8)), elem_offset=A_elem_offset, offset_factor=1)
    with T.block("root"):
        T.reads()
        T.writes(A[T.int64(0):T.int64(4), T.int64(0):T.int64(8)], D[T.int64(0):T.int64(4)])
        for i, j in T.grid(T.int64(4), T.int64(8)):
            if i * T.int64(8) + j < T.int64(30):
                A[i, j] = T.Cast("float32", i * T.int64(8) + j) + T.float32(0.5)
            else:
                A[i, j] = T.float32(0.0)
        for i_1 in range(T.int64(4)):
            D[i_1] = T.Cast("int32", i_1 * T.int64(3) + T.Cast("int64", T.Cast("int32", A[i_1, T.int64(0)])))
''')


def _run(func, runner):
    a = np.zeros((4, 8), np.float32)
    d = np.zeros(4, np.int32)
    runner(func, a, d)
    return a, d


def test_an_int32_function_retyped_to_int64_computes_the_same():
    after = normalize_index_dtype(BEFORE, "int64")
    tirfun.assert_structural_equal(after, AFTER)
    want = _run(BEFORE, interp.run)
    got = _run(after, interp.run)
    built = _run(after, lambda f, *xs: tirfun.build(f)(*xs))
    for w, g, b in zip(want, got, built):
        assert np.array_equal(w, g) and np.array_equal(g, b)


def test_retyping_back_to_int32_narrows_the_indices_and_computes_the_same():
    back = normalize_index_dtype(AFTER, "int32")
    a = back.buffer_map[back.params[0]]
    assert [s.dtype for s in a.shape] == ["int32", "int32"] and a.elem_offset.dtype == "int32"
    want = _run(BEFORE, interp.run)
    for w, g in zip(want, _run(back, interp.run)):
        assert np.array_equal(w, g)


def test_a_function_already_of_the_dtype_is_returned_as_it_is():
    assert normalize_index_dtype(BEFORE, "int32") is BEFORE


SHIFTS = from_source('''
@T.prim_func
def unpack(A: T.Buffer((4,), "int32"), B: T.Buffer((32,), "int32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.bitwise_and(T.shift_right(A[vi // 8], vi % 8 * 4), 15) ^ T.shift_left(vi, 3)
''')


def test_shifts_and_bitwise_operations_on_a_retyped_variable_are_widened_whole():
    # a shift of an int32 load by an int64 amount would be ill-typed (the
    # build has no such instruction): the operands and the result widen,
    # and the store narrows the result back to the buffer's int32
    after = normalize_index_dtype(SHIFTS, "int64")
    store = after.body.block.body.body.block.body
    assert store.value.dtype == "int32" and store.value.value.dtype == "int64"
    a = np.array([0x12345678, -0x789ABCDF, 0x7FFFFFFF, -1], np.int32)
    want, got, built = (np.zeros(32, np.int32) for _ in range(3))
    interp.run(SHIFTS, a, want)
    interp.run(after, a, got)
    tirfun.build(after)(a, built)
    assert np.array_equal(want, got) and np.array_equal(got, built)


LET_AND_RAMP = from_source('''
@T.prim_func
def f(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), I: T.Buffer((8,), "int32")):
    for i in range(8):
        x: T.int32 = I[i]
        B[x] = A[x] * T.float32(2)
    for j in range(4):
        B[T.Ramp(j * 4 + 8, 1, 4)] = T.Cast("float32x4", T.Ramp(j * 4, 1, 4)) + A[T.Ramp(j * 4 + 8, 1, 4)]
''')


def test_a_let_variable_used_as_an_index_and_a_ramp_of_values_are_retyped_whole():
    # x indexes B, so it becomes int64 and takes its int32 value cast; the
    # ramp converted to floats has an int64 base and so an int64 stride
    after = normalize_index_dtype(LET_AND_RAMP, "int64")
    let = after.body.seq[0].body
    assert let.var.dtype == "int64" and let.value.dtype == "int64"
    a = np.arange(32, dtype=np.float32)
    idx = np.array([0, 3, 5, 7, 30, 31, 2, 1], np.int32)
    results = []
    for func, runner in ((LET_AND_RAMP, interp.run), (after, interp.run),
                         (after, lambda f, *xs: tirfun.build(f)(*xs))):
        b = np.zeros(32, np.float32)
        runner(func, a, b, idx)
        results.append(b)
    assert all(np.array_equal(results[0], r) for r in results[1:])


def test_a_shift_in_an_index_takes_the_index_dtype_whole():
    func = from_source('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[T.shift_left(i, 1) + 1]
''')
    after = normalize_index_dtype(func, "int64")
    index = after.body.body.value.indices[0]
    assert index.dtype == "int64" and index.a.dtype == "int64" and index.a.args[0].dtype == "int64"
    a = np.arange(16, dtype=np.float32)
    want, got, built = (np.zeros(8, np.float32) for _ in range(3))
    interp.run(func, a, want)
    interp.run(after, a, got)
    tirfun.build(after)(a, built)
    assert np.array_equal(want, got) and np.array_equal(got, built)
