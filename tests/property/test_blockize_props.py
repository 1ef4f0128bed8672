"""blockize where TVM's iterator maps read more than a mixed radix of loops
from 0 (``tirfun.testing.draw_blockize``): a predicate bounding a fused
part, conditions on both sides of the cut, domains that do not start at 0,
constant offsets, a reduction padded past a run-time length, the top digit
of a fuse with a loop of run-time extent. TVM divides each of these; tirfun
must too, keep the meaning, and build to the interpreter's results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun.analysis.traversal import stmt_nodes
from tirfun.analysis.verify import verify
from tirfun.interp import run as interp_run
from tirfun.nodes import Block, BlockRealize
from tirfun.testing._choices import BytesChooser, RandomChooser
from tirfun.testing.draw_blockize import BLOCKIZE_DTYPES, BLOCKIZE_KINDS, draw_blockize_case
from tirfun.testing.equivalence import assert_equivalent, compare_arrays, random_inputs

_SHARE = settings().max_examples


def _refused_as_tvm(case) -> bool:
    """The one case drawn that TVM refuses too: the cut between the digits
    of a fused loop whose predicate bounds both (``i_0 * 3 + f // n < 5``
    with ``f`` inside the new block and ``i_0`` outside)."""
    return case.kind == "digits" and case.loop == "i_1_j_fused"


def _apply(case):
    mod = case.scheduled()
    if _refused_as_tvm(case):
        try:
            return mod, case.blockize()(mod)
        except R.SubspaceNotDivisibleError as err:
            assert "reads loops on both sides" in str(err)
            return mod, None
    return mod, case.blockize()(mod)


@settings(max_examples=max(20, _SHARE // 2))
@given(st.binary(min_size=16, max_size=16), st.integers(0, 2**16))
def test_blockize_divides_what_tvm_divides_and_keeps_the_meaning(choices, seed):
    case = draw_blockize_case(BytesChooser(choices))
    event(f"kind {case.kind}")
    event(f"dtype {case.dtype}")
    mod, out = _apply(case)
    if out is None:
        event("refused as TVM refuses")
        return
    verify(out)
    sizes = case.size_map() or None
    assert_equivalent(mod["main"], out["main"], sizes=sizes)
    func = out["main"]
    args = random_inputs(func, np.random.default_rng(seed), sizes=sizes)
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(mod["main"], *expected)
    tirfun.build(out, target="llvm")(*args)
    for p, x, y in zip(func.params, expected, args):
        buf = func.buffer_map[p]
        problem = compare_arrays(buf.name, x, y, buf.dtype, 0)
        assert problem is None, (case, problem)


def _features(out) -> set:
    """What the blockized program shows of the reading its kind is for."""
    found = set()
    blocks = {s.block.name_hint: s for s in stmt_nodes(out["main"]) if isinstance(s, BlockRealize)}
    inner, outer = blocks.get("B"), blocks.get("B_o")
    if inner is not None and outer is not None:
        if any(int(iv.dom.min.value) != 0 for b in (inner.block, outer.block) for iv in b.iter_vars
               if hasattr(iv.dom.min, "value")):
            found.add("a domain from its start")
        if not _true(inner.predicate) and not _true(outer.predicate):
            found.add("a condition on each side")
        if not _true(inner.predicate) and "T.Mul" in inner.predicate.script():
            found.add("a bounded part inside")
        init = blocks.get("B_init")
        if init is not None and "K" in init.predicate.script():
            found.add("an init guarded by the first step")
        if any("//" in v.script() and "n" in v.script() for v in inner.iter_values):
            found.add("a digit of a run-time fuse")
    return found


def _true(e) -> bool:
    return getattr(e, "value", None) == 1 and e.dtype == "bool"


def test_each_kind_is_drawn_applies_and_shows_its_reading():
    applied: dict = {}
    dtypes: set = set()
    features: set = set()
    for seed in range(300):
        case = draw_blockize_case(RandomChooser(seed))
        _, out = _apply(case)
        if out is None:
            continue
        applied[case.kind] = applied.get(case.kind, 0) + 1
        dtypes.add(case.dtype)
        features |= _features(out)
    assert set(applied) == set(BLOCKIZE_KINDS) and min(applied.values()) >= 10, applied
    assert dtypes == set(BLOCKIZE_DTYPES)
    assert features == {"a domain from its start", "a condition on each side", "a bounded part inside",
                        "an init guarded by the first step", "a digit of a run-time fuse"}, features


@pytest.mark.parametrize("k_size", [0, 1, 5])
def test_a_padded_sum_blockized_inits_only_where_it_has_a_first_step(k_size):
    # at K = 0 the original init never runs: the output keeps its values
    case = next(c for c in (draw_blockize_case(RandomChooser(s)) for s in range(200))
                if c.kind == "padded" and c.loop == "i" and c.dtype == "float32")
    mod, out = _apply(case)
    func = out["main"]
    args = random_inputs(func, np.random.default_rng(k_size), sizes={"K": k_size})
    before = [a.copy() for a in args]
    interp_run(func, *args)
    interp_run(mod["main"], *before)
    for x, y in zip(before, args):
        assert x.tobytes() == y.tobytes()
    assert any(isinstance(s, Block) and s.name_hint == "B_init" for s in stmt_nodes(func))
