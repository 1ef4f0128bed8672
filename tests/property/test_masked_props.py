"""Predicated loads and stores (TVM v0.20's ``predicate=``): a lane whose
mask is false is neither read nor written, even where its element lies
outside the buffer. Drawn programs print and parse back, the interpreter
gives what numpy computes, and the compiled code gives the interpreter's
results bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tirfun
from tirfun.analysis.equality import structural_equal
from tirfun.analysis.verify import verify
from tirfun.script import from_source
from tirfun.testing.masked import masked_programs
from tirfun.testing.schedules import ALL_PRIMITIVES, block_schedules

#: CPU schedules: thread bindings give a program the GPU's meaning
PRIMITIVES = tuple(p for p in ALL_PRIMITIVES if p != "bind")


@settings(max_examples=max(1, settings().max_examples * 60 // 300))
@given(masked_programs(), st.integers(0, 2**32 - 1))
def test_masked_lanes_are_neither_read_nor_written(program, seed):
    mod = program.mod
    assert structural_equal(from_source(mod.script()), mod)
    a, m, b = program.inputs(np.random.default_rng(seed))
    expected = program.expected(a, m, b)
    interpreted, compiled = b.copy(), b.copy()
    tirfun.interp.run(mod, a, m, interpreted)
    tirfun.build(mod)(a, m, compiled)
    assert interpreted.tobytes() == expected.tobytes(), program.text
    assert compiled.tobytes() == interpreted.tobytes(), program.text


@settings(max_examples=max(1, settings().max_examples * 100 // 300))
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_schedules_keep_the_masks(data, seed):
    # loop and block primitives over a block whose store (and load) is
    # predicated: the result still leaves masked lanes alone, interpreted
    # and compiled; a primitive that cannot keep a mask refuses
    program = data.draw(masked_programs(in_block=True), label="program")
    pipeline = data.draw(block_schedules(program.mod, max_steps=3, primitives=PRIMITIVES), label="schedule")
    after = pipeline(program.mod)
    verify(after)
    a, m, b = program.inputs(np.random.default_rng(seed))
    expected = program.expected(a, m, b)
    interpreted, compiled = b.copy(), b.copy()
    tirfun.interp.run(after, a, m, interpreted)
    tirfun.build(after)(a, m, compiled)
    assert interpreted.tobytes() == expected.tobytes(), after.script()
    assert compiled.tobytes() == interpreted.tobytes(), after.script()
