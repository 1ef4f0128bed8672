"""The ``I`` namespace of TVMScript: ``from tirfun.script import ir as I``.

``@I.ir_module`` turns a class whose methods are ``@T.prim_func`` functions
into an :class:`~tirfun.nodes.IRModule` keyed by the method names::

    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32")):
            ...
"""

from __future__ import annotations

from ..errors import ParseError
from ..nodes import IRModule, PrimFunc

__all__ = ["ir_module", "module_attrs"]

# the class-namespace entry where module_attrs leaves the attributes
_ATTRS_KEY = "__tirfun_module_attrs__"


def module_attrs(attrs: dict) -> None:
    """``I.module_attrs({...})`` in the body of an ``@I.ir_module`` class:
    the attributes of the module."""
    import sys

    if not isinstance(attrs, dict):
        raise ParseError(f"I.module_attrs takes a dict, got {type(attrs).__name__}")
    namespace = sys._getframe(1).f_locals  # the class body being executed
    if _ATTRS_KEY in namespace:
        raise ParseError("I.module_attrs is given twice in the module")
    namespace[_ATTRS_KEY] = dict(attrs)


def ir_module(cls) -> IRModule:
    """Class decorator: the IRModule of the class's ``@T.prim_func`` methods,
    in definition order."""
    if not isinstance(cls, type):
        raise ParseError(f"@I.ir_module decorates a class, got {type(cls).__name__}")
    functions = {name: value for name, value in vars(cls).items() if isinstance(value, PrimFunc)}
    if not functions:
        raise ParseError(f"@I.ir_module: class {cls.__name__} defines no @T.prim_func function")
    return IRModule(functions, vars(cls).get(_ATTRS_KEY, {}))
