"""Exact references for tests that check results against numpy.

numpy sums in its own order (pairwise, or through BLAS), so its float
results differ from a loop's in the last bits. These helpers fold in the
order a TensorIR loop does, one rounding per operation in the array's
dtype, starting from the reducer's identity, so results compare bit for bit.
"""

from __future__ import annotations

import numpy as np


def ordered_reduce(op, values: np.ndarray, axes, identity) -> np.ndarray:
    """Fold ``op`` over ``axes`` (outer axis first, as nested loops run)."""
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    moved = np.moveaxis(values, axes, range(len(axes)))
    flat = moved.reshape((-1,) + moved.shape[len(axes):])
    acc = np.full(flat.shape[1:], identity, dtype=values.dtype)
    for item in flat:
        acc = op(acc, item).astype(values.dtype)
    return acc


def ordered_sum(values: np.ndarray, axes) -> np.ndarray:
    return ordered_reduce(np.add, values, axes, 0)


def ordered_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` over the last two axes, summing k from 0 up."""
    products = a[..., :, :, None] * b[..., None, :, :]
    return ordered_sum(products, products.ndim - 2)


def libm(fn, values: np.ndarray) -> np.ndarray:
    """``fn`` (from ``math``) on every element in double precision, rounded
    once to the array's dtype: how the interpreter and the compiled code
    compute a float32 math intrinsic."""
    return np.vectorize(lambda x: fn(float(x)), otypes=[np.float64])(values).astype(values.dtype)


__all__ = ["ordered_reduce", "ordered_sum", "ordered_matmul", "libm"]
