"""Reductions: ``te.sum``, ``te.max``, ``te.min`` and ``te.comm_reducer``.

A reducer is made from a combining function and an identity::

    argmin_like = te.comm_reducer(lambda x, y: tir.min(x, y),
                                  lambda dtype: tir.max_value(dtype), name="mymin")
    B = te.compute((n,), lambda i: argmin_like(A[i, k], axis=k))

Called with an axis (an IterVar from ``te.reduce_axis`` or a list of them)
it builds a :class:`Reduce`, the whole body of a compute. Called with plain
expressions instead (``te.max(a, b)``) it combines them directly.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import field
from pyrsistent import PVector

from ..errors import NodeError
from ..nodes import IterVar, IterVarType, Node, PrimExpr, Var, const, to_expr
from ..nodes.base import node, to_pvector
from ..nodes.dtype import DataType
from ..tir import op as tir_op


@node
class CommReducer(Node):
    """A commutative reducer for one dtype: ``result`` combines ``lhs`` and
    ``rhs``; ``identity`` is its neutral element."""

    name: str
    lhs: Var
    rhs: Var
    result: PrimExpr
    identity: PrimExpr

    def __call__(self, a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``result`` with ``lhs := a`` and ``rhs := b``."""
        from ..analysis.traversal import transform

        mapping = {self.lhs: a, self.rhs: b}
        return transform(self.result, lambda n: n,
                         pre=lambda n: mapping.get(n) if isinstance(n, Var) else None)


@node
class Reduce(PrimExpr):
    """``combiner`` folded over ``source`` for every point of ``axis`` where
    ``condition`` holds (TVM's ``tir.Reduce``; only inside te.compute)."""

    combiner: CommReducer
    source: PrimExpr = field(converter=to_expr)
    axis: PVector = field(converter=to_pvector)
    condition: PrimExpr = field(converter=to_expr)

    @property
    def dtype(self) -> DataType:
        return self.source.dtype

    def __attrs_post_init__(self):
        for iv in self.axis:
            if not isinstance(iv, IterVar) or iv.iter_type is not IterVarType.CommReduce:
                raise NodeError(f"a reduction runs over axes from te.reduce_axis, got {iv!r}")
        if not self.condition.dtype.is_bool:
            raise NodeError(f"the condition of a reduction must be bool, got {self.condition.dtype}")


class Reducer:
    """What ``te.comm_reducer`` returns: call it as ``r(expr, axis=k,
    where=cond)`` to reduce, or ``r(a, b, ...)`` to combine values."""

    def __init__(self, fcombine: Callable, fidentity: Callable, name: str):
        self.fcombine = fcombine
        self.fidentity = fidentity
        self.name = name

    def combiner(self, dtype) -> CommReducer:
        """The reducer specialised to ``dtype``."""
        dtype = DataType(dtype)
        lhs, rhs = Var("x", dtype), Var("y", dtype)
        result = to_expr(self.fcombine(lhs, rhs))
        identity = to_expr(self.fidentity(dtype))
        if result.dtype != dtype or identity.dtype != dtype:
            raise NodeError(f"reducer {self.name}: for {dtype} the combination gives "
                            f"{result.dtype} and the identity {identity.dtype}")
        return CommReducer(self.name, lhs, rhs, result, identity)

    def __call__(self, expr, axis=None, where=None, init=None, *args):
        if init is not None:
            raise NodeError(f"{self.name}: an initial value (init=) is not supported")
        axes = axis
        if isinstance(axes, IterVar):
            axes = [axes]
        if isinstance(axes, (list, tuple)) and all(isinstance(a, IterVar) for a in axes):
            if args:
                raise NodeError(f"{self.name}: unexpected extra arguments")
            source = to_expr(expr)
            condition = const(True) if where is None else to_expr(where)
            return Reduce(self.combiner(source.dtype), source, list(axes), condition)
        # te.max(a, b, ...): combine the values themselves
        values = [v for v in (expr, axis, where, *args) if v is not None]
        if len(values) < 2:
            raise NodeError(f"{self.name} needs an axis (te.reduce_axis) to reduce over, "
                            "or at least two values to combine")
        out = values[0]
        for v in values[1:]:
            out = self.fcombine(out, v)
        return out

    def __repr__(self) -> str:
        return f"comm_reducer({self.name})"


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> Reducer:
    """A reducer from ``fcombine(x, y)`` and ``fidentity(dtype)``."""
    return Reducer(fcombine, fidentity, name)


def min_value(dtype) -> PrimExpr:
    """The smallest finite value of ``dtype`` (TVM's ``tir.min_value``)."""
    dtype = DataType(dtype)
    if dtype.is_float:
        return const(-_float_max(dtype), dtype)
    return const(dtype.min_value(), dtype)


def max_value(dtype) -> PrimExpr:
    """The largest finite value of ``dtype``."""
    dtype = DataType(dtype)
    if dtype.is_float:
        return const(_float_max(dtype), dtype)
    return const(dtype.max_value(), dtype)


def _float_max(dtype: DataType) -> float:
    return {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
            "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}[str(dtype.element_of)]


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001
min = comm_reducer(lambda x, y: tir_op.min(x, y), max_value, name="min")  # noqa: A001
max = comm_reducer(lambda x, y: tir_op.max(x, y), min_value, name="max")  # noqa: A001

__all__ = ["CommReducer", "Reduce", "Reducer", "comm_reducer", "sum", "min", "max",
           "min_value", "max_value"]
