"""The ``T`` namespace of TVMScript: ``from tirfun.script import tir as T``.

Use it as in TVM::

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)

``@T.prim_func`` reads the function's source (from its file, a notebook
cell, or any source registered with ``linecache``) and interprets it; the
body is never executed by Python. Inside, every ``T.`` name means what it
means in TVMScript (see :mod:`tirfun.script.parser_builtins`).

Outside a function a few names are also ordinary Python helpers, so that
annotations evaluate and values can be built directly: ``T.Buffer(shape,
dtype)`` makes a Buffer, ``T.int32(5)`` a typed constant, ``T.float32(x)`` a
cast, ``T.exp(x)`` and the other intrinsics build their call. Names that only
mean something inside a function (``T.block``, ``T.axis.spatial``...) raise
:class:`~tirfun.errors.ParseError` when called from Python.
"""

from __future__ import annotations

import builtins as _py
import enum as _enum
import sys
from typing import Any

from ..errors import ParseError
from ..nodes import Buffer as _BufferNode
from ..nodes import Cast as _CastNode
from ..nodes import PrimExpr, const, to_expr
from ..nodes import Var as _VarNode
from ..nodes.dtype import DataType
from ..tir import op as _op

__all__ = ["prim_func", "Buffer", "handle", "axis", "script_name_of", "meta_var", "macro"]


def prim_func(func=None, *, private: bool = False, check_well_formed: bool = True):
    """Decorator: parse a Python function written in TVMScript into a PrimFunc.

    ``@T.prim_func``, ``@T.prim_func(private=True)`` (no ``global_symbol``
    attribute) and ``@T.prim_func(check_well_formed=False)`` (skip the
    well-formedness check) are accepted. Names used by the function are
    looked up, as values, in its closure, the scope where it is defined and
    its module's globals.
    """
    from .parser_scope import caller_namespace

    def decorate(f, caller_locals):
        from ..errors import VerifyError
        from .parser_core import calls_its_module, in_class_body, parse_python_function
        from .parser_values import DeferredPrimFunc

        if calls_its_module(f, caller_locals):
            # it calls another function of its @I.ir_module class, which
            # may come later: the class parses it once all are declared
            return DeferredPrimFunc(f, private, check_well_formed, caller_locals)
        try:
            return parse_python_function(f, private=private, check_well_formed=check_well_formed,
                                         caller_locals=caller_locals)
        except VerifyError:
            if not in_class_body(caller_locals):
                raise
            # in an @I.ir_module class, the module's check_well_formed
            # decides, as TVM checks the module as a whole
            return DeferredPrimFunc(f, private, check_well_formed, caller_locals)

    if func is None:
        return lambda f: decorate(f, caller_namespace(1))
    if not callable(func):
        raise ParseError(f"@T.prim_func decorates a function, got {type(func).__name__}")
    return decorate(func, caller_namespace(1))


def _buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
            align=0, offset_factor=0, buffer_type="", axis_separators=None) -> _BufferNode:
    """A Buffer value, as ``T.Buffer`` evaluates in a parameter annotation."""
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    return _op.decl_buffer(tuple(shape), dtype, "buffer", data=data, strides=strides,
                           elem_offset=elem_offset, scope=scope,
                           data_alignment=-1 if align in (0, -1) else align,
                           offset_factor=0 if offset_factor in (0, 1) else offset_factor,
                           axis_separators=axis_separators)


class _Subscriptable:
    """A script function that TVM also lets one write with brackets, its
    older spelling: ``T.Buffer[(8,), "float32"]``, ``T.Ptr[T.float32]``
    (Python evaluates such a parameter annotation when it defines the
    function)."""

    def __init__(self, func, name: str, shape_first: bool):
        self._func = func
        self._shape_first = shape_first
        self.__doc__ = func.__doc__
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self._func(*args, **kwargs)

    def __getitem__(self, keys):
        if not isinstance(keys, tuple):
            return self._func(keys)
        if self._shape_first and len(keys) >= 2 and not isinstance(keys[1], str):
            return self._func(keys)  # a tuple of extents alone is the shape
        return self._func(*keys)

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


Buffer = _Subscriptable(_buffer, "Buffer", shape_first=True)


def handle(dtype=None, storage_scope: str = "global", *, is_size_var: bool = False) -> _VarNode:
    """A new handle variable (``T.handle`` as an annotation); given a dtype
    or a scope, it points to that (``T.handle("float32", "shared")``), as
    the same call declares one in a script."""
    from ..nodes import PointerType

    if dtype is None and storage_scope == "global":
        return _VarNode("handle", "handle")
    element = DataType("void") if dtype is None else DataType(dtype)
    return _VarNode("handle", "handle", PointerType(element, storage_scope))


def _dtype_function(name: str):
    dtype = DataType(name)

    def make(expr: Any = None, *, is_size_var: bool = False):
        if expr is None:
            return _VarNode("v", dtype)
        if isinstance(expr, str) and dtype.is_float:
            expr = _py.float(expr)
        if isinstance(expr, (_py.bool, _py.int, _py.float)):
            return const(expr, dtype)
        return to_expr(expr).astype(dtype)

    make.__name__ = make.__qualname__ = name
    make._script_name = f"T.{name}"
    make._dtype = dtype  # T.float32 where a dtype is expected (T.Ptr[T.float32])
    make.__doc__ = (f"``T.{name}()`` declares a {name} variable, ``T.{name}(v)`` is the {name} "
                    f"constant or conversion of ``v``.")
    return make


_DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "bfloat16")
for _name in _DTYPE_NAMES:
    globals()[_name] = _dtype_function(_name)
boolean = globals()["bool"]


def Cast(dtype, value) -> PrimExpr:  # noqa: N802
    """``T.Cast(dtype, value)``: a Cast node."""
    return _CastNode(DataType(dtype), to_expr(value))


def Select(condition, true_value, false_value) -> PrimExpr:  # noqa: N802
    """``T.Select(cond, a, b)``: both sides evaluated."""
    return _op.select(condition, true_value, false_value)


if_then_else = _op.if_then_else
min = _op.min  # noqa: A001
max = _op.max  # noqa: A001
floordiv = _op.floordiv
floormod = _op.floormod
truncdiv = _op.truncdiv
truncmod = _op.truncmod
abs = _op.abs  # noqa: A001
fabs = _op.abs
ldexp = _op.ldexp
call_extern = _op.call_extern
call_intrin = _op.call_intrin
address_of = _op.address_of
ret = _op.ret
cast = _op.cast
ceildiv = _op.ceildiv
likely = _op.likely
assume = _op.assume
comm_reducer = _op.comm_reducer
from ..nodes.target import target  # noqa: E402 - T.target, a TargetConfig

# the expression nodes T names after TVM's classes: constructed directly from
# Python too, as TVM's T.IntImm(...) is tir.IntImm
from .. import nodes as _nodes  # noqa: E402

for _name in ("IntImm", "FloatImm", "StringImm", "Broadcast", "Ramp", "Add", "Sub", "Mul", "Div",
              "Mod", "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE",
              "And", "Or", "Not"):
    globals()[_name] = getattr(_nodes, _name)
for _name in _op.FLOAT_UNARY + _op.FLOAT_BINARY + _op.FLOAT_PREDICATES + _op.INT_UNARY:
    globals()[_name] = getattr(_op, _name)

def meta_var(value):
    """``T.meta_var(value)``: bind a name to ``value`` itself (no let) inside
    a function; the name then stands for the value wherever it is used."""
    from .parser_values import MetaVar

    return MetaVar(value)


def macro(*args, hygienic: bool = True):
    """``@T.macro`` / ``@T.macro(hygienic=False)``: a Python function whose
    TVMScript body is expanded where a ``@T.prim_func`` calls it. A hygienic
    macro resolves the names of its body where it is defined; a non-hygienic
    one where it is called."""
    from .parser_python import Macro

    if not isinstance(hygienic, _py.bool):
        raise ParseError("T.macro(hygienic=...) takes True or False")
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], _py.bool):
        return Macro(args[0], hygienic)
    if args:
        raise ParseError("invalid use of T.macro; write @T.macro, @T.macro() or "
                         "@T.macro(hygienic=True|False)")
    return lambda func: Macro(func, hygienic)


def Var(name: str, dtype="int32") -> _VarNode:  # noqa: N802
    """``T.Var(name, dtype)``: a variable node, as ``tvm.tir.Var``."""
    return _VarNode(name, DataType(dtype))


def SizeVar(name: str, dtype="int32") -> _VarNode:  # noqa: N802
    """``T.SizeVar(name, dtype)``: a variable that holds a size (tirfun has
    no separate node: sizes are checked against their use)."""
    return _VarNode(name, DataType(dtype))


def ptr(dtype, storage_scope: str = "global", is_size_var: bool = False) -> _VarNode:
    """``T.ptr(dtype, scope)``: a handle variable pointing to ``dtype``
    (a string, or a dtype function such as ``T.float32``)."""
    from ..nodes import PointerType

    dtype = getattr(dtype, "_dtype", dtype)
    return _VarNode("ptr", "handle", PointerType(DataType(dtype), storage_scope))


Ptr = _Subscriptable(ptr, "Ptr", shape_first=False)
buffer_var = ptr


class CallEffectKind(_enum.IntEnum):
    """TVM's ``CallEffectKind``: what a call may do, as an attribute of ops."""

    kExprAnnotation = 0
    kPure = 1
    kReadState = 2
    kUpdateState = 3
    kOpaque = 4
    kSpecialCallArg = 5
    kEmbedInfo = 6
    kControlJump = 7


def _only_in_script(name: str):
    def stub(*args, **kwargs):
        raise ParseError(f"T.{name} can only be used inside a @T.prim_func function")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = f"``T.{name}``: meaningful inside a @T.prim_func function only."
    stub._script_name = f"T.{name}"
    return stub


#: the script functions a Python helper may call for a @T.prim_func that
#: calls it: TVM's builder makes the statement wherever the call happens,
#: so the helper's result stands for the call at the helper's call site
_DEFERRED = frozenset({"decl_buffer", "alloc_buffer", "allocate", "allocate_const"})


def _deferred(name: str):
    def stub(*args, **kwargs):
        from .parser_values import ScriptCall

        return ScriptCall(f"T.{name}", args, kwargs)
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = (f"``T.{name}``: inside a @T.prim_func function, or in a Python function that one "
                    "calls (the call then stands where that function is called).")
    stub._script_name = f"T.{name}"
    return stub


class _Axis:
    """``T.axis``: block iteration variables (inside a function only)."""

    __slots__ = ()

    def __getattr__(self, name: str):
        from .parser_builtins import ALIASES, BUILTINS

        if f"T.axis.{name}" in BUILTINS or f"T.axis.{name}" in ALIASES:
            return _only_in_script(f"axis.{name}")
        raise AttributeError(f"T.axis has no attribute {name!r}")

    def __repr__(self) -> str:
        return "T.axis"


axis = _Axis()


def __getattr__(name: str):
    """Every other script name exists as a stub that explains itself."""
    if name.startswith("__"):
        raise AttributeError(name)
    from .parser_builtins import ALIASES, BUILTINS, resolve

    if name in _DEFERRED:
        return _deferred(name)
    if f"T.{name}" in BUILTINS or f"T.{name}" in ALIASES:
        return _only_in_script(name)
    value = resolve("T", name)
    if value is not None and hasattr(value, "dtype"):
        return _dtype_function(name)
    from .parser_intrinsics import is_unsupported, unsupported_message

    if value is None and is_unsupported("T", name):
        raise AttributeError(unsupported_message(name))
    raise AttributeError(f"module 'tirfun.script.tir' has no attribute {name!r}")


def script_name_of(value: Any):
    """The script value (Builtin, DTypeCtor, Namespace) that an object of this
    namespace stands for when a decorated function refers to it, or None."""
    from .parser_builtins import resolve
    from .parser_values import Namespace

    if value is axis:
        return Namespace("T.axis")
    tagged = getattr(value, "_script_name", None)
    if isinstance(tagged, str):
        path, _, attr = tagged.rpartition(".")
        return resolve(path, attr)
    for name, obj in vars(sys.modules[__name__]).items():
        if obj is value and not name.startswith("_"):
            return resolve("T", name)
    return None
