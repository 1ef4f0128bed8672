"""Properties of te programs: the PrimFunc create_prim_func builds means what
the te bodies say, and it survives printing and parsing.

Programs include computes with several outputs and tuple reductions
(argmax, argmin), and are built with and without int64 indices. The
meaning of a te program is computed here independently of tirfun's
interpreter and of create_prim_func: each compute's body is evaluated with
numpy over the whole grid of its indices at once (one array dimension per
axis, reductions folded over their own dimensions).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tirfun import te
from tirfun.interp import run
from tirfun.nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Call, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Max,
    Min, Mod, Mul, Not, Or, Select, Sub, Var,
)
from tirfun.te import PlaceholderOp, Reduce, TensorLoad
from tirfun.testing.equivalence import compare_arrays, inputs_for
from tirfun.testing.te_programs import te_programs

_BINARY = {
    Add: np.add, Sub: np.subtract, Mul: np.multiply, Min: np.minimum, Max: np.maximum,
    FloorDiv: np.floor_divide, FloorMod: np.mod,
    EQ: np.equal, NE: np.not_equal, LT: np.less, LE: np.less_equal, GT: np.greater,
    GE: np.greater_equal, And: np.logical_and, Or: np.logical_or,
}

def _in_double(fn, special):
    """A math function as tirfun defines it on floats: computed in double
    precision by the C library (``math``) and rounded once to the argument's
    dtype; numpy (``special``) only where ``math`` refuses an IEEE result
    such as an infinity. numpy's own float32 routines round differently."""
    def one(v):
        try:
            return fn(float(v))
        except (OverflowError, ValueError):
            with np.errstate(all="ignore"):
                return float(special(np.float64(v)))

    def apply(x):
        x = np.asarray(x)
        return np.vectorize(one, otypes=[np.float64])(x).astype(x.dtype)
    return apply


def _sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


_CALLS = {
    "tir.exp": _in_double(math.exp, np.exp), "tir.tanh": _in_double(math.tanh, np.tanh),
    "tir.fabs": np.abs, "tir.abs": np.abs,
    "tir.sqrt": np.sqrt, "tir.log": _in_double(math.log, np.log),
    "tir.sigmoid": _in_double(_sigmoid, lambda x: 1 / (1 + np.exp(-x))),
}


class _Grid:
    """Values of the variables and tensors while evaluating one compute."""

    def __init__(self, variables: dict, tensors: dict):
        self.variables = variables  # Var -> ndarray, broadcastable over the grid
        self.tensors = tensors      # (id(op), value_index) -> ndarray

    def eval(self, e):
        if isinstance(e, Var):
            return self.variables[e]
        if isinstance(e, IntImm):
            return np.array(e.value, dtype="bool" if e.dtype.is_bool else str(e.dtype))
        if isinstance(e, FloatImm):
            return np.array(e.value, dtype=str(e.dtype))
        if isinstance(e, TensorLoad):
            array = self.tensors[_key(e.tensor)]
            # indices are clipped because if_then_else evaluates both branches
            # here; the branch that would be out of bounds is discarded
            index = tuple(np.clip(self.eval(i), 0, max(n - 1, 0)) for i, n in zip(e.indices, array.shape))
            return array[index]
        if type(e) in _BINARY:
            return _BINARY[type(e)](self.eval(e.a), self.eval(e.b))
        if isinstance(e, Div):
            a, b = self.eval(e.a), self.eval(e.b)
            if e.dtype.is_float:
                return np.divide(a, b)
            return np.trunc(a / b).astype(a.dtype)
        if isinstance(e, Mod):
            return np.fmod(self.eval(e.a), self.eval(e.b))
        if isinstance(e, Not):
            return np.logical_not(self.eval(e.a))
        if isinstance(e, Select):
            return np.where(self.eval(e.condition), self.eval(e.true_value), self.eval(e.false_value))
        if isinstance(e, Cast):
            return self.eval(e.value).astype(str(e.dtype))
        if isinstance(e, Call):
            if e.op == "tir.if_then_else":
                c, t, f = (self.eval(a) for a in e.args)
                return np.where(c, t, f)
            return _CALLS[e.op](*(self.eval(a) for a in e.args))
        raise NotImplementedError(f"no numpy meaning for {type(e).__name__}")


def _ordered_ops(outputs):
    order = []

    def visit(op):
        if any(op is o for o in order):
            return
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for t in outputs:
        visit(t.op)
    return order


def _size(e, sizes: dict) -> int:
    if isinstance(e, IntImm):
        return e.value
    return sizes[e]


def _key(tensor) -> tuple:
    return id(tensor.op), tensor.value_index


def _evaluate_compute(op, tensors: dict, sizes: dict) -> list:
    """The value of every output of ``op``."""
    shape = [_size(d, sizes) for d in op.shape]
    first = op.body[0]
    reduce_axes = list(first.axis) if isinstance(first, Reduce) else []
    extents = shape + [_size(iv.dom.extent, sizes) for iv in reduce_axes]
    starts = [0] * len(shape) + [_size(iv.dom.min, sizes) for iv in reduce_axes]
    ndim = len(extents)
    variables = dict(sizes)
    for k, iv in enumerate(list(op.axis) + reduce_axes):
        at = [1] * ndim
        at[k] = extents[k]
        variables[iv.var] = (np.arange(extents[k]) + starts[k]).astype(str(iv.var.dtype)).reshape(at)
    grid = _Grid(variables, tensors)
    if not isinstance(first, Reduce):
        return [np.broadcast_to(grid.eval(b), extents).astype(str(b.dtype)) for b in op.body]
    comb = first.combiner
    dtypes = [str(s.dtype) for s in first.source]
    keep = np.broadcast_to(grid.eval(first.condition), extents)
    identity = [np.broadcast_to(grid.eval(i), shape).astype(d)
                for i, d in zip(comb.identity_element, dtypes)]
    sources = []
    for s, i, d in zip(first.source, identity, dtypes):
        source = np.broadcast_to(grid.eval(s), extents)
        # the identity where the condition is false, as create_prim_func guards it
        full_identity = np.broadcast_to(i.reshape(shape + [1] * len(reduce_axes)), extents)
        sources.append(np.where(keep, source, full_identity).astype(d).reshape(shape + [-1]))
    # fold the combiner over the reduction dimensions, one point at a time, in loop order
    acc = [i.copy() for i in identity]
    for r in range(sources[0].shape[-1]):
        env = dict(zip(comb.lhs, acc)) | {v: s[..., r] for v, s in zip(comb.rhs, sources)}
        fold = _Grid(variables | env, tensors)
        acc = [np.asarray(np.broadcast_to(fold.eval(e), shape)).astype(d)
               for e, d in zip(comb.result, dtypes)]
    return acc


def numpy_meaning(program, arrays: list) -> dict:
    """(id(op), value_index) -> the numpy value of every tensor of the program."""
    tensors, sizes = {}, {}
    for t, a in zip(program.args, arrays):
        for d, n in zip(t.shape, a.shape):
            if isinstance(d, Var):
                sizes[d] = int(n)
    for t, a in zip(program.inputs, arrays):
        tensors[_key(t)] = a
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for op in _ordered_ops(program.outputs):
            if isinstance(op, PlaceholderOp):
                continue
            for k, value in enumerate(_evaluate_compute(op, tensors, sizes)):
                tensors[(id(op), k)] = value
    return tensors


@given(data=st.data())
def test_interpreted_prim_func_matches_numpy_meaning_of_te(data):
    program = data.draw(te_programs(), label="program")
    # int64 indices (TVM's index_dtype_override) mean the same program
    index_dtype = data.draw(st.sampled_from([None, "int64"]), label="index_dtype_override")
    func = te.create_prim_func(program.args, index_dtype_override=index_dtype)
    args = data.draw(inputs_for(func), label="inputs")
    expected = numpy_meaning(program, [a.copy() for a in args])
    run(func, *args)
    for t, actual in zip(program.args, args):
        problem = compare_arrays(t.name, expected[_key(t)], actual, t.dtype)
        assert problem is None, f"{problem}\n{program!r}"


@functools.lru_cache(maxsize=1)
def _parser():
    from tirfun.script import from_source

    return from_source


@given(program=te_programs(), index_dtype=st.sampled_from([None, "int64"]))
def test_create_prim_func_round_trips_through_print_and_parse(program, index_dtype):
    from tirfun.analysis.equality import assert_structural_equal

    func = te.create_prim_func(program.args, index_dtype_override=index_dtype)
    text = func.script()
    parsed = _parser()(text)
    assert_structural_equal(parsed, func)
    assert parsed.script() == text


@given(program=te_programs(), index_dtype=st.sampled_from([None, "int64"]))
def test_create_prim_func_output_is_well_formed(program, index_dtype):
    from tirfun.analysis.traversal import walk
    from tirfun.analysis.verify import verify
    from tirfun.te.tensor import TeVar

    func = te.create_prim_func(program.args, index_dtype_override=index_dtype)
    verify(func)
    # te's variables, whose identity is the object, never reach the PrimFunc
    leaked = [n for n in walk(func) if isinstance(n, TeVar)]
    assert not leaked, f"te variables in the PrimFunc: {leaked}"


@given(data=st.data())
def test_compiled_te_programs_agree_with_the_interpreter(data):
    import tirfun

    program = data.draw(te_programs(kinds=("multi_output", "arg_reduction", "reduction")),
                        label="program")
    index_dtype = data.draw(st.sampled_from([None, "int64"]), label="index_dtype_override")
    func = te.create_prim_func(program.args, index_dtype_override=index_dtype)
    args = data.draw(inputs_for(func), label="inputs")
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run(func, *expected)
    tirfun.build(func)(*args)
    for t, x, y in zip(program.args, expected, args):
        problem = compare_arrays(t.name, x, y, t.dtype)
        assert problem is None, f"{problem}\n{program!r}"
