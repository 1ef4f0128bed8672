"""Nests the program generators seldom make: a triangular nest (the inner
loop runs ``i + 1`` times, and the block's reduction variable has the
domain ``[0, i + 1)``, an expression of the outer loop, which TVM's
well-formedness check leaves alone), and a loop bound that reads an
intermediate buffer."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_built_as_interpreted, assert_equivalent

from corner_sources import (
    GUARDED_CONSUMER, GUARDED_CONSUMER_OF_AN_INTERMEDIATE, INIT_SCRATCH, LOOSE_READ, RECURRENCE,
    REPEATED_REDUCTION, SPATIAL_INIT, TRIANGULAR, VECTOR_PRODUCER, WIDE_STAGES, WRITTEN_LATER,
)


def _mod():
    return IRModule({"main": from_source(TRIANGULAR)})


@pytest.mark.parametrize("schedule", [
    R.split("i", [None, 2]),
    R.split("i", [1, None], preserve_unit_iters=False),
    R.split("i", [5, 1]),
    R.split("i", [None, 2]) >> R.fuse("i_0", "i_1"),
    R.merge("i", "j"),
    R.loop_partition("i", [2]),
    R.decompose_reduction("B", "i"),
    R.cache_write("B", 0, "local"),
], ids=str)
def test_the_domain_follows_the_loops_it_names(schedule):
    # split and the primitives built on its substitution rebuilt the
    # bindings but left the domain naming the replaced loop
    mod = _mod()
    out = schedule(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)
    assert " i + 1" not in out["main"].script() or "for i in" in out["main"].script()


def test_transform_block_layout_refuses_to_replace_the_loop_a_domain_names():
    with pytest.raises(R.LoopDependentDomainError, match="the domain of vk, 0 for i \\+ 1, depends on loop 'i'"):
        R.transform_block_layout("B", lambda a, b: (b, a))(_mod())


def test_pad_einsum_refuses_a_domain_that_names_a_loop():
    with pytest.raises(R.LoopDependentDomainError, match="the domain of vk depends on loop 'i'"):
        R.pad_einsum("B", [8, 8])(_mod())


def test_reverse_compute_inline_refuses_a_buffer_a_loop_bound_reads():
    # the loop's extent reads B: folding C into B's producer would leave
    # that read with no buffer behind it
    mod = IRModule({"main": from_source(LOOSE_READ)})
    with pytest.raises(R.NonSingleProducerError, match="a statement outside the blocks also reads B"):
        R.reverse_compute_inline("C")(mod)
    # compute_inline rewrites that read too, and keeps the meaning
    out = R.compute_inline("B")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)


@pytest.mark.parametrize("schedule", [R.compute_at("B", "j"), R.reverse_compute_at("C", "i")], ids=str)
def test_compute_location_refuses_to_remake_loops_from_a_domain_that_names_one(schedule):
    mod = _mod()
    if schedule.primitive == "compute_at":
        # B must not be an output for compute_at: read it through an intermediate
        mod = IRModule({"main": from_source(TRIANGULAR.replace("B: T.Buffer((5,), \"int32\"), ", "").replace(
            "def main(A: T.Buffer((5, 10), \"int32\"), ",
            "def main(A: T.Buffer((5, 10), \"int32\"), ").replace("    for i in range(5):",
                                                                   "    B = T.alloc_buffer((5,), \"int32\")\n"
                                                                   "    for i in range(5):", 1))})
        with pytest.raises(R.LoopDependentDomainError, match="the domain of vk, 0 for i \\+ 1, names loop 'i'"):
            schedule(mod)
    else:
        out = schedule(mod)  # C's domain names no loop: it moves under i
        verify(out)
        assert_equivalent(mod["main"], out["main"], trials=2)


@pytest.mark.parametrize("block", ["B", "Q"])
def test_reindex_cache_read_refuses_a_reader_that_runs_before_the_writer(block):
    # block P writes P later in each iteration of i, for the readers of the
    # next: a copy of P filled before the loop misses those writes
    mod = IRModule({"main": from_source(WRITTEN_LATER)})
    index = 0 if block == "B" else 1
    with pytest.raises(R.CacheStageOrderError, match=f"block '{block}': the block reads buffer P before the cache"):
        R.reindex_cache_read(block, index, "shared", lambda a, b: (b, a))(mod)
    with pytest.raises(R.CacheStageOrderError):
        R.cache_read(block, index, "shared")(mod)


MIXED_LOOPS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(T.int64(8), T.int64(8)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1.0)
"""


@pytest.mark.parametrize("schedule", [R.compute_at("B", "i_1"), R.compute_at("B", "j_1"),
                                      R.reverse_compute_at("C", "i"), R.reverse_compute_at("C", "j"),
                                      R.split("j_1", [2, 1, 8]) >> R.compute_at("B", "j_1_1")], ids=str)
def test_compute_location_binds_a_block_of_the_other_width_through_a_cast(schedule):
    # the producer's variables are int64, the consumer's loops int32: the
    # moved block was bound to the other block's loops without a cast; and
    # (a fuzzer find) under a predicated split of the consumer, comparing
    # the bounds of the two nests built a comparison of an int64 and an
    # int32 expression, a NodeError
    mod = IRModule({"main": from_source(MIXED_LOOPS)})
    out = schedule(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)
    assert "T.Cast(" in out["main"].script()


def test_a_block_under_a_condition_is_not_moved_without_it():
    # reverse_compute_at took the block out of "for n: if n < 3:" and
    # dropped the condition, computing C[3] too
    mod = IRModule({"main": from_source(GUARDED_CONSUMER)})
    for schedule in (R.reverse_compute_at("C", "m"), R.reverse_compute_at("C", "m", preserve_unit_loops=True, index=1)):
        with pytest.raises(R.NonLoopAncestorError, match="an if sits between the block and the loops"):
            schedule(mod)
    # the producer, under loops alone, still moves
    out = R.compute_at("B", "n")(IRModule({"main": from_source(GUARDED_CONSUMER_OF_AN_INTERMEDIATE)}))
    verify(out)


def test_reverse_compute_inline_refuses_a_vector_producer():
    # the producer's store index is a Ramp: the bound checks on the
    # consumer's index mixed a vector with a scalar (a NodeError)
    mod = IRModule({"main": from_source(VECTOR_PRODUCER)})
    with pytest.raises(R.BodyAnalysisError, match="the producer stores a vector of B per instance"):
        R.reverse_compute_inline("C")(mod)


def test_compute_inline_refuses_a_block_that_reads_what_it_writes():
    # its stated regions leave out the read of C, as TVM accepts; inlined,
    # D read C, which nothing wrote or declared any more
    mod = IRModule({"main": from_source("""
@T.prim_func
def main(A: T.Buffer((3, 8), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((3, 8))
    for i, j in T.grid(3, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = C[vi, vj] + A[vi, vj] * T.float32(2)
    for k in range(8):
        with T.block("D"):
            vk = T.axis.spatial(8, k)
            D[vk] = C[0, vk]
""")})
    with pytest.raises(R.BodyAnalysisError, match="the block reads C, which it writes"):
        R.compute_inline("C")(mod)


def test_reverse_compute_inline_reads_the_init_where_the_producer_read_what_it_stored():
    # found by random arguments: C has an init and reads C[vj] to add to it;
    # folded into it, D's store replaced C's, and the init and the read of
    # C were left on a buffer nothing declared any more. Each instance runs
    # the init, then the body: the read is of the init's value, 1 here. TVM
    # 0.25 reads D there, D = (D + x) * 3 after D = 1 * 3: 9 + 3x, not 3 + 3x
    src = SPATIAL_INIT.replace("D[vk] = C[vk]", "D[vk] = C[vk] * T.float32(3)").replace(
        "C[vj] = T.float32(0)", "C[vj] = T.float32(1)")
    text = _folded_into_its_producer(src)
    assert "D[vj] = (T.float32(1.0) + A[vi, vj] * T.float32(2.0)) * T.float32(3.0)" in text, text
    # without an init, the read is of what C held before: refused
    no_init = src.replace("            with T.init():\n                C[vj] = T.float32(1)\n", "")
    assert "T.init" not in no_init
    with pytest.raises(ScheduleError, match="C"):
        R.reverse_compute_inline("D")(IRModule({"main": from_source(no_init)}))


def test_reverse_compute_inline_of_a_plain_copy_reads_the_init_in_the_body():
    # D copies C unchanged (TVM's cache_write then reverse_compute_inline
    # of the copy): the body's read of C is the init's value
    text = _folded_into_its_producer(SPATIAL_INIT)
    assert "D[vj] = T.float32(0.0)" in text and "D[vj] = T.Add(T.float32(0.0), A[vi, vj] * T.float32(2.0))" in text, text
    assert "C = T.alloc_buffer" not in text


def test_reverse_compute_inline_into_a_producer_that_overwrites_its_init():
    # C's init stores 0, its body overwrites it (TVM's test_vm_mul after
    # cache_write): the consumer folds into both stores
    src = SPATIAL_INIT.replace("C[vj] = C[vj] + A[vi, vj]", "C[vj] = A[vi, vj]").replace(
        "D[vk] = C[vk]", "D[vk] = C[vk] + T.float32(1)")
    text = _folded_into_its_producer(src)
    assert "D[vj] = T.Add(T.float32(0.0), T.float32(1.0))" in text
    assert "D[vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)" in text


def _folded_into_its_producer(src: str) -> str:
    """reverse_compute_inline("D") of ``src``: the result verifies, means
    what ``src`` means and builds to the interpreter's result; its script."""
    mod = IRModule({"main": from_source(src)})
    out = R.reverse_compute_inline("D")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    assert_built_as_interpreted(out)
    return out["main"].script()


@pytest.mark.parametrize("before", [None, R.split("i", [1, 7]) >> R.loop_partition("i_1", [None, 2])
                                    >> R.blockize("i_0")], ids=["plain", "partitioned"])
def test_cache_write_refuses_a_block_reading_outside_what_it_writes(before):
    # B[vi + 1] = B[vi] * 2: the cache holds (and is filled over) the
    # written region, so the read of B[vi] fell outside it, or, in a cache
    # of the whole buffer, on an element never filled
    mod = IRModule({"main": from_source(RECURRENCE)})
    block = "B"
    if before is not None:
        mod, block = before(mod), "B_i_11"
    with pytest.raises(R.CacheWriteReadBeforeWriteError, match="outside the region of B it writes"):
        R.cache_write(block, 0, "local")(mod)


def test_blockize_refuses_a_reduction_its_loops_repeat():
    # for i, u: each visit runs the init (vk is always at its start), so
    # B = A; the blockized block ran its init once per i, and B = 2 * A
    mod = IRModule({"main": from_source(REPEATED_REDUCTION)})
    with pytest.raises(R.RepeatedReductionError, match="reach an instance of the reduction more than once"):
        R.blockize("i")(mod)
    with pytest.raises(R.RepeatedReductionError):
        R.blockize("u")(mod)


@pytest.mark.parametrize("schedule", [
    R.fuse("i", "u") >> R.blockize("i_u_fused"),
    R.fuse("i", "u") >> R.split("i_u_fused", [None, 4]) >> R.blockize("i_u_fused_1"),
    R.fuse("i", "u") >> R.loop_partition("i_u_fused", [5, None]) >> R.blockize("i_u_fused0"),
], ids=["fused", "fused and split", "fused and partitioned"])
def test_blockize_refuses_a_reduction_its_loops_repeat_through_a_fused_loop(schedule):
    # found by the fuzzer through tensorize: after the fuse, vi = f // 2
    # takes each value twice, so loop f reaches each instance twice, though
    # every loop under the target feeds an iteration variable
    mod = IRModule({"main": from_source(REPEATED_REDUCTION)})
    *steps, blockize = schedule.rewrites
    mod = R.Pipeline(tuple(steps))(mod)
    with pytest.raises(R.RepeatedReductionError, match="reach an instance of the reduction more than once"):
        blockize(mod)


def test_blockize_refuses_an_init_that_uses_the_blocks_own_buffer():
    mod = IRModule({"main": from_source(INIT_SCRATCH)})
    with pytest.raises(R.InitAllocationError, match="the init uses S, which the block allocates"):
        R.blockize("k")(mod)


@pytest.mark.parametrize("loop", ["j", "i", "l"])
def test_reverse_compute_at_of_an_int64_program_compares_in_int64(loop):
    # the exact-read check compared the int64 bounds of the box with Python
    # ints, which became int32 literals (a NodeError from inside)
    mod = IRModule({"main": from_source(WIDE_STAGES)})
    out = R.reverse_compute_at("D", loop)(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=2)


def test_reverse_compute_inline_over_a_reflected_write_under_a_predicated_split():
    # found by the fuzzer: the producer writes Y[9 - vi, 9 - vj] under a
    # split with a predicate; reading the reflected region asked a stand-in
    # loop of the predicate's guarded part for its variable (AttributeError)
    mod = IRModule({"main": from_source("""
@T.prim_func
def main(X: T.Buffer((10, 10), "float32"), Z: T.Buffer((10, 10), "float32")):
    Y = T.alloc_buffer((10, 10))
    for i in range(10):
        for j_0 in T.parallel(1):
            for j_1_1, j_2 in T.grid(3, 10):
                with T.block("b0"):
                    vi = T.axis.spatial(10, i)
                    vj = T.axis.spatial(10, j_1_1 * 10 + j_2)
                    T.where((j_0 * 3 + j_1_1) * 10 + j_2 < 10)
                    Y[9 - vi, 9 - vj] = X[vi, vj] + T.float32(1.0)
    for i_1, j_1 in T.grid(10, 10):
        with T.block("b1"):
            vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
            Z[vi_1, vj_1] = Y[vj_1, vi_1] + T.float32(2.0)
""")})
    rewrite = R.reverse_compute_inline("b1")
    try:
        out = rewrite(mod)
    except ScheduleError:
        assert rewrite.violations(mod)
        return
    assert_equivalent(mod["main"], out["main"], trials=2)


# TVM's grouped_channel_bias_non_perfect_tiled: each tile c_o of TILES
# writes the 23 biases from c_o * 22 that its 360 channels read
# (B[cc // 16]), through a split of 3 x 8 guarded to 23
GROUPED_BIAS = """
@T.prim_func
def main(X: T.Buffer((CH, 8, 8), "float32"), Y: T.Buffer((CH, 8, 8), "float32")):
    B = T.alloc_buffer((NB,))
    for c_o in range(TILES):
        for ax0_0, ax0_1 in T.grid(3, 8):
            with T.block("init"):
                vi = T.axis.spatial(NB, c_o * 22 + ax0_0 * 8 + ax0_1)
                T.where(ax0_0 * 8 + ax0_1 < 23)
                B[vi] = T.Cast("float32", vi)
        for h, w, c_i in T.grid(8, 8, 360):
            with T.block("compute"):
                hh, ww = T.axis.remap("SS", [h, w])
                cc = T.axis.spatial(CH, c_o * 360 + c_i)
                Y[cc, hh, ww] = X[cc, hh, ww] + B[cc // 16]
"""


def test_compute_inline_of_a_tile_whose_cover_holds_over_its_few_tiles():
    # (c_o * 360 + 359) // 16 <= c_o * 22 + 22 holds for c_o in [0, 2),
    # which no rule shows but the two cases do; with a third tile it fails
    # (the tile reads B[67], which no tile writes)
    two = GROUPED_BIAS.replace("CH", "720").replace("NB", "45").replace("TILES", "2")
    mod = IRModule({"main": from_source(two)})
    out = R.compute_inline("init")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"], trials=1)
    three = GROUPED_BIAS.replace("CH", "1080").replace("NB", "68").replace("TILES", "3")
    with pytest.raises(R.NotStagePipelineError, match="reads elements of B that block 'init' does not surely write"):
        R.compute_inline("init")(IRModule({"main": from_source(three)}))


# TVM's argmax_split_rfactor with its first stage's loops fused: vi1_0, the
# reduction variable, is the slow digit of f, vi1_1 the fast one
FUSED_ARGMAX_RF = """
@T.prim_func
def main(idx: T.Buffer((8, 16), "int32"), val: T.Buffer((8, 16), "float32"), v0: T.Buffer((8,), "int32"),
         v1: T.Buffer((8,), "float32")):
    v0_rf = T.alloc_buffer((8, 4), "int32")
    v1_rf = T.alloc_buffer((8, 4))
    for i0, f in T.grid(8, 16):
        with T.block("argmax_rf"):
            vi1_1 = T.axis.spatial(4, f % 4)
            i = T.axis.spatial(8, i0)
            vi1_0 = T.axis.reduce(4, f // 4)
            with T.init():
                v0_rf[i, vi1_1] = -1
                v1_rf[i, vi1_1] = T.float32(-1000)
            a: T.int32 = T.Select(v1_rf[i, vi1_1] >= val[i, vi1_0 * 4 + vi1_1], v0_rf[i, vi1_1], idx[i, vi1_0 * 4 + vi1_1])
            b: T.float32 = T.Select(v1_rf[i, vi1_1] >= val[i, vi1_0 * 4 + vi1_1], v1_rf[i, vi1_1], val[i, vi1_0 * 4 + vi1_1])
            v0_rf[i, vi1_1] = a
            v1_rf[i, vi1_1] = b
    for c0, c1 in T.grid(8, 4):
        with T.block("argmax"):
            k, i = T.axis.remap("RS", [c1, c0])
            with T.init():
                v0[i] = -1
                v1[i] = T.float32(-1000)
            a: T.int32 = T.Select(v1[i] >= v1_rf[i, k], v0[i], v0_rf[i, k])
            b: T.float32 = T.Select(v1[i] >= v1_rf[i, k], v1[i], v1_rf[i, k])
            v0[i] = a
            v1[i] = b
"""


def test_compute_at_of_a_fused_tuple_reduction_runs_each_element_in_order():
    # placed under c0, the stage's nest runs vi1_1 before vi1_0: the
    # elements interleave otherwise, each element's steps keep their order
    # (ties between equal values pick the same index)
    import numpy as np

    mod = IRModule({"main": from_source(FUSED_ARGMAX_RF)})
    out = R.compute_at("argmax_rf", "c0")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    # values drawn from few, so that ties happen
    rng = np.random.default_rng(0)
    idx = np.arange(128, dtype="int32").reshape(8, 16)
    val = rng.integers(0, 3, size=(8, 16)).astype("float32")
    want = [idx, val, np.zeros(8, "int32"), np.zeros(8, "float32")]
    got = [a.copy() for a in want]
    from tirfun.interp import run
    run(mod["main"], *want)
    run(out["main"], *got)
    assert all(np.array_equal(w, g) for w, g in zip(want, got))
    assert_built_as_interpreted(out)


# TVM's elementwise_overcomputed_producer_injective_load: B holds 128 rows
# in tiles of 16, C reads 127 of them through B[v // 16, .., v % 16, ..]
OVERCOMPUTED = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((127, 127), "float32")):
    B = T.alloc_buffer((8, 8, 16, 16))
    for i0, j0, i1, j1 in T.grid(8, 8, 16, 16):
        with T.block("B"):
            vi, vj, vm, vn = T.axis.remap("SSSS", [i0, j0, i1, j1])
            B[vi, vj, vm, vn] = A[vi * 16 + vm, vj * 16 + vn] * T.float32(2.0)
    for i, j in T.grid(127, 127):
        with T.block("C"):
            cvi, cvj = T.axis.remap("SS", [i, j])
            C[cvi, cvj] = B[cvi // 16, cvj // 16, cvi % 16, cvj % 16] + T.float32(1.0)
"""


def test_reverse_compute_at_of_a_consumer_short_of_the_producers_tiles_guards_the_last():
    # the rows B writes in one iteration of i0 are those C reads at
    # cvi in [i0 * 16, i0 * 16 + 15]; the last tile reaches past C's 127
    # rows, so the block is guarded, as TVM writes it
    mod = IRModule({"main": from_source(OVERCOMPUTED)})
    out = R.reverse_compute_at("C", "i0", preserve_unit_loops=True)(mod)
    verify(out)
    text = out["main"].script()
    assert "for ax0, ax1 in T.grid(16, 127):" in text, text
    assert "cvi = T.axis.spatial(127, i0 * 16 + ax0)" in text and "T.where(i0 * 16 + ax0 < 127)" in text, text
    assert_equivalent(mod["main"], out["main"], trials=1)
