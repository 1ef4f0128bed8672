"""``tvm.testing``: the comparison helper of TVM's tests and tutorials."""

from __future__ import annotations


def _as_numpy(value):
    import numpy as np

    numpy = getattr(value, "numpy", None)
    return np.asanyarray(numpy() if callable(numpy) else value)


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """numpy's ``assert_allclose`` with TVM's default tolerances; tirfun
    arrays are compared by their values."""
    import numpy as np

    np.testing.assert_allclose(_as_numpy(actual), _as_numpy(desired), rtol=rtol, atol=atol,
                               verbose=True)


def assert_prim_expr_equal(lhs, rhs) -> None:
    """TVM's check that two integer expressions are equal for every value
    of their variables: their difference simplifies to 0."""
    from ...analysis.arith.simplify import simplify_expr
    from ...errors import TirfunError
    from ...nodes import IntImm, to_expr

    lhs, rhs = to_expr(lhs), to_expr(rhs)
    diff = simplify_expr(lhs - rhs)
    if not (isinstance(diff, IntImm) and diff.value == 0):
        raise TirfunError(f"the expressions are not equal: {lhs} and {rhs} "
                          f"(their difference simplifies to {diff})")


__all__ = ["assert_allclose", "assert_prim_expr_equal"]
