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
    of their variables (as ``tvm.arith.Analyzer().can_prove_equal``)."""
    from ...errors import TirfunError
    from .arith import Analyzer

    if not Analyzer().can_prove_equal(lhs, rhs):
        raise TirfunError(f"the expressions are not equal: {lhs} and {rhs}")


__all__ = ["assert_allclose", "assert_prim_expr_equal"]
