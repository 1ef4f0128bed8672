"""``tvm.ir``: modules, structural equality, ranges and the types of
variables (``PrimType`` and ``PointerType``)."""

from __future__ import annotations

from ...analysis.equality import assert_structural_equal, structural_equal, structural_hash
from ...nodes import IRModule, Node, PrimExpr, Range
from ...nodes import PointerType as _PointerType
from ...nodes.dtype import DataType


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
