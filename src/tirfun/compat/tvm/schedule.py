"""``tvm.tir.schedule``: the schedule, its error class, its trace and the
handles of blocks and loops, under the names TVM's schedule package gives
them, so that ``from tvm.tir.schedule import Schedule, BlockRV, LoopRV``
and ``tvm.tir.schedule.schedule.ScheduleError`` work as in TVM v0.20.

``BlockRV`` and ``LoopRV`` are tirfun's :class:`~tirfun.rewrites.BlockRef`
and :class:`~tirfun.rewrites.LoopRef` (what ``get_block`` and ``get_loops``
return), ``Trace`` is :class:`~tirfun.rewrites.Pipeline` (what
``sch.trace`` is). :mod:`.schedule_testing` serves
``tvm.tir.schedule.testing``.
"""

from __future__ import annotations

import sys

from ...errors import ScheduleError
from ...rewrites import BlockRef as BlockRV
from ...rewrites import LoopRef as LoopRV
from ...rewrites import Pipeline as Trace
from ...schedule import Schedule
from . import schedule_testing as testing

#: ``tvm.tir.schedule.schedule`` is TVM's module of the class itself; the
#: same names serve it
schedule = sys.modules[__name__]

__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV", "Trace", "testing", "schedule"]
