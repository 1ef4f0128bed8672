"""Parameter buffers' element offsets, bound to 0.

A parameter declared ``T.match_buffer(a, shape, offset_factor=1)`` gets an
offset variable of its own (``A_elem_offset``), as in TVM, where the
function's entry reads it from the argument's byte offset. tirfun passes
every array argument by the address of its first element, so the offset
is 0: this pass puts 0 in place of each such variable, everywhere the
function uses it (``A.elem_offset`` in an extern call included), before
the code generators, which take parameters at their data pointer, see it.
"""

from __future__ import annotations

from ..nodes import IntImm, IRModule, PrimFunc, Var
from ..rewrites.exprs import substitute
from ._util import map_funcs


def _func(func: PrimFunc) -> PrimFunc:
    zeros = {}
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None and isinstance(buf.elem_offset, Var):
            zeros[buf.elem_offset] = IntImm(buf.elem_offset.dtype, 0)
    if not zeros:
        return func
    return substitute(func, zeros)


def bind_param_offsets(mod: IRModule) -> IRModule:
    """``mod`` with each parameter buffer's element offset variable
    replaced by 0 (see the module)."""
    return map_funcs(mod, _func)


__all__ = ["bind_param_offsets"]
