"""A buffer a block allocates with explicit strides: the allocation holds
its furthest element, and the built program computes the interpreter's
results.

Strides are drawn in any order of the dimensions (row-major, column-major
or mixed) with padding between them, shapes include zero extents, and the
buffer passes values from one stage to the next, so an element stored past
the allocation shows up as a wrong result (or as the interpreter's error
on the lowered program).
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st

import tirfun
from tirfun import IRModule
from tirfun.analysis.traversal import walk
from tirfun.interp import run
from tirfun.lower import lower_allocations
from tirfun.nodes import Allocate, IntImm
from tirfun.script import from_source


@st.composite
def strided_programs(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 5) if draw(st.integers(0, 9)) == 0 else st.integers(1, 5)) for _ in range(rank)]
    order = draw(st.permutations(range(rank)))  # innermost first
    strides = [0] * rank
    step = 1
    for k, dim in enumerate(order):
        strides[dim] = step
        step = step * max(shape[dim], 1) + (draw(st.integers(0, 3)) if k < rank - 1 else 0)
    dtype = draw(st.sampled_from(["float32", "int32", "int8", "float64"]))
    idx = ", ".join(f"v{d}" for d in range(rank))
    loops = ", ".join(f"i{d}" for d in range(rank))
    grid = ", ".join(str(s) for s in shape)
    spatial = "S" * rank
    text = f'''
from tirfun.script import tir as T
@T.prim_func
def main(A: T.Buffer({tuple(shape)}, "{dtype}"), C: T.Buffer({tuple(shape)}, "{dtype}")):
    B = T.alloc_buffer({tuple(shape)}, "{dtype}", strides={tuple(strides)})
    for {loops} in T.grid({grid}):
        with T.block("B"):
            {idx} = T.axis.remap("{spatial}", [{loops}])
            B[{idx}] = A[{idx}] + T.{dtype}(1)
    for {loops} in T.grid({grid}):
        with T.block("C"):
            {idx} = T.axis.remap("{spatial}", [{loops}])
            C[{idx}] = B[{idx}] * T.{dtype}(2)
'''
    kind = "row-major" if list(order) == list(range(rank))[::-1] else "other order"
    return from_source(text), shape, strides, kind


@given(strided_programs(), st.integers(0, 2**32 - 1))
def test_a_strided_allocation_holds_its_furthest_element_and_builds_to_the_interpreters_results(case, seed):
    func, shape, strides, kind = case
    event(kind)
    furthest = 1 + sum((d - 1) * s for d, s in zip(shape, strides)) if all(shape) else 0
    (alloc,) = [n for n in walk(lower_allocations(IRModule({"main": func}))["main"].body)
                if isinstance(n, Allocate)]
    room = int(np.prod([e.value for e in alloc.extents if isinstance(e, IntImm)]))
    assert room >= furthest, (alloc.extents, shape, strides)
    rng = np.random.default_rng(seed)
    dtype = func.buffer_map[func.params[0]].dtype
    a = (rng.integers(-50, 50, size=shape)).astype(str(dtype))
    expected, got = np.zeros(shape, str(dtype)), np.zeros(shape, str(dtype))
    run(func, a, expected)
    tirfun.build(IRModule({"main": func}))(a, got)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(expected, (a + 1) * 2)
