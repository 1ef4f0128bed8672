"""The row sum against the memory: is it at the read bandwidth?

    python benchmarks/row_sum.py             # 20 s of alternating rounds
    python benchmarks/row_sum.py --seconds 120

Times, in alternating rounds for the given number of seconds, so that each
sees the machine in the same states: the rfactor'd row sum of
``tirfun.examples.schedules`` over 4096x4096 float32 on every thread and on
one (``-num-cores=1``), and without its tree of 16 lanes (``tail=None``);
the same schedule over one long row per thread (a
pure streaming read of the same 64 MiB, no row ends) on every thread and on
one; numpy's ``A.sum(axis=1)`` (one core); and copies by tirfun and numpy.
Each line gives the minimum (the run least disturbed by other processes),
the 10th percentile and the median, and the bandwidth at the minimum. On a
shared machine compare the minima and the 10th percentiles: other processes
only ever add time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import tirfun
from tirfun import IRModule, Schedule, te
from tirfun.examples import schedules
from tirfun.runtime.jit import num_threads

ROWS = COLS = 4096
LANES = 64


def copy(n: int, inner: int = 64) -> IRModule:
    """``B = A``: split, parallel outer, vectorized inner."""
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, inner])
    sch.parallel(i0)
    sch.vectorize(i1)
    return sch.mod


def main(argv=None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to alternate (default 20)")
    args = parser.parse_args(argv)
    threads = num_threads()
    parts = threads if ROWS % threads == 0 else ROWS
    rng = np.random.default_rng(0)
    a = rng.random((ROWS, COLS), dtype=np.float32)
    total = a.size
    matrix, sums = tirfun.nd.array(a), tirfun.nd.empty((ROWS,), "float32")
    long_rows, long_sums = tirfun.nd.array(a.reshape(parts, -1)), tirfun.nd.empty((parts,), "float32")
    flat, flat_copy = tirfun.nd.array(a.reshape(-1)), tirfun.nd.empty((total,), "float32")
    numpy_sums, numpy_copy = np.empty(ROWS, np.float32), np.empty_like(a)
    row_sum = schedules.row_sum_rfactor(ROWS, COLS, LANES).mod
    stream = schedules.row_sum_rfactor(parts, total // parts, LANES).mod
    # the lanes summed one after another, without the 16-lane tree
    plain, plain_sums = schedules.row_sum_rfactor(ROWS, COLS, LANES, tail=None).mod, tirfun.nd.empty((ROWS,), "float32")
    one = "llvm -num-cores=1"
    # name: (function, arguments, bytes moved per element)
    kernels = {
        f"row sum, {threads} threads": (tirfun.build(row_sum), (matrix, sums), 4),
        "row sum, 1 thread": (tirfun.build(row_sum, target=one), (matrix, sums), 4),
        f"row sum, no tree, {threads} thr": (tirfun.build(plain), (matrix, plain_sums), 4),
        f"streaming read, {threads} threads": (tirfun.build(stream), (long_rows, long_sums), 4),
        "streaming read, 1 thread": (tirfun.build(stream, target=one), (long_rows, long_sums), 4),
        "numpy A.sum(axis=1)": (lambda: np.sum(a, axis=1, out=numpy_sums), (), 4),
        f"copy, {threads} threads": (tirfun.build(copy(total)), (flat, flat_copy), 8),
        "numpy copy": (lambda: np.copyto(numpy_copy, a), (), 8),
    }
    samples = {name: [] for name in kernels}
    deadline = time.perf_counter() + args.seconds
    while time.perf_counter() < deadline:
        for name, (fn, fn_args, _) in kernels.items():
            for _ in range(3):
                start = time.perf_counter()
                fn(*fn_args)
                samples[name].append(time.perf_counter() - start)
    expected = a.sum(axis=1, dtype=np.float64)
    assert np.allclose(sums.numpy(), expected, rtol=1e-4), "row sum result is wrong"
    assert np.allclose(plain_sums.numpy(), expected, rtol=1e-4), "row sum without the tree is wrong"
    print(f"{ROWS}x{COLS} float32, {LANES} partial sums per row, {threads} thread(s); "
          f"{len(samples['numpy A.sum(axis=1)'])} runs each")
    print(f"{'kernel':<28}{'min ms':>9}{'GB/s':>8}{'p10 ms':>9}{'median ms':>11}")
    for name, times in samples.items():
        times.sort()
        nbytes = kernels[name][2] * total
        print(f"{name:<28}{times[0] * 1e3:>9.2f}{nbytes / times[0] / 1e9:>8.1f}"
              f"{times[len(times) // 10] * 1e3:>9.2f}{statistics.median(times) * 1e3:>11.2f}")
    best = {name: times[0] for name, times in samples.items()}
    numpy_s = best["numpy A.sum(axis=1)"]
    for name in (f"row sum, {threads} threads", "row sum, 1 thread", f"row sum, no tree, {threads} thr"):
        print(f"{name}: {numpy_s / best[name]:.2f}x numpy at the minima")
    return 0


if __name__ == "__main__":
    sys.exit(main())
