"""cache_read and cache_write: results as TVM v0.20 gives them, every error
class with its message, and the cached programs built and run."""

import re

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.analysis.traversal import stmt_nodes, walk, walk_stmts
from tirfun.nodes import Block, IRModule
from tirfun.schedule import Schedule
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent
from corner_sources import (
    CONSTANT_TABLE, COPY_AND_READER_UNDER_ONE_IF, ELEMENTWISE, GUARDED_DIVISION, LOOSE_READ, MOVING_DOMAIN,
    READ_BEFORE_WRITE, TWO_STAGES, UNDER_AN_IF,
)

SHARED_LOOP = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""

TWO_READERS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + T.float32(1)
"""

PARTIAL = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi + 4] = A[vi + 4] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi + 4]
"""

REDUCTION = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = T.float32(0)
            D[vi] = D[vi] + A[vi, vk]
"""

IN_PLACE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
"""

STRIDED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi * 2] = A[vi]
"""

MASKED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i % 2 == 0)
            B[vi] = A[vi]
"""

SPLIT_TAIL = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i_0, i_1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < 10)
            B[vi] = A[vi] * T.float32(3)
"""

TWO_WRITERS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(4):
        with T.block("B1"):
            vi = T.axis.spatial(4, i)
            B[vi + 4] = A[vi + 4]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""

# the second writer reads the buffer too: a copy for it would be read by nothing
TWO_WRITERS_ONE_READING = TWO_WRITERS.replace("B[vi + 4] = A[vi + 4]", "B[vi + 4] = A[vi + 4] + B[vi]")

TWO_WRITERS_IN_ONE_LOOP = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B0"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
        with T.block("B1"):
            vi = T.axis.spatial(4, i)
            B[vi + 4] = A[vi + 4]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""

UNCOVERED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""

# A is read before block A writes it and after
READ_AROUND_WRITE = READ_BEFORE_WRITE + """    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * 2.0
"""


def test_cache_read_of_a_buffer_read_before_its_writer_fills_the_cache_first():
    # TVM's in-place pattern (copy in, compute, copy out): the readers see
    # what the buffer holds on entry, and so does a cache filled first
    mod = IRModule({"main": from_source(READ_BEFORE_WRITE)})
    out = R.cache_read("C", 0, "local")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    first = out["main"].body.block.body.seq[0].body.block
    assert first.name_hint == "A_local"
    # and with the consumer named, as TVM's test does
    assert_equivalent(mod["main"], R.cache_read("C", 0, "local", ["C"])(mod)["main"])


NESTED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    with T.block("outer"):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi]
"""


# a second block under "outer" reads A too: B alone cannot be redirected
# without outer's regions naming both buffers
NESTED_TWICE = NESTED.replace("""                B[vi] = A[vi]
""", """                B[vi] = A[vi]
        for i in range(8):
            with T.block("B2"):
                vi = T.axis.spatial(8, i)
                B[vi] = B[vi] + A[vi]
""")


def mod_of(source: str) -> IRModule:
    return IRModule({"main": from_source(source)})


def check(before: IRModule, after: IRModule) -> None:
    """The result verifies, means what the input means, and builds to it."""
    verify(after)
    assert_equivalent(before["main"], after["main"])
    func = after["main"]
    rt = tirfun.build(after, target="llvm")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(d.value) for d in func.buffer_map[p].shape]).astype("float32")
            for p in func.params]
    expected = [a.copy() for a in args]
    tirfun.interp.run(func, *expected)
    rt(*args)
    for x, y in zip(expected, args):
        assert x.tobytes() == y.tobytes()


# -- results as TVM gives them ---------------------------------------------------------

def test_cache_read_of_an_intermediate_goes_between_writer_and_reader():
    mod = mod_of(TWO_STAGES)
    sch = Schedule(mod)
    block = sch.cache_read("C", 0, "shared")
    assert block == R.BlockRef("B_shared", "main")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_shared[v0, v1] = B[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_shared[vi, vj] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    assert 'scope="shared"' in sch.mod["main"].script()
    check(mod, sch.mod)


def test_cache_read_inside_a_shared_loop_copies_one_row_into_a_full_sized_cache():
    mod = mod_of(SHARED_LOOP)
    sch = Schedule(mod)
    sch.cache_read("C", 0, "local")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_local = T.alloc_buffer((16, 16), scope="local")
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(1, 16):
            with T.block("B_local"):
                v0 = T.axis.spatial(16, i + ax0)
                v1 = T.axis.spatial(16, ax1)
                B_local[v0, v1] = B[v0, v1]
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


def test_cache_read_in_the_scope_block_is_compact_and_rebased():
    # the copy reads at the region's start plus the variable (4 + v0), as TVM writes it
    mod = mod_of(PARTIAL)
    sch = Schedule(mod)
    sch.cache_read("C", 0, "shared")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,))
    B_shared = T.alloc_buffer((8,), scope="shared")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi + 4] = A[vi + 4] * T.float32(2)
    for ax0 in range(8):
        with T.block("B_shared"):
            v0 = T.axis.spatial(8, ax0)
            B_shared[v0] = B[4 + v0]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B_shared[vi]
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


def test_cache_read_with_consumer_blocks_redirects_only_those():
    mod = mod_of(TWO_READERS)
    sch = Schedule(mod)
    sch.cache_read("C", 0, "local", consumer_blocks=["C"])
    text = sch.mod["main"].script()
    assert "B[vi] = A[vi] * T.float32(2.0)" in text
    assert "C[vi_1] = A_local[vi_1] + T.float32(1.0)" in text
    check(mod, sch.mod)
    # without consumer_blocks every reader is redirected, whichever block was named
    sch = Schedule(mod)
    sch.cache_read("C", 0, "local")
    assert "A[vi]" not in sch.mod["main"].script().split('with T.block("B")')[1]
    check(mod, sch.mod)


def test_cache_write_of_a_reduction_redirects_init_and_update():
    mod = mod_of(REDUCTION)
    sch = Schedule(mod)
    assert sch.cache_write("D", 0, "local") == R.BlockRef("D_local", "main")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8,), "float32")):
    D_local = T.alloc_buffer((8,), scope="local")
    for i, k in T.grid(8, 8):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D_local[vi] = T.float32(0)
            D_local[vi] = D_local[vi] + A[vi, vk]
    for ax0 in range(8):
        with T.block("D_local"):
            v0 = T.axis.spatial(8, ax0)
            D[v0] = D_local[v0]
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


def test_cache_write_in_a_shared_loop_goes_before_the_reader():
    mod = mod_of(SHARED_LOOP)
    sch = Schedule(mod)
    sch.cache_write("B", 0, "local")
    text = sch.mod["main"].script()
    assert text.index('T.block("B_local")') < text.index('T.block("C")')
    assert "v0 = T.axis.spatial(16, i + ax0)" in text
    check(mod, sch.mod)


def test_cache_write_with_consumer_blocks_lets_them_read_the_cache():
    mod = mod_of(TWO_STAGES)
    sch = Schedule(mod)
    sch.cache_write("B", 0, "local", consumer_blocks=["C"])
    text = sch.mod["main"].script()
    assert "C[vi_1, vj_1] = B_local[vi_1, vj_1] + T.float32(1.0)" in text
    # with no other reader, the copy back goes at the end of the scope
    assert text.index('T.block("C")') < text.index('T.block("B_local")')
    check(mod, sch.mod)


def test_cache_write_after_a_non_dividing_split_copies_only_the_domain():
    mod = mod_of(SPLIT_TAIL)
    sch = Schedule(mod)
    sch.cache_write("B", 0, "global")
    text = sch.mod["main"].script()
    assert "for ax0 in range(10):" in text
    check(mod, sch.mod)


def test_buffer_arguments_as_buffer_and_name_become_indices_in_the_trace():
    mod = mod_of(TWO_STAGES)
    buf = mod["main"].body.block.alloc_buffers[0]
    for arg in (buf, "B"):
        sch = Schedule(mod)
        sch.cache_read("C", arg, "shared")
        assert sch.trace.rewrites[0].read_buffer_index == 0
        assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    # the records take them too
    assert R.cache_read("C", buf, "shared")(mod) == R.cache_read("C", 0, "shared")(mod)
    assert R.cache_write("B", "B", "local")(mod) == R.cache_write("B", 0, "local")(mod)


def test_scope_names_are_sanitised_and_fresh():
    mod = mod_of(TWO_READERS)
    sch = Schedule(mod)
    assert sch.cache_read("B", 0, "shared.dyn", consumer_blocks=["B"]) == R.BlockRef("A_shared_dyn", "main")
    assert sch.cache_read("C", 0, "shared.dyn", consumer_blocks=["C"]) == R.BlockRef("A_shared_dyn_1", "main")
    text = sch.mod["main"].script()
    assert 'A_shared_dyn = T.alloc_buffer((8,), scope="shared.dyn")' in text
    assert 'A_shared_dyn_1 = T.alloc_buffer((8,), scope="shared.dyn")' in text
    check(mod, sch.mod)


@pytest.mark.parametrize("scope", ["global", "shared", "local", "shared.dyn", ""])
def test_every_cpu_scope_builds_and_runs(scope):
    mod = mod_of(TWO_STAGES)
    out = (R.cache_read("C", 0, scope) >> R.cache_write("C", 0, scope))(mod)
    check(mod, out)
    assert_structural_equal(from_source(out["main"].script()), out["main"])


def test_the_trace_replays_as_python():
    mod = mod_of(TWO_READERS)
    sch = Schedule(mod)
    sch.cache_read("C", 0, "local", consumer_blocks=[sch.get_block("C")])
    sch.cache_write("B", 0, "shared")
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod


# -- every error, with its message ------------------------------------------------------

CASES = [
    (TWO_STAGES, R.cache_read("C", 0, "register"), R.InvalidStorageScopeError,
     "cache_read: argument storage_scope: the storage scope 'register' is invalid"),
    (TWO_STAGES, R.cache_read("C", 3, "shared"), R.BufferIndexOutOfRangeError,
     "cache_read: block 'C': the block has 1 read regions, so read_buffer_index 3 is out of range"),
    (TWO_STAGES, R.cache_write("C", -1, "local"), R.BufferIndexOutOfRangeError,
     "cache_write: block 'C': the block has 1 write regions, so write_buffer_index -1 is out of range"),
    (TWO_STAGES, R.cache_read("C", "C", "shared"), R.BufferNotAccessedError,
     "cache_read: block 'C': buffer C is not a read buffer of the block: it is a write buffer of the "
     "block, not a read buffer"),
    (TWO_STAGES, R.cache_write("C", "A", "shared"), R.BufferNotAccessedError,
     "cache_write: block 'C': buffer A is not a write buffer of the block: the block does not write it"),
    (TWO_STAGES, R.cache_read("C", 0.5, "shared"), R.InvalidArgumentError,
     "cache_read: block 'C': the read buffer index must be an int, a Buffer or a buffer name, got 0.5"),
    (TWO_STAGES, R.cache_read("root", 0, "shared"), R.BufferIndexOutOfRangeError,
     "cache_read: block 'root': the block has 0 read regions"),
    (TWO_WRITERS_ONE_READING, R.cache_read("B1", "B", "shared"), R.NotSingleWriteBlockError,
     "cache_read: buffer B: the buffer is expected to be written by a single block of the scope, but 2 "
     "blocks write it"),
    (TWO_WRITERS, R.cache_write("B0", 0, "shared"), R.NotSingleWriteBlockError,
     "cache_write: buffer B: the buffer is expected to be written by a single block of the scope, or by block "
     "'B0' after all the others, but 2 blocks write it and 'B1' runs last"),
    (TWO_WRITERS_IN_ONE_LOOP, R.cache_write("B1", 0, "shared"), R.NotSingleWriteBlockError,
     "cache_write: buffer B: blocks 'B0' and 'B1' both write the buffer in a loop they share: the copy back "
     "of the cache would not keep the order of their writes"),
    (UNCOVERED, R.cache_read("C", 0, "shared"), R.NotRegionCoverError,
     "cache_read: block 'root': the region cover of the scope is not complete: block 'C' reads elements of "
     "buffer B that the blocks writing it before do not write"),
    (NESTED_TWICE, R.cache_read("C", 0, "shared", ["B"]), R.ConsumerNotInScopeError,
     "cache_read: block 'B': the consumer block is not in the scope of block 'root', where the cache is made, "
     "nor the only user of the buffer in the block of the scope around it"),
    (READ_AROUND_WRITE, R.cache_read("C", 0, "shared"), R.CacheStageOrderError,
     "cache_read: block 'C': the block reads buffer A before the cache of it is filled"),
    (TWO_STAGES, R.cache_write("B", 0, "local", ["C", "B"]), R.CacheStageOrderError,
     "cache_write: block 'B': the consumer block runs before block 'B' writes buffer B"),
    (IN_PLACE, R.reindex_cache_write("B", 0, "local", lambda vi: (vi,)), R.CacheWriteReadBeforeWriteError,
     "reindex_cache_write: block 'B': the block reads B[vi] before writing that element itself; the cache "
     "would be read uninitialised"),
    (UNDER_AN_IF, R.reindex_cache_write("B", 0, "local", lambda vi: (vi,)), R.CacheWritePartialError,
     "reindex_cache_write: block 'B': the block may not write every element of buffer B that the copy back "
     "would copy: it runs under the condition i % 2 == 0, which may skip elements"),
]


@pytest.mark.parametrize("source, rewrite, cls, message", CASES,
                         ids=[f"{c[2].__name__}-{k}" for k, c in enumerate(CASES)])
def test_each_error_class_with_its_message(source, rewrite, cls, message):
    mod = mod_of(source)
    with pytest.raises(ScheduleError) as info:
        rewrite(mod)
    assert type(info.value) is cls
    if message is not None:
        assert str(info.value).split("\n")[0].startswith(message), str(info.value)
    assert type(rewrite.violations(mod)[0]) is cls


def test_root_block_errors_when_it_reads():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("root"):
        T.reads(A[0:8])
        T.writes(B[0:8])
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
"""
    mod = mod_of(src)
    with pytest.raises(R.NoScopeBlockError, match="cache_read: block 'root': the block has no enclosing block"):
        R.cache_read("root", 0, "shared")(mod)


def test_the_input_module_is_untouched_on_error_and_success():
    mod = mod_of(TWO_STAGES)
    text = mod["main"].script()
    R.cache_read("C", 0, "shared")(mod)
    with pytest.raises(ScheduleError):
        R.cache_read("C", 9, "shared")(mod)
    assert mod["main"].script() == text


# -- reindex ------------------------------------------------------------------------------

TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""

MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    for i, j, k in T.grid(4, 6, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def test_reindex_of_a_reduction_read_keeps_only_the_iteration_variables_used():
    mod = mod_of(MATMUL)
    sch = Schedule(mod)
    # the copy is named after the buffer it writes, B_reindex, as TVM names it
    assert sch.reindex("C", ("read", 1)) == R.BlockRef("B_reindex_reindex", "main")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    B_reindex = T.alloc_buffer((6, 8))
    for ax0, ax1 in T.grid(6, 8):
        with T.block("B_reindex_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_reindex[v0, v1] = B[v1, v0]
    for i, j, k in T.grid(4, 6, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B_reindex[vj, vk]
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


def test_reindex_of_a_reduction_write_copies_back_after_the_nest():
    mod = mod_of(MATMUL)
    sch = Schedule(mod)
    assert sch.reindex("C", "C") == R.BlockRef("C_reindex", "main")
    text = sch.mod["main"].script()
    assert text.index('T.block("C")') < text.index('T.block("C_reindex")')
    assert "C[v0, v1] = C_reindex[v0, v1]" in text
    assert sch.trace.rewrites[0].buffer == ("write", 0)
    check(mod, sch.mod)


def test_reindex_copies_are_the_checked_nodes():
    # the block and the scope's block are copied with their new parts,
    # the nodes above them too: building every node of the result again
    # gives the same function, of the same hash
    import attrs
    from tirfun.analysis.traversal import map_children

    def fresh(node):
        return map_children(node, fresh) if attrs.has(type(node)) else node

    for buffer in [("read", 0), ("read", 1), ("write", 0)]:
        out = R.reindex("C", buffer)(mod_of(MATMUL))["main"]
        again = fresh(out)
        assert again == out and hash(again) == hash(out)


SPLIT_NEST = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        for j in range(2):
            with T.block("B"):
                vi = T.axis.spatial(8, i * 2 + j)
                B[vi] = A[vi]
        with T.block("C"):
            vk = T.axis.spatial(4, i)
            B[vk] = B[vk]
"""

GUARDED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi > 0, A[vi - 1], T.float32(0))
"""

TWO_INDICES = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi] = A[vi] + A[vi + 1]
"""

OUTER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            with T.block("B"):
                vj = T.axis.spatial(8, vi)
                B[vj] = A[vj]
"""

REINDEX_CASES = [
    (TRANSPOSE, R.reindex("B", ("read", 5)), R.BufferIndexOutOfRangeError,
     "reindex: block 'B': the block has 1 read regions, so read_buffer_index 5 is out of range"),
    (TRANSPOSE, R.reindex("B", "C"), R.BufferNotAccessedError,
     "reindex: block 'B': buffer C is neither read nor written by the block"),
    (TRANSPOSE, R.reindex("B", ("both", 0)), R.InvalidArgumentError,
     "reindex: block 'B': the buffer must be (\"read\" or \"write\", index), a Buffer or a buffer name"),
    (OUTER, R.reindex("outer", ("read", 0)), R.NotLeafBlockError,
     "reindex: block 'outer': the block is not a leaf block"),
    (TWO_INDICES, R.reindex("B", ("read", 0)), R.InvalidBufferAccessError,
     "reindex: block 'B': buffer A should be accessed with the same indices everywhere in the block"),
    (SPLIT_NEST, R.reindex("B", ("read", 0)), R.ReindexNotChainError,
     "reindex: block 'B': the block must sit under a chain of loops"),
    (IN_PLACE, R.reindex("B", ("read", 0)), R.ReindexReadWrittenError,
     "reindex: block 'B': the block also writes buffer B"),
    (GUARDED, R.reindex("B", ("read", 0)), R.ReindexOutOfBoundsError,
     "reindex: block 'B': the index vi - 1 of buffer A is not provably inside the buffer"),
    (GUARDED_DIVISION, R.reindex("B", ("read", 0)), R.ReindexUnsafeIndexError,
     "reindex: block 'B': the index of buffer A divides by vi - 3, which is not provably nonzero over the "
     "whole domain of the iteration variables, where the copy evaluates it"),
    (GUARDED_DIVISION, R.reindex_cache_read("B", 0, "local", lambda vi: (vi,)), R.ReindexUnsafeIndexError,
     "reindex_cache_read: block 'B': the index of buffer A divides by vi - 3, which is not provably nonzero"),
    (IN_PLACE, R.reindex("B", ("write", 0)), R.CacheWriteReadBeforeWriteError,
     "reindex: block 'B': the block reads B[vi] before writing that element itself"),
    (MASKED, R.reindex("B", ("write", 0)), R.CacheWritePartialError,
     "reindex: block 'B': the block may not write every element of the reindexed copy of B: it has the "
     "predicate"),
    (STRIDED, R.reindex("B", ("write", 0)), R.CacheWritePartialError,
     "reindex: block 'B': the block may not write every element of the reindexed copy of B: its indices are "
     "not distinct iteration variables"),
]


@pytest.mark.parametrize("source, rewrite, cls, message", REINDEX_CASES,
                         ids=[f"{c[2].__name__}-{k}" for k, c in enumerate(REINDEX_CASES)])
def test_each_reindex_error_with_its_message(source, rewrite, cls, message):
    test_each_error_class_with_its_message(source, rewrite, cls, message)


# -- cache_inplace ---------------------------------------------------------------------

def test_cache_inplace_returns_both_copies_and_keeps_meaning():
    mod = mod_of(IN_PLACE)
    sch = Schedule(mod)
    blocks = sch.cache_inplace("B", "B", "local")
    assert blocks == [R.BlockRef("B_local", "main"), R.BlockRef("B_local_1", "main")]
    check(mod, sch.mod)
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod


IN_PLACE_ONCE = """
@T.prim_func
def main(B: T.Buffer((64,), "float32")):
    for i0 in range(LOOP):
        with T.block("scale"):
            T.reads(B[0:64])
            T.writes(B[0:64])
            for j in range(64):
                B[j] = B[j] * T.float32(2) + T.float32(1)
"""


def test_cache_read_of_the_copy_in_of_cache_inplace_fills_the_cache_first():
    # the copy in reads B before the copy out writes it, in a loop of one
    # iteration they share: it reads what B holds on entry, as a cache
    # filled before the loop does (TVM's result for this schedule)
    mod = mod_of(IN_PLACE_ONCE.replace("LOOP", "1"))
    sch = Schedule(mod)
    copy_in, copy_out = sch.cache_inplace("scale", 0, "local")
    sch.cache_read(copy_in, 0, "global", [copy_in])
    sch.cache_write(copy_out, 0, "global")
    expected = from_source("""
@T.prim_func
def main(B: T.Buffer((64,), "float32")):
    B_local = T.alloc_buffer((64,), scope="local")
    B_global = T.alloc_buffer((64,))
    B_global_1 = T.alloc_buffer((64,))
    for ax0_2 in range(64):
        with T.block("B_global"):
            v0_2 = T.axis.spatial(64, ax0_2)
            B_global[v0_2] = B[v0_2]
    for i0 in range(1):
        for ax0 in range(64):
            with T.block("B_local"):
                v0 = T.axis.spatial(64, ax0)
                B_local[v0] = B_global[v0]
        with T.block("scale"):
            T.reads(B_local[0:64])
            T.writes(B_local[0:64])
            for j in range(64):
                B_local[j] = B_local[j] * T.float32(2) + T.float32(1)
        for ax0_1 in range(64):
            with T.block("B_local_1"):
                v0_1 = T.axis.spatial(64, ax0_1)
                B_global_1[v0_1] = B_local[v0_1]
    for ax0_3 in range(64):
        with T.block("B_global_1"):
            v0_3 = T.axis.spatial(64, ax0_3)
            B[v0_3] = B_global_1[v0_3]
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


def test_cache_read_of_the_copy_in_of_cache_inplace_in_a_loop_of_two_iterations_is_refused():
    # from the second iteration on the copy in reads what the copy out
    # wrote: a cache filled before the loop would not hold it
    sch = Schedule(mod_of(IN_PLACE_ONCE.replace("LOOP", "2")))
    copy_in, _ = sch.cache_inplace("scale", 0, "local")
    (err,) = R.cache_read(copy_in, 0, "global", [copy_in]).violations(sch.mod)
    assert isinstance(err, R.CacheStageOrderError)


SHIFT_IN_PLACE = """
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi + 1] = B[vi] * T.float32(2)
"""

INPLACE_CASES = [
    (IN_PLACE, R.cache_inplace("B", 0, "tmem"), R.InvalidStorageScopeError,
     "cache_inplace: argument storage_scope: the storage scope 'tmem' is invalid"),
    (IN_PLACE, R.cache_inplace("B", 2, "local"), R.BufferIndexOutOfRangeError,
     "cache_inplace: block 'B': the block has 2 read regions, so read_buffer_index 2 is out of range"),
    (TWO_STAGES, R.cache_inplace("C", 0, "local"), R.NotReadWriteError,
     "cache_inplace: block 'C': the block does not both read and write buffer B"),
    (UNCOVERED, R.cache_inplace("C", 0, "local"), R.NotRegionCoverError,
     "cache_inplace: block 'root': the region cover of the scope is not complete"),
    (SHIFT_IN_PLACE, R.cache_inplace("B", 0, "local"), R.CacheWritePartialError,
     "cache_inplace: block 'B': the region of B the block writes, B[vi + 1], does not lie within the region "
     "it reads, B[vi]"),
]


@pytest.mark.parametrize("source, rewrite, cls, message", INPLACE_CASES,
                         ids=[f"{c[2].__name__}-{k}" for k, c in enumerate(INPLACE_CASES)])
def test_each_cache_inplace_error_with_its_message(source, rewrite, cls, message):
    test_each_error_class_with_its_message(source, rewrite, cls, message)


# -- reindex_cache_read / reindex_cache_write ----------------------------------------------

def test_reindex_cache_read_with_a_lambda_in_a_shared_loop():
    mod = mod_of(SHARED_LOOP)
    sch = Schedule(mod)
    assert sch.reindex_cache_read("C", 0, "shared", lambda vi, vj: (vj, vi)) == R.BlockRef("B_shared", "main")
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_shared = T.alloc_buffer((16, 16), scope="shared")
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j_2 in range(16):
            with T.block("B_shared"):
                vi_2, vj_2 = T.axis.remap("SS", [i, j_2])
                B_shared[vj_2, vi_2] = B[vi_2, vj_2]
        for j_1 in range(16):
            with T.block("C"):
                vi_1, vj_1 = T.axis.remap("SS", [i, j_1])
                C[vi_1, vj_1] = B_shared[vj_1, vi_1] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    namespace: dict = {}
    exec(sch.trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod


def test_reindex_cache_write_of_a_reduction_with_a_flattening_map():
    mod = mod_of(MATMUL)
    sch = Schedule(mod)
    sch.reindex_cache_write("C", 0, "local", lambda vi, vj, vk: (vi * 6 + vj,))
    text = sch.mod["main"].script()
    assert 'C_local = T.alloc_buffer((24,), scope="local")' in text
    assert "C_local[vi * 6 + vj] = C_local[vi * 6 + vj] + A[vi, vk] * B[vk, vj]" in text
    check(mod, sch.mod)


INT64 = """
@T.prim_func
def main(A: T.Buffer((T.int64(4), T.int64(4)), "float32"), B: T.Buffer((T.int64(4), T.int64(4)), "float32")):
    for i, j in T.grid(T.int64(4), T.int64(4)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
"""


def test_a_lambda_is_traced_with_the_blocks_index_dtype():
    mod = mod_of(INT64)
    sch = Schedule(mod)
    sch.reindex_cache_read("B", 0, "local", lambda a, b: (a, b))
    check(mod, sch.mod)


@pytest.mark.parametrize("extent", [7, 8, 58])
def test_reindex_cache_write_into_part_of_the_cache_keeps_meaning(extent):
    # (v // 4, v % 4) gives each of 7 iterations its own element of a 2 x 4
    # cache, one of which nothing writes; the copy back runs the block's
    # iterations only, so it never reads that element (TVM applies it too)
    src = f"""
@T.prim_func
def main(A: T.Buffer(({extent},), "float32"), B: T.Buffer(({extent},), "float32")):
    for i in range({extent}):
        with T.block("B"):
            vi = T.axis.spatial({extent}, i)
            B[vi] = A[vi] * T.float32(2)
"""
    mod = mod_of(src)
    sch = Schedule(mod)
    sch.reindex_cache_write("B", 0, "local", lambda vi: (vi // 4, vi % 4))
    verify(sch.mod)
    assert [int(d) for d in sch.get(sch.get_block("B")).writes[0].buffer.shape] == [(extent + 3) // 4, 4]
    check(mod, sch.mod)


# the block writes B[v] twice for most v (a triangle of (j, i)): TVM's
# compute_at test read_out_of_bound_after_compute_at
TRIANGLE_WRITE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for j in range(16):
        for i in range(T.min(1, 15 - j) + 1):
            with T.block("B"):
                v = T.axis.spatial(16, j + i)
                T.where(j + i < 16)
                B[v] = A[v] * T.float32(2)
"""

# every 16th element of each row (TVM's elementwise_not_affine after a fuse)
STRIDED_WRITE = """
@T.prim_func
def main(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4, 128), "float32")):
    for i, f in T.grid(4, 8):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vl = T.axis.spatial(128, f * 16)
            B[vi, vl] = A[vi, vl] * T.float32(2)
"""

# tiles of 6 rows at a stride of 5 that overlap (TVM's non_uniform_tiled_conv)
OVERLAPPING_TILES = """
@T.prim_func
def main(A: T.Buffer((24,), "float32"), B: T.Buffer((24,), "float32")):
    for o, k in T.grid(5, 6):
        with T.block("B"):
            v = T.axis.spatial(24, o * 5 + k)
            T.where(o * 5 + k < 24)
            B[v] = A[v] + T.float32(1)
"""


@pytest.mark.parametrize("source, index_map", [
    (STRIDED, lambda vi: (vi,)),
    (MASKED, lambda vi: (7 - vi,)),
    (TRIANGLE_WRITE, lambda v: (15 - v,)),
    (STRIDED_WRITE, lambda vi, vl: (vl // 4, vl % 4, vi)),
    (OVERLAPPING_TILES, lambda v: (v // 4, v % 4)),
], ids=["every-other", "predicate", "triangle", "strided", "overlapping-tiles"])
def test_reindex_cache_write_of_a_block_writing_no_dense_box_copies_back_what_it_wrote(source, index_map):
    # the copy back runs the block's own loops, bindings and predicate, so
    # it copies exactly the elements the block wrote into the cache, and
    # leaves the rest of B as it was (TVM drops the predicate, and its copy
    # back of the triangle and the tiles runs past B's end)
    mod = mod_of(source)
    sch = Schedule(mod)
    sch.reindex_cache_write("B", 0, "local", index_map)
    copy = sch.get(sch.get_consumers("B")[0])
    assert copy.writes[0].buffer.name == "B"
    check(mod, sch.mod)


@pytest.mark.parametrize("source, why", [
    (UNDER_AN_IF, "condition"),
    # the store itself is conditional: the copy back would copy what the
    # block never stored (found by the soak, seed 5012)
    ("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            if A[vi] < T.float32(0):
                B[vi] = A[vi]
""", "does not store"),
    ("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    for r in range(n):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
""", "may be zero"),
], ids=["under-an-if", "conditional-store", "repeated-maybe-never"])
def test_reindex_cache_write_whose_copy_back_would_run_instances_the_block_skips_is_refused(source, why):
    with pytest.raises(R.CacheWritePartialError, match=why):
        R.reindex_cache_write("B", 0, "local", lambda vi: (vi,))(mod_of(source))


# TVM's elementwise_symbolic_split: a split of a run-time size into 10 parts
SYMBOLIC_SPLIT_WRITE = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, n))
    B = T.match_buffer(b, (8, n))
    for i, k0, k1 in T.grid(8, 10, (n + 9) // 10):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.spatial(n, k0 * ((n + 9) // 10) + k1)
            T.where(k0 * ((n + 9) // 10) + k1 < n)
            B[vi, vk] = A[vi, vk] * T.float32(2)
"""


def test_reindex_cache_write_keeps_a_predicate_that_reads_a_size():
    # the copy back runs the same loops under the same predicate; n is known
    # wherever the copy is
    mod = mod_of(SYMBOLIC_SPLIT_WRITE)
    sch = Schedule(mod)
    sch.reindex_cache_write("B", 0, "local", lambda vi, vk: (vk, vi))
    verify(sch.mod)
    assert sch.mod.script().count("T.where(") == 2  # the block's and the copy's
    for n in (1, 7, 23):
        assert_equivalent(mod["main"], sch.mod["main"], trials=2, sizes={"n": n})


def test_reindex_cache_write_under_a_predicate_of_a_loop_it_does_not_run_is_refused():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for r, i in T.grid(2, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(r < 1)
            B[vi] = A[vi]
"""
    with pytest.raises(R.ReindexOutOfBoundsError, match="depends on loops the copy does not run"):
        R.reindex_cache_write("B", 0, "local", lambda vi: (vi,))(mod_of(src))


# rows v0 * 2 + v1 over 6 x 4: tiles of four rows overlapping by two, every
# row of 14 written (TVM's test_tir_schedule_reorder overlapped_access)
OVERLAPPED_ROWS = """
@T.prim_func
def main(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
    for v0, v1, v2 in T.grid(6, 4, 4):
        with T.block("block"):
            i = T.axis.spatial(14, v0 * STRIDE + v1)
            j = T.axis.spatial(4, v2)
            T.where(v0 * STRIDE + v1 < 14)
            B[i, j] = A[i, j] + T.float32(1)
"""


@pytest.mark.parametrize("stride, dense", [(1, True), (2, True), (4, True), (5, False)])
def test_cache_write_of_overlapping_tiles_copies_nothing_in_where_they_leave_no_gap(stride, dense):
    # with a stride of at most the tile's four rows every row is written
    # (some twice), so the cache needs no copy of B first; a stride of five
    # skips a row, which keeps its value only through that copy
    mod = mod_of(OVERLAPPED_ROWS.replace("STRIDE", str(stride)))
    after = R.cache_write("block", 0, "shared")(mod)
    writers = [b for b in walk(after["main"]) if isinstance(b, Block)
               and any(w.buffer.name == "B_shared" for w in b.writes)]
    assert len(writers) == (1 if dense else 2)
    check(mod, after)
    if dense:
        # and the region cover reads the overlapping rows as all of them: the
        # block inlines into the copy back (TVM's overlapped_access schedule)
        inlined = R.compute_inline("block")(after)
        assert "B_shared[" not in inlined["main"].script()
        check(mod, inlined)


LARGE_COPY = """
@T.prim_func
def main(A: T.Buffer((127, 130), "float32"), B: T.Buffer((127, 130), "float32")):
    for i, j in T.grid(127, 130):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(3)
"""


@pytest.mark.parametrize("primitive", ["reindex_cache_read", "reindex_cache_write"])
def test_a_split_map_over_a_large_domain_it_does_not_divide_keeps_the_elements_apart(primitive):
    # 127 x 130 points, too many to enumerate; (vj // 4, vj % 4) is
    # one-to-one on the domain widened to 132 columns, so on the 130 too
    mod = mod_of(LARGE_COPY)
    sch = Schedule(mod)
    getattr(sch, primitive)("B", 0, "local", lambda vi, vj: (vi, vj // 4, vj % 4))
    check(mod, sch.mod)


def test_a_map_that_merges_elements_over_a_large_domain_is_refused():
    with pytest.raises(R.IndexMapCollisionError):
        Schedule(mod_of(LARGE_COPY)).reindex_cache_read("B", 0, "local", lambda vi, vj: (vi, vj // 4))


REINDEX_CACHE_CASES = [
    (TWO_INDICES, R.reindex_cache_read("B", 0, "shared", lambda vi: (vi,)), R.NotSinglePointAccessError,
     "reindex_cache_read: block 'B': the region A[vi:vi + 2] the block accesses is not a single point"),
    (TRANSPOSE, R.reindex_cache_read("B", 0, "shared", lambda vi, vj: (vi,)),
     R.ReindexCacheReadWriteNotMatchError,
     "reindex_cache_read: block 'B': the block iteration variable vj appears in [vj, vi] but not in [vi]"),
    (TRANSPOSE, R.reindex_cache_write("B", 0, "shared", lambda vi: (vi,)), R.InvalidArgumentError,
     "reindex_cache_write: block 'B': the index map takes 1 variables, but the block has 2"),
    (TRANSPOSE, R.reindex_cache_write("B", 0, "shared", "not a map"), R.InvalidArgumentError,
     "reindex_cache_write: block 'B': the index map must be a function of the block's iteration variables"),
    (TRANSPOSE, R.reindex_cache_write("B", 0, "shared", lambda vi, vj: (vi - 1, vj)), R.InvalidArgumentError,
     "reindex_cache_write: block 'B': the index map does not map the block's iteration domain to "
     "non-negative"),
    (MATMUL, R.reindex_cache_write("C", 0, "local", lambda vi, vj, vk: (vi + vj,)), R.CacheWritePartialError,
     "reindex_cache_write: block 'C': the block may not write every element of buffer C that the copy back "
     "would copy: the index map does not give every iteration its own element"),
    (IN_PLACE, R.reindex_cache_read("B", 0, "local", lambda vi: (vi,)), R.ReindexReadWrittenError,
     "reindex_cache_read: block 'B': the block also writes buffer B"),
    (IN_PLACE, R.reindex_cache_write("B", 0, "local", lambda vi: (vi,)), R.CacheWriteReadBeforeWriteError,
     "reindex_cache_write: block 'B': the block reads B[vi] before writing that element itself"),
    (SPLIT_TAIL, R.reindex_cache_read("B", 0, "local", lambda vi: (vi,)), None, None),
]


@pytest.mark.parametrize("source, rewrite, cls, message", REINDEX_CACHE_CASES,
                         ids=[f"{getattr(c[2], '__name__', 'applies')}-{k}" for k, c in enumerate(REINDEX_CACHE_CASES)])
def test_each_reindex_cache_error_with_its_message(source, rewrite, cls, message):
    if cls is None:  # a predicate on the loops the copy runs goes with the copy
        mod = mod_of(source)
        out = rewrite(mod)
        assert "T.where(i_0_1 * 4 + i_1_1 < 10)" in out["main"].script()
        check(mod, out)
        return
    test_each_error_class_with_its_message(source, rewrite, cls, message)


def test_reindex_cache_read_before_the_writer_copies_the_values_read():
    # the copy goes at the start of the scope, where it sees what the block sees
    mod = mod_of(READ_BEFORE_WRITE)
    out = R.reindex_cache_read("C", 0, "local", lambda vi: (vi,))(mod)
    assert out["main"].script().index('T.block("A_local")') < out["main"].script().index('T.block("C")')
    check(mod, out)


def test_a_tvm_script_schedules_caches_through_the_compat_layer():
    from tirfun.compat import tvm

    mod = mod_of(TWO_STAGES)
    sch = tvm.tir.Schedule(mod)
    block_c = sch.get_block("C")
    shared = sch.cache_read(block_c, 0, "shared")
    local = sch.cache_write(block_c, 0, "local")
    assert (shared, local) == (R.BlockRef("B_shared", "main"), R.BlockRef("C_local", "main"))
    check(mod, sch.mod)


def test_tvm_style_tiling_with_a_shared_read_and_a_local_accumulator():
    """cache_write then reverse_compute_at, cache_read then compute_at: the
    GPU-style matmul schedule, run on the CPU."""
    mod = mod_of(MATMUL.replace("(4, 8)", "(16, 16)").replace("(8, 6)", "(16, 16)")
                 .replace("(4, 6)", "(16, 16)").replace("T.grid(4, 6, 8)", "T.grid(16, 16, 16)"))
    sch = Schedule(mod)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 4])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(sch.cache_write(c, 0, "local"), j0)
    sch.compute_at(sch.cache_read(c, 0, "shared"), k)
    text = sch.mod["main"].script()
    assert 'A_shared = T.alloc_buffer((16, 16), scope="shared")' in text
    assert 'C_local = T.alloc_buffer((16, 16), scope="local")' in text
    check(mod, sch.mod)


def test_reindex_cache_read_of_a_guarded_read_that_the_copy_would_take_out_of_bounds():
    # pad_einsum's A_pad block reads A only inside A's shape (if_then_else);
    # a reindex cache of that read would copy A over the padded domain
    from tirfun.script import from_source

    src = '''@T.prim_func
def main(A: T.Buffer((3, 1), "float32"), O: T.Buffer((3,), "float32")):
    for i, k in T.grid(3, 1):
        with T.block("O"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                O[vi] = T.float32(0)
            O[vi] = O[vi] + A[vi, vk]'''
    mod = IRModule({"main": from_source(src)})
    padded = R.pad_einsum("O", [4, 2])(mod)
    assert "A_pad" in padded.script()
    from tirfun import Schedule

    sch = Schedule(padded)
    with pytest.raises(R.ReindexOutOfBoundsError, match="not provably inside the buffer"):
        sch.reindex_cache_read("A_pad", 0, "global", lambda v0, v1: (v0, v1))
    assert sch.mod == padded  # nothing changed


def test_reindex_cache_read_of_an_index_dividing_by_a_nonzero_range_keeps_meaning():
    # vi + 1 is at least 1 over the domain: the copy may evaluate it anywhere
    src = GUARDED_DIVISION.replace("40 // (vi - 3)", "40 // (vi + 1)")
    mod = mod_of(src)
    after = R.reindex_cache_read("B", 0, "local", lambda vi: (vi,))(mod)
    assert "A_local" in after.script()
    verify(after)
    assert_equivalent(mod["main"], after["main"])


# two blocks under the loops they share, neither touching what the other writes
SHARED_LOOPS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vj, vi] = A[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("block, buffer", [("C", ("write", 0)), ("B", ("read", 0)), ("C", ("read", 0))])
def test_reindex_of_a_block_beside_others_in_its_innermost_loop_keeps_meaning(block, buffer):
    # TVM's chain: the loops above the block's own are each the only
    # statement of the one above; the innermost may hold others (a block
    # moved there by reverse_compute_at)
    mod = mod_of(SHARED_LOOPS)
    sch = Schedule(mod)
    copy = sch.reindex(block, buffer)
    body = sch.mod["main"].body.block.body
    stages = [s.body.body.block.name_hint if hasattr(s.body.body, "block") else None for s in body.seq]
    assert len(stages) == 2 and stages.index(copy.name) == (0 if buffer[0] == "read" else 1)
    check(mod, sch.mod)


@pytest.mark.parametrize("source, block, buffer, what", [
    # a decomposed reduction: the update accumulates into what the init wrote
    ("""
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("init"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.float32(0)
        for r in range(4):
            with T.block("update"):
                vi, vr = T.axis.remap("SR", [i, r])
                B[vi] = B[vi] + A[vi, vr]
""", "init", ("write", 0), "block 'update', in the loops the block shares with it, writes buffer B"),
    # the copy of X before the loop would precede the block writing it
    ("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("W"):
            vi = T.axis.spatial(8, i)
            X[vi] = A[vi] * T.float32(2)
        with T.block("R"):
            vi = T.axis.spatial(8, i)
            Y[vi] = X[vi] + T.float32(1)
""", "R", ("read", 0), "block 'W', in the loops the block shares with it, writes buffer X"),
], ids=["init-beside-update", "reader-beside-writer"])
def test_reindex_beside_a_block_using_the_buffer_is_refused(source, block, buffer, what):
    # TVM 0.27 reindexes the init of the first and copies its zeros back over
    # the sums the update made
    with pytest.raises(R.ReindexNotChainError, match=re.escape(what)):
        R.reindex(block, buffer)(mod_of(source))


# TVM's test_te_create_primfunc ``tir_slice_with_var_input``: rows 0 to idx of
# an m-row tensor, idx a scalar; that idx <= m is the caller's promise
SLICE_WITH_VAR_INPUT = """
@T.prim_func
def main(var_tensor: T.handle, idx: T.int64, var_slice: T.handle):
    m, n = T.int64(), T.int64()
    tensor = T.match_buffer(var_tensor, (m, n))
    slice = T.match_buffer(var_slice, (idx, n))
    for i, j in T.grid(idx, n):
        with T.block("slice"):
            v_i = T.axis.spatial(idx, i)
            v_j = T.axis.spatial(n, j)
            slice[v_i, v_j] = tensor[v_i, v_j]
"""


@pytest.mark.parametrize("primitive", ["reindex", "reindex_cache_read"])
def test_a_reindexed_read_the_block_makes_at_every_point_is_copied_past_what_is_provable(primitive):
    # v_i < m is not provable, but the block itself reads tensor[v_i, v_j] at
    # every point of the domain, so the copy reads nothing the program did
    # not (TVM applies both)
    mod = mod_of(SLICE_WITH_VAR_INPUT)
    sch = Schedule(mod)
    if primitive == "reindex":
        sch.reindex("slice", ("read", 0))
    else:
        sch.reindex_cache_read("slice", 0, "global", lambda i, j: (i, j // 4, j % 4))
    verify(sch.mod)
    assert "tensor" in sch.get(sch.get_producers("slice")[0]).reads[0].buffer.name
    for rows in (0, 3, 6):
        assert_equivalent(mod["main"], sch.mod["main"], trials=2, sizes={"m": 6, "n": 5, "idx": rows})


@pytest.mark.parametrize("source", [
    # the block runs rows 0 to 3 of a domain of 8: the copy would read A[8:12]
    """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 4]
""",
    # the load is in the branch of a condition only
    """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.Select(vi > 0, A[vi - 1], T.float32(0))
            C[vi] = T.float32(1)
""",
    # under an if of the body
    """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            if vi > 0:
                B[vi] = A[vi - 1]
""",
], ids=["part-of-the-domain", "select", "if"])
def test_a_reindexed_read_past_the_buffer_the_block_does_not_make_everywhere_is_refused(source):
    mod = mod_of(source)
    with pytest.raises(R.ReindexOutOfBoundsError, match="not provably inside the buffer"):
        R.reindex("B", ("read", 0))(mod)


def test_cache_read_under_a_scope_that_declares_more_than_the_buffer_copies_what_is_inside():
    # the partition block declares X's region as the padding stage's loops
    # reach it (past X's last column); the stage reads there only under a guard
    from tirfun import Schedule
    from tirfun.script import from_source
    from tirfun.testing.equivalence import assert_equivalent

    src = '''@T.prim_func
def main(X: T.Buffer((2, 1, 1), "float32"), Y: T.Buffer((2, 1, 2), "float32")):
    P = T.alloc_buffer((2, 1, 2))
    for c, h, w in T.grid(2, 1, 2):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            T.reads(X[vc, vh, vw])
            T.writes(P[vc, vh, vw])
            P[vc, vh, vw] = T.if_then_else(vw < 1, X[vc, vh, vw], T.float32(0))
    for c, h, w in T.grid(2, 1, 2):
        with T.block("Y"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            Y[vc, vh, vw] = P[vc, vh, vw] * T.float32(2)'''
    mod = IRModule({"main": from_source(src)})
    sch = Schedule(R.loop_partition("c", [None, 1])(mod))
    sch.cache_read("pad_c1_partition", 0, "global")
    assert_equivalent(mod["main"], sch.mod["main"])


_PARTITIONED_CHANNELS = '''@T.prim_func
def main(X: T.Buffer((3, 6, 4), "float32"), Y: T.Buffer((3, 6, 4), "float32")):
    for c, h, w in T.grid(3, 6, 4):
        with T.block("Y"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            Y[vc, vh, vw] = X[vc, vh, vw] * T.float32(2)'''


@pytest.mark.parametrize("block", ["Y_h_10", "Y_h_10_partition", "Y_h_11"])
def test_cache_read_in_a_partition_under_outer_loops_copies_into_a_full_sized_cache(block):
    # the scope (an opaque partition block) sits inside loops c_0, c_1, h_0:
    # the region to copy depends on them, so a compact cache would index
    # with them inside the copy block; the cache has X's shape instead and
    # the copy's bindings carry the loops
    mod = IRModule({"main": from_source(_PARTITIONED_CHANNELS)})
    parted = R.Pipeline([R.split("c", [None, 2]), R.split("h", [None, 2]),
                         R.loop_partition("h_1", [None, 1])])(mod)
    after = R.cache_read(block, 0, "shared")(parted)
    verify(after)
    text = after.script()
    assert 'X_shared = T.alloc_buffer((3, 6, 4), scope="shared")' in text
    assert_equivalent(mod["main"], after["main"], trials=2)
    x = np.random.default_rng(0).standard_normal((3, 6, 4)).astype("float32")
    y = np.zeros((3, 6, 4), "float32")
    tirfun.build(after, target="llvm")(x, y)
    np.testing.assert_array_equal(y, x * np.float32(2))


def test_cache_write_in_a_partition_under_outer_loops_copies_back_from_a_full_sized_cache():
    mod = IRModule({"main": from_source(_PARTITIONED_CHANNELS)})
    parted = R.Pipeline([R.split("c", [None, 2]), R.loop_partition("c_1", [None, 1])])(mod)
    after = R.cache_write("Y_c_11", 0, "local")(parted)
    verify(after)
    assert 'Y_local = T.alloc_buffer((3, 6, 4), scope="local")' in after.script()
    assert_equivalent(mod["main"], after["main"], trials=2)


def test_cache_read_of_a_partition_whose_loop_sits_in_another_nest_keeps_meaning():
    # the second nest's loops are i_1, j_1; the partition of j_1 sits under i_1
    src = '''@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 6), "float32")):
    B = T.alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 6):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + B[vi, vj + 2]'''
    mod = IRModule({"main": from_source(src)})
    after = R.cache_read("C_j_10_partition", 0, "global")(R.loop_partition("j_1", [3])(mod))
    verify(after)
    assert_equivalent(mod["main"], after["main"], trials=2)
    tirfun.build(after, target="llvm")


_ROW_SUM = '''@T.prim_func
def main(A: T.Buffer((2, 6), "float32"), S: T.Buffer((2,), "float32")):
    for i, j in T.grid(2, 6):
        with T.block("S"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vj]'''


@pytest.mark.parametrize("rewrite", [
    R.reindex("S_j1", ("write", 0)),
    R.reindex_cache_write("S_j1", 0, "local", lambda vi, vj: (vi,)),
])
def test_caching_the_later_part_of_a_partitioned_reduction_is_refused(rewrite):
    # loop_partition keeps the reduction variable's domain, so the init runs
    # in the first part only: the second part's updates accumulate onto S as
    # the first part left it, which a fresh cache does not hold
    parted = R.loop_partition("j", [2])(IRModule({"main": from_source(_ROW_SUM)}))
    with pytest.raises(R.CacheWriteReadBeforeWriteError,
                       match=r"the block reads S before writing it where the (cache|copy) lives: its reduction "
                             r"variable vj_2 = j1 does not start at 0 over the loops below"):
        rewrite(parted)


@pytest.mark.parametrize("rewrite", [
    R.cache_write("S_j0", 0, "local"),
    R.reindex_cache_write("S_j0", 0, "local", lambda vi, vj: (vi,)),
    # the later part accumulates onto what the first left in S: the cache
    # is filled from S before it (cache_write's fill)
    R.cache_write("S_j1", 0, "local"),
])
def test_caching_a_part_of_a_partitioned_reduction_keeps_meaning(rewrite):
    mod = IRModule({"main": from_source(_ROW_SUM)})
    after = rewrite(R.loop_partition("j", [2])(mod))
    verify(after)
    assert_equivalent(mod["main"], after["main"], trials=2)


_ROW = '''@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)'''


def test_reindex_of_a_write_after_a_split_that_does_not_divide():
    # the split's guard i_0 * 4 + i_1 < 10 keeps out only instances outside
    # vi's domain: every element of the reindexed copy is written (TVM
    # accepts it; cache_write and reindex_cache_write already did)
    mod = IRModule({"main": from_source(_ROW)})
    after = R.Pipeline([R.split("i", [None, 4]), R.reindex("B", ("write", 0))])(mod)
    verify(after)
    assert_equivalent(mod["main"], after["main"], trials=2)
    a = np.arange(10, dtype="float32")
    b = np.zeros(10, "float32")
    tirfun.build(after, target="llvm")(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_reindex_of_a_write_under_a_predicate_that_cuts_the_domain_is_refused():
    src = _ROW.replace("vi = T.axis.spatial(10, i)", "vi = T.axis.spatial(10, i)\n            T.where(i < 7)")
    with pytest.raises(R.CacheWritePartialError, match=r"it has the predicate i < 7"):
        R.reindex("B", ("write", 0))(IRModule({"main": from_source(src)}))


def test_cache_read_copies_what_readers_read_beyond_a_predicated_writer():
    # the writer writes A[0] only (its predicate cuts i = 1); the reader
    # reads A[1], the value A held before: the copy must hold it too (the
    # region cut by the writer's predicate would leave it out)
    src = '''
@T.prim_func
def main(A: T.Buffer((2,), "int16"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(2):
        with T.block("A"):
            vi = T.axis.spatial(2, i)
            T.where(i < 1)
            A[vi] = T.Cast("int16", vi)
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = B[vj] + T.Cast("float32", A[1])
'''
    mod = IRModule({"main": from_source(src)})
    out = R.cache_read("C", 1, "global")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    cache = next(b for b in out["main"].body.block.alloc_buffers if b.name == "A_global")
    assert [int(e) for e in cache.shape] == [2]


# block A writes A[0] only (its predicate); C reads A[1], an input value
PARTLY_WRITTEN = '''@T.prim_func
def main(A: T.Buffer((2,), "int32"), B: T.Buffer((1,), "float32"), C: T.Buffer((1,), "float32")):
    for i in range(2):
        with T.block("A"):
            vi = T.axis.spatial(2, i)
            T.where(i < 1)
            A[vi] = vi * 2
    for j in range(1):
        with T.block("C"):
            vj = T.axis.spatial(1, j)
            C[vj] = B[vj] + T.Cast("float32", A[INDEX])
'''


def test_cache_write_refuses_a_consumer_reading_what_the_block_does_not_write():
    # found by the soak: the cache holds A[0] only, and C, redirected to
    # it, read past its end (TVM lets it read the cache where nothing was stored)
    mod = IRModule({"main": from_source(PARTLY_WRITTEN.replace("INDEX", "1"))})
    with pytest.raises(R.CacheWritePartialError, match=r"consumer block 'C' reads A\[1\], which the block may "
                                                       r"not write; the cache holds only what it writes"):
        R.cache_write("A", 0, "global", ["C"])(mod)
    out = R.cache_write("A", 0, "global")(mod)  # without C, C keeps reading A
    assert_equivalent(mod["main"], out["main"])
    ok = IRModule({"main": from_source(PARTLY_WRITTEN.replace("INDEX", "0"))})
    out = R.cache_write("A", 0, "global", ["C"])(ok)
    assert "A_global[0]" in out["main"].script()
    assert_equivalent(ok["main"], out["main"])


# TVM's reindex tests: a reduction's output named by its name, and an index
# that uses a variable only where its domain makes it a constant
REDUCE_READ_AND_WRITE = '''@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i0, i1, i2 in T.grid(8, 8, 8):
        with T.block("matmul"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            T.reads(C[i, j], A[i, k], B[k, j])
            T.writes(C[i, j])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]
'''


@pytest.mark.parametrize("primitive", ["reindex", "set_axis_separator"])
def test_a_buffer_named_that_the_block_reads_and_writes_is_its_write(primitive):
    # TVM's name lookup goes over the reads, then the writes, keeping the last
    mod = IRModule({"main": from_source(REDUCE_READ_AND_WRITE)})
    sch = Schedule(mod)
    if primitive == "reindex":
        sch.reindex("matmul", "C")
        assert sch.trace.rewrites[-1].buffer == ("write", 0)
        assert "C_reindex[v0, v1] = C_reindex" not in sch.mod.script()
        assert_equivalent(mod["main"], sch.mod["main"])
    else:
        sch.set_axis_separator("matmul", "C", [1])
        assert sch.trace.rewrites[-1].buffer_index_type == "write"


def test_reindex_lays_out_only_the_variables_an_index_really_uses():
    # co // 64 is 0 for every co of the domain, so the copy does not run over co
    src = '''@T.prim_func
def main(P: T.Buffer((1, 10, 3), "float32"), W: T.Buffer((3, 3, 64), "float32"), C: T.Buffer((1, 4, 64), "float32")):
    for i0, i1, i2, i3, i4 in T.grid(1, 4, 64, 3, 3):
        with T.block("conv"):
            n, h, co, rh, rc = T.axis.remap("SSSRR", [i0, i1, i2, i3, i4])
            with T.init():
                C[n, h, co] = T.float32(0)
            C[n, h, co] = C[n, h, co] + P[n, h * 2 + rh, T.floordiv(co, 64) * 3 + rc] * W[rh, rc, co]
'''
    mod = IRModule({"main": from_source(src)})
    out = R.reindex("conv", ("read", 0))(mod)
    text = out["main"].script()
    assert "P_reindex = T.alloc_buffer((1, 4, 3, 3))" in text
    assert_equivalent(mod["main"], out["main"])


def test_a_cache_inside_a_scope_block_has_the_shape_its_iteration_variables_allow():
    # TVM's access_under_scope: under block "scope" (i, j < 8) block "B"
    # reads A[i * 16 + x, j * 16 + y]; i * 16 + 15 never passes 127, so the
    # local cache is 16 x 16, with no clamp to the buffer's end
    mod = IRModule({"main": from_source('''@T.prim_func
def main(B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    A = T.alloc_buffer((128, 128))
    for i0, j0 in T.grid(8, 8):
        with T.block("scope"):
            i, j = T.axis.remap("SS", [i0, j0])
            for x, y in T.grid(16, 16):
                with T.block("A"):
                    vi = T.axis.spatial(128, i * 16 + x)
                    vj = T.axis.spatial(128, j * 16 + y)
                    A[vi, vj] = T.float32(1)
            for x, y in T.grid(16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(128, i * 16 + x)
                    vj = T.axis.spatial(128, j * 16 + y)
                    B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
''')})
    out = R.cache_read("B", 0, "local")(mod)
    assert 'A_local = T.alloc_buffer((16, 16), scope="local")' in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


# -- cache_write fills the cache first where the block would read or copy back what it did not write --

# a composite block whose inner blocks write A before they read it (TVM's
# access_under_scope): the block as a whole reads A, but each read follows
# an earlier stage's write of the element in the same instance
UNDER_SCOPE = """
@T.prim_func
def main(B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    A = T.alloc_buffer((8, 8))
    for i0 in range(2):
        with T.block("scope"):
            i = T.axis.spatial(2, i0)
            for x, y in T.grid(4, 8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i * 4 + x)
                    vj = T.axis.spatial(8, y)
                    A[vi, vj] = B[vi, vj] * T.float32(2)
            for x, y in T.grid(4, 8):
                with T.block("A2"):
                    vi = T.axis.spatial(8, i * 4 + x)
                    vj = T.axis.spatial(8, y)
                    A[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(3)
"""


# the same over a parameter A, its first stage writing half the rows the
# second reads: the other half is read from A as the function was given it
UNDER_SCOPE_IN_PART = UNDER_SCOPE.replace("""            for x, y in T.grid(4, 8):
                with T.block("A"):""", """            for x, y in T.grid(2, 8):
                with T.block("A"):""").replace(
    'def main(B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):\n    A = T.alloc_buffer((8, 8))',
    'def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):')
assert "T.grid(2, 8)" in UNDER_SCOPE_IN_PART and "alloc_buffer" not in UNDER_SCOPE_IN_PART


@pytest.mark.parametrize("source, block", [(IN_PLACE, "B"), (STRIDED, "B"), (MASKED, "B"),
                                           (UNDER_SCOPE_IN_PART, "scope")],
                         ids=["reads-first", "strided", "masked", "under-scope-in-part"])
@pytest.mark.parametrize("scope", ["global", "local"])
def test_cache_write_fills_the_cache_where_the_block_reads_it_or_may_skip_elements(source, block, scope):
    # TVM redirects these blocks to an unfilled cache, and its copy back then
    # writes uninitialised elements over the buffer: here the cache is
    # filled from the buffer just before the block, so the result keeps its
    # meaning, and the copy back copies back what the block left alone
    mod = mod_of(source)
    out = R.cache_write(block, 0, scope)(mod)
    check(mod, out)
    blocks = [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]
    buf = "A" if source is UNDER_SCOPE_IN_PART else "B"
    fill, back = f"{buf}_{scope}_fill", f"{buf}_{scope}"
    assert blocks.index(fill) < blocks.index(block) < blocks.index(back), blocks
    assert_structural_equal(from_source(out["main"].script()), out["main"])


def test_cache_write_of_a_block_that_writes_every_element_first_is_not_filled():
    mod = mod_of(TWO_STAGES)
    out = R.cache_write("B", 0, "local")(mod)
    assert not [s for _, s in walk_stmts(out["main"]) if isinstance(s, Block) and s.name_hint.endswith("_fill")]


ALWAYS_TRUE_GUARD = """
@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), B: T.Buffer((4,), "int32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.where(i * 8 + k < 32)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
"""


def test_cache_write_of_a_block_whose_guard_always_holds_is_not_filled():
    # the loops' domains imply the guard (i * 8 + k is at most 31): it skips
    # nothing, and the cache is written whole, as TVM caches it (no fill)
    mod = mod_of(ALWAYS_TRUE_GUARD)
    out = R.cache_write("B", 0, "local")(mod)
    verify(out)
    names = [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]
    assert names == ["root", "B", "B_local"], names
    assert_equivalent(mod["main"], out["main"])


# blockize's tile of a matmul: the block's init stage writes its tile of C
# whole, and its update stage reads only what the init wrote
BLOCKIZED_MATMUL = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    for i_0, j_0 in T.grid(4, 2):
        with T.block("C_o"):
            vi_o, vj_o = T.axis.remap("SS", [i_0, j_0])
            vk_o = T.axis.reduce(1, 0)
            with T.init():
                for i_1, j_1 in T.grid(8, 16):
                    with T.block("C_init"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])
                        C[vi_o * 8 + vi_i, vj_o * 16 + vj_i] = T.float32(0)
            for i_1, j_1, k in T.grid(8, 16, 32):
                with T.block("C"):
                    vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k])
                    C[vi_o * 8 + vi_i, vj_o * 16 + vj_i] = C[vi_o * 8 + vi_i, vj_o * 16 + vj_i] \
                        + A[vi_o * 8 + vi_i, vk_i] * B[vk_i, vj_o * 16 + vj_i]
"""


@pytest.mark.parametrize("source, block, buf", [(UNDER_SCOPE, "scope", "A"), (BLOCKIZED_MATMUL, "C_o", "C")],
                         ids=["under-scope", "blockized-matmul"])
@pytest.mark.parametrize("scope", ["global", "local"])
def test_cache_write_of_a_block_whose_stages_write_what_they_read_is_not_filled(source, block, buf, scope):
    # as in TVM: the inner stages write every element of the block's region
    # before any stage reads it, so nothing of the buffer is needed in the
    # cache, and the copy back copies back only what the stages wrote
    mod = mod_of(source)
    out = R.cache_write(block, 0, scope)(mod)
    check(mod, out)
    blocks = [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]
    assert f"{buf}_{scope}_fill" not in blocks and blocks.index(block) < blocks.index(f"{buf}_{scope}"), blocks


def test_a_stage_that_skips_part_of_its_loops_does_not_count_as_written():
    # the init stage writes C only where its predicate holds: the update
    # then reads elements no stage wrote, and the cache is filled first
    src = BLOCKIZED_MATMUL.replace("""                    with T.block("C_init"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])""", """                    with T.block("C_init"):
                        T.where(j_1 < 15)
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])""")
    mod = mod_of(src)
    out = R.cache_write("C_o", 0, "local")(mod)
    check(mod, out)
    assert "C_local_fill" in [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]


def test_a_stage_on_threads_does_not_count_as_written():
    # the init stage's rows run on threads: the update stage's thread may
    # read an element another thread wrote, so the stages prove nothing and
    # the cache is filled first, as before
    src = BLOCKIZED_MATMUL.replace("""                for i_1, j_1 in T.grid(8, 16):
                    with T.block("C_init"):""", """                for i_1 in T.thread_binding(8, thread="threadIdx.x"):
                  for j_1 in range(16):
                    with T.block("C_init"):""")
    mod = mod_of(src)
    assert "thread_binding" in mod["main"].script()
    out = R.cache_write("C_o", 0, "global")(mod)
    assert "C_global_fill" in [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]


def test_cache_write_redirects_the_pointer_an_opaque_call_writes_through():
    # the block writes B only through its pointer: the cache gets a pointer of
    # its own, is laid out as B (the call's offsets index B's layout), and the
    # call writes through the cache's pointer
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float16"), B: T.Buffer((4, 4), "float16")):
    for i in range(2):
        with T.block("opaque"):
            vi = T.axis.spatial(2, i)
            T.reads(A[vi * 2:vi * 2 + 2, 0:4])
            T.writes(B[vi * 2:vi * 2 + 2, 0:4])
            T.evaluate(T.call_extern("handle", "load_tile", B.data, vi * 8, A.data, vi * 8))
"""
    mod = mod_of(src)
    out = R.cache_write("opaque", 0, "shared")(mod)
    verify(out)
    cache = out["main"].body.block.alloc_buffers[0]
    assert cache.name == "B_shared" and [int(d) for d in cache.shape] == [4, 4] and cache.data is not None
    call = next(s for _, s in walk_stmts(out["main"]) if isinstance(s, Block) and s.name_hint == "opaque").body
    assert call.value.args[1] == cache.data and call.value.args[3] == mod["main"].buffer_map[
        mod["main"].params[0]].data
    # the declared write covers B in 2-by-4 tiles, not one element per
    # instance: B is copied in first, so whatever the call leaves is kept
    names = [s.name_hint for _, s in walk_stmts(out["main"]) if isinstance(s, Block)]
    assert names.index("B_shared_fill") < names.index("opaque") < names.index("B_shared")
    assert_structural_equal(from_source(out["main"].script()), out["main"])




@pytest.mark.parametrize("rewrite", [
    R.cache_read("B", 1, "global"),  # the declared table itself
    R.cache_read("C", 0, "local"),
    R.cache_read("C", 1, "global"),
    R.cache_write("B", 0, "local"),
    R.cache_read("B", 1, "global") >> R.cache_read("B", 0, "global") >> R.cache_write("C", 0, "local"),
], ids=["read-table", "read-intermediate", "read-table-in-C", "write", "three"])
def test_caches_go_inside_the_declarations_at_the_top_of_the_scope(rewrite):
    # as TVM's InsertCacheStage: a stage placed at the top of the scope's
    # body goes inside the constants and buffers declared there, which it
    # may read (placed before them, a copy of the table read it undeclared)
    mod = mod_of(CONSTANT_TABLE)
    out = rewrite(mod)
    check(mod, out)
    body = out["main"].body.block.body
    assert type(body).__name__ == "AllocateConst" and type(body.body).__name__ == "DeclBuffer"
    assert_structural_equal(from_source(out["main"].script()), out["main"])


def test_cache_read_of_an_index_buffer_redirects_the_loads_inside_other_regions():
    # A[B[i], j]: the block reads B inside the index of A, in its body and in
    # its declared read of A; both read the cache (TVM's
    # test_cache_read_nested_buffer_access)
    mod = mod_of('''
@T.prim_func
def main(A: T.Buffer((7, 16), "float32"), B: T.Buffer((2,), "int32"), C: T.Buffer((2, 16), "float32")):
    for i, j in T.grid(2, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[B[vi], vj], B[vi])
            T.writes(C[vi, vj])
            C[vi, vj] = A[T.max(T.min(B[vi], 6), 0), vj]
''')
    out = R.cache_read("C", 1, "global")(mod)
    block = next(s for _, s in walk_stmts(out["main"]) if isinstance(s, Block) and s.name_hint == "C")
    assert [r.script() for r in block.reads] == ["A[B_global[vi], vj]", "B_global[vi]"]
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_cache_read_of_a_reader_before_the_writer_in_a_loop_they_share_is_refused():
    # found by the soak: inside the loop, the reader runs before the writer in
    # each iteration but after the writer's earlier iterations; a cache filled
    # once, before the loop, would hold the buffer's first value only
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((5,), "int32"), B: T.Buffer((), "int32")):
    S = T.alloc_buffer((), "int32")
    for k in range(5):
        with T.block("S"):
            S[()] = B[()]
        with T.block("B"):
            vk = T.axis.spatial(5, k)
            B[()] = S[()] + A[vk]
""")
    with pytest.raises(R.CacheStageOrderError, match="the block reads buffer B before the cache of it is filled"):
        R.cache_read("S", 0, "global")(mod)


def test_cache_write_of_a_writer_read_before_it_in_a_loop_they_share_is_refused():
    # found by the soak: S reads B before block B writes it in each iteration,
    # so from the second iteration on it reads what B wrote; a copy back after
    # the loop comes too late (TVM places it so and S reads stale values)
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((5,), "int32"), B: T.Buffer((), "int32"), C: T.Buffer((5,), "int32")):
    for k in range(5):
        with T.block("S"):
            vk = T.axis.spatial(5, k)
            C[vk] = B[()]
        with T.block("B"):
            vk = T.axis.spatial(5, k)
            B[()] = A[vk]
""")
    with pytest.raises(R.CacheStageOrderError, match=r"the block reads buffer B before block 'B' writes it, in a loop "
                                                     r"they share"):
        R.cache_write("B", 0, "global")(mod)


def test_reindex_cache_write_of_a_writer_read_before_it_in_a_loop_they_share_is_refused():
    # found by the fuzzer: after cache_inplace, each step of k copies C in,
    # updates it and copies it back; a reindex cache of the copy back moved
    # the store into C after the loops, where the next step's copy in read C
    mod = R.cache_inplace("matmul", 0, "shared")(mod_of(REDUCE_READ_AND_WRITE))
    with pytest.raises(R.CacheStageOrderError, match=r"block 'C_shared': the block reads buffer C before block "
                                                     r"'C_shared_1' writes it, in a loop they share"):
        R.reindex_cache_write("C_shared_1", 0, "global", lambda a, b: [a, b])(mod)


# LOOSE_READ (loop k's extent reads B) without C: no block reads B after its writer
LOOP_BOUND_ONLY_READS_WRITTEN = LOOSE_READ.replace("""    for j in range(4):
        with T.block("C"):
            vj = T.axis.spatial(4, j)
            C[vj] = B[vj] + 1
""", "")


@pytest.mark.parametrize("source, rewrite", [
    (LOOSE_READ, R.cache_write("B", 0, "global", ["C"])),
    (LOOP_BOUND_ONLY_READS_WRITTEN, R.cache_write("B", 0, "local")),
    (LOOP_BOUND_ONLY_READS_WRITTEN, R.reindex_cache_write("B", 0, "global", lambda vi: [vi])),
])
def test_cache_write_copies_back_before_a_loop_bound_that_reads_the_buffer(source, rewrite):
    # found by the fuzzer: the copy back was placed by the blocks reading B
    # alone, at the end of the function, after loop k read B[1] for its
    # extent (TVM places it so too); it now comes before that loop
    mod = mod_of(source)
    after = rewrite(mod)
    verify(after)
    body = after["main"].body.block.body.seq
    assert "T.writes(B[" in body[-2].script() and body[-1].loop_var.name == "k"
    assert_equivalent(mod["main"], after["main"], trials=5)


def test_cache_write_with_a_loop_bound_reading_the_buffer_ahead_of_it_in_a_loop_is_refused():
    # each iteration of o reads B[0] for loop k's extent before block B
    # writes it: from the second on, it reads what B wrote, which a copy back
    # after B's loop has not put there yet
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), D: T.Buffer((2, 4), "int32")):
    for o in range(2):
        for k in range(T.max(T.min(B[0], 4), 0)):
            with T.block("D"):
                vo, vk = T.axis.remap("SS", [o, k])
                D[vo, vk] = A[vk]
        for i in range(4):
            with T.block("B"):
                vo, vi = T.axis.remap("SS", [o, i])
                B[vi] = A[vi] + vo
""")
    with pytest.raises(R.CacheStageOrderError, match=r"a For outside the blocks reads buffer B ahead of the block in "
                                                     r"loop o, which holds both"):
        R.cache_write("B", 0, "global")(mod)


def test_cache_write_of_a_block_under_a_condition_on_its_buffer_in_a_loop_is_refused():
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for o in range(3):
        if B[0] < 5:
            for i in range(4):
                with T.block("B"):
                    vo, vi = T.axis.remap("SS", [o, i])
                    B[vi] = B[vi] + A[vi]
""")
    with pytest.raises(R.CacheStageOrderError, match=r"a IfThenElse outside the blocks reads buffer B ahead of the "
                                                     r"block in loop o"):
        R.cache_write("B", 0, "global")(mod)


# B's loop k repeats it as many times as B[0] says, perhaps none
REPEATED_MAYBE_NEVER = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for k in range(T.max(T.min(B[0], 4), 0)):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.floormod(A[vi], 3) + 1
"""


def test_cache_write_of_a_block_in_a_loop_that_may_not_run_fills_the_cache_first():
    # found by the property test above: where loop k runs no iteration, the
    # copy back stored the cache's uninitialised elements into B
    mod = mod_of(REPEATED_MAYBE_NEVER)
    after = R.cache_write("B", 0, "global")(mod)
    assert "B_global_fill" in after.script()
    assert_equivalent(mod["main"], after["main"], trials=8)
    with pytest.raises(R.CacheWritePartialError, match=r"it runs in loop k, whose extent T.max\(T.min\(B\[0\], 4\), 0\) "
                                                       r"may be zero, which its write index does not follow"):
        R.reindex_cache_write("B", 0, "global", lambda vi: [vi])(mod)
    # reindex's copy back as well (a fuzzer find)
    with pytest.raises(R.CacheWritePartialError, match=r"it runs in loop k, whose extent .* may be zero"):
        R.reindex("B", ("write", 0))(mod)


def test_caches_of_a_block_in_a_loop_bounded_by_a_buffer_the_scope_writes():
    # found by the fuzzer: reindex_cache_read re-created loop k, range(B[1]),
    # before block B, which writes B; cache_write sized its compact cache by
    # B[1] at the start of the function, before B was written
    mod = mod_of(LOOSE_READ)
    with pytest.raises(R.CacheStageOrderError, match=r"loop k has a bound reading buffer B, which block 'B' writes "
                                                     r"between the loop and the copy"):
        R.reindex_cache_read("D", 0, "local", lambda vk: [vk])(mod)
    for rewrite in [R.cache_write("D", 0, "global"), R.reindex_cache_write("D", 0, "local", lambda vk: [vk]),
                    R.cache_read("D", 0, "local")]:
        after = rewrite(mod)
        verify(after)
        assert_equivalent(mod["main"], after["main"], trials=5)
    # laid out as D rather than sized by B[1]
    cache = R.cache_write("D", 0, "global")(mod)["main"].body.block.alloc_buffers[-1]
    assert [d.value for d in cache.shape] == [4]


# W's loop runs B[1] times, then X rewrites B, then R reads what W wrote
BOUND_REWRITTEN_BEFORE_THE_READER = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32"),
         D: T.Buffer((4,), "int32")):
    for k in range(T.max(T.min(B[1], 4), 0)):
        with T.block("W"):
            vk = T.axis.spatial(4, k)
            D[vk] = A[vk] + 1
    for i in range(4):
        with T.block("X"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.floormod(A[vi], 5)
    for j in range(4):
        with T.block("R"):
            vj = T.axis.spatial(4, j)
            C[vj] = D[vj] * 2
"""


def test_cache_write_of_a_region_bounded_by_a_buffer_written_before_the_copy_back_is_refused():
    # the copy back, placed before R, would copy B[1] elements of X's B
    # rather than of the B that ran W's loop
    mod = mod_of(BOUND_REWRITTEN_BEFORE_THE_READER)
    with pytest.raises(R.CacheStageOrderError, match=r"loop k has a bound reading buffer B, which block 'X' writes "
                                                     r"between the loop and the copy"):
        R.cache_write("W", 0, "global")(mod)


# tiles of 8 over a size rounded up to a multiple of 8: each tile lies inside
# the buffer, which takes a symbolic proof ((n + 7) // 8 * 8 is the last end)
SYMBOLIC_TILES = '''
@T.prim_func
def main(var_A: T.handle, var_B: T.handle, var_C: T.handle, n: T.int32):
    A = T.match_buffer(var_A, ((n + 7) // 8 * 8, 4))
    B = T.match_buffer(var_B, (4, (n + 7) // 8 * 8))
    C = T.match_buffer(var_C, ((n + 7) // 8 * 8, (n + 7) // 8 * 8))
    for i0_0, i1_0 in T.grid((n + 7) // 8, (n + 7) // 8):
        with T.block("matmul_o"):
            v_i0_o, v_i1_o = T.axis.remap("SS", [i0_0, i1_0])
            T.reads(A[v_i0_o * 8 : v_i0_o * 8 + 8, 0:4], B[0:4, v_i1_o * 8 : v_i1_o * 8 + 8])
            T.writes(C[v_i0_o * 8 : v_i0_o * 8 + 8, v_i1_o * 8 : v_i1_o * 8 + 8])
            for i0_1, i1_1, k in T.grid(8, 8, 4):
                with T.block("matmul"):
                    v_i0_i, v_i1_i, v_k_i = T.axis.remap("SSR", [i0_1, i1_1, k])
                    with T.init():
                        C[v_i0_o * 8 + v_i0_i, v_i1_o * 8 + v_i1_i] = T.float32(0)
                    C[v_i0_o * 8 + v_i0_i, v_i1_o * 8 + v_i1_i] = C[v_i0_o * 8 + v_i0_i, v_i1_o * 8 + v_i1_i] + A[v_i0_o * 8 + v_i0_i, v_k_i] * B[v_k_i, v_i1_o * 8 + v_i1_i]
'''


def builds_as_interpreted(mod: IRModule, sizes: dict) -> None:
    """The LLVM build of ``mod`` gives, bit for bit, what the interpreter gives."""
    from tirfun.testing.equivalence import random_inputs

    func = mod["main"]
    args = random_inputs(func, 0, sizes=sizes)
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tirfun.interp.run(func, *expected)
    tirfun.build(mod, target="llvm")(*args)
    for x, y in zip(expected, args):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("kind", ["read", "write"])
def test_cache_of_a_tile_inside_a_symbolic_buffer_has_the_tiles_shape(kind):
    # v_i0_o * 8 + 7 <= (n + 7) // 8 * 8 - 1 for v_i0_o below (n + 7) // 8:
    # the tile needs no clamp to the buffer's end, as TVM's analyzer finds
    mod = mod_of(SYMBOLIC_TILES)
    sch = Schedule(mod)
    if kind == "read":
        sch.cache_read("matmul", 0, "shared")
    else:
        sch.cache_write("matmul", 0, "local")
    cache = sch.mod["main"].body.block.body.body.body.block.alloc_buffers[0]
    assert [int(d.value) for d in cache.shape] == ([8, 4] if kind == "read" else [8, 8])
    text = sch.mod["main"].script()
    assert ("A_shared[v0, v1] = A[v_i0_o * 8 + v0, v1]" if kind == "read"
            else "C[v_i0_o * 8 + v0, v_i1_o * 8 + v1] = C_local[v0, v1]") in text
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    builds_as_interpreted(sch.mod, {"n": 13})


def test_reindex_of_a_write_indexed_by_an_enclosing_blocks_variable_is_refused_not_a_crash():
    # blockize leaves S writing S[vi_o, vj_i], vi_o the outer block's: the
    # check for a predicate that keeps out only instances outside the domain
    # looked vi_o up among S's own variables (a KeyError from inside)
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((5, 4), "float64"), S: T.Buffer((5, 4), "float64")):
    for i in range(5):
        with T.block("S_o"):
            vi_o = T.axis.spatial(5, i)
            T.reads(A[vi_o, 0:4])
            T.writes(S[vi_o, 0:4])
            for j0, j in T.grid(2, 2):
                with T.block("S"):
                    vj_i = T.axis.spatial(4, j0 * 2 + j)
                    T.where(j0 * 2 + j < 4)
                    T.reads(A[vi_o, vj_i])
                    T.writes(S[vi_o, vj_i])
                    S[vi_o, vj_i] = A[vi_o, vj_i] * T.float64(2.0)
''')
    (err,) = R.reindex("S", ("write", 0)).violations(IRModule({"main": func}))
    assert isinstance(err, R.CacheWritePartialError) and "predicate" in err.reason


def test_reindex_of_a_read_over_a_symbolic_domain():
    # the copy reads A[v0, v1] over v0 in [0, n * 16): its last index,
    # n * 16 - 1, lies inside A's n * 16 rows, read as index arithmetic
    # (the prover alone lets n * 16 - 1 wrap, and the copy was refused)
    func = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 16, 8))
    C = T.match_buffer(c, (8, n * 16))
    for i, j in T.grid(n * 16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vj, vi] = A[vi, vj] * T.float32(2)
""")
    sch = Schedule(func)
    sch.reindex("C", ("read", 0))
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 16, 8))
    C = T.match_buffer(c, (8, n * 16))
    A_reindex = T.alloc_buffer((n * 16, 8))
    for ax0, ax1 in T.grid(n * 16, 8):
        with T.block("A_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_reindex[v0, v1] = A[v0, v1]
    for i, j in T.grid(n * 16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vj, vi] = A_reindex[vi, vj] * T.float32(2)
""")
    assert_structural_equal(sch.mod["main"], expected)
    x = np.random.default_rng(5).standard_normal((48, 8)).astype("float32")
    want, got, built = (np.zeros((8, 48), np.float32) for _ in range(3))
    tirfun.interp.run(func, x, want, 3)
    tirfun.interp.run(sch.mod["main"], x, got, 3)
    tirfun.build(sch.mod)(x, built, 3)
    assert want.tobytes() == got.tobytes() == built.tobytes()


SPLIT_READER = """
@T.prim_func
def main(A: T.Buffer((4, 7), "float32"), C: T.Buffer((4, 7), "float32")):
    B = T.alloc_buffer((4, 7))
    for i, j in T.grid(4, 7):
        with T.block("B"):
            v0, v1 = T.axis.remap("SS", [i, j])
            B[v0, v1] = A[v0, v1] * T.float32(2)
    for i, j_0, j_1 in T.grid(4, 2, 4):
        with T.block("C"):
            v0 = T.axis.spatial(4, i)
            v1 = T.axis.spatial(7, j_0 * 4 + j_1)
            T.where(j_0 * 4 + j_1 < 7)
            C[v0, v1] = B[v0, v1] + T.float32(1)
"""


def test_cache_read_of_a_reader_split_without_dividing():
    # the reader's relaxed region, B[0:4, 0:8], reaches past B's 7 columns
    # (its last iteration guarded): only what lies inside B needs a writer,
    # as TVM's region cover intersects both sides with the buffer's shape
    mod = mod_of(SPLIT_READER)
    sch = Schedule(mod)
    local = sch.cache_read("C", 0, "local")
    sch.compute_at(local, sch.get_loops("C")[-1])
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4, 7), "float32"), C: T.Buffer((4, 7), "float32")):
    B = T.alloc_buffer((4, 7))
    B_local = T.alloc_buffer((4, 7), scope="local")
    for i, j in T.grid(4, 7):
        with T.block("B"):
            v0, v1 = T.axis.remap("SS", [i, j])
            B[v0, v1] = A[v0, v1] * T.float32(2)
    for i, j_0, j_1 in T.grid(4, 2, 4):
        with T.block("B_local"):
            v0 = T.axis.spatial(4, i)
            v1 = T.axis.spatial(7, j_0 * 4 + j_1)
            T.where(j_0 * 4 + j_1 < 7)
            B_local[v0, v1] = B[v0, v1]
        with T.block("C"):
            v0 = T.axis.spatial(4, i)
            v1 = T.axis.spatial(7, j_0 * 4 + j_1)
            T.where(j_0 * 4 + j_1 < 7)
            C[v0, v1] = B_local[v0, v1] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    check(mod, sch.mod)


# a block viewing two rows of A through a match_buffer in the global scope,
# as a tensorized block views its operands in the scopes its intrinsic asks
VIEWED = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in range(2):
        with T.block("B"):
            vi = T.axis.spatial(2, i)
            T.reads(A[vi * 2:vi * 2 + 2, 0:4])
            T.writes(B[vi * 2:vi * 2 + 2, 0:4])
            V = T.match_buffer(A[vi * 2:vi * 2 + 2, 0:4], (2, 4), offset_factor=1)
            for x, y in T.grid(2, 4):
                B[vi * 2 + x, y] = V[x, y] * T.float32(2)
"""


@pytest.mark.parametrize("rewrite", [R.cache_read("B", 0, "shared"), R.cache_read("B", 0, "local")])
def test_a_cache_in_another_scope_than_a_view_of_the_buffer_is_refused(rewrite):
    # the view would match a region of a shared (or local) buffer while
    # declared global, which TVM's MatchBufferRegion check fails on; tirfun
    # names the block and the view, and a cache in the view's scope applies
    mod = IRModule({"main": from_source(VIEWED)})
    errors = rewrite.violations(mod)
    assert [type(e).__name__ for e in errors] == ["ViewScopeMismatchError"]
    assert "match_buffer V" in str(errors[0]) and "'B'" in str(errors[0])
    with pytest.raises(R.ViewScopeMismatchError):
        rewrite(mod)
    out = R.cache_read("B", 0, "global")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_a_tensorized_block_refuses_a_cache_of_its_operand_in_another_scope():
    # the schedule a random test found: tensorize, then cache the tensorized
    # block's operand in shared memory
    from tirfun.rewrites import TensorIntrin

    source = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i, j in T.grid(2, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i * 2 + j)
            B[vi] = A[vi] + T.float32(1)
"""
    intrin = """
@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (2,), offset_factor=1)
    B = T.match_buffer(b, (2,), offset_factor=1)
    with T.block("root"):
        T.reads(A[0:2])
        T.writes(B[0:2])
        for j in range(2):
            with T.block("B"):
                vj = T.axis.spatial(2, j)
                B[vj] = A[vj] + T.float32(1)
"""
    mod = IRModule({"main": from_source(source)})
    intrinsic = TensorIntrin(from_source(intrin), from_source(intrin))
    tiled = R.blockize("j")(mod)
    tensorized = R.tensorize("B_o", intrinsic)(tiled)
    with pytest.raises(R.ViewScopeMismatchError, match="B_o"):
        R.cache_read("B_o", 0, "shared")(tensorized)
    out = R.cache_read("B_o", 0, "global")(tensorized)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


# ------------------------------------------------------------------ the index each caching primitive states

def _stated(monkeypatch, name: str) -> list:
    """Record whether each call of ``cache.<name>`` stated an index."""
    from tirfun.rewrites import cache

    used = []
    original = getattr(cache, name)

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        used.append(out is not None)
        return out

    monkeypatch.setattr(cache, name, spy)
    return used


def _index_is_built_one(mod: IRModule) -> None:
    from tirfun.rewrites.index import build_index, index_of

    assert index_of(mod["main"]) == build_index(mod["main"])


@pytest.mark.parametrize("source, step, stated", [
    (TWO_STAGES, R.cache_read("C", 0, "local"), True),
    (TWO_STAGES, R.cache_write("B", 0, "shared"), True),
    (TWO_STAGES, R.cache_read("C", 0, "local", consumer_blocks=["C"]), True),
    (SHARED_LOOP, R.cache_read("C", 0, "local"), True),
    (SHARED_LOOP, R.cache_write("B", 0, "local"), True),
    # the scope held the loop alone: the stage makes a sequence of the two
    (NESTED, R.cache_read("B", 0, "local"), None),
    # the indices rebased by the copied region's start: the walk
    (PARTIAL, R.cache_write("B", 0, "local"), None),
    (UNDER_SCOPE, R.cache_read("A", 0, "local"), None),
    # a fill stage goes in too: the walk
    (MASKED, R.cache_write("B", 0, "local"), None),
])
def test_cache_read_and_cache_write_state_the_index_they_leave(monkeypatch, source, step, stated):
    used = _stated(monkeypatch, "derive_insert_index")
    mod = mod_of(source)
    out = step(mod)
    assert used == ([True] if stated else [])
    _index_is_built_one(out)
    # a rewrite that follows reads the stated index
    from tirfun.rewrites.index import index_of

    after = R.split(next(iter(index_of(out["main"]).loops)), [None, 2])(out)
    _index_is_built_one(after)
    assert_equivalent(mod["main"], out["main"])


# the block beside another in its innermost loop: the copies go into the sequence
IN_PLACE_BESIDE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi]
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
"""


@pytest.mark.parametrize("source, block", [(IN_PLACE, "B"), (IN_PLACE_BESIDE, "B"),
                                           (IN_PLACE_ONCE.replace("LOOP", "2"), "scale")])
def test_cache_inplace_states_the_index_it_leaves(monkeypatch, source, block):
    used = _stated(monkeypatch, "derive_scope_index")
    mod = mod_of(source)
    out = R.cache_inplace(block, 0, "local")(mod)
    assert used == [True]
    _index_is_built_one(out)
    assert_equivalent(mod["main"], out["main"])


def test_the_caching_primitives_state_the_index_a_walk_finds_on_random_programs():
    # the stated index against the one built afresh, for every block and
    # buffer of many drawn programs (and after a second caching step)
    from tirfun.testing.stage_programs import random_stage_program

    applied = 0
    for seed in range(25):
        mod = IRModule({"main": random_stage_program(seed)})
        blocks = [s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block) and s.name_hint != "root"]
        for block in blocks:
            steps = [R.cache_read(block.name_hint, k, "local") for k in range(len(block.reads))]
            steps += [R.cache_write(block.name_hint, k, "shared") for k in range(len(block.writes))]
            steps += [R.cache_inplace(block.name_hint, k, "local") for k in range(len(block.reads))]
            for step in steps:
                try:
                    out = step.run(mod)
                except ScheduleError:
                    continue
                applied += 1
                _index_is_built_one(out.mod)
                stage = out.result[0] if isinstance(out.result, tuple) else out.result
                try:
                    again = R.cache_read(stage, 0, "shared")(out.mod)
                except ScheduleError:
                    continue
                _index_is_built_one(again)
    assert applied > 50


# ------------------------------------------------------------------ the rewriter's shortcuts

def _caching_steps(mod: IRModule) -> list:
    """Every caching primitive on every buffer of every block of ``mod``."""
    blocks = [s for _, s in walk_stmts(mod["main"]) if isinstance(s, Block) and s.name_hint != "root"]
    steps = []
    for block in blocks:
        name, reads, writes = block.name_hint, range(len(block.reads)), range(len(block.writes))
        steps += [R.cache_read(name, k, "shared") for k in reads]
        steps += [R.cache_inplace(name, k, "local") for k in reads]
        steps += [R.reindex_cache_read(name, k, "local", lambda *v: v) for k in reads]
        steps += [R.cache_write(name, k, "local") for k in writes]
        steps += [R.reindex_cache_write(name, k, "shared", lambda *v: tuple(reversed(v))) for k in writes]
    return steps


def _outcome(step, mod: IRModule):
    try:
        return step(mod).script()
    except ScheduleError as err:
        return type(err).__name__, str(err)


def test_the_rewriter_skips_only_what_its_general_walk_gives_back_unchanged(monkeypatch):
    # the items whose blocks are all skipped, the loops outside the
    # redirected blocks and the reindexing caches' body walk, against the
    # general walk, on the sources here and on random programs
    from tirfun.errors import ParseError
    from tirfun.rewrites import cache
    from tirfun.testing.stage_programs import random_stage_program

    mods = []
    for k, v in sorted(globals().items()):
        if k.isupper() and isinstance(v, str) and "@T.prim_func" in v:
            try:
                mods.append(mod_of(v))
            except ParseError:
                continue  # a template, filled in by its tests
    mods += [IRModule({"main": random_stage_program(seed)}) for seed in range(40)]
    cases = [(step, mod) for mod in mods for step in _caching_steps(mod)]
    fast = [_outcome(step, mod) for step, mod in cases]
    monkeypatch.setattr(cache._Rewriter, "skipped", lambda self, item_path: False)
    monkeypatch.setattr(cache._Rewriter, "loop", lambda self, node, path: self.general(node, path, False))
    monkeypatch.setattr(cache._IndexRewriter, "redirect", cache._Rewriter.redirect)
    general = [_outcome(step, mod) for step, mod in cases]
    assert fast == general
    assert sum(isinstance(out, str) for out in fast) > 200


def test_cache_write_of_a_writer_and_its_reader_under_one_condition_is_refused():
    # found by the fuzzer: the copy back could go only between the two
    # blocks, inside ``if i < 6``; placed after the if (as TVM places it),
    # the reader read the buffer before anything was copied back
    mod = mod_of(COPY_AND_READER_UNDER_ONE_IF)

    with pytest.raises(R.CacheStageOrderError, match=r"both sit in the statement 'if i < 6', inside which no copy "
                                                     r"can be placed between them"):
        R.cache_write("A_global", 0, "global")(mod)


def test_caches_of_a_buffer_a_store_outside_the_blocks_writes_are_refused():
    # found by the fuzzer: after loop_partition, a block reads A, which plain
    # stores outside any block write first; cache_read, seeing no block
    # write A, copied it at the start, before the stores
    mod = (R.unroll("i") >> R.loop_partition("i_1", [3]))(mod_of("""
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), D: T.Buffer((4,), "int32")):
    with T.block("root"):
        for i, j in T.grid(4, 8):
            if i * 8 + j < 30:
                A[i, j] = T.Cast("float32", i * 8 + j) + T.float32(0.5)
            else:
                A[i, j] = T.float32(0.0)
        for i_1 in range(4):
            D[i_1] = i_1 * 3 + T.Cast("int32", A[i_1, 0])
"""))
    with pytest.raises(R.CacheStageOrderError, match=r"a store outside the blocks writes buffer A"):
        R.cache_read("i_1_common", 0, "global")(mod)


def test_a_cache_of_a_buffer_named_by_its_pointer_prints_and_parses_back():
    # the block names B only through B.data; cache_read points the call at
    # the copy, so nothing names B's pointer any more, and the parser of the
    # printed module gives B none: the two are still the same module
    source = """
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    with T.block("b"):
        T.reads(B[0:4])
        T.writes(A[0:4])
        T.call_extern("int32", "g", T.tvm_access_ptr(T.type_annotation("float32"), B.data, 0, 4, 1),
                      T.tvm_access_ptr(T.type_annotation("float32"), A.data, 0, 4, 2))
"""
    out = R.cache_read("b", 0, "global")(IRModule({"main": from_source(source)}))
    text = out.script()
    assert "B_global.data, 0, 4, 1)" in text and "B.data" not in text
    parsed = from_source(text)
    assert_structural_equal(parsed, out)
    assert parsed.script() == text


def test_reindex_cache_read_refuses_a_map_that_sends_two_elements_to_one():
    # found by random arguments: vi * 2 + vj sends (0, 2) and (1, 0), which
    # read A[0, 2] and A[1, 0], to one element of the cache; a map that
    # mixes only iterations reading the same element is taken
    source = ELEMENTWISE
    mod = IRModule({"main": from_source(source)})
    with pytest.raises(R.IndexMapCollisionError,
                       match=re.escape("(vi, vj) = (0, 2) reads [0, 2] and (vi, vj) = (1, 0) reads [1, 0], "
                                       "both cached at [2]")):
        R.reindex_cache_read("B", 0, "global", lambda a, b: (a * 2 + b,))(mod)
    diagonal = IRModule({"main": from_source(source.replace("A: T.Buffer((8, 8)", "A: T.Buffer((16,)")
                                             .replace("A[vi, vj]", "A[vi + vj]"))})
    out = R.reindex_cache_read("B", 0, "global", lambda a, b: (a + b,))(diagonal)
    assert_equivalent(diagonal["main"], out["main"])


@pytest.mark.parametrize("rewrite", [
    R.cache_read("B", 1, "local"),
    R.cache_read("C", 0, "global"),
    R.cache_write("B", 0, "local"),
    R.cache_read("B", 1, "global") >> R.cache_read("B", 0, "global") >> R.cache_write("C", 0, "local"),
], ids=["read-table", "read-intermediate", "write", "three"])
def test_caches_go_inside_declarations_wrapped_in_a_sequence_of_one(rewrite):
    # a sequence of one statement is that statement (structurally): the
    # declarations under it are looked through as they are without it, so
    # a copy of the table stays in the table's scope
    import attrs

    from tirfun.nodes import SeqStmt

    mod = mod_of(CONSTANT_TABLE)
    realize = mod["main"].body
    root = realize.block
    wrapped = IRModule({"main": mod["main"].with_body(
        attrs.evolve(realize, block=attrs.evolve(root, body=SeqStmt([root.body]))))})
    assert_structural_equal(wrapped, mod)
    out = rewrite(wrapped)
    check(wrapped, out)
    lines = out["main"].script().splitlines()
    declared = next(k for k, line in enumerate(lines) if "T.decl_buffer" in line)
    blocks = [k for k, line in enumerate(lines) if "with T.block(" in line and not line.strip().startswith("#")]
    assert declared < min(blocks)


def test_reindex_caches_run_the_loops_the_bounds_of_their_loops_name():
    # j runs from i: the copy that re-creates j must re-create i around it
    # (it named i outside its loop, a module that neither verified nor parsed)
    mod = IRModule({"main": from_source(MOVING_DOMAIN)})
    for rewrite in (R.reindex_cache_read("B", 0, "shared", lambda vj, vk: (vk, vj)),
                    R.reindex_cache_write("B", 0, "local", lambda vj, vk: (vk, vj))):
        after = rewrite(mod)
        verify(after)
        assert_structural_equal(from_source(after.script()), after)
        copy = R.get(after, "A_shared" if isinstance(rewrite, R.ReindexCacheRead) else "B_local")
        outer = R.get_loops(after, copy.name_hint)
        assert [R.get(after, lp).loop_var.name for lp in outer][0] == "i_1"
        assert_equivalent(mod["main"], after["main"])


REDUCTION_INDEXED_OUTPUT = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vk] = T.float32(0)
            B[vk] = B[vk] + A[vi, vk]
"""


def test_an_init_at_an_index_of_a_reduction_variable_does_not_count_as_a_write():
    # the init runs only where vk starts, so B[1..7] are read as the caller
    # gave them: a write cache must be filled from B first
    mod = mod_of(REDUCTION_INDEXED_OUTPUT)
    out = R.cache_write("B", 0, "local")(mod)
    assert 'T.block("B_local_fill")' in out.script()
    assert_equivalent(mod, out)
    with pytest.raises(R.CacheWriteReadBeforeWriteError, match=r"reads B\[vk\] before writing that element"):
        R.reindex_cache_write("B", 0, "local", lambda vi, vk: [vk])(mod)


def test_reindex_refuses_a_buffer_a_match_buffer_views():
    # the view names a region of A, which the reindexed copy, laid out by
    # the block's iteration variables, does not hold
    mod = mod_of("""
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((1, 1), "float32")):
    with T.block("update"):
        vi = T.axis.spatial(1, 0)
        D = T.match_buffer(A[0:4, 0], (4, 1))
        B[0, 0] = A[0, 0] + D[2, 0]
""")
    with pytest.raises(R.InvalidBufferAccessError, match=r"buffer A is viewed by the block's match_buffer D"):
        R.reindex("update", ("read", 0))(mod)
    with pytest.raises(ScheduleError):
        R.reindex_cache_read("update", 0, "local", lambda vi: [vi])(mod)


# TVM's GPU schedule of an elementwise stage: fuse, split by the threads,
# bind, cache the output per thread and copy it back where it is computed
GPU_ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((64, 48), "float32")):
    for i, j in T.grid(64, 48):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
"""


def test_the_gpu_elementwise_schedule_caches_the_output_per_thread():
    from tirfun.interp import run
    from tirfun.lower import lower

    mod = IRModule({"main": from_source(GPU_ELEMENTWISE)})
    out = (R.fuse("i", "j") >> R.split("i_j_fused", [None, 128]) >> R.bind("i_j_fused_0", "blockIdx.x")
           >> R.bind("i_j_fused_1", "threadIdx.x") >> R.cache_write("B", 0, "local")
           >> R.reverse_compute_at("B_local", "i_j_fused_1"))(mod)
    text = out.script()
    # no copy of B into the cache first: the threads write all of it, as in TVM
    assert "B_local_fill" not in text
    # both bindings name the one fused sum, as TVM writes them
    assert text.count("(i_j_fused_0 * 128 + i_j_fused_1) // 48") == 2
    assert text.count("(i_j_fused_0 * 128 + i_j_fused_1) % 48") == 2
    verify(out)
    a = np.random.default_rng(0).random((64, 48), dtype=np.float32)
    b = np.zeros_like(a)
    run(lower(out, target="cuda")["main"], a, b)
    np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))


def test_the_gpu_elementwise_schedule_over_a_size_the_threads_do_not_divide():
    # 45 * 45 = 2025 elements in 16 blocks of 128 threads: the last threads
    # skip (the split's condition), and the copy back, moved to the
    # threads, runs under the same condition, as TVM places it
    from tirfun.interp import run
    from tirfun.lower import lower

    mod = IRModule({"main": from_source(GPU_ELEMENTWISE.replace("64, 48", "45, 45").replace("48", "45"))})
    out = (R.fuse("i", "j") >> R.split("i_j_fused", [None, 128]) >> R.bind("i_j_fused_0", "blockIdx.x")
           >> R.bind("i_j_fused_1", "threadIdx.x") >> R.cache_write("B", 0, "local")
           >> R.reverse_compute_at("B_local", "i_j_fused_1"))(mod)
    text = out.script()
    assert "B_local_fill" not in text
    assert text.count("T.where(i_j_fused_0 * 128 + i_j_fused_1 < 2025)") == 2, text
    assert text.count("(i_j_fused_0 * 128 + i_j_fused_1) // 45") == 2
    verify(out)
    a = np.random.default_rng(0).random((45, 45), dtype=np.float32)
    b = np.zeros_like(a)
    run(lower(out, target="cuda")["main"], a, b)
    np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))


# a write at a row chosen by the contents of another buffer (TVM's
# set_axis_separator tests)
INDIRECT_ROW = """
@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), B: T.Buffer((1, 1), "int32")):
    for j in range(4):
        with T.block("block"):
            T.reads(B[0, 0])
            T.writes(A[B[0, 0], j])
            A[B[0, 0], j] = 7
"""


def test_a_cache_of_a_region_bounded_by_a_load_is_the_whole_buffer():
    # compact, its shape would load (T.min(B[0, 0], 3) - T.max(B[0, 0], 0)
    # + 1): an allocation sized by the contents of memory
    from tirfun.interp import run

    mod = IRModule({"main": from_source(INDIRECT_ROW)})
    out = R.cache_write("block", 0, "local")(mod)
    verify(out)
    (cache,) = [b for _, s in walk_stmts(out["main"]) if isinstance(s, Block) for b in s.alloc_buffers]
    assert [d.value for d in cache.shape] == [4, 4]
    for row in range(4):
        start = np.arange(16, dtype="int32").reshape(4, 4)
        expected, got = start.copy(), start.copy()
        run(mod["main"], expected, np.array([[row]], "int32"))
        run(out["main"], got, np.array([[row]], "int32"))
        np.testing.assert_array_equal(got, expected)


def test_a_consumer_block_that_does_not_touch_the_buffer_is_left_alone():
    # TVM redirects the listed blocks' accesses of the buffer: a listed
    # block with none is left as it is, wherever it runs
    from tirfun.interp import run

    src = """
@T.prim_func
def main(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("block"):
            vi = T.axis.spatial(16, i * 4 + j)
            B[vi] = T.Cast("float32", A[vi])
"""
    mod = IRModule({"main": from_source(src)})
    staged = R.cache_write("block", 0, "local")(mod)
    out = R.cache_write("B_local", 0, "global", ["block"])(staged)
    verify(out)
    block = next(s for _, s in walk_stmts(out["main"]) if isinstance(s, Block) and s.name_hint == "block")
    assert [r.buffer.name for r in block.writes] == ["B_local"]
    a = np.arange(16, dtype="uint8")
    b0, b1 = np.zeros(16, "float32"), np.zeros(16, "float32")
    run(mod, a, b0)
    run(out, a, b1)
    np.testing.assert_array_equal(b1, b0)


def test_given_consumers_that_do_not_read_the_buffer_are_left_alone_wherever_they_are():
    # TVM ignores them: a block of another scope (inside a block), or one
    # that reads something else; the cache still keeps the meaning
    from tirfun.interp import run

    src = """
@T.prim_func
def main(A: T.Buffer((1, 64), "float32"), B: T.Buffer((1,), "float32")):
    for i, ko in T.grid(1, 2):
        with T.block("outer"):
            vi, vko = T.axis.remap("SR", [i, ko])
            C = T.alloc_buffer((32,), dtype="float32")
            with T.init():
                B[vi] = T.float32(0)
            for ki in T.serial(32):
                with T.block("inner_1"):
                    vki = T.axis.remap("S", [ki])
                    C[vki] = A[vi, vko * 32 + vki]
            for ki in T.serial(32):
                with T.block("inner_2"):
                    vki = T.axis.remap("R", [ki])
                    B[vi] += C[vki]
"""
    mod = IRModule({"main": from_source(src)})
    for rewrite in (R.cache_write("outer", 0, "shared", ["inner_1"]), R.cache_read("outer", 0, "shared", ["inner_2"])):
        out = rewrite(mod)
        verify(out)
        a = np.random.default_rng(0).random((1, 64), dtype=np.float32)
        b0, b1 = np.zeros(1, "float32"), np.zeros(1, "float32")
        run(mod, a, b0)
        run(out, a, b1)
        np.testing.assert_array_equal(b1, b0)


SPLIT_PRODUCER = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (4, n), "float32")
    C = T.match_buffer(c, (4, n), "float32")
    B = T.alloc_buffer((4, n), "float32")
    for i in range(4):
        for j_0, j_1 in T.grid((n + 63) // 64, 64):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_0 * 64 + j_1)
                T.where(j_0 * 64 + j_1 < n)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(n):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 130])
def test_cache_write_of_a_producer_split_past_its_extent_covers_what_its_consumer_reads(n):
    # the producer writes [0, min((n + 63) // 64 * 64 - 1, n - 1)] of each
    # row, which is [0, n - 1] as index arithmetic: the consumer's reads are
    # covered (TVM accepts this, dlight's GEMV epilogue), and the cache is
    # n wide, not min(...) + 1
    mod = IRModule({"main": from_source(SPLIT_PRODUCER)})
    sch = tirfun.Schedule(mod)
    sch.cache_write(sch.get_block("B"), 0, "global", consumer_blocks=[sch.get_block("C")])
    verify(sch.mod)
    assert "B_global = T.alloc_buffer((4, n))" in sch.mod["main"].script()
    assert_equivalent(mod["main"], sch.mod["main"], sizes={"n": n})


def assert_runs_alike(before, after, make_args) -> None:
    """The original interpreted, the scheduled interpreted and the
    scheduled built leave the same bytes in every array ``make_args()``
    gives (fresh arrays for each run)."""
    outs = []
    for run in (lambda *a: interp_run(before["main"], *a), lambda *a: interp_run(after["main"], *a),
                tirfun.build(after, target="llvm")):
        args = make_args()
        run(*args)
        outs.append([a.tobytes() for a in args if isinstance(a, np.ndarray)])
    assert outs[1] == outs[0] and outs[2] == outs[0]


RUN_TIME_MAX = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle, d1: T.int32, d3: T.int32):
    A = T.match_buffer(a, [d1, d3])
    B = T.match_buffer(b, [d1])
    C = T.match_buffer(c, [d1])
    for j, l in T.grid(d1, d3):
        with T.block("reduce"):
            vj, vl = T.axis.remap("SR", [j, l])
            with T.init():
                B[vj] = T.float32(-3.4028234663852886e38)
            B[vj] = T.max(B[vj], A[vj, vl])
    for j in range(d1):
        with T.block("C"):
            vj = T.axis.remap("S", [j])
            C[vj] = B[vj] + T.float32(1)
"""


@pytest.mark.parametrize("d3", [0, 1, 3])
def test_cache_write_of_a_reduction_over_a_run_time_count_copies_back_only_where_it_ran(d3):
    # with d3 = 0 no instance runs and B keeps its values: the copy back
    # runs under 0 < d3 instead of copying a cache nothing wrote (TVM copies
    # it back regardless); it then moves under the row loop with the
    # condition, the per-row register accumulator of a dynamic reduction
    mod = IRModule({"main": from_source(RUN_TIME_MAX)})
    sch = tirfun.Schedule(mod)
    copy = sch.cache_write(sch.get_block("reduce"), 0, "local")
    sch.reverse_compute_at(copy, sch.get_loops(sch.get_block("reduce"))[0])
    verify(sch.mod)
    text = sch.mod["main"].script()
    assert "T.where(0 < d3)" in text and "_fill" not in text, text
    A = np.random.default_rng(d3).standard_normal((4, d3)).astype("float32")
    assert_runs_alike(mod, sch.mod, lambda: [A, np.full(4, 7.0, "float32"), np.zeros(4, "float32"), 4, d3])
    # a consumer reading the cache would read it where nothing wrote it:
    # the cache is filled from B first, as before
    sch = tirfun.Schedule(mod)
    sch.cache_write(sch.get_block("reduce"), 0, "local", consumer_blocks=[sch.get_block("C")])
    assert "reduce_local_fill" in sch.mod["main"].script() or "B_local_fill" in sch.mod["main"].script()
    assert_equivalent(mod["main"], sch.mod["main"], sizes={"d1": 4, "d3": d3})


SPLIT_RUN_TIME_SUM = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, [4, n])
    B = T.match_buffer(b, [4])
    for i, k_0, k_1 in T.grid(4, (n + 3) // 4, 4):
        with T.block("sum"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(n, k_0 * 4 + k_1)
            T.where(k_0 * 4 + k_1 < n)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_cache_write_of_a_split_reduction_over_a_run_time_count_copies_back_where_its_first_step_runs(n):
    # the predicate bounds the reduction's loops only: where 0 < n the first
    # step runs for every row and writes it, where n = 0 none does
    mod = IRModule({"main": from_source(SPLIT_RUN_TIME_SUM)})
    sch = tirfun.Schedule(mod)
    copy = sch.cache_write(sch.get_block("sum"), 0, "local")
    # the copy back's 0 < n proves the reduction's guard at its first step:
    # it moves under the row loop (dlight's dynamic reduction)
    sch.reverse_compute_at(copy, sch.get_loops(sch.get_block("sum"))[0])
    verify(sch.mod)
    text = sch.mod["main"].script()
    assert "T.where(0 < n" in text and "_fill" not in text, text
    A = np.random.default_rng(n).standard_normal((4, n)).astype("float32")
    assert_runs_alike(mod, sch.mod, lambda: [A, np.full(4, 3.0, "float32"), n])



def test_cache_read_takes_the_scope_block_as_the_consumer_of_the_blocks_under_it():
    # TVM's consumer set of a block is it and the blocks directly under it:
    # the block that is the scope stands for the scope's blocks
    src = """
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""
    mod = R.blockize("j")(mod_of(src))
    out = R.cache_read("B", 0, "local", ["B_o"])(mod)
    text = out["main"].script()
    assert 'B[vi_o, vj_i] = A_local[0, vj_i] + T.float32(1.0)' in text, text
    assert out == R.cache_read("B", 0, "local")(mod)
    check(mod, out)


SYMBOLIC_TWO_STAGES = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, n))
    C = T.match_buffer(c, (m, n))
    B = T.alloc_buffer((m, n))
    for i, j in T.grid(m, n):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(m, n):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def test_cache_read_of_what_a_producer_split_at_run_time_sizes_writes():
    # B's rows split into two parts of (m + 1) // 2 write all of B under the
    # split's predicate; relaxed without it the bound of i_0 * ((m + 1) //
    # 2) is lost, and the region cover was refused. TVM bounds the producer
    # from below, as here
    sch = Schedule(IRModule({"main": from_source(SYMBOLIC_TWO_STAGES)}))
    sch.split(sch.get_loops(sch.get_block("B"))[0], [2, None])
    before = sch.mod
    sch.cache_read(sch.get_block("C"), 0, "local")
    after = sch.mod
    verify(after)
    assert "B_local[v0, v1] = B[v0, v1]" in after["main"].script()
    built = tirfun.build(after, target="llvm")
    for m, n in ((0, 3), (1, 1), (5, 3), (8, 2)):
        a = np.arange(m * n, dtype="float32").reshape(m, n)
        want, got, compiled = (np.zeros((m, n), "float32") for _ in range(3))
        interp_run(before["main"], a, want)
        interp_run(after["main"], a, got)
        built(a, compiled)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(compiled, a * 2 + 1)


def test_cache_read_still_refuses_a_read_the_producers_do_not_cover():
    # half of B is written: the lower bound holds the first half only
    src = SYMBOLIC_TWO_STAGES.replace("for i, j in T.grid(m, n):\n        with T.block(\"B\"):",
                                      "for i, j in T.grid(m // 2, n):\n        with T.block(\"B\"):")
    sch = Schedule(IRModule({"main": from_source(src)}))
    with pytest.raises(ScheduleError, match="region cover of the scope is not complete: block 'C' reads elements "
                                            "of buffer B"):
        sch.cache_read(sch.get_block("C"), 0, "local")


def test_cache_read_of_a_buffer_two_blocks_write_copies_what_either_writes():
    # TVM asks for one writer; the copy goes after the last and holds the
    # region of both, here the whole buffer (neither half holds the other)
    mod = mod_of(TWO_WRITERS)
    out = R.cache_read("C", 0, "shared")(mod)
    script = out["main"].script()
    assert "for ax0 in range(8):" in script and "B_shared[v0] = B[v0]" in script, script
    assert script.index('T.block("B1")') < script.index('T.block("B_shared")') < script.index('T.block("C")')
    assert_equivalent(mod["main"], out["main"])


def test_caches_of_an_update_cached_twice_keep_its_meaning():
    # cache_write of an update (it reads its output) fills the cache first:
    # the fill and the update then both write the cache, and TVM's next
    # cache_read or cache_write of the update's cache met two writers
    src = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * A[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] * T.float32(2)
"""
    mod = mod_of(src)
    cached = R.cache_write("update", 0, "local")(mod)
    twice = R.cache_write("update", 0, "shared")(cached)
    read = R.cache_read("C_local", 0, "shared")(cached)
    for out, stage in ((twice, "C_local_shared_fill"), (read, "C_local_shared")):
        assert f'T.block("{stage}")' in out["main"].script()
        assert_equivalent(mod["main"], out["main"])
        args = [np.arange(64, dtype="float32").reshape(8, 8) % 5, np.ones((8, 8), "float32"),
                np.zeros((8, 8), "float32")]
        want = [a.copy() for a in args]
        interp_run(mod["main"], *want)
        tirfun.build(out, target="llvm")(*args)
        for x, y in zip(want, args):
            np.testing.assert_array_equal(x, y)


def test_a_consumer_nested_in_a_child_of_the_scope_redirects_the_child_with_it():
    # TVM redirects the nested block and leaves outer's regions naming A,
    # which outer no longer reads; here outer's regions follow its body
    mod = mod_of(NESTED)
    out = R.cache_read("C", 0, "shared", ["B"])(mod)
    outer = next(b for b in walk(out["main"].body) if isinstance(b, Block) and b.name_hint == "outer")
    assert [r.buffer.name for r in outer.reads] == ["A_shared"]
    assert "C[vi_1] = A[vi_1]" in out["main"].script()
    check(mod, out)


@pytest.mark.parametrize("primitive", ["cache_read", "cache_write"])
def test_the_block_blockize_wrapped_is_a_consumer_of_the_outer_blocks_cache(primitive):
    # TVM scripts name the inner block as the consumer of the cache of
    # the outer one (blockize, then cache_read(B_o, ..., consumer_blocks=[B]))
    src = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""
    mod = mod_of(src)
    sch = Schedule(mod)
    outer = sch.blockize(sch.get_loops(sch.get_block("B"))[1])
    if primitive == "cache_read":
        sch.cache_read(outer, 0, "local", consumer_blocks=[sch.get_block("B")])
        assert 'T.block("A_local")' in sch.mod["main"].script()
    else:
        sch.cache_write(outer, 0, "local", consumer_blocks=[sch.get_block("B")])
        assert 'T.block("B_local")' in sch.mod["main"].script()
    check(mod, sch.mod)


@pytest.mark.parametrize("primitive", ["cache_write", "cache_read"])
def test_a_store_outside_the_blocks_that_runs_before_them_all_stays_before_the_copies(primitive):
    # TVM's rank-0 test program stores into B at the root before the block
    # that writes it: every copy is placed after that store, as the blocks
    # using B all are (a store between them is still refused)
    src = """
@T.prim_func
def main(A: T.Buffer((), "float32"), C: T.Buffer((), "float32")):
    B = T.alloc_buffer((), "float32")
    B[()] = A[()]
    with T.block("update"):
        for i in range(1):
            B[()] = B[()] + A[()]
    with T.block("C"):
        C[()] = B[()]
"""
    mod = mod_of(src)
    rewrite = R.cache_write("update", 0, "local") if primitive == "cache_write" else R.cache_read("C", 0, "local")
    out = rewrite(mod)
    script = out["main"].script()
    assert script.index("B[()] = A[()]") < script.index('\n    with T.block("')
    check(mod, out)
    between = src.replace("    with T.block(\"C\"):", "    B[()] = B[()] * T.float32(2)\n    with T.block(\"C\"):")
    with pytest.raises(R.CacheStageOrderError, match="a store outside the blocks writes buffer B"):
        rewrite(mod_of(between))


SPLIT_INTO_PARTS = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    rows, cols = T.int32(), T.int32()
    A = T.match_buffer(a, (rows, cols), "int32")
    C = T.match_buffer(c, (rows, cols), "int32")
    for i_0, i_1, j in T.grid(3, (rows + 2) // 3, cols):
        with T.block("C"):
            vi = T.axis.spatial(rows, i_0 * ((rows + 2) // 3) + i_1)
            vj = T.axis.spatial(cols, j)
            T.where(i_0 * ((rows + 2) // 3) + i_1 < rows)
            C[vi, vj] = A[vi, vj] * 2
"""


def _same_at_sizes(before, after):
    from tirfun.testing.equivalence import random_inputs
    for rows, cols in ((0, 2), (1, 3), (2, 2), (3, 1), (8, 2), (13, 3)):
        args = random_inputs(before["main"], np.random.default_rng(rows), sizes={"rows": rows, "cols": cols})
        expected = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        got = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        interp_run(before["main"], *expected)
        interp_run(after["main"], *got)
        for x, y in zip(expected, got):
            if isinstance(x, np.ndarray):
                assert (x == y).all(), (rows, cols)


def test_cache_write_of_a_later_part_of_a_split_into_parts_fills_the_rows_it_does_not_write():
    # the second part writes rows (rows + 2) // 3 on; its region, a loop
    # times a run-time size, cannot be bounded, so the copy back takes the
    # whole dimension: the cache is filled first, or the copy would put
    # back rows it never held (found by the soak: a wrong result before)
    mod = mod_of(SPLIT_INTO_PARTS)
    sch = Schedule(mod)
    sch.loop_partition("i_0", [1])
    sch.cache_write("C_i_01", 0, "global")
    names = [s.name_hint for _, s in walk_stmts(sch.mod["main"]) if isinstance(s, Block)]
    assert "C_global_fill" in names, names
    _same_at_sizes(mod, sch.mod)
    # the whole split, whose writes reach both ends, takes no fill
    whole = R.cache_write("C", 0, "global")(mod)
    assert "_fill" not in whole["main"].script()
    _same_at_sizes(mod, whole)


def test_a_compact_cache_of_a_part_empty_at_some_sizes_has_no_negative_extent():
    # with fewer rows than parts, the last part writes nothing: its region
    # clamped to the buffer has a negative extent, and the cache is
    # allocated with none
    mod = mod_of(SPLIT_INTO_PARTS)
    sch = Schedule(mod)
    sch.loop_partition("i_0", [2])
    sch.cache_write("C_i_01_partition", 0, "global")
    assert "C_global = T.alloc_buffer((T.max(" in sch.mod["main"].script()
    _same_at_sizes(mod, sch.mod)


def test_cache_write_of_a_fuse_over_run_time_extents_needs_no_fill():
    # TVM's less over (a, b, c, d) after fuse(i2, i3): the writes at
    # (f // d, f % d) over f < c * d reach both ends of both dimensions, so
    # the cache is copied back whole with no fill, and the block can then
    # be inlined into the copy (TVM does both)
    src = """
@T.prim_func
def main(x: T.handle, y: T.handle, z: T.handle):
    c, d = T.int64(), T.int64()
    X = T.match_buffer(x, (c, d))
    Y = T.match_buffer(y, (c,))
    Z = T.match_buffer(z, (c, d), "bool")
    for i2, i3 in T.grid(c, d):
        with T.block("Z"):
            v2, v3 = T.axis.remap("SS", [i2, i3])
            Z[v2, v3] = X[v2, v3] < Y[v2]
"""
    mod = R.fuse("i2", "i3")(IRModule({"main": from_source(src)}))
    cached = R.cache_write("Z", 0, "shared")(mod)
    names = [s.name_hint for s in stmt_nodes(cached["main"]) if isinstance(s, Block)]
    assert not [n for n in names if n.endswith("_fill")], names
    inlined = R.compute_inline("Z")(cached)
    for sizes in ({"c": 3, "d": 4}, {"c": 1, "d": 1}, {"c": 0, "d": 2}, {"c": 2, "d": 0}):
        assert_equivalent(mod["main"], cached["main"], sizes=sizes)
        assert_equivalent(mod["main"], inlined["main"], sizes=sizes)


def test_cache_write_of_a_split_by_a_size_fused_again_needs_no_fill():
    # TVM's multiply after split(i1, [4, None]) and fuse: the row is
    # f // q * q + f % q for q = (b + 3) // 4, which is f, guarded by the
    # same sum < b. Read so, the block writes every row of the cache, so
    # no fill comes first, and reverse_compute_inline of the copy back
    # (the block is then the cache's one writer) undoes the cache
    src = """
@T.prim_func
def main(x: T.handle, y: T.handle):
    b = T.int64()
    X = T.match_buffer(x, (T.int64(3), b))
    Y = T.match_buffer(y, (T.int64(3), b))
    for i, j in T.grid(T.int64(3), b):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj] * T.float32(3)
"""
    sch = Schedule(mod_of(src))
    _, j = sch.get_loops("Y")
    parts = sch.split(j, [4, None])
    sch.fuse(*parts)
    assert "vj = T.axis.spatial(b, j_0_j_1_fused)" in sch.mod["main"].script()
    cache = sch.cache_write("Y", 0, "local")
    assert "Y_local_fill" not in sch.mod["main"].script()
    verify(sch.mod)
    sch.reverse_compute_inline(cache)
    verify(sch.mod)
    for b in (1, 5, 8):
        assert_equivalent(mod_of(src)["main"], sch.mod["main"], sizes={"b": b})


def test_cache_write_reads_the_outer_guard_of_a_split_of_a_split_as_implied():
    # split(i, [None, 16]) then split(i_0, [None, 8]) over a run-time N
    # guards (i_0_0 * 8 + i_0_1) * 16 + i_1 < N and i_0_0 * 8 + i_0_1 <
    # (N + 15) // 16 (TVM's test_split_with_dynamic_inferred_factor). The
    # second follows from the first, so it skips no row the first keeps:
    # the block writes every row of the cache, no fill comes first, and
    # compute_inline of the block into the copy back applies
    src = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    N = T.int32()
    A = T.match_buffer(a, (N, 4))
    B = T.match_buffer(b, (N, 4))
    for i, j in T.grid(N, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""
    sch = Schedule(mod_of(src))
    i, _ = sch.get_loops("B")
    i_0, _ = sch.split(i, [None, 16])
    sch.split(i_0, [None, 8])
    text = sch.mod["main"].script()
    assert "(i_0_0 * 8 + i_0_1) * 16 + i_1 < N" in text and "i_0_0 * 8 + i_0_1 < (N + 15) // 16" in text, text
    sch.cache_write("B", 0, "shared")
    assert "B_shared_fill" not in sch.mod["main"].script()
    sch.compute_inline("B")
    verify(sch.mod)
    for n in (1, 17, 200):
        assert_equivalent(mod_of(src)["main"], sch.mod["main"], sizes={"N": n})
