"""Applying a primitive leaves no reference cycles behind.

Python frees an acyclic structure the moment it is dropped; a cycle (a
nested function that calls itself holds itself through its closure, with
everything it closed over: memo tables of rewritten nodes) waits for the
cyclic collector, whose pauses then fall on whatever primitive runs next.
Every primitive of the rewrite-speed benchmark, on its tutorial-sized
module, must leave nothing for the collector.
"""

import gc
import importlib.util
import pathlib

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "rewrite_speed.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("rewrite_speed_benchmark", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BENCH = _benchmark()
_MODULES = _BENCH._modules(None)


@pytest.mark.parametrize("name, module, record", _BENCH.primitive_records(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_primitive_leaves_no_cycles(name, module, record):
    mod = _MODULES[module]
    record(mod)  # caches of the module's index and of the record are filled once
    garbage = _cycles_left_by(lambda: record(mod))
    assert not garbage, f"{name} left cycles of {garbage[:8]}"


def _cycles_left_by(step) -> list[str]:
    """The kinds of object that three runs of ``step`` leave in cycles.

    Everything alive before is frozen out of the collector's sight (a full
    collection of the test session's heap costs far more than the step),
    so the one collection afterwards looks only at what the runs made."""
    gc.freeze()
    was = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            step()
        gc.collect()
        return sorted({type(o).__qualname__ if not callable(o) else getattr(o, "__qualname__", type(o).__name__)
                       for o in gc.garbage})
    finally:
        gc.set_debug(was)
        gc.garbage.clear()
        gc.unfreeze()


def test_the_check_sees_a_cycle_a_step_leaves():
    def step():
        def again():
            return again  # the function holds itself through its closure
        again()

    assert "test_the_check_sees_a_cycle_a_step_leaves.<locals>.step.<locals>.again" in _cycles_left_by(step)
    assert _cycles_left_by(lambda: [1, 2, 3]) == []
