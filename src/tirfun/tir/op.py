"""Expression helpers and intrinsics, under TVM's ``tvm.tir`` names.

Each returns a node; Python literals take the other operand's dtype, as the
operators do. Math intrinsics are ``Call`` nodes whose ``op`` is
``"tir.<name>"`` (``exp(x)`` is ``Call(x.dtype, "tir.exp", [x])``).
"""

from __future__ import annotations

import functools

from ..errors import NodeError
from ..nodes import (
    And, Buffer, Call, Div, FloorDiv, FloorMod, IntImm, Max, Min, Mod, Not, Or, PrimExpr, Select,
    StringImm, Var, binary, const, to_expr,
)
from ..nodes.dtype import DataType
from ..nodes.expr import match_types

# unary float intrinsics: result has the argument's dtype
FLOAT_UNARY = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "sigmoid",
    "fabs", "floor", "ceil", "round", "nearbyint", "trunc",
)
# binary float intrinsics: operands matched, result has their dtype
FLOAT_BINARY = ("atan2", "pow", "fmod", "hypot", "copysign", "nextafter")
# float predicates: result is bool
FLOAT_PREDICATES = ("isnan", "isinf", "isfinite")
# integer bit counts: result has the argument's dtype
INT_UNARY = ("popcount", "clz")
#: every math intrinsic of the ``T`` namespace, by name
MATH_INTRINSICS = FLOAT_UNARY + FLOAT_BINARY + FLOAT_PREDICATES + INT_UNARY + ("ldexp", "abs")


def _float_arg(name: str, x) -> PrimExpr:
    if isinstance(x, int) and not isinstance(x, bool):
        x = float(x)
    x = to_expr(x)
    if not x.dtype.is_float:
        raise NodeError(f"{name} needs a floating-point argument, got {x!r}: {x.dtype}")
    return x


def _make_float_unary(name: str):
    def intrinsic(x):
        x = _float_arg(name, x)
        return Call(x.dtype, f"tir.{name}", [x])
    intrinsic.__name__ = intrinsic.__qualname__ = name
    intrinsic.__doc__ = f"``{name}(x)`` on a floating-point expression (``tir.{name}``)."
    return intrinsic


def _make_float_binary(name: str):
    def intrinsic(x, y):
        if isinstance(x, int) and not isinstance(x, bool):
            x = float(x)
        if isinstance(y, int) and not isinstance(y, bool):
            y = float(y)
        x, y = match_types(x, y)
        if not x.dtype.is_float:
            raise NodeError(f"{name} needs floating-point arguments, got {x.dtype}")
        return Call(x.dtype, f"tir.{name}", [x, y])
    intrinsic.__name__ = intrinsic.__qualname__ = name
    intrinsic.__doc__ = f"``{name}(x, y)`` on floating-point expressions (``tir.{name}``)."
    return intrinsic


def _make_predicate(name: str):
    def intrinsic(x):
        if isinstance(x, PrimExpr) and (x.dtype.is_integer or x.dtype.is_bool):
            # as TVM: an integer is never NaN nor infinite
            return const(name == "isfinite", DataType("bool").with_lanes(x.dtype.lanes))
        x = _float_arg(name, x)
        return Call(DataType("bool").with_lanes(x.dtype.lanes), f"tir.{name}", [x])
    intrinsic.__name__ = intrinsic.__qualname__ = name
    intrinsic.__doc__ = (f"``{name}(x)``: a bool test on a floating-point expression (an "
                         "integer one is a constant).")
    return intrinsic


def _make_int_unary(name: str):
    def intrinsic(x):
        x = to_expr(x)
        if not x.dtype.is_integer:
            raise NodeError(f"{name} needs an integer argument, got {x.dtype}")
        return Call(x.dtype, f"tir.{name}", [x])
    intrinsic.__name__ = intrinsic.__qualname__ = name
    intrinsic.__doc__ = f"``{name}(x)`` on an integer expression."
    return intrinsic


_GENERATED = {}
for _n in FLOAT_UNARY:
    _GENERATED[_n] = _make_float_unary(_n)
for _n in FLOAT_BINARY:
    _GENERATED[_n] = _make_float_binary(_n)
for _n in FLOAT_PREDICATES:
    _GENERATED[_n] = _make_predicate(_n)
for _n in INT_UNARY:
    _GENERATED[_n] = _make_int_unary(_n)
globals().update(_GENERATED)


def ldexp(x, e):
    """``x * 2**e`` for a float ``x`` and an integer ``e``."""
    x = _float_arg("ldexp", x)
    e = to_expr(e)
    if not e.dtype.is_integer:
        raise NodeError(f"ldexp needs an integer exponent, got {e.dtype}")
    return Call(x.dtype, "tir.ldexp", [x, e])


def abs(x):  # noqa: A001 - TVM's name
    """``|x|`` for integers and floats."""
    x = to_expr(x)
    return Call(x.dtype, "tir.fabs" if x.dtype.is_float else "tir.abs", [x])


def _divisor(name: str, b):
    """``b``, refused when it is the integer constant 0 (as TVM's helpers
    refuse it while folding constants)."""
    if (type(b) is IntImm and b.value == 0) or (type(b) is int and b == 0):
        raise NodeError(f"{name}: division by the constant zero")
    return b


def floordiv(a, b):
    """Division rounding toward minus infinity (``a // b``)."""
    return binary(FloorDiv, a, _divisor("floordiv", b))


def floormod(a, b):
    """Remainder of :func:`floordiv` (``a % b``); takes the sign of ``b``."""
    return binary(FloorMod, a, _divisor("floormod", b))


def truncdiv(a, b):
    """Division rounding toward zero, as C does."""
    return binary(Div, a, _divisor("truncdiv", b))


def truncmod(a, b):
    """Remainder of :func:`truncdiv`; takes the sign of ``a``."""
    return binary(Mod, a, _divisor("truncmod", b))


def ceildiv(a, b):
    """Division rounding toward plus infinity on integers, for a positive
    divisor: ``(a + b - 1) // b``, as TVM builds it (there is no ceildiv
    node, and a negative divisor gets that formula's value)."""
    a, b = match_types(a, b)
    if not (a.dtype.is_integer and b.dtype.is_integer):
        raise NodeError(f"ceildiv needs integer operands, got {a.dtype} and {b.dtype}")
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        if b.value == 0:
            raise NodeError("ceildiv by zero")
        return IntImm(a.dtype, -((-a.value) // b.value))
    return floordiv(a + b - IntImm(b.dtype, 1), b)


def likely(cond):
    """``cond``, marked as likely true (a hint for branch layout)."""
    cond = _bool(cond)
    if isinstance(cond, IntImm):
        return cond
    return Call(cond.dtype, "tir.likely", [cond])


def assume(cond):
    """A statement value telling the optimizer that ``cond`` holds
    (``T.evaluate(T.assume(i < n))``)."""
    return Call("bool", "tir.assume", [_bool(cond)])


def indexdiv(a, b):
    """TVM's index division: floordiv."""
    return floordiv(a, b)


def indexmod(a, b):
    """TVM's index modulo: floormod."""
    return floormod(a, b)


def div(a, b):
    """``a / b`` (truncating on integers)."""
    return binary(Div, a, _divisor("div", b))


def min(a, b, *rest):  # noqa: A001
    """The smaller operand."""
    out = binary(Min, a, b)
    for r in rest:
        out = binary(Min, out, r)
    return out


def max(a, b, *rest):  # noqa: A001
    """The larger operand."""
    out = binary(Max, a, b)
    for r in rest:
        out = binary(Max, out, r)
    return out


def _bool(x) -> PrimExpr:
    x = to_expr(x)
    if not x.dtype.is_bool:
        raise NodeError(f"expected a bool condition, got {x!r}: {x.dtype}")
    return x


def all(*conds):  # noqa: A001
    """The conjunction of the conditions (``True`` when there are none)."""
    if not conds:
        return const(True)
    return functools.reduce(lambda a, b: And(a, b), (_bool(c) for c in conds))


def any(*conds):  # noqa: A001
    """The disjunction of the conditions (``False`` when there are none)."""
    if not conds:
        return const(False)
    return functools.reduce(lambda a, b: Or(a, b), (_bool(c) for c in conds))


def logical_and(a, b):
    return And(_bool(a), _bool(b))


def logical_or(a, b):
    return Or(_bool(a), _bool(b))


def logical_not(a):
    return Not(_bool(a))


def if_then_else(cond, t, f):
    """``t if cond else f`` where only the chosen side is evaluated."""
    cond = _bool(cond)
    t, f = match_types(t, f)
    return Call(t.dtype, "tir.if_then_else", [cond, t, f])


def select(cond, t, f):
    """``t if cond else f`` where both sides are evaluated (``tir.Select``)."""
    t, f = match_types(t, f)
    return Select(_bool(cond), t, f)


def cast(value, dtype):
    """``value`` converted to ``dtype``."""
    return to_expr(value).astype(dtype)


def call_extern(dtype, func_name: str, *args):
    """A call to an external C function ``func_name`` returning ``dtype``."""
    if not isinstance(func_name, str):
        raise NodeError(f"call_extern needs the function's name as a string, got {func_name!r}")
    return Call(dtype, "tir.call_extern", [StringImm(func_name), *args])


def call_pure_extern(dtype, func_name: str, *args):
    """A call to an external C function without side effects."""
    if not isinstance(func_name, str):
        raise NodeError(f"call_pure_extern needs the function's name as a string, got {func_name!r}")
    return Call(dtype, "tir.call_pure_extern", [StringImm(func_name), *args])


def reinterpret(dtype, value):
    """The bits of ``value`` read as ``dtype`` (of the same total size)."""
    dtype, value = DataType(dtype), to_expr(value)
    if dtype.bits * dtype.lanes != value.dtype.bits * value.dtype.lanes:
        raise NodeError(f"reinterpret cannot change the size: {value.dtype} to {dtype}")
    return Call(dtype, "tir.reinterpret", [value])


#: the largest finite value of each wide float type
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def max_value(dtype):
    """The largest value of ``dtype`` (the largest finite one for floats)."""
    dtype = DataType(dtype)
    if dtype.is_float and not dtype.is_mini_float:
        return const(_FLOAT_MAX[str(dtype.element_of)], dtype)
    return const(dtype.max_value(), dtype)


def min_value(dtype):
    """The smallest value of ``dtype`` (the lowest finite one for floats)."""
    dtype = DataType(dtype)
    if dtype.is_float and not dtype.is_mini_float:
        return const(-_FLOAT_MAX[str(dtype.element_of)], dtype)
    return const(dtype.min_value(), dtype)


def infinity(dtype):
    """Plus infinity of a float ``dtype``."""
    import math

    dtype = DataType(dtype)
    if not dtype.is_float:
        raise NodeError(f"infinity needs a float dtype, got {dtype}")
    return const(math.inf, dtype)


def vscale():
    """TVM's ``tir.vscale()``: the length multiplier of scalable vectors
    (SVE). tirfun builds the call; scalable vector types it does not have."""
    return Call("int32", "tir.vscale", [])


def call_tir(callee, *args):
    """TVM's ``tir.call_tir``: a call of another function of the module
    (``Module.sub`` inside a decorated function, or its ``GlobalVar``), of
    the callee's return type (void for a GlobalVar alone)."""
    from ..nodes import GlobalVar

    op = getattr(callee, "op", callee)
    if not isinstance(op, GlobalVar):
        raise NodeError(f"call_tir calls a function of the module, got {callee!r}")
    dtype = getattr(callee, "dtype", None) or DataType("void")
    return Call(dtype, op, [to_expr(a) for a in args])


def call_intrin(dtype, op: str, *args):
    """A call to the intrinsic ``op`` (``"tir.exp"``...)."""
    return Call(dtype, op if "." in op else f"tir.{op}", list(args))


def type_annotation(dtype):
    """``T.type_annotation(dtype)``: a type passed as a value (the first
    argument of ``tvm_access_ptr``)."""
    return Call(DataType(dtype), "tir.type_annotation", [])


def tvm_access_ptr(dtype, data, offset, extent, rw_mask, ptr_type="handle"):
    """A pointer ``offset`` elements of ``dtype`` into ``data``, valid for
    ``extent`` elements, for reading (mask 1), writing (2) or both (3)."""
    return Call(DataType(ptr_type), "tir.tvm_access_ptr",
                [type_annotation(dtype), data, to_expr(offset), to_expr(extent),
                 IntImm("int32", rw_mask)])


def address_of(load):
    """The address of a buffer element (lowered code)."""
    return Call("handle", "tir.address_of", [load])


def ret(value):
    """Return ``value`` from the function (lowered code)."""
    value = to_expr(value)
    return Call(value.dtype, "tir.ret", [value])


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None, elem_offset=None,
                scope="", data_alignment=-1, offset_factor=0, buffer_type="", axis_separators=None):
    """A new Buffer, with TVM's signature. As in TVM, a buffer with an
    ``offset_factor`` and no ``elem_offset`` gets an offset variable of its
    own, ``<name>_elem_offset``."""
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    if elem_offset is None and offset_factor:
        index = next((s.dtype for s in shape if isinstance(s, PrimExpr)), "int32")
        elem_offset = Var(f"{name}_elem_offset", index)
    return Buffer(name, list(shape), dtype, strides=list(strides or ()), elem_offset=elem_offset,
                  storage_scope=scope or "global", data=data,
                  data_alignment=64 if data_alignment in (-1, None) else data_alignment,
                  offset_factor=offset_factor, axis_separators=list(axis_separators or ()))


def comm_reducer(combiner, identity):
    """A CommReducer from a Python combiner and the identity of each value,
    as TVM's ``T.comm_reducer``: ``comm_reducer(lambda x, y: x + y,
    [const(0.0, "float32")])``. The combiner takes the left values then the
    right values and returns one expression or a tuple of them."""
    import inspect

    from ..nodes.reducer import CommReducer

    identity = list(identity) if isinstance(identity, (list, tuple)) else [identity]
    ids = [const(v, "int32") if isinstance(v, int) and not isinstance(v, bool) else to_expr(v)
           for v in identity]
    names = list(inspect.signature(combiner).parameters)
    if len(names) != 2 * len(ids):
        raise NodeError(f"the combiner of a comm_reducer with {len(ids)} identities takes "
                        f"{2 * len(ids)} parameters, got {len(names)}")
    variables = [Var(n, e.dtype) for n, e in zip(names, ids + ids)]
    out = combiner(*variables)
    results = list(out) if isinstance(out, tuple) else [out]
    k = len(ids)
    return CommReducer(variables[:k], variables[k:], results, ids)


def var(name: str = "v", dtype="int32") -> Var:
    """A new variable (``tir.Var(name, dtype)``)."""
    return Var(name, dtype)


__all__ = [
    *_GENERATED, "ldexp", "abs", "floordiv", "floormod", "truncdiv", "truncmod", "indexdiv",
    "indexmod", "div", "ceildiv", "likely", "assume", "min", "max", "all", "any", "logical_and", "logical_or", "logical_not",
    "if_then_else", "select", "cast", "call_extern", "call_pure_extern", "call_intrin", "call_tir",
    "address_of", "ret", "reinterpret", "max_value", "min_value", "infinity", "vscale",
    "type_annotation", "tvm_access_ptr",
    "decl_buffer", "var", "const", "comm_reducer", "MATH_INTRINSICS",
]
