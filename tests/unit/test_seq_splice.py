"""``SeqStmt.with_items`` gives exactly what the constructor gives for the
same items: flat, without no-ops beside other statements, equal and with
the same hash."""

import pytest

from tirfun.errors import NodeError
from tirfun.nodes import Evaluate, SeqStmt


def _made(seq: SeqStmt, start: int, stop: int, stmts) -> SeqStmt:
    return SeqStmt(list(seq.seq[:start]) + list(stmts) + list(seq.seq[stop:]))


@pytest.mark.parametrize("start, stop, stmts", [
    (1, 2, [Evaluate(7)]),                          # replace one
    (1, 2, [Evaluate(7), Evaluate(8)]),             # one becomes two (an insertion before it)
    (0, 0, [Evaluate(9)]),                          # insert at the front
    (3, 3, [Evaluate(9)]),                          # append
    (0, 3, [Evaluate(9)]),                          # replace all
    (1, 2, []),                                     # remove one
    (1, 2, [SeqStmt([Evaluate(5), Evaluate(6)])]),  # a sequence is spliced in
    (1, 2, [Evaluate(0)]),                          # a no-op beside others is dropped
])
def test_with_items_is_the_constructor(start, stop, stmts):
    seq = SeqStmt([Evaluate(1), Evaluate(2), Evaluate(3)])
    got = seq.with_items(start, stop, stmts)
    want = _made(seq, start, stop, stmts)
    assert got == want and list(got.seq) == list(want.seq)
    assert hash(got) == hash(want)


def test_with_items_of_a_lone_no_op_drops_it():
    seq = SeqStmt([Evaluate(0)])
    assert list(seq.with_items(1, 1, [Evaluate(4)]).seq) == [Evaluate(4)]


def test_with_items_rejects_what_the_constructor_rejects():
    seq = SeqStmt([Evaluate(1)])
    with pytest.raises(NodeError, match="at least one statement"):
        seq.with_items(0, 1, [])
    with pytest.raises(NodeError, match="non-statement"):
        SeqStmt([Evaluate(1), Evaluate(2)]).with_items(0, 1, [Evaluate(1).value])
