"""The random schedule strategy draws and applies every primitive at a known
minimum rate, and what it draws applies and keeps the program's meaning."""

from __future__ import annotations

import numpy as np
import pytest

import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.testing._choices import BytesChooser
from tirfun.testing.equivalence import assert_equivalent
from tirfun.testing.programs import random_prim_func
from tirfun.testing.schedules import (
    MINIMUM_PER_100, PRIMITIVES, build_schedule, primitive_counts, random_schedule,
    schedule_bytes,
)
from tirfun.script import from_source

DRAWS = 300


def _totals(make) -> dict[str, int]:
    totals = dict.fromkeys(PRIMITIVES, 0)
    for seed in range(DRAWS):
        mod = IRModule({"main": random_prim_func(seed)})
        pipeline = make(seed, mod)
        assert not pipeline.violations(mod)
        for primitive, count in primitive_counts(pipeline).items():
            totals[primitive] += count
    return totals


@pytest.mark.parametrize("source", ["bytes", "seed"])
def test_every_primitive_is_applied_at_its_minimum_rate(source):
    # "bytes" is the path hypothesis takes (a byte string per schedule),
    # "seed" the one of random_schedule
    rng = np.random.default_rng(20240)
    if source == "bytes":
        def make(seed, mod):
            return build_schedule(BytesChooser(rng.bytes(schedule_bytes(6))), mod, max_steps=6)
    else:
        def make(seed, mod):
            return random_schedule(mod, seed, max_steps=6)
    totals = _totals(make)
    short = {p: (totals[p], MINIMUM_PER_100[p] * DRAWS // 100) for p in PRIMITIVES
             if totals[p] < MINIMUM_PER_100[p] * DRAWS // 100}
    assert not short, f"applied fewer times than the minimum in {DRAWS} schedules: {short}; " \
                      f"all counts: {totals}"


def test_merge_of_unit_loops_keeps_dependent_nests_in_order():
    func = from_source('''@T.prim_func
def main(A: T.Buffer((6,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((6,), "float32")
    for i in range(6):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(4):
        with T.block("C"):
            vj = T.axis.spatial(4, j)
            C[vj] = B[vj + 2] + B[5 - vj]''')
    mod = IRModule({"main": func})
    seen_merge = False
    for seed in range(40):
        pipeline = random_schedule(mod, seed, primitives=("merge",), max_steps=1)
        if "merge" not in primitive_counts(pipeline):
            continue
        seen_merge = True
        out = pipeline(mod)
        assert_equivalent(mod, out)
    assert seen_merge


def test_primitive_counts_counts_each_record():
    pipeline = R.Pipeline([R.split("i", [None, 2]), R.unroll("i_1"), R.split("i_0", [None, 1])])
    assert primitive_counts(pipeline) == {"split": 2, "unroll": 1}


def test_unsafe_hide_buffer_access_only_ends_a_schedule():
    # after it, primitives trusting the declared regions could change the meaning
    from tirfun.testing.block_programs import random_block_program
    from tirfun.testing.schedules import ENDS_SCHEDULE, random_block_schedule

    ends = 0
    for seed in range(300):
        mod = random_block_program(seed, "padded")
        steps = [r.primitive for r in random_block_schedule(mod, seed, max_steps=6)]
        hidden = [k for k, p in enumerate(steps) if p in ENDS_SCHEDULE]
        assert hidden in ([], [len(steps) - 1]), steps
        ends += bool(hidden)
    assert ends > 0


@pytest.mark.parametrize("dtype, kept", [("float32", True), ("int32", False)])
def test_reorder_keeps_the_order_of_the_loops_of_a_float_sum(dtype, kept):
    # found by the soak: reordering k_1 before k_0 changes the order of a
    # float sum and its last bits, which a bit-for-bit comparison rejects;
    # an integer sum may be reordered freely
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer((4, 6), "{dtype}"), B: T.Buffer((4,), "{dtype}")):
    for i, k_0, k_1 in T.grid(4, 3, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(6, k_0 * 2 + k_1)
            with T.init():
                B[vi] = T.{dtype}(0)
            B[vi] = B[vi] + A[vi, vk]''')
    mod = IRModule({"main": func})
    orders = set()
    for seed in range(60):
        pipeline = random_schedule(mod, seed, primitives=("reorder",), max_steps=1)
        for step in pipeline.rewrites:
            names = [ref.name for ref in step.loops]
            if "k_0" in names and "k_1" in names:
                orders.add(names.index("k_0") < names.index("k_1"))
    assert orders == ({True} if kept else {True, False})
