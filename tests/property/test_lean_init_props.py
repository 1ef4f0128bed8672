"""Node constructors against attrs' own.

Every node class gets a constructor written leaner than attrs' (see
``tirfun.nodes.base.lean_init``; IntImm's is written by hand): it skips a
converter for a value the converter keeps as it is, a validator for a type
it accepts, and converts a default once. Here random field values, valid
and not (wrong types and dtypes, ints, floats and lists where nodes or
vectors belong), go through both constructors, and through ``with_fields``
against attrs' constructor given every field: both give equal nodes (equal
fields of the same types, the same hash and dtype), or both raise the same
error with the same message.
"""

from __future__ import annotations

import inspect

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyrsistent import pmap, pvector

from tirfun.nodes import (
    Add, Allocate, And, AssertStmt, AttrStmt, Block, BlockRealize, Broadcast, Buffer, BufferLoad,
    BufferRegion, BufferStore, Call, Cast, DeclBuffer, EQ, Evaluate, FloatImm, FloorDiv, FloorMod,
    For, ForKind, IfThenElse, IntImm, IterVar, IterVarType, LetStmt, LT, MatchBufferRegion, Max, Min,
    Mul, Not, Ramp, Range, Select, SeqStmt, StringImm, Sub, Var,
)
from tirfun.nodes.base import attrs_init, with_fields
from tirfun.nodes.dtype import DataType
from tirfun.nodes.expr import PrimExpr

i, j = Var("i"), Var("j", "int64")
f, b, h = Var("f", "float32"), Var("b", "bool"), Var("h", "handle")
c0, c4, c4l, true = IntImm("int32", 0), IntImm("int32", 4), IntImm("int64", 4), IntImm("bool", 1)
x = FloatImm("float32", 1.5)
A, V = Buffer("A", [16, 16], "float32"), Buffer("V", [8], "int32")
ld = BufferLoad(A, [i, i])
r, rl = Range(c0, c4), Range(c4l, c4l)
reg, reg1 = BufferRegion(A, [r, r]), BufferRegion(V, [r])
store = BufferStore(A, x, [i, i])
iv = IterVar(r, Var("v"), "DataPar")
blk = Block([iv], [reg], [reg], "B", store)
realize = BlockRealize([i], true, blk)
loop = For(i, c0, c4, ForKind.SERIAL, store)
seq = SeqStmt([store, store])

# values of every kind, for any field
POOL = [
    i, j, f, b, h, c0, c4, c4l, true, x, ld, A, V, r, rl, reg, reg1, store, iv, blk, realize, loop,
    seq, Evaluate(c0), StringImm("s"), None, 0, 4, -1, 2**40, 2**70, 1.5, float("nan"), True, False,
    "x", "1x", "float32", "int64", "bool", "float32x4", "serial", "thread_binding", "threadIdx.x",
    "DataPar", "reduce", "", [], (), [i, i], [i, j], [c0, 4], [0, 1.5], [r, r], [r], [reg], [iv],
    [store, store], [seq, Evaluate(c0)], [A], {}, {"k": 1}, {1: 2}, pvector([i, i]), pvector([r, r]),
    pvector(), pmap(), DataType("int32"), DataType("bool"), ForKind.SERIAL, ForKind.THREAD_BINDING,
    IterVarType.CommReduce, object(),
]

# a valid node of each class whose constructor is compared
EXAMPLES = [
    i, h, Var("p", "handle"), c4, true, x, StringImm("s"), Add(i, c4), Sub(j, c4l), Mul(f, x),
    FloorDiv(i, c4), FloorMod(i, c4), Min(i, c0), Max(i, c0), LT(i, c4), EQ(i, c4), And(b, true),
    Not(b), Select(b, i, c0), Cast("int64", i), ld, BufferLoad(V, [Ramp(c0, IntImm("int32", 1), 4)]),
    Ramp(c0, IntImm("int32", 1), 4), Broadcast(x, 4), Call("float32", "tir.exp", [x]), r, rl, reg,
    MatchBufferRegion(V, reg1), A, V, store, loop, For(i, c0, c4, ForKind.UNROLLED, store,
                                                        annotations={"a": 1}),
    seq, IfThenElse(b, store, store), Evaluate(c0), LetStmt(i, c0, store),
    AttrStmt(i, "k", c0, store), AssertStmt(b, "m", store), DeclBuffer(A, store),
    Allocate(h, "float32", [4], true, store), iv, blk, Block([], [], [reg], "C", store, store, [V]),
    realize,
]


def _loose(value):
    """``value`` as a user might spell it: a vector as a list, an int32 or
    bool constant as the Python value, a dtype as a plain string."""
    if type(value) is type(pvector()):
        return [_loose(v) for v in value]
    if type(value) is IntImm and value.dtype in ("int32", "bool"):
        return bool(value.value) if value.dtype == "bool" else value.value
    if type(value) is DataType:
        return str(value)
    return value


def _value(draw, own):
    """A value for a field whose value in the example is ``own``: ``own``,
    ``own`` loosely spelled, or anything of the pool (one integer drawn:
    strategies built per field would cost more than the constructors)."""
    k = draw(st.integers(0, len(POOL) + 1))
    value = own if k == 0 else _loose(own) if k == 1 else POOL[k - 2]
    if type(value) is Buffer and type(own) is type(pvector()):
        # a buffer is indexable without end (A[k] is a load for every k): as
        # a sequence it would be read forever, by either constructor
        return own
    return value


@st.composite
def field_values(draw, example):
    """Values for the fields of ``example``'s class, in order; a default
    may be left out."""
    fields = attrs.fields(type(example))
    required = sum(a.default is attrs.NOTHING for a in fields)
    count = draw(st.integers(required, len(fields)))
    return [_value(draw, getattr(example, a.name)) for a in fields[:count]]


def _outcome(make):
    try:
        return ("node", make())
    except Exception as error:  # the error itself is what is compared
        return ("error", type(error), str(error))


def _assert_same(fast, general):
    assert fast[0] == general[0], (fast, general)
    if fast[0] == "error":
        assert fast[1:] == general[1:]
        return
    one, other = fast[1], general[1]
    assert type(one) is type(other)
    for a in attrs.fields(type(one)):
        mine, theirs = getattr(one, a.name), getattr(other, a.name)
        # (a field without a check may hold a NaN: the very object, in both)
        assert type(mine) is type(theirs) and (mine is theirs or mine == theirs), a.name
    # such a field may hold an unhashable value: then neither hashes
    assert _outcome(lambda: hash(one)) == _outcome(lambda: hash(other))
    if isinstance(one, PrimExpr):
        assert one.dtype == other.dtype and type(one.dtype) is type(other.dtype)


def _built_by(init, cls, args=(), kwargs=None):
    node = object.__new__(cls)
    init(node, *args, **(kwargs or {}))
    return node


def test_each_node_class_has_a_lean_constructor():
    for example in EXAMPLES:
        cls = type(example)
        fields_init = inspect.unwrap(cls.__init__)
        assert fields_init is not attrs_init(cls)
        assert cls is IntImm or fields_init.__code__.co_filename.startswith("<lean __init__")


# every class is one test: a share of the CI budget each (see tests/conftest.py)
_SHARE = max(1, settings().max_examples * 100 // 300)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: type(e).__name__)
@settings(max_examples=_SHARE)
@given(data=st.data())
def test_constructor_matches_attrs(example, data):
    cls = type(example)
    values = data.draw(field_values(example))
    fast = _outcome(lambda: _built_by(inspect.unwrap(cls.__init__), cls, values))
    general = _outcome(lambda: _built_by(attrs_init(cls), cls, values))
    _assert_same(fast, general)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: type(e).__name__)
@settings(max_examples=_SHARE)
@given(data=st.data())
def test_with_fields_matches_attrs(example, data):
    cls = type(example)
    fields = attrs.fields(cls)
    names = data.draw(st.lists(st.sampled_from([a.name for a in fields]), min_size=1, max_size=2,
                               unique=True))
    changes = {name: _value(data.draw, getattr(example, name)) for name in names}
    everything = {a.name: changes.get(a.name, getattr(example, a.name)) for a in fields}
    fast = _outcome(lambda: with_fields(example, **changes))
    general = _outcome(lambda: _built_by(attrs_init(cls), cls, kwargs=everything))
    _assert_same(fast, general)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if type(e) is not IntImm],
                         ids=lambda e: type(e).__name__)
@settings(max_examples=max(1, _SHARE // 2))
@given(data=st.data())
def test_constructor_matches_attrs_without_validators(example, data):
    # attrs' switch turns validators off in its constructor, and so in the lean one
    cls = type(example)
    values = data.draw(field_values(example))
    with attrs.validators.disabled():
        fast = _outcome(lambda: _built_by(inspect.unwrap(cls.__init__), cls, values))
        general = _outcome(lambda: _built_by(attrs_init(cls), cls, values))
    _assert_same(fast, general)
