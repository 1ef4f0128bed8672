"""``tvm.script.parser``: TVM's parser package, whose ``tir`` and ``ir``
(``from tvm.script.parser import tir as T``) are tirfun's script
namespaces, as ``tvm.script``'s are."""

from ...script import ir, tir

__all__ = ["ir", "tir"]
