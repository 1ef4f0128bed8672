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
from tirfun.script import from_source
from tirfun.testing.masked import masked_programs


@settings(max_examples=min(settings.default.max_examples, 60))
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
