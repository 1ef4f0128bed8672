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

import inspect

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


def ir_module(cls=None, *, check_well_formed: bool = True):
    """Class decorator: the IRModule of the class's ``@T.prim_func`` methods,
    in definition order. A function that calls another through the class
    name (``Module.sub(...)``) is parsed here, once every function of the
    class is declared. ``@I.ir_module(check_well_formed=False)``, as in
    TVM, skips the well-formedness check of every function of the class."""
    if cls is None:
        if not isinstance(check_well_formed, bool):
            raise ParseError("I.ir_module: check_well_formed= must be True or False")
        return lambda c: _module_of(c, check_well_formed)
    return _module_of(cls, check_well_formed)


def _module_of(cls, check_well_formed: bool) -> IRModule:
    if not isinstance(cls, type):
        raise ParseError(f"@I.ir_module decorates a class, got {type(cls).__name__}")
    from .parser_values import DeferredPrimFunc

    functions = {name: value for name, value in vars(cls).items()
                 if isinstance(value, (PrimFunc, DeferredPrimFunc))}
    if any(isinstance(f, DeferredPrimFunc) for f in functions.values()):
        from .parser_core import module_functions, parse_python_function

        declared = module_functions(cls.__name__, functions)
        functions = {name: f if isinstance(f, PrimFunc) else parse_python_function(
            f.func, private=f.private, check_well_formed=f.check_well_formed if check_well_formed else False,
            caller_locals=f.caller_locals, module=declared) for name, f in functions.items()}
    plain = [name for name, value in vars(cls).items()
             if inspect.isfunction(value) and not name.startswith("__")]
    if plain:
        # a forgotten decorator: TVM refuses the function too
        raise ParseError(f"@I.ir_module: {cls.__name__}.{plain[0]} is not a @T.prim_func function",
                         hint="decorate it with @T.prim_func")
    # a class with no function at all is an empty module, as in TVM
    return IRModule(functions, vars(cls).get(_ATTRS_KEY, {}))
