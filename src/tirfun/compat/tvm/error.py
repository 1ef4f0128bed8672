"""``tvm.error``: TVM's error classes. Every error tirfun raises on purpose
is a :class:`~tirfun.errors.TirfunError`, which stands for TVM's base
``TVMError``."""

from ...errors import TirfunError as TVMError

__all__ = ["TVMError"]
