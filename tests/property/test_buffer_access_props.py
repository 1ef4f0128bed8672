"""Properties of the region hints (annotate_buffer_access,
unsafe_hide_buffer_access) on random programs: they change what blocks
declare, never what the program computes (interpreter before == after, bit
for bit), the result verifies, prints and parses back, compiles to what the
interpreter computes, and the trace replays from JSON."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing._choices import DrawChooser, RandomChooser
from tirfun.testing.draw_padding import draw_annotate_buffer_access, draw_any_unsafe_hide_buffer_access
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs
from tirfun.testing.programs import prim_funcs, random_prim_func

# hints alone: hiding writes too, as no later primitive trusts the hint
DRAWERS = {"annotate_buffer_access": draw_annotate_buffer_access,
           "unsafe_hide_buffer_access": draw_any_unsafe_hide_buffer_access}


def _apply(ch, mod: IRModule, count: int) -> Schedule:
    sch = Schedule(mod)
    for _ in range(count):
        rewrite = DRAWERS[ch.choice(sorted(DRAWERS))](ch, sch.mod)
        if rewrite is not None:
            sch.apply(rewrite)
    return sch


# each example interprets and compiles a program: half of CI's 300 (the
# soak draws twenty times as many)
@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(prim_funcs(max_blocks=3, loop_kinds=["serial", "parallel", "vectorized", "unrolled"]), st.data())
def test_region_hints_keep_meaning_compile_and_replay(func, data):
    mod = IRModule({"main": func})
    ch = DrawChooser(data.draw)
    sch = _apply(ch, mod, ch.integer(1, 3))
    out = sch.mod
    verify(out)
    assert_structural_equal(from_source(out["main"].script()), out["main"])
    assert_equivalent(mod["main"], out["main"])
    assert R.Pipeline.from_json(sch.trace.to_json())(mod) == out
    if data.draw(st.integers(0, 3), label="build") == 0:
        args = random_inputs(out["main"], np.random.default_rng(0))
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interp_run(out["main"], *expected)
        tirfun.build(out, target="llvm")(*actual)
        for p, x, y in zip(out["main"].params, expected, actual):
            if isinstance(x, np.ndarray):
                problem = compare_arrays(p.name, x, y, out["main"].buffer_map[p].dtype)
                assert problem is None, problem


def test_each_region_hint_is_drawn():
    counts = collections.Counter()
    for seed in range(30):
        sch = _apply(RandomChooser(seed), IRModule({"main": random_prim_func(seed)}), 3)
        counts.update(r.primitive for r in sch.trace.rewrites)
    for name in DRAWERS:
        assert counts[name] >= 15, counts
