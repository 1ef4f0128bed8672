"""``tvm.ir``: modules, structural equality, and the types of a handle
(``PointerType``; ``PrimType(dtype)`` is the dtype itself, as tirfun keeps
an element type)."""

from ...analysis.equality import assert_structural_equal, structural_equal, structural_hash
from ...nodes import DataType, IRModule, Node, PointerType, PrimExpr, Range

PrimType = DataType

__all__ = ["IRModule", "Node", "PrimExpr", "Range", "structural_equal",
           "assert_structural_equal", "structural_hash", "PointerType", "PrimType"]
