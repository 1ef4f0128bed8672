"""``tvm.target``: where code runs."""

from ...runtime import Target

__all__ = ["Target"]
