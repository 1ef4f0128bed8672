"""A loop or block inside a block's init is out of a schedule's reach, as
TVM's schedule leaves inits out of the tree it schedules. blockize of a
reduction moves its init into the new outer block as a block of its own;
primitives pointed at it are refused by name, where before they could
rebuild it into something that computed another result or did not build."""

import pytest

import tirfun
from tirfun import rewrites as R
from tirfun.script import from_source

ROWSUM = from_source('''
@T.prim_func
def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
''')


def _blockized():
    return R.blockize("i")(tirfun.IRModule({"main": ROWSUM}))


def test_blockize_puts_the_init_in_a_block_inside_the_outer_init():
    outer = _blockized()["main"].body.block.body.block
    assert outer.name_hint == "B_o" and outer.init is not None
    assert "B_init" in outer.init.script()


@pytest.mark.parametrize("record, error", [
    (R.reindex("B_init", ("write", 0)), R.UnknownBlockError),
    (R.transform_block_layout("B_init", lambda i: (i,)), R.UnknownBlockError),
    (R.pad_einsum("B_init", [1]), R.UnknownBlockError),
    (R.add_unit_loop("B_init"), R.UnknownBlockError),
    (R.split("i_1", [2, None]), R.UnknownLoopError),
], ids=["reindex", "transform_block_layout", "pad_einsum", "add_unit_loop", "split"])
def test_primitives_do_not_reach_into_an_init(record, error):
    mod = _blockized()
    errors = record.violations(mod)
    assert [type(e) for e in errors] == [error]
    assert "lies in the init of block 'B_o'" in errors[0].reason


def test_the_block_around_the_init_is_still_schedulable():
    mod = _blockized()
    out = R.annotate("B_o", "note", 1)(mod)
    assert out["main"].body.block.body.block.annotations["note"] == 1
