"""read_at and write_at: TVM v0.20's form of the copies, the fill write_at
adds where TVM would copy back (or read) elements nothing wrote, every
error class with its message, and the results run, built and replayed."""

from unittest import mock

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run
from tirfun.analysis.traversal import walk_stmts
from tirfun.nodes import Block, IRModule
from tirfun.rewrites import read_write_at
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.equivalence import NotEquivalentError, assert_equivalent, random_inputs
from corner_sources import GUARDED_DIVISION, MOVING_DOMAIN

GPU_MATMUL = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    for k0 in range(4):
                        for k1, i, j in T.grid(8, 4, 4):
                            with T.block("C"):
                                vi = T.axis.spatial(32, by * 16 + ty * 4 + i)
                                vj = T.axis.spatial(32, bx * 16 + tx * 4 + j)
                                vk = T.axis.reduce(32, k0 * 8 + k1)
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

# each thread block stages its 16x8 tiles of A and B in shared memory per
# step of k0, and its 16x16 tile of C, copied back once every thread of the
# block has computed its 4x4 part
GPU_MATMUL_STAGED = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    A_shared = T.alloc_buffer((32, 32), scope="shared")
    B_shared = T.alloc_buffer((32, 32), scope="shared")
    C_shared = T.alloc_buffer((32, 32), scope="shared")
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    for k0 in range(4):
                        with T.block("A_shared"):
                            v0 = T.axis.spatial(2, by)
                            v1 = T.axis.spatial(4, k0)
                            T.reads(A[v0 * 16:v0 * 16 + 16, v1 * 8:v1 * 8 + 8])
                            T.writes(A_shared[v0 * 16:v0 * 16 + 16, v1 * 8:v1 * 8 + 8])
                            T.block_attr({"auto_copy": 1})
                            for ax0, ax1 in T.grid(16, 8):
                                A_shared[v0 * 16 + ax0, v1 * 8 + ax1] = A[v0 * 16 + ax0, v1 * 8 + ax1]
                        with T.block("B_shared"):
                            w0 = T.axis.spatial(4, k0)
                            w1 = T.axis.spatial(2, bx)
                            T.reads(B[w0 * 8:w0 * 8 + 8, w1 * 16:w1 * 16 + 16])
                            T.writes(B_shared[w0 * 8:w0 * 8 + 8, w1 * 16:w1 * 16 + 16])
                            T.block_attr({"auto_copy": 1})
                            for bx0, bx1 in T.grid(8, 16):
                                B_shared[w0 * 8 + bx0, w1 * 16 + bx1] = B[w0 * 8 + bx0, w1 * 16 + bx1]
                        for k1, i, j in T.grid(8, 4, 4):
                            with T.block("C"):
                                vi = T.axis.spatial(32, by * 16 + ty * 4 + i)
                                vj = T.axis.spatial(32, bx * 16 + tx * 4 + j)
                                vk = T.axis.reduce(32, k0 * 8 + k1)
                                T.reads(A_shared[vi, vk], B_shared[vk, vj])
                                T.writes(C_shared[vi, vj])
                                with T.init():
                                    C_shared[vi, vj] = T.float32(0)
                                C_shared[vi, vj] = C_shared[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                    with T.block("C_shared"):
                        u0 = T.axis.spatial(2, by)
                        u1 = T.axis.spatial(2, bx)
                        T.reads(C_shared[u0 * 16:u0 * 16 + 16, u1 * 16:u1 * 16 + 16])
                        T.writes(C[u0 * 16:u0 * 16 + 16, u1 * 16:u1 * 16 + 16])
                        T.block_attr({"auto_copy": 1})
                        for cx0, cx1 in T.grid(16, 16):
                            C[u0 * 16 + cx0, u1 * 16 + cx1] = C_shared[u0 * 16 + cx0, u1 * 16 + cx1]
"""

TILED = """
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    for i0, j0, k0, i1, j1, k1 in T.grid(4, 4, 4, 8, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i0 * 8 + i1)
            vj = T.axis.spatial(32, j0 * 8 + j1)
            vk = T.axis.reduce(32, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

STRIDED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            B[vi * 2] = A[vi]
"""

ACCUMULATE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            B[vi] = B[vi] + A[vi]
"""

PREDICATED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            T.where(i1 < 3)
            B[vi] = A[vi]
"""

TWO_PARTS = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0 in range(2):
        for i1 in range(2):
            with T.block("B1"):
                vi = T.axis.spatial(16, i0 * 8 + i1)
                B[vi] = A[vi]
        for i2 in range(2):
            with T.block("B2"):
                vi = T.axis.spatial(16, i0 * 8 + 6 + i2)
                B[vi] = A[vi] * T.float32(2)
"""

READS_BESIDE = """
@T.prim_func
def main(B: T.Buffer((4, 2), "float32")):
    for i0, i1 in T.grid(2, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i0 * 2 + i1)
            B[vi, 0] = B[vi, 1] + T.float32(1)
"""

READ_THEN_WRITE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0 in range(2):
        for i1 in range(8):
            with T.block("R"):
                vi = T.axis.spatial(16, i0 * 8 + i1)
                B[vi] = A[vi]
        for i2 in range(8):
            with T.block("W"):
                vi = T.axis.spatial(16, i0 * 8 + i2)
                A[vi] = T.float32(1)
"""


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def _runs_alike_lowered_for_the_gpu(before: IRModule, after: IRModule) -> None:
    """Both modules lowered for CUDA (barriers placed) give the same result
    under the interpreter's GPU meaning, which reports any race."""
    args = random_inputs(before["main"], np.random.default_rng(3))
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    run(tirfun.lower(before, "cuda")["main"], *want)
    run(tirfun.lower(after, "cuda")["main"], *got)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)


def _builds_for_cuda_alike(before: IRModule, after: IRModule) -> None:
    """Both modules built for CUDA (the PTX checked by ptxas where it is
    installed) and run with the interpreter as the GPU give the same result."""
    from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split

    outs = []
    for mod in (before, after):
        rt = tirfun.build(mod, target="cuda")
        if ptxas_path() is not None:
            ptxas_check(rt.get_source("ptx"))
        args = random_inputs(before["main"], np.random.default_rng(5))
        run_split(rt, *args)
        outs.append(args)
    for w, g in zip(*outs):
        np.testing.assert_array_equal(w, g)


def test_a_gpu_matmul_stages_its_tiles_in_shared_memory_as_in_tvm():
    mod = mod_of(GPU_MATMUL)
    sch = Schedule(mod)
    block = sch.get_block("C")
    _by, _bx, _ty, tx, k0, *_ = sch.get_loops(block)
    a = sch.read_at(k0, block, 0, "shared")
    sch.read_at(k0, block, 1, "shared")
    c = sch.write_at(tx, block, 0, "shared")
    assert (sch.get(a).name_hint, sch.get(c).name_hint) == ("A_shared", "C_shared")
    assert_structural_equal(sch.mod["main"], from_source(GPU_MATMUL_STAGED))
    verify(sch.mod)
    _runs_alike_lowered_for_the_gpu(mod, sch.mod)
    _builds_for_cuda_alike(mod, sch.mod)
    # the trace replays as records, through JSON, and as the Python it prints
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == sch.mod
    namespace = {}
    exec(sch.trace.as_python(), namespace)
    again = Schedule(mod)
    namespace["apply_trace"](again)
    assert again.mod == sch.mod


def _fills(mod: IRModule) -> list[str]:
    return [s.name_hint for _, s in walk_stmts(mod["main"]) if isinstance(s, Block) and s.name_hint.endswith("_fill")]


def _check_runs(before: IRModule, after: IRModule) -> None:
    verify(after)
    assert_equivalent(before["main"], after["main"], trials=2)
    text = after.script()
    assert_structural_equal(from_source(text), after)
    args = random_inputs(after["main"], np.random.default_rng(1))
    expected = [a.copy() for a in args]
    run(before["main"], *expected)
    tirfun.build(after, target="llvm")(*args)
    for e, a in zip(expected, args):
        np.testing.assert_array_equal(e, a)


def test_read_at_and_write_at_copy_the_tiles_of_a_cpu_matmul_without_a_fill():
    mod = mod_of(TILED)
    after = (R.read_at("k0", "C", 0, "global") >> R.read_at("k0", "C", 1, "local")
             >> R.write_at("j0", "C", 0, "local"))(mod)
    # every element of the tile is written in each iteration of j0 (its init
    # runs there): the copy back is TVM's alone
    assert _fills(after) == []
    copy = R.get(after, "C_local")
    assert [r.extent.value for r in copy.writes[0].region] == [8, 8]
    _check_runs(mod, after)


def test_write_at_inside_k_relies_on_the_init_of_an_earlier_run_only_where_nothing_else_writes_the_buffer():
    # write_at at k1: vk = k0 * 8 + k1 starts only when k0 does, so the
    # init runs in an earlier run of k1's loop; the copy still holds what it
    # wrote, as nothing else in the scope writes C: no fill
    mod = mod_of(TILED)
    after = R.write_at("k1", "C", 0, "local")(mod)
    assert _fills(after) == []
    _check_runs(mod, after)
    # where another block of the scope writes C too, the copy may hold a
    # value older than C's: filled
    zeroed = mod_of(TILED.replace("    for i0, j0, k0", """    for z0, z1 in T.grid(32, 32):
        with T.block("Z"):
            vz0, vz1 = T.axis.remap("SS", [z0, z1])
            C[vz0, vz1] = T.float32(1)
    for i0, j0, k0"""))
    after = R.write_at("k1", "C", 0, "local")(zeroed)
    assert len(_fills(after)) == 1
    _check_runs(zeroed, after)


def test_statements_outside_blocks_beside_the_copies_use_the_buffer_itself():
    mod = mod_of(LOOSE_AROUND)
    after = R.read_at("i0", "W", 1, "local")(mod)  # A, read first by the statement before W
    body = R.get(after, R.LoopRef("i0")).body
    assert type(body.seq[0]).__name__ == "BufferStore" and body.seq[1].block.name_hint == "A_local"
    _check_runs(mod, after)
    # write_at redirects what runs up to the last declared write: there the
    # statement before W writes B outside a block (TVM would redirect it
    # into a copy whose region misses it)
    with pytest.raises(R.UndeclaredAccessError):
        R.write_at("i0", "W", 0, "local")(mod)
    mod = mod_of(LOOSE_AROUND.replace("        B[i0] = A[i0 * 8] + T.float32(1)\n", ""))
    after = R.write_at("i0", "W", 0, "local")(mod)  # B, written last by the statement after W
    body = R.get(after, R.LoopRef("i0")).body
    assert [getattr(getattr(x, "block", None), "name_hint", None) for x in body.seq] == \
        ["B_local_fill", None, "B_local", None]
    _check_runs(mod, after)


def test_a_region_bound_that_may_divide_by_zero_copies_the_whole_dimension():
    # B reads A at an index with 40 // (vi - 3), under vi != 3: the copy
    # would evaluate it unguarded at i = 3 (TVM's divides by zero); it
    # copies all of A instead
    mod = mod_of(GUARDED_DIVISION)
    after = R.read_at("i", "B", 0, "shared")(mod)
    copy = R.get(after, "A_shared")
    assert copy.reads[0].region[0].min.value == 0 and copy.reads[0].region[0].extent.value == 64
    _check_runs(mod, after)


def test_write_at_after_decompose_reduction_reads_what_the_init_block_wrote_before():
    # the init block, earlier in the iteration of j0, writes the whole tile
    # the updates then read: no fill
    mod = mod_of(TILED)
    after = (R.decompose_reduction("C", "k0") >> R.write_at("j0", "C_update", 0, "local"))(mod)
    assert _fills(after) == []
    _check_runs(mod, after)


def test_write_at_inside_the_reduction_loop_needs_no_fill_when_the_init_runs_in_its_first_iteration():
    # the copy persists across the iterations of k0: the updates of one read
    # what the init and the updates of the ones before wrote
    mod = mod_of(TILED)
    after = R.write_at("k0", "C", 0, "local")(mod)
    assert _fills(after) == []
    _check_runs(mod, after)


FILLED = [
    pytest.param(STRIDED, R.write_at("i0", "B", 0, "local"), id="strided"),
    pytest.param(ACCUMULATE, R.write_at("i0", "B", 0, "local"), id="read-before-write"),
    pytest.param(PREDICATED, R.write_at("i0", "B", 0, "local"), id="predicate"),
    pytest.param(TWO_PARTS, R.write_at("i0", "B1", 0, "local"), id="two-writers"),
    pytest.param(READ_THEN_WRITE, R.write_at("i0", "W", 0, "local"), id="earlier-reader"),
    # the block reads B[vi, 1], outside the column it writes: the fill
    # copies what the blocks read as well
    pytest.param(READS_BESIDE, R.write_at("i0", "B", 0, "local"), id="reads-beside-the-write"),
]


@pytest.mark.parametrize("src, pipeline", FILLED)
def test_write_at_fills_the_copy_where_an_element_may_be_copied_back_or_read_unwritten(src, pipeline):
    mod = mod_of(src)
    after = pipeline(mod)
    assert len(_fills(after)) == 1
    _check_runs(mod, after)
    # without the fill (TVM's form) the copy back writes, or the blocks
    # read, elements of the copy nothing wrote
    with mock.patch.object(read_write_at._ReadWriteAt, "_fill_position", lambda *a: None):
        unfilled = pipeline(mod)
    assert _fills(unfilled) == []
    with pytest.raises(NotEquivalentError):
        assert_equivalent(mod["main"], unfilled["main"], trials=2)


def test_write_at_lets_reads_after_the_last_write_read_the_buffer_copied_back():
    # TVM aborts here (R2 reads A after W, the last write); R2 reads A after
    # the copy back, as it read A before. R reads A before W writes it in
    # the iteration: the copy is filled first
    mod = mod_of(READ_WRITE_READ)
    after = R.write_at("i0", "W", 0, "local")(mod)
    body = R.get(after, R.LoopRef("i0")).body
    kinds = [item.block.name_hint if type(item).__name__ == "BlockRealize" else "loop" for item in body.seq]
    assert kinds == ["A_local_fill", "loop", "loop", "A_local", "loop"]
    _check_runs(mod, after)


# R and R2 read A around W's write of it (R2 reads B too, after R wrote it)
READ_WRITE_READ = READ_THEN_WRITE + """
        for i3 in range(8):
            with T.block("R2"):
                vi = T.axis.spatial(16, i0 * 8 + i3)
                B[vi] = B[vi] + A[vi]
"""

# statements outside any block before the first declared read and after
# the last declared write: TVM places the copies by the blocks alone, and so
# does tirfun; those statements use the buffer itself
LOOSE_AROUND = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0 in range(2):
        B[i0] = A[i0 * 8] + T.float32(1)
        for i1 in range(8):
            with T.block("W"):
                vi = T.axis.spatial(16, i0 * 8 + i1)
                B[vi] = B[vi] + A[vi]
        B[i0 * 8 + 1] = B[i0 * 8 + 1] * T.float32(2)
"""

LOOSE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0 in range(2):
        for i1 in range(8):
            with T.block("R"):
                vi = T.axis.spatial(16, i0 * 8 + i1)
                B[vi] = A[vi]
        B[i0] = A[i0 + 1]
"""

POINTER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0 in range(2):
        for i1 in range(8):
            with T.block("R"):
                vi = T.axis.spatial(16, i0 * 8 + i1)
                T.reads(A[vi])
                T.writes(B[vi])
                T.evaluate(T.call_extern("int32", "touch", A.data))
                B[vi] = A[vi]
"""

LOCAL_UNDER_THREADS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    L = T.alloc_buffer((8,), scope="local")
    for t in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("L"):
            vt = T.axis.spatial(8, t)
            L[vt] = A[vt]
        with T.block("B"):
            vt = T.axis.spatial(8, t)
            B[vt] = L[vt] * T.float32(2)
"""

GPU_ACCUMULATE = GPU_MATMUL.replace("""                                with T.init():
                                    C[vi, vj] = T.float32(0)
""", "")

ERRORS = [
    ("not-under", READ_THEN_WRITE, R.read_at("i2", "R", 0, "local"), R.BlockNotUnderLoopError,
     r"^read_at: block 'R': block 'R' is not under loop 'i2'; read_at copies what the loop's body reads"),
    ("write-after-read", READ_THEN_WRITE, R.read_at("i0", "R", 0, "local"), R.ReadWriteAtOrderError,
     r"^read_at: block 'R': block 'W' writes A at or after the first read of A in loop 'i0''s body; the copy, "
     r"made before that read, would not see the write"),
    ("loose", LOOSE, R.read_at("i0", "R", 0, "local"), R.UndeclaredAccessError,
     r"^read_at: block 'R': loop 'i0''s body accesses A outside any block \(A\[i0 \+ 1\]\), where no declared "
     r"region says what to copy"),
    ("pointer", POINTER, R.read_at("i0", "R", 0, "local"), R.OpaqueAccessError,
     r"^read_at: block 'R': loop 'i0''s body reaches buffer A other than by its loads and stores: its data "
     r"pointer A_handle is used; that access would not see the copy"),
    ("own-copies", LOCAL_UNDER_THREADS, R.read_at("t", "B", 0, "shared"), R.SharedScopeUnderThreadError,
     r"^read_at: block 'B': the copy would span the threads of loop 't' \(bound to threadIdx.x\), reading or "
     r"writing every thread's part of buffer L; in scope 'local' each of those threads has its own copy of it"),
    ("moving-domain", MOVING_DOMAIN, R.read_at("k", "B", 0, "local"), R.UnsupportedRegionError,
     r"^read_at: block 'B': the region of A to copy depends on j, whose domain i for 4 depends on the loops "
     r"around it; the copy block cannot take it as an iteration variable"),
    ("copy-back-in-every-thread", GPU_MATMUL, R.write_at("ty", "C", 0, "local"), R.SharedScopeUnderThreadError,
     r"^write_at: block 'C': the copy back runs in every thread of loop 'tx' \(bound to threadIdx.x\) inside the "
     r"loop's body, copying what all of them wrote; that needs the copy in a 'shared' scope \(lowering places the "
     r"barrier before the copy back\) and buffer C in one the threads share, not 'local' and 'global'"),
    ("fill-across-threads", GPU_ACCUMULATE, R.write_at("k0", "C", 0, "shared"), R.SharedScopeUnderThreadError,
     r"^write_at: block 'C': the copy back would copy elements of C that an iteration may leave unwritten, or the "
     r"blocks read before writing them, so the copy must be filled from C first; spanning the threads of loop "
     r"'ty' \(bound to threadIdx.y\), every thread would fill the whole tile while the others write their parts"),
    ("scope", TILED, R.write_at("i0", "C", 0, "registers"), R.InvalidStorageScopeError,
     r"^write_at: argument storage_scope: the storage scope 'registers' is invalid"),
    ("index", TILED, R.write_at("i0", "C", 1, "local"), R.BufferIndexOutOfRangeError,
     r"^write_at: block 'C': the block has 1 write regions, so write_buffer_index 1 is out of range"),
]


@pytest.mark.parametrize("name, src, rewrite, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_each_refusal_names_its_error_and_reason(name, src, rewrite, error, message):
    mod = mod_of(src)
    with pytest.raises(error, match=message):
        rewrite(mod)


def test_a_refused_read_at_would_read_a_stale_copy():
    # applied anyway, R2 reads A from the copy made before W wrote it
    mod = mod_of(READ_WRITE_READ)
    rewrite = R.read_at("i0", "R", 0, "local")
    assert isinstance(rewrite.violations(mod)[0], R.ReadWriteAtOrderError)
    checks = read_write_at._ReadWriteAt.plan

    def unchecked(self, m, chk):
        chk.stop = lambda *a, **k: None  # every check passes
        return checks(self, m, chk)

    with mock.patch.object(read_write_at._ReadWriteAt, "plan", unchecked):
        forced = rewrite(mod)
    with pytest.raises(NotEquivalentError):
        assert_equivalent(mod["main"], forced["main"], trials=2)
