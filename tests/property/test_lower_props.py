"""Properties of lowering: every pass, on its own, keeps the meaning of every
program (the interpreter gives the same results before and after it).

Programs are random well-formed PrimFuncs after a random valid schedule.
Each pass is checked at its place in the pipeline (its input is what the
passes before it produce) and, for the passes that accept TensorIR with
blocks, also on the scheduled program itself.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tirfun import IRModule
from tirfun.analysis.traversal import walk
from tirfun.lower import PASSES
from tirfun.nodes import Block, BlockRealize, BufferLoad, BufferStore
from tirfun.testing.equivalence import assert_equivalent
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules

#: passes that take a function with blocks as well as a lowered one
ACCEPT_BLOCKS = {"lower_allocations", "lower_blocks", "compact_allocations", "simplify", "partition_loops",
                 "unroll_loops", "vectorize_loops", "prepare_parallel"}


@st.composite
def scheduled_programs(draw):
    mod = IRModule({"main": draw(prim_funcs(), label="program")})
    schedule = draw(loop_schedules(mod, max_steps=4), label="schedule")
    return schedule(mod)


@given(mod=scheduled_programs(), position=st.integers(0, len(PASSES) - 1),
       seed=st.integers(0, 2**16))
def test_each_pass_keeps_the_meaning_at_its_place(mod, position, seed):
    for _name, run in PASSES[:position]:
        mod = run(mod)
    _name, run = PASSES[position]
    out = run(mod)
    assert_equivalent(mod["main"], out["main"], trials=1, seed=seed)


@given(mod=scheduled_programs(), name=st.sampled_from(sorted(ACCEPT_BLOCKS)),
       seed=st.integers(0, 2**16))
def test_passes_that_accept_blocks_keep_the_meaning_alone(mod, name, seed):
    before = mod.script()
    out = dict(PASSES)[name](mod)
    assert_equivalent(mod["main"], out["main"], trials=1, seed=seed)
    assert mod.script() == before  # the input is untouched


@given(mod=scheduled_programs())
def test_lowered_programs_have_no_blocks_flat_accesses_and_print(mod):
    out = mod
    for _name, run in PASSES:
        out = run(out)
    for node in walk(out["main"].body):
        assert not isinstance(node, (Block, BlockRealize))
        if isinstance(node, (BufferLoad, BufferStore)):
            assert len(node.indices) == 1
    assert out.script()
