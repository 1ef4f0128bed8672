"""The GPU meaning of thread-bound programs in the interpreter."""

import numpy as np
import pytest

import tirfun
from tirfun.errors import InterpError
from tirfun.interp import run

HEADER = '''
from tirfun.script import tir as T

@T.prim_func
'''

VECTOR_ADD = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
'''


def parse(text):
    return tirfun.script.from_source(text)


def rand(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype("float32")


def test_seed_vector_add_bound_to_blocks_and_threads_equals_the_unbound_program():
    mod = parse(VECTOR_ADD)
    sch = tirfun.Schedule(mod)
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1, i2 = sch.split(i, factors=[2, 2, 2])
    sch.reorder(i0, i2, i1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(i2, "threadIdx.x")
    a = rand(8)
    expected, got = np.zeros(8, "float32"), np.zeros(8, "float32")
    run(mod, a, expected)
    run(sch.mod, a, got)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, a + 1)


STAGED = HEADER + '''
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("kernel"):
            S = T.alloc_buffer((32,), "float32", scope="shared")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                S[tx] = A[bx * 32 + tx]
            SYNC
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                B[bx * 32 + tx] = S[31 - tx]
'''


def test_shared_memory_staged_through_a_barrier_runs_per_block():
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    run(parse(STAGED.replace("SYNC", 'T.tvm_storage_sync("shared")')), a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 32)[:, ::-1].reshape(-1))


def test_the_same_without_the_barrier_is_a_data_race():
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    with pytest.raises(InterpError) as info:
        run(parse(STAGED.replace("SYNC", "T.evaluate(0)")), a, b)
    text = str(info.value)
    assert "data race on buffer S at index (16,)" in text
    assert "thread (blockIdx.x=0, threadIdx.x=15) loads from it in\n    B[bx * 32 + tx_1] = S[31 - tx_1]" in text
    assert "thread (blockIdx.x=0, threadIdx.x=16) stores to it in\n    S[tx] = A[bx * 32 + tx]" in text
    assert "with no barrier between them" in text
    # the staging TVM schedules write: the message says lowering places the barrier
    assert 'barriers run as written here' in text
    assert 'interpret tirfun.lower(mod, target="cuda")' in text


def test_the_staging_without_the_barrier_runs_lowered_for_the_gpu_as_the_message_says():
    func = parse(STAGED.replace("SYNC", "T.evaluate(0)"))
    lowered = tirfun.lower(tirfun.IRModule({"main": func}), target="cuda")
    assert 'T.tvm_storage_sync("shared")' in lowered.script()
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    run(lowered, a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 32)[:, ::-1].reshape(-1))


def test_two_threads_writing_one_shared_element_get_no_word_of_barriers():
    # no barrier orders two writes: lowering places none, and the message says nothing of it
    source = STAGED.replace("SYNC", "T.evaluate(0)").replace("S[tx] = A", "S[tx // 2] = A")
    with pytest.raises(InterpError, match="data race on buffer S") as info:
        run(parse(source), np.arange(64, dtype="float32"), np.zeros(64, "float32"))
    assert "stores to it in" in str(info.value) and "loads from" not in str(info.value)
    assert "barriers run as written" not in str(info.value)


WRONG_BINDING = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(4, i // 2)
            vk = T.axis.spatial(2, i % 2)
            B[vi] = A[vi * 2 + vk]
'''


def test_two_threads_writing_one_element_is_a_race():
    with pytest.raises(InterpError, match=r"data race on buffer B at index \(0,\): thread "
                       r"\(threadIdx.x=0\) stores to it in\n.*B\[vi\] = A\[vi \* 2 \+ vk\]\nand thread "
                       r"\(threadIdx.x=1\) stores to it in"):
        run(parse(WRONG_BINDING), rand(8), np.zeros(4, "float32"))


REDUNDANT = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((4,), scope="shared")
    for i in T.thread_binding(8, thread="threadIdx.x"):
        for j in range(4):
            with T.block("S"):
                vj = T.axis.spatial(4, j)
                S[vj] = A[vj] * T.float32(2)
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = S[(vi + 1) % 4] + A[vi]
'''


def test_threads_storing_the_same_bits_then_reading_them_do_not_race():
    # every thread computes all of S, then reads an element that other
    # threads stored too: the same bits in every order of the threads
    a = rand(8)
    c = np.zeros(8, "float32")
    run(parse(REDUNDANT), a, np.zeros(4, "float32"), c)
    np.testing.assert_array_equal(c, (a[:4] * 2)[(np.arange(8) + 1) % 4] + a)


def test_a_read_before_the_readers_own_store_still_races():
    # thread 0 reads S[1] before any thread stored it; thread 1's store
    # changes its bits, so the value read depends on the order
    text = REDUNDANT.replace('''        for j in range(4):
            with T.block("S"):''', '''        with T.block("R"):
            vr = T.axis.spatial(8, i)
            C[vr] = S[1]
        for j in range(4):
            with T.block("S"):''')
    with pytest.raises(InterpError, match="data race on buffer S at index \\(1,\\)"):
        run(parse(text), rand(8), np.zeros(4, "float32"), np.zeros(8, "float32"))


def test_a_store_of_other_bits_after_a_same_bits_store_races():
    text = REDUNDANT.replace("S[vj] = A[vj] * T.float32(2)", "S[vj] = A[vj] * T.float32(2)\n"
                             "        with T.block('T'):\n"
                             "            vt = T.axis.spatial(8, i)\n"
                             "            S[0] = A[vt]")
    with pytest.raises(InterpError, match="data race on buffer S at index \\(0,\\)"):
        run(parse(text), rand(8), np.zeros(4, "float32"), np.zeros(8, "float32"))


def test_the_same_program_without_thread_bindings_is_fine():
    text = WRONG_BINDING.replace('T.thread_binding(8, thread="threadIdx.x")', "range(8)")
    b = np.zeros(4, "float32")
    a = rand(8)
    run(parse(text), a, b)
    np.testing.assert_array_equal(b, a[1::2])  # the last iteration of each pair wins


REDUCTION = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = T.float32(0)
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        B[0] = B[0] + A[tx]
'''


def test_a_reduction_across_threads_is_a_race():
    with pytest.raises(InterpError, match=r"data race on buffer B at index \(0,\): thread "
                       r"\(threadIdx.x=0\) stores to it"):
        run(parse(REDUCTION), rand(8), np.zeros(1, "float32"))


def test_a_reduction_guarded_to_one_thread_is_not():
    text = REDUCTION.replace("        B[0] = B[0] + A[tx]",
                             "        if tx == 0:\n            for k in range(8):\n"
                             "                B[0] = B[0] + A[k]")
    a, b = rand(8), np.zeros(1, "float32")
    run(parse(text), a, b)
    expected = np.float32(0)
    for v in a:
        expected = np.float32(expected + v)
    assert b[0] == expected


CROSS_BLOCK = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            B[tx] = A[bx * 2 + tx]
'''


def test_threads_of_different_blocks_race_on_global_memory():
    with pytest.raises(InterpError, match=r"data race on buffer B at index \(0,\): thread "
                       r"\(blockIdx.x=0, threadIdx.x=0\) stores to it in\n.*\nand thread "
                       r"\(blockIdx.x=1, threadIdx.x=0\) stores to it in\n.*\n"
                       r"in one kernel, in different thread blocks"):
        run(parse(CROSS_BLOCK), rand(8), np.zeros(8, "float32"))


REDUNDANT_BLOCKS = HEADER + '''
def main(A: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32"), C: T.Buffer((4, 4), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            D[tx] = A[tx] * T.float32(2)
            C[bx, tx] = D[tx] + T.float32(1)
'''


def test_blocks_storing_the_same_bits_then_reading_them_do_not_race():
    # every thread block computes D again (compute_at under blockIdx.x of a
    # global buffer) and reads what it stored: the same bits in every order
    a = rand(4)
    c = np.zeros((4, 4), "float32")
    run(parse(REDUNDANT_BLOCKS), a, np.zeros(4, "float32"), c)
    np.testing.assert_array_equal(c, np.broadcast_to(a * 2 + 1, (4, 4)))


def test_blocks_storing_other_bits_then_reading_them_race():
    text = REDUNDANT_BLOCKS.replace("D[tx] = A[tx] * T.float32(2)", "D[tx] = A[tx] * T.Cast(\"float32\", bx)")
    with pytest.raises(InterpError, match=r"data race on buffer D at index \(0,\).*\n(.*\n)*"
                       r"in one kernel, in different thread blocks"):
        run(parse(text), rand(4) + 1, np.zeros(4, "float32"), np.zeros((4, 4), "float32"))


def test_a_barrier_in_divergent_control_flow_is_an_error():
    text = STAGED.replace("            SYNC\n", "            for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                          "                if tx < 16:\n                    T.tvm_storage_sync(\"shared\")\n").replace(
        "S[31 - tx]", "S[tx]")
    with pytest.raises(InterpError, match=r"barrier in divergent control flow: thread "
                       r"\(blockIdx.x=0, threadIdx.x=0\) waits at T.tvm_storage_sync\(\"shared\"\)"
                       r"(.|\n)*while thread \(blockIdx.x=0, threadIdx.x=16\) has finished"):
        run(parse(text), rand(64), np.zeros(64, "float32"))


def test_loops_bound_to_one_tag_with_different_extents_are_an_error():
    text = STAGED.replace("SYNC", 'T.tvm_storage_sync("shared")').replace(
        'for tx in T.thread_binding(32, thread="threadIdx.x"):\n                B',
        'for tx in T.thread_binding(16, thread="threadIdx.x"):\n                B')
    with pytest.raises(InterpError, match=r"all loops bound to threadIdx.x in one kernel must have "
                       r"the same extent, but 32 and 16 differ:\n    for tx in T.thread_binding\(32"):
        run(parse(text), rand(64), np.zeros(64, "float32"))


def test_local_buffers_are_per_thread():
    text = HEADER + '''
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        with T.block("t"):
            L = T.alloc_buffer((1,), "float32", scope="local")
            L[0] = A[tx] * T.float32(2)
            B[tx] = L[0]
'''
    a, b = rand(32), np.zeros(32, "float32")
    run(parse(text), a, b)
    np.testing.assert_array_equal(b, a * 2)


LAUNCHED = HEADER + '''
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    bx = T.launch_thread("blockIdx.x", 2)
    S = T.allocate([32], "float32", "shared")
    S_1 = T.decl_buffer((32,), "float32", data=S, scope="shared")
    tx = T.launch_thread("threadIdx.x", 32)
    S_1[tx] = A[bx * 32 + tx]
    SYNC
    B[bx * 32 + tx] = S_1[31 - tx]
'''


ENV_THREADS = LAUNCHED.replace(
    '    bx = T.launch_thread("blockIdx.x", 2)',
    '    bx = T.env_thread("blockIdx.x")\n    tx = T.env_thread("threadIdx.x")\n'
    '    T.launch_thread(bx, 2)').replace(
    '    tx = T.launch_thread("threadIdx.x", 32)', '    T.launch_thread(tx, 32)')


@pytest.mark.parametrize("source", [LAUNCHED, ENV_THREADS], ids=["launch_thread", "env_thread"])
def test_launched_threads_get_the_same_meaning(source):
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    run(parse(source.replace("SYNC", 'T.tvm_storage_sync("shared")')), a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 32)[:, ::-1].reshape(-1))
    with pytest.raises(InterpError, match=r"data race on buffer S_1 at index \(16,\): thread "
                       r"\(blockIdx.x=0, threadIdx.x=15\) loads from it"):
        run(parse(source.replace("SYNC", "T.evaluate(0)")), a, b)


def test_a_warp_barrier_orders_the_threads_of_one_warp_only():
    text = HEADER + '''
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        with T.block("kernel"):
            S = T.alloc_buffer((64,), "float32", scope="shared")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                S[tx] = A[tx]
            T.tvm_storage_sync("warp")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                B[tx] = S[SOURCE]
'''
    a, b = rand(64), np.zeros(64, "float32")
    # within the warp: 31 - lane of the same warp
    run(parse(text.replace("SOURCE", "tx // 32 * 32 + 31 - tx % 32")), a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 32)[:, ::-1].reshape(-1))
    with pytest.raises(InterpError, match=r"data race on buffer S at index \(32,\)"):
        run(parse(text.replace("SOURCE", "(tx + 32) % 64")), a, b)


def test_virtual_threads_run_inside_their_thread():
    text = HEADER + '''
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        for v in T.thread_binding(8, thread="vthread.x"):
            B[0] = B[0] + A[v]
'''
    a, b = np.arange(8, dtype="float32"), np.zeros(1, "float32")
    run(parse(text), a, b)
    assert b[0] == 28


def test_a_global_barrier_orders_blocks():
    text = HEADER + '''
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        B[bx] = A[bx]
        SYNC
        A[bx] = B[3 - bx]
'''
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    run(parse(text.replace("SYNC", 'T.tvm_storage_sync("global")')), a, b)
    np.testing.assert_array_equal(a, [3, 2, 1, 0])
    with pytest.raises(InterpError, match="in one kernel, in different thread blocks"):
        run(parse(text.replace("SYNC", "T.evaluate(0)")), np.arange(4, dtype="float32"), b)


def test_functions_without_thread_bindings_take_the_plain_path():
    from tirfun.interp import gpu

    func = parse(VECTOR_ADD)
    assert not gpu.is_thread_bound(func)
    assert gpu.is_thread_bound(parse(CROSS_BLOCK))


TILED_MATMUL = HEADER + '''
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            with T.block("tile"):
                As = T.alloc_buffer((4, 4), "float32", scope="shared")
                Bs = T.alloc_buffer((4, 4), "float32", scope="shared")
                acc = T.alloc_buffer((1,), "float32", scope="local")
                for ty in T.thread_binding(4, thread="threadIdx.y"):
                    for tx in T.thread_binding(4, thread="threadIdx.x"):
                        acc[0] = T.float32(0)
                for k0 in range(2):
                    for ty in T.thread_binding(4, thread="threadIdx.y"):
                        for tx in T.thread_binding(4, thread="threadIdx.x"):
                            As[ty, tx] = A[by * 4 + ty, k0 * 4 + tx]
                            Bs[ty, tx] = B[k0 * 4 + ty, bx * 4 + tx]
                    T.tvm_storage_sync("shared")
                    for ty in T.thread_binding(4, thread="threadIdx.y"):
                        for tx in T.thread_binding(4, thread="threadIdx.x"):
                            for k1 in range(4):
                                acc[0] = acc[0] + As[ty, k1] * Bs[k1, tx]
                    SYNC
                for ty in T.thread_binding(4, thread="threadIdx.y"):
                    for tx in T.thread_binding(4, thread="threadIdx.x"):
                        C[by * 4 + ty, bx * 4 + tx] = acc[0]
'''


def test_a_shared_memory_tiled_matmul_with_both_barriers_runs():
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (8, 8)).astype("float32")
    b = rng.integers(-3, 4, (8, 8)).astype("float32")
    c = np.zeros((8, 8), "float32")
    run(parse(TILED_MATMUL.replace("SYNC", 'T.tvm_storage_sync("shared")')), a, b, c)
    np.testing.assert_array_equal(c, a @ b)


def test_the_tiled_matmul_without_the_barrier_after_the_compute_is_a_race():
    # the next tile's loads overwrite what other threads still read
    with pytest.raises(InterpError, match=r"data race on buffer As at index \(0, 0\): thread "
                       r"\(blockIdx.x=0, blockIdx.y=0, threadIdx.x=0, threadIdx.y=0\) stores to it"
                       r"(.|\n)*with no barrier between them\n\(barriers run as written here(.|\n)*"
                       r"\n  in block \"tile\", with by = 0, "
                       r"bx = 0, k0 = 0"):
        run(parse(TILED_MATMUL.replace("SYNC", "T.evaluate(0)")), np.ones((8, 8), "float32"),
            np.ones((8, 8), "float32"), np.zeros((8, 8), "float32"))


def test_an_out_of_bounds_access_in_a_thread_names_the_statement():
    text = TILED_MATMUL.replace("SYNC", 'T.tvm_storage_sync("shared")').replace(
        "A[by * 4 + ty, k0 * 4 + tx]", "A[by * 4 + ty, k0 * 4 + tx + 1]")
    with pytest.raises(InterpError, match=r"out-of-bounds load from buffer A at index \(0, 8\)"
                       r"(.|\n)*k0 = 1, ty_1 = 0, tx_1 = 3"):
        run(parse(text), np.ones((8, 8), "float32"), np.ones((8, 8), "float32"),
            np.zeros((8, 8), "float32"))


def test_a_barrier_deep_inside_nested_loops_pauses_the_thread():
    # deep nests continue in separate generated functions; a barrier there still pauses
    depth = 16
    lines = [f"{'    ' * d}for k{d} in range(1):" for d in range(depth)]
    lines += ["    " * depth + line for line in
              ("S[tx] = A[tx]", 'T.tvm_storage_sync("shared")', "B[tx] = S[3 - tx]")]
    text = HEADER + '''
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        with T.block("k"):
            S = T.alloc_buffer((4,), "float32", scope="shared")
            for tx in T.thread_binding(4, thread="threadIdx.x"):
''' + "\n".join("                " + line for line in lines) + "\n"
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    run(parse(text), a, b)
    np.testing.assert_array_equal(b, a[::-1])


ROW_SUM = HEADER + '''
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def test_a_cross_thread_reduction_is_a_collective_step_not_a_race():
    # TVM lowers a reduction loop bound to threadIdx to an all-reduce
    mod = parse(ROW_SUM)
    sch = tirfun.Schedule(mod)
    i, k = sch.get_loops(sch.get_block("B"))
    ko, _ = sch.split(k, factors=[4, None])
    sch.bind(i, "blockIdx.x")
    sch.bind(ko, "threadIdx.x")
    a = rand(4, 16)
    serial, threads = np.zeros(4, "float32"), np.zeros(4, "float32")
    run(mod, a, serial)
    run(sch.mod, a, threads)
    # each thread runs its own iterations in turn: with the outer reduction
    # loop bound, that is the serial order, bit for bit
    assert threads.tobytes() == serial.tobytes()


def test_every_thread_may_read_a_cross_thread_reduction_after_it():
    text = HEADER + '''
def main(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
    B = T.alloc_buffer((4,), "float32")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_0 in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k_0])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for t in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("C"):
                vi, vt = T.axis.remap("SS", [i, t])
                C[vi, vt] = A[vi, vt] - B[vi]
'''
    a = np.arange(64, dtype="float32").reshape(4, 16)
    c = np.zeros((4, 16), "float32")
    run(parse(text), a, c)
    np.testing.assert_array_equal(c, a - a.sum(axis=1, keepdims=True))


HALO = HEADER + '''
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")):
    S = T.alloc_buffer((10,), "float32", scope="shared")
    L = T.alloc_buffer((8,), "float32", scope="local")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(6, thread="threadIdx.x"):
            with T.block("load"):
                v = T.axis.spatial(10, bx * 4 + tx)
                S[v] = A[v]
        T.tvm_storage_sync("shared")
        for tx in T.thread_binding(6, thread="threadIdx.x"):
            with T.block("sum"):
                v = T.axis.spatial(8, bx * 4 + tx)
                T.where(tx < 4)
                L[0] = S[v] + S[v + 1]
                B[v] = L[0] + S[v + 2]
'''


def test_shared_and_local_buffers_allocated_at_the_root_are_per_block_and_per_thread():
    # both blocks load the two elements between their windows, and every
    # thread uses L[0]: TVM's lowering gives each block and thread its own copy
    a, b = np.arange(10, dtype="float32"), np.zeros(8, "float32")
    run(parse(HALO), a, b)
    np.testing.assert_array_equal(b, a[:8] + a[1:9] + a[2:])
