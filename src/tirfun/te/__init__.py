"""Tensor expressions: describe a computation per element, get a PrimFunc.

TVM's ``tvm.te`` under the same names::

    from tirfun import te
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    func = te.create_prim_func([A, B])

``placeholder``, ``compute``, ``reduce_axis``, the reducers ``sum``, ``max``
and ``min``, ``comm_reducer`` for new ones (tuple-valued ones too, such as
argmax), ``extern`` for a tensor an external function computes, ``var`` for
symbolic sizes, and ``create_prim_func``. The usual intrinsics (``exp``, ``sqrt``,
``if_then_else``...) are re-exported from :mod:`tirfun.tir`.
"""

from ..nodes import const
from ..tir.op import (
    abs, all, any, ceil, cos, erf, exp, exp2, floor, floordiv, floormod, if_then_else, log, log2,
    log10, pow, round, rsqrt, sigmoid, sin, sqrt, tanh, trunc,
    truncdiv, truncmod,
)
from .create_prim_func import create_prim_func
from .extern import ExternOp, call_packed, extern
from .reduce import CommReducer, Reduce, comm_reducer, max, max_value, min, min_value, sum
from .tensor import (
    ComputeOp, PlaceholderOp, Tensor, TensorLoad, compute, placeholder, reduce_axis, size_var, var,
)

power = pow

#: TVM's ``te.AXIS_SEPARATOR``: the marker an index map returns between two
#: results where ``transform_layout`` sets an axis separator (the same as
#: ``tir.IndexMap.AXIS_SEPARATOR``)
AXIS_SEPARATOR = "axis_separator"

__all__ = [
    "AXIS_SEPARATOR", "placeholder", "compute", "reduce_axis", "var", "size_var", "const", "sum", "max", "min",
    "comm_reducer", "create_prim_func", "extern", "call_packed", "Tensor", "TensorLoad",
    "PlaceholderOp", "ComputeOp", "ExternOp",
    "Reduce", "CommReducer", "min_value", "max_value",
    "abs", "all", "any", "ceil", "cos", "erf", "exp", "exp2", "floor", "floordiv", "floormod",
    "if_then_else", "log", "log2", "log10", "pow", "power", "round", "rsqrt", "sigmoid", "sin",
    "sqrt", "tanh", "trunc", "truncdiv", "truncmod",
]
