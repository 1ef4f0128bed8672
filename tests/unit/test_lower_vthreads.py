"""Virtual threads: loops of their thread, split at the barriers inside them
(TVM's virtual-thread injection), in the CUDA lowering and in the
interpreter's GPU meaning alike."""

import numpy as np
import pytest

import tirfun
from tirfun import IRModule, Schedule
from tirfun.analysis.traversal import walk, walk_stmts
from tirfun.errors import BuildError, InterpError
from tirfun.interp import run
from tirfun.nodes import BufferStore, For
from tirfun.script import from_source
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split

# TVM's read_at test program (test_tir_schedule_read_write_at.py), at 64x64
# with k = 16 (two steps of the staged k0 loop, so a tile is overwritten
# after the barrier): two virtual threads in each of y and x above the
# threads of a block
VTHREAD_MATMUL = """
@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((16, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vy in T.thread_binding(2, thread="vthread.y"):
                for vx in T.thread_binding(2, thread="vthread.x"):
                    for ty in T.thread_binding(4, thread="threadIdx.y"):
                        for tx in T.thread_binding(4, thread="threadIdx.x"):
                            for k0 in range(2):
                                for k1 in T.unroll(8):
                                    for i, j in T.grid(4, 4):
                                        with T.block("C"):
                                            vi = T.axis.S(64, by * 32 + vy * 16 + ty * 4 + i)
                                            vj = T.axis.S(64, bx * 32 + vx * 16 + tx * 4 + j)
                                            vk = T.axis.R(16, k0 * 8 + k1)
                                            T.reads([C[vi, vj], A[vi, vk], B[vk, vj]])
                                            T.writes([C[vi, vj]])
                                            with T.init():
                                                C[vi, vj] = T.float32(0)
                                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _staged(write_local: bool) -> IRModule:
    sch = Schedule(IRModule({"main": from_source(VTHREAD_MATMUL)}))
    block = sch.get_block("C")
    loops = sch.get_loops(block)
    sch.read_at(loops[6], block, 1, "shared")
    sch.read_at(loops[6], block, 2, "shared")
    if write_local:
        sch.write_at(loops[5], block, 0, "local")
    return sch.mod


def _matmul_args():
    rng = np.random.default_rng(7)
    # small integers: every sum is exact, so every order gives the same bits
    a = rng.integers(-4, 5, (64, 16)).astype("float32")
    b = rng.integers(-4, 5, (16, 64)).astype("float32")
    return a, b, a @ b


def _stores_under(loop: For, buffer: str) -> bool:
    return any(isinstance(n, BufferStore) and n.buffer.name == buffer for n in walk(loop.body))


@pytest.mark.parametrize("write_local", [False, True], ids=["C in global", "C in a local tile"])
def test_tvms_vthread_matmul_staged_in_shared_memory_lowers_builds_and_computes_the_product(write_local):
    mod = _staged(write_local)
    lowered = tirfun.lower(mod, target="cuda")
    text = lowered.script()
    assert "vthread" not in text and 'T.tvm_storage_sync("shared")' in text
    loops = [s for _, s in walk_stmts(lowered["main"]) if isinstance(s, For)]
    vloops = [s for s in loops if s.loop_var.name.startswith(("vy", "vx"))]
    # the products run per virtual thread; the copies into shared memory,
    # the same in every virtual thread, once (as TVM shares them)
    assert vloops and not any(_stores_under(s, "A_shared") or _stores_under(s, "B_shared") for s in vloops)
    if write_local:
        # the tile of C is each virtual thread's own across the barriers: four copies of 16
        assert 'T.allocate([64], "float32", "local")' in text
    a, b, want = _matmul_args()
    c = np.zeros((64, 64), "float32")
    run(lowered["main"], a, b, c)
    np.testing.assert_array_equal(c, want)
    rt = tirfun.build(mod, target="cuda")
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)
    d = np.zeros((64, 64), "float32")
    assert run_split(rt, a, b, d) == [("main_kernel", (2, 2, 1), (4, 4, 1))]
    np.testing.assert_array_equal(d, want)


# each virtual thread keeps a value in its local L across the barrier, and an
# index in a let: split at the barrier, each needs its own L and the let again
LOCAL_ACROSS_THE_BARRIER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((16,), "float32", scope="shared")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for v in T.thread_binding(2, thread="vthread.x"):
            p: T.int32 = v * 8 + tx
            L_data = T.allocate([1], "float32", "local")
            L = T.decl_buffer((1,), data=L_data, scope="local")
            L[0] = A[p] * T.float32(2)
            S[p] = L[0]
            T.tvm_storage_sync("shared")
            B[p] = S[15 - p] + L[0]
"""


def test_a_local_buffer_and_a_let_across_the_barrier_are_each_virtual_threads_own():
    func = from_source(LOCAL_ACROSS_THE_BARRIER)
    a = np.arange(16, dtype="float32") * 3 + 1
    want = 2 * a[::-1] + 2 * a
    b = np.zeros(16, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, want)
    rt = tirfun.build(func, target="cuda")
    text = rt.lowered.script()
    assert 'T.allocate([2], "float32", "local")' in text and text.count("v * 8 + tx") == 1, text
    c = np.zeros(16, "float32")
    run_split(rt, a, c)
    np.testing.assert_array_equal(c, want)
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)


# a stretch that does not name the virtual thread but reads what it writes:
# every virtual thread must run it (S[tx] doubles), it is not shared
ACCUMULATES_WITHOUT_THE_VTHREAD = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
    S = T.alloc_buffer((8,), "float32", scope="shared")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        S[tx] = T.float32(0)
        for v in T.thread_binding(2, thread="vthread.x"):
            S[tx] = S[tx] + A[tx]
            T.tvm_storage_sync("shared")
            B[v * 8 + tx] = S[7 - tx]
"""


def test_a_stretch_without_the_virtual_thread_runs_once_only_where_that_is_the_same():
    func = from_source(ACCUMULATES_WITHOUT_THE_VTHREAD)
    a = np.arange(8, dtype="float32") + 1
    want = np.tile(2 * a[::-1], 2)
    b = np.zeros(16, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, want)
    rt = tirfun.build(func, target="cuda")
    c = np.zeros(16, "float32")
    run_split(rt, a, c)
    np.testing.assert_array_equal(c, want)


# the statement above the virtual-thread loop is the thread's, not each
# virtual thread's: TVM runs it once per thread
OUTSIDE_THE_VTHREADS = """
@T.prim_func
def main(A: T.Buffer((2,), "float32"), G: T.Buffer((4,), "float32")):
    for tx in T.thread_binding(4, thread="threadIdx.x"):
        G[tx] = G[tx] + T.float32(1)
        for v in T.thread_binding(2, thread="vthread.x"):
            G[tx] = G[tx] + A[v]
"""


def test_what_lies_outside_the_virtual_threads_runs_once_per_thread():
    func = from_source(OUTSIDE_THE_VTHREADS)
    a = np.array([10, 100], "float32")
    g = np.zeros(4, "float32")
    run(func, a, g)
    np.testing.assert_array_equal(g, [111] * 4)
    rt = tirfun.build(func, target="cuda")
    h = np.zeros(4, "float32")
    run_split(rt, a, h)
    np.testing.assert_array_equal(h, g)


# each of 16 threads runs 4 virtual threads; each pair stores its element
# of S, then reads the mirrored one, which another pair stored
MIRRORED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), "float32", scope="shared")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for v in T.thread_binding(4, thread="vthread.x"):
            S[v * 16 + tx] = A[v * 16 + tx]
            {between}
            B[v * 16 + tx] = S[63 - v * 16 - tx]
"""


@pytest.mark.parametrize("between", ['T.tvm_storage_sync("shared")', "T.evaluate(0)"],
                         ids=["written", "placed by lowering"])
def test_a_barrier_inside_a_virtual_thread_splits_its_loop(between):
    # written by hand or placed by lowering, the barrier is one that all four
    # virtual threads of a thread reach before any reads: the loop is split there
    rt = tirfun.build(from_source(MIRRORED.format(between=between)), target="cuda")
    text = rt.lowered.script()
    assert "vthread" not in text and text.count("tvm_storage_sync") == 1, text
    assert text.index("S[v * 16 + tx] = A") < text.index("tvm_storage_sync") < text.index("B[v_1 * 16 + tx]")
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    run_split(rt, a, b)
    np.testing.assert_array_equal(b, a[::-1])
    c = np.zeros(64, "float32")
    run(rt.lowered["main"], a, c)
    np.testing.assert_array_equal(c, a[::-1])
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)


REFUSED = [
    ("a condition on the virtual thread",
     """if v < 2:
                T.tvm_storage_sync("shared")""",
     "this condition depends on the virtual thread"),
    ("a loop whose extent depends on the virtual thread",
     """for k in range(v + 1):
                T.tvm_storage_sync("shared")""",
     "the bounds of this loop depends on the virtual thread"),
    ("a let that reads memory",
     """q: T.int32 = T.Cast("int32", A[v])
            T.tvm_storage_sync("shared")
            B[q] = S[q]""",
     "the value of this let depends on the virtual thread and reads memory"),
]


@pytest.mark.parametrize("name, between, message", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_barrier_not_every_virtual_thread_reaches_at_once_is_refused(name, between, message):
    func = from_source(MIRRORED.format(between=between))
    with pytest.raises(BuildError, match=r"a barrier \(T.tvm_storage_sync\) inside a loop bound to a "
                                         r"vthread, which cannot be split there: " + message):
        tirfun.build(func, target="cuda")
    with pytest.raises(InterpError, match="cannot be split there: " + message):
        run(func, np.zeros(64, "float32"), np.zeros(64, "float32"))


# the same exchange with launched threads (T.launch_thread, TVM's older
# form), and with the statements in an opaque block
LAUNCHED = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    tx = T.launch_thread("threadIdx.x", 8)
    v = T.launch_thread("vthread", 4)
    S[v * 8 + tx] = A[v * 8 + tx]
    T.tvm_storage_sync("shared")
    B[v * 8 + tx] = S[31 - v * 8 - tx]
"""

IN_A_BLOCK = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for v in T.thread_binding(4, thread="vthread.x"):
            with T.block("exchange"):
                S[v * 8 + tx] = A[v * 8 + tx]
                T.tvm_storage_sync("shared")
                B[v * 8 + tx] = S[31 - v * 8 - tx]
"""


@pytest.mark.parametrize("src", [LAUNCHED, IN_A_BLOCK], ids=["launched threads", "an opaque block"])
def test_launched_virtual_threads_and_an_opaque_block_split_alike(src):
    func = from_source(src)
    a = np.arange(32, dtype="float32")
    b = np.zeros(32, "float32")
    run(func, a, b)
    np.testing.assert_array_equal(b, a[::-1])
    rt = tirfun.build(func, target="cuda")
    c = np.zeros(32, "float32")
    run_split(rt, a, c)
    np.testing.assert_array_equal(c, a[::-1])
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)
