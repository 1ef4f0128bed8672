"""transform_layout with padding, where a writer's iteration variables are
not in the order of the buffer's dimensions."""

import pytest

import tirfun.rewrites as R
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

from corner_sources import STAGED_UNDER_IF



@pytest.mark.parametrize("writer", ["B", "B2"])
def test_a_writer_whose_variables_were_reordered_is_rewritten_over_the_padded_layout(writer):
    # the writer's variables (vj, vi) index the buffer as (vi, vj): it was
    # left bound to the padded loops, its vj running past its domain
    mod = IRModule({"main": from_source(STAGED_UNDER_IF)})
    schedule = (R.reorder_block_iter_var(writer, [1, 0])
                >> R.transform_layout("C", ("read", 0), lambda i0, i1: (i0, i1 // 2, i1 % 2), pad_value=0))
    out = schedule(mod)
    assert_equivalent(mod["main"], out["main"])
    realize = next(n for n in out["main"].body.block.body.seq if "B" in n.script())
    assert "v_axis0" in out["main"].script() and "T.if_then_else" in realize.script()
