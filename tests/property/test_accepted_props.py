"""TensorIR that TVM accepts and a stricter reading refused: nested blocks
using the iteration variables of an enclosing block, repeated and anonymous
block names, regions that do not cover the body, nested sequences and
overlapping affine windows. Each verifies, prints and parses back to the
same function, interprets, compiles to what the interpreter computes,
reorders as TVM allows, and keeps its meaning under random schedules."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun import IRModule
from tirfun.analysis.block_names import uniquify_block_names
from tirfun.analysis.equality import assert_structural_equal, structural_equal
from tirfun.analysis.traversal import blocks, walk_stmts
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import SeqStmt
from tirfun.schedule import Schedule
from tirfun.script import from_source
from tirfun.testing.accepted import accepted_sources
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules


# each example builds native code (~0.1 s): at most 150 keep the test near 15 s
@settings(max_examples=max(1, settings().max_examples * 150 // 300))
@given(accepted_sources(max_pieces=2), st.integers(0, 2**16))
def test_accepted_shapes_verify_round_trip_interpret_and_compile(source, seed):
    func = from_source(source.text)
    assert verify(func) is func
    names = [b.name_hint for _, b in blocks(func.body)]
    assert len(names) == len(set(names))  # repeats were renamed, deterministically
    assert from_source(source.text) == func
    assert uniquify_block_names(func) is func
    text = func.script()
    again = from_source(text)
    assert again == func  # names included
    assert_structural_equal(again, func, names=True)
    assert again.script() == text
    rt = tirfun.build(IRModule({"main": func}))
    args = random_inputs(func, np.random.default_rng(seed))
    expected = [a.copy() for a in args]
    actual = [a.copy() for a in args]
    interp_run(func, *expected)
    rt(*actual)
    for p, x, y in zip(func.params, expected, actual):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype)
        assert problem is None, problem


@given(accepted_sources(), st.data())
def test_overlapping_windows_and_unit_loops_reorder(source, data):
    func = from_source(source.text)
    mod = IRModule({"main": func})
    sch = Schedule(mod)
    for a, b, u in source.windows:
        order = data.draw(st.permutations([a, b, u]), label=f"order of {a}, {b}, {u}")
        sch.reorder(*order)
    verify(sch.mod)
    assert_equivalent(mod["main"], sch.mod["main"])


@given(prim_funcs(), st.data())
def test_nested_sequences_are_flattened_when_made(func, data):
    seqs = [(p, s) for p, s in walk_stmts(func.body) if type(s) is SeqStmt]
    for _path, seq in seqs:
        cut = data.draw(st.integers(1, len(seq.seq)), label="cut")
        items = list(seq.seq)
        nested = SeqStmt([SeqStmt(items[:cut])] + ([SeqStmt(items[cut:])] if cut < len(items) else []))
        assert nested == seq
        assert all(type(s) is not SeqStmt for s in nested.seq)
    assert structural_equal(from_source(func.script()), func)


@given(accepted_sources(), st.data())
def test_random_schedules_keep_meaning_on_accepted_shapes(source, data):
    mod = IRModule({"main": from_source(source.text)})
    out = data.draw(loop_schedules(mod, max_steps=4), label="schedule")(mod)
    verify(out)
    assert from_source(out["main"].script()) == out["main"]
    assert_equivalent(mod["main"], out["main"])
