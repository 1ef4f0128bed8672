"""Blocks to loops, and alloc_buffer to allocations."""

import pytest

from tirfun import IRModule, tir
from tirfun.analysis.traversal import walk
from tirfun.errors import BuildError
from tirfun.lower import lower_allocations, lower_blocks
from tirfun.nodes import (
    Allocate, Block, BlockRealize, DeclBuffer, IfThenElse, MatchBufferRegion, BufferRegion,
)
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent


def mod_of(src: str) -> IRModule:
    f = from_source(src)
    return f if isinstance(f, IRModule) else IRModule({"main": f})


ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 6):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

SPLIT_WITH_PREDICATE = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            B[vi] = A[vi] * T.float32(2)
"""

WITH_SCRATCH = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(3)
"""


def test_reduction_init_runs_under_the_reduction_start_test():
    mod = mod_of(ROW_SUM)
    out = lower_blocks(mod)
    nodes = list(walk(out["main"].body))
    assert not any(isinstance(n, (Block, BlockRealize)) for n in nodes)
    tests = [n for n in nodes if isinstance(n, IfThenElse)]
    assert len(tests) == 1
    assert tests[0].condition.script() == "k == 0"
    assert_equivalent(mod["main"], out["main"])


def test_lowered_reduction_prints_as_loops():
    out = lower_blocks(mod_of(ROW_SUM))
    assert out["main"].script() == '''# from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 6):
        if k == 0:
            B[i] = T.float32(0.0)
        B[i] = B[i] + A[i, k]'''


def test_predicate_guards_the_instance():
    mod = mod_of(SPLIT_WITH_PREDICATE)
    out = lower_blocks(mod)
    tests = [n for n in walk(out["main"].body) if isinstance(n, IfThenElse)]
    assert [t.condition.script() for t in tests] == ["i_0 * 4 + i_1 < 10"]
    assert_equivalent(mod["main"], out["main"])


def test_alloc_buffer_becomes_allocate_and_decl_buffer():
    mod = mod_of(WITH_SCRATCH)
    out = lower_allocations(mod)
    allocs = [n for n in walk(out["main"].body) if isinstance(n, Allocate)]
    decls = [n for n in walk(out["main"].body) if isinstance(n, DeclBuffer)]
    assert len(allocs) == 1 and len(decls) == 1
    assert allocs[0].buffer_var == decls[0].buffer.data
    assert allocs[0].buffer_var.name == "B_data"
    assert [e.value for e in allocs[0].extents] == [8]
    # every access now goes through the declared buffer
    root = out["main"].body.block
    assert not root.alloc_buffers
    assert_equivalent(mod["main"], out["main"])


def test_lower_blocks_alone_handles_allocations():
    mod = mod_of(WITH_SCRATCH)
    out = lower_blocks(mod)
    assert any(isinstance(n, Allocate) for n in walk(out["main"].body))
    assert_equivalent(mod["main"], out["main"])


def test_match_buffer_is_replaced_by_the_source_region():
    A = tir.decl_buffer((4, 8), "float32", name="A")
    B = tir.decl_buffer((4, 8), "float32", name="B")
    sub = tir.decl_buffer((8,), "float32", name="A_row")
    i, j, vi, vj = tir.Var("i"), tir.Var("j"), tir.Var("vi"), tir.Var("vj")
    a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
    inner = tir.Block(
        [tir.IterVar(tir.Range(0, 4), vi, "DataPar"), tir.IterVar(tir.Range(0, 8), vj, "DataPar")],
        [BufferRegion(A, [tir.Range(vi, 1), tir.Range(0, 8)])],
        [BufferRegion(B, [tir.Range(vi, 1), tir.Range(vj, 1)])],
        "copy",
        tir.BufferStore(B, sub[vj] * 2.0, [vi, vj]),
        match_buffers=[MatchBufferRegion(sub, BufferRegion(A, [tir.Range(vi, 1), tir.Range(0, 8)]))],
    )
    body = tir.For(i, 0, 4, "serial", tir.For(j, 0, 8, "serial",
                                              tir.BlockRealize([i, j], True, inner)))
    f = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})
    out = lower_blocks(IRModule({"main": f}))["main"]
    loads = [n for n in walk(out.body) if isinstance(n, tir.BufferLoad)]
    assert [(ld.buffer.name, [x.script() for x in ld.indices]) for ld in loads] == [("A", ["i", "j"])]
    assert_equivalent(f, out)


def test_init_that_uses_the_blocks_own_scratch_is_rejected():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32")):
    for k in range(4):
        with T.block("acc"):
            vk = T.axis.reduce(4, k)
            S = T.alloc_buffer((1,), "float32")
            with T.init():
                S[0] = T.float32(0)
                B[0] = S[0]
            S[0] = A[vk]
            B[0] = B[0] + S[0]
"""
    with pytest.raises(BuildError, match="block acc: its init uses a buffer the block allocates"):
        lower_allocations(mod_of(src))


def test_passes_leave_their_input_untouched():
    mod = mod_of(ROW_SUM)
    before = mod.script()
    lower_blocks(mod)
    lower_allocations(mod)
    assert mod.script() == before
