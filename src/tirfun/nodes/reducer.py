"""``CommReducer``: a commutative reduction, as ``T.comm_reducer`` writes it.

``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])`` combines one value;
a tuple-valued combiner such as argmax combines several at once::

    T.comm_reducer(lambda i0, v0, i1, v1: (T.Select(v0 >= v1, i0, i1),
                                           T.Select(v0 >= v1, v0, v1)),
                   [-1, T.float32("-inf")])

``lhs`` and ``rhs`` are the variables the combiner binds (one per value),
``result`` one expression per value over them, ``identity_element`` the
neutral value of each. TVM uses it as the node of
``T.attr(..., "reduce_scope", ...)`` around ``T.tvm_thread_allreduce``.
"""

from __future__ import annotations

from attrs import field
from pyrsistent import PVector

from ..errors import NodeError
from .base import Node, node, to_pvector
from .expr import PrimExpr, Var, to_expr


def _exprs(xs) -> PVector:
    return to_pvector(to_expr(x) for x in xs)


@node
class CommReducer(Node):
    """A combiner over tuples of values with its identity (TVM's
    ``tir.CommReducer``)."""

    lhs: PVector = field(converter=to_pvector)
    rhs: PVector = field(converter=to_pvector)
    result: PVector = field(converter=_exprs)
    identity_element: PVector = field(converter=_exprs)

    def __attrs_post_init__(self):
        n = len(self.lhs)
        if n == 0:
            raise NodeError("a comm_reducer combines at least one value")
        if not (len(self.rhs) == len(self.result) == len(self.identity_element) == n):
            raise NodeError(f"a comm_reducer of {n} values needs {n} right-hand variables, "
                            f"{n} results and {n} identities, got {len(self.rhs)}, "
                            f"{len(self.result)} and {len(self.identity_element)}")
        for i in range(n):
            x, y, r, e = self.lhs[i], self.rhs[i], self.result[i], self.identity_element[i]
            if not isinstance(x, Var) or not isinstance(y, Var):
                raise NodeError(f"the combiner of a comm_reducer binds variables, got {x!r}, {y!r}")
            if not (x.dtype == y.dtype == r.dtype == e.dtype):
                raise NodeError(f"value {i} of a comm_reducer mixes dtypes: {x.name}: {x.dtype}, "
                                f"{y.name}: {y.dtype}, result {r.dtype}, identity {e.dtype}")

    @property
    def dtypes(self) -> tuple:
        """The dtype of each combined value."""
        return tuple(x.dtype for x in self.lhs)

    def __call__(self, a, b) -> list[PrimExpr]:
        """``result`` with ``lhs := a`` and ``rhs := b`` (sequences of values)."""
        from ..analysis.traversal import transform

        a, b = list(a), list(b)
        if len(a) != len(self.lhs) or len(b) != len(self.rhs):
            raise NodeError(f"this comm_reducer combines {len(self.lhs)} values")
        mapping = dict(zip(self.lhs, map(to_expr, a))) | dict(zip(self.rhs, map(to_expr, b)))
        return [transform(r, lambda n: n, pre=lambda n: mapping.get(n) if isinstance(n, Var) else None)
                for r in self.result]


__all__ = ["CommReducer"]
