"""Properties of te programs: the PrimFunc create_prim_func builds means what
the te bodies say, and it survives printing and parsing.

The meaning of a te program is computed here independently of tirfun's
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
        self.tensors = tensors      # id(op) -> ndarray

    def eval(self, e):
        if isinstance(e, Var):
            return self.variables[e]
        if isinstance(e, IntImm):
            return np.array(e.value, dtype="bool" if e.dtype.is_bool else str(e.dtype))
        if isinstance(e, FloatImm):
            return np.array(e.value, dtype=str(e.dtype))
        if isinstance(e, TensorLoad):
            array = self.tensors[id(e.tensor.op)]
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


def _evaluate_compute(op, tensors: dict, sizes: dict) -> np.ndarray:
    shape = [_size(d, sizes) for d in op.shape]
    body = op.body[0]
    reduce_axes = list(body.axis) if isinstance(body, Reduce) else []
    extents = shape + [_size(iv.dom.extent, sizes) for iv in reduce_axes]
    starts = [0] * len(shape) + [_size(iv.dom.min, sizes) for iv in reduce_axes]
    ndim = len(extents)
    variables = dict(sizes)
    for k, iv in enumerate(list(op.axis) + reduce_axes):
        at = [1] * ndim
        at[k] = extents[k]
        variables[iv.var] = (np.arange(extents[k]) + starts[k]).astype(str(iv.var.dtype)).reshape(at)
    grid = _Grid(variables, tensors)
    dtype = str(body.dtype)
    if not isinstance(body, Reduce):
        return np.broadcast_to(grid.eval(body), extents).astype(dtype)
    comb = body.combiner
    source = np.broadcast_to(grid.eval(body.source), extents)
    identity = grid.eval(comb.identity)
    keep = np.broadcast_to(grid.eval(body.condition), extents)
    source = np.where(keep, source, identity).astype(dtype)
    # fold the combiner over the reduction dimensions, one point at a time
    flat = source.reshape(shape + [-1])
    acc = np.broadcast_to(identity, shape).astype(dtype)
    for r in range(flat.shape[-1]):
        fold = _Grid({comb.lhs: acc, comb.rhs: flat[..., r]}, tensors)
        acc = np.asarray(fold.eval(comb.result)).astype(dtype)
    return acc


def numpy_meaning(program, arrays: list) -> dict:
    """id(op) -> the numpy value of every tensor of the program."""
    tensors, sizes = {}, {}
    for t, a in zip(program.args, arrays):
        for d, n in zip(t.shape, a.shape):
            if isinstance(d, Var):
                sizes[d] = int(n)
    for t, a in zip(program.inputs, arrays):
        tensors[id(t.op)] = a
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for op in _ordered_ops(program.outputs):
            if isinstance(op, PlaceholderOp):
                continue
            tensors[id(op)] = _evaluate_compute(op, tensors, sizes)
    return tensors


@given(data=st.data())
def test_interpreted_prim_func_matches_numpy_meaning_of_te(data):
    program = data.draw(te_programs(), label="program")
    func = te.create_prim_func(program.args)
    args = data.draw(inputs_for(func), label="inputs")
    expected = numpy_meaning(program, [a.copy() for a in args])
    run(func, *args)
    for t, actual in zip(program.args, args):
        problem = compare_arrays(t.name, expected[id(t.op)], actual, t.dtype)
        assert problem is None, f"{problem}\n{program!r}"


@functools.lru_cache(maxsize=1)
def _parser():
    from tirfun.script import from_source

    return from_source


@given(program=te_programs())
def test_create_prim_func_round_trips_through_print_and_parse(program):
    from tirfun.analysis.equality import assert_structural_equal

    func = te.create_prim_func(program.args)
    text = func.script()
    parsed = _parser()(text)
    assert_structural_equal(parsed, func)
    assert parsed.script() == text


@given(program=te_programs())
def test_create_prim_func_output_is_well_formed(program):
    from tirfun.analysis.verify import verify

    verify(te.create_prim_func(program.args))
