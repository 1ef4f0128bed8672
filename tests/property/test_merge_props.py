"""``merge`` of nests that share buffers: it keeps the meaning or refuses.

TVM's merge checks no dependence: merged in another order than the
program's, or where iterations of one nest read what later iterations of
the other write, or past a statement between them, or out of an ``if``,
the nests compute something else. Random chains of stages (each reading
earlier ones at the same element, or at a reflected row or column), some
under a condition, some merged at their outer or inner loops in a random
order: what merge accepts keeps the meaning, and what it refuses computes
something else when merged anyway (the order checks patched out).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import event, given, strategies as st

import tirfun.rewrites as R
from tirfun.analysis.verify import verify
from tirfun.errors import ScheduleError
from tirfun.interp import run as interp_run
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import random_inputs

_READS = {"same": "{b}[vi, vj]", "columns reflected": "{b}[vi, 2 - vj]", "rows reflected": "{b}[3 - vi, vj]"}


@st.composite
def merge_cases(draw):
    """(source, loops to merge): stages X0..Xn-1 over a 4 x 3 grid, each an
    output (so that all they compute is seen), stage k reading A and
    perhaps one earlier stage (at the same element or a reflected one), one
    stage perhaps under ``if flag > 0``; and two or three of the stages'
    loops, all outer or all inner, in a random order."""
    n = draw(st.integers(2, 4), label="stages")
    guarded = draw(st.sampled_from([None] + list(range(n))), label="stage under the if")
    nests = []
    for k in range(n):
        value = "A[vi, vj]"
        if k and draw(st.booleans(), label=f"stage {k} reads an earlier one"):
            source = draw(st.integers(0, k - 1), label=f"stage {k} reads")
            how = draw(st.sampled_from(sorted(_READS)), label=f"stage {k} reads it at")
            value = f"{_READS[how].format(b=f'X{source}')} + A[vi, vj]"
        nest = f'''for i{k}, j{k} in T.grid(4, 3):
    with T.block("X{k}"):
        vi, vj = T.axis.remap("SS", [i{k}, j{k}])
        X{k}[vi, vj] = {value} * 3'''
        if k == guarded:
            nest = "if flag > 0:\n    " + nest.replace("\n", "\n    ")
        nests.append(nest)
    body = "\n".join(nests).replace("\n", "\n    ")
    params = ", ".join(f'X{k}: T.Buffer((4, 3), "int32")' for k in range(n))
    src = f'''
@T.prim_func
def main(A: T.Buffer((4, 3), "int32"), {params}, flag: T.int32):
    {body}
'''
    level = draw(st.sampled_from(["i", "j"]), label="merged level")
    chosen = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=min(3, n), unique=True), label="stages")
    return src, [f"{level}{k}" for k in chosen]


def _outputs(func, flag: int, seed: int):
    args = random_inputs(func, np.random.default_rng(seed))
    args[-1] = flag
    interp_run(func, *args)
    return args[1:-1]


def _same(before, after, seed) -> bool:
    return all(np.array_equal(x, y) for flag in (0, 1)
               for x, y in zip(_outputs(before, flag, seed), _outputs(after, flag, seed)))


@given(merge_cases(), st.integers(0, 2**16))
def test_merge_keeps_the_meaning_or_refuses_what_would_change_it(case, seed):
    src, loops = case
    mod = IRModule({"main": from_source(src)})
    rewrite = R.merge(*loops)
    try:
        out = rewrite(mod)
    except (R.DependenceViolationError, R.NonLoopAncestorError) as refusal:
        event(type(refusal).__name__)
        # the refusal is needed: merged anyway, some flag gives another output
        with mock.patch.object(R.Merge, "_check_order", lambda *a: None):
            forced = rewrite(mod)
        verify(forced)
        assert not _same(mod["main"], forced["main"], seed), f"refused but keeps the meaning: {loops}\n{src}"
        return
    except ScheduleError as other:  # extents or depths of the nests differ: not drawn here
        raise AssertionError(f"unexpected refusal: {other}") from other
    event("merged")
    verify(out)
    assert _same(mod["main"], out["main"], seed), f"{loops}\n{src}\n{out.script()}"
