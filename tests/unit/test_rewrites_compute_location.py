"""compute_at, reverse_compute_at, compute_inline and reverse_compute_inline:
exact results on small programs, and every ScheduleError subclass of the
family raised with its message."""

import re

import numpy as np
import pytest

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.nodes import IntImm, IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_built_as_interpreted, assert_equivalent

from corner_sources import (
    COPY_AND_READER_UNDER_ONE_IF, GUARDED_CONSUMER_OF_AN_INTERMEDIATE, GUARDED_DIVISION, LOOSE_READ, PLAIN_PRODUCER,
    READ_BEFORE_WRITE,
)

CHAIN = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
"""

STENCIL = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)
    for i_0, i_1 in T.grid(4, 2):
        with T.block("C"):
            vi = T.axis.spatial(8, i_0 * 2 + i_1)
            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
"""

MATMUL_RELU = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16))
    for i, j_0, k, j_1 in T.grid(16, 4, 16, 4):
        with T.block("Y"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            vk = T.axis.reduce(16, k)
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

TWO_CONSUMERS_WAR = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] + E[vi]
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = B[vi] * T.float32(3)
"""

GATHER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi * vi % 8] + T.float32(1)
"""

REDUCE_INTO = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 4))
    for i, k in T.grid(8, 4):
        with T.block("B"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = A[vi, vk] + T.float32(1)
    for i, k in T.grid(8, 4):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
"""

ONLY_BLOCK = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + T.float32(1)
"""


def mod_of(src: str) -> IRModule:
    return IRModule({"main": from_source(src)})


def raises(cls, rewrite, src, *parts):
    mod = mod_of(src)
    with pytest.raises(R.RewriteError) as info:
        rewrite(mod)
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err}"
    for part in parts:
        assert part in err.summary, err.summary
    str(err)  # renders with the offending TVMScript
    assert cls in [type(e) for e in rewrite.violations(mod)] or err.summary
    return err


# -- results ---------------------------------------------------------------------------

def test_compute_at_stencil_computes_the_window_of_each_iteration():
    mod = mod_of(STENCIL)
    out = R.compute_at("B", "i_0")(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i_0 in range(4):
        for ax0 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 2 + ax0)
                B[vi] = A[vi] * T.float32(2)
        for i_1 in range(2):
            with T.block("C"):
                vi = T.axis.spatial(8, i_0 * 2 + i_1)
                C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
""")
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])


def test_compute_at_binds_a_loop_of_one_iteration_to_its_value():
    # a split whose outer loop has one iteration, as TVM's tiling leaves
    # one: the new binding reads 0 there, as TVM's analyzer folds it
    src = STENCIL.replace("for i_0, i_1 in T.grid(4, 2):", "for u, i_0, i_1 in T.grid(1, 4, 2):") \
        .replace("vi = T.axis.spatial(8, i_0 * 2 + i_1)", "vi = T.axis.spatial(8, u * 8 + i_0 * 2 + i_1)")
    assert "u * 8" in src
    mod = mod_of(src)
    out = R.compute_at("B", "i_0")(mod)
    assert "vi = T.axis.spatial(10, i_0 * 2 + ax0)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_compute_at_index_places_the_block():
    mod = mod_of(STENCIL)
    first = R.compute_at("B", "i_0", index=0)(mod)
    last = R.compute_at("B", "i_0", index=-2)(mod)
    assert first == last
    with pytest.raises(R.InvalidInsertionIndexError, match=r"index 1 is not valid: it must be -1, -2 or in \[0, 0\]"):
        R.compute_at("B", "i_0", index=1)(mod)


def test_compute_at_preserve_unit_loops_keeps_loops_of_one_iteration():
    mod = mod_of(CHAIN)
    plain = R.compute_at("B", "i_1")(mod)
    kept = R.compute_at("B", "i_1", preserve_unit_loops=True)(mod)
    assert "ax0" not in plain["main"].script()
    assert "for ax0 in range(1)" in kept["main"].script()
    assert_equivalent(mod["main"], plain["main"])
    assert_equivalent(mod["main"], kept["main"])


def test_reverse_compute_at_follows_tvm_tutorial():
    mod = mod_of(MATMUL_RELU)
    out = R.reverse_compute_at("C", "j_0")(mod)
    text = out["main"].script()
    assert "for ax0 in range(4):" in text
    assert "T.axis.spatial(16, j_0 * 4 + ax0)" in text
    assert_equivalent(mod["main"], out["main"])
    rt = tirfun.build(out, target="llvm")
    a, b = np.random.rand(16, 16).astype("float32"), np.random.rand(16, 16).astype("float32")
    c = np.zeros((16, 16), "float32")
    rt(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def test_reverse_compute_at_of_a_reduction():
    mod = mod_of(REDUCE_INTO)
    out = R.reverse_compute_at("C", "i")(mod)
    assert_equivalent(mod["main"], out["main"])


def test_compute_inline_then_build():
    mod = mod_of(STENCIL)
    out = R.compute_inline("B")(mod)
    assert "alloc_buffer" not in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_inline_adds_the_consumers_bounds_as_a_predicate():
    src = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
"""
    mod = mod_of(src)
    out = R.reverse_compute_inline("C")(mod)
    assert "T.where(i < 8)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_schedule_methods_and_trace():
    sch = tirfun.Schedule(mod_of(MATMUL_RELU))
    assert sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("Y")[1]) is None
    assert "sch.reverse_compute_at(BlockRef(\"C\", \"main\"), LoopRef(\"j_0\", \"main\"), " \
           "preserve_unit_loops=False, index=-1)" in sch.trace.as_python()
    sch2 = tirfun.Schedule(mod_of(CHAIN))
    sch2.compute_inline("B")
    sch3 = tirfun.Schedule(mod_of(CHAIN))
    sch3.reverse_compute_inline("C")
    sch4 = tirfun.Schedule(mod_of(CHAIN))
    sch4.compute_at("B", sch4.get_loops("C")[0], preserve_unit_loops=True)
    for s in (sch, sch2, sch3, sch4):
        replay = R.Pipeline.from_json(s.trace.to_json())
        assert replay(mod_of(MATMUL_RELU if s is sch else CHAIN)) == s.mod


# -- errors ------------------------------------------------------------------------------

def test_root_block_error():
    raises(R.RootBlockError, R.compute_at("root", "i"), CHAIN, "compute_at: block 'root'", "root block")


def test_invalid_argument_error():
    raises(R.InvalidArgumentError, R.compute_at("B", "i_1", preserve_unit_loops=1), CHAIN,
           "argument preserve_unit_loops", "expected True or False")
    raises(R.InvalidArgumentError, R.reverse_compute_at("C", "i", index="last"), CHAIN,
           "argument index", "expected an int")


def test_not_in_same_scope_error():
    raises(R.NotInSameScopeError, R.compute_at("B", "i"), CHAIN,
           "loop 'i' is an ancestor of block 'B'; the block can only move under a loop outside it")


def test_not_all_required_blocks_are_visited_error():
    # B, a producer of E, runs after the loop of D: E moved under it would
    # read B before B writes it (a producer that has run to its end before
    # the loop is let through: test_reverse_compute_at_of_a_copy_back_...)
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = B[vi] * T.float32(3) + D[vi]
"""
    raises(R.NotAllRequiredBlocksAreVisitedError, R.reverse_compute_at("E", "i"), src,
           "reverse_compute_at requires all the producer(s) of the block to be under loop 'i', and 1 are not: 'B'")


def test_not_all_consumers_under_the_loop():
    src = TWO_CONSUMERS_WAR
    raises(R.NotAllRequiredBlocksAreVisitedError, R.compute_at("B", "i_1"), src,
           "compute_at requires all the consumer(s) of the block to be under loop 'i_1', and 1 are not: 'E'")


def test_not_complete_or_reduction_block_error():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
            C[vi] = C[vi] + T.float32(1)
"""
    raises(R.NotCompleteOrReductionBlockError, R.reverse_compute_at("C", "i"), src,
           "neither a complete block (it fails condition 3")


def test_output_block_error():
    raises(R.OutputBlockError, R.compute_at("C", "i"), CHAIN, "output block")
    raises(R.OutputBlockError, R.compute_inline("C"), CHAIN, "an output block cannot be inlined")


# the scope's only block
ONLY_LEAF = """
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
"""


def test_only_leaf_error():
    raises(R.OnlyLeafError, R.compute_inline("B"), ONLY_LEAF, "only leaf of scope 'root'")


def test_only_leaf_error_in_a_sequence_of_one_statement():
    # found by the fuzzer: a rewrite left the root's body a sequence of one
    # loop; taking the block out deleted that item and built an empty
    # sequence (a NodeError) where the only leaf should be refused
    from tirfun.nodes import SeqStmt
    from tirfun.nodes.base import with_fields

    func = mod_of(ONLY_LEAF)["main"]
    root = func.body.block
    wrapped = with_fields(func, body=with_fields(func.body, block=with_fields(root, body=SeqStmt([root.body]))))
    with pytest.raises(R.OnlyLeafError, match="it is the only leaf of scope 'root'"):
        R.compute_inline("B")(IRModule({"main": wrapped}))


def test_not_stage_pipeline_error():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i % 2 == 0)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi]
"""
    raises(R.NotStagePipelineError, R.compute_at("B", "i_1"), src,
           "block 'C' reads elements of B that 'B' do not surely write")
    raises(R.NotStagePipelineError, R.compute_inline("B"), src, "does not surely write")


def test_dependence_violation_error():
    raises(R.DependenceViolationError, R.reverse_compute_at("E", "i"), TWO_CONSUMERS_WAR,
           "reorders it with block 'D', and one of them writes E")


def test_unsupported_region_error():
    raises(R.UnsupportedRegionError, R.reverse_compute_at("C", "i"), GATHER,
           "% 8, which is not an iteration variable plus a constant")
    raises(R.UnsupportedRegionError, R.reverse_compute_at("C", "i"), STENCIL,
           "reads B over more than one element per iteration")


def test_non_trivial_predicate_error():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.where(i < 5)
            C[vi] = B[vi]
"""
    # a condition on a loop bound alone goes with the block, in its variable
    mod = mod_of(src)
    out = R.reverse_compute_at("C", "i")(mod)
    assert "T.where(i < 5)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    # one on the high part of a binding of two loops cannot be written in
    # the block's variables, and would be lost
    split = src.replace("for i in range(8):\n        with T.block(\"C\"):\n            vi = T.axis.spatial(8, i)\n"
                        "            T.where(i < 5)",
                        "for i_0, i_1 in T.grid(4, 2):\n        with T.block(\"C\"):\n"
                        "            vi = T.axis.spatial(8, i_0 * 2 + i_1)\n            T.where(i_0 < 3)")
    assert split != src
    raises(R.NonTrivialPredicateError, R.reverse_compute_at("C", "i"), split,
           "does not follow from the domains", "its condition i_0 < 3 cannot be written in them")


def test_thread_overlap_error():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for t in T.thread_binding(8, thread="threadIdx.x"):
        for j in range(1):
            with T.block("C"):
                vi = T.axis.spatial(8, t + j)
                C[vi] = B[0] + B[vi]
"""
    parallel = src.replace('T.thread_binding(8, thread="threadIdx.x")', "T.parallel(8)")
    raises(R.ThreadOverlapError, R.compute_at("B", "j"), parallel,
           "under the parallel loops 't', several threads would compute")


def test_has_init_block_error():
    raises(R.HasInitBlockError, R.compute_inline("Y"), MATMUL_RELU, "init statement")
    raises(R.HasInitBlockError, R.reverse_compute_inline("C"), REDUCE_INTO, "init statement")


def test_not_single_read_write_buffer_error():
    raises(R.NotSingleReadWriteBufferError, R.reverse_compute_inline("B"), CHAIN,
           "reads 0 buffers that its scope writes")
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    D = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
            D[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + D[vi]
"""
    raises(R.NotSingleReadWriteBufferError, R.compute_inline("B"), src, "writes 2 buffer regions")


def test_incomplete_block_error():
    src = CHAIN.replace("B[vi] = A[vi] * T.float32(2)", "B[vi] = A[vi] * T.float32(2)\n            B[vi] = B[vi] + T.float32(1)")
    raises(R.IncompleteBlockError, R.compute_inline("B"), src, "fails condition 3")


def test_body_analysis_error():
    src = CHAIN.replace("B[vi] = A[vi] * T.float32(2)", "B[vi % 4] = A[vi] * T.float32(2)")
    raises(R.BodyAnalysisError, R.compute_inline("B"), src, "a bijective affine map of the iteration variables")
    raises(R.BodyAnalysisError, R.reverse_compute_inline("C"), GATHER,
           "the indices of B must be a bijective affine map of the block's iteration variables")


def test_non_single_producer_error():
    src = CHAIN.replace("C: T.Buffer((8,), \"float32\")", "C: T.Buffer((8,), \"float32\"), D: T.Buffer((8,), \"float32\")")
    src += """    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] * T.float32(3)
"""
    raises(R.NonSingleProducerError, R.reverse_compute_inline("C"), src, "block 'D' also uses B")


# C reads B through a match buffer of its own
MATCHED_READER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi])
            T.writes(C[vi])
            Bv = T.match_buffer(B[vi], (1,))
            C[vi] = Bv[0]
"""


def test_opaque_access_error():
    raises(R.OpaqueAccessError, R.compute_inline("B"), MATCHED_READER, "matched into a block")


def test_inputs_are_never_changed():
    mod = mod_of(TWO_CONSUMERS_WAR)
    snapshot = mod.functions["main"].script()
    for r in (R.reverse_compute_at("E", "i"), R.compute_inline("B"), R.reverse_compute_inline("E")):
        try:
            r(mod)
        except R.RewriteError:
            pass
    assert mod.functions["main"].script() == snapshot


def test_producers_split_twice_without_dividing_still_cover():
    mod = mod_of(CHAIN.replace("range(8)", "range(7)").replace("(8,)", "(7,)").replace("spatial(8", "spatial(7"))
    mod = R.split("i", [None, 4])(mod)
    mod = R.split("i_1_1", [None, 3])(mod)  # the inner part, guarded by i_1_1_0 * 3 + i_1_1_1 < 4
    mod = R.split("i_1", [None, 2])(mod)  # the consumer's loop
    for rewrite in (R.compute_inline("B"), R.compute_at("B", "i_1_0"), R.reverse_compute_at("C", "i_0")):
        assert rewrite.violations(mod) == [], rewrite
        assert_equivalent(mod["main"], rewrite(mod)["main"])
    # as in TVM, a consumer with a predicate is not inlined into its producer
    assert type(R.reverse_compute_inline("C").violations(mod)[0]) is R.BodyAnalysisError


def test_inline_through_affine_indices():
    src = """
@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), C: T.Buffer((12,), "float32")):
    B = T.alloc_buffer((12,))
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi * 3 + vj] = A[vi, vj] * T.float32(2)
    for k in range(12):
        with T.block("C"):
            vk = T.axis.spatial(12, k)
            C[vk] = B[vk] + T.float32(1)
"""
    mod = mod_of(src)
    out = R.compute_inline("B")(mod)
    assert "A[vk // 3, vk % 3]" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    shifted = mod_of(CHAIN.replace("C[vi] = B[vi] + T.float32(1)", "C[vi] = B[vi] + T.float32(1)").replace(
        "B = T.alloc_buffer((8,))", "B = T.alloc_buffer((9,))").replace("B[vi] = A[vi] * T.float32(2)",
                                                                         "B[vi + 1] = A[vi] * T.float32(2)").replace(
        "C[vi] = B[vi] + T.float32(1)", "C[vi] = B[vi + 1] + T.float32(1)"))
    for rewrite in (R.compute_inline("B"), R.reverse_compute_inline("C")):
        assert_equivalent(shifted["main"], rewrite(shifted)["main"])


def test_tvm_transformation_tutorial_through_reverse_compute_at():
    """The steps of TVM's TensorIR transformation tutorial up to
    reverse_compute_at, with ``import tvm`` served by tirfun."""
    import tirfun.compat

    tvm = tirfun.compat.install()
    try:
        from tvm.script import ir as I
        from tvm.script import tir as T

        @I.ir_module
        class MyModule:
            @T.prim_func
            def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                     C: T.Buffer((128, 128), "float32")):
                T.func_attr({"global_symbol": "main", "tir.noalias": True})
                Y = T.alloc_buffer((128, 128), dtype="float32")
                for i, j, k in T.grid(128, 128, 128):
                    with T.block("Y"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j)
                        vk = T.axis.reduce(128, k)
                        with T.init():
                            Y[vi, vj] = T.float32(0)
                        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
                for i, j in T.grid(128, 128):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j)
                        C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

        sch = tvm.tir.Schedule(MyModule)
        block_Y = sch.get_block("Y", func_name="main")
        i, j, k = sch.get_loops(block_Y)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        block_C = sch.get_block("C", "main")
        sch.reverse_compute_at(block_C, j0)
        text = sch.mod.script()
        assert "for ax0 in range(4):" in text and "T.axis.spatial(128, j_0 * 4 + ax0)" in text
        assert "sch.reverse_compute_at(" in sch.trace.as_python()
        a = np.random.default_rng(0).uniform(-1, 1, (128, 128)).astype("float32")
        b = np.random.default_rng(1).uniform(-1, 1, (128, 128)).astype("float32")
        c = tvm.nd.array(np.zeros((128, 128), "float32"))
        tvm.compile(sch.mod, target="llvm")(tvm.nd.array(a), tvm.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    finally:
        tirfun.compat.uninstall()


def test_a_reader_using_a_data_pointer_is_not_rewritten():
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(B[vi], X[0:8])
            T.writes(C[vi])
            C[vi] = B[vi] + T.Cast("float32", T.call_extern("int32", "f", X.data))
"""
    raises(R.OpaqueAccessError, R.compute_inline("B"), src,
           "block 'C' uses X through its data pointer, so its regions cannot be inferred again")
    raises(R.OpaqueAccessError, R.reverse_compute_inline("C"), src, "block 'C' uses X through its data pointer")


_UNIT_LOOPS = '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] + T.float32(1)'''


def test_compute_inline_of_a_producer_under_unit_loops_of_a_split():
    # split [1, 4, 1] leaves unit loops in the producer's binding; the
    # region it writes is still all of B (TVM accepts; a unit loop takes its
    # one value in the stage-pipeline check)
    mod = mod_of(_UNIT_LOOPS)
    after = R.Pipeline([R.split("i", [1, 4, 1]), R.compute_inline("B")])(mod)
    assert "B[" not in after.script()
    assert_equivalent(mod["main"], after["main"], trials=2)


_GUARDED_REDUCTION = '''@T.prim_func
def main(A: T.Buffer((4, 5), "int32"), B: T.Buffer((4, 4), "int32"), D: T.Buffer((4, 4), "int32")):
    C = T.alloc_buffer((4,), "int32")
    for i in range(4):
        for k in range(5):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = 0
                C[vi] = C[vi] + A[vi, vk]
        for j in range(4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = C[vi] + B[vi, vj]'''


def test_compute_at_of_a_reduction_whose_reduction_loop_split_does_not_divide():
    # the split's guard k_0 * 2 + k_1 < 5 is on loops the written index does
    # not use, and it holds where they start: every C[vi] is still written
    mod = mod_of(_GUARDED_REDUCTION)
    after = R.Pipeline([R.split("k", [None, 2]), R.compute_at("C", "j")])(mod)
    assert_equivalent(mod["main"], after["main"], trials=2)
    a = np.arange(20, dtype="int32").reshape(4, 5)
    b = np.ones((4, 4), "int32")
    d = np.zeros((4, 4), "int32")
    tirfun.build(after, target="llvm")(a, b, d)
    np.testing.assert_array_equal(d, a.sum(axis=1)[:, None] + b)


_SLICE = '''@T.prim_func
def main(A: T.Buffer((4, 3), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4, 3))
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi, 1] + T.float32(1)'''


def test_reverse_compute_inline_of_a_consumer_reading_one_slice_keeps_only_that_slice():
    # C reads B at the constant column 1: the inlined block writes C only in
    # the producer instances of that column (T.where(vj == 1)); without the
    # guard every column would overwrite C[vi], as TVM's result does
    mod = mod_of(_SLICE)
    after = R.reverse_compute_inline("C")(mod)
    text = after.script()
    assert "T.where(j == 1)" in text and "C[vi] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)" in text
    assert_equivalent(mod["main"], after["main"], trials=2)


def test_reverse_compute_inline_of_a_constant_index_into_a_unit_dimension():
    src = _SLICE.replace("(4, 3)", "(4, 1)").replace("T.grid(4, 3)", "T.grid(4, 1)").replace("B[vi, 1]", "B[vi, 0]")
    mod = mod_of(src)
    after = R.reverse_compute_inline("C")(mod)
    assert "T.where" not in after.script()
    assert_equivalent(mod["main"], after["main"], trials=2)


_RESHAPE = '''@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((4, 4), "float32")):
    B = T.alloc_buffer((4, 4))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi // 4, vi % 4] = A[vi] * T.float32(2)
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)'''


@pytest.mark.parametrize("steps, binding", [
    ([R.compute_at("B", "i_1")], "vi = T.axis.spatial(16, i_1 * 4 + ax0)"),
    ([R.compute_at("B", "j")], "vi = T.axis.spatial(16, i_1 * 4 + j)"),
    ([R.split("j", [2, 2]), R.compute_at("B", "j_0")], "vi = T.axis.spatial(16, i_1 * 4 + j_0 * 2 + ax0)"),
    # a column of B: vi runs from the first element needed to the last
    ([R.reorder("j", "i_1"), R.compute_at("B", "j")], "vi = T.axis.spatial(16, j + ax0)"),
])
def test_compute_at_of_a_producer_writing_through_an_iteration_map(steps, binding):
    # TVM solves B[vi // 4, vi % 4] with its affine inverse; so does tirfun
    mod = mod_of(_RESHAPE)
    after = R.Pipeline(steps)(mod)
    assert binding in after.script()
    assert_equivalent(mod["main"], after["main"], trials=2)
    a = np.arange(16, dtype="float32")
    c = np.zeros((4, 4), "float32")
    tirfun.build(after, target="llvm")(a, c)
    np.testing.assert_array_equal(c, (a * 2 + 1).reshape(4, 4))


def test_compute_at_of_a_producer_writing_a_permutation_of_one_variable_is_refused():
    # B[vi % 2 * 2 + vi // 2]: two pieces of vi in one index, the lower one
    # taken modulo, so the first and last elements needed do not bound vi
    src = _UNIT_LOOPS.replace("B[vi] = A[vi] * T.float32(2)", "B[vi % 2 * 2 + vi // 2] = A[vi] * T.float32(2)")
    with pytest.raises(R.UnsupportedRegionError, match=r"writes B at vi % 2 \* 2 \+ vi // 2"):
        R.compute_at("B", "i_1")(mod_of(src))


def test_compute_at_needs_no_producer_for_a_read_region_past_the_buffer():
    # a declared read region may reach past the buffer's start (a window
    # the body clips, as annotate_buffer_access declares one in TVM's
    # resize test): only elements inside the buffer need a producer
    src = STENCIL.replace("            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]",
                          "            T.reads(B[vi - 1:vi + 2])\n            T.writes(C[vi])\n"
                          "            C[vi] = T.if_then_else(1 <= vi, B[T.max(vi - 1, 0)], T.float32(0)) + B[vi + 1]")
    assert "T.reads(B[vi - 1:vi + 2])" in src
    mod = mod_of(src)
    out = R.compute_at("B", "i_0")(mod)
    assert_equivalent(mod["main"], out["main"])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_compute_at_with_symbolic_extents_needs_no_predicate(dtype):
    # the producer writes all of C over loops of symbolic extents: the
    # stage pipeline holds, and the moved block needs no T.where, since
    # each loop bounds its own variable
    from tirfun import te

    n, m = te.var("n", dtype=dtype), te.var("m", dtype=dtype)
    A = te.placeholder((n, m), name="A", dtype="float32")
    C = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="C")
    D = te.compute((n, m), lambda i, j: C[i, j] + 1.0, name="D")
    mod = IRModule({"main": te.create_prim_func([A, D])})
    sch = tirfun.Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("D"))
    sch.compute_at(sch.get_block("C"), i)
    text = sch.mod.script()
    assert "T.where" not in text
    assert_equivalent(mod["main"], sch.mod["main"], sizes={"n": 3, "m": 5})


def test_reverse_compute_at_under_int64_loops_of_a_buffer_with_an_int32_shape():
    # the consumer's read region is int64 (its loops are) and the buffer's
    # shape int32: the region cover check compares them in one dtype
    src = '''@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((1, 2, 1), "float32")):
    B = T.alloc_buffer((128, 128))
    for i_0, j_0, i_1 in T.grid(T.int64(8), T.int64(8), T.int64(16)):
        for j_1 in range(T.int64(16)):
            with T.block("B"):
                vi = T.axis.spatial(T.int64(128), i_0 * T.int64(16) + i_1)
                vj = T.axis.spatial(T.int64(128), j_0 * T.int64(16) + j_1)
                B[vi, vj] = A[vi, vj] * T.float32(2)
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(2), T.int64(1)):
        with T.block("D"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            D[v0, v1, v2] = B[v0, v1] + T.float32(1)
'''
    mod = mod_of(src)
    out = R.reverse_compute_at("D", "i_1", preserve_unit_loops=True)(mod)
    assert_equivalent(mod["main"], out["main"], trials=1)


def test_compute_at_of_a_block_writing_a_tile_per_iteration():
    # the outer block of a blockized producer writes a 4x4 tile of B for each
    # (vio, vjo); under C's loop over 8-row stripes it runs for the two tile
    # rows each stripe reads, as TVM solves it
    src = '''@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32))
    for i_o, j_o in T.grid(8, 8):
        with T.block("B_outer"):
            vio, vjo = T.axis.remap("SS", [i_o, j_o])
            T.reads(A[vio * 4:vio * 4 + 4, vjo * 4:vjo * 4 + 4])
            T.writes(B[vio * 4:vio * 4 + 4, vjo * 4:vjo * 4 + 4])
            for i_i, j_i in T.grid(4, 4):
                with T.block("B"):
                    vi = T.axis.spatial(32, vio * 4 + i_i)
                    vj = T.axis.spatial(32, vjo * 4 + j_i)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_o, j_o, i_i, j_i in T.grid(4, 4, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i_o * 8 + i_i)
            vj = T.axis.spatial(32, j_o * 8 + j_i)
            C[vi, vj] = B[vi, vj] + T.float32(1)
'''
    mod = mod_of(src)
    out = R.compute_at("B_outer", "j_o_1")(mod)
    text = out.script()
    assert "vio = T.axis.spatial(8, i_o_1 * 2 + ax0)" in text
    assert "vjo = T.axis.spatial(8, j_o_1 * 2 + ax1)" in text
    assert "for ax0, ax1 in T.grid(2, 2):" in text
    assert_equivalent(mod["main"], out["main"], trials=1)


def test_compute_at_of_a_producer_that_writes_backwards():
    # b0 writes Y[9 - vi, 9 - vj]; under b1's row loop it runs for the one
    # column of Y that row reads, its bindings solved backwards (TVM's rev_iter)
    src = '''@T.prim_func
def main(X: T.Buffer((10, 10), "float32"), Z: T.Buffer((10, 10), "float32")):
    Y = T.alloc_buffer((10, 10))
    for i, j in T.grid(10, 10):
        with T.block("b0"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[9 - vi, 9 - vj] = X[vi, vj] + T.float32(1)
    for i, j in T.grid(10, 10):
        with T.block("b1"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vj, vi] + T.float32(2)
'''
    mod = mod_of(src)
    out = R.compute_at("b0", "i_1")(mod)
    text = out.script()
    assert "vi = T.axis.spatial(10, ax0)" in text
    assert "vj = T.axis.spatial(10, 9 - i_1)" in text
    assert_equivalent(mod["main"], out["main"], trials=1)


def test_reverse_compute_at_refuses_a_padding_consumer_whose_border_would_never_run():
    # found by the soak: under the producer's loop, the padding block runs only
    # for the elements the producer writes; its border reads nothing any
    # producer writes and would never be written
    src = '''@T.prim_func
def main(A: T.Buffer((1, 1), "float32"), P: T.Buffer((3, 3), "float32")):
    B = T.alloc_buffer((1, 1))
    for i, j in T.grid(1, 1):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(3, 3):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi - 1, vj - 1])
            T.writes(P[vi, vj])
            P[vi, vj] = T.if_then_else(1 <= vi and vi < 2 and 1 <= vj and vj < 2, B[vi - 1, vj - 1], T.float32(0))
'''
    with pytest.raises(R.UnsupportedRegionError,
                       match=r"write what the block reads for vi_1 in \[1, 1\] only, of its domain \[0, 2\]: "
                             r"the other instances .* would never run"):
        R.reverse_compute_at("P", "i")(mod_of(src))


FLAT_READ = '''@T.prim_func
def main(X: T.Buffer((16, 16), "float32"), Y: T.Buffer((256,), "float32")):
    temp = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("A"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            temp[v_i, v_j] = X[v_j, v_i] + T.float32(1)
    for i in range(256):
        with T.block("B"):
            v = T.axis.spatial(256, i)
            Y[v] = temp[INDEX]
'''


def test_reverse_compute_at_of_a_consumer_reading_through_floordiv_and_floormod():
    # TVM's floordiv_and_floormod_indices: the instances of B that read row i
    # of temp are v in [16 * i, 16 * i + 16), from the inverse of the map
    mod = mod_of(FLAT_READ.replace("INDEX", "v // 16, v % 16"))
    out = R.reverse_compute_at("B", "i")(mod)
    expected = mod_of('''@T.prim_func
def main(X: T.Buffer((16, 16), "float32"), Y: T.Buffer((256,), "float32")):
    temp = T.alloc_buffer((16, 16))
    for i in range(16):
        for j in range(16):
            with T.block("A"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                temp[v_i, v_j] = X[v_j, v_i] + T.float32(1)
        for ax0 in range(16):
            with T.block("B"):
                v = T.axis.spatial(256, i * 16 + ax0)
                Y[v] = temp[v // 16, v % 16]
''')
    assert_structural_equal(out["main"], expected["main"])
    assert_equivalent(mod["main"], out["main"])
    # under the inner loop, one element per iteration: one instance
    inner = R.reverse_compute_at("B", "j")(mod)
    assert "v = T.axis.spatial(256, i * 16 + j)" in inner["main"].script()
    assert_equivalent(mod["main"], inner["main"])


def test_reverse_compute_at_of_a_floordiv_read_under_a_split_loop():
    mod = R.split("j", [4, 4])(mod_of(FLAT_READ.replace("INDEX", "v // 16, v % 16")))
    out = R.reverse_compute_at("B", "j_0")(mod)
    assert "v = T.axis.spatial(256, i * 16 + j_0 * 4 + ax0)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_at_of_the_recursive_floordiv_and_floormod_reads():
    # TVM's recursive_floordiv_floormod, smaller: slices of three variables
    # over seven dimensions; w1 // 8 is 0 over w1's domain of 3
    mod = mod_of('''@T.prim_func
def main(A: T.Buffer((16, 64, 1, 8, 8, 32), "float32"), C: T.Buffer((3, 64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    B = T.alloc_buffer((1, 16, 2, 8, 2, 32, 2))
    for a1, a2, a3, a4, a5, a6, a7 in T.grid(1, 16, 2, 8, 2, 32, 2):
        with T.block("In"):
            v1, v2, v3, v4, v5, v6, v7 = T.axis.remap("SSSSSSS", [a1, a2, a3, a4, a5, a6, a7])
            B[v1, v2, v3, v4, v5, v6, v7] = A[(v2 * 4 + v5 * 2 + v7) // 32, (v3 * 32 + v6) // 8, (v1 * 8 + v4) // 8, (v3 * 32 + v6) % 8, v1 * 8 + v4, (v2 * 4 + v5 * 2 + v7) % 32] + T.float32(3)
    for x1, x2, x3 in T.grid(3, 64, 64):
        with T.block("Out"):
            w1, w2, w3 = T.axis.remap("SSS", [x1, x2, x3])
            C[w1, w2, w3] = B[w1 // 8, w2 // 4, w3 // 32, w1, w2 % 4 // 2, w3 % 32, w2 % 2] * T.float32(2)
''')
    out = R.reverse_compute_at("Out", "a3")(mod)
    text = out["main"].script()
    assert "for ax0, ax1, ax2 in T.grid(3, 4, 32):" in text
    assert "w2 = T.axis.spatial(64, a2 * 4 + ax1)" in text
    assert "w3 = T.axis.spatial(64, a3 * 32 + ax2)" in text
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_at_refuses_a_read_whose_instances_are_not_one_range():
    # temp[v % 16, v // 16]: the instances that read row i of temp are
    # i, i + 16, ..., i + 240; their hull (TVM's answer) would also run
    # instances reading rows not written yet
    mod = mod_of(FLAT_READ.replace("INDEX", "v % 16, v // 16"))
    with pytest.raises(R.UnsupportedRegionError,
                       match=r"the instances of the block that read what the producers write of temp "
                             r"in one iteration of loop 'i' are not one range of v: any range holding "
                             r"them would also run instances that read elements not written yet"):
        R.reverse_compute_at("B", "i")(mod)


def test_reverse_compute_inline_of_a_consumer_reading_a_split_of_its_fused_index():
    # TVM's elementwise_reverse_affine_load, smaller: C reads B at the split
    # of its four indices fused; the producer then writes C at the inverse
    mod = mod_of('''@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((2, 4, 4, 8), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k, l in T.grid(2, 4, 4, 8):
        with T.block("C"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            C[vi, vj, vk, vl] = B[(((vi * 4 + vj) * 4 + vk) * 8 + vl) // 16, (((vi * 4 + vj) * 4 + vk) * 8 + vl) % 16]
''')
    out = R.reverse_compute_inline("C")(mod)
    assert "C[vi // 8, vi // 2 % 4, vi % 2 * 2 + vj // 8, vj % 8] = A[vi, vj] * T.float32(2" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_compute_at_of_a_producer_read_once_per_repeat_has_no_unit_loop():
    # TVM's tiled_repeat_op: T_repeat[ax0] reads T_add[ax0 // 16]; under i0_0
    # one element is read, T_add[i0_0 // 2], as (i0_0 * 8 + 7) // 16 and
    # i0_0 * 8 // 16 are both i0_0 // 2
    mod = mod_of('''@T.prim_func
def main(x: T.Buffer((4,), "float32"), T_repeat: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,))
    for i0 in range(4):
        with T.block("T_add"):
            ax0 = T.axis.spatial(4, i0)
            T_add[ax0] = x[ax0] + T.float32(1)
    for i0_0, i0_1 in T.grid(8, 8):
        with T.block("T_repeat"):
            ax0 = T.axis.spatial(64, i0_0 * 8 + i0_1)
            T_repeat[ax0] = T_add[ax0 // 16]
''')
    out = R.compute_at("T_add", "i0_0")(mod)
    expected = mod_of('''@T.prim_func
def main(x: T.Buffer((4,), "float32"), T_repeat: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,))
    for i0_0 in range(8):
        with T.block("T_add"):
            ax0 = T.axis.spatial(4, i0_0 // 2)
            T_add[ax0] = x[ax0] + T.float32(1)
        for i0_1 in range(8):
            with T.block("T_repeat"):
                ax0 = T.axis.spatial(64, i0_0 * 8 + i0_1)
                T_repeat[ax0] = T_add[ax0 // 16]
''')
    assert_structural_equal(out["main"], expected["main"])
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_inline_into_an_overcomputing_producer_through_a_non_dividing_split():
    # TVM's elementwise_overcomputed_producer_injective_load, smaller: C reads
    # B at v // 4 and v % 4 over v < 7, which 4 does not divide: read over
    # v < 8, the producer writes C where the recovered v is below 7
    mod = mod_of('''@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((7, 7), "float32")):
    B = T.alloc_buffer((2, 2, 4, 4))
    for i0, j0, i1, j1 in T.grid(2, 2, 4, 4):
        with T.block("B"):
            vi, vj, vm, vn = T.axis.remap("SSSS", [i0, j0, i1, j1])
            B[vi, vj, vm, vn] = A[vi * 4 + vm, vj * 4 + vn] * T.float32(2)
    for i, j in T.grid(7, 7):
        with T.block("C"):
            cvi, cvj = T.axis.remap("SS", [i, j])
            C[cvi, cvj] = B[cvi // 4, cvj // 4, cvi % 4, cvj % 4] + T.float32(1)
''')
    out = R.reverse_compute_inline("C")(mod)
    text = out["main"].script()
    assert "T.where(i0 * 4 + i1 < 7 and j0 * 4 + j1 < 7)" in text
    assert "C[vi * 4 + vm, vj * 4 + vn] = A[vi * 4 + vm, vj * 4 + vn] * T.float32(2" in text
    assert_equivalent(mod["main"], out["main"])



def test_reverse_compute_inline_of_a_consumer_over_a_producer_in_int64_indices():
    # pad_einsum may leave a stage on int64 loops between int32 ones: the
    # consumer's domain bounds are compared in one dtype
    # (they were built int32 against int64 and failed with a NodeError)
    mod = mod_of('''@T.prim_func
def main(A: T.Buffer((8, 4), "int8"), C: T.Buffer((8, 4), "int8")):
    P = T.alloc_buffer((9, 4), "int8")
    Q = T.alloc_buffer((9, 4), "int8")
    for i, j in T.grid(9, 4):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = T.if_then_else(vi < 8, A[vi, vj], T.int8(0))
    for i, j in T.grid(T.int64(9), T.int64(4)):
        with T.block("Q"):
            vi, vj = T.axis.remap("SS", [i, j])
            Q[vi, vj] = P[vi, vj] * P[vi, vj]
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = Q[vi, vj]
''')
    out = R.reverse_compute_inline("C")(mod)
    assert "T.where(T.Cast(\"int32\", i_1) < 8)" in out["main"].script()
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    # and the int32 producer inlines into the int64 consumer: its variables
    # take the consumer's indices cast to int32 (the bound vi < 8 was built
    # int64 against int32 and failed with a NodeError)
    inlined = R.compute_inline("P")(out)
    assert "T.if_then_else(T.Cast(\"int32\", vi_1) < 8" in inlined["main"].script()
    verify(inlined)
    assert_equivalent(mod["main"], inlined["main"])

_ONE_POINT = '''
@T.prim_func
def main(A: T.Buffer((1,), "int64"), C: T.Buffer((3,), "float32"), J: T.Buffer((1,), "float32")):
    B = T.alloc_buffer((3,), "bool")
    for i in range(3):
        with T.block("B"):
            vi = T.axis.spatial(3, i)
            B[vi] = C[vi] > T.float32(0)
    for i_2 in range(1):
        with T.block("J"):
            vi_2 = T.axis.spatial(1, i_2)
            J[vi_2] = T.Cast("float32", A[vi_2]) + T.Cast("float32", B[INDEX])
'''


@pytest.mark.parametrize("index", ["1", "vi_2 + 1", "T.min(vi_2 + 1, 2)", "T.max(vi_2, 1)"])
def test_reverse_compute_inline_of_a_read_constant_once_unit_variables_take_their_value(index):
    # the consumer's one iteration reads B[1]: only the producer's instance
    # writing B[1] may compute J (the soak found the last three writing J
    # in every instance, so J took B[2])
    mod = IRModule({"main": from_source(_ONE_POINT.replace("INDEX", index))})
    out = R.reverse_compute_inline("J")(mod)
    assert "T.where(i == 1)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"], trials=5)


# TVM's test_shape_var_as_bound: an rfactor of a matmul-vector product whose
# spatial loops of 32 and n were fused (f // n, f % n of a loop of n * 32)
SYMBOLIC_FUSED = '''
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (32, 1, 128))
    B = T.match_buffer(b, (32, n, 128))
    C = T.match_buffer(c, (32, 1, n))
    C_rf = T.alloc_buffer((128, 32, 1, n))
    for f, k1, k0 in T.grid(n * 32, 128, 1):
        with T.block("rf"):
            vk1 = T.axis.spatial(128, k1)
            v0 = T.axis.spatial(32, f // n)
            v1 = T.axis.spatial(n, f % n)
            vk0 = T.axis.reduce(1, k0)
            with T.init():
                C_rf[vk1, v0, 0, v1] = T.float32(0)
            C_rf[vk1, v0, 0, v1] = C_rf[vk1, v0, 0, v1] + A[v0, 0, vk0 * 128 + vk1] * B[v0, v1, vk0 * 128 + vk1]
    for f, k1 in T.grid(n * 32, 128):
        with T.block("C"):
            vk1 = T.axis.reduce(128, k1)
            v0 = T.axis.spatial(32, f // n)
            v1 = T.axis.spatial(n, f % n)
            with T.init():
                C[v0, 0, v1] = T.float32(0)
            C[v0, 0, v1] = C[v0, 0, v1] + C_rf[vk1, v0, 0, v1]
'''


def test_reverse_compute_at_into_a_fused_loop_of_symbolic_extent():
    # f // n and f % n are an affine binding (TVM's iterator maps read them
    # so): the reduction block is a reduction block, and the partial sums of
    # one f are what it reads under f
    mod = IRModule({"main": from_source(SYMBOLIC_FUSED)})
    out = R.reverse_compute_at("C", "f")(mod)
    loop = out["main"].body.block.body
    assert loop.loop_var.name == "f" and [type(s).__name__ for s in loop.body.seq] == ["For", "For"]
    assert_equivalent(mod["main"], out["main"], trials=2)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 1, 128)).astype("float32")
    b = rng.standard_normal((32, 5, 128)).astype("float32")
    c_before, c_after = np.zeros((32, 1, 5), "float32"), np.zeros((32, 1, 5), "float32")
    tirfun.build(mod, target="llvm")(a, b, c_before)
    tirfun.build(out, target="llvm")(a, b, c_after)
    assert c_before.tobytes() == c_after.tobytes()


# a consumer that stores under a condition on the reduction's result
PARTIAL = '''
@T.prim_func
def main(A: T.Buffer((2, 4), "float32"), D: T.Buffer((2,), "float32"), F: T.Buffer((2,), "float32")):
    for i, k in T.grid(2, 4):
        with T.block("D"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                D[vi] = T.float32(0)
            D[vi] = D[vi] + A[vi, vk]
    for i in range(2):
        with T.block("F"):
            vi = T.axis.spatial(2, i)
            if D[vi] < T.float32(1):
                F[vi] = D[vi]
'''


def test_reverse_compute_at_into_a_reduction_loop_of_the_producer_needs_an_overwriting_consumer():
    # found by the soak: under k, F reads D's partial sums; a store guarded by
    # a condition on them can keep a value from a partial sum (TVM accepts it)
    mod = IRModule({"main": from_source(PARTIAL)})
    with pytest.raises(R.NotStagePipelineError, match=r"loop 'k' drives the reduction variable vk of block 'D': "
                                                      r"placed under it, the block would read the partial results"):
        R.reverse_compute_at("F", "k")(mod)
    # under i the reduction is whole
    out = R.reverse_compute_at("F", "i")(mod)
    assert_equivalent(mod["main"], out["main"])
    # an unconditional store is overwritten in the last iteration: allowed, as in TVM
    plain = IRModule({"main": from_source(PARTIAL.replace("            if D[vi] < T.float32(1):\n"
                                                          "                F[vi] = D[vi]",
                                                          "            F[vi] = D[vi] * T.float32(2)"))})
    out = R.reverse_compute_at("F", "k")(plain)
    assert_equivalent(plain["main"], out["main"])


# found by the soak: the padded stage's buffer fused by transform_layout, so
# the producer stores at P[vc * 2 + vh, vw] with vc of extent 1
FUSED_UNIT = '''
@T.prim_func
def main(X: T.Buffer((1, 1, 2), "float32"), Y: T.Buffer((1, 2, 2), "float32")):
    P = T.alloc_buffer((1, 2, 2))
    for c_0, c_1_1, h, w in T.grid(1, 2, 2, 2):
        with T.block("pad"):
            vc = T.axis.spatial(1, c_0 * 2 + c_1_1)
            vh, vw = T.axis.remap("SS", [h, w])
            T.where(c_0 * 2 + c_1_1 < 1)
            T.reads(X[vc, vh - 1, T.Sub(vw, 0)])
            T.writes(P[vc, vh, vw])
            P[vc, vh, vw] = T.if_then_else(1 <= vh, X[vc, vh - 1, T.Sub(vw, 0)], T.float32(0.0))
    for c_1, h_1, w_1, r, s in T.grid(1, 2, 2, 1, 1):
        with T.block("Y"):
            vc_1, vh_1, vw_1, vr, vs = T.axis.remap("SSSRR", [c_1, h_1, w_1, r, s])
            T.reads(P[vc_1, vh_1 + vr, vw_1 + vs])
            T.writes(Y[vc_1, vh_1, vw_1])
            with T.init():
                Y[vc_1, vh_1, vw_1] = T.float32(0.0)
            Y[vc_1, vh_1, vw_1] = Y[vc_1, vh_1, vw_1] + P[vc_1, vh_1 + vr, vw_1 + vs]
'''


def test_compute_inline_reads_a_unit_variable_in_the_producers_index_as_its_value():
    from tirfun.nodes import Var

    mod = IRModule({"main": from_source(FUSED_UNIT)})
    i0, i1, i2 = Var("i0"), Var("i1"), Var("i2")
    staged = R.Pipeline([R.compute_at("pad", "h_1", False),
                         R.transform_layout("pad", ("write", 0), ((i0, i1, i2), (i0 * 2 + i1, i2)))])(mod)
    out = R.compute_inline("pad")(staged)
    verify(out)  # vc was left in the consumer's index, unbound
    assert_equivalent(mod["main"], out["main"])


def builds_as_interpreted(mod: IRModule) -> None:
    """The LLVM build of ``mod`` gives, bit for bit, what the interpreter gives."""
    from tirfun.testing.equivalence import random_inputs

    func = mod["main"]
    args = random_inputs(func, 0)
    expected = [a.copy() for a in args]
    tirfun.interp.run(func, *expected)
    tirfun.build(mod, target="llvm")(*args)
    for x, y in zip(expected, args):
        assert x.tobytes() == y.tobytes()


# the producer's rows are one fused loop of 196 (fx * 4 + ax0) cut into
# 4 x 7 x 7 where 7 does not fall on ax0's boundary, its channels guarded by
# a predicate: TVM's iterator maps fuse fx * 4 + ax0 into one iterator
# before splitting it, and so does the cover check
FUSED_ROWS = '''
@T.prim_func
def main(A: T.Buffer((4, 7, 7, 8), "int32"), D: T.Buffer((4, 7, 7, 8), "int32"), C: T.Buffer((4, 7, 7, 8), "int32")):
    B = T.alloc_buffer((4, 7, 7, 8), "int32")
    for fy, fx, ax0, c1, c2 in T.grid(2, 49, 4, 2, 4):
        with T.block("B"):
            T.where(c1 * 4 + c2 < 4)
            v0 = T.axis.spatial(196, fx * 4 + ax0)
            v1 = T.axis.spatial(8, fy * 4 + (c1 * 4 + c2))
            B[v0 // 49, v0 % 49 // 7, v0 % 7, v1] = A[v0 // 49, v0 % 49 // 7, v0 % 7, v1] * 3
    for i, j, k, l in T.grid(4, 7, 7, 8):
        with T.block("C"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            C[vi, vj, vk, vl] = B[vi, vj, vk, vl] + D[vi, vj, vk, vl]
'''


def test_reverse_compute_inline_into_a_producer_whose_fused_rows_are_cut_off_their_digits():
    mod = mod_of(FUSED_ROWS)
    out = R.reverse_compute_inline("C")(mod)
    expected = from_source('''
@T.prim_func
def main(A: T.Buffer((4, 7, 7, 8), "int32"), D: T.Buffer((4, 7, 7, 8), "int32"), C: T.Buffer((4, 7, 7, 8), "int32")):
    for fy, fx, ax0, c1, c2 in T.grid(2, 49, 4, 2, 4):
        with T.block("B"):
            v0 = T.axis.spatial(196, fx * 4 + ax0)
            v1 = T.axis.spatial(8, fy * 4 + (c1 * 4 + c2))
            T.where(c1 * 4 + c2 < 4)
            T.reads(A[v0 // 49, v0 % 49 // 7, v0 % 7, v1], D[v0 // 49, v0 % 49 // 7, v0 % 7, v1])
            T.writes(C[v0 // 49, v0 % 49 // 7, v0 % 7, v1])
            C[v0 // 49, v0 % 49 // 7, v0 % 7, v1] = A[v0 // 49, v0 % 49 // 7, v0 % 7, v1] * 3 + D[v0 // 49, v0 % 49 // 7, v0 % 7, v1]
''')
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])
    builds_as_interpreted(out)


# the fused rows split by 6, which does not divide 196: a guard keeps the
# last split's rows inside
GUARDED_ROWS = FUSED_ROWS.replace("T.grid(2, 49, 4, 2, 4)", "T.grid(2, 33, 6, 2, 4)") \
    .replace("T.where(c1 * 4 + c2 < 4)", "T.where(fx * 6 + ax0 < 196 and c1 * 4 + c2 < 4)") \
    .replace("T.axis.spatial(196, fx * 4 + ax0)", "T.axis.spatial(196, fx * 6 + ax0)")


# split by 49, which falls on a boundary of the rows' digits: the indices
# read fx and ax0 apart (fx, ax0 // 7, ax0 % 7), and the guard bounds them
# together
ALIGNED_ROWS = GUARDED_ROWS.replace("T.grid(2, 33, 6, 2, 4)", "T.grid(2, 5, 49, 2, 4)") \
    .replace("fx * 6 + ax0", "fx * 49 + ax0")


@pytest.mark.parametrize("src, guard", [(GUARDED_ROWS, "fx * 6 + ax0 < 196"), (ALIGNED_ROWS, "fx * 49 + ax0 < 196")])
def test_reverse_compute_inline_into_fused_rows_under_the_guard_of_a_split(src, guard):
    mod = mod_of(src)
    out = R.reverse_compute_inline("C")(mod)
    text = out["main"].script()
    assert f"T.where({guard} and c1 * 4 + c2 < 4)" in text
    assert "C[v0 // 49, v0 % 49 // 7, v0 % 7, v1] = A[v0 // 49, v0 % 49 // 7, v0 % 7, v1] * 3" in text
    assert_equivalent(mod["main"], out["main"])
    builds_as_interpreted(out)


@pytest.mark.parametrize("src, old, new", [
    # 48 * 4 rows reach 192 of the 196: the last four are never written
    (FUSED_ROWS, "T.grid(2, 49, 4, 2, 4)", "T.grid(2, 48, 4, 2, 4)"),
    # the guard stops one row short
    (GUARDED_ROWS, "fx * 6 + ax0 < 196", "fx * 6 + ax0 < 195"),
    (ALIGNED_ROWS, "fx * 49 + ax0 < 196", "fx * 49 + ax0 < 195"),
])
def test_reverse_compute_inline_refuses_fused_rows_that_stop_short(src, old, new):
    assert old in src
    raises(R.NotStagePipelineError, R.reverse_compute_inline("C"), src.replace(old, new),
           "reads elements of B that block 'B' does not surely write")


# a padded 3 x 3 window over tiles of 4: the cache of each tile reaches one
# row and column past it on each side, cut at the buffer's edges
PADDED_POOL = '''
@T.prim_func
def main(X: T.Buffer((8, 8), "float32"), Y: T.Buffer((8, 8), "float32")):
    cache = T.alloc_buffer((8, 8))
    for hh, ww in T.grid(8, 8):
        with T.block("cache"):
            h, w = T.axis.remap("SS", [hh, ww])
            cache[h, w] = X[h, w]
    for hh_0, ww_0, hh_1, ww_1, khh, kww in T.grid(2, 2, 4, 4, 3, 3):
        with T.block("compute"):
            h = T.axis.spatial(8, hh_0 * 4 + hh_1)
            w = T.axis.spatial(8, ww_0 * 4 + ww_1)
            kh, kw = T.axis.remap("RR", [khh, kww])
            with T.init():
                Y[h, w] = T.float32(0)
            Y[h, w] = T.max(Y[h, w], T.if_then_else(1 <= h + kh and h + kh < 9 and 1 <= w + kw and w + kw < 9,
                                                    cache[h + kh - 1, w + kw - 1], T.float32(0)))
'''


def test_compute_at_writes_the_binding_and_predicate_as_tvm_does():
    # the binding is the domain's start plus the new loop; the predicate's
    # constants move to the other side, as TVM's simplifier writes them
    mod = mod_of(PADDED_POOL)
    out = R.compute_at("cache", "ww_0")(mod)
    expected = from_source('''
@T.prim_func
def main(X: T.Buffer((8, 8), "float32"), Y: T.Buffer((8, 8), "float32")):
    cache = T.alloc_buffer((8, 8))
    for hh_0, ww_0 in T.grid(2, 2):
        for ax0, ax1 in T.grid(6, 6):
            with T.block("cache"):
                h = T.axis.spatial(8, hh_0 * 4 - 1 + ax0)
                w = T.axis.spatial(8, ww_0 * 4 - 1 + ax1)
                T.where(1 <= hh_0 * 4 + ax0 and hh_0 * 4 + ax0 < 9 and 1 <= ww_0 * 4 + ax1 and ww_0 * 4 + ax1 < 9)
                cache[h, w] = X[h, w]
        for hh_1, ww_1, khh, kww in T.grid(4, 4, 3, 3):
            with T.block("compute"):
                h = T.axis.spatial(8, hh_0 * 4 + hh_1)
                w = T.axis.spatial(8, ww_0 * 4 + ww_1)
                kh, kw = T.axis.remap("RR", [khh, kww])
                with T.init():
                    Y[h, w] = T.float32(0)
                Y[h, w] = T.max(Y[h, w], T.if_then_else(1 <= h + kh and h + kh < 9 and 1 <= w + kw and w + kw < 9,
                                                        cache[h + kh - 1, w + kw - 1], T.float32(0)))
''')
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])
    builds_as_interpreted(out)


# the reduction's loop of a symbolic extent, split by 32: the cache of each
# piece lies inside the buffer, which takes a symbolic proof
SYMBOLIC_ROWS = '''
@T.prim_func
def main(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(2), n * T.int64(4)))
    Y = T.match_buffer(y, (T.int64(2), n * T.int64(4)))
    X_global = T.alloc_buffer((T.int64(2), n * T.int64(4)))
    for ax0, ax1 in T.grid(T.int64(2), n * T.int64(4)):
        with T.block("X_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            X_global[v0, v1] = X[v0, v1]
    for i, k_0, k_1 in T.grid(T.int64(2), n, T.int64(4)):
        with T.block("Y"):
            vi = T.axis.spatial(T.int64(2), i)
            vk = T.axis.spatial(n * T.int64(4), k_0 * T.int64(4) + k_1)
            Y[vi, vk] = X_global[vi, vk]
'''


def test_compute_at_proves_a_symbolic_bound_rather_than_adding_a_predicate():
    # k_0 * 4 + ax0 < n * 4 for k_0 below n: TVM proves it with symbolic
    # bounds and adds no predicate; so does tirfun
    mod = mod_of(SYMBOLIC_ROWS)
    out = R.compute_at("X_global", "k_0")(mod)
    realize = out["main"].body.block.body.body.body[0].body
    assert realize.block.name_hint == "X_global"
    assert realize.predicate == IntImm("bool", 1)
    assert "k_0 * T.int64(4) + ax0" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_compute_at_simplifies_the_start_of_a_domain_with_the_loops_ranges():
    # c_o * 5 // 2 is c_o * 2 for c_o in [0, 1], as TVM's analyzer finds it
    src = '''
@T.prim_func
def main(X: T.Buffer((10,), "float32"), Y: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((5,))
    for i in range(5):
        with T.block("init"):
            vi = T.axis.spatial(5, i)
            B[vi] = T.Cast("float32", vi)
    for c_o, c_i in T.grid(2, 5):
        with T.block("compute"):
            v = T.axis.spatial(10, c_o * 5 + c_i)
            Y[v] = X[v] + B[v // 2]
'''
    mod = mod_of(src)
    out = R.compute_at("init", "c_o")(mod)
    assert "vi = T.axis.spatial(5, c_o * 2 + ax0)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    builds_as_interpreted(out)


def test_reverse_compute_inline_reads_the_fused_rows_in_the_indices_as_written():
    # simplified, (fx * 5 + ax0) % 3 would read (fx * 2 + ax0) % 3: no longer
    # a remainder of the fused rows; the channels' guard c < 2 shortens c
    src = '''
@T.prim_func
def main(A: T.Buffer((3, 3, 3, 2), "int32"), C: T.Buffer((3, 3, 3, 2), "int32")):
    B = T.alloc_buffer((3, 3, 3, 2), "int32")
    for fy, fx, ax0, c in T.grid(1, 7, 5, 3):
        with T.block("B"):
            T.where(fx * 5 + ax0 < 27 and fy * 3 + c < 2)
            v0 = T.axis.spatial(27, fx * 5 + ax0)
            v1 = T.axis.spatial(2, fy * 3 + c)
            B[v0 // 9, v0 % 9 // 3, v0 % 3, v1] = A[v0 // 9, v0 % 9 // 3, v0 % 3, v1] * 3
    for i, j, l, m in T.grid(3, 3, 3, 2):
        with T.block("C"):
            vi, vj, vl, vm = T.axis.remap("SSSS", [i, j, l, m])
            C[vi, vj, vl, vm] = B[vi, vj, vl, vm] + 1
'''
    mod = mod_of(src)
    out = R.reverse_compute_inline("C")(mod)
    assert "alloc_buffer" not in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    builds_as_interpreted(out)
    raises(R.NotStagePipelineError, R.reverse_compute_inline("C"), src.replace("c < 2", "c < 1"),
           "reads elements of B that block 'B' does not surely write")


SYMBOLIC_FUSED_ROWS = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (8, n))
    C = T.match_buffer(c, (8, n))
    B = T.alloc_buffer((8, n))
    for f in range(n * 8):
        with T.block("B"):
            v0 = T.axis.spatial(8, f // n)
            v1 = T.axis.spatial(n, f % n)
            B[v0, v1] = A[v0, v1] * T.float32(2)
    for f in range(n * 8):
        with T.block("C"):
            v0 = T.axis.spatial(8, f // n)
            v1 = T.axis.spatial(n, f % n)
            C[v0, v1] = B[v0, v1] + T.float32(1)
"""


def test_reverse_compute_at_under_a_fused_loop_of_symbolic_extent_needs_no_predicate():
    # for f below n * 8, f // n is a row in [0, 8) and f % n a column in
    # [0, n) (the loop runs only when n is positive): the consumer's domain
    # is inside its own, as TVM finds it, so no T.where guards it
    mod = mod_of(SYMBOLIC_FUSED_ROWS)
    out = R.reverse_compute_at("C", R.LoopRef("f"), preserve_unit_loops=True)(mod)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (8, n))
    C = T.match_buffer(c, (8, n))
    B = T.alloc_buffer((8, n))
    for f in range(n * 8):
        with T.block("B"):
            v0 = T.axis.spatial(8, f // n)
            v1 = T.axis.spatial(n, f % n)
            B[v0, v1] = A[v0, v1] * T.float32(2)
        for ax0, ax1 in T.grid(1, 1):
            with T.block("C"):
                v0_1 = T.axis.spatial(8, f // n + ax0)
                v1_1 = T.axis.spatial(n, f % n + ax1)
                B_read = B[v0_1, v1_1]
                C[v0_1, v1_1] = B[v0_1, v1_1] + T.float32(1)
""".replace("                B_read = B[v0_1, v1_1]\n", ""))
    assert_structural_equal(out["main"], expected)
    for n in (1, 3, 5):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5)).astype("float32")
    want, got = np.zeros_like(x), np.zeros_like(x)
    tirfun.interp.run(out["main"], x, want)
    tirfun.build(out)(x, got)
    assert want.tobytes() == got.tobytes()


def test_reverse_compute_at_of_a_fused_consumer_into_its_producers_row_loop():
    # the producer under row i writes B[i, 0:n]; the consumer under the
    # fused loop reads B[v0, v1]: under i it takes every column of the row,
    # its domain [0, n - 1] of v1 reached whole (proved although n is
    # unknown: the bound is the domain's own end, n - 1 >= n - 1)
    src = SYMBOLIC_FUSED_ROWS.replace("""    for f in range(n * 8):
        with T.block("B"):
            v0 = T.axis.spatial(8, f // n)
            v1 = T.axis.spatial(n, f % n)""", """    for i, j in T.grid(8, n):
        with T.block("B"):
            v0, v1 = T.axis.remap("SS", [i, j])""")
    mod = mod_of(src)
    out = R.reverse_compute_at("C", R.LoopRef("i"))(mod)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (8, n))
    C = T.match_buffer(c, (8, n))
    B = T.alloc_buffer((8, n))
    for i in range(8):
        for j in range(n):
            with T.block("B"):
                v0, v1 = T.axis.remap("SS", [i, j])
                B[v0, v1] = A[v0, v1] * T.float32(2)
        for ax0 in range(n):
            with T.block("C"):
                v0_1, v1_1 = T.axis.remap("SS", [i, ax0])
                C[v0_1, v1_1] = B[v0_1, v1_1] + T.float32(1)
""")
    assert_structural_equal(out["main"], expected)
    for n in (1, 3, 5):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n})
    x = np.random.default_rng(1).standard_normal((8, 5)).astype("float32")
    want, got = np.zeros_like(x), np.zeros_like(x)
    tirfun.interp.run(out["main"], x, want)
    tirfun.build(out)(x, got)
    assert want.tobytes() == got.tobytes()


SYMBOLIC_TWO_STAGES = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n, m))
    B = T.alloc_buffer((n, m))
    for i, j in T.grid(n, m):
        with T.block("B"):
            v0, v1 = T.axis.remap("SS", [i, j])
            B[v0, v1] = A[v0, v1] * T.float32(2)
    for i, j in T.grid(n, m):
        with T.block("C"):
            v0, v1 = T.axis.remap("SS", [i, j])
            C[v0, v1] = B[v0, v1] + T.float32(1)
"""


def _same_for_sizes(before, after):
    for n, m in ((1, 1), (2, 4), (3, 7), (5, 9)):
        assert_equivalent(before, after, sizes={"n": n, "m": m})
    x = np.random.default_rng(2).standard_normal((3, 7)).astype("float32")
    want, got = np.zeros_like(x), np.zeros_like(x)
    tirfun.interp.run(after, x, want)
    tirfun.build(after)(x, got)
    assert want.tobytes() == got.tobytes()


def test_compute_at_under_a_split_of_a_symbolic_extent():
    # C's columns split by 4 over m: its last tile is guarded by j * 4 + j_1
    # < m, so it reads B[i, 0:m] whole; that the split's
    # min((m + 3) // 4 * 4 - 1, m - 1) is m - 1 needs (m + 3) // 4 * 4 >= m,
    # shown where constant bounds of an unknown m decide nothing
    sch = tirfun.Schedule(mod_of(SYMBOLIC_TWO_STAGES))
    _, j = sch.get_loops("C")
    j0, _ = sch.split(j, [None, 4])
    sch.compute_at("B", j0)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n, m))
    B = T.alloc_buffer((n, m))
    for i_1, j_1_0 in T.grid(n, (m + 3) // 4):
        for ax0 in range(4):
            with T.block("B"):
                v0 = T.axis.spatial(n, i_1)
                v1 = T.axis.spatial(m, j_1_0 * 4 + ax0)
                T.where(j_1_0 * 4 + ax0 < m)
                B[v0, v1] = A[v0, v1] * T.float32(2)
        for j_1_1 in range(4):
            with T.block("C"):
                v0_1 = T.axis.spatial(n, i_1)
                v1_1 = T.axis.spatial(m, j_1_0 * 4 + j_1_1)
                T.where(j_1_0 * 4 + j_1_1 < m)
                C[v0_1, v1_1] = B[v0_1, v1_1] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    _same_for_sizes(from_source(SYMBOLIC_TWO_STAGES), sch.mod["main"])


def test_reverse_compute_at_under_a_split_of_a_symbolic_extent():
    sch = tirfun.Schedule(mod_of(SYMBOLIC_TWO_STAGES))
    _, j = sch.get_loops("B")
    j0, _ = sch.split(j, [None, 4])
    sch.reverse_compute_at("C", j0)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n, m))
    B = T.alloc_buffer((n, m))
    for i, j_0 in T.grid(n, (m + 3) // 4):
        for j_1_1 in range(4):
            with T.block("B"):
                v0 = T.axis.spatial(n, i)
                v1 = T.axis.spatial(m, j_0 * 4 + j_1_1)
                T.where(j_0 * 4 + j_1_1 < m)
                B[v0, v1] = A[v0, v1] * T.float32(2)
        for ax0 in range(T.min(j_0 * 4 + 3, m - 1) - j_0 * 4 + 1):
            with T.block("C"):
                v0_1 = T.axis.spatial(n, i)
                v1_1 = T.axis.spatial(m, j_0 * 4 + ax0)
                C[v0_1, v1_1] = B[v0_1, v1_1] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    _same_for_sizes(from_source(SYMBOLIC_TWO_STAGES), sch.mod["main"])


def test_reverse_compute_at_under_the_fuse_of_two_symbolic_extents():
    # the producer under i_j_fused over n * m writes B[f // m, f % m]: over
    # the fused loop, rows [0, n - 1] and columns [0, m - 1], every element
    # (where n or m is below 1, the columns or the rows are empty and
    # nothing is needed); the consumer's instances run one per iteration
    sch = tirfun.Schedule(mod_of(SYMBOLIC_TWO_STAGES))
    i, j = sch.get_loops("B")
    fused = sch.fuse(i, j)
    sch.reverse_compute_at("C", fused)
    expected = from_source("""
@T.prim_func
def main(a: T.handle, c: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m))
    C = T.match_buffer(c, (n, m))
    B = T.alloc_buffer((n, m))
    for i_j_fused in range(n * m):
        with T.block("B"):
            v0 = T.axis.spatial(n, i_j_fused // m)
            v1 = T.axis.spatial(m, i_j_fused % m)
            B[v0, v1] = A[v0, v1] * T.float32(2)
        with T.block("C"):
            v0_1 = T.axis.spatial(n, i_j_fused // m)
            v1_1 = T.axis.spatial(m, i_j_fused % m)
            T.where(0 <= i_j_fused // m and i_j_fused // m < n
                    and 0 <= i_j_fused % m and i_j_fused % m < m)
            C[v0_1, v1_1] = B[v0_1, v1_1] + T.float32(1)
""")
    assert_structural_equal(sch.mod["main"], expected)
    _same_for_sizes(from_source(SYMBOLIC_TWO_STAGES), sch.mod["main"])


def test_compute_inline_leaves_an_undeclared_constant_buffer_out_of_the_regions():
    # the table is a T.Buffer over T.allocate_const, never declared: the
    # parser leaves its reads out of a block's regions, as TVM does, and so
    # does the consumer's region inferred again after the inline
    src = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4,))
    table_ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    table = T.Buffer((4,), data=table_ptr)
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.float32(10) * T.Cast("float32", vi) + table[vi]
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi] + A[vi, vj]
"""
    mod = mod_of(src)
    assert list(mod["main"].body.block.body.body[0].body.block.reads) == []  # as parsed
    out = R.compute_inline("B")(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    table_ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    table = T.Buffer((4,), data=table_ptr)
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(10) * T.Cast("float32", vi) + table[vi] + A[vi, vj]
""")
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])
    x = np.random.default_rng(6).standard_normal((4, 8)).astype("float32")
    want, got = np.zeros_like(x), np.zeros_like(x)
    tirfun.interp.run(out["main"], x, want)
    tirfun.build(out)(x, got)
    assert want.tobytes() == got.tobytes()


def test_reverse_compute_inline_leaves_an_undeclared_constant_buffer_out_of_the_regions():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    table_ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    table = T.Buffer((4,), data=table_ptr)
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + table[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] * T.float32(2)
"""
    mod = mod_of(src)
    out = R.reverse_compute_inline("C")(mod)
    expected = from_source("""
@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    table_ptr = T.allocate_const([1.0, 2.0, 3.0, 4.0], "float32", [4])
    table = T.Buffer((4,), data=table_ptr)
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            C[vi] = (A[vi] + table[vi]) * T.float32(2)
""")
    assert_structural_equal(out["main"], expected)
    assert_equivalent(mod["main"], out["main"])
    x = np.random.default_rng(7).standard_normal(4).astype("float32")
    want, got = np.zeros_like(x), np.zeros_like(x)
    tirfun.interp.run(out["main"], x, want)
    tirfun.build(out)(x, got)
    assert want.tobytes() == got.tobytes()


def _partitioned_tile(n=64, rows=14, cols=32, which=0):
    """A matmul whose tile loop is partitioned before its last, partial
    tile, and the full tiles' part cached in ``local`` scope: the copy back
    runs over the rows that part writes, fewer than the domain the cache
    declares (the buffer's rows). ``which``: 0 the full tiles' part, 1 the
    last one's (its loop ``range(4, 5)``, its block under the split's
    predicate)."""
    from tirfun import Schedule
    from tirfun.examples.schedules import matmul

    sch = Schedule(matmul(n))
    i, j, k = sch.get_loops("C")
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, cols])
    sch.reorder(j0, i0, k, i1, j1)
    parts = [sch.get_child_blocks(loop)[0] for loop in sch.loop_partition(i0, [n // rows])]
    tile = sch.cache_write(parts[which], 0, "local")
    return sch, parts[which], tile


def test_reverse_compute_at_runs_the_instances_that_ran_not_the_whole_domain():
    sch, full, tile = _partitioned_tile()
    before = sch.mod
    tiles = sch.get_loops(full)[-4]
    sch.reverse_compute_at(tile, tiles)
    script = sch.mod.script()
    # the tile's 14 rows: the clip to the 64 rows of the domain folds away,
    # as the loop of the part ends before the last tile
    assert "for ax0_1, ax1_1 in T.grid(14, 32):" in script
    assert "T.min" not in script.split('T.block("C_local")')[0].rsplit("for ", 2)[-1]
    verify(sch.mod)
    assert_equivalent(before["main"], sch.mod["main"], trials=2)


def test_reverse_compute_at_still_refuses_to_drop_instances_that_ran():
    # the padding instances (vj = 0 and 9) read no element a producer
    # writes, and they run before the move: they would not after it
    src = '''
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for j in range(10):
        with T.block("C"):
            vj = T.axis.spatial(10, j)
            T.reads(B[vj - 1])
            C[vj] = T.if_then_else(1 <= vj and vj < 9, B[vj - 1], T.float32(0.0))
'''
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.UnsupportedRegionError, match=r"for vj in \[1, 8\] only, of its domain \[0, 9\]"):
        R.reverse_compute_at("C", "i")(mod)


def test_reverse_compute_at_under_the_last_part_of_a_partitioned_loop():
    # the producers' loop starts at 4 and the split's predicate cuts its
    # last tile to 8 rows: what they surely write is still known
    sch, last, tile = _partitioned_tile(which=1)
    before = sch.mod
    sch.reverse_compute_at(tile, sch.get_loops(last)[-4])
    assert "for ax0_1, ax1_1 in T.grid(8, 32):" in sch.mod.script()
    verify(sch.mod)
    assert_equivalent(before["main"], sch.mod["main"], trials=2)


def _panel_tiles(n=32, group=2, rows=8, cols=8):
    """A matmul whose parallel panel loop j_0 holds serial tile loops
    (i_0 and the panel's tiles j_1), its output cached in local scope."""
    from tirfun import Schedule
    from tirfun.examples.schedules import matmul

    sch = Schedule(matmul(n))
    i, j, k = sch.get_loops("C")
    i0, i1 = sch.split(i, [None, rows])
    jo, j0, j1 = sch.split(j, [None, group, cols])
    sch.reorder(jo, i0, j0, k, i1, j1)
    sch.parallel(jo)
    return sch, sch.cache_write("C", 0, "local"), j0


def test_a_tile_inside_a_parallel_panel_is_each_threads_own():
    # j_0 * 16 + j_1 * 8 + ax1: no iteration map (a gap of j_1 between
    # j_0 and ax1), but each panel's columns are its own
    sch, tile, j0 = _panel_tiles()
    before = sch.mod
    sch.reverse_compute_at(tile, j0)
    assert "v1 = T.axis.spatial(32, j_0 * 16 + j_1 * 8 + ax1_1)" in sch.mod.script()
    assert_equivalent(before["main"], sch.mod["main"], trials=2)



PER_J_SUM = """
@T.prim_func
def main(A: T.Buffer((2, 3, 8), "int32"), C: T.Buffer((2, 3, 8), "int32")):
    B = T.alloc_buffer((2,), "int32")
    for i, j in T.grid(2, 3):
        for k in range(8):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("{kinds}", [i, j, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vj, vk]
        for t in range(8):
            with T.block("C"):
                vi_1, vj_1, vt = T.axis.remap("SSS", [i, j, t])
                C[vi_1, vj_1, vt] = A[vi_1, vj_1, vt] * B[vi_1]
"""


def test_compute_at_keeps_a_spatial_variable_bound_to_a_shared_loop():
    # B sums row (vi, vj) of A into B[vi]; C, in iteration (i, j), reads
    # the sum of row (i, j). The needed region B[i] does not fix vj: TVM
    # runs vj over 0..2 under t and leaves row (i, 2)'s sum for every j.
    # vj keeps its binding j instead
    mod = IRModule({"main": from_source(PER_J_SUM.format(kinds="SSR"))})
    out = R.compute_at("B", "t")(mod)
    verify(out)
    text = out.script()
    assert 'vi, vj, vk = T.axis.remap("SSR", [i, j, ax0])' in text, text
    assert_equivalent(mod["main"], out["main"])
    a = np.arange(48, dtype="int32").reshape(2, 3, 8)
    c = np.zeros((2, 3, 8), "int32")
    tirfun.build(out)(a, c)
    np.testing.assert_array_equal(c, a * a.sum(axis=2)[:, :, None])


def test_compute_at_refuses_a_reduction_variable_bound_to_a_shared_loop():
    # summing over vj, bound to j: C reads the partial sum of rows 0..j
    # in iteration j; placed under t, B would sum all three rows each time
    mod = IRModule({"main": from_source(PER_J_SUM.format(kinds="SRR"))})
    with pytest.raises(R.NotStagePipelineError) as info:
        R.compute_at("B", "t")(mod)
    assert ("the reduction variable vj, bound to j, counts the steps of j around loop 't': the consumers "
            "read the partial results in each") in str(info.value)


def test_compute_at_refuses_a_read_variable_run_in_another_order():
    # B keeps the last row it stores, row 7 - k for k = 7, that is row 0;
    # vk over its domain in ascending order would leave row 7
    src = """
@T.prim_func
def main(A: T.Buffer((8, 4), "int32"), C: T.Buffer((4, 2), "int32")):
    B = T.alloc_buffer((4,), "int32")
    for j, k in T.grid(4, 8):
        with T.block("B"):
            vj = T.axis.spatial(4, j)
            vk = T.axis.spatial(8, 7 - k)
            B[vj] = A[vk, vj]
    for j, t in T.grid(4, 2):
        with T.block("C"):
            vj, vt = T.axis.remap("SS", [j, t])
            C[vj, vt] = B[vj] + vt
"""
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.NotStagePipelineError) as info:
        R.compute_at("B", "t")(mod)
    assert ("the block reads vk, bound to 7 - k, and writes the same elements for each of its values; "
            "placed under 't' it would run vk over its domain in ascending order, which is not the order "
            "of its binding") in str(info.value)


OPAQUE_OVER_LOOP_VARIABLES = """
@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), C: T.Buffer((4, 4), "int32")):
    B = T.alloc_buffer((4, 4), "int32")
    for i, j in T.grid(4, 4):
        with T.block("B"):
            {producer}
    for i, j in T.grid(4, 4):
        with T.block("C"):
            {consumer}
"""


def test_compute_inline_refuses_a_body_over_the_loop_variables_around_it():
    # an opaque block written over i, j: inlined into C, its value would
    # name loops C is not in
    src = OPAQUE_OVER_LOOP_VARIABLES.format(
        producer="T.reads(A[i, j])\n            T.writes(B[i, j])\n            B[i, j] = A[i, j] * 2 + i",
        consumer='vi, vj = T.axis.remap("SS", [i, j])\n            C[vi, vj] = B[vi, vj] + 1')
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.BodyAnalysisError) as info:
        R.compute_inline("B")(mod)
    assert ("the body names i, j, bound around the block rather than by its iteration variables; inlined "
            "into the blocks that read the buffer, the value would name a loop they are not in") in str(info.value)


def test_reverse_compute_inline_refuses_a_consumer_over_the_loop_variables_around_it():
    src = OPAQUE_OVER_LOOP_VARIABLES.format(
        producer='vi, vj = T.axis.remap("SS", [i, j])\n            B[vi, vj] = A[vi, vj] * 2',
        consumer="T.reads(B[i, j])\n            T.writes(C[i, j])\n            C[i, j] = B[i, j] + i")
    mod = IRModule({"main": from_source(src)})
    with pytest.raises(R.BodyAnalysisError) as info:
        R.reverse_compute_inline("C")(mod)
    assert "bound around the block rather than by its iteration variables; folded into its producer, the " \
        "store would name a loop the producer is not in" in str(info.value)


def test_a_body_over_the_scopes_own_loops_is_still_inlined():
    # vj, of the scope block around both, is the same for the reader
    src = """
@T.prim_func
def main(A: T.Buffer((4, 4), "int32"), C: T.Buffer((4, 4), "int32")):
    for j in range(4):
        with T.block("row"):
            vj = T.axis.spatial(4, j)
            B = T.alloc_buffer((4,), "int32")
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi, vj] * 2 + vj
            for i in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    C[vi, vj] = B[vi] + 1
"""
    mod = IRModule({"main": from_source(src)})
    out = R.compute_inline("B")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


RELU_THEN_READER = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32"),
         D: T.Buffer((8, 8, 8), "float32")):
    Y = T.alloc_buffer((8, 8))
    for i, j, k in T.grid(8, 8, 8):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0.0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i_1, j_1 in T.grid(8, 8):
        with T.block("C"):
            vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
            C[vi_1, vj_1] = T.max(Y[vi_1, vj_1], T.float32(0.0))
        for jj in range(8):
            with T.block("D"):
                vi_2, vc, vj_2 = T.axis.remap("SSS", [i_1, j_1, jj])
                D[vi_2, vc, vj_2] = C[vi_2, {col}] + T.float32(1.0)
"""


def test_reverse_compute_at_refuses_to_leave_behind_a_reader_of_elements_written_later():
    # D, after C in the loop j_1, reads C's whole row, elements C writes in
    # later iterations; C moved into Y's loops would write them all first
    # (TVM does not look)
    mod = IRModule({"main": from_source(RELU_THEN_READER.format(col="vj_2"))})
    with pytest.raises(R.DependenceViolationError) as info:
        R.reverse_compute_at("C", "j")(mod)
    assert ("takes it out of loop(s) 'i_1', 'j_1', which it shares with block 'D'; there the two access C in "
            "turn, iteration by iteration") in str(info.value)


@pytest.mark.parametrize("col", ["vc", "T.max(vc - 1, 0)"])
def test_reverse_compute_at_leaves_behind_a_reader_of_what_was_written_before_it(col):
    # D reads C[i, j_1] or C[i, j_1 - 1], written in this iteration or an
    # earlier one: computing C earlier leaves what D reads as it was
    mod = IRModule({"main": from_source(RELU_THEN_READER.format(col=col))})
    out = R.reverse_compute_at("C", "j")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_at_past_a_store_outside_the_blocks_is_refused():
    # found by the fuzzer: the blocks loop_partition made were moved under
    # loop i ahead of its store C[i] = ..., so the last iteration read C[7]
    # before it was stored; the producer is no block, so no check saw it
    mod = (R.add_unit_loop(R.LoopRef("i")) >> R.loop_partition("i_1", [6, 1]))(mod_of(PLAIN_PRODUCER))
    with pytest.raises(R.DependenceViolationError, match="a BufferStore outside the blocks writes C, which the "
                                                         "block uses"):
        R.reverse_compute_at("i_1_common", "i", True, -2)(mod)


def test_compute_at_past_no_statement_outside_the_blocks_is_allowed():
    # loop k's extent reads B, but the move of B into C's loop does not
    # take B past it
    mod = mod_of(LOOSE_READ)
    for rewrite in (R.compute_at("B", "j"), R.reverse_compute_at("C", "i")):
        out = rewrite(mod)
        assert_equivalent(mod["main"], out["main"], trials=3)


def test_compute_at_of_a_copy_read_under_a_guard_that_divides_is_refused():
    # found by the fuzzer: B reads A[... 40 // (vi - 3) ...] only where vi
    # != 3; the copy moved under loop i bound its variable to that index at
    # every i, and divided by zero at i = 3 (TVM builds the same binding)
    mod = R.cache_read("B", 0, "local")(mod_of(GUARDED_DIVISION))
    with pytest.raises(R.UnsafeRegionError, match=r"divides by i - 3, which is not provably nonzero"):
        R.compute_at("A_local", "i")(mod)
    # a region relaxed over a loop of the split divides by nothing: allowed
    out = (R.split("i", [None, 2]) >> R.compute_at("A_local", "i_0"))(mod)
    assert_equivalent(mod["main"], out["main"], trials=3)


FUSED_OVER_SIZES = """
@T.prim_func
def main(a: T.handle, d: T.handle):
    b, c = T.int64(), T.int64()
    A = T.match_buffer(a, (b, c))
    D = T.match_buffer(d, (b, c))
    B = T.alloc_buffer((b, c))
    for i, j in T.grid(b, c):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.if_then_else(vi < T.int64(2), A[vi, vj] * T.float32(2), T.float32(1))
    for i, j in T.grid(b, c):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("sizes", [{"b": 3, "c": 0}, {"b": 0, "c": 4}, {"b": 3, "c": 5}])
def test_reverse_compute_at_under_a_fuse_of_sizes_divides_only_where_the_loop_runs(sizes):
    # TVM's fused loops over run-time sizes (tril, renormalization, argmax):
    # D moved under the fuse of B's loops binds vi = f // c at each f. c may
    # be 0, but then the loop over b * c does not run, so the division is
    # never evaluated; before, the move was refused as an unsafe region
    mod = R.fuse("i", "j")(mod_of(FUSED_OVER_SIZES))
    out = R.reverse_compute_at("D", "i_j_fused")(mod)
    verify(out)
    script = out["main"].script()
    assert "// c" in script and "% c" in script
    assert_equivalent(mod["main"], out["main"], trials=2, sizes=sizes)


@pytest.mark.parametrize("n", [1, 3])
def test_reverse_compute_at_of_a_block_reading_a_split_fuse_by_a_size(n):
    # TVM's rfactor of a matmul over n (test_shape_var_as_bound): the second
    # stage's fused loop over n * 32, split by 4, binds v0 to (f_0 * (n * 8)
    # + f_1) // n. The sum is one fuse of f_0 and f_1; read as one loop, the
    # binding is affine (TVM's iterator maps fuse before they split), where
    # before the block was refused as neither complete nor a reduction
    sch = tirfun.Schedule(mod_of(SYMBOLIC_FUSED))
    sch.split(sch.get_loops(sch.get_block("C"))[0], [4, None])
    mod = sch.mod
    assert re.search(r"\(f_\w+ \* \(n \* 8\) \+ f_\w+\) // n", mod["main"].script()), mod["main"].script()
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("rf"))[2])
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"], trials=2, sizes={"n": n})


TAKE_A_ROW = """
@T.prim_func
def main(X: T.Buffer((2, 5, 4), "float32"), Y: T.Buffer((2, 4), "float32")):
    for i0, i2 in T.grid(2, 4):
        with T.block("take"):
            ax0, ax2 = T.axis.remap("SS", [i0, i2])
            Y[ax0, ax2] = X[ax0, 4, ax2]
"""


def test_reverse_compute_at_under_a_unit_loop_reads_its_one_value():
    # TVM's take over a symbolic row, split by [None, 2, 16] and the middle
    # part by [None, 3]: the write-back of a local cache moved under the
    # unit loop i0_1_0 reads the block's index i0_1_0 * 48 + i0_0 * 32 +
    # i0_1_1 * 16 + i0_2 under i0_1_0 * 3 + i0_1_1 < 2. The loops i0_0 and
    # i0_1_0 run once, at 0: what the block writes in that iteration is
    # rows 0 and 1, where before it could not be shown
    sch = tirfun.Schedule(mod_of(TAKE_A_ROW))
    i0 = sch.get_loops(sch.get_block("take"))[0]
    _, middle, _ = sch.split(i0, [None, 2, 16])
    outer, _ = sch.split(middle, [None, 3])
    mod = sch.mod
    local = sch.cache_write(sch.get_block("take"), 0, "local")
    sch.reverse_compute_at(local, outer)
    verify(sch.mod)
    loops = sch.get_loops(local)
    assert [int(sch.get(lp).extent.value) for lp in loops[-2:]] == [2, 4]
    assert_equivalent(mod["main"], sch.mod["main"], trials=2)


def test_reverse_compute_at_under_a_fuse_of_sizes_split_into_parts():
    # B's fuse over rows * cols split into 3 parts: under the inner part B
    # writes one element, at (f // cols, f % cols) of f = f_0 * ((rows * cols
    # + 2) // 3) + f_1 where f < rows * cols; the inner loop does not run
    # where cols is 0, so the moved nest's division by cols is safe. Under
    # the outer part B writes a run of the fused index, no box of B:
    # refused (placed there, C would read elements not written yet)
    from tirfun.testing.corner_programs import SHAPES

    src = SHAPES["symbolic_guarded"].format(dt="float32", zero="T.float32(0)", n=4, m=2, nm=8)
    sch = tirfun.Schedule(mod_of(src))
    outer, inner = sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [3, None])
    before = sch.mod
    with pytest.raises(R.UnsupportedRegionError, match="what block 'B' writes of B in one iteration of loop "
                                                      "'i_j_fused_0' cannot be shown"):
        sch.reverse_compute_at(sch.get_block("C"), outer)
    sch.reverse_compute_at(sch.get_block("C"), inner)
    verify(sch.mod)
    for rows, cols in ((2, 3), (0, 2), (3, 0), (4, 5)):
        assert_equivalent(before["main"], sch.mod["main"], trials=1, sizes={"rows": rows, "cols": cols})


CENTRED_ROWS = """
@T.prim_func
def main(a: T.handle, d: T.handle):
    n, s = T.int64(), T.int64()
    A = T.match_buffer(a, (n, s{pad}))
    D = T.match_buffer(d, (n, s{pad}))
    S = T.alloc_buffer((n,))
    for i, k in T.grid(n, s):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for f in range(n * s):
        with T.block("D"):
            vi = T.axis.spatial(n, f // s)
            vj = T.axis.spatial(s{pad}, f % s)
            D[vi, vj] = A[vi, vj] - S[vi]
"""


def test_reverse_compute_at_of_a_fused_consumer_whose_digits_run_their_whole_box():
    # TVM's layer norm over run-time sizes: the consumer's loops fused, vi
    # = f // s and vj = f % s. Under the row loop of the sum, vi takes the
    # row and vj its whole domain: the fuse ran every pair (vi, vj) of the
    # box, so the new nest runs only pairs the block ran
    mod = mod_of(CENTRED_ROWS.format(pad=""))
    out = R.reverse_compute_at("D", "i", True)(mod)
    verify(out)
    for n, s in ((3, 4), (0, 2), (2, 0), (1, 1)):
        assert_equivalent(mod["main"], out["main"], trials=1, sizes={"n": n, "s": s})
    # where vj's domain is wider than what the fuse gives (s + 1), the fuse
    # ran part of the box only: the whole domain would write D[i, s]
    wide = mod_of(CENTRED_ROWS.format(pad=" + T.int64(1)"))
    with pytest.raises(R.NotStagePipelineError, match="in pairs of values the original never ran"):
        R.reverse_compute_at("D", "i", True)(wide)


FLIPPED_READ = """
@T.prim_func
def main(A: T.Buffer((8, 3), "float32"), C: T.Buffer((8, 3), "float32")):
    B = T.alloc_buffer((8, 3))
    for i, j in T.grid(8, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 3):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[7 - vi, vj] + T.float32(1)
"""


@pytest.mark.parametrize("factor", [None, 4, 3])
def test_reverse_compute_at_of_a_block_reading_backwards(factor):
    # TVM's flip (T_reverse_sequence reads its input at 1 - v): the rows a
    # tile of B writes, [lo, hi], are read by the instances vi in [7 - hi,
    # 7 - lo]; before, a read that is no variable plus a constant refused
    mod = mod_of(FLIPPED_READ)
    if factor is not None:
        mod = R.split("i", [None, factor])(mod)
    target = "i" if factor is None else "i_0"
    out = R.reverse_compute_at("C", target)(mod)
    verify(out)
    text = out["main"].script()
    # the row read backwards: one instance per row (7 - i), or a tile's worth
    # from the mirror image of the tile's last row
    assert {None: "T.axis.spatial(8, 7 - i)", 4: "T.axis.spatial(8, 4 - i_0 * 4 + ax0)",
            3: "T.axis.spatial(8, 7 - T.min(i_0 * 3 + 2, 7) + ax0)"}[factor] in text, text
    assert_equivalent(mod["main"], out["main"])
    assert_built_as_interpreted(out)


ROW_THEN_COPY = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    C_shared = T.alloc_buffer((8, 8), scope="shared")
    for i in range(8):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_shared[vi, vj] = B[{row}, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("C_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C_shared[vi, vj]
"""


def test_compute_at_out_of_a_loop_past_the_block_before_it():
    # TVM's element_wise_compute_at_split_vectorized after a cache_write: C
    # leaves loop i, where B ran before it in each iteration, for the copy's
    # loop after it. C of row i read B's row i, written in the same
    # iteration, before the move and after it; no later iteration of B
    # writes it again. Before, the same iteration counted as reordered
    mod = mod_of(ROW_THEN_COPY.format(row="vi"))
    sch = tirfun.Schedule(mod)
    sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("C_shared"))[0])
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])
    # reading the next row, which B writes in the next iteration: before the
    # move C read it before B wrote it, after the move after
    ahead = mod_of(ROW_THEN_COPY.format(row="T.min(vi + 1, 7)"))
    sch = tirfun.Schedule(ahead)
    with pytest.raises(R.DependenceViolationError, match="which it shares with block 'B'"):
        sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("C_shared"))[0])


def test_reverse_compute_inline_of_a_block_under_a_condition_is_refused():
    # found by the fuzzer (a copy A_global and B reading it under if i < 6):
    # folded into the copy, the consumer's stores ran where the condition
    # skips them (TVM drops the condition)
    mod = mod_of(GUARDED_CONSUMER_OF_AN_INTERMEDIATE)
    with pytest.raises(R.BodyAnalysisError, match=r"the block runs under the condition if n < 3; folded into its "
                                                  r"producer, its stores would run wherever the producer runs"):
        R.reverse_compute_inline("C")(mod)
    # under one condition with its producer, it is folded with it kept
    both = mod_of(COPY_AND_READER_UNDER_ONE_IF)
    out = R.reverse_compute_inline("B")(both)
    assert_equivalent(both["main"], out["main"], trials=2)


def test_reverse_compute_at_into_the_loop_of_a_block_that_overwrites_what_it_read_is_refused():
    # found by the fuzzer: C reads A before block A overwrites it; moved
    # under A's loop, C ran in every iteration and its last run read the
    # overwritten A. A is no producer of C, so the allowance for producers
    # under the loop must not cover it
    for index in (0, -1):
        sch = tirfun.Schedule(mod_of(READ_BEFORE_WRITE))
        with pytest.raises(R.DependenceViolationError, match="reorders it with block 'A', and one of them writes A"):
            sch.reverse_compute_at("C", sch.get_loops("A")[0], index=index)


def test_compute_inline_of_a_block_reading_through_its_match_buffer_is_refused():
    # found by the fuzzer: after cache_write, C stores into C_global what it
    # reads through its view Bv; inlined into the copy back, the value used
    # Bv, which the copy back does not declare (verify failed)
    mod = mod_of(MATCHED_READER)
    cached = R.cache_write("C", 0, "global")(mod)
    with pytest.raises(R.BodyAnalysisError, match="the block reads through its match buffer Bv"):
        R.compute_inline("C")(cached)


SPLIT_OVER_A_SIZE = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    c = T.int32()
    A = T.match_buffer(a, (c,), "float32")
    B = T.match_buffer(b, (c,), "float32")
    for i_0, i_1 in T.grid((c + 7) // 8, 8):
        with T.block("B"):
            vi = T.axis.spatial(c, i_0 * 8 + i_1)
            T.where(i_0 * 8 + i_1 < c)
            B[vi] = A[vi] * T.float32(2)
"""


@pytest.mark.parametrize("c", [0, 5, 8, 19])
def test_reverse_compute_at_keeps_a_predicate_its_domain_of_a_size_implies(c):
    # vi over range(c) bound to i_0 * 8 + i_1 < c: the domain says the
    # predicate, so the block moves under its input cache's loop, which
    # gives it the loops it needs (TVM's cast over a run-time size)
    mod = IRModule({"main": from_source(SPLIT_OVER_A_SIZE)})
    sch = tirfun.Schedule(mod)
    local = sch.cache_read(sch.get_block("B"), 0, "local")
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(local)[0])
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"], sizes={"c": c})
    # a bound short of the domain's end goes with the block, as vi < c - 1
    # (TVM drops it, and writes the last element)
    short_src = SPLIT_OVER_A_SIZE.replace("T.where(i_0 * 8 + i_1 < c)", "T.where(i_0 * 8 + i_1 < c - 1)")
    short = IRModule({"main": from_source(short_src)})
    sch = tirfun.Schedule(short)
    local = sch.cache_read(sch.get_block("B"), 0, "local")
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(local)[0])
    verify(sch.mod)
    assert_equivalent(short["main"], sch.mod["main"], sizes={"c": c})


FUSED_RUN_TIME_STAGES = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    rows, cols = T.int32(), T.int32()
    A = T.match_buffer(a, [rows, cols])
    C = T.match_buffer(c, [rows, cols])
    B = T.alloc_buffer([rows, cols])
    for f_0, f_1 in T.grid((rows * cols + 7) // 8, 8):
        with T.block("B"):
            vi = T.axis.spatial(rows, (f_0 * 8 + f_1) // cols)
            vj = T.axis.spatial(cols, (f_0 * 8 + f_1) % cols)
            T.where(f_0 * 8 + f_1 < rows * cols)
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(rows, cols):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
"""


@pytest.mark.parametrize("rows, cols", [(0, 3), (1, 1), (3, 5), (4, 2), (7, 3)])
def test_reverse_compute_at_under_a_fuse_over_run_time_sizes_split_past_its_end(rows, cols):
    # TVM's elementwise schedule over dynamic shapes: the producer's fused
    # loop split by 8 under f_0 * 8 + f_1 < rows * cols; the fused part the
    # predicate bounds runs over rows * cols values, one element each, so the
    # consumer moves under the inner loop
    mod = IRModule({"main": from_source(FUSED_RUN_TIME_STAGES)})
    sch = tirfun.Schedule(mod)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[1])
    verify(sch.mod)
    A = np.random.default_rng(rows).standard_normal((rows, cols)).astype("float32")
    outs = []
    for run in (lambda *a: tirfun.interp.run(mod["main"], *a), lambda *a: tirfun.interp.run(sch.mod["main"], *a),
                tirfun.build(sch.mod, target="llvm")):
        C = np.full((rows, cols), 5.0, "float32")
        run(A, C)
        outs.append(C)
    assert all(o.tobytes() == outs[0].tobytes() for o in outs)


# -- a producer moved under a loop of its consumer ---------------------------------

# the matmul Y moved under the relu's loops runs whole in every iteration,
# before the relu reads it (TVM's reverse_compute_at does the same)
PRODUCER_UNDER_CONSUMER = """
@T.prim_func
def main(A: T.Buffer((6, 5), "float32"), B: T.Buffer((5, 4), "float32"), C: T.Buffer((6, 4), "float32")):
    Y = T.alloc_buffer((6, 4), "float32")
    for i, j, k in T.grid(6, 4, 5):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for p, q in T.grid(6, 4):
        with T.block("C"):
            vp, vq = T.axis.remap("SS", [p, q])
            C[vp, vq] = T.max(Y[vp, vq], T.float32(0))
"""


def test_reverse_compute_at_of_a_producer_runs_it_whole_before_its_consumer_in_each_iteration():
    mod = mod_of(PRODUCER_UNDER_CONSUMER)
    for loop in ("p", "q"):
        out = R.reverse_compute_at("Y", loop)(mod)
        text = out["main"].script()
        # the whole domain, in the loop, before the relu
        assert "for ax0, ax1, ax2 in T.grid(6, 4, 5):" in text, text
        assert text.index('T.block("Y")') < text.index('T.block("C")'), text
        assert_equivalent(mod["main"], out["main"])
        a, b = np.random.rand(6, 5).astype("float32"), np.random.rand(5, 4).astype("float32")
        c = np.zeros((6, 4), "float32")
        tirfun.build(out, target="llvm")(a, b, c)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def test_reverse_compute_at_of_a_fused_producer_runs_its_instances_in_their_order():
    # the fuse of i and j binds vi = f // 4, vj = f % 4: the whole domain's
    # nest runs the same instances in the same order
    mod = R.fuse("i", "j")(mod_of(PRODUCER_UNDER_CONSUMER))
    out = R.reverse_compute_at("Y", "q")(mod)
    assert "for ax0, ax1, ax2 in T.grid(6, 4, 5):" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    # fused the other way round (vj = f // 6, vi = f % 6), the order of the
    # elements differs from the domain's; the fuse still ran every element
    # once, and each instance touches its own element of Y, so the whole
    # domain's nest computes the same elements, each in its k order
    swapped = (R.reorder("j", "i") >> R.fuse("j", "i"))(mod_of(PRODUCER_UNDER_CONSUMER))
    assert "f // 6" in swapped["main"].script() or "fused // 6" in swapped["main"].script()
    moved = R.reverse_compute_at("Y", "q")(swapped)
    assert_equivalent(swapped["main"], moved["main"])
    assert_built_as_interpreted(moved)


def test_reverse_compute_at_of_a_producer_is_refused_where_rerunning_it_changes_what_it_writes():
    # the consumer under the loop overwrites what the producer reads: its
    # second run would read the changed values
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(8):
        with T.block("D"):
            vj = T.axis.spatial(8, j)
            D[vj] = B[vj]
            A[vj] = T.float32(0)
"""
    raises(R.DependenceViolationError, R.reverse_compute_at("B", "j"), src,
           "reorders it with block 'D', and one of them writes A")
    # another reader of the producer's output between it and the loop
    # would run before it
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for k in range(8):
        with T.block("E"):
            vk = T.axis.spatial(8, k)
            E[vk] = B[vk]
    for j in range(8):
        with T.block("D"):
            vj = T.axis.spatial(8, j)
            D[vj] = B[vj] + T.float32(1)
"""
    raises(R.DependenceViolationError, R.reverse_compute_at("B", "j"), src,
           "reorders it with block 'E', and one of them writes B")
    # a producer of the moved block under the loop too: the block runs
    # only what that producer wrote, which the consumer may not read
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    C = T.alloc_buffer((8,))
    for j in range(8):
        with T.block("B"):
            vj = T.axis.spatial(8, j)
            B[vj] = A[vj] * T.float32(2)
        with T.block("D"):
            vj = T.axis.spatial(8, j)
            D[vj] = C[7 - vj]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + T.float32(1)
"""
    raises(R.DependenceViolationError, R.reverse_compute_at("C", "j"), src,
           "reorders it with block 'D', and one of them writes C")
    # several threads would run the whole producer at once
    src = PRODUCER_UNDER_CONSUMER.replace("for p, q in T.grid(6, 4):", "for p in T.parallel(6):\n        for q in range(4):")
    src = src.replace('        with T.block("C"):\n            vp, vq', '            with T.block("C"):\n                vp, vq')
    src = src.replace("            C[vp, vq] = T.max", "                C[vp, vq] = T.max")
    raises(R.ThreadOverlapError, R.reverse_compute_at("Y", "p"), src, "several threads")


# a softmax's sum over the columns taken column by column: the sum moved
# under the exponential's column loop, which drives its reduction variable
COLUMN_BY_COLUMN_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), N: T.Buffer((4, 6), "float32")):
    E = T.alloc_buffer((4, 6))
    S = T.alloc_buffer((4,))
    for j, i in T.grid(6, 4):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj])
    for i, k in T.grid(4, 6):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, j in T.grid(4, 6):
        with T.block("N"):
            vi, vj = T.axis.remap("SS", [i, j])
            N[vi, vj] = E[vi, vj] / S[vi]
"""


def test_reverse_compute_at_under_the_loop_of_a_producers_sum_is_refused_where_the_block_follows_it():
    # the sum's step j adds column j; the normalisation moved under j
    # computes column j there, from the sum of the columns up to j, and no
    # later step computes it again (TVM moves it so, and divides by partial
    # sums)
    mod = mod_of(COLUMN_BY_COLUMN_SUM)
    mod = R.reverse_compute_at("S", "i")(mod)  # the sum under the exponential's rows, inside its columns
    text = mod["main"].script()
    assert 'vi_1, vk = T.axis.remap("SR", [i, j])' in text, text
    raises_mod = R.reverse_compute_at("N", "j")
    with pytest.raises(R.NotStagePipelineError) as info:
        raises_mod(mod)
    assert "the elements it computes follow 'j'" in info.value.summary, info.value.summary
    # where it computes all its elements in every step, the last step's
    # are computed from the whole sum: moved so, it keeps the meaning
    whole = mod_of(COLUMN_BY_COLUMN_SUM.replace("N[vi, vj] = E[vi, vj] / S[vi]", "N[vi, vj] = A[vi, vj] + S[vi]"))
    whole = R.reverse_compute_at("S", "i")(whole)
    out = R.reverse_compute_at("N", "j")(whole)
    assert_equivalent(whole["main"], out["main"])


def test_reverse_compute_at_takes_a_predicate_on_the_high_part_of_a_binding_as_implied():
    # B's rows of 4 are split into parts past its 5 rows: the predicate
    # bounds w // 4, which w's domain already keeps below 5
    src = """
@T.prim_func
def main(X: T.Buffer((20,), "float32"), Y: T.Buffer((20,), "float32")):
    B = T.alloc_buffer((20,))
    for i in range(20):
        with T.block("A"):
            vi = T.axis.spatial(20, i)
            B[vi] = X[vi] * T.float32(2)
    for f0, f1, ax in T.grid(2, 3, 4):
        with T.block("C"):
            w = T.axis.spatial(20, (f0 * 3 + f1) * 4 + ax)
            T.where(f0 * 3 + f1 < 5)
            Y[w] = B[w] + T.float32(1)
"""
    mod = mod_of(src)
    out = R.reverse_compute_at("C", "i")(mod)
    assert "T.where" not in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    # a bound the domain does not keep is refused, as before
    raises(R.NonTrivialPredicateError, R.reverse_compute_at("C", "i"), src.replace("< 5)", "< 4)"),
           "does not follow from the domains of its iteration variables")


UPDATE_IN_PLACE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * A[vk, vj]
"""


@pytest.mark.parametrize("at", [0, 1])
def test_reverse_compute_at_of_a_copy_back_whose_cache_was_filled_before_the_loop(at):
    # the update reads C, so cache_write fills the cache first (TVM does
    # not, and reads it unfilled): the fill is a producer of the copy back
    # that has run to its end before the loop, and TVM's next step, the
    # copy back moved under the update's loop, was refused for it
    mod = IRModule({"main": from_source(UPDATE_IN_PLACE)})
    sch = tirfun.Schedule(mod)
    sch.cache_write(sch.get_block("update"), 0, "local")
    sch.reverse_compute_at(sch.get_block("C_local"), sch.get_loops(sch.get_block("update"))[at])
    out = sch.mod
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    a = (np.arange(64, dtype="float32").reshape(8, 8) % 7) - 3
    c = np.ones((8, 8), "float32")
    want = c.copy()
    from tirfun.interp import run
    run(mod["main"], a, want)
    tirfun.build(out, target="llvm")(a, c)
    np.testing.assert_array_equal(c, want)


def test_reverse_compute_at_still_refuses_an_earlier_producer_in_a_loop_around_both():
    # the fill and the update share loop i: the fill of the next row runs
    # after the copy back would have run under j
    src = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    C_local = T.alloc_buffer((8, 8))
    for i in range(8):
        for j in range(8):
            with T.block("fill"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_local[vi, vj] = C[vi, vj]
        for j, k in T.grid(8, 8):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk]
    for i, j in T.grid(8, 8):
        with T.block("back"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C_local[vi, vj]
"""
    sch = tirfun.Schedule(IRModule({"main": from_source(src)}))
    with pytest.raises(R.NotAllRequiredBlocksAreVisitedError, match="1 are not: 'fill'"):
        sch.reverse_compute_at(sch.get_block("back"), sch.get_loops(sch.get_block("update"))[1])


def test_reverse_compute_at_reads_a_shifted_guard_and_a_constant_one_from_the_domains():
    # a padding copy guarded on its loops shifted by one (1 <= h + 1 < 9
    # for h over range(8)) and a comparison of constants left unfolded:
    # both follow from the domains, as TVM drops them with the loops
    src = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for o, k in T.grid(2, 5):
        with T.block("C"):
            vh = T.axis.spatial(8, o * 4 - 1 + k)
            T.where(1 <= o * 4 + k and o * 4 + k < 9 and T.LT(T.int64(0), T.int64(1)))
            C[vh] = B[vh] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    out = R.reverse_compute_at("C", "i")(mod)
    verify(out)
    assert "T.where" not in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_at_of_a_fuse_split_again_drops_the_guard_its_row_implies():
    # B moves under C's row loop (its whole domain in each row, as TVM does
    # it) and loses the loops its guard f < 30 is written in: with the row
    # f // 5 over range(6), the guard follows from the row's domain
    src = """
@T.prim_func
def main(A: T.Buffer((6, 5), "float32"), C: T.Buffer((6, 5), "float32")):
    B = T.alloc_buffer((6, 5))
    for i, j in T.grid(6, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(6, 5):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    sch = tirfun.Schedule(mod)
    sch.split(sch.fuse(*sch.get_loops(sch.get_block("B"))), [None, 8])
    assert "T.where" in sch.mod["main"].script()
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    after = sch.mod
    verify(after)
    assert "T.where" not in after["main"].script()
    assert_equivalent(mod["main"], after["main"])


def test_compute_at_keeps_refusing_a_block_beside_a_fill_whose_predicate_would_be_lost():
    # the copy writes every other row under T.where, which compute_at
    # rebuilds from the domains (as TVM does) and so loses: alone, the rows
    # it skipped held nothing anyone could read; beside the fill of its
    # cache they hold C's values, which the lost predicate would overwrite
    src = """
@T.prim_func
def main(A: T.Buffer((2, 1), "float32"), C: T.Buffer((2, 1), "float32")):
    for i, j in T.grid(2, 1):
        with T.block("update"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i % 2 == 0)
            C[vi, vj] = A[vi, vj] * T.float32(2)
"""
    sch = tirfun.Schedule(IRModule({"main": from_source(src)}))
    sch.cache_write(sch.get_block("update"), 0, "global")
    with pytest.raises(R.NotCompleteOrReductionBlockError, match="fails condition 2"):
        sch.compute_at(sch.get_block("update"), sch.get_loops(sch.get_block("C_global"))[0])


def test_the_copy_back_moves_under_an_over_split_of_a_fuse_whose_quotient_was_simplified():
    # a fuse of 3 x 3 split by 6 binds the row as f_0 * 2 + f_1 // 3 (the
    # simplifier's reading of (f_0 * 6 + f_1) // 3) under f_0 * 6 + f_1 < 9:
    # what the writer covers was read from the guarded sum's digits, which
    # gave f // 6 * 2 + f % 6 // 3 and no iteration map
    src = """
@T.prim_func
def main(A: T.Buffer((3, 3), "float32"), B: T.Buffer((3, 3), "float32")):
    for i, j in T.grid(3, 3):
        with T.block("blk"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""
    mod = IRModule({"main": from_source(src)})
    cached = (R.fuse("i", "j") >> R.split("i_j_fused", [None, 6]) >> R.cache_write("blk", 0, "local"))(mod)
    assert "i_j_fused_0 * 2 + i_j_fused_1 // 3" in cached["main"].script()
    out = R.reverse_compute_at("B_local", "i_j_fused_1")(cached)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


GUARD_THAT_ALWAYS_HOLDS = """
@T.prim_func
def main(A: T.Buffer((4, 8), "int32"), C: T.Buffer((4,), "int32")):
    B = T.alloc_buffer((4,), "int32")
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.where(i * 8 + k < 32)
            with T.init():
                B[vi] = 0
            B[vi] = B[vi] + A[vi, vk]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] * 2
"""


def test_reverse_compute_at_reads_past_a_producer_guard_the_loops_always_satisfy():
    # i * 8 + k < 32 holds over the loops' domains, so B writes its row in
    # every iteration of i: TVM moves C there, and so does tirfun
    mod = mod_of(GUARD_THAT_ALWAYS_HOLDS)
    out = R.reverse_compute_at("C", "i")(mod)
    verify(out)
    assert "vi_1 = T.axis.spatial(4, i)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    a = np.arange(32, dtype="int32").reshape(4, 8)
    c = np.zeros(4, "int32")
    tirfun.build(out, target="llvm")(a, c)
    assert (c == a.sum(axis=1) * 2).all()


FUSED_AT_RUN_TIME = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (8, 4, n))
    B = T.match_buffer(b, (8, 4, n))
    B_shared = T.alloc_buffer((8, 4, n), scope="shared")
    for i, j_k_fused in T.grid(8, n * 4):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(4, j_k_fused // n)
            vk = T.axis.spatial(n, j_k_fused % n)
            B_shared[vi, vj, vk] = A[vi, vj, vk] * T.float32(2.0)
    for ax0, ax1, ax2 in T.grid(8, 4, n):
        with T.block("B_shared"):
            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            B[v0, v1, v2] = B_shared[v0, v1, v2]
"""


def test_a_producer_fused_over_a_run_time_extent_runs_its_whole_domain_under_its_consumer():
    # TVM's elementwise_symbolic after fuse and cache_write: the producer B,
    # moved under a loop of its consumer, runs its whole domain in each
    # iteration. Its fused loop runs the domain in the same order (the rank
    # j_k_fused // n * n + j_k_fused % n is j_k_fused, proven at a
    # symbolic n), so each run stores what the original stored
    mod = mod_of(FUSED_AT_RUN_TIME)
    out = R.reverse_compute_at("B", "ax1")(mod)
    verify(out)
    text = out["main"].script()
    assert "for ax0_1, ax1_1, ax2_1 in T.grid(8, 4, n):" in text
    assert_equivalent(mod["main"], out["main"])
    a = np.random.default_rng(0).standard_normal((8, 4, 3)).astype("float32")
    b = np.zeros((8, 4, 3), "float32")
    tirfun.build(out, target="llvm")(a, b, 3)
    assert (b == a * 2).all()


FUSED_SPLIT_AT_RUN_TIME = """
@T.prim_func
def main(a: T.handle, c: T.handle, m: T.int32, n: T.int32):
    A = T.match_buffer(a, (m, n))
    C = T.match_buffer(c, (m, n))
    B = T.alloc_buffer((m, n))
    for f_0, f_1 in T.grid((m * n + 7) // 8, 8):
        with T.block("B"):
            vi = T.axis.spatial(m, (f_0 * 8 + f_1) // n)
            vj = T.axis.spatial(n, (f_0 * 8 + f_1) % n)
            T.where(f_0 * 8 + f_1 < m * n)
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j in T.grid(m, n):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1.0)
"""


def test_a_producer_fused_and_split_at_run_time_runs_its_whole_domain_under_its_consumer():
    # the split's guard f_0 * 8 + f_1 < m * n cuts the loops, in their
    # order, to the m * n instances of the domain: they run them all, in
    # order, as the whole-domain nest does
    mod = mod_of(FUSED_SPLIT_AT_RUN_TIME)
    out = R.reverse_compute_at("B", "i")(mod)
    verify(out)
    assert "for ax0, ax1 in T.grid(m, n):" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    a = np.random.default_rng(1).standard_normal((3, 5)).astype("float32")
    c = np.zeros((3, 5), "float32")
    tirfun.build(out, target="llvm")(a, c, 3, 5)
    assert (c == a * 2 + 1).all()


FUSED_FROM_THREE = """
@T.prim_func
def main(A: T.Buffer((2, 5, 3), "float32"), B: T.Buffer((2, 5, 3), "float32")):
    P = T.alloc_buffer((2, 5, 3))
    for f in range(30):
        with T.block("P"):
            v0 = T.axis.spatial(2, f // 15)
            v1 = T.axis.spatial(5, f // 3 % 5)
            v2 = T.axis.spatial(3, f % 3)
            P[v0, v1, v2] = A[v0, v1, v2] + T.float32(1.0)
    for i, j, k in T.grid(2, 5, 3):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = P[vi, vj, vk] * T.float32(3.0)
"""


def test_a_producer_fused_from_three_loops_runs_its_whole_domain_under_its_consumer():
    # TVM's test_pad after two fuses: the rank of the three digits,
    # f // 15 * 15 + f // 3 % 5 * 3 + f % 3, is f (the two low digits make
    # f % 15), so the fused loop runs the domain in order
    mod = mod_of(FUSED_FROM_THREE)
    out = R.reverse_compute_at("P", "i")(mod)
    verify(out)
    assert "for ax0, ax1, ax2 in T.grid(2, 5, 3):" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])


FUSED_CONSUMER_OF_A_ROW_MAX = """
@T.prim_func
def main(A: T.Buffer((4, 3, 5), "float32"), B: T.Buffer((4, 3, 5), "float32"), S: T.Buffer((4, 3), "float32")):
    M = T.alloc_buffer((4, 3))
    for i, j, k in T.grid(4, 3, 5):
        with T.block("M"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                M[vi, vj] = T.float32(-1000.0)
            M[vi, vj] = T.max(M[vi, vj], A[vi, vj, vk])
    for i, f in T.grid(4, 15):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(3, f // 5)
            vk = T.axis.spatial(5, f % 5)
            B[vi, vj, vk] = A[vi, vj, vk] - M[vi, vj]
    for i, f in T.grid(4, 15):
        with T.block("S"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(3, f // 5)
            vk = T.axis.reduce(5, f % 5)
            with T.init():
                S[vi, vj] = T.float32(0.0)
            S[vi, vj] = S[vi, vj] + (A[vi, vj, vk] - M[vi, vj])
"""


@pytest.mark.parametrize("consumer", ["B", "S"])
def test_a_consumer_whose_fused_loop_runs_its_domain_in_order_moves_under_its_producer(consumer):
    # TVM's layer_norm (B: both fused variables free) and log_softmax (S:
    # the row read from M is given whole by M, the reduction variable
    # free) after a fuse: the fused loop f runs (vj, vk) in the order of a
    # nest over vj then vk, so the whole-domain nest under M's loop i runs
    # the same instances in the same order (the sum over vk too)
    mod = mod_of(FUSED_CONSUMER_OF_A_ROW_MAX)
    out = R.reverse_compute_at(consumer, "i")(mod)
    verify(out)
    assert "T.grid(3, 5)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"])
    a = np.random.default_rng(2).standard_normal((4, 3, 5)).astype("float32")
    want_b, want_s = np.zeros((4, 3, 5), "float32"), np.zeros((4, 3), "float32")
    got_b, got_s = want_b.copy(), want_s.copy()
    tirfun.build(mod, target="llvm")(a, want_b, want_s)
    tirfun.build(out, target="llvm")(a, got_b, got_s)
    assert (got_b == want_b).all() and (got_s.view("uint32") == want_s.view("uint32")).all()


def test_a_reduction_fused_in_another_order_than_its_domain_moves_keeping_each_rows_order():
    # f // 3 is the reduction variable and f % 3 the row: the fused loop
    # sums each row's values in the order of k, its rows interleaved; the
    # whole-domain nest runs them row by row, each row's sum in the order of
    # k still: the same sums, bit for bit (TVM's argmax_split_rfactor)
    source = FUSED_CONSUMER_OF_A_ROW_MAX.replace(
        "vj = T.axis.spatial(3, f // 5)\n            vk = T.axis.reduce(5, f % 5)",
        "vj = T.axis.spatial(3, f % 3)\n            vk = T.axis.reduce(5, f // 3)")
    assert "f % 3" in source
    mod = mod_of(source)
    out = R.reverse_compute_at("S", "i")(mod)
    verify(out)
    assert "T.grid(3, 5)" in out["main"].script()
    assert_built_as_interpreted(out, reference=mod, seed=3, ulps=0)
    # a row that several values of k write at once (S[vi, 0]) is refused:
    # the order of its steps would change
    one_row = source.replace("S[vi, vj]", "S[vi, 0]")
    raises(R.NotStagePipelineError, R.reverse_compute_at("S", "i"), one_row,
           "the reduction variable vk_2, bound to f_1 // 3, shares loop 'f_1' with vj_2")


def test_reverse_compute_at_keeps_a_condition_on_what_the_producer_wrote():
    # TVM's elementwise_predicate: C runs where B < 10; TVM drops the
    # condition under B's loop and writes every element of C
    src = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(B[i, j] < T.float32(1))
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
    mod = mod_of(src)
    for loop in ("i", "j"):
        out = R.reverse_compute_at("C", loop)(mod)
        verify(out)
        assert "T.where(B[" in out["main"].script()
        assert_equivalent(mod["main"], out["main"], trials=4)
    # a load of an element the block does not declare it reads could see
    # another value at the new place: refused
    other = src.replace("T.where(B[i, j] < T.float32(1))", "T.where(B[j, i] < T.float32(1))")
    raises(R.NonTrivialPredicateError, R.reverse_compute_at("C", "i"), other, "cannot be written in them")


@pytest.mark.parametrize("n", [0, 3, 9])
def test_reverse_compute_at_keeps_a_split_guard_the_padded_domain_does_not_imply(n):
    # TVM's full over a run-time size after split and pad_einsum: the
    # guard i_0 * 4 + i_1 < n is the block's vi < n once it leaves its loops
    src = """
@T.prim_func
def main(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = T.float32(7)
"""
    mod = (R.split("i", [None, 4]) >> R.pad_einsum("A", [8]))(mod_of(src))
    sch = tirfun.Schedule(mod)
    sch.reverse_compute_at(sch.get_block("A"), sch.get_loops(sch.get_block("A_pad"))[0])
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"], sizes={"n": n})


def test_reverse_compute_at_writes_a_condition_through_a_binding_of_one_loop_beside_a_sum():
    # vi = i and vj = k * 4 + j: i < 3 is vi < 3, k and j's sum is vj's
    src = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
    B = T.alloc_buffer((4, 16))
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, k, j in T.grid(4, 4, 4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(16, k * 4 + j)
            T.where(i < 3 and k * 4 + j < 9)
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
    mod = mod_of(src)
    out = R.reverse_compute_at("C", "i")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])


def test_reverse_compute_at_refuses_a_block_that_ran_a_band_of_its_domains():
    # found while writing the test above: vi = i and vj = i * 4 + j ran 16
    # of the 64 pairs; under B's loop the domains solved from B's rows are a
    # box, and the block stored C at the 48 others (TVM does so too)
    src = """
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
    B = T.alloc_buffer((4, 16))
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(16, i * 4 + j)
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
    raises(R.NotStagePipelineError, R.reverse_compute_at("C", "i"), src,
           "feeds both vi_1 = i_1 and vj_1 = i_1 * 4 + j_1", "storing where it never stored")
    # the same band through a fused loop is an iteration map: the box is
    # what it ran, and the move keeps the meaning
    fused = src.replace("for i, j in T.grid(4, 4):\n        with T.block(\"C\"):\n"
                        "            vi = T.axis.spatial(4, i)\n            vj = T.axis.spatial(16, i * 4 + j)",
                        "for f in range(64):\n        with T.block(\"C\"):\n"
                        "            vi = T.axis.spatial(4, f // 16)\n            vj = T.axis.spatial(16, f % 16)")
    assert fused != src
    mod = mod_of(fused)
    out = R.reverse_compute_at("C", "i")(mod)
    assert_equivalent(mod["main"], out["main"])


RF_UNDER_A_REDUCTION_GUARD = """
@T.prim_func
def main(A: T.Buffer((16, 20), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, COLS))
    for i, k_0, k_1 in T.grid(16, OUTER, 4):
        with T.block("B_rf"):
            vk_0 = T.axis.spatial(COLS, k_0)
            vi = T.axis.spatial(16, i)
            vk_1 = T.axis.reduce(4, k_1)
            T.where(k_0 * 4 + k_1 < 20)
            with T.init():
                B_rf[vi, vk_0] = T.float32(0)
            B_rf[vi, vk_0] = B_rf[vi, vk_0] + A[vi, vk_0 * 4 + vk_1]
    for i, k in T.grid(16, COLS):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vi, vk]
"""


@pytest.mark.parametrize("outer", [5, 8])
def test_reverse_compute_at_under_a_split_reductions_guard_reads_it_where_the_inner_loop_starts(outer):
    # k_0 * 4 + k_1 < 20 reads the kept loop k_0 and the inner reduction
    # loop k_1, which the written element B_rf[vi, vk_0] does not use. At
    # k_1 = 0 it is k_0 * 4 < 20: with 5 outer iterations the loop's domain
    # proves it, so every iteration writes its column (TVM moves B there,
    # after rfactor, with the guard TVM's split of 20 by 4 leaves when the
    # factor does not divide). With 8, it holds in the first 5 only; the
    # sum on the left grows with k_1, so where it fails at k_1 = 0 the
    # iteration writes nothing, and the moved block runs under k_0 * 4 < 20
    src = RF_UNDER_A_REDUCTION_GUARD.replace("OUTER", str(outer)).replace("COLS", "5")
    mod = mod_of(src)
    out = R.reverse_compute_at("B", "k_0")(mod)
    verify(out)
    text = out["main"].script()
    assert ("T.where(k_0 * 4 < 20" in text) == (outer == 8), text
    assert_equivalent(mod["main"], out["main"])
    a = np.random.default_rng(0).standard_normal((16, 20)).astype("float32")
    b = np.zeros(16, "float32")
    tirfun.build(out, target="llvm")(a, b)
    want = np.zeros(16, "float32")
    tirfun.build(mod, target="llvm")(a, want)
    assert np.array_equal(b, want)


def test_reverse_compute_at_refuses_a_guard_on_the_inner_loop_that_may_hold_later_only():
    # k_0 < 4 + k_1 fails at k_1 = 0 for k_0 >= 4, but holds at a later k_1
    # for k_0 up to 6: the iteration may write its column after all, so
    # k_0 < 4 is no condition for the moved block to run under
    src = RF_UNDER_A_REDUCTION_GUARD.replace("OUTER", "7").replace("COLS", "7").replace(
        "T.where(k_0 * 4 + k_1 < 20)", "T.where(k_0 < 4 + k_1)").replace("(16, 20)", "(16, 28)")
    raises(R.NotStagePipelineError, R.reverse_compute_at("B", "k_0"), src, "do not surely write before it")


@pytest.mark.parametrize("cond, guard", [
    ("k_0 * 4 + k_1 < 20", "k_0 * 4 < 20"),   # grows with k_1: decided at k_1 = 0
    ("k_1 + k_0 <= 5", "k_0 <= 5"),
    ("5 > k_0 + k_1 * 2", "5 > k_0"),
    ("k_0 < 4 + k_1", None),                   # may hold at a later k_1 only
    ("k_0 * 4 - k_1 < 20", None),              # shrinks with k_1
    ("k_0 * k_1 < 20", ""),                    # holds at k_1 = 0: always written
    ("k_0 * k_1 + k_0 < 5", None),             # k_1 under a product: no weight
])
def test_what_a_reduction_writes_under_a_guard_on_its_inner_loop(cond, guard):
    # what B_rf writes in one iteration of k_0, as reverse_compute_at reads
    # it: a box, and the condition of k_0 for the iteration to write at all
    from tirfun.analysis.traversal import find_block, find_loop, get_at
    from tirfun.rewrites.base import Site
    from tirfun.rewrites.dataflow import guarded_produced_region
    from tirfun.rewrites.index import index_of

    src = RF_UNDER_A_REDUCTION_GUARD.replace("OUTER", "8").replace("COLS", "8").replace(
        "k_0 * 4 + k_1 < 20", cond).replace("(16, 20)", "(16, 32)")
    mod = mod_of(src)
    func = mod["main"]
    site = Site(mod, "main", func, index_of(func))
    path = find_block(func, "B_rf")[:-1]  # the BlockRealize
    realize = get_at(func, path)
    got = guarded_produced_region(site, path, realize, realize.block.writes[0], find_loop(func, "k_0"))
    if guard is None:
        assert got is None
    else:
        box, cond_at_start = got
        assert (cond_at_start.script() if cond_at_start is not None else "") == guard
        assert [(b.lo.script(), b.hi.script()) for b in box] == [("i", "i"), ("k_0", "k_0")]


SLICE_AT_A_RUN_TIME_START = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), b: T.handle, start: T.int32):
    B = T.match_buffer(b, (EXTENT,))
    A_shared = T.alloc_buffer((16,), scope="shared")
    for i in range(16):
        with T.block("A_shared"):
            v = T.axis.spatial(16, i)
            A_shared[v] = A[v]
    for i in range(EXTENT):
        with T.block("B"):
            v = T.axis.spatial(EXTENT, i)
            B[v] = VALUE
"""


@pytest.mark.parametrize("start", [0, 5, 15])
def test_reverse_compute_at_of_a_slice_at_a_run_time_start(start):
    # B[v] = A_shared[v + start] (TVM's legalized dynamic strided_slice
    # after cache_read): under A_shared's loop, the instance of v reads the
    # row i written in that iteration when v = i - start. The instances the
    # iterations reach, [-start, 15 - start], are all those whose read is
    # inside A_shared; any other would read past its end, which no
    # program does, so none is lost
    src = SLICE_AT_A_RUN_TIME_START.replace("EXTENT", "16 - start").replace(
        "VALUE", "A_shared[v + start] * T.float32(2)")
    mod = mod_of(src)
    out = R.reverse_compute_at("B", "i")(mod)
    verify(out)
    assert "v_1 = T.axis.spatial(16 - start, i - start)" in out["main"].script()
    assert_equivalent(mod["main"], out["main"], sizes={"start": start})
    a = np.arange(16, dtype="float32")
    b = np.zeros(16 - start, "float32")
    tirfun.build(out, target="llvm")(a, b, start)
    assert np.array_equal(b, a[start:] * 2)


def test_reverse_compute_at_of_a_guarded_slice_at_a_run_time_start_is_refused():
    # the same read under the guard v + start < 16 (a padded slice): the
    # instances past A_shared's end store 0 without reading it, and under
    # the loop they would never run (TVM drops them)
    src = SLICE_AT_A_RUN_TIME_START.replace("EXTENT", "16").replace(
        "VALUE", "T.if_then_else(v + start < 16, A_shared[v + start], T.float32(0))")
    raises(R.UnsupportedRegionError, R.reverse_compute_at("B", "i"), src, "would never run")


def test_reverse_compute_at_of_a_sum_under_the_loop_of_the_maximum_it_reads():
    # TVM's softmax test moves the exponentials' sum under the column loop
    # of the row maximum: in each iteration the sum runs over its whole row
    # from its init, with the maximum so far; the last iteration's is the
    # original's. A sum whose columns follow the loop (the second stage of
    # an rfactor under its first stage's inner loop) would add partial
    # results instead, and stays refused
    from tirfun.testing.draw_compute_location import ReductionAfterReduction, SplitReduction

    case = ReductionAfterReduction("float32", "max", "sum", 3, 6, "k")
    mod = case.program()
    out = case.rewrite()(mod)
    verify(out)
    text = out["main"].script()
    assert "for ax0 in range(6):" in text and 'vi_1, vk_1 = T.axis.remap("SR", [i, ax0])' in text, text
    assert_equivalent(mod["main"], out["main"])
    a = np.random.default_rng(1).standard_normal((3, 6)).astype("float32")
    got, want = np.zeros(3, "float32"), np.zeros(3, "float32")
    tirfun.build(out, target="llvm")(a, got)
    tirfun.build(mod, target="llvm")(a, want)
    assert np.array_equal(got, want)
    rf = SplitReduction("float32", "sum", 3, 8, 4, 2, "k_1")
    raises(R.UnsupportedRegionError, rf.rewrite(), rf.source(), "the reduction would run twice")


def test_reverse_compute_at_under_a_parallel_split_of_a_run_time_extent():
    # TVM's GEMV after its schedule: B's rows split by 4 over a parallel
    # loop, guarded by i_0 * 4 + i_1 < n. Under i_1, B writes row i_0 * 4 +
    # i_1 where the guard holds: C takes that one row under the domain's
    # end (no loop of zero or one iterations, as TVM writes it), and the
    # threads of i_0 compute rows of their own
    src = """
@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 8))
    C = T.match_buffer(c, (n,))
    B = T.alloc_buffer((n,))
    for i_0 in T.parallel((n + 3) // 4):
        for i_1, k in T.grid(4, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 4 + i_1)
                vk = T.axis.reduce(8, k)
                T.where(i_0 * 4 + i_1 < n)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = B[vi] * T.float32(2)
"""
    mod = mod_of(src)
    out = R.reverse_compute_at("C", "i_1")(mod)
    verify(out)
    text = out["main"].script()
    assert "vi_1 = T.axis.spatial(n, i_0 * 4 + i_1)" in text and "T.where(i_0 * 4 + i_1 < n)" in text, text
    for n in (1, 6, 8):
        assert_equivalent(mod["main"], out["main"], sizes={"n": n})
    a = np.random.default_rng(2).standard_normal((7, 8)).astype("float32")
    got, want = np.zeros(7, "float32"), np.zeros(7, "float32")
    tirfun.build(out, target="llvm")(a, got)
    tirfun.build(mod, target="llvm")(a, want)
    assert np.array_equal(got, want)


POOLING_TILE = """
@T.prim_func
def main(X: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32")):
    cache = T.alloc_buffer((16,))
    for h_0 in range(2):
        for ax0 in range(WINDOW):
            with T.block("cache"):
                h = T.axis.spatial(16, h_0 * 8 - 1 + ax0)
                T.where(1 <= h_0 * 8 + ax0 and h_0 * 8 + ax0 < 17)
                cache[h] = X[h]
        for h_1_0, h_1_1, kh in T.grid(2, 5, 3):
            with T.block("compute"):
                h_1 = T.axis.spatial(16, h_0 * 8 + h_1_0 * 5 + h_1_1)
                k = T.axis.reduce(3, kh)
                T.where(h_1_0 * 5 + h_1_1 < 8)
                with T.init():
                    Y[h_1] = T.float32(0)
                Y[h_1] = T.max(Y[h_1], T.if_then_else(1 <= h_1 + k and h_1 + k < 17, cache[h_1 + k - 1], T.float32(0)))
"""


def test_compute_inline_of_a_padded_window_read_by_a_split_of_its_tile():
    # TVM's tiled pooling after split(hh_1, [None, 5]): the cache writes
    # rows h_0 * 8 - 1 .. h_0 * 8 + 8 where 1 <= h + 1 < 17 (inside the
    # buffer: a bound from below), and the tile's 8 rows, split 2 x 5 under
    # h_1_0 * 5 + h_1_1 < 8, read rows h_0 * 8 - 1 .. h_0 * 8 + 8 (the
    # guarded sum runs to 7 only). The cache covers what the tile reads,
    # and compute_inline applies, as in TVM; a window one row short does
    # not cover it and is refused
    mod = mod_of(POOLING_TILE.replace("WINDOW", "10"))
    out = R.compute_inline("cache")(mod)
    verify(out)
    assert_equivalent(mod["main"], out["main"])
    raises(R.NotStagePipelineError, R.compute_inline("cache"), POOLING_TILE.replace("WINDOW", "9"),
           "does not surely write")


# a producer and its consumer under the same over-split: each runs only
# where i_0 * 8 + i_1 < 10 (TVM's cache_write_multi_consumer_C_consume_cache
# after a split of [None, 2, 16])
GUARDED_ALIKE = """
@T.prim_func
def main(X: T.Buffer((160,), "float32"), Y: T.Buffer((160,), "float32")):
    P = T.alloc_buffer((160,))
    for i_0, i_1 in T.grid(2, 8):
        for j in range(16):
            with T.block("P"):
                v = T.axis.spatial(160, (i_0 * 8 + i_1) * 16 + j)
                T.where(i_0 * 8 + i_1 < 10)
                P[v] = X[v] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                v = T.axis.spatial(160, (i_0 * 8 + i_1) * 16 + j)
                T.where(i_0 * 8 + i_1 < 10)
                Y[v] = P[v] + T.float32(1)
"""


def test_a_producer_covers_a_reader_guarded_by_the_same_condition_of_their_shared_loops():
    # within one iteration of i_1 the producer writes what the consumer reads
    # where the guard holds, and the consumer reads nothing where it does not
    mod = mod_of(GUARDED_ALIKE)
    after = R.compute_inline("P")(mod)
    verify(after)
    assert "P[" not in after["main"].script()
    assert_equivalent(mod["main"], after["main"])
    assert_built_as_interpreted(after)


def test_a_producer_guarded_otherwise_than_its_reader_does_not_cover_it():
    # the consumer runs where i_0 * 8 + i_1 < 10, the producer only where
    # it is below 9: the tenth tile is read unwritten
    mod = mod_of(GUARDED_ALIKE.replace("T.where(i_0 * 8 + i_1 < 10)\n                P[v]",
                                       "T.where(i_0 * 8 + i_1 < 9)\n                P[v]"))
    with pytest.raises(R.NotStagePipelineError, match="does not surely write before it"):
        R.compute_inline("P")(mod)


# the reader states reads of A only, and loads B too (TVM's cache_index test
# cached_bilinear_resize states its regions so)
UNSTATED_READ = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "int32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = (vi * 3) % 8
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(A[0:8])
            T.writes(C[vi])
            C[vi] = A[B[vi]] + T.float32(1)
"""


def test_compute_inline_rewrites_a_load_its_reader_does_not_state():
    # the stated regions of a block need not hold every access its body makes
    # (TVM does not check them); the inlining rewrites the load all the same
    mod = mod_of(UNSTATED_READ)
    after = R.compute_inline("B")(mod)
    verify(after)
    assert "B[" not in after["main"].script()
    assert_equivalent(mod["main"], after["main"])
