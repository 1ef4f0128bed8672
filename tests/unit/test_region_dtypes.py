"""Regions of one buffer indexed in int32 by one block and int64 by another."""

import pytest

import tirfun.rewrites as R
from tirfun.analysis.arith.region import index_at_most
from tirfun.nodes import IRModule, IntImm, Var
from tirfun.script import from_source
from tirfun.testing.equivalence import assert_equivalent

MIXED = """
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    for g in range(8):
        with T.block("B6"):
            vg = T.axis.spatial(8, g)
            B[vg] = B[vg] + T.float32(3.0)
    for k in range(T.int64(8)):
        with T.block("B3"):
            vk = T.axis.spatial(T.int64(8), k)
            B[vk] = B[vk] * T.float32(2.0)
"""


@pytest.mark.parametrize("block", ["B6", "B3"])
def test_cache_inplace_compares_regions_of_both_index_types(block):
    # the cover check compared an int32 end with an int64 one and built an
    # ill-typed comparison (a NodeError from inside the primitive)
    mod = IRModule({"main": from_source(MIXED)})
    out = R.cache_inplace(block, 0, "local")(mod)
    assert_equivalent(mod["main"], out["main"])


@pytest.mark.parametrize("block", ["B6", "B3"])
def test_cache_read_refuses_with_its_own_error(block):
    mod = IRModule({"main": from_source(MIXED)})
    with pytest.raises(R.NotSingleWriteBlockError):
        R.cache_read(block, 0, "local")(mod)


def test_index_at_most_widens_the_narrower_side():
    i = Var("i", "int32")
    assert index_at_most(IntImm("int32", 3), IntImm("int64", 7))
    assert not index_at_most(IntImm("int64", 9), IntImm("int32", 7))
    assert index_at_most(i, i + 1) and index_at_most(IntImm("int64", 0), IntImm("int32", 0))


def test_a_buffer_indexed_in_both_widths_compiles_to_what_the_interpreter_computes():
    # compaction unions the regions the blocks touch: an int32 end with an
    # int64 one built an ill-typed min
    import numpy as np

    import tirfun
    from tirfun.interp import run

    src = MIXED.replace('def main(B: T.Buffer((8,), "float32")):', 'def main(A: T.Buffer((8,), "float32"), '
                        'C: T.Buffer((8,), "float32")):\n    B = T.alloc_buffer((8,))').replace(
        "B[vg] = B[vg] + T.float32(3.0)", "B[vg] = A[vg] + T.float32(3.0)") + """
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = B[vj]
"""
    # unrolled, the int32 stage touches constant points, which the union
    # meets with the int64 stage's range
    mod = R.unroll("g")(IRModule({"main": from_source(src)}))
    a = np.arange(8, dtype="float32")
    expected, got = np.zeros(8, "float32"), np.zeros(8, "float32")
    run(mod["main"], a, expected)
    tirfun.build(mod, target="llvm")(a, got)
    assert np.array_equal(expected, got) and np.array_equal(expected, (a + 3) * 2)
