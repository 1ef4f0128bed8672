"""Scoped statements outside the schedulable core: ``T.allocate_const`` and
``T.realize``.

``c = T.allocate_const([1.0, 2.0], "float32", [2])`` binds a pointer to
constant data for the rest of the body (TVM rounds the values to the dtype
through numpy, and so does tirfun). ``with T.realize(A[0:8], "global"):``
realizes a buffer region as TVM's script does: an ``AttrStmt`` of key
``realize_scope`` around a ``BufferRealize`` (without a scope, the
``BufferRealize`` alone).
"""

from __future__ import annotations

from ..nodes import AttrStmt, BufferRealize, FloatImm, IntImm, StringImm, Var
from ..nodes.extra_stmt import AllocateConst
from .parser_args import attr_dict, sig, to_bool_expr, to_dtype, to_shape, to_str
from .parser_values import Scope, describe


def _flat_numbers(ip, value, node, out: list) -> list:
    if isinstance(value, (list, tuple)):
        for v in value:
            _flat_numbers(ip, v, node, out)
        return out
    if isinstance(value, (IntImm, FloatImm)):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ip.fail(node, f"T.allocate_const data must be numbers, got {describe(value)}")
    out.append(value)
    return out


def _allocate_const(ip, node, a):
    import numpy as np

    dtype = to_dtype(ip, a.dtype, a.node("dtype"))
    extents = to_shape(ip, a.extents, a.node("extents"), "the extents of T.allocate_const")
    if not all(isinstance(e, IntImm) for e in extents):
        raise ip.fail(a.node("extents"), "T.allocate_const needs constant extents")
    if dtype.lanes != 1 or not (dtype.is_integer or dtype.is_float):
        raise ip.fail(a.node("dtype"), f"T.allocate_const holds integers or floats, not {dtype}")
    if dtype.numpy_name is None:
        raise ip.fail(a.node("dtype"), f"T.allocate_const of {dtype} is not supported by tirfun yet",
                      hint="use int, uint or float16/32/64 data")
    values = _flat_numbers(ip, a.data, a.node("data"), [])
    count = 1
    for e in extents:
        count *= e.value
    if count != len(values):
        raise ip.fail(a.node("data"), f"T.allocate_const: the extents hold {count} values but "
                      f"{len(values)} are given")
    try:
        # as TVM does, the values are converted by numpy to the dtype
        rounded = np.asarray(values, dtype=np.dtype(dtype.numpy_name).newbyteorder("<")).tobytes()
    except (OverflowError, ValueError, TypeError) as err:
        raise ip.fail(a.node("data"), f"T.allocate_const: the data do not fit {dtype}: {err}") from None
    annotations = attr_dict(ip, a.annotations, a.node("annotations"), "annotations")

    def open_(name):
        var = Var(ip.namer.fresh(name or "const"), "handle")
        return var, lambda body: AllocateConst(var, dtype, extents, rounded, body, annotations)

    return Scope("T.allocate_const", open_)


def _realize(ip, node, a):
    region = ip.region_of(a.buffer_slice, a.node("buffer_slice"))
    scope = None if a.storage_scope is None else to_str(ip, a.storage_scope, a.node("storage_scope"),
                                                          "storage_scope")
    cond = to_bool_expr(ip, a.condition, a.node("condition"), "the condition of T.realize")

    def open_(name):
        if name is not None:
            raise ip.fail(node, "T.realize binds no value to a name")

        def wrap(body):
            realize = BufferRealize(region.buffer, list(region.region), cond, body)
            if scope is None:
                return realize
            return AttrStmt(region.buffer, "realize_scope", StringImm(scope), realize)
        return None, wrap

    return Scope("T.realize", open_)


HANDLERS: dict = {
    "T.allocate_const": (sig("data", "dtype", "extents", ("annotations", None)), _allocate_const),
    "T.realize": (sig("buffer_slice", ("storage_scope", None), ("condition", True)), _realize),
}
