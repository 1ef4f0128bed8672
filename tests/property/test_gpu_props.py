"""Thread-bound schedules keep a program's meaning under the GPU semantics.

That a schedule keeps the meaning of the program it started from is
``test_rewrite_props``' business (its schedules bind too, and ``interp.run``
gives their results the GPU's meaning); here the same thread-bound program
read with serial loops and read on threads must agree bit for bit.
"""

import numpy as np
from hypothesis import assume, given, strategies as st

from tirfun.errors import TirfunError
from tirfun.interp import compile_func, gpu, run
from tirfun.nodes import IRModule
from tirfun.testing.equivalence import random_inputs
from tirfun.testing.programs import prim_funcs
from tirfun.testing.schedules import loop_schedules, thread_binding_problems

# the loop primitives that shape nests for threads, and bind
GPU_PRIMITIVES = ("split", "fuse", "reorder", "merge", "bind")


def _copy(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


@given(prim_funcs(), st.data())
def test_random_thread_bound_schedules_run_on_threads_as_on_serial_loops(func, data):
    mod = IRModule({"main": func})
    out = data.draw(loop_schedules(mod, max_steps=4, primitives=GPU_PRIMITIVES), label="schedule")(mod)
    bound = out["main"]
    assume(gpu.is_thread_bound(bound))
    assert thread_binding_problems(bound) == []
    args = random_inputs(bound, 1)
    serial, threads = _copy(args), _copy(args)
    try:
        compile_func(bound)(*serial)  # every thread-bound loop as a serial loop
    except TirfunError:
        serial = None
    if serial is None:
        try:
            run(bound, *threads)
        except TirfunError:
            return
        raise AssertionError("the serial reading fails but the GPU reading runs")
    run(bound, *threads)
    for p, x, y in zip(bound.params, serial, threads):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes(), f"buffer {bound.buffer_map[p].name} differs"
