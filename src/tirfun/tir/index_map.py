"""TVM's ``tir.IndexMap``: a map from indices to indices, as the layout
primitives take it (``transform_layout``, ``transform_block_layout``,
``reindex_cache_read``...). A map is its parameter variables and the
expressions it gives; :attr:`IndexMap.AXIS_SEPARATOR` among the results
marks where ``transform_layout`` also sets an axis separator."""

from __future__ import annotations

import inspect

import attrs

from ..errors import NodeError
from ..nodes import PrimExpr, Var, to_expr


@attrs.frozen
class IndexMap:
    """``final_indices`` as expressions of the variables ``initial_indices``."""

    initial_indices: tuple = attrs.field(converter=tuple)
    final_indices: tuple = attrs.field(converter=tuple)

    #: the marker a mapping function returns between two results where the
    #: transformed buffer gets an axis separator
    AXIS_SEPARATOR = "axis_separator"

    @staticmethod
    def from_func(mapping_function, ndim: int | None = None, index_dtype: str = "int32") -> "IndexMap":
        """The map a Python function of the indices gives (its parameters
        name the variables; a function of ``*indices`` takes ``ndim``)."""
        params = inspect.signature(mapping_function).parameters.values()
        if any(p.kind is p.VAR_POSITIONAL for p in params):
            if ndim is None:
                raise NodeError("IndexMap.from_func of a function of *indices needs ndim")
            names = [f"i{k}" for k in range(ndim)]
        else:
            names = [p.name for p in params]
        variables = [Var(n, index_dtype) for n in names]
        out = mapping_function(*variables)
        results = tuple(out) if isinstance(out, (list, tuple)) else (out,)
        return IndexMap(variables, [r if r is IndexMap.AXIS_SEPARATOR else to_expr(r) for r in results])

    def map_indices(self, indices) -> list[PrimExpr]:
        """The map applied to ``indices``."""
        from ..rewrites.exprs import substitute_expr

        if len(indices) != len(self.initial_indices):
            raise NodeError(f"the index map takes {len(self.initial_indices)} indices, got {len(indices)}")
        mapping = dict(zip(self.initial_indices, (to_expr(i) for i in indices)))
        return [substitute_expr(e, mapping) for e in self.final_indices if e is not IndexMap.AXIS_SEPARATOR]


__all__ = ["IndexMap"]
