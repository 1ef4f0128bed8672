"""Script functions that build expressions: node constructors (``T.Add``,
``T.Cast``, ``T.Select``...), intrinsics (``T.exp``, ``T.if_then_else``,
``T.call_extern``...) and typed constants (``T.max_value``...).

Node constructors build exactly the node named, never folding literals, so
the printer's ``T.Add(1, 2)`` reads back as written. :data:`HANDLERS` maps
each name to its signature and handler.
"""

from __future__ import annotations

import math

from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, BufferLoad, Call, Cast, Div, FloatImm, FloorDiv,
    FloorMod, IntImm, Max, Min, Mod, Mul, Not, Or, PrimExpr, Ramp, Select, StringImm, Sub,
)
from ..tir import op as tir_op
from .parser_args import lift_pair, sig, to_bool_expr, to_dtype, to_str
from .parser_values import SlicedAccess, describe


def _node_ctor(cls):
    def handler(ip, node, a):
        x, y = lift_pair(ip, a.a, a.b, node)
        return cls(x, y)
    return handler


def _not(ip, node, a):
    return Not(to_bool_expr(ip, a.a, a.node("a"), "the operand of T.Not", lanes=None))


def _cast(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    return Cast(dtype, ip.as_expr(a.value, a.node("value")))


def _cast_fn(ip, node, a):
    return tir_op.cast(ip.as_expr(a.value, a.node("value")), to_dtype(ip, a.dtype, a.node("dtype")))


def _select(ip, node, a):
    t, f = lift_pair(ip, a.true_value, a.false_value, node)
    # as TVM's Select: a scalar condition, or one bool per lane of the values
    cond = to_bool_expr(ip, a.condition, a.node("condition"), "the condition of T.Select",
                        lanes=t.dtype.lanes)
    return Select(cond, t, f)


def _if_then_else(ip, node, a):
    cond = to_bool_expr(ip, a.cond, a.node("cond"), "the condition of T.if_then_else")
    return tir_op.if_then_else(cond, ip.expr_or_literal(a.t, a.node("t")), ip.expr_or_literal(a.f, a.node("f")))


def _exact(cls):
    """``T.min``, ``T.max``, ``T.truncmod``: the printer's spelling of the
    Min, Max and Mod nodes, so they build the node even between two literals
    (operands are brought to one dtype first, as the operators do)."""
    def handler(ip, node, a):
        from ..nodes.expr import match_types

        x = ip.expr_or_literal(a.a, a.node("a"))
        y = ip.expr_or_literal(a.b, a.node("b"))
        x, y = match_types(x, y)
        return cls(x, y)
    return handler


def _op(fn, *names):
    def handler(ip, node, a):
        values = [ip.expr_or_literal(getattr(a, n), a.node(n)) for n in names]
        return fn(*values)
    return handler


def _ramp(ip, node, a):
    base = ip.as_expr(a.base, a.node("base"))
    stride = a.stride
    stride = IntImm(base.dtype, stride) if isinstance(stride, int) else ip.as_expr(stride, a.node("stride"))
    lanes = a.lanes
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise ip.fail(a.node("lanes"), "the lanes of T.Ramp must be a constant int")
    return Ramp(base, stride, lanes)


def _broadcast(ip, node, a):
    lanes = a.lanes
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if not isinstance(lanes, int) or isinstance(lanes, bool):
        raise ip.fail(a.node("lanes"), "the lanes of T.Broadcast must be a constant int")
    return Broadcast(ip.as_expr(a.value, a.node("value")), lanes)


def _call_dtype(ip, a):
    # TVM reads an empty dtype as void (``T.call_extern("f", x, dtype="")``)
    return to_dtype(ip, "void" if a.dtype == "" else a.dtype, a.node("dtype"))


def _call_extern(op_name: str):
    def handler(ip, node, a):
        dtype = _call_dtype(ip, a)
        fname = to_str(ip, a.func_name, a.node("func_name"), "the function name")
        args = [StringImm(v) if isinstance(v, str) else ip.as_expr(v, node) for v in a.args]
        return Call(dtype, op_name, [StringImm(fname), *args])
    return handler


def _call_intrin(ip, node, a):
    dtype = _call_dtype(ip, a)
    name = to_str(ip, a.op, a.node("op"), "the intrinsic name")
    args = [StringImm(v) if isinstance(v, str) else ip.as_expr(v, node) for v in a.args]
    return tir_op.call_intrin(dtype, name, *args)


def _address_of(ip, node, a):
    load = a.buffer_load
    if isinstance(load, SlicedAccess):
        load = ip.as_expr(load, a.node("buffer_load"))
    if not isinstance(load, BufferLoad):
        raise ip.fail(a.node("buffer_load"), f"T.address_of takes a buffer element such as "
                      f"A[i], got {describe(a.buffer_load)}")
    return tir_op.address_of(load)


def _ret(ip, node, a):
    return tir_op.ret(ip.as_expr(a.value, a.node("value")))


def _likely(ip, node, a):
    cond = to_bool_expr(ip, a.cond, a.node("cond"), "the argument of T.likely")
    if isinstance(cond, IntImm):
        return cond  # TVM's likely leaves a constant as it is
    return Call(cond.dtype, "tir.likely", [cond])


def _reinterpret(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    value = ip.as_expr(a.value, a.node("value"))
    if value.dtype == dtype:
        return value  # as TVM's reinterpret: no call when nothing changes
    if dtype.bits * dtype.lanes != value.dtype.bits * value.dtype.lanes:
        raise ip.fail(node, f"T.reinterpret cannot change the size: {value.dtype} to {dtype}")
    return Call(dtype, "tir.reinterpret", [value])


def _storage_sync(ip, node, a):
    scope = to_str(ip, a.scope, a.node("scope"), "the storage scope")
    return Call("int32", "tir.tvm_storage_sync", [StringImm(scope)])


def _bitwise(op_name: str):
    def handler(ip, node, a):
        from ..nodes.expr import _bitwise as build

        x = ip.expr_or_literal(a.a, a.node("a"))
        y = ip.expr_or_literal(a.b, a.node("b"))
        if not isinstance(x, PrimExpr) and not isinstance(y, PrimExpr):
            x = ip.as_expr(x, a.node("a"))
        return build(op_name, x, y)
    return handler


def _bitwise_not(ip, node, a):
    return ~ip.as_expr(a.a, a.node("a"))


def _limit_value(which: str):
    limit = tir_op.max_value if which == "max" else tir_op.min_value

    def handler(ip, node, a):
        return limit(to_dtype(ip, a.dtype, a.node("dtype")))
    return handler


def _infinity(ip, node, a):
    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    if not dtype.is_float:
        raise ip.fail(node, f"T.infinity needs a float dtype, got {dtype}")
    return FloatImm(dtype, math.inf)


HANDLERS: dict = {
    "T.Cast": (sig("dtype", "value"), _cast),
    "T.cast": (sig("value", "dtype"), _cast_fn),
    "T.Select": (sig("condition", "true_value", "false_value"), _select),
    "T.if_then_else": (sig("cond", "t", "f", drop=("dtype",)), _if_then_else),
    "T.min": (sig("a", "b", drop=("dtype",)), _exact(Min)),
    "T.max": (sig("a", "b", drop=("dtype",)), _exact(Max)),
    "T.floordiv": (sig("a", "b", drop=("dtype",)), _op(tir_op.floordiv, "a", "b")),
    "T.floormod": (sig("a", "b", drop=("dtype",)), _op(tir_op.floormod, "a", "b")),
    "T.truncdiv": (sig("a", "b", drop=("dtype",)), _op(tir_op.truncdiv, "a", "b")),
    "T.truncmod": (sig("a", "b", drop=("dtype",)), _exact(Mod)),
    "T.Add": (sig("a", "b"), _node_ctor(Add)),
    "T.Sub": (sig("a", "b"), _node_ctor(Sub)),
    "T.Mul": (sig("a", "b"), _node_ctor(Mul)),
    "T.Div": (sig("a", "b"), _node_ctor(Div)),
    "T.Mod": (sig("a", "b"), _node_ctor(Mod)),
    "T.FloorDiv": (sig("a", "b"), _node_ctor(FloorDiv)),
    "T.FloorMod": (sig("a", "b"), _node_ctor(FloorMod)),
    "T.Min": (sig("a", "b"), _node_ctor(Min)),
    "T.Max": (sig("a", "b"), _node_ctor(Max)),
    "T.EQ": (sig("a", "b"), _node_ctor(EQ)),
    "T.NE": (sig("a", "b"), _node_ctor(NE)),
    "T.LT": (sig("a", "b"), _node_ctor(LT)),
    "T.LE": (sig("a", "b"), _node_ctor(LE)),
    "T.GT": (sig("a", "b"), _node_ctor(GT)),
    "T.GE": (sig("a", "b"), _node_ctor(GE)),
    "T.And": (sig("a", "b"), _node_ctor(And)),
    "T.Or": (sig("a", "b"), _node_ctor(Or)),
    "T.Not": (sig("a"), _not),
    "T.Ramp": (sig("base", "stride", "lanes"), _ramp),
    "T.Broadcast": (sig("value", "lanes"), _broadcast),
    "T.call_extern": (sig("dtype", "func_name", star="args", dtype_first=True),
                      _call_extern("tir.call_extern")),
    "T.call_pure_extern": (sig("dtype", "func_name", star="args", dtype_first=True),
                           _call_extern("tir.call_pure_extern")),
    "T.call_intrin": (sig("dtype", "op", star="args", dtype_first=True), _call_intrin),
    "T.address_of": (sig("buffer_load", drop=("dtype",)), _address_of),
    "T.ret": (sig("value", drop=("dtype",)), _ret),
    "T.likely": (sig("cond", drop=("dtype",)), _likely),
    "T.reinterpret": (sig("dtype", "value", dtype_first=True), _reinterpret),
    "T.tvm_storage_sync": (sig("scope"), _storage_sync),
    "T.bitwise_and": (sig("a", "b", drop=("dtype",)), _bitwise("tir.bitwise_and")),
    "T.bitwise_or": (sig("a", "b", drop=("dtype",)), _bitwise("tir.bitwise_or")),
    "T.bitwise_xor": (sig("a", "b", drop=("dtype",)), _bitwise("tir.bitwise_xor")),
    "T.shift_left": (sig("a", "b", drop=("dtype",)), _bitwise("tir.shift_left")),
    "T.shift_right": (sig("a", "b", drop=("dtype",)), _bitwise("tir.shift_right")),
    "T.bitwise_not": (sig("a", drop=("dtype",)), _bitwise_not),
    "T.max_value": (sig("dtype"), _limit_value("max")),
    "T.min_value": (sig("dtype"), _limit_value("min")),
    "T.infinity": (sig("dtype"), _infinity),
    "T.abs": (sig("x", drop=("dtype",)), _op(tir_op.abs, "x")),
    "T.ldexp": (sig("x", "e", drop=("dtype",)), _op(tir_op.ldexp, "x", "e")),
}

for _name in tir_op.FLOAT_UNARY + tir_op.FLOAT_PREDICATES + tir_op.INT_UNARY:
    HANDLERS[f"T.{_name}"] = (sig("x", drop=("dtype",)), _op(getattr(tir_op, _name), "x"))
for _name in tir_op.FLOAT_BINARY:
    HANDLERS[f"T.{_name}"] = (sig("x", "y", drop=("dtype",)), _op(getattr(tir_op, _name), "x", "y"))
HANDLERS["T.fabs"] = HANDLERS["T.abs"]
