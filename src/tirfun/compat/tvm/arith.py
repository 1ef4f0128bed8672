"""``tvm.arith``: an ``Analyzer`` over tirfun's arithmetic: exact
simplification and proofs from the ranges it is told of (``bind`` a
variable to a Range, or ``update`` it)."""

from __future__ import annotations

from ...analysis.arith import can_prove, prove_equal, simplify_expr
from ...nodes import EQ, IntImm, Range, to_expr


class Analyzer:
    """TVM's ``tvm.arith.Analyzer``: ``simplify``, ``can_prove`` and
    ``can_prove_equal`` under the ranges given to ``bind``."""

    def __init__(self):
        self._ranges: dict = {}

    def bind(self, var, value) -> None:
        """Tell the analyzer that ``var`` lies in ``value`` (a Range)."""
        if isinstance(value, Range):
            self._ranges[var] = value

    update = bind

    def _env(self) -> dict:
        out = {}
        for var, rng in self._ranges.items():
            lo, ext = rng.min, rng.extent
            if isinstance(lo, IntImm) and isinstance(ext, IntImm):
                out[var] = (lo.value, lo.value + ext.value - 1)
        return out

    def simplify(self, expr, steps: int = 2):
        """``expr`` simplified, exactly (the value is kept for every value
        of its variables within their ranges)."""
        return simplify_expr(to_expr(expr), self._env())

    def can_prove(self, cond) -> bool:
        """Whether ``cond`` holds for every value of its variables."""
        cond = self.simplify(cond)
        if isinstance(cond, IntImm):
            return bool(cond.value)
        return can_prove(cond, self._ranges)

    def can_prove_equal(self, lhs, rhs) -> bool:
        """Whether ``lhs`` and ``rhs`` are equal for every value."""
        lhs, rhs = to_expr(lhs), to_expr(rhs)
        if prove_equal(lhs, rhs):
            return True
        diff = self.simplify(lhs - rhs)
        if isinstance(diff, IntImm):
            return diff.value == 0
        return can_prove(EQ(lhs, rhs), self._ranges)


__all__ = ["Analyzer"]
