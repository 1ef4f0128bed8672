"""Random ``T.comm_reducer`` values, single and tuple-valued: inside
``T.attr(..., "reduce_scope", ...)`` they print, parse back to the same
function and print the identical text; structural equality and hashing
treat the combiner's variables as bound (a renaming keeps them equal)."""

from __future__ import annotations

import attrs
from hypothesis import given

from tirfun.analysis.equality import structural_equal, structural_hash
from tirfun.analysis.verify import verify
from tirfun.nodes import AttrStmt, BufferStore, Call, FloatImm, PrimFunc, Var
from tirfun.script import from_source
from tirfun.script import tir as T
from tirfun.testing.reducers import comm_reducers


def _scope(reducer) -> PrimFunc:
    A = T.Buffer((4,), "float32")
    body = AttrStmt(reducer, "reduce_scope", Call("handle", "tir.reinterpret", [T.uint64(0)]),
                    BufferStore(A, FloatImm("float32", 1.0), [T.int32(0)]))
    param = Var("A_handle", "handle")
    return PrimFunc([param], body, buffer_map={param: A})


@given(comm_reducers())
def test_a_reducer_round_trips_in_its_scope(reducer):
    func = _scope(reducer)
    text = func.script()
    parsed = from_source(text)
    assert parsed.body.node == reducer, text
    assert structural_equal(parsed, func)
    assert parsed.script() == text
    verify(parsed)


@given(comm_reducers())
def test_renaming_the_combiners_variables_keeps_the_reducer_equal(reducer):
    mapping = {v: Var(f"r_{v.name}", v.dtype) for v in (*reducer.lhs, *reducer.rhs)}
    renamed = attrs.evolve(
        reducer, lhs=[mapping[v] for v in reducer.lhs], rhs=[mapping[v] for v in reducer.rhs],
        result=reducer([mapping[v] for v in reducer.lhs], [mapping[v] for v in reducer.rhs]))
    assert renamed != reducer
    assert structural_equal(renamed, reducer)
    assert structural_hash(renamed) == structural_hash(reducer)
