"""Loops over statements outside any block: reorder and parallel keep the
meaning, or refuse.

Blocks promise that their instances are independent; bare statements under
loops promise nothing, and TVM reorders and parallelizes their loops all
the same. Here random two-loop nests of bare stores, whose indices may
make iterations meet at an element (``a[j] = 2 * a[i]``), or not
(``a[i, j] = a[i, j] + 1``), or update in place (``acc[0] = acc[0] +
A[i, j]``), get reordered and parallelized where the primitives allow it;
what they allow computes the interpreter's results before and after, and
parallel loops build to them.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.interp import run
from tirfun.script import from_source

INDICES = ["i", "j", "0", "i + j", "7 - i", "j // 2", "(i * 3 + j) % 8"]


@st.composite
def loose_nests(draw):
    ext_i, ext_j = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    dtype = draw(st.sampled_from(["int32", "float32"]))
    lines = []
    for _ in range(draw(st.integers(1, 2))):
        shape = draw(st.sampled_from(["2d", "1d"]))
        if shape == "2d":
            write = f"a[{draw(st.sampled_from(INDICES))}, {draw(st.sampled_from(INDICES))}]"
            read = f"a[{draw(st.sampled_from(INDICES))}, {draw(st.sampled_from(INDICES))}]"
        else:
            write = f"b[{draw(st.sampled_from(INDICES))}]"
            read = f"b[{draw(st.sampled_from(INDICES))}]"
        form = draw(st.sampled_from(["copy", "update", "scale"]))
        if form == "update":
            lines.append(f"{write} = {write} + c[i, j]")
        elif form == "copy":
            lines.append(f"{write} = {read} + c[i, j]")
        else:
            lines.append(f"{write} = {read} * T.{dtype}(2)")
    body = "\n".join("            " + line for line in lines)
    text = f'''
from tirfun.script import tir as T
@T.prim_func
def main(a: T.Buffer((16, 16), "{dtype}"), b: T.Buffer((16,), "{dtype}"), c: T.Buffer((16, 16), "{dtype}")):
    for i in range({ext_i}):
        for j in range({ext_j}):
{body}
'''
    return IRModule({"main": from_source(text)}), dtype


def _inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(-4, 5, size=s).astype(dtype) for s in ((16, 16), (16,), (16, 16))]


def _results(mod, args, build=False):
    out = [a.copy() for a in args]
    if build:
        tirfun.build(mod)(*out)
    else:
        run(mod, *out)
    return out


@given(loose_nests(), st.sampled_from(["reorder", "parallel i", "parallel j"]), st.integers(0, 2**16))
def test_an_allowed_reorder_or_parallel_keeps_the_meaning(case, primitive, seed):
    mod, dtype = case
    rewrite = R.reorder("j", "i") if primitive == "reorder" else R.parallel(primitive[-1])
    if rewrite.violations(mod):
        event(f"{primitive}: refused")
        return
    event(f"{primitive}: applied")
    out = rewrite(mod)
    args = _inputs(dtype, seed)
    expected = _results(mod, args)
    for x, y in zip(expected, _results(out, args)):
        np.testing.assert_array_equal(x, y)
    if primitive != "reorder":
        for x, y in zip(expected, _results(out, args, build=True)):
            np.testing.assert_array_equal(x, y)
