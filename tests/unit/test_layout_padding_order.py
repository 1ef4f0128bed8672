"""transform_layout with padding, where a writer's iteration variables are
not in the order of the buffer's dimensions."""

import pytest

import tirfun.rewrites as R
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

SOURCE = """
@T.prim_func
def main(A: T.Buffer((4, 3), "int8"), C: T.Buffer((4, 3), "int8"), flag: T.int32):
    B = T.alloc_buffer((4, 3), "int8")
    for i, j in T.grid(4, 3):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    if flag > 0:
        for i_1, j_1 in T.grid(4, 3):
            with T.block("B2"):
                vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                B[vi_1, vj_1] = B[vi_1, vj_1] + A[vi_1, vj_1]
    for i_2, j_2 in T.grid(4, 3):
        with T.block("C"):
            vi_2, vj_2 = T.axis.remap("SS", [i_2, j_2])
            C[vi_2, vj_2] = B[vi_2, vj_2] + B[vi_2, vj_2]
"""


@pytest.mark.parametrize("writer", ["B", "B2"])
def test_a_writer_whose_variables_were_reordered_is_rewritten_over_the_padded_layout(writer):
    # the writer's variables (vj, vi) index the buffer as (vi, vj): it was
    # left bound to the padded loops, its vj running past its domain
    mod = IRModule({"main": from_source(SOURCE)})
    schedule = (R.reorder_block_iter_var(writer, [1, 0])
                >> R.transform_layout("C", ("read", 0), lambda i0, i1: (i0, i1 // 2, i1 % 2), pad_value=0))
    out = schedule(mod)
    assert_equivalent(mod["main"], out["main"])
    realize = next(n for n in out["main"].body.block.body.seq if "B" in n.script())
    assert "v_axis0" in out["main"].script() and "T.if_then_else" in realize.script()
