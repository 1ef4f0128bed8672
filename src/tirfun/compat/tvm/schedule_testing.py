"""``tvm.tir.schedule.testing``: the two checks TVM's schedule tests make
after every primitive, for tests written against TVM's API.

:func:`verify_trace_roundtrip` replays a schedule's trace on the module it
started from, three ways (the trace itself, the trace written to JSON and
read back, the trace printed as Python and run), and checks that each gives
the schedule's module. :func:`assert_structural_equal_ignore_global_symbol`
compares two functions or modules, ignoring the ``global_symbol``
attribute, which a ``@T.prim_func`` written under another name carries.
"""

from __future__ import annotations

import attrs

from ...analysis.equality import assert_structural_equal
from ...nodes import IRModule, PrimFunc
from ...rewrites import Pipeline
from ...schedule import Schedule

__all__ = ["verify_trace_roundtrip", "assert_structural_equal_ignore_global_symbol"]


def _without_global_symbol(value):
    if isinstance(value, PrimFunc):
        return value.without_attr("global_symbol")
    if isinstance(value, IRModule):
        return attrs.evolve(value, functions={name: _without_global_symbol(f)
                                              for name, f in value.functions.items()})
    return value


def assert_structural_equal_ignore_global_symbol(actual, expected, *_ignored) -> None:
    """Raise unless ``actual`` and ``expected`` (functions or modules) are
    structurally equal once their functions' ``global_symbol`` attributes
    are dropped. TVM's third argument (whether free variables may be
    mapped) is accepted and has no effect: tirfun's structural equality
    already maps the variables a function binds."""
    assert_structural_equal(_without_global_symbol(actual), _without_global_symbol(expected))


def _replay_python(trace: Pipeline, start: IRModule, debug_mask) -> IRModule:
    namespace: dict = {}
    exec(compile(trace.as_python("sch"), "<trace>", "exec"), namespace)  # noqa: S102 - our own text
    sch = Schedule(start, debug_mask=debug_mask)
    namespace["apply_trace"](sch)
    return sch.mod


def verify_trace_roundtrip(sch: Schedule, mod, *, debug_mask="all",
                           text_format=("json", "python")) -> Schedule:
    """Check that ``sch.trace`` replays on ``mod`` (the module the schedule
    started from, or its ``main`` function) to ``sch.mod``: as it is, after
    a trip through JSON (``"json"`` in ``text_format``) and run as the
    Python it prints (``"python"``). Returns a fresh schedule of the replayed
    module, as TVM does. Raises :class:`~tirfun.analysis.equality.StructuralMismatch`
    naming the first difference when a replay gives another module."""
    start = IRModule({"main": mod}) if isinstance(mod, PrimFunc) else mod
    formats = (text_format,) if isinstance(text_format, str) else tuple(text_format)
    trace = sch.trace
    replayed = trace(start)
    assert_structural_equal(replayed, sch.mod)
    if "json" in formats:
        assert_structural_equal(Pipeline.from_json(trace.to_json())(start), sch.mod)
    if "python" in formats:
        assert_structural_equal(_replay_python(trace, start, debug_mask), sch.mod)
    return Schedule(replayed, debug_mask=debug_mask)
