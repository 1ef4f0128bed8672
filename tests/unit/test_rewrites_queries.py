"""get_block, get_loops, get_child_blocks, get_producers, get_consumers,
get_output_blocks and get."""

import pytest

import tirfun.rewrites as R
from tirfun.nodes import Block, For, IRModule
from tirfun.script import from_source

CHAIN = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for j, k in T.grid(2, 4):
        with T.block("C"):
            vj = T.axis.spatial(8, j * 4 + k)
            C[vj] = B[vj] + T.float32(1)
    for l in range(8):
        with T.block("D"):
            vl = T.axis.spatial(8, l)
            D[vl] = B[vl] + C[vl]
"""


@pytest.fixture
def mod():
    return IRModule({"main": from_source(CHAIN)})


def test_get_block_and_get(mod):
    ref = R.get_block(mod, "C")
    assert ref == R.BlockRef("C", "main")
    assert isinstance(R.get(mod, ref), Block) and R.get(mod, ref).name_hint == "C"
    assert isinstance(R.get(mod, R.LoopRef("k")), For)


def test_get_loops_outermost_first(mod):
    assert R.get_loops(mod, "C") == [R.LoopRef("j", "main"), R.LoopRef("k", "main")]


def test_get_child_blocks_of_a_block_and_of_a_loop(mod):
    assert [b.name for b in R.get_child_blocks(mod, "root")] == ["B", "C", "D"]
    assert [b.name for b in R.get_child_blocks(mod, R.LoopRef("j"))] == ["C"]


def test_producers_and_consumers(mod):
    assert [b.name for b in R.get_producers(mod, "D")] == ["B", "C"]
    assert [b.name for b in R.get_producers(mod, "C")] == ["B"]
    assert [b.name for b in R.get_consumers(mod, "B")] == ["C", "D"]
    assert R.get_consumers(mod, "D") == []


def test_output_blocks_write_what_the_scope_does_not_allocate(mod):
    assert [b.name for b in R.get_output_blocks(mod, "root")] == ["C", "D"]


def test_queries_raise_schedule_errors_naming_the_query(mod):
    with pytest.raises(R.UnknownBlockError, match=r"^get_block: block 'X': function 'main' has no block"):
        R.get_block(mod, "X")
    with pytest.raises(R.RefKindError, match=r"^get_loops: loop 'i': expected a block"):
        R.get_loops(mod, R.LoopRef("i"))
    with pytest.raises(R.UnknownLoopError, match=r"^get: loop 'x'"):
        R.get(mod, R.LoopRef("x"))
    with pytest.raises(R.UnknownFunctionError, match=r"^get_block: function 'f'"):
        R.get_block(mod, "B", "f")
