"""Pointers to allocated buffers (``B.data``, ``B.access_ptr(...)``, with
``content_lanes``) reach a callee that updates the elements they point to:
printed and parsed back, interpreted, and compiled to the same results as
numpy computes them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.script import from_source

HEAD = "from tirfun.script import ir as I\nfrom tirfun.script import tir as T\n"


@st.composite
def pointer_programs(draw):
    dtype = draw(st.sampled_from(["float32", "int32", "float64", "int64", "float16"]))
    lanes = draw(st.sampled_from([1, 1, 2, 4]))
    n = lanes * draw(st.integers(1, 4))
    how = draw(st.sampled_from(["data", "access_ptr"]))
    k = lanes * draw(st.integers(0, n // lanes - 1)) if how == "access_ptr" else 0
    add = draw(st.integers(1, 5))
    if how == "data":
        pointer, count = "S.data", n
    else:
        lane_arg = f", content_lanes={lanes}" if lanes > 1 else ""
        mask = draw(st.sampled_from(['"rw"', '"w"', "3"]))
        pointer, count = f"S.access_ptr({mask}, offset={k}{lane_arg})", n - k
    scoped = draw(st.booleans())
    text = HEAD + f'''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def bump(p: T.handle("{dtype}"), m: T.int32):
        R = T.decl_buffer((m,), "{dtype}", data=p)
        for j in range(m):
            R[j] = R[j] + T.{dtype}({add})

    @T.prim_func
    def main(A: T.Buffer(({n},), "{dtype}")):
'''
    body = [f'S = T.alloc_buffer(({n},), "{dtype}")',
            f"for i in range({n}):", "    S[i] = A[i]"]
    call = f"Module.bump({pointer}, {count})"
    body += ['with T.block("call"):', f"    {call}"] if scoped else [call]
    body += [f"for i in range({n}):", "    A[i] = S[i] * T." + dtype + "(2)"]
    text += "".join(f"        {line}\n" for line in body)
    expected_add = np.zeros(n)
    expected_add[k:] = add
    return from_source(text), dtype, n, expected_add


@settings(max_examples=max(1, settings().max_examples * 60 // 300))
@given(pointer_programs(), st.randoms(use_true_random=False))
def test_pointers_to_allocations_reach_the_callee(program, rnd):
    mod, dtype, n, expected_add = program
    assert structural_equal(from_source(mod.script()), mod)
    a = np.array([rnd.randint(-20, 20) for _ in range(n)], dtype=dtype)
    expected = ((a.astype(np.float64) + expected_add) * 2).astype(dtype)
    interpreted, compiled = a.copy(), a.copy()
    tirfun.interp.run(mod, interpreted)
    tirfun.build(mod)(compiled)
    assert interpreted.tobytes() == compiled.tobytes() == expected.tobytes()
