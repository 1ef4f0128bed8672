"""The LLVM side of the CPU build: a loop LLVM's own loop vectorizer
miscompiled, target options, builds from several threads, and built
modules called in a forked child."""

from __future__ import annotations

import numpy as np

import tirfun
from tirfun.interp import run as interp_run
from tirfun.script import from_source

FUSED_REDUCTION = '''@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), O: T.Buffer((16, 4), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k, j in T.grid(16, 13, 4):
        with T.block("O"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                O[vi, vj] = T.float32(0)
            O[vi, vj] = O[vi, vj] + A[vi, vj]'''


def test_fused_reduction_with_modulo_index_is_exact_and_stays_in_bounds():
    # a reduction fused with a spatial loop: O[i, f % 4] += A[i, f % 4] over
    # f in range(52); LLVM's loop vectorizer widened it as consecutive,
    # giving 4.0 and writing past O
    sch = tirfun.Schedule(from_source(FUSED_REDUCTION))
    _, k, j = sch.get_loops(sch.get_block("O"))
    sch.fuse(k, j)
    canary = np.float32(-3.25)
    raw = np.full(64 + 64, canary, "float32")
    out = raw[:64].reshape(16, 4)
    tirfun.build(sch.mod, target="llvm")(np.ones((16, 8), "float32"), out)
    np.testing.assert_array_equal(out, np.full((16, 4), 13.0, "float32"))
    assert (raw[64:] == canary).all(), "the kernel wrote past O"
    expected = np.zeros((16, 4), "float32")
    interp_run(sch.mod["main"], np.ones((16, 8), "float32"), expected)
    np.testing.assert_array_equal(out, expected)
