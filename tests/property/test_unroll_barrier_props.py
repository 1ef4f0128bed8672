"""unroll of a threadIdx or vthread loop that holds a barrier, on random
programs.

Threads fill a shared buffer, meet at ``T.tvm_storage_sync("shared")``, and
read it back at a random permutation of the places (or their own); unroll
takes the binding away, as TVM's does, and one thread runs the iterations
in turn (the threads around a vthread loop each run its iterations in turn,
side by side). unroll refuses exactly where that reorders a read after the
barrier ahead of another iteration's write before it, or leaves them
unordered in two threads: with the check taken
out, the interpreter then finds another result; everywhere else the
unrolled program computes what the threads did.
"""

from unittest import mock

from hypothesis import event, given, strategies as st

import tirfun.rewrites as R
from tirfun.nodes import IRModule
from tirfun.rewrites import for_kind
from tirfun.script import from_source
from tirfun.testing.equivalence import NotEquivalentError, assert_equivalent


@st.composite
def barrier_programs(draw):
    """(source, n, loop) of thread blocks of ``n`` threads (times ``v``
    virtual threads) storing a row of their thread block into a shared
    buffer, a barrier, and a read of it at a random affine place; unroll
    ``loop`` (tx or w) of ``n`` iterations."""
    n = draw(st.integers(1, 6), label="threads")
    v = draw(st.integers(1, 3), label="virtual threads")
    blocks = draw(st.integers(1, 2), label="thread blocks")
    size = n * v
    # the place read: the thread's own, a shift, a mirror, or a stride
    a = draw(st.sampled_from([1, -1, 3, 5]), label="scale")
    b = draw(st.integers(0, size - 1), label="shift")
    place = f"({a} * (w * {n} + tx) + {b + size * 5}) % {size}"
    src = f'''
@T.prim_func
def main(A: T.Buffer(({blocks}, {size}), "int32"), B: T.Buffer(({blocks}, {size}), "int32")):
    S = T.alloc_buffer(({size},), "int32", scope="shared")
    for bx in T.thread_binding({blocks}, thread="blockIdx.x"):
        for tx in T.thread_binding({n}, thread="threadIdx.x"):
            for w in T.thread_binding({v}, thread="vthread.x"):
                S[w * {n} + tx] = A[bx, w * {n} + tx] * 3
                T.tvm_storage_sync("shared")
                B[bx, w * {n} + tx] = S[{place}]
'''
    # the thread loop, or the virtual threads inside the threads of tx,
    # which run it side by side
    loop = draw(st.sampled_from(["tx", "w"]), label="unrolled")
    return src, n if loop == "tx" else v, loop


@given(barrier_programs(), st.integers(0, 2**16))
def test_unroll_of_a_thread_loop_with_a_barrier_refuses_exactly_where_accesses_reorder(case, seed):
    src, n, loop = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.unroll(loop)
    problems = rewrite.violations(mod)
    if problems:
        assert [type(p) for p in problems] == [R.UnrolledBarrierError], problems[0]
        event(f"refused: {loop}")
        with mock.patch.object(for_kind, "_check_barriers", lambda *a: None):
            unrolled = rewrite(mod)
        try:
            assert_equivalent(mod["main"], unrolled["main"], seed=seed)
        except NotEquivalentError:
            return
        raise AssertionError("the refused unroll computes what the threads did")
    event(f"unrolled {loop}" if n > 1 else "unrolled: one iteration")
    assert_equivalent(mod["main"], rewrite(mod)["main"], seed=seed)
