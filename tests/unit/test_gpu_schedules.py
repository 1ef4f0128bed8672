"""The shared-memory tiled matmul built by schedule primitives
(tirfun.examples.gpu_schedules), checked without a GPU: the lowered program
has its barriers, computes the product bit for bit under the interpreter's
GPU semantics with no race, its PTX is accepted by ptxas, and its trace
replays."""

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.errors import ScheduleError
from tirfun.examples import gpu_schedules
from tirfun.interp import run
from tirfun.testing.cuda import ptxas_check, ptxas_path, run_split

SMALL = dict(bm=32, bn=32, bk=8, tm=4, tn=4, vec=2)


@pytest.fixture(scope="module")
def small():
    sch = gpu_schedules.tiled_matmul(64, **SMALL)
    return sch, tirfun.build(sch.mod, target="cuda")


def _inputs(n=64):
    rng = np.random.default_rng(11)
    return (rng.standard_normal((n, n)).astype("float32"),
            rng.standard_normal((n, n)).astype("float32"))


def test_the_schedule_is_what_a_tvm_user_writes(small):
    sch, _ = small
    names = [type(r).__name__ for r in sch.trace.rewrites]
    for name in ("Split", "Reorder", "Bind", "CacheWrite", "ReverseComputeAt", "CacheRead", "ReindexCacheRead",
                 "ComputeAt", "Fuse", "Vectorize", "Unroll", "DecomposeReduction"):
        assert name in names, name
    text = sch.mod["main"].script()
    # the shared copies are shared out among the threads: loops bound to
    # threadIdx inside the loops bound to threadIdx
    assert text.count('thread="threadIdx.x"') == 3 and text.count('thread="threadIdx.y"') == 3
    assert 'T.block("A_shared")' in text and 'T.block("C_local")' in text and 'T.block("C_init")' in text


def test_the_trace_replays_from_json(small):
    sch, _ = small
    replayed = R.Pipeline.from_json(sch.trace.to_json())
    assert replayed == sch.trace
    assert replayed(gpu_schedules.matmul(64)) == sch.mod


def test_lowering_compacts_the_tiles_and_places_the_barriers(small):
    _, rt = small
    text = rt.lowered.script()
    # a 32 x 8 tile of A and an 8 x 32 tile of B per block, a 4 x 4 tile of C per thread
    assert 'T.allocate([256], "float32", "shared")' in text
    assert text.count('T.allocate([256], "float32", "shared")') == 2
    assert 'T.allocate([16], "float32", "local")' in text
    # before each step's copies (the last step's products are done with the
    # tiles) and between the copies and the products
    assert text.count('T.tvm_storage_sync("shared")') == 2
    assert "bar.sync" in rt.get_source("ptx")


def test_the_product_bit_for_bit_on_the_interpreters_gpu(small):
    sch, rt = small
    a, b = _inputs()
    expected = np.zeros((64, 64), "float32")
    run(gpu_schedules.matmul(64)["main"], a, b, expected)
    # the lowered program, every thread of every block between barriers
    got = np.zeros((64, 64), "float32")
    run(rt.lowered["main"], a, b, got)
    assert got.tobytes() == expected.tobytes()
    # host code and kernel as the build runs them
    split = np.zeros((64, 64), "float32")
    assert run_split(rt, a, b, split) == [("main_kernel", (2, 2, 1), (8, 8, 1))]
    assert split.tobytes() == expected.tobytes()


def test_without_barriers_the_interpreter_finds_the_race(small):
    from tirfun.lower.cuda import lower_cuda

    sch, rt = small
    a, b = _inputs()
    unsynced = lower_cuda(sch.mod, rt.target, sync=False)
    with pytest.raises(tirfun.errors.InterpError, match="data race on buffer (A|B)_shared"):
        run(unsynced["main"], a, b, np.zeros((64, 64), "float32"))


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (NVIDIA's PTX assembler) is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_accepts_the_kernel(small, arch):
    sch, _ = small
    ptxas_check(tirfun.build(sch.mod, target=f"cuda -arch={arch}").get_source("ptx"), arch)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (NVIDIA's PTX assembler) is not installed")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_benchmark_size_kernel_is_register_tiled(arch):
    rt = tirfun.build(gpu_schedules.tiled_matmul(4096).mod, target=f"cuda -arch={arch} -fast-math-contract")
    ptx = rt.get_source("ptx")
    # the 8 x 8 tile in registers (no local memory), fused multiply-adds,
    # the column of A (stored transposed) and the row of B read in vectors
    # (2 of each per step of ki, 8 steps), C written back in vectors
    assert ".local" not in ptx and ptx.count("fma.rn.f32") == 512
    assert ptx.count("ld.shared.v4") == 32 and "ld.shared.b32" not in ptx and "st.global.v4" in ptx
    # the cooperative copies load whole vectors of A and B
    assert ptx.count("ld.global.nc.v4") == 2
    ptxas_check(ptx, arch)


# a copy of an 8-wide tile of A through a fused loop split by threads and
# lanes, as a cooperative fetch makes it: each vector of 4 lanes stays
# inside one row of the tile
FUSED_COPY = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 8), "float32")):
    for f0 in range(4):
        for f1 in range(8):
            for v in T.vectorized(4):
                with T.block("B"):
                    vi = T.axis.spatial(16, f0 * 4 + (f1 * 4 + v) // 8)
                    vj = T.axis.spatial(8, (f1 * 4 + v) % 8)
                    B[vi, vj] = A[vi, vj] + T.float32(1)
"""


def test_a_fused_and_split_copy_becomes_whole_vectors():
    from tirfun.analysis.traversal import walk
    from tirfun.nodes import BufferLoad, BufferStore, FloorDiv, Ramp
    from tirfun.script import from_source
    from tirfun.testing.equivalence import assert_equivalent

    func = from_source(FUSED_COPY)
    lowered = tirfun.lower(func)["main"]
    loads = [n for n in walk(lowered.body) if isinstance(n, BufferLoad) and n.buffer.name.startswith("A")]
    # one quotient for the lanes, consecutive remainders: a contiguous Ramp
    assert loads and all(isinstance(ld.indices[0], Ramp) for ld in loads)
    assert not any(isinstance(n, FloorDiv) and n.dtype.lanes > 1 for n in walk(lowered.body))
    assert_equivalent(func, lowered)
    # lanes that would cross a row (a base not a multiple of the lanes) stay lane by lane
    odd = from_source(FUSED_COPY.replace("f1 * 4 + v", "f1 * 4 + v + 2").replace("range(8)", "range(7)"))
    lowered = tirfun.lower(odd)["main"]
    assert any(isinstance(n, FloorDiv) and n.dtype.lanes > 1 for n in walk(lowered.body))
    assert_equivalent(odd, lowered)
    # a transposed store: the lanes land 8 apart, one store of a strided vector
    transposed = from_source(FUSED_COPY.replace("B: T.Buffer((16, 8)", "B: T.Buffer((8, 16)")
                             .replace("B[vi, vj] =", "B[vj, vi] ="))
    lowered = tirfun.lower(transposed)["main"]
    stores = [n for n in walk(lowered.body) if isinstance(n, BufferStore)]
    assert len(stores) == 1 and isinstance(stores[0].indices[0], Ramp)
    assert stores[0].indices[0].stride.value == 16
    assert_equivalent(transposed, lowered)


def test_sizes_that_do_not_tile_are_a_schedule_error():
    with pytest.raises(ScheduleError, match="must be a multiple of the tiles"):
        gpu_schedules.tiled_matmul(48, **SMALL)
    with pytest.raises(ScheduleError, match="must share out evenly among 64 threads in vectors of 8"):
        gpu_schedules.tiled_matmul(64, **{**SMALL, "vec": 8})
    with pytest.raises(ScheduleError, match="multiple of the thread tile 3 x 4"):
        gpu_schedules.tiled_matmul(64, **{**SMALL, "tm": 3})
