"""``tvm.ir``: modules, structural equality, ranges and the types of
variables (``PrimType`` and ``PointerType``).

``Range`` is TVM's: ``Range(begin, end)`` is ``[begin, end)`` and
``Range(n)`` is ``[0, n)``; it makes tirfun's Range, whose fields are
``min`` and ``extent`` (every tirfun Range is an instance)."""

from __future__ import annotations

from ...analysis.equality import assert_structural_equal, structural_equal, structural_hash
from ...nodes import IntImm, IRModule, Node, PrimExpr
from ...nodes import Range as _Range
from ...nodes import PointerType as _PointerType
from ...nodes.dtype import DataType


class _RangeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _Range)


class Range(metaclass=_RangeMeta):
    """TVM's ``tvm.ir.Range(begin, end=None)``: ``[begin, end)``, or
    ``[0, begin)`` without an end."""

    def __new__(cls, begin, end=None, span=None) -> _Range:
        if end is None:
            zero = IntImm(begin.dtype, 0) if isinstance(begin, PrimExpr) else 0
            return _Range(zero, begin)
        return _Range.from_begin_end(begin, end)

    from_min_extent = staticmethod(_Range.from_min_extent)


class _ScalarTypeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, DataType)


class PrimType(metaclass=_ScalarTypeMeta):
    """TVM's ``PrimType(dtype)``, the type of a scalar: tirfun types a
    scalar by its DataType, which ``PrimType(...)`` returns (``"float"``
    is float32, as in TVM); every DataType is an instance."""

    def __new__(cls, dtype) -> DataType:
        return DataType("float32" if dtype == "float" else dtype)


def PointerType(element_type, storage_scope: str = "") -> _PointerType:  # noqa: N802
    """TVM's ``PointerType(PrimType(dtype), scope)``: what a handle points to."""
    return _PointerType(PrimType(element_type), storage_scope or "global")


__all__ = ["IRModule", "Node", "PrimExpr", "Range", "structural_equal",
           "assert_structural_equal", "structural_hash", "PrimType", "PointerType"]
