"""Names while parsing: nested scopes, unique names, outside values.

* :class:`Scopes` is the chain of lexical scopes of a function body (the
  function, each loop, block and ``with`` body).
* :class:`Namer` gives every bound name of a function a unique spelling: the
  name as written when it is free, else ``name_1``, ``name_2``... skipping
  every name in use and every identifier of the source, so the result
  depends only on the source.
* :func:`admit` checks a value taken from the enclosing Python scope of a
  decorated function: only plain values (numbers, strings, dtypes,
  expressions, buffers, PrimFuncs, tuples of those) and the script
  namespaces may enter.
"""

from __future__ import annotations

import builtins
import keyword
import sys
import types
from typing import Any

from ..errors import NodeError
from ..nodes import Buffer, IRModule, PrimExpr, PrimFunc
from ..nodes.dtype import DataType
from .parser_macros import TextMacro
from .parser_python import Macro, PyValue
from .parser_values import Builtin, DTypeCtor, MetaVar, ModuleFunctions, Namespace, article

MISSING = object()


class Namer:
    """Unique names for one function (state lives for one parse)."""

    def __init__(self, reserved: frozenset[str]):
        self.reserved = reserved
        self.taken: set[str] = set()

    def fresh(self, base: str) -> str:
        """``base`` if free, else the first free ``base_<k>``; the result is
        recorded as taken."""
        if not base.isidentifier() or keyword.iskeyword(base):
            base = "v"
        if base not in self.taken:
            self.taken.add(base)
            return base
        k = 1
        while True:
            candidate = f"{base}_{k}"
            if candidate not in self.taken and candidate not in self.reserved:
                self.taken.add(candidate)
                return candidate
            k += 1

    def claim(self, name: str) -> bool:
        """Record ``name`` as taken; False when it already was."""
        if name in self.taken:
            return False
        self.taken.add(name)
        return True


class Scopes:
    """Nested name tables; the innermost is searched first."""

    def __init__(self, outer: dict[str, Any]):
        self.outer = outer
        self.frames: list[dict[str, Any]] = [{}]

    def push(self) -> None:
        """Open a nested scope."""
        self.frames.append({})

    def pop(self) -> None:
        """Close the innermost scope."""
        self.frames.pop()

    def lookup(self, name: str) -> Any:
        """The value of ``name``, innermost first, else from outside (or MISSING)."""
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return self.outer.get(name, MISSING)

    def defined_here(self, name: str) -> bool:
        """True when the innermost scope binds ``name``."""
        return name in self.frames[-1]

    def define(self, name: str, value: Any) -> None:
        """Bind ``name`` in the innermost scope."""
        self.frames[-1][name] = value

    def binds(self, value: Any) -> bool:
        """True when some name of the function's scopes stands for ``value``
        itself (the same object, not an equal one)."""
        return any(v is value for frame in self.frames for v in frame.values())


# --------------------------------------------------------------------------
# values from the enclosing Python scope

_MAX_SEQUENCE = 10_000


class Refused(Exception):
    """Raised by :func:`admit` with the reason a value cannot be used."""


def admit(value: Any, depth: int = 0) -> Any:
    """The script value for a Python value, or :class:`Refused`."""
    from . import ir as ir_module
    from . import tir as tir_module

    if value is None or isinstance(value, (bool, int, float, str, DataType)):
        return value
    if isinstance(value, (PrimExpr, Buffer, PrimFunc, IRModule)):
        return value
    if isinstance(value, (Namespace, Builtin, DTypeCtor, MetaVar, Macro, TextMacro, ModuleFunctions)):
        return value
    if isinstance(value, types.ModuleType):
        ns = MODULE_NAMESPACES.get(value.__name__)
        if ns is not None:
            return Namespace(ns)
        raise Refused(f"the module {value.__name__}")
    if isinstance(value, (tuple, list)):
        if depth > 8 or len(value) > _MAX_SEQUENCE:
            raise Refused("a sequence that is too large or too deeply nested")
        items = [admit(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    module = type(value).__module__ or ""
    if module.startswith("numpy"):
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0 and hasattr(value, "dtype"):
            return value.item()  # numpy scalar
        name = getattr(value, "name", None)
        if isinstance(name, str) and not hasattr(value, "shape"):
            try:
                return DataType(name)  # a numpy dtype
            except NodeError:
                pass
        raise Refused(f"a numpy {type(value).__name__}")
    if isinstance(value, type) and getattr(value, "__module__", "").startswith("numpy"):
        try:
            return DataType(value.__name__)  # np.float32 used as a dtype
        except NodeError:
            raise Refused(f"the numpy type {value.__name__}") from None
    if callable(value) or value is tir_module.axis:
        resolved = tir_module.script_name_of(value)
        if resolved is not None:
            return resolved
        if value is getattr(ir_module, "ir_module", None):
            return Builtin("I.ir_module")
        if value is _target_class():
            # tvm.target.Target(...) in a function attribute: a target, as T.target
            return Builtin("tirfun.target.Target")
        name = getattr(value, "__name__", type(value).__name__)
        raise Refused(f"the Python function {name}")
    raise Refused(article(type(value).__name__))


def _target_class():
    from ..target import Target

    return Target


class RefusedValue:
    """Stands for a name of the enclosing scope whose value cannot enter."""

    def __init__(self, reason: str):
        self.reason = reason


class OuterEnv:
    """The names around a function: layers searched in order (closure,
    defining scope, globals; or a source's module-level names), then the
    script's own defaults (``range``, and ``T``/``I`` for source text).
    Values are admitted on first use. In a decorated function, as in
    Python, the names of Python's builtins (``len``, ``min``, ``int``...)
    come last.

    ``trusted`` is the single switch between the two ways of parsing: it is
    True only for a decorated function (the user's own Python), where a value
    that is not a script value enters as a
    :class:`~tirfun.script.parser_python.PyValue` that may be called; for
    text (``from_source``) it is False and such a value is refused."""

    def __init__(self, layers, defaults, trusted: bool = False):
        self.layers = list(layers)
        self.defaults = dict(defaults)
        self.trusted = trusted

    def get(self, name: str, default=None):
        """The admitted value of ``name`` (a RefusedValue when it cannot enter)."""
        for layer in self.layers:
            if name in layer:
                try:
                    return admit(layer[name])
                except Refused as why:
                    if self.trusted:
                        return PyValue(layer[name])
                    return RefusedValue(str(why))
        if name in self.defaults:
            return self.defaults[name]
        if self.trusted and not name.startswith("_") and hasattr(builtins, name):
            return PyValue(getattr(builtins, name))
        return default

    def __contains__(self, name: str) -> bool:
        return any(name in layer for layer in self.layers) or name in self.defaults or \
            (self.trusted and not name.startswith("_") and hasattr(builtins, name))


#: Python module names that stand for script namespaces
MODULE_NAMESPACES = {
    "tirfun.script.tir": "T",
    "tirfun.script.ir": "I",
    "tirfun.script": "script",
    "tirfun": "tirfun",
}

#: dotted import paths a script may import, and the namespace each names
IMPORTABLE = {
    "tirfun": "tirfun", "tvm": "tirfun",
    "tirfun.script": "script", "tvm.script": "script",
    "tirfun.script.tir": "T", "tvm.script.tir": "T", "tvm.script.tirx": "T",
    "tvm.script.parser.tir": "T",
    "tirfun.script.ir": "I", "tvm.script.ir": "I", "tvm.script.ir_builder.ir": "I",
    "tvm.script.parser.ir": "I",
}


def caller_namespace(depth: int) -> dict[str, Any]:
    """The local names of the frame ``depth`` levels above the caller."""
    frame = sys._getframe(depth + 1)
    try:
        return dict(frame.f_locals)
    finally:
        del frame
