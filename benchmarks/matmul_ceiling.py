"""Where the packed matmul's time goes, against the machine's FMA peak.

``benchmarks/cpu.py`` times the whole packed matmul (B packed into panels,
then the product). This script takes it apart, each row timed in the same
interleaved rounds (medians, and the best round, which shows what the code
can do when the machine leaves it alone):

* **peak**: the FMA loop of ``cpu.py``, the rate no kernel can pass;
* **whole**: :func:`tirfun.examples.schedules.packed_matmul` at 1024, as
  ``cpu.py`` times it;
* **product**: the same register-tiled product (6 x 64 tiles) with B
  already packed (the packing's cost taken out) and 1020 rows (a multiple
  of the 6-row tile, so no remainder tile);
* **product, A packed**: the product reading A from 6-row panels, so that
  the 6 values one step broadcasts are adjacent (A's rows 4 KiB apart fall
  into one set of the L1 cache; 6 of them fit its 8 ways, so this row
  should not beat the last);
* **product, 14 x 32**, and **A packed**: the tile of earlier stops, whose
  14 rows are more than the L1 cache's ways hold when they share a set;
* **product, L1**: the product over 256 values of k only, so that a panel
  of B (256 x 64 floats, 64 KiB) stays near the L1 cache: the kernel with
  the memory system out of the way;
* **numpy**: ``A @ B`` at 1024, after a pause for OpenBLAS's threads.

Each product row is scheduled as the packed matmul's product is (split,
reorder, unroll, vectorize, parallel, then
:func:`~tirfun.examples.schedules.schedule_register_tile`: the ``local``
tile by cache_write and reverse_compute_at, decompose_reduction), built
with ``-fast-math-contract``. Run with
``TIRFUN_NUM_THREADS=1`` (and ``OPENBLAS_NUM_THREADS=1``) for one core.

    python benchmarks/matmul_ceiling.py [--rounds 25]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import tirfun
from tirfun import IRModule, Schedule, te
from tirfun.examples import schedules
from tirfun.runtime.jit import num_threads
from tirfun.runtime.measure import settle
from tirfun.runtime.target import host_description

from cpu import peak_fma, vector_lanes

ROWS, COLS = 6, 64


def packed_product(m: int, n: int, k: int, a_packed: bool, rows: int = ROWS, cols: int = COLS) -> IRModule:
    """``C = A @ B`` with B given packed (``B[j // cols, k, j % cols]``) and A
    as it is or packed into panels of ``rows`` rows (``A[i // rows, k, i % rows]``),
    scheduled as the product of :func:`schedules.schedule_packed_matmul`
    (its register tile by :func:`schedules.schedule_register_tile`)."""
    if a_packed:
        A = te.placeholder((m // rows, k, rows), "float32", name="A")
        a = lambda i, r: A[i // rows, r, i % rows]  # noqa: E731
    else:
        A = te.placeholder((m, k), "float32", name="A")
        a = lambda i, r: A[i, r]  # noqa: E731
    B = te.placeholder((n // cols, k, cols), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(a(i, r) * B[j // cols, r, j % cols], axis=r), name="C")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B, C])}))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, cols])
    sch.reorder(j0, i0, kk, i1, j1)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.parallel(j0)
    schedules.schedule_register_tile(sch, block)
    return sch.mod


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    threads, lanes = num_threads(), vector_lanes()
    rng = np.random.default_rng(0)
    target = "llvm -fast-math-contract"
    cases = []

    iters = 200_000
    peak_rt = tirfun.build(peak_fma(threads, lanes), target=target)
    out = tirfun.nd.empty((threads, 12 * lanes), "float32")
    cases.append(("peak: independent FMAs", 2.0 * threads * iters * 12 * lanes,
                  lambda: peak_rt(out, np.float32(0.999), np.float32(0.001), iters)))

    n = 1024
    x = rng.random((n, n), dtype=np.float32)
    y = rng.random((n, n), dtype=np.float32)
    whole_rt = tirfun.build(schedules.packed_matmul(n).mod, target=target)
    xa, ya, za = tirfun.nd.array(x), tirfun.nd.array(y), tirfun.nd.empty((n, n), "float32")
    whole_rt(xa, ya, za)
    assert np.allclose(za.numpy(), x.astype(np.float64) @ y, rtol=1e-4), "whole matmul is wrong"
    cases.append((f"whole: packed_matmul({n})", 2.0 * n ** 3, lambda: whole_rt(xa, ya, za)))

    for label, k, a_packed, rows, cols in (
            ("product", n, False, ROWS, COLS), ("product, A packed", n, True, ROWS, COLS),
            ("product, L1 (k = 256)", 256, False, ROWS, COLS),
            ("product 14 x 32", n, False, 14, 32), ("product 14 x 32, A packed", n, True, 14, 32)):
        m = n // rows * rows
        rt = tirfun.build(packed_product(m, n, k, a_packed, rows, cols), target=target)
        a = x[:m, :k]
        b = tirfun.nd.array(np.ascontiguousarray(y[:k].reshape(k, n // cols, cols).transpose(1, 0, 2)))
        a_arg = tirfun.nd.array(np.ascontiguousarray(
            a.reshape(m // rows, rows, k).transpose(0, 2, 1)) if a_packed else np.ascontiguousarray(a))
        c = tirfun.nd.empty((m, n), "float32")
        rt(a_arg, b, c)
        assert np.allclose(c.numpy(), a.astype(np.float64) @ y[:k], rtol=1e-4), f"{label} is wrong"
        reps = max(1, int(2e9 // (2 * m * n * k)))

        def call(rt=rt, a_arg=a_arg, b=b, c=c, reps=reps):
            for _ in range(reps):
                rt(a_arg, b, c)
        cases.append((f"{label}, {m}x{n}x{k}", 2.0 * m * n * k * reps, call))

    def numpy_call():
        x @ y
    cases.append((f"numpy A @ B, {n}^3", 2.0 * n ** 3, numpy_call))

    rates: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for _ in range(args.rounds):
        for label, flops, call in cases:
            call()
            start = time.perf_counter()
            call()
            rates[label].append(flops / (time.perf_counter() - start) / 1e9)
            if label.startswith("numpy"):
                settle()
    triple, cpu, _ = host_description()
    print(f"packed matmul against the FMA peak: {cpu} ({triple}), {threads} thread(s), "
          f"{args.rounds} rounds")
    peak = statistics.median(rates[cases[0][0]])
    print(f"{'case':44s} {'median GFLOP/s':>15s} {'% of peak':>10s} {'best':>8s} {'% of peak':>10s}")
    for label, _, _ in cases:
        med, best = statistics.median(rates[label]), max(rates[label])
        print(f"{label:44s} {med:15.1f} {100 * med / peak:9.0f}% {best:8.1f} {100 * best / peak:9.0f}%")


if __name__ == "__main__":
    main()
