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


def _two_steps(seq: SeqStmt, index: int, stmt, removed) -> SeqStmt:
    return seq.with_item(index, stmt).without_items(removed)


@pytest.mark.parametrize("n", [3, 5, 40, 70])
def test_with_item_without_is_the_two_steps(n):
    """Every choice of a replaced item and removed items in sequences of a
    few lengths (up to past a persistent vector's first node), with
    statements that take the one rebuild and those that fall back: the
    same items, equal, the same hash, and the edit it remembers is the one
    the two steps' remembered edits compose to (a span may only be wider
    where the two steps remember none)."""
    from tirfun.nodes.stmt import sequence_edit

    seq = SeqStmt([Evaluate(k + 1) for k in range(n)])
    picks = sorted({0, 1, n // 2, n - 2, n - 1})
    for index in picks:
        for removed in ([k] for k in picks):
            for extra in ([], [k for k in picks if k not in removed and k != index][:1]):
                gone = removed + extra
                for stmt in (Evaluate(100), Evaluate(0), SeqStmt([Evaluate(5), Evaluate(6)])):
                    try:
                        want = _two_steps(seq, index, stmt, gone)
                    except (NodeError, IndexError) as err:
                        with pytest.raises(type(err)):
                            seq.with_item_without(index, stmt, gone)
                        continue
                    got = seq.with_item_without(index, stmt, gone)
                    assert got == want and list(got.seq) == list(want.seq) and hash(got) == hash(want)
                    edit = sequence_edit(want, seq)
                    if edit is not None:
                        assert sequence_edit(got, seq) == edit
                    mine = sequence_edit(got, seq)
                    if mine is not None:
                        start, dropped, added = mine
                        assert list(got.seq[:start]) == list(seq.seq[:start])
                        tail = n - start - dropped
                        assert list(got.seq[len(got.seq) - tail:]) == list(seq.seq[n - tail:])
                        assert len(got.seq) == start + added + tail
