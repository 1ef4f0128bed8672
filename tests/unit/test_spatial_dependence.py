"""The lint rule ``spatial dependence`` (``verify(strict=True)``): instances
of a block that differ in spatial iteration variables may not write one
element, nor read one the other writes. TVM accepts such blocks, so the
default ``verify`` does too; the schedules that reorder the instances are
shown to change the result."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun import IRModule, Schedule
from tirfun.analysis.dependence import MAX_INSTANCES, spatial_conflict
from tirfun.analysis.verify import verify
from tirfun.errors import VerifyError
from tirfun.script import from_source

SHIFT = '''
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi + 1] = B[vi] * T.float32(2.0)
'''

SPATIAL_SUM = '''
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = B[vi] + A[vi, vj]
'''

REDUCTION = SPATIAL_SUM.replace('"SS"', '"SR"').replace(
    "            B[vi] = B[vi] + A[vi, vj]",
    "            with T.init():\n                B[vi] = T.float32(0.0)\n            B[vi] = B[vi] + A[vi, vj]")

OWN_ROW = '''
@T.prim_func
def main(B: T.Buffer((4, 2), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi, 0] = B[vi, 1] + T.float32(1.0)
'''

GUARDED = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), S: T.Buffer((1,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            if vi == 0:
                S[0] = A[vi]
'''

SHARED_PER_THREAD_BLOCK = '''
@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64, 16), "float32")):
    S = T.alloc_buffer((16,), "float32", scope="shared")
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("load"):
                vb, vt = T.axis.remap("SS", [bx, tx])
                S[vt] = A[vb, vt] * T.float32(2.0)
        for tx2 in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("store"):
                vb, vt = T.axis.remap("SS", [bx, tx2])
                B[vb, vt] = S[15 - vt] + T.float32(1.0)
'''

MATCHED = '''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            V = T.match_buffer(B[vi], (1,))
            V[0] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi]
'''


def _block(func, name):
    from tirfun.analysis.traversal import blocks
    return next(b for _, b in blocks(func) if b.name_hint == name)


def test_a_block_reading_what_its_neighbour_writes_is_a_lint_naming_both_instances():
    func = from_source(SHIFT)
    assert verify(func) is func  # TVM accepts it
    with pytest.raises(VerifyError) as info:
        verify(func, strict=True)
    message = str(info.value)
    assert message.startswith('spatial dependence in function main, block "B": the instance with vi = 0 '
                              'writes B[1] and the instance with vi = 1 reads it')
    assert "data-parallel iteration variable vi declares them independent" in message
    assert info.value.rule == "spatial dependence" and info.value.names == ("B",)


def test_the_dependence_is_real_a_reorder_changes_the_result():
    func = from_source(SHIFT)
    sch = Schedule(func)
    (i,) = sch.get_loops("B")
    # valid for a spatial variable, as in TVM: even instances first, then odd
    outer, inner = sch.split(i, [None, 2])
    sch.reorder(inner, outer)
    before, after = np.ones(8, "float32"), np.ones(8, "float32")
    tirfun.interp.run(func, before)
    tirfun.interp.run(sch.mod["main"], after)
    assert before.tolist() == [2.0 ** k for k in range(8)]
    assert after.tolist() != before.tolist()


def test_a_sum_over_a_variable_declared_spatial_is_a_lint():
    func = from_source(SPATIAL_SUM)
    verify(func)
    with pytest.raises(VerifyError, match=r'spatial dependence .* vi = 0, vj = 0 writes B\[0\] and the '
                                          r'instance with vi = 0, vj = 1 writes it.* variable vj declares'):
        verify(func, strict=True)


@pytest.mark.parametrize("source", [REDUCTION, OWN_ROW, GUARDED, SHARED_PER_THREAD_BLOCK, MATCHED],
                         ids=["reduction", "own row", "guarded", "shared per thread block", "matched view"])
def test_independent_instances_and_undecided_cases_pass(source):
    func = from_source(source)
    assert verify(func, strict=True) is func


def test_shared_scope_counts_on_the_cpu():
    # without thread bindings a shared buffer is one buffer: every instance
    # of "load" writes S[vt] for each vb
    cpu = SHARED_PER_THREAD_BLOCK.replace('T.thread_binding(64, thread="blockIdx.x")', "range(64)")
    cpu = cpu.replace('T.thread_binding(16, thread="threadIdx.x")', "range(16)")
    with pytest.raises(VerifyError, match=r'spatial dependence .* block "load": the instance with vb = 0, '
                                          r'vt = 0 writes S\[0\] and the instance with vb = 1, vt = 0 writes'):
        verify(from_source(cpu), strict=True)


def test_blocks_too_large_to_enumerate_are_not_judged():
    n = MAX_INSTANCES + 1
    func = from_source(SHIFT.replace("(8,)", f"({n + 1},)").replace("range(7)", f"range({n})")
                       .replace("spatial(7, i)", f"spatial({n}, i)"))
    assert spatial_conflict(_block(func, "B")) is None
    small = from_source(SHIFT)
    assert spatial_conflict(_block(small, "B")).location == (1,)


def test_the_lint_is_part_of_strict_verify_of_a_module():
    mod = IRModule({"main": from_source(SPATIAL_SUM)})
    with pytest.raises(VerifyError, match="spatial dependence"):
        verify(mod, strict=True)


STENCIL_UNDER_A_CONDITION = '''
@T.prim_func
def main(A: T.Buffer((3, 5), "int32"), B: T.Buffer((3, 5), "int32")):
    for i, j in T.grid(3, 5):
        with T.block("block"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi - 1, vj + 1], A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = T.if_then_else(0 < vi and vj < 4, B[vi - 1, vj + 1], 0) + A[vi, vj]
'''


def test_a_read_under_a_condition_counts_where_the_condition_holds():
    # (1, 0) reads B[0, 1], which (0, 1) writes: the condition holds there
    func = from_source(STENCIL_UNDER_A_CONDITION)
    assert verify(func) is func
    with pytest.raises(VerifyError, match=r'spatial dependence .* the instance with vi = 0, vj = 1 writes '
                                          r'B\[0, 1\] and the instance with vi = 1, vj = 0 reads it'):
        verify(func, strict=True)
    # and a reorder, which the spatial variables allow, changes the result
    sch = Schedule(func)
    sch.reorder("j", "i")
    a = np.arange(15, dtype="int32").reshape(3, 5)
    before, after = np.zeros((3, 5), "int32"), np.zeros((3, 5), "int32")
    tirfun.interp.run(func, a, before)
    tirfun.interp.run(sch.mod["main"], a, after)
    assert before.tolist() != after.tolist()


def test_a_condition_that_never_holds_where_instances_meet_is_no_dependence():
    # the read of B[vi - 1, vj + 1] runs only where vi > 2: nowhere
    src = STENCIL_UNDER_A_CONDITION.replace("0 < vi and vj < 4", "2 < vi and vj < 4")
    func = from_source(src)
    assert verify(func, strict=True) is func
