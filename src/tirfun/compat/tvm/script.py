"""``tvm.script``: the TVMScript namespaces (``from tvm.script import ir as
I, tir as T``, also reached as ``tvm.script.parser.tir``) and
``from_source``, tirfun's own."""

from ...script import from_source, ir, ir_module, prim_func, tir
from . import script_parser as parser

__all__ = ["ir", "tir", "ir_module", "prim_func", "from_source", "parser"]
