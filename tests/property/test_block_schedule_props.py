"""Random programs of every shape the block primitives need, crossed with
random schedules of loop and block primitives together
(:func:`tirfun.testing.schedules.block_schedules`): the schedule keeps the
program's meaning under the interpreter, the scheduled program compiles to
exactly what the interpreter computes for it, the trace replays (from its
JSON and as the Python it prints), and the scheduled module prints as
TVMScript that parses back to it.

The meaning is compared bit for bit, except where a schedule legitimately
reassociates a floating-point reduction (``reorder`` of reduction loops,
``rfactor``, ``pad_einsum``, ``merge``): there, as in TVM, the sum is taken
in another order, and the scheduled program is compared with its own
interpretation only (still bit for bit, compiled against interpreted).
"""

from __future__ import annotations

import collections

from hypothesis import event, given, settings
from hypothesis import strategies as st

from tirfun import rewrites as R
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk
from tirfun.analysis.verify import verify
from tirfun.nodes import Buffer
from tirfun.rewrites.index import build_index, index_of
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.block_programs import SOURCES, block_programs, random_block_program
from tirfun.testing.equivalence import assert_built_as_interpreted, assert_equivalent, ulps_for
from tirfun.testing.schedules import (
    ALL_PRIMITIVES, BLOCK_PRIMITIVES, block_schedules, primitive_counts, random_block_schedule,
)

#: CPU schedules: thread bindings give a program the GPU's meaning, tested elsewhere
PRIMITIVES = tuple(p for p in ALL_PRIMITIVES if p != "bind")
REASSOCIATING = {"reorder", "rfactor", "pad_einsum", "merge"}


def _exact_before_and_after(mod, pipeline) -> bool:
    floats = any(isinstance(n, Buffer) and n.dtype.is_float for n in walk(mod["main"]))
    return not floats or not (REASSOCIATING & set(primitive_counts(pipeline)))


@settings(max_examples=max(settings().max_examples // 3, 10))
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_block_schedules_keep_meaning_compile_exactly_and_replay(data, seed):
    mod = data.draw(block_programs(), label="program")
    pipeline = data.draw(block_schedules(mod, max_steps=4, primitives=PRIMITIVES), label="schedule")
    after = pipeline(mod)
    # the index derived step by step is the index of the result
    assert index_of(after["main"]) == build_index(after["main"])
    for primitive in sorted(set(primitive_counts(pipeline)) & set(BLOCK_PRIMITIVES)):
        event(f"applies {primitive}")
    verify(after)
    if _exact_before_and_after(mod, pipeline):
        assert_equivalent(mod["main"], after["main"], trials=1, seed=seed, ulps=ulps_for(mod))
    assert_built_as_interpreted(after, seed=seed)
    replayed = R.Pipeline.from_json(pipeline.to_json())
    assert replayed == pipeline
    assert replayed(mod) == after
    # and replays as the Python the trace prints
    namespace = {}
    exec(pipeline.as_python(), namespace)
    sch = Schedule(mod)
    namespace["apply_trace"](sch)
    assert sch.mod == after
    # what the schedule made prints as TVMScript that parses back to it
    text = after.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, after)
    assert parsed.script() == text


def test_every_block_primitive_is_drawn():
    # the same drawers over seeded programs of every source: each block
    # primitive is applied, so the property above can reach it (the rarest,
    # reverse_compute_inline and rolling_buffer, need a few hundred
    # schedules; the loop ends once every primitive was seen)
    counts = collections.Counter()
    missing = list(BLOCK_PRIMITIVES)
    for seed in range(150 * len(SOURCES)):
        mod = random_block_program(seed, SOURCES[seed % len(SOURCES)])
        counts.update(primitive_counts(random_block_schedule(mod, seed, max_steps=4,
                                                             primitives=PRIMITIVES)))
        missing = [p for p in missing if counts[p] == 0]
        if not missing:
            break
    assert not missing, f"never applied: {missing} ({dict(counts)})"
