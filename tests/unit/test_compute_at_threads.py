"""compute_at and reverse_compute_at under thread-bound loops, as TVM does
them: the region compute_at computes is relaxed over the thread-bound loops
at and above the target loop whose threads share the buffer's storage
scope, and what results keeps its meaning read with serial loops and, once
the copies are shared out among the threads, under the GPU semantics."""

from unittest import mock

import numpy as np
import pytest

import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.errors import BuildError, InterpError
from tirfun.interp import compile_func, run
from tirfun.lower import lower
from tirfun.nodes import IRModule
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import random_inputs

# S is read by every thread of a block; the threads of a block are 4 x 8
SCOPED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="SCOPE")
    for i in range(64):
        with T.block("S"):
            vi = T.axis.spatial(64, i)
            S[vi] = A[vi] * T.float32(2)
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("C"):
                    vi = T.axis.spatial(64, bx * 32 + ty * 8 + tx)
                    C[vi] = S[vi] + T.float32(1)
"""

# what compute_at("S", "tx") gives: S computed at SPAN for each thread
PLACED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="SCOPE")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                NEST
                with T.block("C"):
                    vi = T.axis.spatial(64, bx * 32 + ty * 8 + tx)
                    C[vi] = S[vi] + T.float32(1)
"""

NESTS = {
    # one thread block shares S: every thread computes the block's 32 elements
    "shared": """for ax0 in range(32):
                    with T.block("S"):
                        vi = T.axis.spatial(64, bx * 32 + ax0)
                        S[vi] = A[vi] * T.float32(2)""",
    # a warp shares S: relaxed over threadIdx.x only
    "warp": """for ax0 in range(8):
                    with T.block("S"):
                        vi = T.axis.spatial(64, bx * 32 + ty * 8 + ax0)
                        S[vi] = A[vi] * T.float32(2)""",
    # each thread computes what it reads itself
    "local": """with T.block("S"):
                    vi = T.axis.spatial(64, bx * 32 + ty * 8 + tx)
                    S[vi] = A[vi] * T.float32(2)""",
}
NESTS["global"] = NESTS["local"]


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def scoped(scope: str) -> IRModule:
    return mod_of(SCOPED.replace("SCOPE", scope))


def placed(scope: str) -> IRModule:
    return mod_of(PLACED.replace("SCOPE", scope).replace("NEST", NESTS[scope]))


def _serial(func, args):
    out = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    compile_func(func)(*out)  # thread-bound loops read as serial loops
    return out


def _gpu(func, args):
    out = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    run(func, *out)
    return out


def _same(xs, ys):
    for x, y in zip(xs, ys):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("scope", ["shared", "warp", "local", "global"])
def test_the_region_is_relaxed_over_the_threads_that_share_the_scope(scope):
    mod = scoped(scope)
    after = R.compute_at("S", "tx")(mod)
    assert_structural_equal(after["main"], placed(scope)["main"])
    args = random_inputs(mod["main"], 0)
    _same(_serial(mod["main"], args), _serial(after["main"], args))


@pytest.mark.parametrize("scope", ["local", "global"])
def test_per_thread_placements_run_on_threads_as_before(scope):
    mod = scoped(scope)
    after = R.compute_at("S", "tx")(mod)
    args = random_inputs(mod["main"], 1)
    # before, S is computed outside the kernel: its meaning is the serial one
    _same(_serial(mod["main"], args), _gpu(after["main"], args))


def test_a_shared_tile_is_computed_by_every_thread_until_the_copy_is_shared_out():
    mod = scoped("shared")
    sch = Schedule(mod)
    sch.compute_at(sch.get_block("S"), sch.get_loops(sch.get_block("C"))[-1])
    args = random_inputs(mod["main"], 2)
    expected = _serial(mod["main"], args)
    # every thread of the block writes the same 32 values (TVM's result):
    # the same bits in every order of the threads, so no race, only waste
    _same(expected, _gpu(lower(sch.mod, target="cuda")["main"], args))
    (ax0,) = sch.get_loops(sch.get_block("S"))[-1:]
    y, x = sch.split(ax0, [4, 8])
    sch.bind(y, "threadIdx.y")
    sch.bind(x, "threadIdx.x")
    lowered = lower(sch.mod, target="cuda")["main"]
    assert lowered.script().count('T.tvm_storage_sync("shared")') == 1
    _same(expected, _gpu(lowered, args))


def test_a_shared_placement_above_a_thread_loop():
    mod = scoped("shared")
    after = R.compute_at("S", "bx")(mod)
    text = after["main"].script()
    # above the threads the block runs in every one of them, over what they all read
    assert "for ax0 in range(32):" in text and "vi = T.axis.spatial(64, bx * 32 + ax0)" in text
    args = random_inputs(mod["main"], 3)
    _same(_serial(mod["main"], args), _serial(after["main"], args))
    local = R.compute_at("S", "bx")(scoped("local"))
    _same(_serial(mod["main"], args), _gpu(local["main"], args))


# a reduction into S under the threads: relaxed, every thread would add
# into the same shared elements at once
REDUCED = """
@T.prim_func
def main(A: T.Buffer((64, 4), "float32"), C: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="SCOPE")
    for i, k in T.grid(64, 4):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("C"):
                    vi = T.axis.spatial(64, bx * 32 + ty * 8 + tx)
                    C[vi] = S[vi] * T.float32(2)
"""


def test_a_reduction_shared_by_threads_is_refused():
    mod = mod_of(REDUCED.replace("SCOPE", "shared"))
    with pytest.raises(R.ThreadOverlapError) as info:
        R.compute_at("S", "tx")(mod)
    assert ("the block reads the shared buffer S it writes; not depending on it, it would run in every "
            "thread of loop 'ty' (threadIdx.y)") in info.value.summary
    with pytest.raises(R.ThreadOverlapError) as info:
        R.compute_at("S", "bx")(mod)
    assert "placed above it, it would run in every thread of loop 'ty'" in info.value.summary
    # the message shows the loop
    assert 'T.thread_binding(4, thread="threadIdx.y")' in str(info.value)
    # warp memory is relaxed over threadIdx.x, whose threads share it
    warp = mod_of(REDUCED.replace("SCOPE", "warp"))
    with pytest.raises(R.ThreadOverlapError) as info:
        R.compute_at("S", "tx")(warp)
    assert "reads the warp buffer S it writes; not depending on it, it would run in every thread of loop 'tx'" \
        in info.value.summary


@pytest.mark.parametrize("loop", ["tx", "bx"])
def test_a_reduction_into_local_memory_is_each_threads_own(loop):
    mod = mod_of(REDUCED.replace("SCOPE", "local"))
    after = R.compute_at("S", loop)(mod)
    args = random_inputs(mod["main"], 4)
    _same(_serial(mod["main"], args), _gpu(after["main"], args))


def test_reverse_compute_at_is_not_relaxed():
    # TVM relaxes for compute_at only: the consumer computes what the
    # producer wrote in its own thread
    src = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("S"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                S[vi] = A[vi] * T.float32(2)
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = S[vi] + T.float32(1)
"""
    mod = mod_of(src)
    after = R.reverse_compute_at("C", "tx")(mod)
    assert "T.axis.spatial(64, bx * 32 + tx)" in after["main"].script().split('T.block("C")')[1]
    args = random_inputs(mod["main"], 5)
    _same(_serial(mod["main"], args), _gpu(after["main"], args))


CROSS = '''
@T.prim_func
def main(A: T.Buffer((4, 2), "float32"), D: T.Buffer((4, 2), "float32")):
    B = T.alloc_buffer((4, 2), scope="SCOPE")
    for i_0 in T.thread_binding(2, thread="threadIdx.x"):
        for i_1 in T.thread_binding(2, thread="threadIdx.y"):
            for j in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(4, i_0 * 2 + i_1)
                    vj = T.axis.spatial(2, j)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 2):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] + T.float32(1)
'''


@pytest.mark.parametrize("scope", ["global", "local"])
def test_a_consumer_placed_above_its_producers_threads_is_refused(scope):
    # above threadIdx.y, D would read rows the other thread of i_1 wrote:
    # from global memory with no barrier (TVM's thread sync adds none), or
    # from a local buffer that holds only the reading thread's row
    mod = IRModule({"main": from_source(CROSS.replace("SCOPE", scope))})
    with pytest.raises(R.ThreadOverlapError, match=rf"placed above loop 'i_1' \(threadIdx.y\), the block "
                       rf"would read the {scope} buffer B that other threads of that loop write"):
        R.reverse_compute_at("D", "i_0")(mod)


def test_a_consumer_placed_above_its_producers_threads_reads_shared_memory_after_a_barrier():
    mod = IRModule({"main": from_source(CROSS.replace("SCOPE", "shared"))})
    after = R.reverse_compute_at("D", "i_0")(mod)
    lowered = lower(after, target="cuda")["main"]
    assert 'T.tvm_storage_sync("shared")' in lowered.script()
    args = random_inputs(mod["main"], 3)
    _same(_serial(mod["main"], args), _gpu(lowered, args))


# TVM's factorized reduction: the partial sums per thread, then their sum
FACTORED = """
@T.prim_func
def main(A: T.Buffer((16, 16, 16), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 16), "float32")
    for j in T.thread_binding(16, thread="blockIdx.x"):
        for i_o in T.thread_binding(4, thread="threadIdx.x"):
            for i_i, k in T.grid(4, 16):
                with T.block("B_rf"):
                    vi = T.axis.S(16, i_o * 4 + i_i)
                    vj, vk = T.axis.remap("SR", [j, k])
                    with T.init():
                        B_rf[vi, vj] = T.float32(0)
                    B_rf[vi, vj] = B_rf[vi, vj] + A[vj, vi, vk]
    for j, i in T.grid(16, 16):
        with T.block("B"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + B_rf[vi, vj]
"""


def test_a_reduction_moved_under_a_thread_loop_that_drives_its_reduction_variable_is_cross_thread():
    # the threads of i_o each add their part of the reduction: a cross-thread
    # reduction (TVM's test_reverse_compute_at_factorized), not several
    # threads racing to compute the same thing
    mod = mod_of(FACTORED)
    after = R.reverse_compute_at("B", "i_o", preserve_unit_loops=False)(mod)
    block = next(r for r in _realizes(after["main"]) if r.block.name_hint == "B")
    assert [v.script() for v in block.iter_values] == ["j", "i_o * 4 + ax0"]
    args = random_inputs(mod["main"], 4)
    _same(_serial(mod["main"], args), _gpu(after["main"], args))
    # its lowering needs the reduction loops to hold the block alone, as TVM's
    # does: here i_o also holds the partial sums, and the build says so
    with pytest.raises(BuildError, match=r"block B reduces across threads, but it is not the only statement "
                                         r"under its reduction loops"):
        lower(after, "cuda")


# found by the soak: D sums A_1 over k, and reverse_compute_at under the
# blockIdx loop binds k to it
ACROSS_BLOCKS = """
@T.prim_func
def main(C: T.Buffer((2,), "float32"), A_1: T.Buffer((2,), "uint8"), D: T.Buffer((), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("A_1"):
            vi = T.axis.spatial(2, i)
            A_1[vi] = T.Cast("uint8", C[vi])
    for k in range(2):
        with T.block("D"):
            vk = T.axis.reduce(2, k)
            with T.init():
                D[()] = T.float32(0)
            D[()] = D[()] + T.Cast("float32", A_1[vk])
"""


def test_a_reduction_moved_under_a_blockidx_loop_that_drives_its_reduction_variable_is_refused():
    # nothing combines the parts of thread blocks: TVM places the block so,
    # and its thread blocks race on D
    mod = mod_of(ACROSS_BLOCKS)
    rewrite = R.reverse_compute_at("D", "i")
    with pytest.raises(R.ThreadOverlapError) as info:
        rewrite(mod)
    assert ("loop 'i' (blockIdx.x) would drive a reduction variable of the block: each thread block would "
            "reduce its part into D, and nothing combines the parts of thread blocks") in info.value.summary
    # placed anyway, the GPU meaning says what goes wrong
    from tirfun.rewrites import compute_location

    with mock.patch.object(compute_location._ComputeAtBase, "_check_threads", lambda *a: None):
        forced = rewrite(mod)
    with pytest.raises(InterpError, match="data race on buffer D (.|\n)*in one kernel, in different thread blocks"):
        run(forced["main"], np.ones(2, np.float32), np.zeros(2, np.uint8), np.zeros((), np.float32))
    # the same reduction with the threads of one block is an all-reduce, as before
    one_block = mod_of(ACROSS_BLOCKS.replace("blockIdx.x", "threadIdx.x"))
    after = rewrite(one_block)
    args = random_inputs(one_block["main"], 4)
    _same(_serial(one_block["main"], args), _gpu(after["main"], args))
    # and the factored reduction of the test above, its threads made thread blocks
    swapped = FACTORED.replace("blockIdx.x", "SWAP").replace("threadIdx.x", "blockIdx.x").replace(
        "SWAP", "threadIdx.x")
    with pytest.raises(R.ThreadOverlapError, match="loop 'i_o' \\(blockIdx.x\\) would drive a reduction"):
        R.reverse_compute_at("B", "i_o", preserve_unit_loops=False)(mod_of(swapped))


def _realizes(func):
    from tirfun.analysis.traversal import walk_stmts
    from tirfun.nodes import BlockRealize

    return [s for _, s in walk_stmts(func) if isinstance(s, BlockRealize)]


def test_a_consumer_placed_in_threads_it_does_not_use_does_not_read_the_others_writes():
    # found by the soak: E reads B[0, 0], which only thread 0 writes; placed
    # under the thread loop, E runs in both threads and thread 1 reads it with
    # no barrier (TVM accepts it; the interpreter reports the race)
    src = """
@T.prim_func
def main(A: T.Buffer((3,), "float32"), E: T.Buffer((1,), "float32")):
    B = T.alloc_buffer((3, 2), scope="SCOPE")
    for j in T.thread_binding(2, thread="threadIdx.x"):
        for i in range(3):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi] * T.float32(2)
    for k in range(1):
        with T.block("E"):
            vk = T.axis.spatial(1, k)
            E[vk] = B[vk % 3, T.min(vk, 1)]
"""
    # a scope TVM does not know ("SCOPE": the parser takes any string, as
    # TVM's does) is one buffer every thread shares, as the interpreter runs it
    for scope in ("global", "shared", "SCOPE"):
        with pytest.raises(R.ThreadOverlapError, match=rf"under loop 'j' \(threadIdx.x\), which its binding does "
                                                       rf"not use, the block runs in every thread and reads the "
                                                       rf"{scope} buffer B that block 'B' writes thread by thread"):
            R.reverse_compute_at("E", "j")(mod_of(src.replace("SCOPE", scope)))
