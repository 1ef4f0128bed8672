"""``tvm.ir``: modules, structural equality, and the types of a handle
(``PointerType``; ``PrimType(dtype)`` is the dtype itself, as tirfun keeps
an element type), and ``Op.get`` for a script's ``T.Call``."""

from ...analysis.equality import assert_structural_equal, structural_equal, structural_hash
from ...nodes import DataType, IRModule, Node, PointerType, PrimExpr, Range

PrimType = DataType


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
           "assert_structural_equal", "structural_hash", "PointerType", "PrimType", "Op"]
