"""GPU programs whose schedules changed the interpreter's results, found by
running random block schedules on the thread-bound programs of the tests:

* a cross-thread reduction into a ``local`` buffer: TVM's all-reduce leaves
  the whole result in every thread's copy, where the interpreter had left
  each thread the part it reduced, so ``set_scope`` to ``global`` (one
  buffer the threads update in turn) seemed to change the result;
* a ``shared`` or ``local`` buffer allocated outside the kernels and used
  by a kernel and by host code (or another kernel): TVM allocates it in the
  kernel, so no value crosses, and CUDA has no such program; the
  interpreter had read the never-written storage (NaN) as its result, and a
  schedule moving the two uses together seemed to change it;
* ``unroll`` of a threadIdx loop, which takes the binding away as TVM's
  does: where a cross-thread reduction into shared or global memory is then
  run whole by every thread of another axis, the threads race, and unroll
  refuses;
* a consumer placed by reverse_compute_at inside the innermost thread loop
  of a cross-thread reduction, where each thread holds only its part;
* a ``shared`` cache allocated in a block every thread runs, each thread
  keeping its own values in the same elements;
* a reindexed cache whose copy would run the loops feeding a block bound to
  a ``T.launch_thread`` variable, outside the launch;
* cache_inplace beside a block that reduces across threads: every thread
  would copy the shared elements in and back while the others update them;
* a ``local`` buffer each thread writes alike (a sum every thread redoes)
  moved by set_scope or a write cache to a scope the threads share, where
  they would all store into one element; and a cross-thread sum moved to
  ``global``, whose write-back no barrier orders before the other threads'
  reads;
* a ``shared`` reindexed cache of a match buffer whose view moves with the
  thread: the indices are the same in every thread, the elements not;
* a producer placed by compute_at under a loop of a kernel it shares with
  its consumer, whose iteration fixes a variable the producer reads but
  does not write by;
* ``unroll`` of a vthread loop holding a barrier inside the threads of a
  threadIdx loop: each thread runs the virtual threads in turn, crossing
  the first one's barrier before the last one's stores.
"""

import attrs
import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.errors import InterpError
from tirfun.interp import compile_func, run
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, random_inputs
from tirfun.testing.schedules import thread_binding_problems

# a row sum reduced across the 40 threads of a block into a local buffer,
# which the same threads then read
LOCAL_ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((2, 40), "int32"), C: T.Buffer((2, 40), "int32")):
    B = T.alloc_buffer((2,), "int32", scope="local")
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for k in T.thread_binding(40, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        for t in T.thread_binding(40, thread="threadIdx.x"):
            with T.block("C"):
                vi, vt = T.axis.remap("SS", [i, t])
                C[vi, vt] = A[vi, vt] * B[vi]
"""

# the same reduced three times per block, each pass into a fresh partial
# result, the last read: the threads' turns must start from each pass's own
# init, not from the previous pass's total
LOCAL_ROW_SUMS_IN_A_LOOP = """
@T.prim_func
def main(A: T.Buffer((2, 3, 8), "int32"), C: T.Buffer((2, 3, 8), "int32")):
    B = T.alloc_buffer((2,), "int32", scope="local")
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for j in range(3):
            for k in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        B[vi] = 0
                    B[vi] = B[vi] + A[vi, vj, vk]
            for t in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("C"):
                    vi, vj, vt = T.axis.remap("SSS", [i, j, t])
                    C[vi, vj, vt] = A[vi, vj, vt] * B[vi]
"""

# the sum across both thread dimensions of a block
LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS = """
@T.prim_func
def main(A: T.Buffer((2, 4, 8), "int32"), C: T.Buffer((2, 4, 8), "int32")):
    B = T.alloc_buffer((2,), "int32", scope="local")
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for ky in T.thread_binding(4, thread="threadIdx.y"):
            for kx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vy, vx = T.axis.remap("SRR", [i, ky, kx])
                    with T.init():
                        B[vi] = 0
                    B[vi] = B[vi] + A[vi, vy, vx]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                with T.block("C"):
                    vi, vy, vx = T.axis.remap("SSS", [i, ty, tx])
                    C[vi, vy, vx] = A[vi, vy, vx] * B[vi]
"""


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def _copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def _gpu_and_serial(func, seed=0):
    args = random_inputs(func, np.random.default_rng(seed))
    gpu, serial = _copies(args), _copies(args)
    run(func, *gpu)
    compile_func(func)(*serial)  # thread-bound loops read as serial loops
    return args, gpu, serial


@pytest.mark.parametrize("source", [LOCAL_ROW_SUM, LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS])
def test_every_thread_reads_the_whole_cross_thread_sum_from_its_local_copy(source):
    mod = mod_of(source)
    args, gpu, serial = _gpu_and_serial(mod["main"])
    a = args[0]
    axes = tuple(range(1, a.ndim))
    assert gpu[1].tolist() == (a * a.sum(axis=axes, keepdims=True)).tolist()
    assert gpu[1].tobytes() == serial[1].tobytes()
    # as the lowered program's all-reduce gives it
    lowered = _copies(args)
    run(tirfun.lower(mod, "cuda")["main"], *lowered)
    assert lowered[1].tobytes() == gpu[1].tobytes()


def test_set_scope_of_the_cross_thread_sum_to_shared_keeps_the_result():
    mod = mod_of(LOCAL_ROW_SUM)
    after = R.set_scope("B", 0, "shared")(mod)
    for seed in range(3):
        assert_equivalent(mod["main"], after["main"], trials=1, seed=seed)
    # lowered, a barrier orders the write-back before the other threads' reads
    args = random_inputs(mod["main"], np.random.default_rng(0))
    want, got = _copies(args), _copies(args)
    run(tirfun.lower(mod, "cuda")["main"], *want)
    run(tirfun.lower(after, "cuda")["main"], *got)
    assert got[1].tobytes() == want[1].tobytes()


def test_set_scope_of_the_cross_thread_sum_to_global_is_refused():
    # the first thread writes the sum back, the others read it: no barrier
    # orders global memory (TVM places them for shared memory only)
    from unittest import mock

    from tirfun.rewrites import storage

    mod = mod_of(LOCAL_ROW_SUM)
    with pytest.raises(R.SharedScopeUnderThreadError) as info:
        R.set_scope("B", 0, "global")(mod)
    assert ("block 'B' reduces across the threads of loop 'k' (bound to threadIdx.x) into buffer B; in scope "
            "'local' the all-reduce left the result in each thread's copy, in scope 'global' the first thread "
            "would write it back and the others read it with no barrier between") in str(info.value)
    with mock.patch.object(storage, "check_per_thread_writes", lambda *a: None):
        after = R.set_scope("B", 0, "global")(mod)
    args = random_inputs(mod["main"], np.random.default_rng(0))
    with pytest.raises(InterpError, match="data race on buffer B"):
        run(tirfun.lower(after, "cuda")["main"], *_copies(args))


@pytest.mark.parametrize("decompose", [False, True])
def test_each_pass_of_a_cross_thread_sum_in_a_loop_starts_from_its_own_init(decompose):
    mod = mod_of(LOCAL_ROW_SUMS_IN_A_LOOP)
    if decompose:
        # the init becomes a block of its own that every thread runs on its copy
        mod = R.decompose_reduction("B", "k")(mod)
    args, gpu, serial = _gpu_and_serial(mod["main"], 1)
    a = args[0]
    assert gpu[1].tolist() == (a * a.sum(axis=2, keepdims=True)).tolist()
    assert gpu[1].tobytes() == serial[1].tobytes()


# the kernel fills a shared buffer, the host reads it
SHARED_READ_ON_THE_HOST = """
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


def test_a_shared_buffer_a_kernel_fills_and_the_host_reads_has_no_meaning():
    func = from_source(SHARED_READ_ON_THE_HOST)
    args = random_inputs(func, np.random.default_rng(0))
    with pytest.raises(InterpError, match=r"buffer S of scope 'shared' is allocated outside the kernels and "
                       r"used in host code and in a kernel: TVM allocates it inside the kernel, one per "
                       r"thread block(.|\n)*in host code:\n +C\[vi_1\] = S\[vi_1\] \+ T.float32\(1.0\)\n"
                       r"  in a kernel:\n +S\[vi\] = A\[vi\] \* T.float32\(2.0\)"):
        run(func, *args)


# one kernel fills a local buffer, another reads it
LOCAL_ACROSS_KERNELS = """
@T.prim_func
def main(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    L = T.alloc_buffer((8,), "int32", scope="local")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("L"):
            vi = T.axis.spatial(8, tx)
            L[vi] = A[vi] + 1
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("C"):
            vi = T.axis.spatial(8, tx)
            C[vi] = L[vi] * 2
"""


def test_a_local_buffer_two_kernels_use_has_no_meaning():
    func = from_source(LOCAL_ACROSS_KERNELS)
    with pytest.raises(InterpError, match=r"buffer L of scope 'local' is allocated outside the kernels and "
                       r"used in a kernel and in another kernel: TVM allocates it inside the kernel, one "
                       r"per thread,"):
        run(func, np.arange(8, dtype="int32"), np.zeros(8, "int32"))
    # one kernel using it is fine
    fused = LOCAL_ACROSS_KERNELS.replace('''            L[vi] = A[vi] + 1
    for tx in T.thread_binding(8, thread="threadIdx.x"):
''', '''            L[vi] = A[vi] + 1
''')
    c = np.zeros(8, "int32")
    run(from_source(fused), np.arange(8, dtype="int32"), c)
    assert c.tolist() == [2 * (k + 1) for k in range(8)]


# a sum across launched threads: cache_write to local puts the copy back to
# B after the launch, on the host, as TVM's does
LAUNCHED_SUM = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    tx = T.launch_thread("threadIdx.x", 32)
    with T.block("sum"):
        vk = T.axis.reduce(32, tx)
        with T.init():
            B[0] = T.float32(0)
        B[0] = B[0] + A[vk]
"""


def test_a_local_cache_of_a_launched_kernel_used_on_the_host_is_found():
    mod = mod_of(LAUNCHED_SUM)
    after = R.cache_write("sum", 0, "local")(mod)
    # what the schedule drawer asks before taking a step: T.launch_thread
    # starts a kernel as a thread-bound loop does
    assert thread_binding_problems(after["main"]) == [
        "buffer B_local of scope local is used in the kernel of T.launch_thread('threadIdx.x') and "
        "outside it, where the GPU gives the kernel its own"]
    args = random_inputs(mod["main"], np.random.default_rng(1))
    with pytest.raises(InterpError, match="buffer B_local of scope 'local' is allocated outside the kernels"):
        run(after["main"], *args)


# unroll takes a loop's thread binding away, as TVM's does
SUM_BESIDE_Y_THREADS = """
@T.prim_func
def main(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4, 8), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.KIND:
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
        for j in T.thread_binding(8, thread="threadIdx.y"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = 1
"""


def test_unroll_refuses_to_leave_a_reduction_to_every_thread_of_another_axis():
    mod = mod_of(SUM_BESIDE_Y_THREADS.replace("KIND", 'thread_binding(32, thread="threadIdx.x")'))
    with pytest.raises(R.ReplicatedThreadReductionError, match=r"loop 'k' is bound to threadIdx.x and feeds "
                       r"the reduction variable vk of block 'sum'(.|\n)*threadIdx.y of its kernel"):
        R.unroll("k")(mod)
    # what TVM's unroll gives: the eight threadIdx.y threads of a block each
    # sum the row into B at once
    unrolled = from_source(SUM_BESIDE_Y_THREADS.replace("KIND", "unroll(32)"))
    args = random_inputs(unrolled, np.random.default_rng(0))
    with pytest.raises(InterpError, match=r"data race on buffer B"):
        run(unrolled, *args)


@pytest.mark.parametrize("loop", ["k", "t"])
def test_unroll_of_a_loop_of_a_cross_thread_sum_into_local_keeps_the_result(loop):
    # every thread sums the row into its own copy, or stores the product for
    # every t: the same values in each thread
    mod = mod_of(LOCAL_ROW_SUM)
    after = R.unroll(loop)(mod)
    assert_equivalent(mod["main"], after["main"], trials=2, seed=0)


def test_unroll_of_the_only_loop_of_an_axis_keeps_a_global_reduction():
    # each thread block has one thread left, which sums its row
    mod = mod_of(LOCAL_ROW_SUM.replace('scope="local"', 'scope="global"').split("        for t in")[0])
    after = R.unroll("k")(mod)
    assert 'thread="threadIdx.x"' not in after.script()
    assert_equivalent(mod["main"], after["main"], trials=2, seed=0)


# a local buffer that host code alone uses, beside a kernel (what
# reindex_cache_read leaves before the copy moves into the kernel)
LOCAL_ON_THE_HOST_BESIDE_A_KERNEL = """
@T.prim_func
def main(A: T.Buffer((8, 32), "int32"), B: T.Buffer((8,), "int32")):
    A_reindex = T.alloc_buffer((8, 32), "int32")
    A_local = T.alloc_buffer((32, 8), "int32", scope="local")
    for i, k in T.grid(8, 32):
        with T.block("A_local"):
            vi, vk = T.axis.remap("SS", [i, k])
            A_local[vk, vi] = A[vi, vk]
    for i, k in T.grid(8, 32):
        with T.block("A_reindex"):
            vi, vk = T.axis.remap("SS", [i, k])
            A_reindex[vi, vk] = A_local[vk, vi]
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A_reindex[vi, vk]
"""


def test_a_local_buffer_the_host_alone_uses_beside_a_kernel_is_fine():
    a = np.arange(256, dtype="int32").reshape(8, 32)
    b = np.zeros(8, "int32")
    run(from_source(LOCAL_ON_THE_HOST_BESIDE_A_KERNEL), a, b)
    assert b.tolist() == a.sum(axis=1).tolist()


# every thread runs the block B_o; its row of A, and of B, is the thread's own
PER_THREAD_BLOCK = """
@T.prim_func
def main(A: T.Buffer((32, 4), "float32"), B: T.Buffer((32, 4), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(32, bx * 8 + tx)
                    vk = T.axis.spatial(4, k)
                    B[vi, vk] = A[vi, vk] * T.float32(2)
"""


@pytest.mark.parametrize("cache", [
    R.cache_read("B", 0, "shared"), R.cache_write("B", 0, "shared.dyn"),
    R.reindex_cache_read("B", 0, "shared", lambda vk: (vk,)),
    R.reindex_cache_write("B", 0, "shared", lambda vk: (vk,))], ids=lambda r: r.primitive)
def test_a_shared_cache_allocated_in_a_block_every_thread_runs_is_refused(cache):
    # TVM allocates the cache once per thread block, and every thread keeps
    # its own row in it: a race. A local cache is each thread's own.
    mod = R.blockize("k")(IRModule({"main": from_source(PER_THREAD_BLOCK)}))
    with pytest.raises(R.SharedScopeUnderThreadError, match=r"allocated in block 'B_o', which every thread of "
                                                             r"loop 'tx' \(bound to threadIdx.x\) runs"):
        cache(mod)
    local = attrs.evolve(cache, storage_scope="local")(mod)
    assert 'scope="local"' in local.script()
    assert_equivalent(mod["main"], local["main"])


def test_a_shared_cache_of_what_the_threads_of_a_block_share_is_allowed():
    # the row vi // 8 is the thread block's: every thread copies the same values
    src = PER_THREAD_BLOCK.replace("A[vi, vk]", "A[vi // 8, vk]")
    mod = R.blockize("k")(IRModule({"main": from_source(src)}))
    for cache in (R.cache_read("B", 0, "shared"), R.cache_write("B", 0, "shared")):
        after = cache(mod)
        assert 'scope="shared"' in after.script()
        assert_equivalent(mod["main"], after["main"])


@pytest.mark.parametrize("preserve", [True, False])
def test_a_consumer_placed_inside_the_thread_loops_of_a_cross_thread_reduction_is_refused(preserve):
    # found by fuzzing: C under kx read each thread's part of B, and every
    # thread wrote all of C from its own part
    mod = mod_of(LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS)
    with pytest.raises(R.ThreadOverlapError, match=r"under loop 'kx' \(threadIdx.x\), block 'B' reduces into B "
                                                   r"across the threads of the loop: inside it each thread holds "
                                                   r"only its own part of the result"):
        R.reverse_compute_at("C", "kx", preserve, 1)(mod)
    # with kx serial, ky is the innermost thread loop of the reduction: after
    # the kx loop, under ky, each thread still holds its part
    serial = mod_of(LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS.replace(
        'for kx in T.thread_binding(8, thread="threadIdx.x")', "for kx in range(8)"))
    with pytest.raises(R.ThreadOverlapError, match=r"under loop 'ky' \(threadIdx.y\), block 'B' reduces"):
        R.reverse_compute_at("C", "ky", preserve, 1)(serial)


LAUNCHED_SUM = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    tx = T.launch_thread("threadIdx.x", 32)
    with T.block("sum"):
        vk = T.axis.reduce(32, tx)
        T.reads(A[vk])
        T.writes(B[0])
        with T.init():
            B[0] = T.float32(0.0)
        B[0] = B[0] + A[vk]
"""


def test_a_reindexed_cache_of_a_block_bound_to_a_launched_thread_is_refused():
    # the copy would bind vk to tx before T.launch_thread binds it
    mod = IRModule({"main": from_source(LAUNCHED_SUM)})
    with pytest.raises(R.ReindexIndexVariableError) as info:
        tirfun.Schedule(mod).reindex_cache_read("sum", 0, "global", lambda vk: [vk])
    assert ("the block's binding names tx, bound between the place of the copy and the block by something "
            "other than a loop") in str(info.value)


def test_compute_at_under_a_thread_loop_keeps_the_row_each_iteration_summed():
    # C, in iteration j, reads the sum of row (i, j); TVM's placement runs
    # every row under t and leaves row 2's
    mod = mod_of(LOCAL_ROW_SUMS_IN_A_LOOP)
    out = R.compute_at("B", "t", index=-2)(mod)
    assert 'vi, vj, vk = T.axis.remap("SSR", [i, j, ax0])' in out.script(), out.script()
    a = np.arange(48, dtype="int32").reshape(2, 3, 8) % 5
    c = np.zeros((2, 3, 8), "int32")
    run(out["main"], a, c)
    np.testing.assert_array_equal(c, a * a.sum(axis=2)[:, :, None])


SUM_ACROSS_THREADS_INPLACE = """
@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    for k in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(4):
            with T.block("sum"):
                vi, vk = T.axis.remap("{kinds}", [i, k])
                T.reads(B[vi, {col}], A[vi, vk])
                T.writes(B[vi, {col}])
                B[vi, {col}] = B[vi, {col}] + A[vi, vk]
"""


@pytest.mark.parametrize("scope", ["global", "local", "shared"])
def test_cache_inplace_beside_a_reduction_across_threads_is_refused(scope):
    # every thread adds its column into B[vi, 0]; the copies in and back sit
    # under the thread loop, so each thread would copy B[vi, 0] in and back
    # while the others update it
    from unittest import mock

    from tirfun.rewrites import cache

    mod = IRModule({"main": from_source(SUM_ACROSS_THREADS_INPLACE.format(kinds="SR", col="0"))})
    with pytest.raises(R.ThreadOverlapError) as info:
        R.cache_inplace("sum", 0, scope)(mod)
    assert ("the block writes the same elements of B in every thread of loop 'k' (bound to threadIdx.x), "
            "which it reduces across") in str(info.value)
    with mock.patch.object(cache, "_check_copies_per_thread", lambda *a: None):
        placed = R.cache_inplace("sum", 0, scope)(mod)
    with pytest.raises((InterpError, AssertionError)):
        assert_equivalent(mod["main"], placed["main"], trials=1)


def test_cache_inplace_beside_a_block_each_thread_owns_keeps_the_meaning():
    # each thread updates its own column: the copies are its own too
    mod = IRModule({"main": from_source(SUM_ACROSS_THREADS_INPLACE.format(kinds="SS", col="vk"))})
    out = R.cache_inplace("sum", 0, "global")(mod)
    assert_equivalent(mod["main"], out["main"], trials=2)


MIRRORED_THROUGH_SHARED = """
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for v in T.thread_binding(4, thread="vthread.x"):
            S[v * 16 + tx] = A[v * 16 + tx]
            T.tvm_storage_sync("shared")
            B[v * 16 + tx] = S[{place}]
"""


def test_unroll_of_virtual_threads_refuses_a_read_moved_ahead_of_a_write():
    # each of the 16 threads runs the 4 virtual threads in turn, crossing
    # the barrier of v = 0 before any thread stores the elements of v = 3
    mod = IRModule({"main": from_source(MIRRORED_THROUGH_SHARED.format(place="63 - v * 16 - tx"))})
    with pytest.raises(R.UnrolledBarrierError) as info:
        R.unroll("v")(mod)
    assert ("iteration 0 of thread tx=0 would read S[63] after the barrier before iteration 3 of thread "
            "tx=15 writes it before the barrier") in str(info.value)


def test_unroll_of_virtual_threads_reading_their_own_elements_keeps_the_meaning():
    mod = IRModule({"main": from_source(MIRRORED_THROUGH_SHARED.format(place="v * 16 + tx"))})
    out = R.unroll("v")(mod)
    assert_equivalent(mod["main"], out["main"], trials=2)




@pytest.mark.parametrize("primitive", ["set_scope", "cache_write", "reindex_cache_write"])
@pytest.mark.parametrize("scope", ["shared", "global"])
def test_a_sum_each_thread_redoes_in_its_own_local_buffer_stays_local(primitive, scope):
    # every thread sums the whole row into its own B (compute_at under the
    # thread loops put it there); in a scope the threads share, they would
    # all accumulate into one element at once
    sch = tirfun.Schedule(mod_of(LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS))
    sch.compute_at("B", "tx")
    with pytest.raises(R.SharedScopeUnderThreadError) as info:
        if primitive == "reindex_cache_write":
            sch.reindex_cache_write("B", 0, scope, lambda vi, vy, vx: [vi])
        else:
            getattr(sch, primitive)("B", 0, scope)
    assert "block 'B' writes the same elements of " in str(info.value)
    assert "in every thread of loop 'tx' (bound to threadIdx.x); in scope 'local' each thread had its own " \
        "copy" in str(info.value)


ROWS_THROUGH_VIEWS = """
@T.prim_func
def main(A: T.Buffer((32, 4), "float32"), B: T.Buffer((32, 4), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("B_o"):
                vi = T.axis.spatial(32, bx * 8 + tx)
                T.reads(A[vi, 0:4])
                T.writes(B[vi, 0:4])
                W0 = T.match_buffer(B[vi, 0:4], (1, 4), offset_factor=1)
                W1 = T.match_buffer(A[vi, 0:4], (1, 4), offset_factor=1)
                for k in range(4):
                    with T.block("B"):
                        vk = T.axis.spatial(4, k)
                        T.reads(W1[0, vk])
                        T.writes(W0[0, vk])
                        W0[0, vk] = W1[0, vk] * T.float32(2)
"""


@pytest.mark.parametrize("scope", ["shared", "shared.dyn"])
def test_a_shared_cache_of_a_view_that_moves_with_the_thread_is_refused(scope):
    # W1[0, vk] is the same index in every thread, but W1 views row vi of
    # A, one row per thread: the threads would put their rows in one cache
    mod = IRModule({"main": from_source(ROWS_THROUGH_VIEWS)})
    with pytest.raises(R.SharedScopeUnderThreadError) as info:
        tirfun.Schedule(mod).reindex_cache_read("B", 0, scope, lambda vk: [vk])
    assert "the cache of buffer W1 would be a " in str(info.value)
    # made anyway (the view taken for its indices alone), the threads race
    from unittest import mock

    from tirfun.rewrites import scopes

    with mock.patch.object(scopes, "_through_views", lambda blocks, buffer, indices: indices):
        sch = tirfun.Schedule(mod)
        sch.reindex_cache_read("B", 0, scope, lambda vk: [vk])
    with pytest.raises(AssertionError, match="data race on buffer W1_shared"):
        assert_equivalent(mod["main"], sch.mod["main"], trials=1)
    # in local storage each thread keeps its own row
    sch = tirfun.Schedule(mod)
    sch.reindex_cache_read("B", 0, "local", lambda vk: [vk])
    assert_equivalent(mod["main"], sch.mod["main"], trials=2)


def test_reverse_compute_at_under_the_threads_keeps_the_consumers_thread_binding():
    # C's vy, vx are bound to ty, tx, loops around the target loop that B's
    # region leaves free: TVM runs them over their whole domains there, so
    # every thread would write every element of C; they keep their binding
    sch = tirfun.Schedule(mod_of(LOCAL_SUM_OVER_TWO_THREAD_DIMENSIONS))
    sch.compute_at("B", "tx")
    before = sch.mod
    sch.reverse_compute_at("C", "ax1")
    assert 'vi_1, vy_1, vx_1 = T.axis.remap("SSS", [i, ty, tx])' in sch.mod.script()
    assert_equivalent(before["main"], sch.mod["main"], trials=2)


@pytest.mark.parametrize("scope", ["shared", "shared.dyn"])
def test_a_shared_write_cache_of_values_read_through_a_moving_view_is_refused(scope):
    # W0[0, vk] = W1[0, vk] * 2 stores the same expression in every thread,
    # but W1 views a row per thread: the values differ
    mod = IRModule({"main": from_source(ROWS_THROUGH_VIEWS)})
    with pytest.raises(R.SharedScopeUnderThreadError) as info:
        tirfun.Schedule(mod).reindex_cache_write("B", 0, scope, lambda vk: [vk])
    assert "the cache of buffer W0 would be a " in str(info.value)
    sch = tirfun.Schedule(mod)
    sch.reindex_cache_write("B", 0, "local", lambda vk: [vk])
    assert_equivalent(mod["main"], sch.mod["main"], trials=2)


@pytest.mark.parametrize("scope", ["shared", "shared.dyn"])
def test_a_shared_read_cache_of_a_view_that_moves_with_the_thread_is_refused(scope):
    # cache_read of W1, which views row vi of A in each thread
    mod = IRModule({"main": from_source(ROWS_THROUGH_VIEWS)})
    with pytest.raises(R.SharedScopeUnderThreadError, match="the cache of buffer W1 would be a "):
        R.cache_read("B", 0, scope)(mod)
    out = R.cache_read("B", 0, "local")(mod)
    assert_equivalent(mod["main"], out["main"], trials=2)
