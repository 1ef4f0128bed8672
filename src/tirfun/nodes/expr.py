"""Expression nodes and the Python operators that build them.

Operators follow TVM: a Python literal takes the dtype of the other operand
(``A[i] + 1.0`` adds a ``float32`` constant when ``A`` holds ``float32``),
mixed dtypes are promoted with an explicit ``Cast`` (int to float, narrow to
wide), and two literal operands are folded. ``==`` is exact node equality,
not a TIR comparison: build one with ``a.equal(b)`` or ``tir.EQ(a, b)``.
"""

from __future__ import annotations

import keyword
import math
import struct
from typing import TYPE_CHECKING, Any

from attrs import field
from pyrsistent import PVector, pvector

from ..errors import NodeError
from .base import Node, accepts, node, pure_converter, slot_setters, spans_fields, to_pvector
from .dtype import _FACTS, DataType, dtype_of

#: the concrete type of pyrsistent's vectors (PVector is abstract, slow to ask about)
_PVEC = type(pvector())

# the dtypes of Python's literals, converted once
_INT32, _INT64, _BOOL = DataType("int32"), DataType("int64"), DataType("bool")

if TYPE_CHECKING:  # pragma: no cover
    from .buffer import Buffer


def check_identifier(kind: str, name: str) -> str:
    """Names of variables and buffers are printed bare, so they must be
    identifiers that Python accepts."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise NodeError(f"{kind} name {name!r} is not a valid identifier")
    return name


class PrimExpr(Node):
    """Base of every expression. Each has a ``dtype``."""

    # _dtype caches the dtype of expressions that derive it from operands
    __slots__ = ("_dtype",)

    @property
    def dtype(self) -> DataType:
        try:
            return self._dtype
        except AttributeError:  # unpickled: slots outside attrs fields are not restored
            value = self._derive_dtype()
            object.__setattr__(self, "_dtype", value)
            return value

    # arithmetic -------------------------------------------------------------
    def __add__(self, other):
        return binary(Add, self, other)

    def __radd__(self, other):
        return binary(Add, other, self)

    def __sub__(self, other):
        return binary(Sub, self, other)

    def __rsub__(self, other):
        return binary(Sub, other, self)

    def __mul__(self, other):
        return binary(Mul, self, other)

    def __rmul__(self, other):
        return binary(Mul, other, self)

    def __truediv__(self, other):
        return true_div(self, other)

    def __rtruediv__(self, other):
        return true_div(other, self)

    def __floordiv__(self, other):
        return binary(FloorDiv, self, other)

    def __rfloordiv__(self, other):
        return binary(FloorDiv, other, self)

    def __mod__(self, other):
        return binary(FloorMod, self, other)

    def __rmod__(self, other):
        return binary(FloorMod, other, self)

    def __neg__(self):
        if isinstance(self, IntImm):
            return IntImm(self.dtype, -self.value)
        if isinstance(self, FloatImm):
            return FloatImm(self.dtype, -self.value)
        return binary(Mul, self, -1)

    def __pos__(self):
        return self

    # comparisons (== and != stay node equality, as DESIGN.md fixes) -----------
    def __lt__(self, other):
        return binary(LT, self, other)

    def __le__(self, other):
        return binary(LE, self, other)

    def __gt__(self, other):
        return binary(GT, self, other)

    def __ge__(self, other):
        return binary(GE, self, other)

    def equal(self, other) -> "PrimExpr":
        """The TIR comparison ``self == other`` (a node, not a Python bool)."""
        return binary(EQ, self, other)

    def not_equal(self, other) -> "PrimExpr":
        """The TIR comparison ``self != other``."""
        return binary(NE, self, other)

    # bitwise ---------------------------------------------------------------
    def __and__(self, other):
        return _bitwise("tir.bitwise_and", self, other)

    def __rand__(self, other):
        return _bitwise("tir.bitwise_and", other, self)

    def __or__(self, other):
        return _bitwise("tir.bitwise_or", self, other)

    def __ror__(self, other):
        return _bitwise("tir.bitwise_or", other, self)

    def __xor__(self, other):
        return _bitwise("tir.bitwise_xor", self, other)

    def __rxor__(self, other):
        return _bitwise("tir.bitwise_xor", other, self)

    def __lshift__(self, other):
        return _bitwise("tir.shift_left", self, other)

    def __rlshift__(self, other):
        return _bitwise("tir.shift_left", other, self)

    def __rshift__(self, other):
        return _bitwise("tir.shift_right", self, other)

    def __rrshift__(self, other):
        return _bitwise("tir.shift_right", other, self)

    def __invert__(self):
        if not (self.dtype.is_integer or self.dtype.is_bool):
            raise NodeError(f"bitwise_not needs an integer operand, got {self.dtype}")
        return Call(self.dtype, "tir.bitwise_not", [self])

    def astype(self, dtype) -> "PrimExpr":
        """Cast to ``dtype`` (no node when the dtype is already that); a
        scalar cast to a vector type is broadcast, as TVM's cast does."""
        dtype = DataType(dtype)
        if self.dtype == dtype:
            return self
        if self.dtype.is_handle:
            # as TVM's cast: a pointer (or a string) has no value of another type
            raise NodeError(f"cannot cast a handle ({self!r}) to {dtype}")
        if self.dtype.lanes == 1 and dtype.lanes > 1:
            return Broadcast(self.astype(dtype.element_of), dtype.lanes)
        return Cast(dtype, self)

    def __bool__(self):
        raise NodeError(
            f"a TIR expression ({self!r}) has no Python truth value; "
            "use tir.all/tir.any or tir.And/tir.Or/tir.Not to combine conditions")


@pure_converter(PrimExpr, type(None))
def to_optional_expr(value: Any) -> "PrimExpr | None":
    """:func:`to_expr`, keeping None (an absent optional operand)."""
    return None if value is None else to_expr(value)


@pure_converter(PrimExpr)
def to_expr(value: Any) -> PrimExpr:
    """Convert a Python literal into an immediate; pass expressions through."""
    if isinstance(value, PrimExpr):
        return value
    if type(value) is int:
        # what const gives a plain int (the commonest literal), without its general steps
        return IntImm(_INT32 if -2147483648 <= value <= 2147483647 else _INT64, value)
    if isinstance(value, (bool, int, float)):
        return const(value)
    type_name = type(value).__name__
    if hasattr(value, "dtype") and hasattr(value, "item"):  # numpy scalars
        return const(value.item(), str(value.dtype))
    as_expr = getattr(value, "__prim_expr__", None)
    if as_expr is not None:  # objects that stand for an expression, such as te's axes
        return to_expr(as_expr())
    raise NodeError(f"expected a TIR expression or a number, got {type_name} {value!r}")


@pure_converter()
def to_expr_vector(values) -> PVector:
    kind = type(values)
    if kind is list or kind is tuple:  # the common case, without asking the abstract PVector
        return pvector([v if isinstance(v, PrimExpr) else to_expr(v) for v in values])
    if kind is _PVEC or isinstance(values, PVector):  # the concrete type first, as above
        for v in values:
            if not isinstance(v, PrimExpr):
                break
        else:
            return values  # a node's own field, passed on unchanged
    if isinstance(values, (PrimExpr, int, float)):
        values = [values]
    return to_pvector(to_expr(v) for v in values)


def const(value, dtype=None) -> PrimExpr:
    """A constant of ``dtype`` (by default the dtype TVM gives the literal)."""
    dtype = dtype_of(value) if dtype is None else DataType(dtype)
    if dtype.lanes > 1:
        return Broadcast(const(value, dtype.element_of), dtype.lanes)
    if dtype.is_float:
        return FloatImm(dtype, float(value))
    if dtype.is_integer or dtype.is_bool:
        if isinstance(value, float):
            if not value.is_integer():
                raise NodeError(f"{value!r} is not a value of {dtype}")
            value = int(value)
        return IntImm(dtype, int(value))
    raise NodeError(f"no constant of dtype {dtype}")


# --------------------------------------------------------------------------
# leaves


@node
class PointerType(Node):
    """What a handle variable points to (TVM's ``PointerType``):
    ``T.handle("float32", "global")``."""

    element: DataType = field(converter=DataType)
    scope: str = field(default="global")

    def __attrs_post_init__(self):
        if not isinstance(self.scope, str):
            raise NodeError(f"a pointer's storage scope is a string, got {self.scope!r}")

    @property
    def element_type(self) -> DataType:
        """TVM's spelling of :attr:`element`."""
        return self.element

    @property
    def storage_scope(self) -> str:
        """TVM's spelling of :attr:`scope`."""
        return self.scope


@accepts(type(None))
@spans_fields  # it reads the variable's dtype
def _check_annotation(self, _attribute, value):
    if value is None:
        return
    if not isinstance(value, PointerType):
        raise NodeError(f"a variable's type annotation is a PointerType, got {value!r}")
    if not self.dtype.is_handle:
        raise NodeError(f"only a handle variable points to {value.element}; {self.name} is {self.dtype}")


@node
class Var(PrimExpr):
    """A variable: a loop variable, a block iteration variable, a scalar or
    handle parameter, a let-bound name. Its name is its identity within a
    function. A handle may say what it points to (``type_annotation``, as
    ``T.handle("float32")`` declares it)."""

    name: str = field(validator=lambda _s, _a, v: check_identifier("variable", v))
    dtype: DataType = field(default="int32", converter=DataType)
    type_annotation: "PointerType | None" = field(default=None, validator=_check_annotation)

    @property
    def name_hint(self) -> str:
        """TVM's spelling of :attr:`name`."""
        return self.name


def _typed_var_init(init):
    """``Var(name, PointerType(...))``, as TVM spells a handle variable
    with what it points to: the type is the annotation, the dtype handle."""
    def __init__(self, name, dtype=_INT32, type_annotation=None):
        if type(dtype) is PointerType:
            dtype, type_annotation = "handle", dtype
        init(self, name, dtype, type_annotation)
    __init__.__doc__ = init.__doc__
    __init__.__wrapped__ = init  # the constructor of the fields themselves
    return __init__


Var.__init__ = _typed_var_init(Var.__init__)


@pure_converter(int, exact=True)
def _constant_lanes(value):
    """A lane count given as an integer constant node (as TVM takes it) is
    its value; anything else is left for the node's check to refuse."""
    if type(value) is IntImm and value.dtype.is_integer:
        return value.value
    return value


def _lanes_problem(kind: str, lanes) -> str:
    if isinstance(lanes, PrimExpr):
        return (f"{kind} needs a constant number of lanes, got {lanes!r}: tirfun has no "
                "scalable vectors (lanes that are a multiple of T.vscale())")
    return f"{kind} needs at least 2 lanes, got {lanes!r}"


@accepts(int)
def _check_int_value(self, _attribute, value):
    if not isinstance(value, int):
        raise NodeError(f"IntImm value must be a Python int, got {value!r}")


@node
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: DataType = field(converter=DataType)
    value: int = field(converter=lambda v: int(v) if isinstance(v, bool) else v, validator=_check_int_value)

    def __attrs_post_init__(self):
        dt = self.dtype
        bounds = dt.int_range()
        if bounds is None:
            raise NodeError(f"IntImm needs a scalar integer or bool dtype, got {dt}")
        if not bounds[0] <= self.value <= bounds[1]:
            raise NodeError(f"{self.value} does not fit in {dt}")

    def __bool__(self):
        return self.value != 0

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


def _int_imm_init(self, dtype, value):
    """IntImm's constructor: the steps attrs writes for it (convert the
    dtype and the value, check the value, run the post-init rules), with
    the dtype's range read from its facts directly. Integer constants are
    the nodes rewrites build most."""
    if type(dtype) is not DataType:
        dtype = DataType(dtype)
    _set_imm_dtype(self, dtype)
    if type(value) is bool:
        value = int(value)
    _set_imm_value(self, value)
    if type(value) is not int:
        _check_int_value(self, None, value)
    facts = _FACTS.get(dtype)
    bounds = facts.int_range if facts is not None else dtype.int_range()
    if bounds is None:
        raise NodeError(f"IntImm needs a scalar integer or bool dtype, got {dtype}")
    if not bounds[0] <= value <= bounds[1]:
        raise NodeError(f"{value} does not fit in {dtype}")
    _set_imm_hash(self, None)


_set_imm_dtype, _set_imm_value, _set_imm_hash = slot_setters(IntImm, "dtype", "value", "_attrs_cached_hash")
IntImm.__init__ = _int_imm_init

_structural_imm_eq = IntImm.__eq__


def _int_imm_eq(self, other):
    """Structural equality with another node; with a Python int or bool,
    equality of the values, as TVM folds ``IntImm == 5`` to a true or false
    constant: ``sch.get(loop).extent == 128`` holds as a TVM user expects.
    (The hash stays the node's, so an IntImm and an int are still two keys
    of a dict.)"""
    if type(other) is int or type(other) is bool:
        return self.value == other
    return _structural_imm_eq(self, other)


IntImm.__eq__ = _int_imm_eq


def float_bits(value: float) -> int:
    """The IEEE-754 bits of a double: the key under which float constants
    compare and hash, so ``0.0`` and ``-0.0`` are different constants (they
    give different results: ``1 / (x * -0.0)``) and a NaN equals itself, with
    its sign and payload."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


@node
class FloatImm(PrimExpr):
    """A floating-point constant.

    Equality and hashing go by the bits of ``value`` (see :func:`float_bits`),
    not by Python's float ``==``, under which ``0.0 == -0.0`` and a NaN
    differs from itself: every cache keyed on nodes must tell them apart."""

    dtype: DataType = field(converter=DataType)
    value: float = field(converter=float, eq=float_bits)

    def __attrs_post_init__(self):
        if not self.dtype.is_float or self.dtype.lanes != 1:
            raise NodeError(f"FloatImm needs a scalar float dtype, got {self.dtype}")

    def __float__(self):
        return self.value


@node
class StringImm(PrimExpr):
    """A string constant (arguments of extern calls, assert messages)."""

    value: str = field(validator=lambda _s, _a, v: _require(isinstance(v, str), "StringImm value must be a str"))

    @property
    def dtype(self) -> DataType:
        return DataType("handle")


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise NodeError(message)


# --------------------------------------------------------------------------
# operators


def _check_operands(self) -> None:
    a, b = self.a, self.b
    if not isinstance(a, PrimExpr) or not isinstance(b, PrimExpr):
        raise NodeError(f"{type(self).__name__} needs two TIR expressions, got {a!r} and {b!r}")
    if a.dtype != b.dtype:
        raise NodeError(
            f"{type(self).__name__}: operand dtypes differ ({a.dtype} and {b.dtype}); "
            "cast one operand or build the expression with Python operators, which promote")


class BinaryOp(PrimExpr):
    """Base of the two-operand arithmetic nodes; dtype is the operands' dtype."""

    __slots__ = ()
    a: PrimExpr
    b: PrimExpr

    def _derive_dtype(self) -> DataType:
        return self.a.dtype

    def __attrs_post_init__(self):
        _check_operands(self)


class CmpOp(PrimExpr):
    """Base of comparisons; dtype is bool with the operands' lanes."""

    __slots__ = ()
    a: PrimExpr
    b: PrimExpr

    def _derive_dtype(self) -> DataType:
        return DataType("bool").with_lanes(self.a.dtype.lanes)

    def __attrs_post_init__(self):
        _check_operands(self)


def _binary_class(name: str, base: type, doc: str) -> type:
    ns = {"__annotations__": {"a": PrimExpr, "b": PrimExpr}, "__doc__": doc,
          "__module__": __name__, "__qualname__": name,
          "a": field(converter=to_expr), "b": field(converter=to_expr)}
    return node(type(name, (base,), ns))


Add = _binary_class("Add", BinaryOp, "``a + b``")
Sub = _binary_class("Sub", BinaryOp, "``a - b``")
Mul = _binary_class("Mul", BinaryOp, "``a * b``")
Div = _binary_class("Div", BinaryOp, "``a / b``: true division on floats, truncated on integers (truncdiv)")
Mod = _binary_class("Mod", BinaryOp, "truncated remainder (truncmod): the sign follows ``a``")
FloorDiv = _binary_class("FloorDiv", BinaryOp, "``a // b``: division rounding toward minus infinity")
FloorMod = _binary_class("FloorMod", BinaryOp, "``a % b``: remainder with the sign of ``b``")
Min = _binary_class("Min", BinaryOp, "``min(a, b)``")
Max = _binary_class("Max", BinaryOp, "``max(a, b)``")
EQ = _binary_class("EQ", CmpOp, "``a == b`` as a TIR condition")
NE = _binary_class("NE", CmpOp, "``a != b`` as a TIR condition")
LT = _binary_class("LT", CmpOp, "``a < b``")
LE = _binary_class("LE", CmpOp, "``a <= b``")
GT = _binary_class("GT", CmpOp, "``a > b``")
GE = _binary_class("GE", CmpOp, "``a >= b``")


class LogicOp(PrimExpr):
    """Base of ``And``/``Or``: both operands are bool."""

    __slots__ = ()
    a: PrimExpr
    b: PrimExpr

    def _derive_dtype(self) -> DataType:
        return self.a.dtype

    def __attrs_post_init__(self):
        _check_operands(self)
        if not self.a.dtype.is_bool:
            raise NodeError(f"{type(self).__name__} needs bool operands, got {self.a.dtype}")


And = _binary_class("And", LogicOp, "``a and b`` on bool conditions")
Or = _binary_class("Or", LogicOp, "``a or b`` on bool conditions")


@node
class Not(PrimExpr):
    """``not a`` on a bool condition."""

    a: PrimExpr = field(converter=to_expr)

    def _derive_dtype(self) -> DataType:
        return self.a.dtype

    def __attrs_post_init__(self):
        if not self.a.dtype.is_bool:
            raise NodeError(f"Not needs a bool operand, got {self.a.dtype}")


@node
class Select(PrimExpr):
    """``true_value if condition else false_value``; both sides are evaluated."""

    condition: PrimExpr = field(converter=to_expr)
    true_value: PrimExpr = field(converter=to_expr)
    false_value: PrimExpr = field(converter=to_expr)

    def _derive_dtype(self) -> DataType:
        return self.true_value.dtype

    def __attrs_post_init__(self):
        if not self.condition.dtype.is_bool:
            raise NodeError(f"Select condition must be bool, got {self.condition.dtype}")
        if self.condition.dtype.lanes not in (1, self.true_value.dtype.lanes):
            raise NodeError(f"Select condition of {self.condition.dtype.lanes} lanes for values of "
                            f"{self.true_value.dtype.lanes}")
        if self.true_value.dtype != self.false_value.dtype:
            raise NodeError(f"Select branches differ in dtype: {self.true_value.dtype} "
                            f"and {self.false_value.dtype}")


@node
class Cast(PrimExpr):
    """Convert ``value`` to ``dtype`` (C semantics: truncation toward zero
    from float to int, wrap-around between integer widths)."""

    dtype: DataType = field(converter=DataType)
    value: PrimExpr = field(converter=to_expr)

    def __attrs_post_init__(self):
        if self.dtype.lanes != self.value.dtype.lanes:
            raise NodeError(f"Cast cannot change lanes: {self.value.dtype} to {self.dtype}")


@node
class BufferLoad(PrimExpr):
    """``buffer[indices]``. A vector index (a Ramp) loads a vector.

    ``predicate`` (TVM's predicated load, ``A.vload([...], predicate=m)``)
    is a bool vector with one lane per loaded lane: a lane whose mask is
    false reads no memory, and its value is zero."""

    buffer: "Buffer"
    indices: PVector = field(converter=to_expr_vector)
    predicate: PrimExpr | None = field(default=None, converter=to_optional_expr)

    def _derive_dtype(self) -> DataType:
        lanes = 1
        for index in self.indices:
            lanes = max(lanes, index.dtype.lanes)
        return self.buffer.dtype if lanes == 1 else self.buffer.dtype.with_lanes(lanes)

    def __attrs_post_init__(self):
        _check_indices(self.buffer, self.indices, "load from")
        if self.predicate is not None:
            check_predicate(self.predicate, self.dtype.lanes, f"load from {self.buffer.name}")


def check_predicate(predicate: PrimExpr, lanes: int, what: str) -> None:
    """The rule TVM sets for the mask of a predicated load or store: bool
    elements, one per lane of the value."""
    if not predicate.dtype.element_of.is_bool:
        raise NodeError(f"the predicate of a {what} is a mask of bool lanes, got "
                        f"{predicate.dtype}")
    if predicate.dtype.lanes != lanes:
        raise NodeError(f"the predicate of a {what} has {predicate.dtype.lanes} lanes, but the "
                        f"value has {lanes}; the number of lanes must match")


def _check_indices(buffer, indices, verb: str) -> None:
    if len(indices) != len(buffer.shape):
        raise NodeError(f"cannot {verb} buffer {buffer.name} with {len(indices)} indices: "
                        f"it has {len(buffer.shape)} dimensions")
    for index in indices:
        if not (index.dtype.is_integer):
            raise NodeError(f"index {index!r} of buffer {buffer.name} has dtype "
                            f"{index.dtype}; indices must be integers")


@node
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes-1)*stride]``."""

    base: PrimExpr = field(converter=to_expr)
    stride: PrimExpr = field(converter=to_expr)
    lanes: int = field(converter=_constant_lanes)

    def _derive_dtype(self) -> DataType:
        return self.base.dtype.with_lanes(self.lanes)

    def __attrs_post_init__(self):
        if not isinstance(self.lanes, int) or self.lanes < 2:
            raise NodeError(_lanes_problem("Ramp", self.lanes))
        if self.base.dtype != self.stride.dtype or self.base.dtype.lanes != 1:
            raise NodeError(f"Ramp base and stride must be scalars of one dtype, got "
                            f"{self.base.dtype} and {self.stride.dtype}")


@node
class Broadcast(PrimExpr):
    """``value`` repeated in ``lanes`` lanes."""

    value: PrimExpr = field(converter=to_expr)
    lanes: int = field(converter=_constant_lanes)

    def _derive_dtype(self) -> DataType:
        return self.value.dtype.with_lanes(self.lanes)

    def __attrs_post_init__(self):
        if not isinstance(self.lanes, int) or self.lanes < 2:
            raise NodeError(_lanes_problem("Broadcast", self.lanes))
        if self.value.dtype.lanes != 1:
            raise NodeError("Broadcast needs a scalar value")


@node
class Shuffle(PrimExpr):
    """Lanes picked from vectors laid end to end (TVM's ``tir.Shuffle``):
    lane ``k`` is lane ``indices[k]`` of the concatenation of ``vectors``."""

    vectors: PVector = field(converter=to_expr_vector)
    indices: PVector = field(converter=to_expr_vector)

    def _derive_dtype(self) -> DataType:
        return self.vectors[0].dtype.with_lanes(len(self.indices))

    def __attrs_post_init__(self):
        if not self.vectors or not self.indices:
            raise NodeError("Shuffle needs at least one vector and one index")
        element = self.vectors[0].dtype.element_of
        if any(v.dtype.element_of != element for v in self.vectors):
            raise NodeError(f"Shuffle takes vectors of one element type, got "
                            f"{', '.join(str(v.dtype) for v in self.vectors)}")
        total = sum(v.dtype.lanes for v in self.vectors)
        for i in self.indices:
            if not isinstance(i, IntImm) or not 0 <= i.value < total:
                raise NodeError(f"Shuffle indices are constants below {total} (the lanes of its "
                                f"vectors), got {i!r}")


@node
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var
    value: PrimExpr = field(converter=to_expr)
    body: PrimExpr = field(converter=to_expr)

    def _derive_dtype(self) -> DataType:
        return self.body.dtype

    def __attrs_post_init__(self):
        if self.var.dtype != self.value.dtype:
            raise NodeError(f"Let binds {self.var.name}: {self.var.dtype} to a value of {self.value.dtype}")


def _to_call_arg(value):
    if isinstance(value, str):
        return StringImm(value)
    return to_expr(value)


@node
class GlobalVar(Node):
    """A function of the module, as the callee of a :class:`Call`
    (``Module.sub(x)`` in TVMScript). Its name is the function's key in the
    IRModule."""

    name_hint: str = field(validator=lambda _s, _a, v: check_identifier("function", v))


def _check_op(_self, _attribute, value):
    if isinstance(value, GlobalVar):
        return
    _require(isinstance(value, str) and value != "", "Call op must be a name or a GlobalVar")


@node
class Call(PrimExpr):
    """An intrinsic or extern call. ``op`` is the intrinsic's name, such as
    ``"tir.exp"`` or ``"tir.if_then_else"``; extern calls use
    ``"tir.call_extern"`` with the callee's name as the first argument. A
    call of another function of the module has a :class:`GlobalVar` as its
    ``op`` and the callee's return type as its dtype (``void`` for none)."""

    dtype: DataType = field(converter=DataType)
    op: "str | GlobalVar" = field(validator=_check_op)
    args: PVector = field(converter=lambda xs: to_pvector(_to_call_arg(x) for x in xs))


# --------------------------------------------------------------------------
# the operator helpers behind the Python operators


def _lift(value, like: DataType) -> PrimExpr:
    """A Python literal converted to the element type of ``like``."""
    if isinstance(value, PrimExpr):
        return value
    elem = like.element_of
    if isinstance(value, bool):
        out = IntImm("bool", int(value))
    elif isinstance(value, int):
        bounds = elem.int_range()  # set for the scalar integer and bool types alone
        if elem.is_float:
            out = FloatImm(elem, float(value))
        elif bounds is not None:
            if elem.is_bool:
                elem = dtype_of(value)
                bounds = elem.int_range()
            if not bounds[0] <= value <= bounds[1]:
                raise NodeError(f"the literal {value} does not fit in {elem}")
            out = IntImm(elem, value)
        else:
            raise NodeError(f"cannot combine the literal {value!r} with a {like} expression")
    elif isinstance(value, float):
        out = FloatImm(elem if elem.is_float else DataType("float32"), value)
    else:
        out = to_expr(value)
    return out


def _widen(x: PrimExpr, elem: DataType) -> PrimExpr:
    target = elem.with_lanes(x.dtype.lanes)
    if x.dtype == target:
        return x
    if isinstance(x, IntImm) and (target.is_integer or target.is_bool) and x.dtype.lanes == 1:
        return IntImm(target, x.value)
    if isinstance(x, (IntImm, FloatImm)) and target.is_float:
        return FloatImm(target, float(x.value))
    return Cast(target, x)


def match_types(a, b) -> tuple[PrimExpr, PrimExpr]:
    """Bring two operands to one dtype the way TVM's operators do."""
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        a, b = to_expr(a), to_expr(b)
    elif not isinstance(a, PrimExpr):
        a = _lift(a, b.dtype)
    elif not isinstance(b, PrimExpr):
        b = _lift(b, a.dtype)
    ta, tb = a.dtype, b.dtype
    if ta == tb:
        return a, b
    if ta.lanes != tb.lanes:
        if ta.lanes == 1:
            a = Broadcast(a, tb.lanes)
        elif tb.lanes == 1:
            b = Broadcast(b, ta.lanes)
        else:
            raise NodeError(f"cannot combine vectors of {ta.lanes} and {tb.lanes} lanes")
        return match_types(a, b)
    ea, eb = ta.element_of, tb.element_of
    if ea.is_handle or eb.is_handle:
        raise NodeError(f"cannot do arithmetic on handles ({ta} and {tb})")
    if ea.is_float and not eb.is_float:
        return a, _widen(b, ea)
    if eb.is_float and not ea.is_float:
        return _widen(a, eb), b
    if ea.is_float and eb.is_float:
        wide = ea if ea.bits >= eb.bits else eb
        if ea.bits == eb.bits:  # float16 with bfloat16: go to float32
            wide = DataType("float32")
        return _widen(a, wide), _widen(b, wide)
    if ea.is_bool:
        return _widen(a, eb), b
    if eb.is_bool:
        return a, _widen(b, ea)
    if ea.code == eb.code:
        wide = ea if ea.bits >= eb.bits else eb
        return _widen(a, wide), _widen(b, wide)
    signed, unsigned = (ea, eb) if ea.is_int else (eb, ea)
    wide = signed if signed.bits >= unsigned.bits else unsigned
    return _widen(a, wide), _widen(b, wide)


def int_result(cls, x: int, y: int) -> int | None:
    """The exact integer value of the arithmetic node class ``cls`` on ``x``
    and ``y`` (no wrap-around), or None for a division by zero or a class
    that is not integer arithmetic."""
    if cls is Add:
        return x + y
    if cls is Sub:
        return x - y
    if cls is Mul:
        return x * y
    if y == 0 and cls in (FloorDiv, FloorMod, Div, Mod):
        return None
    if cls is FloorDiv:
        return x // y
    if cls is FloorMod:
        return x % y
    if cls is Div:
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y >= 0) else -q
    if cls is Mod:
        return x - y * int_result(Div, x, y)
    if cls is Min:
        return min(x, y)
    if cls is Max:
        return max(x, y)
    return None


_COMPARE = {
    EQ: lambda x, y: x == y,
    NE: lambda x, y: x != y,
    LT: lambda x, y: x < y,
    LE: lambda x, y: x <= y,
    GT: lambda x, y: x > y,
    GE: lambda x, y: x >= y,
}


def compare_result(cls, x, y) -> bool:
    """The value of the comparison node class ``cls`` on two numbers."""
    return _COMPARE[cls](x, y)


def fold(cls, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    """Fold an operator whose operands are both literals; None if it cannot."""
    if type(a) is not type(b) or not isinstance(a, (IntImm, FloatImm)):
        return None
    if cls in _COMPARE:
        return IntImm("bool", int(compare_result(cls, a.value, b.value)))
    if isinstance(a, IntImm):
        dt = a.dtype
        if dt.is_bool:
            return None
        value = int_result(cls, a.value, b.value)
        bounds = dt.int_range()
        if value is None or not bounds[0] <= value <= bounds[1]:
            return None
        return IntImm(dt, value)
    x, y = a.value, b.value
    if cls is Add:
        value = x + y
    elif cls is Sub:
        value = x - y
    elif cls is Mul:
        value = x * y
    elif cls is Div and y != 0:
        value = x / y
    elif cls is Min:
        value = min(x, y)
    elif cls is Max:
        value = max(x, y)
    else:
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return FloatImm(a.dtype, value)


def binary(cls, a, b) -> PrimExpr:
    """Build ``cls(a, b)`` after TVM's type matching, folding literals."""
    a, b = match_types(a, b)
    folded = fold(cls, a, b)
    return folded if folded is not None else cls(a, b)


def true_div(a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if not a.dtype.is_float:
        raise NodeError(
            "'/' on integers is ambiguous in TIR: use floordiv/floormod (Python's // and %) "
            "or truncdiv/truncmod explicitly")
    return binary(Div, a, b)


def _bitwise(op: str, a, b) -> PrimExpr:
    a, b = match_types(a, b)
    if a.dtype.is_float:
        raise NodeError(f"{op.split('.')[-1]} needs integer operands, got {a.dtype}")
    if op in ("tir.shift_left", "tir.shift_right") and type(b) is IntImm \
            and not 0 <= b.value < a.dtype.bits:
        # as TVM refuses it: C and LLVM leave such a shift undefined
        raise NodeError(f"{op.split('.')[-1]}: the shift amount {b.value} is not within "
                        f"0..{a.dtype.bits - 1} for {a.dtype}")
    return Call(a.dtype, op, [a, b])


__all__ = [
    "PrimExpr", "Var", "IntImm", "FloatImm", "StringImm", "BinaryOp", "CmpOp", "LogicOp",
    "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
    "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select", "Cast",
    "BufferLoad", "Ramp", "Broadcast", "Shuffle", "Let", "Call", "GlobalVar", "PointerType",
    "to_expr", "const", "binary", "match_types", "fold", "check_identifier",
]
