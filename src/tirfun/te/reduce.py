"""Reductions: ``te.sum``, ``te.max``, ``te.min`` and ``te.comm_reducer``.

A reducer is made from a combining function and an identity::

    argmin_like = te.comm_reducer(lambda x, y: tir.min(x, y),
                                  lambda dtype: tir.max_value(dtype), name="mymin")
    B = te.compute((n,), lambda i: argmin_like(A[i, k], axis=k))

Called with an axis (an IterVar from ``te.reduce_axis`` or a list of them)
it builds a :class:`Reduce`, the whole body of a compute. A reducer of
tuples, such as an argmax, combines tuples and has one identity per value::

    argmax = te.comm_reducer(
        lambda x, y: (tir.Select(x[1] >= y[1], x[0], y[0]), tir.Select(x[1] >= y[1], x[1], y[1])),
        lambda t0, t1: (tir.const(-1, t0), te.min_value(t1)), name="argmax")
    idx, val = te.compute((n,), lambda i: argmax((I[i, k], A[i, k]), axis=k)) Called with plain
expressions instead (``te.max(a, b)``) it combines them directly.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import field
from pyrsistent import PVector

from ..errors import NodeError
from ..nodes import IterVar, IterVarType, PrimExpr, const, to_expr
from ..nodes.base import node, to_pvector
from ..nodes.expr import to_expr_vector
from ..nodes.reducer import CommReducer
from ..nodes.dtype import DataType
from ..tir import op as tir_op
from ..tir.op import max_value, min_value


@node
class Reduce(PrimExpr):
    """Value ``value_index`` of ``combiner`` folded over the tuple ``source``
    for every point of ``axis`` where ``condition`` holds (TVM's
    ``tir.Reduce``; only inside te.compute)."""

    combiner: CommReducer
    source: PVector = field(converter=to_expr_vector)
    axis: PVector = field(converter=to_pvector)
    condition: PrimExpr = field(converter=lambda c: const(True) if c is None else to_expr(c))
    value_index: int = 0
    #: where each value starts instead of the identity (TVM's ``init=``),
    #: or empty for the identity
    init: PVector = field(factory=list, converter=to_expr_vector)

    @property
    def dtype(self) -> DataType:
        return self.source[self.value_index].dtype

    def __attrs_post_init__(self):
        for iv in self.axis:
            if not isinstance(iv, IterVar) or iv.iter_type is not IterVarType.CommReduce:
                raise NodeError(f"a reduction runs over axes from te.reduce_axis, got {iv!r}")
        if not self.condition.dtype.is_bool:
            raise NodeError(f"the condition of a reduction must be bool, got {self.condition.dtype}")
        if not 0 <= self.value_index < len(self.source):
            raise NodeError(f"a reduction of {len(self.source)} values has no value {self.value_index}")
        if self.init and [i.dtype for i in self.init] != [s.dtype for s in self.source]:
            raise NodeError(f"the initial values of a reduction must have the dtypes of its values "
                            f"({', '.join(str(s.dtype) for s in self.source)}), got "
                            f"{', '.join(str(i.dtype) for i in self.init)}")


class Reducer:
    """What ``te.comm_reducer`` returns: call it as ``r(expr, axis=k,
    where=cond)`` to reduce, or ``r(a, b, ...)`` to combine values. For a
    reducer of tuples (``fcombine`` takes and returns tuples, ``fidentity``
    takes one dtype per value), ``r((a, b), axis=k)`` returns one reduction
    per value, the tuple a compute with several outputs returns."""

    def __init__(self, fcombine: Callable, fidentity: Callable, name: str):
        self.fcombine = fcombine
        self.fidentity = fidentity
        self.name = name

    def combiner(self, dtypes) -> CommReducer:
        """The reducer specialised to ``dtypes`` (one dtype, or a tuple of
        them for a reducer of tuples)."""
        from .tensor import TeVar

        several = isinstance(dtypes, (list, tuple))
        dtypes = [DataType(d) for d in (dtypes if several else [dtypes])]
        if several:
            lhs = [TeVar(f"x_{k}", d) for k, d in enumerate(dtypes)]
            rhs = [TeVar(f"y_{k}", d) for k, d in enumerate(dtypes)]
            result = self.fcombine(tuple(lhs), tuple(rhs))
            identity = self.fidentity(*dtypes)
        else:
            lhs, rhs = [TeVar("x", dtypes[0])], [TeVar("y", dtypes[0])]
            result = self.fcombine(lhs[0], rhs[0])
            identity = self.fidentity(dtypes[0])
        results = _values(self.name, "combination", result, len(dtypes))
        identities = _values(self.name, "identity", identity, len(dtypes))
        for d, r, i in zip(dtypes, results, identities):
            if r.dtype != d or i.dtype != d:
                raise NodeError(f"reducer {self.name}: for {d} the combination gives "
                                f"{r.dtype} and the identity {i.dtype}")
        return CommReducer(lhs, rhs, results, identities)

    def __call__(self, expr, axis=None, where=None, init=None, *args):
        axes = axis
        if isinstance(axes, IterVar):
            axes = [axes]
        if isinstance(axes, (list, tuple)) and all(isinstance(a, IterVar) for a in axes):
            if args:
                raise NodeError(f"{self.name}: unexpected extra arguments")
            condition = const(True) if where is None else to_expr(where)
            if isinstance(expr, (list, tuple)):
                sources = [to_expr(e) for e in expr]
                combiner = self.combiner(tuple(s.dtype for s in sources))
                inits = self._inits(init, sources)
                return tuple(Reduce(combiner, sources, list(axes), condition, k, inits)
                             for k in range(len(sources)))
            source = to_expr(expr)
            return Reduce(self.combiner(source.dtype), [source], list(axes), condition, 0,
                          self._inits(init, [source]))
        # te.max(a, b, ...): combine the values themselves
        if init is not None:
            raise NodeError(f"{self.name}: an initial value (init=) needs an axis to reduce over")
        values = [v for v in (expr, axis, where, *args) if v is not None]
        if len(values) < 2:
            raise NodeError(f"{self.name} needs an axis (te.reduce_axis) to reduce over, "
                            "or at least two values to combine")
        out = values[0]
        for v in values[1:]:
            out = self.fcombine(out, v)
        return out

    def _inits(self, init, sources) -> list:
        """The initial values (``init=``, one per value; a Python number
        takes its value's dtype), or [] for the identity."""
        if init is None:
            return []
        values = list(init) if isinstance(init, (list, tuple)) else [init]
        if len(values) != len(sources):
            raise NodeError(f"{self.name}: {len(values)} initial values for {len(sources)} values")
        return [const(v, s.dtype) if isinstance(v, (int, float)) and not isinstance(v, bool)
                else to_expr(v) for v, s in zip(values, sources)]

    def __repr__(self) -> str:
        return f"comm_reducer({self.name})"


def _values(name: str, what: str, value, count: int) -> list:
    several = isinstance(value, (list, tuple))
    values = list(value) if several else [value]
    if len(values) != count:
        raise NodeError(f"reducer {name}: the {what} has {len(values)} values for {count} dtypes")
    try:
        return [to_expr(v) for v in values]
    except NodeError:
        raise NodeError(f"reducer {name}: the {what} must be expressions, got {value!r}") from None


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> Reducer:
    """A reducer from ``fcombine(x, y)`` and ``fidentity(dtype)``."""
    return Reducer(fcombine, fidentity, name)


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001
min = comm_reducer(lambda x, y: tir_op.min(x, y), max_value, name="min")  # noqa: A001
max = comm_reducer(lambda x, y: tir_op.max(x, y), min_value, name="max")  # noqa: A001

__all__ = ["CommReducer", "Reduce", "Reducer", "comm_reducer", "sum", "min", "max",
           "min_value", "max_value"]
