"""``tvm.tir``: the TIR nodes and helpers of :mod:`tirfun.tir`, with
``build``, ``Schedule`` and ``ScheduleError`` (what TVM's schedule raises,
and the base of every tirfun schedule error), and the node classes by
module as TVM arranges them (``tvm.tir.stmt.Block``, ``tvm.tir.expr.Var``),
and the schedule package (``tvm.tir.schedule``: :mod:`.schedule`).

``decl_buffer`` is TVM's: the buffer gets a data pointer of its own, as
every TVM buffer has one (tirfun's own ``decl_buffer`` leaves it to be made
when something needs it)."""

from __future__ import annotations

from ...errors import ScheduleError
from ...nodes import Buffer, PointerType, Shuffle, Var, expr, stmt
from ...nodes.dtype import DataType
from ...nodes.reducer import CommReducer
from ...runtime import build
from ...schedule import Schedule
from ...script.tir import SizeVar
from ...te.extern import call_packed
from ...te.reduce import Reduce
from ...te.tensor import TensorLoad as ProducerLoad
from ...tir import *  # noqa: F401,F403 - TVM's names, as tirfun.tir spells them
from ...tir import __all__ as _tir_all
from ...tir import op as _op
from . import analysis, schedule


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None, elem_offset=None,
                scope="", data_alignment=-1, offset_factor=0, buffer_type="", axis_separators=None,
                span=None) -> Buffer:
    """TVM's ``tvm.tir.decl_buffer``: as :func:`tirfun.tir.decl_buffer`,
    and a buffer without ``data`` gets a pointer variable (``<name>_data``,
    pointing to its elements; a bool buffer's storage is int8, as in TVM)."""
    if data is None:
        element = DataType(dtype if dtype is not None else "float32")
        storage = DataType("int8") if element.is_bool else element
        data = Var(f"{name}_data", "handle", PointerType(storage, scope or "global"))
    return _op.decl_buffer(shape, dtype if dtype is not None else "float32", name, data, strides,
                           elem_offset, scope, data_alignment, offset_factor, buffer_type,
                           axis_separators)


__all__ = [*_tir_all, "build", "Schedule", "ScheduleError", "call_packed", "expr", "stmt",
           "decl_buffer", "Shuffle", "CommReducer", "SizeVar", "Reduce", "ProducerLoad", "schedule",
           "analysis"]
