"""``bind`` of a loop that runs the same block instance in every iteration.

A loop feeding no iteration variable of a block repeats the block; bound to
threads, its iterations run the instance at once. A plain copy then stores
the same values (harmless), but an update of what it reads (an init and an
accumulation) races (TVM binds it all the same). Random repeated blocks,
copies or updates, into a shared or a local buffer, bound to threadIdx or
blockIdx: what bind accepts runs without a race and keeps the meaning under
the interpreter's GPU semantics; what it refuses races when bound anyway.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import event, given, strategies as st

import tirfun.rewrites as R
from tirfun.errors import InterpError
from tirfun.nodes import IRModule
from tirfun.rewrites import for_kind
from tirfun.script import from_source
from tirfun.testing.equivalence import NotEquivalentError, assert_equivalent


@st.composite
def repeated_blocks(draw):
    """(source, thread axis, races): a loop ``u`` of 1 to 3 iterations inside row
    loop ``i``, feeding no variable of block S, which copies A into its
    buffer or accumulates A into it (an init and an update), the buffer
    global or local (a local one then copied out by block O)."""
    reps = draw(st.integers(1, 3), label="repetitions")
    update = draw(st.booleans(), label="accumulates")
    scope = draw(st.sampled_from(["global", "local"]), label="scope")
    axis = draw(st.sampled_from(["threadIdx.x", "blockIdx.x"]), label="thread axis")
    store = '''vk = T.axis.reduce(1, 0)
                with T.init():
                    S[vi] = 0
                S[vi] = S[vi] + A[vi]''' if update else "S[vi] = A[vi] * 2"
    src = f'''
@T.prim_func
def main(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    S = T.alloc_buffer((4,), "int32", scope="{scope}")
    for i in T.thread_binding(4, thread="threadIdx.y"):
        for u in range({reps}):
            with T.block("S"):
                vi = T.axis.spatial(4, i)
                {store}
        with T.block("O"):
            vi = T.axis.spatial(4, i)
            B[vi] = S[vi]
'''
    # one iteration is one thread: nothing to race with
    return src, axis, update and scope != "local" and reps > 1


@given(repeated_blocks())
def test_bind_of_a_loop_repeating_a_block_refuses_exactly_the_races(case):
    src, axis, races = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.bind("u", axis)
    problems = rewrite.violations(mod)
    if not races:
        assert not problems, problems
        event("bound")
        assert_equivalent(mod["main"], rewrite(mod)["main"], trials=1)
        return
    assert problems and type(problems[0]) is R.ReplicatedThreadReductionError, src
    event("refused")
    with mock.patch.object(for_kind, "_check_repeated_updates", lambda *a: None):
        forced = rewrite(mod)
    try:
        assert_equivalent(mod["main"], forced["main"], trials=1)
    except (NotEquivalentError, InterpError) as error:
        assert "race" in str(error), error
        return
    raise AssertionError(f"refused, but bound it runs without a race:\n{src}")
