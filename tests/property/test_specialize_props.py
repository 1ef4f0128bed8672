"""PrimFunc.specialize keeps a function's meaning at the sizes it binds.

Random functions with symbolic sizes (scalar parameters in their buffers'
shapes) are specialized to random sizes, either through the scalars or
through buffers of those shapes given for the buffer parameters. The
specialized function, run by the interpreter on the same arrays, leaves
every buffer as the general function does with those sizes (bit for bit),
verifies, and prints to TVMScript that parses back to it.
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st

from tirfun.analysis.equality import assert_structural_equal
from tirfun.analysis.traversal import walk
from tirfun.analysis.verify import verify
from tirfun.interp import run
from tirfun.nodes import IntImm, Var
from tirfun.script import from_source
from tirfun.testing.equivalence import choose_sizes, compare_arrays, random_inputs
from tirfun.testing.programs import prim_funcs


def _through_scalars(func, sizes):
    return {p: sizes[p.name] for p in func.params if p not in func.buffer_map and p.name in sizes}


def _through_buffers(func, sizes):
    out = {}
    for p, buf in func.buffer_map.items():
        shape = [IntImm(d.dtype, sizes[d.name]) if type(d) is Var else d for d in buf.shape]
        if shape != list(buf.shape):
            # another name: the given buffer's name does not count
            out[p] = attrs.evolve(buf, name=buf.name + "_given", shape=shape)
    return out


@given(prim_funcs(symbolic_chance=100, buffer_fields=True), st.integers(0, 2**32 - 1),
       st.sampled_from(["scalars", "buffers"]))
def test_a_specialized_function_computes_what_the_general_one_does_at_those_sizes(func, seed, how):
    rng = np.random.default_rng(seed)
    sizes = choose_sizes(func, rng)
    args = random_inputs(func, rng, sizes=sizes)
    param_map = (_through_scalars if how == "scalars" else _through_buffers)(func, sizes)
    special = func.specialize(param_map)
    if not param_map:
        event("nothing to bind")
        assert special is func
        return
    event(f"specialized through {how}")
    if how == "scalars":
        bound = {p.name for p in param_map}
    else:
        bound = {d.name for p in param_map for d in func.buffer_map[p].shape if type(d) is Var}
    # a bound scalar leaves the signature, and no buffer's shape names it
    assert not bound & {p.name for p in special.params if p not in special.buffer_map}
    for buf in special.buffer_map.values():
        named = {v.name for d in buf.shape for v in walk(d) if isinstance(v, Var)}
        assert not named & bound, f"{buf.name}'s shape still names {named & bound}"
    assert verify(special) is special
    kept = [a for p, a in zip(func.params, args) if p in special.params]
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in kept]
    run(func, *expected)
    run(special, *got)
    outputs = {p: a for p, a in zip(func.params, expected) if p in func.buffer_map}
    for p, a in zip(special.params, got):
        if p in special.buffer_map:
            problem = compare_arrays(p.name, outputs[p], a, func.buffer_map[p].dtype)
            assert problem is None, problem
    assert_structural_equal(from_source(special.script()), special)
