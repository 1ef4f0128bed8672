"""Intrinsics defined by the plain TIR they stand for.

TVM gives some intrinsics their meaning by rewriting them into ordinary
expressions before code generation (their ``FLegalize``); :func:`legalize`
does the same here, so the interpreter and the CPU build read one
definition. ``q_multiply_shift(x, y, q, s)`` is the fixed-point
multiplication of quantized kernels: ``round(x * y * 2**(s - q))`` computed
in 64 bits, with TVM's shortcut when ``y`` is ``1 << 30`` (a power of two).
``get_active_lane_mask(dtype, base, limit)`` of a fixed number of lanes
(the mask of TVM's predicated loads and stores) is LLVM's
``llvm.get.active.lane.mask``: lane ``k`` is on when ``base + k < limit``,
both read as unsigned and the sum computed without wrapping.
"""

from __future__ import annotations

from ..errors import NodeError
from ..nodes import LT, Broadcast, Call, Cast, IntImm, PrimExpr, Ramp, Select, const
from ..nodes.dtype import DataType


def _int_value(e: PrimExpr) -> int | None:
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Broadcast) and isinstance(e.value, IntImm):
        return e.value.value
    return None


def _q_multiply_shift(x, y, q, s) -> PrimExpr:
    if not (y.dtype.element_of == "int32" and s.dtype.element_of == "int32"):
        raise NodeError(f"q_multiply_shift takes an int32 multiplier and shift, got {y.dtype} "
                        f"and {s.dtype}")
    lanes = x.dtype.lanes
    low = DataType("int32").with_lanes(lanes)
    s_value = _int_value(s)
    if _int_value(y) == 1 << 30 and s_value is not None:
        # y stands for 0.5: a plain shift by s - 1, rounding when it goes right
        exp = s - 1
        if s_value - 1 > 0:
            return x << exp
        exp = -exp
        rounding = const(1, low) << (exp - 1)
        return (x + rounding) >> exp
    zero = const(0, s.dtype)
    left = Select(s > zero, s, zero)
    right = Select(s > zero, zero, -s)
    return _q_multiply(x, y, q, left, right, left != zero)


def _q_multiply(x, y, q, left, right, needs_left) -> PrimExpr:
    lanes = x.dtype.lanes
    high = DataType("int64").with_lanes(lanes)
    low = DataType("int32").with_lanes(lanes)
    one = const(1, high)
    x = Cast(high, x)
    y = Cast(high, y)
    x = Select(needs_left, x << Cast(high, left), x)
    x = x * y
    total = Cast(high, right + q)
    x = x + (one << (total - 1))
    return Cast(low, x >> total)


def _active_lane_mask(dtype: DataType, base: PrimExpr, limit: PrimExpr) -> PrimExpr:
    lanes = dtype.lanes
    if base.dtype.lanes != 1 or limit.dtype.lanes != 1 or not base.dtype.is_integer \
            or not limit.dtype.is_integer:
        raise NodeError(f"get_active_lane_mask takes a scalar integer base and limit, got "
                        f"{base.dtype} and {limit.dtype}")
    if not dtype.element_of.is_bool:
        raise NodeError(f"get_active_lane_mask makes a mask of bool lanes, not {dtype}")
    # unsigned, and wide enough that base + lanes - 1 cannot wrap
    wide = DataType("uint64") if max(base.dtype.bits, limit.dtype.bits) == 64 else DataType("int64")

    def unsigned(e: PrimExpr) -> PrimExpr:
        if e.dtype.is_int:
            e = Cast(DataType(f"uint{e.dtype.bits}"), e)
        return e if e.dtype == wide else Cast(wide, e)
    if lanes == 1:
        return LT(unsigned(base), unsigned(limit))
    return LT(Ramp(unsigned(base), const(1, wide), lanes), Broadcast(unsigned(limit), lanes))


def legalize(call: Call) -> PrimExpr | None:
    """The plain expression an intrinsic call stands for, or None when it
    is not one of these."""
    if call.op == "tir.get_active_lane_mask" and len(call.args) == 2:
        return _active_lane_mask(call.dtype, *call.args)
    if call.op == "tir.q_multiply_shift" and len(call.args) == 4:
        return _q_multiply_shift(*call.args)
    if call.op == "tir.q_multiply_shift_per_axis" and len(call.args) == 7:
        x, y, left, right, q, needs_left, _needs_right = call.args
        return _q_multiply(x, y, q, left, right, needs_left)
    return None


#: the intrinsics :func:`legalize` defines
LEGALIZED = frozenset({"tir.q_multiply_shift", "tir.q_multiply_shift_per_axis",
                       "tir.get_active_lane_mask"})

__all__ = ["legalize", "LEGALIZED"]
