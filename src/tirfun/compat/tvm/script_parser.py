"""``tvm.script.parser``: TVM's parser package, whose ``tir`` and ``ir``
(``from tvm.script.parser import tir as T``) are tirfun's script
namespaces, as ``tvm.script``'s are, with their decorators
``ir_module`` and ``prim_func``."""

from ...script import ir, ir_module, prim_func, tir

__all__ = ["ir", "tir", "ir_module", "prim_func"]
