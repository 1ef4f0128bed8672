"""The helpers TVM's schedule tests are written with, served by
``tirfun.compat``: ``tvm.tir.schedule.testing`` (trace round trips,
comparison without ``global_symbol``) and ``tvm.testing`` (``parameter``,
``CompareBeforeAfter``, ``main``), so a test suite written for TVM runs
against tirfun."""

from __future__ import annotations

import sys

import pytest

import tirfun.compat
import tirfun.compat.tvm as tvm
from tirfun.analysis.equality import StructuralMismatch
from tirfun.compat.tvm.schedule_testing import (
    assert_structural_equal_ignore_global_symbol,
    verify_trace_roundtrip,
)
from tirfun.compat.tvm.testing import CompareBeforeAfter, check_transform
from tirfun.errors import ArgumentError, ScheduleError
from tirfun.nodes import IRModule
from tirfun.script import from_source
from tirfun.script import tir as T  # the TVMScript below names it
from corner_sources import TWO_STAGES


def _two_stages(c: int) -> str:
    """corner_sources' producer and consumer, the consumer adding ``c``."""
    return TWO_STAGES.replace("T.float32(1)", f"T.float32({c})")


def _scheduled(source: str) -> tuple[tvm.Schedule, IRModule]:
    func = from_source(source)
    sch = tvm.tir.Schedule(func, debug_mask="all")
    i, _ = sch.get_loops("C")
    outer, _ = sch.split(i, [None, 4])
    sch.compute_at(sch.get_block("B"), outer)
    return sch, IRModule({"main": func})


def test_verify_trace_roundtrip_replays_the_trace_three_ways_and_returns_the_replayed_module():
    sch, start = _scheduled(_two_stages(1))
    replayed = verify_trace_roundtrip(sch=sch, mod=start["main"])
    assert isinstance(replayed, tvm.tir.Schedule)
    assert tvm.ir.structural_equal(replayed.mod, sch.mod)
    assert len(sch.trace) == 2  # split and compute_at, the queries left out


def test_verify_trace_roundtrip_fails_when_the_trace_gives_another_module():
    sch, _ = _scheduled(_two_stages(1))
    other = from_source(_two_stages(3))  # the same loops, another constant
    with pytest.raises(StructuralMismatch, match="FloatImm"):
        verify_trace_roundtrip(sch=sch, mod=other)


def test_comparison_ignores_global_symbol_but_not_the_body():
    one = from_source(_two_stages(1))
    renamed = one.with_attr("global_symbol", "elsewhere")
    assert not tvm.ir.structural_equal(one.with_attr("global_symbol", "main"), renamed)
    assert_structural_equal_ignore_global_symbol(one.with_attr("global_symbol", "main"), renamed)
    assert_structural_equal_ignore_global_symbol(IRModule({"main": one}), IRModule({"main": renamed}), True)
    with pytest.raises(StructuralMismatch):
        assert_structural_equal_ignore_global_symbol(one, from_source(_two_stages(2)))


def test_check_transform_fails_on_another_result_and_on_a_missing_error():
    before = from_source(_two_stages(1))
    identity = lambda mod: mod  # noqa: E731
    check_transform(before, before, identity)
    with pytest.raises(StructuralMismatch):
        check_transform(before, from_source(_two_stages(2)), identity)
    with pytest.raises(AssertionError, match="expected the transform to raise ScheduleError"):
        check_transform(before, ScheduleError, identity)
    with pytest.raises(TypeError, match="expected must give"):
        check_transform(before, 42, identity)


def _split_b_by(factor):
    def transform(mod):
        sch = tvm.tir.Schedule(mod)
        sch.split(sch.get_loops("B")[0], [None, factor])
        return sch.mod
    return transform


class TestSplitOfATVMScriptFunction(CompareBeforeAfter):
    """Undecorated TVMScript before and after, a transform method."""

    def transform(self):
        return _split_b_by(4)

    def before(A: T.Buffer((8,))):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    def expected(A: T.Buffer((8,))):
        for i_0, i_1 in T.grid(2, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                A[vi] = T.float32(0)


class TestSplitByEachParameter(CompareBeforeAfter):
    """A transform fixture depending on a parameter; the expected function
    follows it."""

    factor = tvm.testing.parameter(2, 4)

    @pytest.fixture
    def transform(self, factor):
        return _split_b_by(factor)

    def before(A: T.Buffer((8,))):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    @pytest.fixture
    def expected(self, factor):
        return from_source(f"""
@T.prim_func
def expected(A: T.Buffer((8,))):
    for i_0, i_1 in T.grid({8 // factor}, {factor}):
        with T.block("B"):
            vi = T.axis.spatial(8, i_0 * {factor} + i_1)
            A[vi] = T.float32(0)
""")


class TestComputeInlineOfAnOutputIsRefused(CompareBeforeAfter):
    """An exception class as the expected outcome; a module as before."""

    def transform(self):
        def inline(mod):
            sch = tvm.tir.Schedule(mod)
            sch.compute_inline(sch.get_block("C"))
            return sch.mod
        return inline

    before = IRModule({"main": from_source(_two_stages(1))})
    expected = ScheduleError


by_name = tvm.testing.parameter(by_dict={"two": 2, "three": 3})


def test_parameter_by_dict_gives_each_value(by_name, request):
    assert by_name == {"two": 2, "three": 3}[request.node.callspec.id]


def test_parameter_takes_values_or_a_dict_not_both():
    with pytest.raises(ArgumentError, match="not both"):
        tvm.testing.parameter(1, by_dict={"one": 1})


def test_compare_before_after_refuses_two_spellings_of_one_role():
    with pytest.raises(TypeError, match="both before and Before"):
        type("TestTwice", (CompareBeforeAfter,), {"before": 1, "Before": 2})


def test_main_runs_the_calling_file(monkeypatch):
    seen = []
    monkeypatch.setattr(pytest, "main", lambda args: seen.append(args) or 5)
    monkeypatch.setattr(sys, "argv", ["prog", "-k", "nothing"])
    with pytest.raises(SystemExit) as stop:
        tvm.testing.main()
    assert stop.value.code == 5
    assert seen == [[__file__, "-k", "nothing"]]


def test_install_serves_the_schedule_package():
    tirfun.compat.install()
    try:
        import tvm as served
        from tvm.tir.schedule import BlockRV, LoopRV, Trace
        from tvm.tir.schedule.schedule import ScheduleError as served_error
        from tvm.tir.schedule.testing import verify_trace_roundtrip as served_verify

        sch = served.tir.Schedule(from_source(_two_stages(1)))
        assert isinstance(sch.get_block("B"), BlockRV)
        assert all(isinstance(loop, LoopRV) for loop in sch.get_loops("B"))
        assert isinstance(sch.trace, Trace)
        assert served_error is ScheduleError and served_verify is verify_trace_roundtrip
    finally:
        tirfun.compat.uninstall()
    assert "tvm.tir.schedule.testing" not in sys.modules
