"""Values that exist only while a TVMScript function is being interpreted.

Evaluating TVMScript yields ordinary Python values (numbers, strings, tuples),
tirfun nodes (expressions, buffers, regions) and the records below: things
that are not IR yet because they wait for a name (``T.alloc_buffer(...)``
becomes a buffer once assigned), for a body (``T.block(...)`` in a ``with``,
a loop header in a ``for``), or that stand for a namespace (``T``,
``T.axis``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ..nodes import Buffer, BufferRegion, IterVarType, PrimExpr, Range, Var
from ..nodes.dtype import DataType


@attrs.frozen
class Namespace:
    """A dotted namespace of the script: ``T``, ``T.axis``, ``I``, ``tvm.script``.
    ``path`` is its canonical name, for example ``"T.axis"``."""

    path: str


@attrs.frozen
class Builtin:
    """A function of a script namespace (``T.block``, ``T.exp``...), callable
    from TVMScript only. ``name`` is the spelling used in messages."""

    name: str


@attrs.frozen
class DTypeCtor:
    """``T.float32`` and friends: an annotation, a variable declaration
    (``n = T.int32()``), a typed literal (``T.float32(1)``) or a cast."""

    dtype: DataType


@attrs.frozen
class ModuleFunctions:
    """The name of an ``@I.ir_module`` class inside its own functions:
    ``Module.sub`` is the module's function ``sub``. ``returns`` maps each
    function's name to its return dtype (``void`` for none), known before
    any body is read, as TVM declares the functions first."""

    name: str
    returns: Any  # pmap-like: function name -> DataType


@attrs.frozen(eq=False)
class DeferredPrimFunc:
    """A ``@T.prim_func`` of an ``@I.ir_module`` class that calls a function
    of its module (``Module.sub(...)``): ``@I.ir_module`` parses it once
    every function of the class is declared, as TVM parses the class as a
    whole."""

    func: object
    private: bool
    check_well_formed: bool
    caller_locals: dict


@attrs.frozen
class Callee:
    """``Module.sub``: a function of the module, to be called."""

    op: Any  # GlobalVar
    dtype: DataType


@attrs.frozen
class SlicedAccess:
    """``A[0:4, i]``: a region in ``T.reads``, a vector load in an expression."""

    buffer: Buffer
    items: tuple  # per dimension: PrimExpr, or (start, stop, step) for a slice


# values that become IR when bound to a name -------------------------------


@attrs.frozen
class NewVar:
    """A variable declared by ``T.int32()``, ``T.handle()`` or ``T.env_thread``;
    it is named by the assignment."""

    dtype: DataType
    thread_tag: str | None = None
    pointee: Any = None  # a handle's PointerType, or None


@attrs.frozen
class NewBuffer:
    """A buffer waiting for its name; ``register`` records the named buffer
    where it belongs (a block's allocations, the buffer map...)."""

    make: Callable[[str], Buffer]
    register: Callable[[Buffer], None]
    what: str  # "T.alloc_buffer", for messages
    #: the handle a ``T.match_buffer`` of a parameter views: its pointer,
    #: when the program uses ``.data``
    handle: Var | None = None


@attrs.frozen
class ScriptCall:
    """A script function (``T.decl_buffer``, ``T.alloc_buffer``...) called
    from Python: what a Python helper returns when it calls one. It means
    something only as the result of a helper that a @T.prim_func body
    calls: the parser then makes the call there, as TVM's builder does."""

    name: str
    args: tuple
    kwargs: dict

    def __repr__(self) -> str:
        return f"<{self.name}(...) outside a @T.prim_func function>"


@attrs.frozen
class NewIterVar:
    """A block iteration variable from ``T.axis.*``, registered in its block
    once named."""

    dom: Range
    binding: PrimExpr
    iter_type: IterVarType
    dtype: DataType
    what: str


# loop headers and scopes -----------------------------------------------------


@attrs.frozen
class LoopSpec:
    """The header of a ``for``: one entry per loop of a (possibly ``T.grid``)
    nest: ``(min, extent, kind, thread_tag, annotations)``."""

    loops: tuple
    what: str


@attrs.frozen
class Scope:
    """A scoped construct (``T.attr``, ``T.allocate``, ``T.launch_thread``,
    ``T.decl_buffer``, a let, an assert): the body of a ``with``, or for the
    concise form the rest of the current body, goes inside.

    ``open(name)`` is called with the ``as`` target or assigned name (None
    when there is none) and returns ``(value, wrap)``: the value bound to
    the name (a new variable or buffer, or None) and the function that
    builds the finished statement around a body.
    """

    kind: str
    open: Callable[[str | None], tuple[Any, Callable[[Any], Any]]]


@attrs.frozen
class BlockHeader:
    """``T.block(name)``: the block frame to open."""

    name: str
    realize: bool


@attrs.frozen
class InitHeader:
    """``T.init()``."""


def article(word: str) -> str:
    """``word`` with "a" or "an" in front."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def describe(value: Any) -> str:
    """A short phrase naming the kind of a value, for error messages."""
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, int):
        return "an int"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "None"
    if isinstance(value, Var):
        return f"the {value.dtype} variable {value.name}"
    if isinstance(value, PrimExpr):
        return article(f"{value.dtype} expression")
    if isinstance(value, Buffer):
        return f"the buffer {value.name}"
    if isinstance(value, (BufferRegion, SlicedAccess)):
        return "a buffer region"
    if isinstance(value, tuple):
        return "a tuple"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, Namespace):
        return f"the namespace {value.path}"
    if isinstance(value, ModuleFunctions):
        return f"the module {value.name}"
    if isinstance(value, Callee):
        return f"the module function {value.op.name_hint}"
    if isinstance(value, Builtin):
        return f"the function {value.name}"
    if isinstance(value, DTypeCtor):
        return f"the type T.{value.dtype}"
    if isinstance(value, LoopSpec):
        return f"a loop header ({value.what})"
    if isinstance(value, (Scope, BlockHeader, InitHeader)):
        return "a scope"
    if isinstance(value, (NewVar, NewBuffer, NewIterVar)):
        return "a declaration"
    if isinstance(value, BufferMethod):
        return f"the method {value.buffer.name}.{value.name}"
    from .parser_python import Macro, PyValue

    if isinstance(value, PyValue):
        inner = value.value
        return f"the Python {type(inner).__name__} {getattr(inner, '__name__', '')}".rstrip()
    if isinstance(value, Macro):
        return f"the macro {value.func.__name__}"
    return article(type(value).__name__)


@attrs.frozen
class BufferMethod:
    """``A.vload`` or ``A.vstore``: a method of a buffer, waiting for its call."""

    buffer: Buffer
    name: str


@attrs.frozen
class MetaVar:
    """``T.meta_var(value)``: a value bound to a name as it is, without a
    let; the name then stands for the value wherever it is used."""

    value: Any
