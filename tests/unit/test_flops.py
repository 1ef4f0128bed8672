"""estimate_flops: arithmetic counted by TVM's rules, figures TVM gives."""

from __future__ import annotations

import pytest

import tirfun
from tirfun import IRModule, te, tir
from tirfun.analysis import estimate_flops
from tirfun.errors import TirfunError
from tirfun.script import from_source

HEADER = "from tirfun.script import tir as T\n"


def flops(text: str) -> float:
    return estimate_flops(IRModule({"main": from_source(HEADER + text)}))


def test_a_matmul_counts_a_multiply_and_an_add_per_point():
    # TVM's GMM workload: 2 * 128**3
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    mod = IRModule({"main": te.create_prim_func([A, B, C])})
    assert estimate_flops(mod) == 4194304.0
    # a schedule moves operations around but runs as many
    sch = tirfun.Schedule(mod)
    i, j, kk = sch.get_loops(sch.get_block("C"))
    sch.split(kk, [None, 16])
    sch.decompose_reduction(sch.get_block("C"), i)
    assert estimate_flops(sch.mod) == 4194304.0


def test_a_padded_convolution_counts_what_tvm_counts():
    # TVM's C2D workload (NHWC, 224x224x3 to 64 channels, 7x7, stride 2,
    # padding 3): the padding stage's conditions count nothing
    n, h, w, ci, co, kh, kw, stride, pad = 1, 224, 224, 3, 64, 7, 7, 2, 3
    X = te.placeholder((n, h, w, ci), name="X")
    W = te.placeholder((kh, kw, ci, co), name="W")
    P = te.compute((n, h + 2 * pad, w + 2 * pad, ci),
                   lambda b, y, x, c: tir.if_then_else(
                       tir.all(y >= pad, y < h + pad, x >= pad, x < w + pad),
                       X[b, y - pad, x - pad, c], tir.const(0.0, "float32")), name="P")
    oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    ry, rx, rc = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx"), te.reduce_axis((0, ci), "rc")
    Y = te.compute((n, oh, ow, co), lambda b, y, x, f: te.sum(
        P[b, y * stride + ry, x * stride + rx, rc] * W[ry, rx, rc, f], axis=[ry, rx, rc]), name="Y")
    assert estimate_flops(IRModule({"main": te.create_prim_func([X, W, Y])})) == 236027904.0


def test_a_let_counts_its_value():
    assert flops('''
@T.prim_func
def main(a: T.Buffer((16,), "float32")):
    for i in range(8):
        j = i + 8
        a[j] = a[i]
''') == 8.0


def test_branches_count_the_costlier_side():
    assert flops('''
@T.prim_func
def main(a: T.Buffer((16,), "float32"), b: T.Buffer((16,), "float32")):
    for i in range(16):
        if i % 2 == 0:
            a[i] = b[i]
        else:
            if i % 3 == 0:
                a[i] = b[i - 1] + b[i - 2]
''') == 16.0


def test_a_loop_counts_the_largest_extent_it_can_have():
    assert flops('''
@T.prim_func
def main(a: T.Buffer((16,), "float32")):
    for i in range(4 + 4):
        for j in range(i + 8):
            a[j] = T.float32(2) * a[i]
''') == 120.0  # 8 times the largest inner extent, 15


def test_the_estimated_flops_attribute_wins():
    assert flops('''
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    T.func_attr({"estimated_flops": 32})
    for i in range(16):
        A[0] = A[0] + T.float32(1)
''') == 32.0


def test_what_tvms_estimator_stops_at_is_counted():
    # an evaluate, an assertion and a broadcast: TVM's has no rule for
    # them; a store's indices count nothing, as in TVM
    assert flops('''
@T.prim_func
def main(A: T.Buffer((16,), "int32"), n: T.int32):
    assert n > 0, "n"
    for i in range(4):
        T.evaluate(T.call_extern("int32", "f", n * 2 + i))
        A[T.Ramp(i * 4, 1, 4)] = T.Broadcast(n + 1, 4)
''') == 4 * 2 + 4 * 1


def test_a_statement_counts_and_anything_else_is_refused():
    func = from_source(HEADER + '''
@T.prim_func
def main(a: T.Buffer((8,), "float32")):
    for i in range(8):
        a[i] = a[i] * T.float32(2) + T.float32(1)
''')
    assert estimate_flops(func) == 16.0
    assert estimate_flops(func.body) == 16.0
    with pytest.raises(TirfunError, match="takes an IRModule, a PrimFunc or a statement, got int"):
        estimate_flops(3)


def test_a_size_of_either_width_counts_once():
    # nothing but its type bounds the extent: once (TVM: 2**31 - 1 times for
    # an int32 size, once for an int64 one)
    for dtype in ("int32", "int64"):
        assert flops(f'''
@T.prim_func
def main(a: T.Buffer((16,), "float32"), n: T.{dtype}):
    for i in range(n):
        a[0] = a[0] + T.float32(1)
''') == 1.0


def test_allocations_and_declared_buffers_count_what_they_hold():
    # TVM's estimator looks through T.allocate and T.decl_buffer to their bodies
    assert flops('''
@T.prim_func
def main(A_data: T.handle("float32")):
    A = T.decl_buffer(16, "float32", data=A_data)
    for i in range(16):
        A[0] = A[0] + T.float32(1)
''') == 16.0
    assert flops('''
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(16):
        B_data = T.allocate([1], "float32", "global")
        B = T.decl_buffer((1,), data=B_data)
        B[0] = A[i] * T.float32(2)
        A[i] = B[0] + T.float32(1)
''') == 32.0
