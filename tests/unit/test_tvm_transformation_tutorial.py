"""A program in the style of TVM's TensorIR transformation tutorial runs
with ``import tvm`` served by tirfun (``tirfun.compat.install()``).

It makes the tutorial's calls in the tutorial's order: a matmul followed by
a relu, built and timed with ``time_evaluator``; then split, reorder,
reverse_compute_at and decompose_reduction, the module printed after each
step and checked against numpy; then the trace and the schedule printed.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import tirfun.compat


@pytest.fixture
def tvm():
    module = tirfun.compat.install()
    try:
        yield module
    finally:
        tirfun.compat.uninstall()


def test_transformation_walkthrough_with_tvm_served_by_tirfun(tvm):
    from tvm.script import ir as I
    from tvm.script import tir as T

    @I.ir_module
    class MatmulRelu:
        @T.prim_func
        def main(X: T.Buffer((64, 64), "float32"), W: T.Buffer((64, 64), "float32"),
                 Out: T.Buffer((64, 64), "float32")):
            T.func_attr({"tir.noalias": T.bool(True)})
            Acc = T.alloc_buffer((64, 64))
            for r, c, t in T.grid(64, 64, 64):
                with T.block("Y"):
                    vr, vc, vt = T.axis.remap("SSR", [r, c, t])
                    with T.init():
                        Acc[vr, vc] = T.float32(0)
                    Acc[vr, vc] = Acc[vr, vc] + X[vr, vt] * W[vt, vc]
            for r, c in T.grid(64, 64):
                with T.block("C"):
                    vr, vc = T.axis.remap("SS", [r, c])
                    Out[vr, vc] = T.max(Acc[vr, vc], T.float32(0))

    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, size=(64, 64)).astype("float32")
    w = rng.uniform(-1, 1, size=(64, 64)).astype("float32")
    expected = np.maximum(x @ w, 0)
    x_nd, w_nd = tvm.nd.array(x), tvm.nd.array(w)
    out_nd = tvm.nd.array(np.zeros((64, 64), dtype="float32"))
    printed = io.StringIO()

    def evaluate(mod):
        lib = tvm.tir.build(mod, target="llvm")
        lib(x_nd, w_nd, out_nd)
        np.testing.assert_allclose(out_nd.numpy(), expected, rtol=1e-4, atol=1e-5)
        timer = lib.time_evaluator("main", tvm.cpu(), number=2)
        result = timer(x_nd, w_nd, out_nd)
        assert result.mean > 0
        with redirect_stdout(printed):
            print(result)

    evaluate(MatmulRelu)
    sch = tvm.tir.Schedule(MatmulRelu)
    block_y = sch.get_block("Y")
    r, c, t = sch.get_loops(block_y)
    c0, c1 = sch.split(c, factors=[None, 8])
    sch.reorder(c0, t, c1)
    with redirect_stdout(printed):
        sch.mod.show()
    evaluate(sch.mod)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(block_y)] == [64, 8, 64, 8]

    block_c = sch.get_block("C")
    sch.reverse_compute_at(block_c, c0)
    # the relu now runs inside the c0 loop, after the reduction over t
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(block_c)][:2] == [
        sch.get(lp).loop_var.name for lp in sch.get_loops(block_y)][:2]
    with redirect_stdout(printed):
        sch.mod.show()
    evaluate(sch.mod)

    init = sch.decompose_reduction(block_y, t)
    assert sch.get(init).name_hint == "Y_init"
    assert sch.get(block_y).init is None
    with redirect_stdout(printed):
        sch.mod.show()
    evaluate(sch.mod)

    with redirect_stdout(printed):
        sch.trace.show()
        sch.show()
    text = printed.getvalue()
    for call in ("split", "reorder", "reverse_compute_at", "decompose_reduction"):
        assert f"sch.{call}(" in text, call
    assert "Y_init" in text
