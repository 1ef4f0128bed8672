"""``tvm.tir``: the TIR nodes and helpers of :mod:`tirfun.tir`, with
``build``, ``Schedule`` and ``ScheduleError`` (what TVM's schedule raises,
and the base of every tirfun schedule error), and the node classes by
module as TVM arranges them (``tvm.tir.stmt.Block``, ``tvm.tir.expr.Var``)."""

from ...errors import ScheduleError
from ...nodes import expr, stmt
from ...runtime import build
from ...schedule import Schedule
from ...te.extern import call_packed
from ...tir import *  # noqa: F401,F403 - TVM's names, as tirfun.tir spells them
from ...tir import __all__ as _tir_all

__all__ = [*_tir_all, "build", "Schedule", "ScheduleError", "call_packed", "expr", "stmt"]
