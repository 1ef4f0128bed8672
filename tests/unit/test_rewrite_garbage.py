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
    gc.collect()
    was = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            record(mod)
        gc.collect()
        garbage = [type(o).__qualname__ if not callable(o) else getattr(o, "__qualname__", type(o).__name__)
                   for o in gc.garbage]
    finally:
        gc.set_debug(was)
        gc.garbage.clear()
    assert not garbage, f"{name} left cycles of {sorted(set(garbage))[:8]}"
