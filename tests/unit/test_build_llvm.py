"""The LLVM side of the CPU build: a loop LLVM's own loop vectorizer
miscompiled, target options, builds from several threads, and built
modules called in a forked child."""

from __future__ import annotations

import numpy as np
import pytest

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


def _many_nests(n: int) -> str:
    """``n`` small loop nests of several kinds in one function: plain,
    reading a scratch buffer filled outside the nest, with a parallel inner
    loop, and a reduction."""
    lines = ["@T.prim_func",
             f"def main(A: T.Buffer((16,), 'float32'), B: T.Buffer(({n}, 16), 'float32'), x: T.int32):",
             "    T.func_attr({'tir.noalias': True})",
             "    S = T.alloc_buffer((16,), 'float32')",
             "    for i in range(16):",
             "        with T.block('fill'):",
             "            v = T.axis.spatial(16, i)",
             "            S[v] = A[v] * T.float32(2)"]
    for k in range(n):
        kind = k % 4
        if kind == 0:
            lines += ["    for i in range(16):", f"        with T.block('b{k}'):",
                      "            v = T.axis.spatial(16, i)",
                      f"            B[{k}, v] = B[{k}, v] + A[v] * T.float32({k + 1})"]
        elif kind == 1:
            lines += ["    for i in range(16):", f"        with T.block('b{k}'):",
                      "            v = T.axis.spatial(16, i)",
                      f"            B[{k}, v] = S[v] + T.Cast('float32', x)"]
        elif kind == 2:
            lines += ["    for i0 in range(4):", "        for i1 in T.parallel(4):",
                      f"            with T.block('b{k}'):",
                      "                v = T.axis.spatial(16, i0 * 4 + i1)",
                      f"                B[{k}, v] = A[v] - T.float32({k})"]
        else:
            lines += ["    for i, r in T.grid(16, 5):", f"        with T.block('b{k}'):",
                      "            v, vr = T.axis.remap('SR', [i, r])",
                      f"            with T.init():", f"                B[{k}, v] = T.float32(0)",
                      f"            B[{k}, v] = B[{k}, v] + A[(v + vr) % 16]"]
    return "\n".join(lines)


def test_functions_with_many_loop_nests_are_outlined_and_agree_with_the_interpreter():
    from tirfun.lower.llvm_cpu import OUTLINE_LOOPS

    n = OUTLINE_LOOPS + 6
    mod = from_source(_many_nests(n))
    rt = tirfun.build(mod)
    assert "_nest_" in rt.get_source("ll")  # each nest is a function of its own
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 16).astype("float32")
    b = rng.uniform(-1, 1, (n, 16)).astype("float32")
    expected = b.copy()
    interp_run(mod, a.copy(), expected, 3)
    rt(a, b, 3)
    assert b.tobytes() == expected.tobytes()
    small = from_source(_many_nests(4))
    assert "_nest_" not in tirfun.build(small).get_source("ll")


def test_a_failed_assertion_inside_an_outlined_nest_is_reported():
    from tirfun.lower.llvm_cpu import OUTLINE_LOOPS

    n = OUTLINE_LOOPS + 2
    lines = ["@T.prim_func",
             f"def main(A: T.Buffer(({n}, 4), 'int32'), x: T.int32):"]
    for k in range(n):
        lines += [f"    for i in range(4):",
                  f"        assert x != {k}, 'x hit nest {k}'",
                  f"        A[{k}, i] = x + i"]
    rt = tirfun.build(from_source("\n".join(lines)))
    assert "_nest_" in rt.get_source("ll")
    a = np.zeros((n, 4), "int32")
    rt(a, -1)
    np.testing.assert_array_equal(a, np.arange(4)[None, :] - 1 + np.zeros((n, 1), "int32"))
    with pytest.raises(tirfun.errors.TirfunError, match=f"x hit nest {n - 3}"):
        rt(a, n - 3)
    assert (a[n - 3:] == np.arange(4)[None, :] - 1).all()  # nothing ran after the failure
    assert (a[:n - 3] == np.arange(4)[None, :] + n - 3).all()
