"""A function's index arithmetic retyped to one integer dtype.

TVM's ``IndexDataTypeNormalizer``: a tensor intrinsic is written with
``int32`` indices, and the block it replaces may index ``int64`` buffers;
tensorize retypes the implementation's indices to the block's before
putting it in place, so that its views of the block's buffers (shapes,
offsets, loops, indices) are as wide as the buffers themselves (an
``int32`` offset variable bound to a window of a buffer with more than
2**31 elements would not hold the window's offset), and the description's
before comparing it with the block, variable for variable.

A literal too wide for the target dtype cannot be retyped: that is a
NodeError, which tensorize answers by keeping the intrinsic as written.

What is an index: a buffer's shape, strides and offset, a loop's variable
and range, a block's iteration variables, their domains and bound values,
the regions a block declares, the indices of a load or a store, and the
integer operands of a comparison in a condition. There every signed
integer of 32 bits or more (literal, variable, cast) takes the target
dtype. A variable retyped in an index is retyped everywhere; where it then
meets an integer of another width in other arithmetic, the narrower
operand is cast to the wider, and a value stored into a buffer is cast to
the buffer's dtype, as TVM's ``DataTypeLegalizer`` does.
"""

from __future__ import annotations

import functools

import attrs
from pyrsistent import pvector

from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, Call, Cast, For, IfThenElse, IntImm,
    IterVar, Let, LetStmt, MatchBufferRegion, PrimExpr, PrimFunc, Ramp, Range, Select, Stmt, Var,
)
from ..nodes.base import with_fields
from ..nodes.dtype import DataType
from ..nodes.expr import BinaryOp, CmpOp, LogicOp, Not

_PVEC = type(pvector())

# calls whose two operands and result share one dtype: a retyped operand
# widens the other and the result, as TVM's DataTypeLegalizer rebuilds them
# through its operators
_SAME_TYPE_OPS = frozenset({"tir.shift_left", "tir.shift_right", "tir.bitwise_and", "tir.bitwise_or",
                            "tir.bitwise_xor"})


@functools.cache
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(cls))


def _retypable(dtype: DataType) -> bool:
    """A signed integer scalar of at least 32 bits (TVM's rule: narrower
    integers and unsigned ones hold data, not indices)."""
    return dtype.is_int and dtype.lanes == 1 and dtype.bits >= 32


def _widen(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """Integer operands of different widths, the narrower cast to the
    wider (an integer literal retyped)."""
    da, db = a.dtype, b.dtype
    if da == db or not (da.is_integer and db.is_integer) or da.lanes != db.lanes:
        return a, b
    if da.bits < db.bits:
        return _as(a, db), b
    return a, _as(b, da)


def _as(e: PrimExpr, dtype: DataType) -> PrimExpr:
    """``e`` as ``dtype``: a literal retyped, anything else cast."""
    if e.dtype == dtype:
        return e
    if isinstance(e, IntImm) and dtype.is_integer:
        return IntImm(dtype, e.value)
    return Cast(dtype, e)


class _Retyper:
    """One pass over a function. ``remap`` holds the variables retyped;
    with ``collect`` set, the pass only finds them (each variable met in an
    index), so that a second pass retypes every use, wherever it comes."""

    def __init__(self, dtype: DataType, remap: dict, collect: bool):
        self.dtype = dtype
        self.remap = remap
        self.collect = collect
        self.buffers: dict = {}

    # expressions ---------------------------------------------------------

    def index(self, e: PrimExpr) -> PrimExpr:
        """An index expression, its integers of the target dtype."""
        if isinstance(e, IntImm):
            return IntImm(self.dtype, e.value) if _retypable(e.dtype) else e
        if isinstance(e, Var):
            if _retypable(e.dtype) and e.dtype != self.dtype and self.collect:
                self.remap.setdefault(e, Var(e.name, self.dtype))
            return self.remap.get(e, e)
        if isinstance(e, Cast) and _retypable(e.dtype):
            return _as(self.index(e.value), self.dtype) if e.value.dtype.is_integer else \
                Cast(self.dtype, self.value(e.value))
        if isinstance(e, Call) and e.op in _SAME_TYPE_OPS | {"tir.bitwise_not"}:
            return self.same_type_call(e, self.index)
        return self.generic(e, self.index)

    def value(self, e: PrimExpr) -> PrimExpr:
        """An expression outside an index: retyped variables follow their
        new dtype, the arithmetic around them widened to agree."""
        if isinstance(e, Var):
            return self.remap.get(e, e)
        if isinstance(e, Call) and e.op == "tir.if_then_else":
            cond, a, b = e.args
            a, b = _widen(self.value(a), self.value(b))
            return Call(a.dtype, e.op, [self.cond(cond), a, b])
        if isinstance(e, Call) and e.op in _SAME_TYPE_OPS | {"tir.bitwise_not"}:
            return self.same_type_call(e, self.value)
        return self.generic(e, self.value)

    def same_type_call(self, e: Call, sub) -> PrimExpr:
        """A shift or bitwise operation: its operands through ``sub``, then
        widened to one dtype, which the result takes."""
        args = [sub(x) for x in e.args]
        if all(a is b for a, b in zip(args, e.args)):
            return e
        if len(args) == 2:
            args = list(_widen(*args))
        return Call(args[0].dtype, e.op, args)

    def cond(self, e: PrimExpr) -> PrimExpr:
        """A condition: the integer operands of its comparisons are indices."""
        if isinstance(e, (LogicOp, Not)):
            return self.generic(e, self.cond)
        if isinstance(e, CmpOp) and e.a.dtype.is_int and e.b.dtype.is_int:
            return self.generic(e, self.index)
        return self.value(e)

    def generic(self, e, sub):
        """``e`` with each expression field through ``sub`` and the result
        made to agree in dtype (operands widened, branches widened)."""
        if isinstance(e, BufferLoad):
            return with_fields(e, buffer=self.buffer(e.buffer), indices=[self.index(i) for i in e.indices])
        changes = {}
        for name in _fields(type(e)):
            old = getattr(e, name)
            if isinstance(old, PrimExpr):
                new = sub(old)
            elif type(old) is _PVEC and any(isinstance(x, PrimExpr) for x in old):
                new = pvector(sub(x) if isinstance(x, PrimExpr) else x for x in old)
            else:
                continue
            if new is not old:
                changes[name] = new
        if not changes:
            return e
        if isinstance(e, (BinaryOp, CmpOp)):
            a, b = _widen(changes.get("a", e.a), changes.get("b", e.b))
            changes.update(a=a, b=b)
        elif isinstance(e, Select):
            a, b = _widen(changes.get("true_value", e.true_value), changes.get("false_value", e.false_value))
            changes.update(true_value=a, false_value=b)
        elif isinstance(e, Ramp):
            a, b = _widen(changes.get("base", e.base), changes.get("stride", e.stride))
            changes.update(base=a, stride=b)
        elif isinstance(e, Let):
            changes["value"] = _as(changes.get("value", e.value), changes.get("var", e.var).dtype)
        return with_fields(e, **changes)

    # buffers and regions -------------------------------------------------

    def buffer(self, buf: Buffer) -> Buffer:
        """The buffer with its shape, strides and offset as indices (one
        buffer object for every occurrence)."""
        out = self.buffers.get(buf)
        if out is None:
            out = with_fields(buf, shape=[self.index(s) for s in buf.shape],
                              strides=[self.index(s) for s in buf.strides],
                              elem_offset=None if buf.elem_offset is None else self.index(buf.elem_offset))
            self.buffers[buf] = out
        return out

    def region(self, r: BufferRegion) -> BufferRegion:
        return BufferRegion(self.buffer(r.buffer), [self.range(x) for x in r.region])

    def range(self, r: Range) -> Range:
        return Range(self.index(r.min), self.index(r.extent))

    def iter_var(self, iv: IterVar) -> IterVar:
        return with_fields(iv, var=self.index(iv.var), dom=self.range(iv.dom))

    # statements ----------------------------------------------------------

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, For):
            return with_fields(s, loop_var=self.index(s.loop_var), min=self.index(s.min),
                               extent=self.index(s.extent), body=self.stmt(s.body))
        if isinstance(s, BlockRealize):
            return with_fields(s, iter_values=[self.index(v) for v in s.iter_values],
                               predicate=self.cond(s.predicate), block=self.stmt(s.block))
        if isinstance(s, Block):
            return with_fields(
                s, iter_vars=[self.iter_var(iv) for iv in s.iter_vars],
                alloc_buffers=[self.buffer(b) for b in s.alloc_buffers],
                match_buffers=[MatchBufferRegion(self.buffer(m.buffer), self.region(m.source))
                               for m in s.match_buffers],
                reads=[self.region(r) for r in s.reads], writes=[self.region(r) for r in s.writes],
                init=None if s.init is None else self.stmt(s.init), body=self.stmt(s.body))
        if isinstance(s, BufferStore):
            buf = self.buffer(s.buffer)
            value = self.value(s.value)
            if value.dtype != s.value.dtype:
                value = _as(value, s.value.dtype)  # the buffer's element dtype, as before
            return with_fields(s, buffer=buf, value=value, indices=[self.index(i) for i in s.indices],
                               predicate=None if s.predicate is None else self.value(s.predicate))
        if isinstance(s, LetStmt):
            # a variable retyped where it indexes takes a value of its dtype
            var = self.value(s.var)
            return with_fields(s, var=var, value=_as(self.value(s.value), var.dtype), body=self.stmt(s.body))
        if isinstance(s, IfThenElse):
            return with_fields(s, condition=self.cond(s.condition), then_case=self.stmt(s.then_case),
                               else_case=None if s.else_case is None else self.stmt(s.else_case))
        changes = {}
        for name in _fields(type(s)):
            old = getattr(s, name)
            if isinstance(old, Stmt):
                new = self.stmt(old)
            elif isinstance(old, PrimExpr):
                new = self.value(old)
            elif isinstance(old, Buffer):
                new = self.buffer(old)
            elif type(old) is _PVEC and old and all(isinstance(x, Stmt) for x in old):
                new = pvector(self.stmt(x) for x in old)
            else:
                continue
            if new is not old:
                changes[name] = new
        return with_fields(s, **changes) if changes else s


def normalize_index_dtype(func: PrimFunc, dtype) -> PrimFunc:
    """``func`` with its index arithmetic of ``dtype`` (TVM's
    ``IndexDataTypeNormalizer``); ``func`` itself when nothing changes."""
    dtype = DataType(dtype)
    remap: dict = {}

    def run(collect: bool) -> PrimFunc:
        r = _Retyper(dtype, remap, collect)
        buffer_map = {r.index(p) if _retypable(p.dtype) else p: r.buffer(b) for p, b in func.buffer_map.items()}
        params = [r.index(p) if _retypable(p.dtype) else p for p in func.params]
        return with_fields(func, params=params, buffer_map=buffer_map, body=r.stmt(func.body))

    run(True)
    out = run(False)
    return func if out == func else out


__all__ = ["normalize_index_dtype"]
