"""``PrimFunc.specialize``: bind parameters of a function to values.

A function written for any shape (``A = T.match_buffer(a, (m, n))``) is
specialized to one shape by giving the buffer parameter a buffer of that
shape, or by giving a scalar parameter a value. As TVM's ``specialize``:

* a scalar parameter (one without a buffer) takes an expression or a
  Python number; the parameter leaves the signature and every use of it
  becomes the value;
* a buffer parameter takes a Buffer, and the parameter's own buffer is
  matched against it field by field: each dimension, stride, element
  offset and the data pointer either are equal, or are a variable of the
  parameter's buffer that takes the given buffer's value there. A variable
  met twice must take one value. The parameter stays (its buffer now has
  the given shape); the variables that were parameters leave the
  signature. The given buffer's dtype, scope and name are not looked at;
  its data alignment and offset factor must match;
* every operator whose operand changed is folded when both operands are
  now constants (``(n + 1) * 42`` with ``n = 16`` is ``714``), as TVM's
  arithmetic folds them; nothing else is simplified. A fold that would
  divide by zero or leave the dtype's range is not made;
* a data pointer that takes an expression rather than a variable (an
  ``T.address_of(...)``) stays a variable in the buffers, bound to the
  expression by a ``LetStmt`` around each ``T.decl_buffer`` of it.

The result is not verified, as TVM's is not: a symbolic value can leave a
variable undeclared (``n = x * 8``), which the verifier then names when the
function is built.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..analysis.traversal import transform_plain
from ..errors import NodeError
from ..nodes import (
    And, Buffer, DeclBuffer, FloatImm, IntImm, LetStmt, Not, Or, PrimExpr, PrimFunc, Var,
)
from ..nodes.base import Node
from ..nodes.expr import fold


def specialize(func: PrimFunc, param_map) -> PrimFunc:
    """``func`` with the parameters of ``param_map`` bound to values (see
    the module docstring). Keys are parameters (or their names), values
    Buffers for buffer parameters and expressions or numbers for the
    others. Returns ``func`` itself when nothing changes."""
    if not isinstance(param_map, Mapping):
        raise NodeError(f"specialize takes a mapping from parameters to values, got "
                        f"{type(param_map).__name__}")
    values: dict[Var, PrimExpr] = {}
    origin: dict[Var, str] = {}
    for key, value in param_map.items():
        param = _param(func, key)
        if param in func.buffer_map:
            if not isinstance(value, Buffer):
                raise NodeError(f"specialize: parameter {param.name} is viewed as buffer "
                                f"{func.buffer_map[param].name}; give it a Buffer, got {_kind(value)}")
            _match_buffer(func.buffer_map[param], value, values, origin)
        else:
            if isinstance(value, Buffer):
                raise NodeError(f"specialize: parameter {param.name} has no buffer; give it an "
                                f"expression of type {param.dtype}, got buffer {value.name}")
            _bind(param, _value_of(param, value), values, origin, f"parameter {param.name}")
    if not values:
        return func
    return _Specializer(values).function(func)


def _param(func: PrimFunc, key) -> Var:
    params = {p.name: p for p in func.params}
    if isinstance(key, str):
        found = params.get(key)
    elif isinstance(key, Var):
        found = key if key in func.params else None
    else:
        raise NodeError(f"specialize: the keys are parameters or their names, got {_kind(key)}")
    if found is None:
        name = key if isinstance(key, str) else key.name
        raise NodeError(f"specialize: {name} is not a parameter of the function (its parameters: "
                        f"{', '.join(params) or 'none'})")
    return found


def _kind(value) -> str:
    if isinstance(value, Node):
        return f"{type(value).__name__} {value.script()}" if isinstance(value, PrimExpr) else type(value).__name__
    return f"{type(value).__name__} {value!r}"


def _value_of(param: Var, value) -> PrimExpr:
    """The value a scalar parameter takes, as an expression of its type."""
    dtype = param.dtype
    if isinstance(value, bool) or isinstance(value, int):
        if dtype.is_float:
            return FloatImm(dtype, float(value))
        if not (dtype.is_int or dtype.is_uint or dtype.is_bool):
            raise NodeError(f"specialize: parameter {param.name} is a {dtype}; a number cannot be its value")
        low, high = dtype.int_range() if not dtype.is_bool else (0, 1)
        if not low <= int(value) <= high:
            raise NodeError(f"specialize: {value} does not fit parameter {param.name}'s type {dtype}")
        return IntImm(dtype, int(value))
    if isinstance(value, float):
        if not dtype.is_float:
            raise NodeError(f"specialize: parameter {param.name} is a {dtype}; {value!r} is not a value of it")
        return FloatImm(dtype, value)
    if not isinstance(value, PrimExpr):
        raise NodeError(f"specialize: parameter {param.name} takes an expression or a number, got {_kind(value)}")
    if value.dtype != dtype:
        if type(value) is IntImm and (dtype.is_int or dtype.is_uint):
            return _value_of(param, value.value)  # a literal of another width: its number
        raise NodeError(f"specialize: parameter {param.name} is a {dtype}, the value "
                        f"{value.script()} a {value.dtype}")
    return value


def _bind(var: Var, value: PrimExpr, values: dict, origin: dict, where: str) -> None:
    known = values.get(var)
    if known is None:
        values[var] = value
        origin[var] = where
    elif known != value:
        raise NodeError(f"specialize: variable {var.name} takes two values: {known.script()} "
                        f"({origin[var]}) and {value.script()} ({where})")


def _match_buffer(old: Buffer, new: Buffer, values: dict, origin: dict) -> None:
    """Read off what the variables of ``old``'s signature take in ``new``."""
    where = f"buffer {old.name}"
    if len(new.shape) != len(old.shape):
        raise NodeError(f"specialize: {where} has {len(old.shape)} dimensions, the buffer given "
                        f"for it {len(new.shape)}")
    if len(new.strides) != len(old.strides):
        raise NodeError(f"specialize: {where} has {len(old.strides)} strides, the buffer given "
                        f"for it {len(new.strides)}")
    if new.data_alignment != old.data_alignment:
        raise NodeError(f"specialize: {where} is aligned to {old.data_alignment} bytes, the buffer "
                        f"given for it to {new.data_alignment}")
    if (new.offset_factor or 1) != (old.offset_factor or 1):
        raise NodeError(f"specialize: {where} has offset factor {old.offset_factor or 1}, the "
                        f"buffer given for it {new.offset_factor or 1}")
    pairs = [(f"dimension {k}", a, b) for k, (a, b) in enumerate(zip(old.shape, new.shape))]
    pairs += [(f"stride {k}", a, b) for k, (a, b) in enumerate(zip(old.strides, new.strides))]
    pairs.append(("the element offset", _offset(old), _offset(new)))
    for what, mine, given in pairs:
        if mine == given:
            continue
        if type(mine) is not Var:
            raise NodeError(f"specialize: {what} of {where} is {mine.script()}, which is not a "
                            f"variable, and the buffer given has {given.script()} there: only a "
                            "variable of the signature can take a value")
        if given.dtype != mine.dtype:
            if type(given) is not IntImm:
                raise NodeError(f"specialize: {what} of {where} is {mine.name}, a {mine.dtype}, and "
                                f"the buffer given has {given.script()} there, a {given.dtype}")
            given = _value_of(mine, given.value)
        _bind(mine, given, values, origin, f"{what} of {where}")
    if old.data is not None and new.data is not None and new.data != old.data:
        _bind(old.data, new.data, values, origin, f"the data of {where}")


def _offset(buffer: Buffer) -> PrimExpr:
    offset = buffer.elem_offset
    return IntImm("int32", 0) if offset is None else offset


class _Specializer:
    """Substitutes the bound variables, folds what became constant, and
    gives every buffer the substituted signature."""

    def __init__(self, values: dict):
        self.values = values
        self.buffers: dict[Buffer, Buffer] = {}

    def function(self, func: PrimFunc) -> PrimFunc:
        buffer_map = {p: self.buffer(b) for p, b in func.buffer_map.items()}
        body = self.visit(func.body)
        # a buffer parameter stays: its buffer's pointer may be the
        # parameter itself, which the matched buffer's pointer replaces
        params = [p for p in func.params if p in func.buffer_map or p not in self.values]
        return PrimFunc(params, body, func.ret_type, buffer_map, func.attrs, func.renamed_blocks)

    def visit(self, node):
        return transform_plain(node, self._post, self._pre, self.values, _fold)

    def buffer(self, buffer: Buffer) -> Buffer:
        out = self.buffers.get(buffer)
        if out is None:
            data = buffer.data
            if data is not None:
                value = self.values.get(data)
                # a pointer that takes an expression stays a variable here;
                # the declaration binds it (see _post)
                if type(value) is Var:
                    data = value
            changed = {}
            shape = [self.visit(e) for e in buffer.shape]
            if any(a is not b for a, b in zip(shape, buffer.shape)):
                changed["shape"] = shape
            strides = [self.visit(e) for e in buffer.strides]
            if any(a is not b for a, b in zip(strides, buffer.strides)):
                changed["strides"] = strides
            if buffer.elem_offset is not None:
                offset = self.visit(buffer.elem_offset)
                if offset is not buffer.elem_offset:
                    changed["elem_offset"] = offset
            if data is not buffer.data:
                changed["data"] = data
            out = buffer if not changed else attrs.evolve(buffer, **changed)
            self.buffers[buffer] = out
        return out

    def _pre(self, node):
        if type(node) is Buffer:
            return self.buffer(node)
        if isinstance(node, Var):  # a size variable, say
            return self.values.get(node, node)
        return None

    def _post(self, node):
        kind = type(node)
        if kind is Not and type(node.a) is IntImm:
            return IntImm("bool", int(not node.a.value))
        if kind is DeclBuffer:
            # a declaration whose pointer takes an expression binds it there
            data = node.buffer.data
            value = self.values.get(data) if data is not None else None
            if value is not None and type(value) is not Var:
                return LetStmt(data, value, node)
        return node


def _fold(kind, a, b):
    """An operator whose operands changed: folded where both are now
    constants (see :func:`~tirfun.nodes.expr.fold`), else rebuilt."""
    out = fold(kind, a, b)
    if out is None:
        out = _folded_logic(kind, a, b)
    return kind(a, b) if out is None else out


def _folded_logic(kind, a, b):
    """``and``/``or`` of two boolean literals, which ``fold`` leaves."""
    if type(a) is IntImm and type(b) is IntImm and a.dtype.is_bool and b.dtype.is_bool:
        if kind is And:
            return IntImm("bool", int(bool(a.value) and bool(b.value)))
        if kind is Or:
            return IntImm("bool", int(bool(a.value) or bool(b.value)))
    return None


__all__ = ["specialize"]
