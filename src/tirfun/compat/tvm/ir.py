"""``tvm.ir``: modules and structural equality."""

from ...analysis.equality import assert_structural_equal, structural_equal, structural_hash
from ...nodes import IRModule, Node, PrimExpr, Range

__all__ = ["IRModule", "Node", "PrimExpr", "Range", "structural_equal",
           "assert_structural_equal", "structural_hash"]
