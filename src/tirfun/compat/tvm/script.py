"""``tvm.script``: the TVMScript namespaces (``from tvm.script import ir as
I, tir as T``) and ``from_source``, tirfun's own."""

from ...script import from_source, ir, ir_module, prim_func, tir

__all__ = ["ir", "tir", "ir_module", "prim_func", "from_source"]
