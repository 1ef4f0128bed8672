"""Calling script functions: signatures, argument binding, conversions.

A script function (``T.axis.spatial``...) declares a :class:`Signature`;
:func:`bind` matches a call's evaluated arguments to it as Python would and
reports arity mistakes as ParseErrors naming the function. The ``to_*``
helpers turn arguments into what the handlers need (dtypes, strings,
integer expressions, shapes, conditions, attribute dicts), each failing
with a located ParseError.
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from ..errors import NodeError
from ..nodes import Broadcast, Buffer, IntImm, PrimExpr, StringImm
from ..nodes.dtype import DataType, dtype_of
from ..nodes.target import TargetConfig
from .parser_values import DTypeCtor, SlicedAccess, describe


REQUIRED = object()


@attrs.frozen
class Signature:
    """Parameters of a script function: positional-or-keyword names with
    defaults (:data:`REQUIRED` when none), an optional ``*args`` name and
    keyword-only parameters."""

    params: tuple[tuple[str, Any], ...]
    star: str | None = None
    kwonly: tuple[tuple[str, Any], ...] = ()
    drop: tuple[str, ...] = ()  # keywords accepted and ignored (TVM's op wrappers drop dtype)
    dtype_first: bool = False  # ``dtype=`` given by keyword goes first (TVM's _dtype_forward)


def sig(*params, star=None, kwonly=(), drop=(), dtype_first=False) -> Signature:
    """``sig("a", ("b", 1), star="rest")``: a parameter is a name (required)
    or a (name, default) pair."""
    norm = tuple(p if isinstance(p, tuple) else (p, REQUIRED) for p in params)
    kw = tuple(p if isinstance(p, tuple) else (p, REQUIRED) for p in kwonly)
    return Signature(norm, star, kw, tuple(drop), dtype_first)


class Args:
    """The bound arguments of one call: ``args.x`` is the value of parameter
    ``x``, ``args.node("x")`` its syntax node (or the call's)."""

    def __init__(self, values: dict[str, Any], nodes: dict[str, ast.AST], call: ast.AST):
        self._values = values
        self._nodes = nodes
        self._call = call

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def given(self, name: str) -> bool:
        """True when the call passed ``name`` explicitly."""
        return name in self._nodes

    def node(self, name: str) -> ast.AST:
        """The syntax node of argument ``name`` (the call's when defaulted)."""
        return self._nodes.get(name, self._call)


def _arity_text(s: Signature) -> str:
    required = sum(1 for _, d in s.params if d is REQUIRED)
    total = len(s.params)
    if s.star:
        return f"at least {required} positional argument{'s' if required != 1 else ''}"
    if required == total:
        return f"{total} positional argument{'s' if total != 1 else ''}"
    return f"from {required} to {total} positional arguments"


def bind(ip, name: str, s: Signature, node: ast.Call, pos: list, kws: dict) -> Args:
    """Bind evaluated arguments to a signature like Python does; mistakes
    are ParseErrors naming the function."""
    values: dict[str, Any] = {}
    nodes: dict[str, ast.AST] = {}
    if s.dtype_first and "dtype" in kws:
        kws = dict(kws)
        pos = [kws.pop("dtype"), *pos]
    names = [p for p, _ in s.params]
    star_values = []
    for i, (value, arg_node) in enumerate(pos):
        if i < len(names):
            values[names[i]] = value
            nodes[names[i]] = arg_node
        elif s.star:
            star_values.append(value)
        else:
            raise ip.fail(arg_node, f"{name}() takes {_arity_text(s)} but {len(pos)} "
                          f"{'were' if len(pos) != 1 else 'was'} given",
                          hint=_signature_hint(name, s))
    kwonly = dict(s.kwonly)
    for key, (value, arg_node) in kws.items():
        if key in s.drop:
            continue
        if key in values:
            raise ip.fail(arg_node, f"{name}() got multiple values for argument '{key}'",
                          hint=_signature_hint(name, s))
        if key not in names and key not in kwonly:
            raise ip.fail(arg_node, f"{name}() got an unexpected keyword argument '{key}'",
                          hint=_signature_hint(name, s))
        values[key] = value
        nodes[key] = arg_node
    for p, default in s.params + s.kwonly:
        if p not in values:
            if default is REQUIRED:
                raise ip.fail(node, f"{name}() missing required argument '{p}'",
                              hint=_signature_hint(name, s))
            values[p] = default
    if s.star:
        values[s.star] = star_values
    return Args(values, nodes, node)


def _signature_hint(name: str, s: Signature) -> str:
    parts = []
    for p, d in s.params:
        parts.append(p if d is REQUIRED else f"{p}={d!r}")
    if s.star:
        parts.append(f"*{s.star}")
    elif s.kwonly:
        parts.append("*")
    for p, d in s.kwonly:
        parts.append(p if d is REQUIRED else f"{p}={d!r}")
    return f"the signature is {name}({', '.join(parts)})"


def to_dtype(ip, value, node) -> DataType:
    """A dtype argument: a string, a DataType or a ``T.float32``-style name."""
    if isinstance(value, DTypeCtor):
        return value.dtype
    if isinstance(value, str):
        try:
            return DataType(value)
        except NodeError as err:
            raise ip.fail(node, str(err)) from None
    raise ip.fail(node, f"expected a data type such as \"float32\", got {describe(value)}")


def to_str(ip, value, node, what: str) -> str:
    """A string argument (a StringImm counts)."""
    if isinstance(value, StringImm):
        return value.value
    if not isinstance(value, str):
        raise ip.fail(node, f"{what} must be a string, got {describe(value)}")
    return value


def to_int_expr(ip, value, node, what: str, dtype: DataType | None = None) -> PrimExpr:
    """An integer expression (Python ints become constants of ``dtype``,
    int32 by default, int64 when too large)."""
    if isinstance(value, bool):
        raise ip.fail(node, f"{what} must be an integer, got a bool")
    if isinstance(value, int):
        dt = dtype or dtype_of(value)
        try:
            return IntImm(dt, value)
        except NodeError as err:
            raise ip.fail(node, str(err)) from None
    expr = ip.as_expr(value, node)
    if not expr.dtype.is_integer or expr.dtype.lanes != 1:
        raise ip.fail(node, f"{what} must be an integer, got {describe(value)}")
    return expr


def to_shape(ip, value, node, what: str) -> list[PrimExpr]:
    """A shape: one extent or a tuple of integer extents."""
    if isinstance(value, (tuple, list)):
        return [to_int_expr(ip, v, node, f"{what} dimension") for v in value]
    return [to_int_expr(ip, value, node, what)]


def to_bool_expr(ip, value, node, what: str, lanes: int | None = 1) -> PrimExpr:
    """A bool condition (Python bools and 0/1 become constants): a scalar,
    or also a vector of ``lanes`` bools (of any number when ``lanes`` is
    None), where TVM takes one lane-wise."""
    if isinstance(value, bool):
        return IntImm("bool", int(value))
    if isinstance(value, int) and value in (0, 1):
        return IntImm("bool", value)
    expr = ip.as_expr(value, node)
    if not expr.dtype.is_bool:
        raise ip.fail(node, f"{what} must be a bool condition, got {describe(value)}")
    if expr.dtype.lanes != 1 and lanes is not None and expr.dtype.lanes != lanes:
        wanted = "a bool condition" if lanes == 1 else f"a bool condition or a vector of {lanes} bools"
        raise ip.fail(node, f"{what} must be {wanted}, got {describe(value)}")
    return expr


def to_branch_condition(ip, value, node, what: str) -> PrimExpr:
    """The condition of an if statement or a while loop. As TVM's If and
    While, a scalar of a number type is a condition too, true where it is
    not zero; it is written out as ``value != 0``, which means the same
    everywhere tirfun reads a condition."""
    if isinstance(value, (bool, int)) and value in (0, 1):
        return IntImm("bool", int(value))
    if isinstance(value, PrimExpr) and value.dtype.lanes == 1 and \
            (value.dtype.is_integer or value.dtype.is_float) and not value.dtype.is_bool:
        from ..nodes import NE, const

        return NE(value, const(0, value.dtype))
    return to_bool_expr(ip, value, node, what)


def to_mask(ip, value, node, lanes: int, what: str) -> PrimExpr:
    """The predicate of a masked load or store: a bool vector with one lane
    per lane of the value (a Python bool for a single lane)."""
    if isinstance(value, bool):
        value = IntImm("bool", int(value))
    expr = ip.as_expr(value, node)
    if not expr.dtype.element_of.is_bool:
        raise ip.fail(node, f"the predicate of {what} is a mask of bool lanes, got "
                      f"{describe(value)} of {expr.dtype}",
                      hint=f"write T.Broadcast(T.bool(True), {lanes}) or a comparison of vectors")
    if expr.dtype.lanes != lanes:
        raise ip.fail(node, f"the predicate of {what} has {expr.dtype.lanes} lanes, but the value "
                      f"has {lanes}; the number of lanes must match")
    return expr


def attr_value(ip, value, node):
    """Normalise a value of an attribute or annotation dict.

    Attributes hold plain Python values where they can: numbers, strings,
    None, lists and dicts of them. ``T.bool(True)`` is how TVM prints a
    true flag, so a bool constant becomes the Python bool (``True`` and
    ``T.bool(True)`` are the same attribute); other expressions and buffers
    stay nodes.
    """
    if isinstance(value, IntImm) and value.dtype.is_bool:
        return bool(value.value)
    if isinstance(value, (bool, int, float, str, PrimExpr, Buffer, TargetConfig)):
        return value
    if isinstance(value, DataType):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [attr_value(ip, v, node) for v in value]
    if isinstance(value, dict):
        return {attr_key(ip, k, node): attr_value(ip, v, node) for k, v in value.items()}
    if isinstance(value, SlicedAccess):
        return ip.region_of(value, node)
    if value is None:
        return None
    raise ip.fail(node, f"{describe(value)} cannot be an attribute value")


def attr_key(ip, key, node) -> str:
    """An attribute key: a string."""
    if isinstance(key, StringImm):
        return key.value
    if not isinstance(key, str):
        raise ip.fail(node, f"attribute keys must be strings, got {describe(key)}")
    return key


def attr_dict(ip, value, node, what: str) -> dict:
    """An attribute or annotation dict, values normalised by :func:`attr_value`."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ip.fail(node, f"{what} must be a dict, got {describe(value)}")
    return {attr_key(ip, k, node): attr_value(ip, v, node) for k, v in value.items()}


def lift_pair(ip, a_val, b_val, node):
    """Python literals take the dtype of the other operand; scalars are
    broadcast to the other's lanes (TVMScript's rule for explicit nodes)."""
    from ..nodes.expr import _lift

    if not isinstance(a_val, PrimExpr) and not isinstance(b_val, PrimExpr):
        a_val, b_val = ip.as_expr(a_val, node), ip.as_expr(b_val, node)
    elif not isinstance(a_val, PrimExpr):
        a_val = _lift(ip.plain(a_val, node), b_val.dtype)
    elif not isinstance(b_val, PrimExpr):
        b_val = _lift(ip.plain(b_val, node), a_val.dtype)
    la, lb = a_val.dtype.lanes, b_val.dtype.lanes
    if la == 1 and lb > 1:
        a_val = Broadcast(a_val, lb)
    elif lb == 1 and la > 1:
        b_val = Broadcast(b_val, la)
    return a_val, b_val
