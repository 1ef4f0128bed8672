"""Random thread-bound programs on a GPU against the interpreter.

The GPU tests run a fixed set of seeds; this runs as many as a time budget
allows, in parallel processes, and sorts what it finds::

    python -m tirfun.testing.gpu_soak --seconds 120            # on a machine with a GPU
    python -m tirfun.testing.gpu_soak --seconds 120 --start 5000

Each seed is a random program (:func:`~tirfun.testing.programs.random_prim_func`)
under a random schedule of loop primitives with its loops bound to threads
(:func:`~tirfun.testing.cuda.bind_everything`), built for ``cuda``, run on
the GPU and compared with the interpreter's result (:func:`check_seed`):

* ``ok``: every buffer agrees bit for bit (any NaN with any NaN);
* ``skipped``: the schedule would race, or the program has no meaning on
  its inputs (the interpreter refuses them);
* ``libdevice``: only float buffers differ, by a few ulps, and the program
  calls a ``float64`` math function, which the GPU computes with CUDA's
  libdevice and the interpreter with the C library (the two are each
  within a few ulps of the true value; see :mod:`tirfun.lower.nvptx_codegen`);
  the largest difference is reported;
* ``failed``: anything else: integers that differ, floats without such a
  call, an error from the build or the driver. The seed reproduces it.

The exit status is 1 when a seed failed. Without a GPU it says so and
exits with status 0.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
import traceback
from typing import Callable

import numpy as np

#: the loop primitives the schedules draw from
PRIMITIVES = ("split", "fuse", "reorder", "bind", "unroll", "vectorize")
#: the largest difference, in ulps, filed under ``libdevice``
LIBDEVICE_ULPS = 64


#: the math functions whose float64 results libdevice and the C library
#: round differently (the others are exact in both: fabs, fmod, sqrt, ...)
INEXACT_MATH = frozenset({
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh",
    "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "hypot",
    "erf", "pow", "sigmoid"})


def _float64_math(func) -> list[str]:
    """The :data:`INEXACT_MATH` functions ``func`` calls on float64 values."""
    from ..analysis.traversal import walk
    from ..nodes import Call

    found = set()
    for node in walk(func.body):
        if (isinstance(node, Call) and isinstance(node.op, str) and node.op[4:] in INEXACT_MATH
                and node.op.startswith("tir.") and node.dtype.is_float and node.dtype.bits == 64):
            found.add(node.op[4:])
    return sorted(found)


def program(seed: int):
    """The thread-bound module of ``seed``, and None or why it is skipped."""
    from ..nodes import IRModule
    from .cuda import bind_everything
    from .programs import random_prim_func
    from .schedules import random_schedule, thread_binding_problems

    mod = IRModule({"main": random_prim_func(seed)})
    mod = random_schedule(mod, seed, max_steps=6, primitives=PRIMITIVES)(mod)
    mod = bind_everything(mod)
    problems = thread_binding_problems(mod["main"])
    return mod, (problems[0] if problems else None)


def check_seed(seed: int, execute: Callable) -> tuple[str, str]:
    """``(outcome, detail)`` for ``seed`` (outcomes as in the module's text);
    ``execute(rt, args)`` runs the build ``rt`` on a copy of ``args`` and
    returns the arguments after the call, as numpy arrays and numbers."""
    from ..errors import TirfunError
    from ..interp import run
    from .equivalence import compare_arrays, random_inputs, ulps_apart

    import tirfun

    mod, why = program(seed)
    if why is not None:
        return "skipped", why
    func = mod["main"]
    args = random_inputs(func, seed)
    expected = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        run(func, *expected)
    except TirfunError as err:
        return "skipped", f"no meaning on these inputs: {str(err).splitlines()[0]}"
    try:
        got = execute(tirfun.build(mod, target="cuda"), args)
    except Exception:  # the soak reports every error, ours or the driver's
        return "failed", traceback.format_exc(limit=4)
    math = _float64_math(func)
    worst, problems = 0, []
    for param, want, have in zip(func.params, expected, got):
        if not isinstance(want, np.ndarray):
            continue
        buf = func.buffer_map[param]
        if compare_arrays(buf.name, want, have, buf.dtype) is None:
            continue
        apart = ulps_apart(want, have, buf.dtype) if buf.dtype.is_float and math else None
        if apart is not None and apart <= LIBDEVICE_ULPS:
            worst = max(worst, apart)
            continue
        problems.append(compare_arrays(buf.name, want, have, buf.dtype))
    if problems:
        return "failed", "; ".join(problems)
    if worst:
        return "libdevice", f"{worst} ulps, calls {', '.join(math)}"
    return "ok", ""


def on_gpu(rt, args):
    """Run ``rt`` on GPU copies of ``args``; the arguments after the call."""
    import tirfun

    dev = tirfun.cuda(0)
    placed = [tirfun.nd.array(a, dev) if isinstance(a, np.ndarray) else a for a in args]
    rt(*placed)
    return [p.numpy() if isinstance(a, np.ndarray) else p for a, p in zip(args, placed)]


def _check_on_gpu(seed: int) -> tuple[int, str, str]:
    outcome, detail = check_seed(seed, on_gpu)
    return seed, outcome, detail


def soak(start: int, seconds: float, workers: int, out=sys.stdout) -> dict:
    """Check seeds from ``start`` on, in ``workers`` processes, for about
    ``seconds``; print each failure and libdevice difference as it comes and
    return the count of each outcome."""
    counts: dict = {}
    began = time.monotonic()
    # spawn, not fork: a forked child cannot use its parent's CUDA context
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for seed, outcome, detail in pool.imap_unordered(_check_on_gpu, range(start, start + 10 ** 9),
                                                         chunksize=4):
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome in ("failed", "libdevice"):
                print(f"seed {seed}: {outcome}: {detail}", file=out, flush=True)
            if time.monotonic() - began > seconds:
                pool.terminate()
                break
    return counts


def main(argv=None) -> int:
    """The command line (see the module)."""
    import os

    import tirfun

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="time budget (default 120)")
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="processes (default: the CPUs but one)")
    args = parser.parse_args(argv)
    try:
        tirfun.cuda(0)
    except tirfun.TirfunError as err:
        print(f"the GPU soak needs a GPU, and there is none here: {err}")
        return 0
    counts = soak(args.start, args.seconds, args.workers)
    print(" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
