"""Properties of decompose_reduction and rfactor (drawn with loop_partition
and pad_einsum) on random programs.

Programs are the reduction shapes of :mod:`tirfun.testing.draw_reduction`
(sum, product, min and max in int8, int32, float32 and float64, argmax and
argmin, reductions repeated under a consumer's loop as ``compute_at`` leaves
them; splits whose factors do not divide) and the general random programs
of :mod:`tirfun.testing.programs`, after random loop primitives.

What the rewritten program computes is compared with the interpreter:

* exactly (bit for bit) against the program before, except where rfactor
  split a float sum or product: rfactor changes the order of the
  summation, so such a result is compared with the interpreter of the
  rewritten program only (and, as a sanity check, with the original within
  a tolerance: an uninitialised slot would read the interpreter's NaN);
  integer sums and products wrap around and are exact in any order, and
  min, max and argmax do not depend on the order, so those compare exactly;
* compiled (``tirfun.build(..., target="llvm")``) against the interpreter
  of the rewritten program, bit for bit.
"""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk_stmts
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run as interp_run
from tirfun.nodes import Add, Block, BufferStore, LetStmt, Mul
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing._choices import DrawChooser, RandomChooser
from tirfun.testing.corner_programs import SHAPES, corner_program
from tirfun.testing.draw_padding import draw_loop_partition, draw_pad_einsum
from tirfun.testing.draw_reduction import (
    DRAWERS, draw_any, random_reduction_module, reduction_programs,
)
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import PRIMITIVES, loop_schedules

# a reduction repeated under a consumer's loop writes the same elements in
# every repetition: with that loop bound to threads or made parallel (TVM
# allows both: the loop feeds only data-parallel variables) the repetitions
# race, before any reduction primitive, so those steps are left out here
SERIAL_LOOP_PRIMITIVES = tuple(p for p in PRIMITIVES if p not in ("bind", "parallel"))


def _order_sensitive(mod: IRModule) -> bool:
    """Whether a reduction block of the module sums or multiplies floats:
    its result depends on the order rfactor changes."""
    for _, node in walk_stmts(mod["main"]):
        if not isinstance(node, Block) or node.init is None:
            continue
        body = node.body
        while isinstance(body, LetStmt):
            if isinstance(body.value, (Add, Mul)) and body.value.dtype.is_float:
                return True
            body = body.body
        stores = [s for _, s in walk_stmts(body) if isinstance(s, BufferStore)]
        if any(s.buffer.dtype.is_float and isinstance(s.value, (Add, Mul)) for s in stores):
            return True
    return False


def _check_meaning(before: IRModule, after: IRModule, steps) -> None:
    reassociated = any(isinstance(s, R.RFactor) for s in steps) and _order_sensitive(before)
    if not reassociated:
        assert_equivalent(before["main"], after["main"])
        return
    rng = np.random.default_rng(0)
    args = random_inputs(before["main"], rng)
    first = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    second = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(before["main"], *first)
    interp_run(after["main"], *second)
    for x, y in zip(first, second):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            np.testing.assert_allclose(y, x, rtol=1e-3, atol=1e-3)


def _check_compiled(mod: IRModule, seed: int) -> None:
    func = mod["main"]
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(func, *expected)
    tirfun.build(mod, target="llvm")(*actual)
    for p, x, y in zip(func.params, expected, actual):
        if isinstance(x, np.ndarray):
            problem = compare_arrays(p.name, x, y, func.buffer_map[p].dtype)
            assert problem is None, problem


# loop_partition splits a reduction across parts, which the reduction
# primitives must then refuse or handle; pad_einsum pads a reduction's domain
MIXED = dict(DRAWERS, loop_partition=draw_loop_partition, pad_einsum=draw_pad_einsum)


def _apply_drawn(ch, mod: IRModule, count: int) -> tuple[IRModule, list]:
    steps = []
    for _ in range(count):
        name = ch.choice(sorted(MIXED))
        rewrite = MIXED[name](ch, mod)
        if rewrite is None:
            continue
        steps.append(rewrite)
        mod = rewrite(mod)
    return mod, steps


@given(reduction_programs(), st.data())
def test_reduction_primitives_keep_meaning_and_compile(mod, data):
    start = data.draw(loop_schedules(mod, max_steps=2, primitives=SERIAL_LOOP_PRIMITIVES), label="loop steps")(mod)
    ch = DrawChooser(data.draw)
    out, steps = _apply_drawn(ch, start, ch.integer(1, 3))
    verify(out)
    again = from_source(out["main"].script())
    assert_structural_equal(again, out["main"])
    # against the program after the loop steps: a reorder of reduction loops
    # changes the order of a float sum by itself
    _check_meaning(start, out, steps)
    # a build costs more than all the rest: one example in four builds
    if data.draw(st.integers(0, 3), label="build") == 0:
        _check_compiled(out, data.draw(st.integers(0, 2**16), label="seed"))


@given(st.sampled_from(sorted(SHAPES)), st.data())
def test_reduction_primitives_on_corner_programs(shape, data):
    # among them a reduction that may run no iteration (its init then never
    # runs) and a sum started from a value staged under its row loop: an
    # init moved before a loop must not run where the original's did not,
    # nor read what the loop writes first (TVM moves it regardless)
    ch = DrawChooser(data.draw)
    mod = corner_program(ch, shape)
    out, steps = _apply_drawn(ch, mod, ch.integer(1, 2))
    verify(out)
    _check_meaning(mod, out, steps)


@given(prim_funcs(max_blocks=3, loop_kinds=["serial", "parallel", "vectorized", "unrolled"]), st.data())
def test_reduction_primitives_on_random_programs(func, data):
    mod = IRModule({"main": func})
    ch = DrawChooser(data.draw)
    out, steps = _apply_drawn(ch, mod, ch.integer(1, 3))
    verify(out)
    _check_meaning(mod, out, steps)


@given(st.one_of(reduction_programs(), prim_funcs(max_blocks=3).map(lambda f: IRModule({"main": f}))),
       st.data())
def test_any_application_applies_or_raises_a_schedule_error(mod, data):
    ch = DrawChooser(data.draw)
    rewrite = draw_any(ch, mod, ch.choice(sorted(DRAWERS)))
    if rewrite is None:
        return
    try:
        out = rewrite(mod)
    except ScheduleError as err:
        assert isinstance(err, R.RewriteError)
        assert str(err).startswith(f"{rewrite.primitive}: ")
        assert rewrite.violations(mod)
        return
    assert not rewrite.violations(mod)
    verify(out)
    _check_meaning(mod, out, [rewrite])


@given(reduction_programs(max_steps=2), st.data())
def test_trace_replays_from_json_and_python(mod, data):
    ch = DrawChooser(data.draw)
    sch = Schedule(mod)
    for _ in range(ch.integer(1, 3)):
        name = ch.choice(sorted(MIXED))
        rewrite = MIXED[name](ch, sch.mod)
        if rewrite is not None:
            sch.apply(rewrite)
    trace = sch.trace
    from_json = R.Pipeline.from_json(trace.to_json())
    assert from_json == trace and from_json(mod) == sch.mod
    namespace: dict = {}
    exec(trace.as_python(), namespace)
    replay = Schedule(mod)
    namespace["apply_trace"](replay)
    assert replay.mod == sch.mod


def test_each_primitive_is_drawn():
    counts = collections.Counter()
    for seed in range(60):
        mod = random_reduction_module(seed)
        _, steps = _apply_drawn(RandomChooser(seed), mod, 3)
        counts.update(s.primitive for s in steps)
    for name in MIXED:
        assert counts[name] >= 15, counts


@settings(max_examples=max(10, settings().max_examples // 2))
@given(st.data(), st.integers(0, 3))
def test_a_reduction_over_a_run_time_count_keeps_its_meaning_when_the_count_is_zero(data, count):
    # the loop steps may split the symbolic loop (a condition then guards
    # the tail); decompose_reduction before it must run the init only where
    # the loop runs: with no column, S keeps what it held (TVM zeroes it)
    ch = DrawChooser(data.draw)
    mod = corner_program(ch, "symbolic_sum")
    mod = data.draw(loop_schedules(mod, max_steps=2, primitives=SERIAL_LOOP_PRIMITIVES), label="loop steps")(mod)
    rewrite = DRAWERS["decompose_reduction"](ch, mod)
    assume(rewrite is not None)
    violations = rewrite.violations(mod)
    # a count that may be zero is no reason to refuse: the init takes a condition
    assert not any(isinstance(v, R.ReductionStartError) for v in violations), violations
    assume(not violations)
    out = rewrite(mod)
    verify(out)
    func = out["main"]
    args = random_inputs(mod["main"], np.random.default_rng(count), sizes={"k": count})
    expected, got, built = ([a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(3))
    interp_run(mod["main"], *expected)
    interp_run(func, *got)
    tirfun.build(out, target="llvm")(*built)
    for p, x, y, z in zip(func.params, expected, got, built):
        if isinstance(x, np.ndarray):
            assert compare_arrays(p.name, x, y, func.buffer_map[p].dtype) is None
            assert compare_arrays(p.name, x, z, func.buffer_map[p].dtype) is None
