"""TVM's ``tir.IndexMap``: a map from indices to indices, as the layout
primitives take it (``transform_layout``, ``transform_block_layout``,
``reindex_cache_read``...). A map is its parameter variables and the
expressions it gives; :attr:`IndexMap.AXIS_SEPARATOR` among the results
marks where ``transform_layout`` also sets an axis separator."""

from __future__ import annotations

import inspect

import attrs

from ..errors import NodeError
from ..nodes import IntImm, PrimExpr, Var, to_expr
from ..nodes.dtype import DataType


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

    @property
    def results(self) -> list[PrimExpr]:
        """The final indices without axis-separator markers."""
        return [e for e in self.final_indices if e is not IndexMap.AXIS_SEPARATOR]

    def _retyped(self, dtype: DataType) -> "IndexMap":
        """The map with integer variables and constants of ``dtype``, as TVM
        reads a map applied to indices of another integer type."""
        from ..analysis.traversal import transform

        def post(n):
            if type(n) is Var and n.dtype.is_integer and n.dtype != dtype:
                return Var(n.name, dtype)
            if type(n) is IntImm and n.dtype.is_integer and n.dtype != dtype:
                return IntImm(dtype, n.value)
            return n

        return IndexMap([transform(v, post) for v in self.initial_indices],
                        [e if e is IndexMap.AXIS_SEPARATOR else transform(e, post)
                         for e in self.final_indices])

    def map_indices(self, indices) -> list[PrimExpr]:
        """The map applied to ``indices``, simplified (constants fold)."""
        from ..analysis.arith.simplify import simplify_expr
        from ..rewrites.exprs import substitute_expr

        if len(indices) != len(self.initial_indices):
            raise NodeError(f"the index map takes {len(self.initial_indices)} indices, got {len(indices)}")
        indices = [to_expr(i) for i in indices]
        dtypes = {i.dtype for i in indices if i.dtype.is_integer}
        index_map = self
        if len(dtypes) == 1 and any(v.dtype != next(iter(dtypes)) for v in self.initial_indices):
            index_map = self._retyped(next(iter(dtypes)))
        mapping = dict(zip(index_map.initial_indices, indices))
        return [simplify_expr(substitute_expr(e, mapping)) for e in index_map.results]

    def _domain(self, shape) -> dict:
        """Each variable's constant interval over ``shape`` (NodeError for a
        symbolic size: tirfun maps constant shapes)."""
        if len(shape) != len(self.initial_indices):
            raise NodeError(f"the index map takes {len(self.initial_indices)} dimensions, "
                            f"got a shape of {len(shape)}")
        env = {}
        for v, d in zip(self.initial_indices, shape):
            d = to_expr(d)
            if not isinstance(d, IntImm) or d.value < 1:
                raise NodeError(f"the index map is applied to constant positive sizes, got {d}")
            env[v] = (0, d.value - 1)
        return env

    def map_shape(self, shape) -> list[PrimExpr]:
        """The extent of each final index over the box ``shape`` of the
        initial ones (its largest value less its smallest, plus one); a
        symbolic size gives an expression of it."""
        from ..analysis.arith.const_bound import const_interval

        shape = [to_expr(d) for d in shape]
        dtypes = {d.dtype for d in shape}
        index_map = self._retyped(next(iter(dtypes))) if len(dtypes) == 1 else self
        if not all(isinstance(d, IntImm) for d in shape):
            return index_map._symbolic_shape(shape)
        env = index_map._domain(shape)
        out = []
        for e in index_map.results:
            lo, hi = const_interval(e, env)
            if lo is None or hi is None:
                raise NodeError(f"the index map's result {e} is not bounded over the shape")
            out.append(IntImm(e.dtype, hi - lo + 1))
        return out

    def _symbolic_shape(self, shape) -> list[PrimExpr]:
        from ..analysis.arith.int_set import Interval, eval_interval
        from ..analysis.arith.simplify import simplify_expr
        from ..nodes import Range

        if len(shape) != len(self.initial_indices):
            raise NodeError(f"the index map takes {len(self.initial_indices)} dimensions, "
                            f"got a shape of {len(shape)}")
        dom = {v: Interval.from_range(Range(IntImm(d.dtype, 0), d))
               for v, d in zip(self.initial_indices, shape)}
        out = []
        for e in self.results:
            iv = eval_interval(e, dom)
            if not iv.bounded:
                raise NodeError(f"the index map's result {e} is not bounded over the shape")
            out.append(simplify_expr(iv.hi - iv.lo + IntImm(e.dtype, 1)))
        return out

    def inverse(self, shape) -> "IndexMap":
        """The inverse over the box ``shape``: NodeError unless the map is
        one to one from that box onto the box :meth:`map_shape` gives."""
        from ..analysis.arith import detect_iter_map
        from ..nodes import For
        from ..rewrites.index_maps import NOP, inverse_of

        env = self._domain(shape)
        loops = {v.name: For(v, IntImm(v.dtype, 0), IntImm(v.dtype, env[v][1] + 1), "serial", NOP)
                 for v in self.initial_indices}
        sums = detect_iter_map(list(self.results), loops, "bijective")
        if sums is None or any(not (isinstance(t.base, IntImm) and t.base.value == 0) for t in sums):
            raise NodeError(f"the index map {self} is not one to one over the shape "
                            f"{[str(d) for d in shape]}, so it has no inverse there")
        new_vars = [Var(f"axis{k}", e.dtype) for k, e in enumerate(self.results)]
        back = inverse_of(sums, list(self.initial_indices), new_vars)
        return IndexMap(new_vars, [back[v] for v in self.initial_indices])

    def non_surjective_inverse(self, shape) -> tuple["IndexMap", PrimExpr]:
        """The inverse of a map that is one to one from the box ``shape``
        into a larger box (the padded layout of ``transform_layout``), and
        the condition, on the new indices, of the places it does not reach
        (the padding). NodeError when no padded domain makes it one to one."""
        from ..rewrites.layout import _padded_domain
        from ..rewrites.layout_padding import Padding

        env = self._domain(shape)
        params = tuple(self.initial_indices)
        padded = _padded_domain(params, tuple(self.results), [IntImm(v.dtype, env[v][1] + 1) for v in params])
        if padded is None:
            raise NodeError(f"the index map {self} is not one to one over the shape "
                            f"{[str(d) for d in shape]}, even into a padded box")
        new_shape, (inverse, extents, shifts) = padded
        new_vars = [Var(f"axis{k}", e.dtype) for k, e in enumerate(self.results)]
        padding = Padding((), params, inverse, extents, shifts)
        back = padding.inverse(new_vars)
        return (IndexMap(new_vars, [back[v] for v in params]),
                padding.predicate(new_vars, new_shape))

    def map_ndarray(self, array):
        """A new array of :meth:`map_shape`'s shape holding each element of
        ``array`` (a tirfun or numpy array) where the map sends its index;
        places no index reaches are zero."""
        import numpy as np

        from ..runtime import ndarray

        src = array.numpy() if hasattr(array, "numpy") else np.asarray(array)
        shape = [d.value for d in self.map_shape([IntImm("int64", n) for n in src.shape])]
        grid = dict(zip(self.initial_indices, np.indices(src.shape, dtype=np.int64)))
        targets = tuple(np.broadcast_to(_evaluate(e, grid), src.shape) for e in self.results)
        out = np.zeros(shape, src.dtype)
        out[targets] = src
        return ndarray.array(out)

    def is_equivalent_to(self, other: "IndexMap") -> bool:
        """Whether the two maps give equal indices for every input."""
        if len(self.initial_indices) != len(other.initial_indices) or \
                len(self.results) != len(other.results):
            return False
        from ..analysis.arith.simplify import simplify_expr

        mine = self.map_indices(list(other.initial_indices))
        return all(_is_zero(simplify_expr(a - b)) for a, b in zip(mine, other.results))

    def __str__(self) -> str:
        names = ", ".join(v.name for v in self.initial_indices)
        return f"index_map(lambda {names}: ({', '.join(str(e) for e in self.final_indices)}))"


def _evaluate(e: PrimExpr, grid: dict):
    """An integer index expression evaluated on numpy arrays of its
    variables' values (``+ - *``, floor division and modulo, min, max)."""
    import numpy as np

    from ..nodes import Add, FloorDiv, FloorMod, Max, Min, Mul, Sub

    ops = {Add: np.add, Sub: np.subtract, Mul: np.multiply, FloorDiv: np.floor_divide,
           FloorMod: np.mod, Min: np.minimum, Max: np.maximum}
    if type(e) is IntImm:
        return np.int64(e.value)
    if isinstance(e, Var):
        for v, values in grid.items():
            if v.name == e.name:
                return values
        raise NodeError(f"the index map's result uses {e.name}, which is not one of its indices")
    op = ops.get(type(e))
    if op is None:
        raise NodeError(f"map_ndarray evaluates sums, products, floordiv, floormod, min and max "
                        f"of the indices, not {type(e).__name__}")
    return op(_evaluate(e.a, grid), _evaluate(e.b, grid))


def _is_zero(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 0


__all__ = ["IndexMap"]
