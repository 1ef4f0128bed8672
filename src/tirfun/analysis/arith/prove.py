"""Proofs about integer conditions (TVM's ``Analyzer::CanProve``).

:func:`can_prove` answers True only when a condition holds for every value
of its variables within their ranges, wrap-around included: a proof never
relies on unbounded integers where the dtype wraps (``x + 1 > x`` is not
proven for an int32 ``x`` that may be ``2**31 - 1``). False means "not
proven", not "false".

The reasoning is cheap and layered, as TVM's is: constant-interval bounds
(:func:`~tirfun.analysis.arith.const_bound.const_interval`) through the
simplifier (:mod:`~tirfun.analysis.arith.simplify`), and a modular rule for
(in)equalities: ``sum(k_i * x_i) + c`` is never 0 modulo ``2**bits`` when
``gcd(k_i, 2**bits)`` does not divide ``c`` (so ``i * 4 + 2 != j * 8`` holds
for every ``i``, ``j``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from ...nodes import EQ, GE, GT, LE, LT, NE, And, Call, IntImm, Max, Min, Not, Or, PrimExpr, Range, Sub, Var
from .const_bound import ConstInterval, const_interval
from .linear import Affine
from .simplify import ExprSimplifier, is_true

Assumptions = Mapping[Var, "Range | tuple[int | None, int | None]"]
"""Variable -> its domain: a Range (a loop's ``min`` and ``extent``, which may
mention earlier variables of the mapping) or an inclusive ``(lo, hi)``."""


def const_env(assumptions: Assumptions | None) -> dict[Var, ConstInterval]:
    """Constant intervals of the variables of ``assumptions``, in order (a
    Range may be symbolic in the variables before it)."""
    env: dict[Var, ConstInterval] = {}
    for var, dom in (assumptions or {}).items():
        if isinstance(dom, Range):
            mlo, mhi = const_interval(dom.min, env)
            _, ehi = const_interval(dom.extent, env)
            hi = None if mhi is None or ehi is None else mhi + ehi - 1
            env[var] = (mlo, hi)
        else:
            env[var] = (dom[0], dom[1])
    return env


def can_prove(cond: PrimExpr, assumptions: Assumptions | None = None,
              facts: Iterable[PrimExpr] = ()) -> bool:
    """Whether the boolean ``cond`` holds for every value of its variables
    within ``assumptions`` (see :data:`Assumptions`; a missing variable takes
    any value of its dtype) and wherever every condition of ``facts`` holds.

    ``facts`` of the form ``var < e``, ``var <= e``, ``var > e``, ``var >= e``
    or ``var == e`` (``e`` bounded by the assumptions) narrow the range of
    ``var``; other facts are not used.
    """
    env = const_env(assumptions)
    for fact in facts:
        _narrow(env, fact)
    return _prove(cond, env, assumptions or {})


def _prove(cond: PrimExpr, env: dict, assumptions: Assumptions) -> bool:
    if isinstance(cond, IntImm):
        # a condition folded to a constant as it was built (``0 > 0``):
        # what the simplifier, which keeps a constant, would answer
        return is_true(cond)
    if isinstance(cond, And):
        return _prove(cond.a, env, assumptions) and _prove(cond.b, env, assumptions)
    if isinstance(cond, Or) and (_prove(cond.a, env, assumptions) or _prove(cond.b, env, assumptions)):
        return True
    if _within_own_domain(cond, assumptions):
        return True
    if _reflexive(cond):
        return True
    if _by_min_max(cond, env, assumptions):
        return True
    if isinstance(cond, NE) and _never_equal(cond.a, cond.b):
        return True
    if isinstance(cond, Not) and isinstance(cond.a, EQ) and _never_equal(cond.a.a, cond.a.b):
        return True
    return is_true(ExprSimplifier(dict(env)).expr(cond))


def _reflexive(cond: PrimExpr) -> bool:
    """``a >= a``, ``a <= a`` or ``a == a`` on one integer expression without
    calls: true for every value, wrap-around included (the simplifier does
    not fold it where ``a`` is symbolic, ``n - 1 >= n - 1``; a float may be
    NaN, and a call need not give one value twice)."""
    from ..traversal import iter_children

    if not isinstance(cond, (GE, LE, EQ)) or cond.a != cond.b or not cond.a.dtype.is_integer:
        return False
    stack = [cond.a]
    while stack:
        n = stack.pop()
        if isinstance(n, Call):
            return False
        stack.extend(iter_children(n))
    return True


def _by_min_max(cond: PrimExpr, env: dict, assumptions: Assumptions) -> bool:
    """An order between expressions where one side is a ``min`` or a
    ``max``, proved through its operands: ``min(x, y) <= a`` when ``x <= a``
    or ``y <= a``, ``a <= min(x, y)`` when both hold, and the reverse for
    ``max`` (so ``min((m + 3) // 4 * 4 - 1, m - 1) <= m - 1`` for an
    unknown ``m``, which constant bounds do not decide)."""
    if isinstance(cond, (LE, LT)):
        small, big, kind = cond.a, cond.b, type(cond)
    elif isinstance(cond, (GE, GT)):
        small, big, kind = cond.b, cond.a, LE if isinstance(cond, GE) else LT
    else:
        return False
    if not small.dtype.is_integer:
        return False  # a float min or max of a NaN is NaN, below nothing

    def holds(a, b):
        return _prove(kind(a, b), env, assumptions)

    if isinstance(small, Min):
        return holds(small.a, big) or holds(small.b, big)
    if isinstance(small, Max):
        return holds(small.a, big) and holds(small.b, big)
    if isinstance(big, Max):
        return holds(small, big.a) or holds(small, big.b)
    if isinstance(big, Min):
        return holds(small, big.a) and holds(small, big.b)
    return False


def _within_own_domain(cond: PrimExpr, assumptions: Assumptions) -> bool:
    """``v < min + extent``, ``v <= min + extent - 1``, ``v >= min`` or
    ``v > min - 1`` for a variable ``v`` whose domain is the Range ``(min,
    extent)``, the bound written in any form with the same linear form (so
    ``i < n - 1 + 1`` for ``i`` in ``range(n)``): what the loop itself
    guarantees, also where the domain is symbolic and no constant bound
    decides it. Equal linear forms are equal values in the dtype's
    wrap-around too; what is assumed, as for the loop itself, is that its
    end ``min + extent`` is a value of the dtype."""
    flip = {LT: GT, LE: GE, GT: LT, GE: LE}
    cls = type(cond)
    if cls not in flip:
        return False
    v, bound = cond.a, cond.b
    if not (isinstance(v, Var) and isinstance(assumptions.get(v), Range)):
        v, bound, cls = cond.b, cond.a, flip[cls]
        if not (isinstance(v, Var) and isinstance(assumptions.get(v), Range)):
            return False
    dom = assumptions[v]
    if not (v.dtype == bound.dtype == dom.min.dtype == dom.extent.dtype):
        return False
    form, start = Affine.of(bound), Affine.of(dom.min)
    if form is None or start is None:
        return False
    if cls in (LT, LE):
        diff = form.plus(start.plus(Affine.of(dom.extent)), -1)
        return diff.is_const and diff.const == (0 if cls is LT else -1)
    diff = form.plus(start, -1)
    return diff.is_const and diff.const == (0 if cls is GE else -1)


def _never_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """``a != b`` for every value, by the modular rule (module docstring)."""
    dt = a.dtype
    if not dt.is_integer or dt.lanes != 1 or b.dtype != dt:
        return False
    diff = Affine.of(Sub(a, b))
    g = 1 << dt.bits
    for _, k in diff.terms:
        g = math.gcd(g, k)
    return diff.const % g != 0


def _narrow(env: dict, fact: PrimExpr) -> None:
    if isinstance(fact, And):
        _narrow(env, fact.a)
        _narrow(env, fact.b)
        return
    flip = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}
    cls = type(fact)
    if cls not in flip:
        return
    a, b = fact.a, fact.b
    if not isinstance(a, Var):
        if not isinstance(b, Var):
            return
        a, b, cls = b, a, flip[cls]
    if not a.dtype.is_integer or a.dtype.lanes != 1:
        return
    blo, bhi = const_interval(b, env)
    if blo is None:
        return
    lo, hi = env.get(a, (None, None))
    dlo, dhi = a.dtype.min_value(), a.dtype.max_value()
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    if cls is LT:
        hi = min(hi, bhi - 1)
    elif cls is LE:
        hi = min(hi, bhi)
    elif cls is GT:
        lo = max(lo, blo + 1)
    elif cls is GE:
        lo = max(lo, blo)
    else:
        lo, hi = max(lo, blo), min(hi, bhi)
    env[a] = (lo, hi)


__all__ = ["can_prove", "const_env", "Assumptions"]
