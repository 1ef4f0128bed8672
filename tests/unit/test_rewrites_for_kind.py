"""parallel, vectorize, bind and unroll."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.verify import verify
from tirfun.nodes import ForKind, IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import REPEATED_REDUCTION

MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"), C: T.Buffer((4, 5), "float32")):
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def mod_of(source: str = MATMUL) -> IRModule:
    return IRModule({"main": from_source(source)})


@pytest.mark.parametrize("rewrite, kind, tag", [
    (R.parallel("i"), ForKind.PARALLEL, None),
    (R.vectorize("j"), ForKind.VECTORIZED, None),
    (R.unroll("k"), ForKind.UNROLLED, None),
    (R.bind("i", "blockIdx.x"), ForKind.THREAD_BINDING, "blockIdx.x"),
    (R.bind("j", "vthread.y"), ForKind.THREAD_BINDING, "vthread.y"),
])
def test_kind_changes_only_the_loop(rewrite, kind, tag):
    mod = mod_of()
    out = rewrite(mod)
    loop = R.get(out, rewrite.loop)
    assert loop.kind is kind and loop.thread_binding == tag
    assert loop.body is R.get(mod, rewrite.loop).body  # everything under it is shared
    verify(out)


def test_reduction_loops_may_bind_only_to_thread_idx():
    mod = mod_of()
    assert R.bind("k", "threadIdx.x").violations(mod) == []
    for rewrite in (R.bind("k", "blockIdx.x"), R.bind("k", "vthread.x"), R.parallel("k"), R.vectorize("k")):
        [err] = rewrite.violations(mod)
        assert isinstance(err, R.WrongBlockIterTypeError)
        assert "CommReduce iteration variable vk" in str(err)


def test_a_reduction_split_with_a_unit_inner_loop_still_binds():
    # split(k, [6, 1]) leaves vk = k_0 + k_1 with k_1 of extent 1: TVM reads
    # the unit loop as a constant, so the block stays a reduction block
    mod = R.split("k", [6, 1])(mod_of())
    assert R.bind("k_0", "threadIdx.x").violations(mod) == []
    assert R.parallel("i").violations(mod) == []


def test_unroll_requires_nothing_of_the_blocks():
    assert R.unroll("k").violations(mod_of()) == []


def test_reduction_block_counts_as_compact_dataflow():
    # the reduction block reads and writes C, but it has an init: it is a
    # reduction block, so the spatial loops can be parallel
    assert R.parallel("i").violations(mod_of()) == []


def test_bind_prints_as_tvm_does():
    out = (R.bind("i", "blockIdx.x") >> R.bind("j", "threadIdx.x"))(mod_of())
    text = out.script()
    assert 'for i in T.thread_binding(4, thread="blockIdx.x"):' in text
    assert 'for j in T.thread_binding(5, thread="threadIdx.x"):' in text


def test_unroll_clears_a_thread_binding():
    out = R.unroll("i")(R.bind("i", "blockIdx.x")(mod_of()))
    loop = R.get(out, R.LoopRef("i"))
    assert loop.kind is ForKind.UNROLLED and loop.thread_binding is None


@pytest.mark.parametrize("rewrite, threads", [
    (R.parallel("u"), "the parallel threads"),
    (R.bind("u", "threadIdx.x"), "the threads of threadIdx.x"),
    (R.bind("u", "blockIdx.x"), "the threads of blockIdx.x"),
])
def test_threads_that_would_each_run_one_update_at_once_are_refused(rewrite, threads):
    # found by random arguments: u feeds no variable of B, so each of its
    # iterations runs the same instance, which sets B[vi] to 0 and adds to
    # it; as threads they would race on B[vi] (TVM does either)
    mod = IRModule({"main": from_source(REPEATED_REDUCTION)})
    with pytest.raises(R.ReplicatedThreadReductionError,
                       match=f"updates B from what it reads; {threads} would each run the same instance"):
        rewrite(mod)
    # the loop that feeds vi, and virtual threads, which run one after another
    for fine in (R.parallel("i"), R.bind("u", "vthread.x")):
        verify(fine(mod))


def test_a_loop_of_one_iteration_repeats_no_update():
    # found by the row sum's schedule on one row: the loop of one iteration
    # feeds no variable of the partial sums' block, but one thread cannot race
    source = REPEATED_REDUCTION.replace("T.grid(4, 2)", "T.grid(4, 1)")
    assert source != REPEATED_REDUCTION
    mod = IRModule({"main": from_source(source)})
    for rewrite in (R.parallel("u"), R.bind("u", "threadIdx.x")):
        out = rewrite(mod)
        verify(out)
        assert_equivalent(mod["main"], out["main"], trials=2)


def test_threads_that_each_run_one_copy_or_their_own_update_are_left_alone():
    # repeating a plain copy stores the same values; a local buffer is each
    # thread's own
    source = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    L = T.alloc_buffer((4,), "int32", scope="local")
    for i, u in T.grid(4, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
        with T.block("L"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(1, 0)
            with T.init():
                L[vi] = 0
            L[vi] = L[vi] + A[vi]
"""
    mod = IRModule({"main": from_source(source)})
    verify(R.bind("u", "threadIdx.x")(mod))
    with pytest.raises(R.ReplicatedThreadReductionError, match="updates L from what it reads"):
        R.parallel("u")(mod)
