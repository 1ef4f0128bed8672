"""rolling_buffer: the sliding window of TVM's example computes what the
whole buffer did, built and interpreted, and every precondition fails with
its own error."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun
from tirfun import IRModule
from tirfun import rewrites as R
from tirfun.interp import run as interp_run
from tirfun.rewrites.pipeline import Pipeline
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs

# TVM's example for rolling_buffer: two 3x3 max-pools in cascade, the first
# computed per 4x4 tile of the second (with an init, so no element is read
# before it is written)
POOLS = '''@T.prim_func
def main(A: T.Buffer((12, 12), "int8"), C: T.Buffer((8, 8), "int8")):
    B = T.alloc_buffer((10, 10), "int8")
    for i0, i1 in T.grid(2, 2):
        for ax0, ax1, ax2, ax3 in T.grid(6, 6, 3, 3):
            with T.block("B"):
                ax0_1 = T.axis.spatial(10, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(10, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    B[ax0_1, ax1_1] = T.int8(-128)
                B[ax0_1, ax1_1] = T.max(B[ax0_1, ax1_1], A[ax0_1 + rv0, ax1_1 + rv1])
        for ax0, ax1, ax2, ax3 in T.grid(4, 4, 3, 3):
            with T.block("C"):
                ax0_1 = T.axis.spatial(8, i0 * 4 + ax0)
                ax1_1 = T.axis.spatial(8, i1 * 4 + ax1)
                rv0, rv1 = T.axis.remap("RR", [ax2, ax3])
                with T.init():
                    C[ax0_1, ax1_1] = T.int8(-128)
                C[ax0_1, ax1_1] = T.max(C[ax0_1, ax1_1], B[ax0_1 + rv0, ax1_1 + rv1])
'''

ONE_D = '''@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(4):
        for ax in range(4):
            with T.block("B"):
                vb = T.axis.spatial(10, i * 2 + ax)
                B[vb] = A[vb] * T.float32(2)
        for ax in range(2):
            with T.block("C"):
                vc = T.axis.spatial(8, i * 2 + ax)
                C[vc] = B[vc] + B[vc + 2]
'''


def _mod(src):
    return IRModule({"main": from_source(src)})


def _built_matches(before, after):
    f, g = before["main"], after["main"]
    rt = tirfun.build(after)
    args = random_inputs(g, np.random.default_rng(5))
    expected = [a.copy() for a in args]
    interp_run(f, *expected)
    rt(*args)
    for p, x, y in zip(g.params, expected, args):
        assert compare_arrays(g.buffer_map[p].name, x, y, g.buffer_map[p].dtype) is None


def test_tvms_pooling_cascade_rolls_the_rows_and_skips_what_is_held():
    mod = _mod(POOLS)
    out = R.rolling_buffer("B", 0)(mod)
    text = out.script()
    assert 'B = T.alloc_buffer((6, 10), "int8")' in text
    assert "T.where((i0 < 1 or 2 <= ax0) and (i1 < 1 or 2 <= ax1))" in text
    assert "B[ax0_1 % 6, ax1_1] = T.max(B[ax0_1 % 6, ax1_1], A[ax0_1 + rv0, ax1_1 + rv1])" in text
    assert "ax0_1 = T.axis.opaque(10, i0 * 4 + ax0)" in text
    assert_equivalent(mod["main"], out["main"], trials=3)
    _built_matches(mod, out)


def test_the_rolled_buffer_compacts_to_the_window_when_built():
    out = R.rolling_buffer("B", 0)(_mod(ONE_D))
    lowered = tirfun.lower(out).script()
    assert 'T.allocate([4], "float32", "global")' in lowered
    assert "B[(i * 2 + ax) % 4]" in lowered
    _built_matches(_mod(ONE_D), out)


def test_schedule_rolling_buffer_and_its_trace():
    sch = tirfun.Schedule(_mod(ONE_D))
    sch.rolling_buffer("B", write_buffer_index=0)
    assert "sch.rolling_buffer(" in sch.trace.as_python()
    assert Pipeline.from_json(sch.trace.to_json())(_mod(ONE_D)) == sch.mod


def _fails(src, cls, *fragments, block="B", index=0):
    with pytest.raises(cls) as info:
        R.rolling_buffer(block, index)(_mod(src))
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_an_output_block_is_refused():
    _fails(ONE_D, R.OutputBlockError, "rolling_buffer: block 'C': it writes C, which its scope does not "
           "allocate: it is an output block", block="C")


def test_a_second_writer_is_refused():
    src = ONE_D.replace('''        for ax in range(2):
            with T.block("C"):''', '''        for ax in range(2):
            with T.block("D"):
                vd = T.axis.spatial(10, i * 2 + ax)
                B[vd] = T.float32(0)
        for ax in range(2):
            with T.block("C"):''')
    _fails(src, R.RollingBufferDependencyError, "block D writes what it writes")


def test_a_block_that_is_not_tiled_under_a_loop_is_refused():
    src = '''@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("B"):
            vb = T.axis.spatial(10, i)
            B[vb] = A[vb] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vc = T.axis.spatial(8, i)
            C[vc] = B[vc] + B[vc + 2]
'''
    _fails(src, R.RollingBufferInsertionError, "is not a loop; tile the block")


def test_a_region_without_overlap_or_slide_is_refused():
    no_overlap = ONE_D.replace("for ax in range(4)", "for ax in range(2)").replace(
        "B[vc] + B[vc + 2]", "B[vc] * T.float32(3)")
    _fails(no_overlap, R.RollingBufferMatchError, "no dimension of the region of B written in one iteration "
           "slides")
    shifted = ONE_D.replace("vb = T.axis.spatial(10, i * 2 + ax)", "vb = T.axis.spatial(10, i * 2 + 1 + ax)").replace(
        "for ax in range(4)", "for ax in range(3)")
    _fails(shifted, R.RollingBufferMatchError, "dimension 0 of the region of B written in one iteration starts at "
           "i * 2 + 1, not at loop_var * stride or a constant")


def test_a_consumer_reading_outside_the_window_is_refused():
    src = ONE_D.replace("B[vc] + B[vc + 2]", "B[vc] + B[T.min(vc + 5, 9)]")
    _fails(src, R.RollingBufferCoverError, "block C reads B outside the region the block writes in the same "
           "iteration")


def test_a_rolled_loop_can_no_longer_be_parallelized():
    # its iterations reuse what the previous one computed
    out = R.rolling_buffer("B", 0)(_mod(POOLS))
    for loop in ("i0", "i1"):
        assert R.parallel(loop).violations(out)
        with pytest.raises(R.RewriteError):
            R.parallel(loop)(out)


def test_a_parallel_sliding_loop_is_refused():
    src = ONE_D.replace("for i in range(4):", "for i in T.parallel(4):")
    _fails(src, R.RollingBufferMatchError, "loop i, which slides dimension 0, is parallel")


# a 2x2 window of B slides along both t0 and t1 (found by the soak)
WINDOW = '''@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), C: T.Buffer((3, 3), "int32")):
    B = T.alloc_buffer((4, 4), "int32")
    for t0 in T.unroll(3):
        for t1 in T.unroll(3):
            for p0, p1 in T.grid(2, 2):
                with T.block("B"):
                    b0 = T.axis.spatial(4, t0 + p0)
                    b1 = T.axis.spatial(4, t1 + p1)
                    B[b0, b1] = A[b0, b1] * 2
            for c0, c1, r0, r1 in T.grid(1, 1, 2, 2):
                with T.block("C"):
                    o0 = T.axis.spatial(3, t0 + c0)
                    o1 = T.axis.spatial(3, t1 + c1)
                    q0, q1 = T.axis.remap("RR", [r0, r1])
                    with T.init():
                        C[o0, o1] = -1000
                    C[o0, o1] = T.max(C[o0, o1], B[o0 + q0, o1 + q1])
'''


def test_rolling_again_along_another_loop_is_refused():
    # the first roll makes B skip the row that the previous t0 iteration
    # computed; a second roll along t1 would keep only two columns of that
    # row, so the block's predicate leaves the window unproven
    once = R.rolling_buffer("B", 0)(_mod(WINDOW))
    assert_equivalent(_mod(WINDOW)["main"], once["main"])
    again = Pipeline((R.add_unit_loop(R.LoopRef("t0")), R.unroll("u")))(once)
    with pytest.raises(R.RollingBufferCoverError, match=r"its predicate .* may skip elements of B in an "
                                                        r"iteration of loop t1"):
        R.rolling_buffer("B", 0)(again)


def test_a_predicate_that_only_cuts_the_last_tile_still_rolls():
    # a split that does not divide guards the producer: what it surely
    # writes is the cut window, and the consumer reads within it
    src = ONE_D.replace("for ax in range(4):\n            with T.block(\"B\"):\n                vb = T.axis.spatial(10, i * 2 + ax)",
                        "for ax in range(4):\n            with T.block(\"B\"):\n                vb = T.axis.spatial(10, i * 2 + ax)\n                T.where(i * 2 + ax < 10)")
    assert "T.where" in src
    out = R.rolling_buffer("B", 0)(_mod(src))
    assert_equivalent(_mod(src)["main"], out["main"])
    _built_matches(_mod(src), out)


def test_a_block_that_does_not_use_the_buffer_keeps_its_iteration_types():
    # TVM would make vd0 opaque too (it is at the rolled position), and so
    # keep parallel from the loop of a block the rolling has nothing to do with
    src = ONE_D.replace('C: T.Buffer((8,), "float32")', 'C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")')
    src += '''    for d in range(8):
        with T.block("D"):
            vd0 = T.axis.spatial(8, d)
            D[vd0] = A[vd0] + T.float32(1)
'''
    out = R.rolling_buffer("B", 0)(_mod(src))
    text = out.script()
    assert "vd0 = T.axis.spatial(8, d)" in text
    assert "vb = T.axis.opaque(10, i * 2 + ax)" in text
    R.parallel("d")(out)
    assert R.parallel("i").violations(out)
    assert_equivalent(_mod(src)["main"], out["main"])


# TVM's cascade of two 3x3 max-pools over 16 channels
CASCADE = '''@T.prim_func
def main(A: T.Buffer((1, 12, 12, 16), "int8"), C: T.Buffer((1, 8, 8, 16), "int8")):
    B = T.alloc_buffer([1, 10, 10, 16], dtype="int8")
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 10, 10, 16, 3, 3):
        with T.block("B"):
            ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B[ax0, ax1, ax2, ax3] = T.int8(-128)
            B[ax0, ax1, ax2, ax3] = T.max(B[ax0, ax1, ax2, ax3], A[ax0, ax1 + rv0, ax2 + rv1, ax3])
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 8, 8, 16, 3, 3):
        with T.block("C"):
            ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                C[ax0, ax1, ax2, ax3] = T.int8(-128)
            C[ax0, ax1, ax2, ax3] = T.max(C[ax0, ax1, ax2, ax3], B[ax0, ax1 + rv0, ax2 + rv1, ax3])
'''


def _tiled_cascade(tile: list) -> tirfun.Schedule:
    """TVM's _tile_nd: C's loops split by ``tile``, the outer ones first,
    and B computed at the innermost outer loop."""
    sch = tirfun.Schedule(_mod(CASCADE))
    loops = sch.get_loops(sch.get_block("C"))
    outer, inner = zip(*[sch.split(loop, [None, size]) for loop, size in zip(loops, tile)])
    sch.reorder(*outer, *inner)
    sch.compute_at(sch.get_block("B"), outer[-1])
    return sch


def test_tvms_non_perfect_tiling_rolls_despite_the_guards_of_its_splits():
    # TVM's test_cascade_max_pool2d_non_perfect_tiled: tiles of 6 over 8
    # rows leave guards (T.where) on the producer that skip only rows past
    # the buffer's end, so the window is still all it writes
    sch = _tiled_cascade([1, 6, 6, 16])
    sch.rolling_buffer(sch.get_block("B"), 0)
    text = sch.mod.script()
    assert 'B = T.alloc_buffer((1, 8, 10, 16), "int8")' in text
    # as TVM's expected result: the guards, then the rows and columns the
    # tile above and the tile to the left computed
    assert ("T.where(i1_1_0 * 6 + ax0_2 < 10 and i2_1_0 * 6 + ax1_2 < 10 and (i1_1_0 < 1 or 2 <= ax0_2) "
            "and (i2_1_0 < 1 or 2 <= ax1_2))") in text
    assert_equivalent(_mod(CASCADE)["main"], sch.mod["main"])
    _built_matches(_mod(CASCADE), sch.mod)


def test_a_unit_loop_does_not_slide_so_the_tiled_width_rolls():
    # TVM's test_cascade_max_pool2d_w_tiled: the rows are one tile (a loop
    # of one iteration), so the columns roll, to 6 of 10
    sch = _tiled_cascade([1, 8, 4, 16])
    sch.rolling_buffer(sch.get_block("B"), 0)
    assert 'B = T.alloc_buffer((1, 10, 6, 16), "int8")' in sch.mod.script()
    assert_equivalent(_mod(CASCADE)["main"], sch.mod["main"])


# TVM's test_upscale: each tile of C (5 rows) reads rows ``5 * i // 2``
# onwards of B, a stride of 2 or 3 rows
UPSCALE = '''@T.prim_func
def main(A: T.Buffer((1, 16, 16, 16), "int8"), C: T.Buffer((1, 24, 24, 16), "int8")):
    B = T.alloc_buffer([1, 14, 14, 16], dtype="int8")
    for i0_0, i1_0, i2_0, i3_0 in T.grid(1, 5, 5, 1):
        for ax0, ax1, ax2, ax3, ax4 in T.grid(5, 5, 16, 3, 3):
            with T.block("B"):
                T.where(i1_0 * 5 // 2 + ax0 < 14 and i2_0 * 5 // 2 + ax1 < 14)
                ax0_1 = T.axis.spatial(1, 0)
                ax1_1 = T.axis.spatial(14, i1_0 * 5 // 2 + ax0)
                ax2_1 = T.axis.spatial(14, i2_0 * 5 // 2 + ax1)
                ax3_1 = T.axis.spatial(16, ax2)
                rv0, rv1 = T.axis.remap("RR", [ax3, ax4])
                with T.init():
                    B[ax0_1, ax1_1, ax2_1, ax3_1] = T.int8(-128)
                B[ax0_1, ax1_1, ax2_1, ax3_1] = T.max(B[ax0_1, ax1_1, ax2_1, ax3_1], A[ax0_1, ax1_1 + rv0, ax2_1 + rv1, ax3_1])
        for i0_1, i1_1, i2_1, i3_1, i4, i5 in T.grid(1, 5, 5, 16, 3, 3):
            with T.block("C"):
                T.where(i1_0 * 5 + i1_1 < 24 and i2_0 * 5 + i2_1 < 24)
                ax0 = T.axis.spatial(1, i0_0 + i0_1)
                ax1 = T.axis.spatial(24, i1_0 * 5 + i1_1)
                ax2 = T.axis.spatial(24, i2_0 * 5 + i2_1)
                ax3 = T.axis.spatial(16, i3_0 * 16 + i3_1)
                rv0, rv1 = T.axis.remap("RR", [i4, i5])
                with T.init():
                    C[ax0, ax1, ax2, ax3] = T.int8(-128)
                C[ax0, ax1, ax2, ax3] = T.max(C[ax0, ax1, ax2, ax3], B[ax0, ax1 // 2 + rv0, ax2 // 2 + rv1, ax3])
'''


def test_tvms_upscale_rolls_with_a_fractional_stride():
    # the start moves by 2 or 3 rows a tile; the skip takes the overlap of
    # a 3-row step, which every step has (TVM's expected result)
    out = R.rolling_buffer("B", 0)(_mod(UPSCALE))
    text = out.script()
    assert 'B = T.alloc_buffer((1, 5, 14, 16), "int8")' in text
    assert ("T.where(i1_0 * 5 // 2 + ax0 < 14 and i2_0 * 5 // 2 + ax1 < 14 and (i1_0 < 1 or 2 <= ax0) "
            "and (i2_0 < 1 or 2 <= ax1))") in text
    assert_equivalent(_mod(UPSCALE)["main"], out["main"])
    _built_matches(_mod(UPSCALE), out)


# TVM's test_fail_rolling_buffer_multi_writers: two blocks write B, and
# their tiles of 6 rows starting every 4 reach row 13 of a domain of 12
MULTI_WRITERS = '''@T.prim_func
def main(A: T.Buffer((1, 12, 12, 16), "int8"), C: T.Buffer((1, 12, 12, 16), "int8")):
    B = T.alloc_buffer([1, 12, 12, 16], dtype="int8")
    for i0, i1, i2, i3 in T.grid(1, 3, 3, 1):
        for ax0, ax1, ax2 in T.grid(6, 6, 16):
            with T.block("B_writer_0"):
                ax0_1 = T.axis.spatial(1, i0)
                ax1_1 = T.axis.spatial(12, i1 * 4 + ax0)
                ax2_1 = T.axis.spatial(12, i2 * 4 + ax1)
                ax3_1 = T.axis.spatial(16, ax2)
                B[ax0_1, ax1_1, ax2_1, ax3_1] = A[ax0_1, ax1_1, ax2_1, ax3_1] + T.int8(1)
        for ax0, ax1, ax2 in T.grid(6, 6, 16):
            with T.block("B_writer_1"):
                ax0_2 = T.axis.spatial(1, i0)
                ax1_2 = T.axis.spatial(12, i1 * 4 + ax0)
                ax2_2 = T.axis.spatial(12, i2 * 4 + ax1)
                ax3_2 = T.axis.spatial(16, ax2)
                B[ax0_2, ax1_2, ax2_2, ax3_2] = B[ax0_2, ax1_2, ax2_2, ax3_2] + A[ax0_2, ax1_2, ax2_2, ax3_2]
        for ax0, ax1, ax2, ax3 in T.grid(1, 4, 4, 16):
            with T.block("C"):
                ax0_3 = T.axis.spatial(1, i0 + ax0)
                ax1_3 = T.axis.spatial(12, i1 * 4 + ax1)
                ax2_3 = T.axis.spatial(12, i2 * 4 + ax2)
                ax3_3 = T.axis.spatial(16, i3 * 16 + ax3)
                C[ax0_3, ax1_3, ax2_3, ax3_3] = B[ax0_3, ax1_3, ax2_3, ax3_3]
'''


def test_tvms_program_with_two_writers_parses_and_is_refused_for_its_writers():
    # TVM parses a binding outside its domain and schedules it, so tirfun
    # does; building it is refused, as its blocks would write past B
    mod = _mod(MULTI_WRITERS)
    with pytest.raises(R.RollingBufferDependencyError, match="block B_writer_1 writes what it writes"):
        R.rolling_buffer("B_writer_0", 0)(mod)
    with pytest.raises(tirfun.errors.VerifyError, match="binding outside domain"):
        tirfun.build(mod)


def test_what_the_walk_keeps_as_plainly_free_of_the_buffer_holds_no_use_of_it():
    # an iteration variable or a region that the shortcut keeps holds no
    # block and no load, store or region of the rolled buffer: the walk
    # would have given it back unchanged
    from tirfun.analysis.traversal import walk, walk_stmts
    from tirfun.nodes import Block, BufferLoad, BufferRegion, BufferStore
    from tirfun.rewrites.rolling import _plainly_free_of
    from tirfun.testing.block_programs import random_block_program

    kept = 0
    for seed in range(40):
        func = random_block_program(seed, ("sliding", "located", "stages")[seed % 3])["main"]
        blocks = [s for _, s in walk_stmts(func.body) if isinstance(s, Block)]
        buffers = {r.buffer for b in blocks for r in list(b.reads) + list(b.writes)}
        for block in blocks:
            for c in list(block.iter_vars) + list(block.reads) + list(block.writes):
                for old in buffers:
                    if not _plainly_free_of(c, old):
                        continue
                    kept += 1
                    for n in walk(c):
                        assert not isinstance(n, Block)
                        assert not (isinstance(n, (BufferLoad, BufferStore, BufferRegion)) and n.buffer == old)
    assert kept > 100


def test_rolling_buffer_of_a_producer_split_unevenly_slides_what_it_surely_writes():
    # found by the fuzzer: split 4 by (2, 3) spans 6 elements of B under a
    # predicate keeping 4; the window was sized 6, with an overlap of 4, so
    # every iteration after the first skipped all it computes
    sch = tirfun.Schedule(_mod(ONE_D))
    sch.split(sch.get_loops("B")[-1], [None, 2, 3])
    mod = sch.mod
    out = R.rolling_buffer("B", 0)(mod)
    assert [d.value for d in out["main"].body.block.alloc_buffers[0].shape] == [4]
    assert_equivalent(mod["main"], out["main"], trials=3)


def test_rolling_buffer_of_a_buffer_a_consumer_views_is_refused():
    # found by the fuzzer: after tensorize, the consumer reads B through a
    # match buffer over B[i * 2 : i * 2 + 4]; rolled, that window wraps
    # around the 4 elements of B, which no view follows
    from tirfun.testing.draw_tensorize import intrin_of_block

    made = tirfun.Schedule(_mod(ONE_D))
    outer = made.blockize(made.get_loops("C")[-1])
    sch = tirfun.Schedule(_mod(ONE_D))
    sch.tensorize(sch.get_loops("C")[-1], intrin_of_block(made.mod["main"], outer.name))
    with pytest.raises(R.RollingBufferMatchError, match="block 'C_o' views B through the match buffer W1"):
        R.rolling_buffer("B", 0)(sch.mod)
    # without the view, the same program rolls
    out = R.rolling_buffer("B", 0)(_mod(ONE_D))
    assert_equivalent(_mod(ONE_D)["main"], out["main"], trials=2)


def test_a_block_writing_several_elements_of_the_sliding_dimension_is_refused():
    # loop_partition leaves a block holding the parts, writing the whole
    # window of an iteration: skipping it in later iterations would skip the
    # new elements with the old (it rolled, and computed another result)
    mod = _mod(ONE_D)
    parted = R.loop_partition("ax", [3])(mod)
    with pytest.raises(R.RollingBufferMatchError, match=r"the block writes B\[i \* 2:i \* 2 \+ 4\], 4 elements of "
                                                        r"dimension 0 per instance"):
        R.rolling_buffer("B_ax_common", 0)(parted)
    # the block that writes one element per instance still rolls
    rolled = R.rolling_buffer("B", 0)(mod)
    assert_equivalent(mod["main"], rolled["main"])
