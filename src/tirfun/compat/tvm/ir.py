"""``tvm.ir``: modules, structural equality, ranges, the types of
variables (``PrimType`` and ``PointerType``), and ``Op.get`` for a
script's ``T.Call``.

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


class _PointerTypeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _PointerType)


class PointerType(metaclass=_PointerTypeMeta):
    """TVM's ``PointerType(PrimType(dtype), scope)``: what a handle points
    to; every tirfun PointerType is an instance."""

    def __new__(cls, element_type, storage_scope: str = "") -> _PointerType:
        return _PointerType(PrimType(element_type), storage_scope or "global")


class Op:
    """TVM's operators, as a script names them: ``tvm.ir.Op.get(name)`` is
    the operator's name, which ``T.Call`` takes (tirfun's calls name their
    operator by string)."""

    @staticmethod
    def get(op_name: str) -> str:
        """The operator ``op_name`` (``"tir.tvm_call_packed"``)."""
        if not isinstance(op_name, str):
            from ...errors import ArgumentError

            raise ArgumentError(f"Op.get takes an operator's name, got {op_name!r}")
        return op_name



__all__ = ["IRModule", "Node", "PrimExpr", "Range", "structural_equal",
           "assert_structural_equal", "structural_hash", "PrimType", "PointerType", "Op"]
