"""annotate_buffer_access and unsafe_hide_buffer_access: the declared
regions change, the program's meaning does not, and every error."""

import copy

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

SOURCE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), Idx: T.Buffer((8,), "int32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[Idx[vi] % 8, vj] * T.float32(2)
"""


def mod_of(source=SOURCE) -> IRModule:
    return IRModule({"main": from_source(source)})


def block_of(mod):
    return mod["main"].body.block.body.body.body.block


def test_schedule_annotate_buffer_access_calls_the_function_with_the_iteration_variables():
    mod = mod_of()
    sch = Schedule(mod)
    seen = []

    def ranges(vi, vj):
        seen.extend([vi.name, vj.name])
        return [(0, 8), (vj, vj + 1)]

    sch.annotate_buffer_access("B", 0, "read", ranges)
    assert seen == ["vi", "vj"]
    block = block_of(sch.mod)
    assert "A[0:8, vj]" in sch.mod["main"].script()
    assert list(block.annotations["explicit_read_region"]) == [0]
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    a = np.ones((8, 8), "float32")
    b = np.zeros((8, 8), "float32")
    tirfun.build(sch.mod, target="llvm")(a, np.arange(8, dtype="int32"), b)
    assert (b == 2).all()


def test_annotating_twice_records_the_index_once():
    mod = mod_of()
    first = R.annotate_buffer_access("B", 1, "read", [(0, 8)])
    out = (first >> R.annotate_buffer_access("B", 1, "read", [("vi", 8)]))(mod)
    assert list(block_of(out).annotations["explicit_read_region"]) == [1]
    assert_equivalent(mod["main"], out["main"])


def test_annotating_a_write_region_and_replaying_the_trace():
    mod = mod_of()
    sch = Schedule(mod)
    sch.annotate_buffer_access("B", 0, "write", lambda vi, vj: [vi, (0, 8)])
    assert list(block_of(sch.mod).annotations["explicit_write_region"]) == [0]
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod


def test_unsafe_hide_buffer_access_removes_regions():
    mod = mod_of()
    snapshot = copy.deepcopy(mod)
    out = R.unsafe_hide_buffer_access("B", "read", [1, 1])(mod)
    assert [r.buffer.name for r in block_of(out).reads] == ["A"]
    assert mod == snapshot
    out = R.unsafe_hide_buffer_access("B", "write", [0])(mod)
    assert list(block_of(out).writes) == []
    assert_equivalent(mod["main"], out["main"])


def raises(cls, rewrite, message, mod=None):
    mod = mod or mod_of()
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    assert type(info.value) is cls
    assert info.value.summary == message
    assert rewrite.violations(mod)


def test_buf_type_error():
    raises(R.BufTypeError, R.annotate_buffer_access("B", 0, "readwrite", ["vi", "vj"]),
           "annotate_buffer_access: block 'B': the buffer type must be 'read' or 'write', got 'readwrite'")
    raises(R.BufTypeError, R.unsafe_hide_buffer_access("B", 0, [0]),
           "unsafe_hide_buffer_access: block 'B': the buffer type must be 'read' or 'write', got 0")


def test_buffer_index_out_of_range_error():
    raises(R.BufferIndexOutOfRangeError, R.annotate_buffer_access("B", 2, "read", ["vi", "vj"]),
           "annotate_buffer_access: block 'B': buffer_index 2 does not index the block's 2 read region(s)")
    raises(R.BufferIndexOutOfRangeError, R.annotate_buffer_access("B", "0", "write", ["vi", "vj"]),
           "annotate_buffer_access: block 'B': buffer_index '0' does not index the block's 1 write "
           "region(s)")


def test_invalid_region_error():
    raises(R.InvalidRegionError, R.annotate_buffer_access("B", 0, "read", ["vi"]),
           "annotate_buffer_access: block 'B': the buffer A has 2 dimension(s), so the region needs as "
           "many ranges, got 1")
    raises(R.InvalidRegionError, R.annotate_buffer_access("B", 0, "read", ["vi", 1.5]),
           "annotate_buffer_access: block 'B': range 1 of the region is 1.5; each is an integer "
           "expression or a (begin, end) pair of them")
    raises(R.InvalidRegionError, R.annotate_buffer_access("B", 0, "read", ["vi", "i"]),
           "annotate_buffer_access: block 'B': range 1 of the region is 'i'; each is an integer "
           "expression or a (begin, end) pair of them")
    raises(R.InvalidRegionError, R.annotate_buffer_access("B", 0, "read", ["vi", (0, 4, 8)]),
           "annotate_buffer_access: block 'B': range 1 of the region has 3 values; a range is one index "
           "or a (begin, end) pair")
    from tirfun.nodes import Var
    raises(R.InvalidRegionError, R.annotate_buffer_access("B", 0, "read", ["vi", Var("i")]),
           "annotate_buffer_access: block 'B': range 1 of the region uses i, which is not defined at the "
           "block")


def test_invalid_index_error():
    raises(R.InvalidIndexError, R.unsafe_hide_buffer_access("B", "read", [0, 2]),
           "unsafe_hide_buffer_access: block 'B': the buffer indices must be ints between 0 and 1 for the "
           "block's 2 read region(s), got 2")
    raises(R.InvalidIndexError, R.unsafe_hide_buffer_access("B", "read", 0),
           "unsafe_hide_buffer_access: block 'B': the buffer indices must be a list of ints, got 0")


def test_schedule_refuses_a_gen_new_ranges_that_is_not_a_function():
    sch = Schedule(mod_of())
    with pytest.raises(R.InvalidArgumentError):
        sch.annotate_buffer_access("B", 0, "read", [(0, 8), (0, 8)])
    assert sch.mod == mod_of()
