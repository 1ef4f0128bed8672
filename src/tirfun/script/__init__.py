"""TVMScript for tirfun: the ``T`` and ``I`` namespaces, the decorators,
and :func:`from_source`.

    from tirfun.script import tir as T, ir as I

    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] + T.float32(1)

The parser interprets the TVMScript grammar itself: source text is never
handed to ``eval`` or ``exec``, so :func:`from_source` of untrusted text runs
no Python code. Printing is :func:`tirfun.script.printer.to_script`, which
``node.script()`` calls; it is loaded only when used.
"""

from __future__ import annotations

from . import ir, tir
from .ir import ir_module
from .tir import prim_func

__all__ = ["tir", "ir", "ir_module", "prim_func", "from_source"]


def from_source(text: str, *, filename: str = "<string>", check_well_formed: bool | str = True):
    """Parse TVMScript text: an IRModule for a source holding an
    ``@I.ir_module`` class, a PrimFunc for a source holding one
    ``@T.prim_func`` function.

    Raises :class:`~tirfun.errors.ParseError` for text that is not valid
    TVMScript, and (as TVM does) :class:`~tirfun.errors.VerifyError` for a
    function that is not well formed unless ``check_well_formed=False``;
    ``check_well_formed="strict"`` checks the lint rules too (see
    :func:`~tirfun.analysis.verify.verify`), each error located in the text.
    """
    from .parser_core import parse_source

    return parse_source(text, filename=filename, check_well_formed=check_well_formed)
