"""Expression helpers for the rewrites: substitution and variable queries."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs
from pyrsistent import pvector

from ..analysis.arith.terms import int_value
from ..analysis.traversal import OPERAND_NODES, iter_children, substitute_vars
from ..nodes.base import with_fields
from ..nodes import Buffer, FloatImm, FloorDiv, FloorMod, IntImm, Node, PrimExpr, StringImm, Var, binary


_PVEC = type(pvector())
_LEAVES = (IntImm, FloatImm, StringImm)
_EMPTY: Mapping = {}


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


def substitute_expr(e: PrimExpr, mapping: Mapping[Var, PrimExpr]) -> PrimExpr:
    """:func:`substitute` for an expression, without entering buffers (whose
    shapes cannot mention loop or iteration variables)."""
    kind = type(e)
    if kind is Var:
        return mapping.get(e, e)
    if kind in OPERAND_NODES and mapping:
        # most of an index: its two operands, rebuilt as transform_plain
        # rebuilds them, without looking up the fields by name
        a, b = substitute_expr(e.a, mapping), substitute_expr(e.b, mapping)
        return e if a is e.a and b is e.b else kind(a, b)
    if isinstance(e, _LEAVES) or not mapping:
        return e
    changes = {}
    for name in _field_names(type(e)):
        value = getattr(e, name)
        if isinstance(value, PrimExpr):
            new = substitute_expr(value, mapping)
        elif type(value) is _PVEC:
            items = [substitute_expr(v, mapping) if isinstance(v, PrimExpr) else v for v in value]
            new = value if all(a is b for a, b in zip(items, value)) else pvector(items)
        else:
            continue
        if new is not value:
            changes[name] = new
    return with_fields(e, **changes) if changes else e


def substitute(node: Node, mapping: Mapping[Var, PrimExpr]) -> Node:
    """``node`` with every occurrence of a variable in ``mapping`` replaced.

    Subtrees that mention none of the variables are returned as the same
    objects, so statements and blocks the substitution does not reach stay
    shared with the input.
    """
    # a buffer whose expressions the mapping cannot reach is not entered
    return substitute_vars(node, mapping, lambda buffer: not buffer_is_plain(buffer, mapping))


#: nodes that hold no other node
_PLAIN_LEAVES = frozenset({Var, IntImm, FloatImm, StringImm})


def plain_buffer(buffer) -> bool:
    """Whether every expression of ``buffer`` (shape, strides, offset) is a
    constant or a variable, as nearly always: nothing inside it can load,
    store or bind a name, and a search for those need not enter it."""
    return buffer_is_plain(buffer)


def buffer_is_plain(buf: Buffer, mapping: Mapping = _EMPTY) -> bool:
    """Whether every expression of ``buf`` (shape, strides, offset, data)
    is a literal or a variable outside ``mapping``: a substitution of
    ``mapping``, or any rewrite of the expressions inside, leaves it as it
    is. Nearly every buffer is one, and a rewrite of a block's accesses
    need not walk the buffer of each."""
    for e in buf.shape:
        if type(e) is not IntImm and not (isinstance(e, Var) and e not in mapping):
            return False
    for e in buf.strides:
        if type(e) is not IntImm and not (isinstance(e, Var) and e not in mapping):
            return False
    for e in (buf.elem_offset, buf.data):
        if e is not None and type(e) is not IntImm and not (isinstance(e, Var) and e not in mapping):
            return False
    return True


def find_nodes(root: Node, kinds: tuple) -> list:
    """The nodes of the types ``kinds`` under ``root`` (itself included),
    in pre-order, as ``walk`` meets them. A buffer, met at each access of
    it, is looked into once, and not at all where its expressions are
    constants and variables (see :func:`plain_buffer`), which hold nothing."""
    from ..analysis.traversal import walk

    out: list = []
    in_buffer: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _PLAIN_LEAVES:
            continue
        if kind is Buffer:
            if plain_buffer(node):
                continue
            found = in_buffer.get(id(node))
            if found is None:
                found = in_buffer[id(node)] = [n for n in walk(node) if type(n) in kinds]
            out.extend(found)
            continue
        if kind in kinds:
            out.append(node)
        stack.extend(reversed(list(iter_children(node))))
    return out


def var_names(node: Node) -> set[str]:
    """The names of every variable occurring in ``node``; a variable or a
    constant (an index, a binding, a loop bound, nearly always) is read
    off without a walk."""
    kind = type(node)
    if kind is Var:
        return {node.name}
    if kind is IntImm:
        return set()
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind in OPERAND_NODES:  # most of an expression: its two operands, read directly
            stack.append(n.a)
            stack.append(n.b)
        elif kind in _LEAVES:
            continue
        elif isinstance(n, Var):
            out.add(n.name)
        else:
            stack.extend(iter_children(n))
    return out


def uses_any(node: Node, names) -> str | None:
    """The first name of ``names`` that occurs in ``node`` as a variable, or None."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            if n.name in names:
                return n.name
        else:
            stack.extend(iter_children(n))
    return None


def is_const_int(e, value: int | None = None) -> bool:
    """Whether ``e`` is an integer literal (equal to ``value`` when given)."""
    v = int_value(e)
    return v is not None and (value is None or v == value)


def floordiv(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a // b`` with TVM's constant folding of a unit divisor."""
    if is_const_int(b, 1):
        return a
    return binary(FloorDiv, a, b)


def floormod(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a % b`` with TVM's constant folding of a unit divisor."""
    if is_const_int(b, 1):
        return IntImm(a.dtype, 0)
    return binary(FloorMod, a, b)


def mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b``, folding a unit operand as TVM's operator does."""
    if is_const_int(a, 1):
        return b
    if is_const_int(b, 1):
        return a
    return a * b


def cast(e: PrimExpr, dtype) -> PrimExpr:
    """``e`` in ``dtype``: itself when it has it, a literal retyped, else a
    Cast (index expressions of int32 and int64 meet in shapes and bindings)."""
    if e.dtype == dtype:
        return e
    if isinstance(e, IntImm):
        return IntImm(dtype, e.value)
    from ..nodes import Cast

    return Cast(dtype, e)


__all__ = ["cast", "substitute", "substitute_expr", "buffer_is_plain", "plain_buffer", "find_nodes",
           "var_names", "uses_any", "is_const_int", "floordiv", "floormod", "mul"]
