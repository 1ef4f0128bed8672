"""Predicated loads and stores (``predicate=`` of TVM v0.20's BufferLoad and
BufferStore): the spellings TVM has, the text TVM prints, the mistakes."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun.errors import InterpError, NodeError, ParseError, ScheduleError
from tirfun.nodes import Broadcast, BufferLoad, BufferStore, IntImm, Ramp
from tirfun.script import from_source

HEAD = "from tirfun.script import tir as T\n\n"

TAIL = HEAD + '''@T.prim_func
def main(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    for i in range(2):
        B.vstore([T.Ramp(i * 4, 1, 4)], A.vload([T.Ramp(i * 4, 1, 4)], predicate=T.Ramp(i * 4, 1, 4) < T.Broadcast(6, 4)) + T.Broadcast(T.float32(1.0), 4), predicate=T.Ramp(i * 4, 1, 4) < T.Broadcast(6, 4))
'''


def test_a_predicated_store_and_load_print_as_tvm_prints_them():
    func = from_source(TAIL)
    assert func.script() + "\n" == "# from tirfun.script import tir as T\n\n" + TAIL[len(HEAD):]


def test_buffer_store_and_buffer_load_with_a_predicate_are_the_vstore_and_vload():
    text = TAIL.replace(
        "B.vstore([T.Ramp(i * 4, 1, 4)], A.vload([T.Ramp(i * 4, 1, 4)], predicate=",
        "T.buffer_store(B, T.BufferLoad(A, [T.Ramp(i * 4, 1, 4)], predicate=")
    text = text.replace("T.Broadcast(T.float32(1.0), 4), predicate=",
                        "T.Broadcast(T.float32(1.0), 4), [T.Ramp(i * 4, 1, 4)], predicate=")
    assert "T.buffer_store" in text
    assert from_source(text) == from_source(TAIL)


def test_the_tail_lanes_outside_the_buffer_are_not_touched():
    func = from_source(TAIL)
    a = np.arange(6, dtype="float32")
    for run in (tirfun.interp.run, tirfun.build(func)):
        b = np.zeros(6, dtype="float32")
        run(func, a, b) if run is tirfun.interp.run else run(a, b)
        assert b.tolist() == [1, 2, 3, 4, 5, 6]


def test_a_masked_load_lane_is_zero_and_a_masked_store_lane_keeps_its_element():
    func = from_source(HEAD + '''@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    B[0:4] = A.vload([T.Ramp(0, 1, 4)], predicate=T.Shuffle([T.Broadcast(T.bool(True), 2), T.Broadcast(T.bool(False), 2)], [0, 2, 1, 3]))
    C.vstore([T.Ramp(3, -1, 4)], A[0:4], predicate=T.Shuffle([T.Broadcast(T.bool(True), 2), T.Broadcast(T.bool(False), 2)], [0, 2, 1, 3]))
''')
    a = np.array([5, 6, 7, 8], dtype="int32")
    for run in ("interp", "llvm"):
        b = np.full(4, -1, dtype="int32")
        c = np.full(4, -1, dtype="int32")
        if run == "interp":
            tirfun.interp.run(func, a, b, c)
        else:
            tirfun.build(func)(a, b, c)
        assert b.tolist() == [5, 0, 7, 0]
        assert c.tolist() == [-1, 7, -1, 5]


def test_an_unmasked_lane_outside_the_buffer_is_still_an_interp_error():
    func = from_source(TAIL.replace("T.Broadcast(6, 4)) + ", "T.Broadcast(7, 4)) + "))
    with pytest.raises(InterpError, match=r"out-of-bounds load from buffer A at index \(6,\)"):
        tirfun.interp.run(func, np.zeros(6, "float32"), np.zeros(6, "float32"))


@pytest.mark.parametrize("call, message", [
    ("B.vstore([T.Ramp(0, 1, 4)], A[0:4], predicate=T.Broadcast(T.bool(True), 2))",
     "the predicate of a store into B has 2 lanes, but the value has 4"),
    ("T.buffer_store(B, A[0:4], [T.Ramp(0, 1, 4)], predicate=T.Ramp(0, 1, 4))",
     "the predicate of a store into B is a mask of bool lanes, got .* of int32x4"),
    ("B[0:4] = T.BufferLoad(A, [T.Ramp(0, 1, 4)], predicate=T.bool(True))",
     "the predicate of T.BufferLoad has 1 lanes, but the value has 4"),
])
def test_predicate_mistakes(call, message):
    text = HEAD + f'''@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    {call}
'''
    with pytest.raises(ParseError, match=message):
        from_source(text)


def test_nodes_check_their_predicate():
    func = from_source(TAIL)
    a = func.params[0]
    buf = func.buffer_map[a]
    with pytest.raises(NodeError, match="has 2 lanes, but the value has 4"):
        BufferLoad(buf, [Ramp(0, 1, 4)], Broadcast(IntImm("bool", 1), 2))
    with pytest.raises(NodeError, match="mask of bool lanes"):
        BufferStore(buf, 1.0, [0], IntImm("int32", 1))


def test_inlining_a_predicated_store_is_refused():
    func = from_source(HEAD + '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B.vstore([vi], A[vi] * T.float32(2.0), predicate=vi < 3)
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + T.float32(1.0)
''')
    sch = tirfun.Schedule(func)
    with pytest.raises(ScheduleError, match="store"):
        sch.compute_inline(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="predicated"):
        sch.reverse_compute_inline(sch.get_block("C"))


def test_inlining_into_a_masked_vector_load_is_refused_naming_the_load():
    # the masked lanes would compute B where the mask keeps them from reading it
    func = from_source(HEAD + '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2.0)
    for i in range(2):
        with T.block("C"):
            vi = T.axis.spatial(2, i)
            T.reads(B[vi * 4:vi * 4 + 4])
            T.writes(C[vi * 4:vi * 4 + 4])
            C[T.Ramp(vi * 4, 1, 4)] = B.vload([T.Ramp(vi * 4, 1, 4)], predicate=T.Ramp(vi * 4, 1, 4) < T.Broadcast(6, 4))
''')
    sch = tirfun.Schedule(func)
    with pytest.raises(ScheduleError, match=r"compute_inline: block 'B': the buffer B is read by the predicated "
                       r"vector load B\.vload\(\[T\.Ramp\(vi_1 \* 4, 1, 4\)\], predicate=.*; its lanes cannot be "
                       r"inlined one by one"):
        sch.compute_inline(sch.get_block("B"))


def test_get_active_lane_mask_is_llvms_lane_mask_of_fixed_lanes():
    # lane k is on when base + k < limit, read as unsigned, without wrapping
    func = from_source(HEAD + '''@T.prim_func
def main(M: T.Buffer((4,), "bool"), base: T.int32, limit: T.int32):
    M[0:4] = T.get_active_lane_mask("boolx4", base, limit)
''')
    assert 'T.get_active_lane_mask("boolx4", base, limit)' in func.script()
    cases = {(0, 2): [1, 1, 0, 0], (5, 7): [1, 1, 0, 0], (3, 3): [0, 0, 0, 0],
             (2**31 - 2, 2**31 - 1): [1, 0, 0, 0], (-1, 5): [0, 0, 0, 0], (0, -1): [1, 1, 1, 1]}
    rt = tirfun.build(func)
    for (base, limit), lanes in cases.items():
        interpreted, compiled = np.zeros(4, bool), np.zeros(4, bool)
        tirfun.interp.run(func, interpreted, base, limit)
        rt(compiled, base, limit)
        assert interpreted.astype(int).tolist() == lanes, (base, limit)
        assert compiled.tolist() == interpreted.tolist()
