"""Integer constants and the term algebra every linear form is built on.

A *term list* is a tuple of ``(term, coefficient)`` pairs with no repeated
term and no zero coefficient; a term is any integer expression that a form
treats as one unknown (a variable, a load, a non-affine sub-expression).
"""

from __future__ import annotations

from ...nodes import IntImm, PrimExpr
from ...nodes.dtype import DataType


def fits(dtype: DataType, value: int) -> bool:
    """Whether ``value`` is representable in the integer ``dtype``."""
    return dtype.min_value() <= value <= dtype.max_value()


def wrap(dtype: DataType, value: int) -> int:
    """``value`` reduced modulo ``2**bits`` into the range of the integer
    ``dtype``: what TIR's integer arithmetic computes."""
    bits = dtype.bits
    value &= (1 << bits) - 1
    if dtype.is_int and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def int_value(e) -> int | None:
    """The value of an integer literal that is not a boolean, else None."""
    # asked very often: the type by identity, the dtype's spelling compared in C
    return e.value if type(e) is IntImm and e.dtype != "bool" else None


def as_exprs(a: int | PrimExpr, b: int | PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """``a`` and ``b`` as expressions, a Python int made a literal of the
    other's dtype: two extents or scales of which at least one is an
    expression (of sizes), to compare or combine."""
    if isinstance(a, int):
        a = IntImm(b.dtype, a)
    elif isinstance(b, int):
        b = IntImm(a.dtype, b)
    return a, b


def const_int(e: PrimExpr) -> int | None:
    """The value of an integer constant (booleans included), else None."""
    return e.value if isinstance(e, IntImm) else None


def collect_terms(terms_a: tuple, terms_b: tuple, sign: int = 1) -> dict:
    """``terms_a + sign * terms_b`` as a term -> coefficient dict, like terms
    collected, in order of first appearance, zero coefficients dropped.
    ``terms_a`` must not repeat a term (pass ``()`` and the concatenation as
    ``terms_b`` to collect a sequence that may)."""
    acc = dict(terms_a)
    for term, c in terms_b:
        acc[term] = acc.get(term, 0) + sign * c
    return {t: c for t, c in acc.items() if c != 0}


def scale_terms(terms: tuple, k: int) -> tuple:
    """``(term, coeff)`` pairs with every coefficient multiplied by ``k``."""
    return tuple((t, c * k) for t, c in terms)


def corners(x_lo: int, x_hi: int, y_lo: int, y_hi: int) -> tuple[int, int]:
    """The range of ``x * y`` for ``x`` in ``[x_lo, x_hi]``, ``y`` in ``[y_lo, y_hi]``."""
    products = [x_lo * y_lo, x_lo * y_hi, x_hi * y_lo, x_hi * y_hi]
    return min(products), max(products)


__all__ = ["fits", "wrap", "int_value", "const_int", "collect_terms", "scale_terms", "corners"]
