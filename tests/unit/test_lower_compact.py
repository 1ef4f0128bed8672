"""``compact_allocations``: allocations move to the loop holding their uses
and shrink to the region used there, only where that keeps the meaning; a
register tile in ``local`` scope ends up in registers."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun.interp import run as interp_run
from tirfun.lower import compact_allocations, lower_blocks
from tirfun.nodes import Allocate, For
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs

# a 4x16 register tile of C accumulated over k, written back after the loop
MATMUL_TILE = '''@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    C_local = T.alloc_buffer((64, 64), "float32", scope="local")
    for i0 in T.parallel(16):
        for j0 in range(4):
            for k in range(64):
                for i1 in T.unroll(4):
                    for j1 in T.vectorized(16):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i0 * 4 + i1)
                            vj = T.axis.spatial(64, j0 * 16 + j1)
                            vk = T.axis.reduce(64, k)
                            with T.init():
                                C_local[vi, vj] = T.float32(0)
                            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
            for i1 in range(4):
                for j1 in T.vectorized(16):
                    with T.block("W"):
                        vi = T.axis.spatial(64, i0 * 4 + i1)
                        vj = T.axis.spatial(64, j0 * 16 + j1)
                        C[vi, vj] = C_local[vi, vj]
'''

# every iteration of i writes all of S (the same elements) before reading
# them: a producer placed with compute_at under a loop it does not depend on
PRIVATE = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((6, 8), "float32")):
    S = T.alloc_buffer((8,), "float32")
    for i in T.{kind}(6):
        for j in range(8):
            with T.block("S"):
                vj = T.axis.spatial(8, j)
                S[vj] = A[vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = S[vj] + S[7 - vj] + T.Cast("float32", vi)
'''

# S carries a value from one iteration of r to the next: it must stay
CARRIED = '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((3, 4), "float32")):
    S = T.alloc_buffer((4,), "float32")
    for r in range(3):
        for i in range(4):
            with T.block("S"):
                vr, vi = T.axis.remap("SS", [r, i])
                if vr == 0:
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi]
        for i in range(4):
            with T.block("C"):
                vr, vi = T.axis.remap("SS", [r, i])
                C[vr, vi] = S[vi]
'''

# compute_at then vectorize: the producer of row vi runs in every lane
VECTOR_ROW = '''@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4, 8), "float32")
    for i in T.vectorized(4):
        for j in range(8):
            with T.block("S"):
                vi, vj = T.axis.remap("SS", [i, j])
                S[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = S[vi, 0] + S[vi, 7]
'''


def _compacted(src):
    return compact_allocations(lower_blocks(IRModule({"main": from_source(src)})))


def _allocations(mod):
    """(shape, the loop variable right above it or None) of each allocation."""
    out = []

    def visit(node, above):
        if isinstance(node, Allocate):
            out.append(([e.value for e in node.extents], above))
        nxt = node.loop_var.name if isinstance(node, For) else (above if not isinstance(node, Allocate) else above)
        for child in getattr(node, "seq", None) or [getattr(node, "body", None), getattr(node, "then_case", None)]:
            if child is not None:
                visit(child, nxt)

    visit(mod["main"].body, None)
    return out


def _build_matches_interp(src, threads=2):
    func = from_source(src)
    old = os.environ.get("TIRFUN_NUM_THREADS")
    os.environ["TIRFUN_NUM_THREADS"] = str(threads)
    try:
        rt = tirfun.build(IRModule({"main": func}))
    finally:
        if old is None:
            del os.environ["TIRFUN_NUM_THREADS"]
        else:
            os.environ["TIRFUN_NUM_THREADS"] = old
    args = random_inputs(func, np.random.default_rng(3))
    expected = [a.copy() for a in args]
    interp_run(func, *expected)
    rt(*args)
    for p, x, y in zip(func.params, expected, args):
        problem = compare_arrays(func.buffer_map[p].name, x, y, func.buffer_map[p].dtype)
        assert problem is None, problem
    return rt


def test_a_register_tile_moves_into_the_tile_loop_and_shrinks_to_the_tile():
    out = _compacted(MATMUL_TILE)
    assert _allocations(out) == [([4, 16], "j0")]
    text = out.script()
    assert "C_local[i1, j1] = C_local[i1, j1] + A[i0 * 4 + i1, k] * B[k, j0 * 16 + j1]" in text
    assert "C[i0 * 4 + i1_1, j0 * 16 + j1_1] = C_local[i1_1, j1_1]" in text
    assert_equivalent(from_source(MATMUL_TILE), out["main"], trials=1)


def test_a_local_register_tile_lives_in_registers_in_the_optimised_code():
    rt = _build_matches_interp(MATMUL_TILE)
    ll = rt.get_source("ll")
    # no stack slot of the tile survives optimisation, so no load or store
    # of it is left in the reduction loop: the tile is in registers
    assert not re.search(r"%C_local\S* = alloca", ll), ll
    assert "C_local" not in ll


def test_without_compaction_the_tile_stays_in_memory(monkeypatch):
    # the check above can fail: the same program lowered without the pass
    # keeps the whole 64x64 buffer on the stack
    import tirfun.lower as lowering
    from tirfun.runtime.builder import clear_cache
    clear_cache()  # built modules are cached by the program, not by the passes
    monkeypatch.setattr(lowering, "PASSES",
                        tuple(p for p in lowering.PASSES if p[0] != "compact_allocations"))
    ll = _build_matches_interp(MATMUL_TILE).get_source("ll")
    clear_cache()
    assert re.search(r"%C_local\S* = alloca \[4096 x float\]", ll)


@pytest.mark.parametrize("kind", ["serial", "parallel", "unroll"])
def test_a_buffer_written_before_read_in_every_iteration_gets_one_per_iteration(kind):
    src = PRIVATE.format(kind=kind)
    out = _compacted(src)
    assert _allocations(out) == [([8], "i")]
    assert_equivalent(from_source(src), out["main"], trials=2)
    # in a parallel loop the private buffer is what keeps threads apart
    _build_matches_interp(src)


def test_a_buffer_carrying_values_across_iterations_stays_outside_the_loop():
    out = _compacted(CARRIED)
    assert _allocations(out) == [([4], None)]
    assert_equivalent(from_source(CARRIED), out["main"], trials=2)
    _build_matches_interp(CARRIED)


def test_an_allocation_never_moves_into_a_vectorized_loop():
    # above the vectorized loop, the buffer keeps one row per lane
    out = _compacted(VECTOR_ROW)
    assert _allocations(out) == [([4, 8], None)]
    _build_matches_interp(VECTOR_ROW)


def test_a_buffer_shared_by_the_lanes_of_a_vectorized_loop_computes_what_the_interpreter_does():
    src = PRIVATE.format(kind="vectorized")
    out = _compacted(src)
    assert _allocations(out) == [([8], None)]
    _build_matches_interp(src)


def test_an_allocation_shrinks_in_place_to_the_region_used():
    src = '''@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((16, 16), "float32")
    for i in range(4):
        with T.block("S"):
            vi = T.axis.spatial(4, i)
            S[vi + 2, 3] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = S[vi + 2, 3]
'''
    out = _compacted(src)
    assert _allocations(out) == [([4, 1], None)]
    assert "S[i, 0] = A[i]" in out.script()
    assert_equivalent(from_source(src), out["main"], trials=2)
    _build_matches_interp(src)


# the tile is allocated by an opaque block inside the panel loop j0 (as
# cache_write leaves it in a part of a partitioned loop): its region starts
# at a multiple of j0, a loop around the allocation
NESTED_TILE = '''@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), C: T.Buffer((16, 64), "float32")):
    for j0 in range(4):
        with T.block("part"):
            T.reads(A[0:16, j0 * 16:j0 * 16 + 16])
            T.writes(C[0:16, j0 * 16:j0 * 16 + 16])
            S = T.alloc_buffer((16, 64), "float32", scope="local")
            for i in range(16):
                for j1 in range(16):
                    with T.block("S"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(64, j0 * 16 + j1)
                        S[vi, vj] = A[vi, vj] * T.float32(2)
                for j1 in range(16):
                    with T.block("C"):
                        vi = T.axis.spatial(16, i)
                        vj = T.axis.spatial(64, j0 * 16 + j1)
                        C[vi, vj] = S[vi, vj] + T.float32(1)
'''


def test_an_allocation_below_a_loop_shrinks_to_a_region_starting_in_that_loops_variable():
    out = _compacted(NESTED_TILE)
    # one row of 16 per iteration of i, not the 16 x 64 declared
    assert _allocations(out) == [([1, 16], "i")]
    assert_equivalent(from_source(NESTED_TILE), out["main"], trials=2)
    _build_matches_interp(NESTED_TILE)


def test_an_allocation_whose_pointer_escapes_is_left_alone():
    src = '''@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((8,), "float32")
    for i in range(2):
        with T.block("S"):
            vi = T.axis.spatial(2, i)
            S[vi] = A[vi]
            T.evaluate(T.address_of(S[vi]))
'''
    out = _compacted(src)
    assert _allocations(out) == [([8], None)]


# the producer of S split by a factor that does not divide its extent
PRIVATE_SPLIT = '''@T.prim_func
def main(A: T.Buffer((5,), "float32"), C: T.Buffer((6, 5), "float32")):
    S = T.alloc_buffer((5,), "float32")
    for i in T.parallel(6):
        for j0, j1 in T.grid(2, 4):
            with T.block("S"):
                vj = T.axis.spatial(5, j0 * 4 + j1)
                T.where(j0 * 4 + j1 < 5)
                S[vj] = A[vj] * T.float32(2)
        for j in range(5):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = S[vj] + S[4 - vj] + T.Cast("float32", vi)
'''


def test_a_split_producer_under_its_predicate_still_writes_what_is_read_first():
    out = _compacted(PRIVATE_SPLIT)
    assert _allocations(out) == [([5], "i")]
    assert_equivalent(from_source(PRIVATE_SPLIT), out["main"], trials=2)
    _build_matches_interp(PRIVATE_SPLIT)


def test_a_producer_writing_less_than_is_read_keeps_the_buffer_outside():
    # the predicate leaves S[4] unwritten in every iteration: the value read
    # there is the one an earlier iteration left (none here), so S stays
    src = PRIVATE_SPLIT.replace("T.where(j0 * 4 + j1 < 5)", "T.where(j0 * 4 + j1 < 4)")
    out = _compacted(src)
    assert _allocations(out) == [([5], None)]
