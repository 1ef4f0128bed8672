"""GPU benchmarks: tirfun-built kernels against the device's own limits.

    python benchmarks/gpu.py            # both workloads (under 5 minutes)
    python benchmarks/gpu.py --quick    # smaller sizes

Two workloads, each against a reference measured in the same run:

* elementwise ``B = A * 2 + 1`` over 2^28 float32, vectorized by 4, against
  the bandwidth of a device-to-device copy of the same bytes
  (``cuMemcpyDtoD``); the goal is 80% of it;
* matmul 4096^3 float32 without tensor cores, tiled in shared memory
  (128 x 128 x 8 per block) and in registers (8 x 8 per thread), against the
  vendor library's float32 matmul (torch, else cupy) with TF32 off; the goal
  is 50% of it. It is built with ``-fast-math-contract``, so that ``acc +
  a * b`` is one fused multiply-add, as in the vendor's kernels.

Times are medians of CUDA-event measurements. Without a GPU (or without
cuda-python) the script says so and exits with status 0: there is nothing
to measure. The matmul kernel is built by schedule primitives from the
plain program, as a TVM user writes it (split, reorder, bind, cache_read to
shared + compute_at + cooperative fetch, cache_write to local +
reverse_compute_at, decompose_reduction: :mod:`tirfun.examples.gpu_schedules`);
the tests build a small instance of it, check its PTX with ptxas and run it
with the interpreter as the GPU.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import tirfun
from tirfun.script import from_source


def tiled_matmul(n: int, bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 vec: int = 4):
    """C = A @ B for n x n float32, scheduled from the plain program by
    :func:`tirfun.examples.gpu_schedules.schedule_tiled_matmul`: each block
    computes a bm x bn tile of C through shared tiles of A and B copied by
    all its threads together, each thread a tm x tn tile in registers."""
    from tirfun.examples import gpu_schedules

    return gpu_schedules.tiled_matmul(n, bm, bn, bk, tm, tn, vec).mod


def elementwise(n: int, threads: int = 256, lanes: int = 4):
    """B = A * 2 + 1 over n float32, each thread ``lanes`` consecutive elements."""
    sch = tirfun.Schedule(from_source(f'''
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi] * T.float32(2) + T.float32(1)
'''))
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx, v = sch.split(i, factors=[None, threads, lanes])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(v)
    return sch.mod


def _median_seconds(run, repeat: int) -> float:
    from tirfun.runtime.cuda_driver import Timer

    run()  # warm up
    timer = Timer(0)
    try:
        times = []
        for _ in range(repeat):
            timer.begin()
            run()
            times.append(timer.end())
    finally:
        timer.close()
    return float(np.median(times))


def _vendor_matmul(n: int, repeat: int):
    """(name, seconds) of the vendor library's float32 matmul, TF32 off."""
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            a = torch.randn(n, n, device="cuda")
            b = torch.randn(n, n, device="cuda")
            c = torch.empty(n, n, device="cuda")
            return "torch.matmul (cuBLAS, TF32 off)", _median_seconds(
                lambda: torch.matmul(a, b, out=c), repeat)
    except ImportError:
        pass
    os.environ["CUPY_TF32"] = "0"
    try:
        import cupy
    except ImportError:
        return None, None
    a = cupy.random.standard_normal((n, n), dtype="float32")
    b = cupy.random.standard_normal((n, n), dtype="float32")
    c = cupy.empty((n, n), dtype="float32")
    return "cupy.matmul (cuBLAS, TF32 off)", _median_seconds(lambda: cupy.matmul(a, b, out=c), repeat)


def main(argv=None) -> int:
    """Run the benchmarks and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args(argv)
    try:
        dev = tirfun.cuda(0)
    except tirfun.TirfunError as err:
        print(f"benchmarks/gpu.py measures a GPU, and there is none here: {err}")
        return 0
    from tirfun.runtime.cuda_driver import copy_on_device

    repeat = 5 if args.quick else 20
    rows = []

    n = 1 << (24 if args.quick else 28)
    rt = tirfun.build(elementwise(n), target="cuda")
    a = tirfun.nd.array(np.ones(n, "float32"), dev)
    b = tirfun.nd.empty((n,), "float32", dev)
    t_ours = rt.time_evaluator("main", dev, number=1, repeat=repeat)(a, b).median
    np.testing.assert_array_equal(b.numpy()[:8], np.full(8, 3, "float32"))
    t_copy = _median_seconds(lambda: copy_on_device(0, b.data_ptr, a.data_ptr, 4 * n), repeat)
    moved = 2 * 4 * n
    rows.append((f"elementwise 2^{n.bit_length() - 1} float32", t_ours, moved / t_ours / 1e9,
                 "device copy", t_copy, moved / t_copy / 1e9, "GB/s", 0.8))
    del a, b

    n = 1024 if args.quick else 4096
    # as vendor libraries do, a*b + c is one fused multiply-add (TVM's option)
    rt = tirfun.build(tiled_matmul(n), target="cuda -fast-math-contract")
    rng = np.random.default_rng(0)
    ha = rng.standard_normal((n, n)).astype("float32")
    hb = rng.standard_normal((n, n)).astype("float32")
    a, b = tirfun.nd.array(ha, dev), tirfun.nd.array(hb, dev)
    c = tirfun.nd.empty((n, n), "float32", dev)
    t_ours = rt.time_evaluator("main", dev, number=1, repeat=repeat)(a, b, c).median
    rows_check = c.numpy()[:4, :4]
    np.testing.assert_allclose(rows_check, (ha[:4].astype("float64") @ hb[:, :4]), rtol=1e-3, atol=1e-3)
    flops = 2 * n ** 3
    name, t_vendor = _vendor_matmul(n, repeat)
    rows.append((f"matmul {n}^3 float32", t_ours, flops / t_ours / 1e9, name or "no vendor library",
                 t_vendor, flops / t_vendor / 1e9 if t_vendor else None, "GFLOP/s", 0.5))

    print(f"tirfun on {dev} ({rt.target}); medians of {repeat} CUDA-event timings\n")
    print(f"{'workload':<28}{'tirfun ms':>11}{'rate':>10}  {'reference':<34}{'ms':>9}{'rate':>10}"
          f"{'ratio':>8}{'goal':>7}")
    for title, t, rate, ref, t_ref, rate_ref, unit, goal in rows:
        ratio = t_ref / t if t_ref else None
        print(f"{title:<28}{t * 1e3:>11.3f}{rate:>10.1f}  {ref:<34}"
              f"{(t_ref or 0) * 1e3:>9.3f}{rate_ref or 0:>10.1f}"
              f"{ratio if ratio is not None else float('nan'):>8.2f}{goal:>7.2f}   ({unit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
