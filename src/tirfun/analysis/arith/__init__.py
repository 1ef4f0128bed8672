"""Integer arithmetic over TIR expressions: one core that the schedule
primitives, the parser's region inference, lowering and the interpreter's
code generator all use. TVM's ``arith`` is the model for what it answers.

Modules, by job:

* :mod:`.terms` — integer constants, wrap-around, the term algebra;
* :mod:`.linear` — linear and affine forms (:class:`Linear`,
  :class:`Affine`), folding constructors, affine normalisation;
* :mod:`.const_bound` — constant intervals (``ConstIntBound``), sound under
  wrap-around: :func:`const_interval`, :func:`expr_bounds`;
* :mod:`.linear_bound` — symbolic bounds with linear-form ends and
  exactness, for the verifier: :func:`bound`, :class:`LinearInterval`;
* :mod:`.int_set` — symbolic intervals with TIR-expression ends
  (``IntSet``/``EvalSet``) for region inference: :func:`eval_interval`,
  :class:`IntervalSet`;
* :mod:`.iter_map` — iteration maps (``DetectIterMap``):
  :func:`detect_iter_map`, :class:`IterSum`, :class:`IterSplit`,
  :func:`is_affine_binding`, :func:`tiled_loops`, and the binding normaliser
  :func:`simplify_index`;
* :mod:`.simplify` — expression simplification exact under wrap-around:
  :func:`simplify_expr`;
* :mod:`.prove` — :func:`can_prove` over variable ranges and facts;
* :mod:`.region` — bound inference (:func:`bound_region`), region cover
  (:func:`region_covers`) and the order of two region ends
  (:func:`index_at_most`).
"""

from __future__ import annotations

from .const_bound import UNBOUNDED, ConstInterval, const_interval, expr_bounds
from .int_set import Interval as IntervalSet
from .int_set import eval_interval
from .iter_map import (
    IterSplit, IterSum, detect_iter_map, is_affine_binding, loop_ranges, simplify_index, tiled_loops,
)
from .linear import Affine, Linear, affine_expr, affine_form, prove_equal, simplify_affine
from .linear_bound import LinearInterval, bound, const_bounds, let_interval, loop_interval, surely_at_most
from .prove import can_prove
from .region import bound_region, index_at_most, region_covers, region_ranges
from .simplify import simplify_expr
from .terms import fits, wrap

__all__ = [
    "Affine", "ConstInterval", "IntervalSet", "IterSplit", "IterSum", "Linear", "LinearInterval",
    "UNBOUNDED", "affine_expr", "affine_form", "bound", "bound_region", "can_prove",
    "const_bounds", "const_interval", "detect_iter_map", "eval_interval", "expr_bounds", "fits", "index_at_most",
    "is_affine_binding", "let_interval", "loop_interval", "loop_ranges", "prove_equal",
    "region_covers", "region_ranges", "simplify_affine", "simplify_expr", "simplify_index",
    "surely_at_most", "tiled_loops", "wrap",
]
