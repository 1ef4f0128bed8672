"""CPU benchmarks: tirfun-built kernels against numpy, printed as one table.

    python benchmarks/cpu.py            # the full table (about a minute)
    python benchmarks/cpu.py --quick    # fewer repeats, smaller matmul

Each workload is written in te and scheduled with Schedule primitives: the
simple ones here with loop primitives, the packed matmul, the convolution,
the softmax and the rfactor'd row sum by the schedules of
``tirfun.examples.schedules`` (cache_read/cache_write, transform_layout,
compute_at, reverse_compute_at, rfactor, decompose_reduction, vectorize,
unroll, parallel), which is where to read them. Each is built with
``tirfun.build`` for this machine and timed as a median. Rows marked
``-fast-math-contract`` let LLVM fuse a multiply and an add into one FMA, as
TVM's LLVM target does by default; the other rows are exact IEEE
arithmetic, bit for bit the interpreter's. Rates are
compared with three references measured by tirfun itself on this machine:
the peak of a loop of independent fused multiply-adds (GFLOP/s, measured
at the start and again before the rows judged against it, the higher
counting), the
bandwidth of a parallel vectorized copy and that of a parallel streaming
read (a sum of two halves of a large array with many independent vector
accumulators; GB/s). tirfun runs on ``tirfun.nd`` arrays
(64-byte aligned, as the tutorial makes them); numpy on its own arrays with
the same values. numpy is timed twice: in this process, with the
environment as it is, and in a subprocess with ``OPENBLAS_CORETYPE`` and
``OPENBLAS_L2_SIZE`` removed (OpenBLAS then picks its kernels itself). After every numpy candidate the script pauses so that
OpenBLAS's spinning worker threads give the cores back.

Ratios are numpy's time divided by tirfun's: above 1.0 tirfun is faster.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np

import tirfun
from tirfun import IRModule, Schedule, te
from tirfun.examples import schedules
from tirfun.runtime import clear_cache
from tirfun.runtime.jit import gomp_available, num_threads
from tirfun.runtime.measure import gbytes_per_second, gflops, median_seconds
from tirfun.runtime.target import host_description
from tirfun.script import from_source

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

#: partial sums per row of the rfactor'd row sum: 4 independent AVX-512
#: accumulators (8 of AVX2); 32 and 64 measure the same here, both at the
#: streaming read rate of one core
ROW_SUM_LANES = 64

TUTORIAL = """
@I.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0
"""


# -- workloads -------------------------------------------------------------------

def elementwise(n: int, inner: int = 64) -> IRModule:
    """``B = A + 1``: split, parallel outer, vectorized inner."""
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, inner])
    sch.parallel(i0)
    sch.vectorize(i1)
    return sch.mod


def copy(n: int, inner: int = 64) -> IRModule:
    """``B = A``, scheduled as :func:`elementwise`: the bandwidth reference."""
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, inner])
    sch.parallel(i0)
    sch.vectorize(i1)
    return sch.mod


def row_sum(n: int, m: int) -> IRModule:
    """``B[i] = sum_k A[i, k]`` with parallel rows (loop primitives only)."""
    A = te.placeholder((n, m), "float32", name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    return sch.mod




def exp_elementwise(n: int, inner: int = 64) -> IRModule:
    """``B = exp(A)`` scheduled as :func:`elementwise`."""
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: te.exp(A[i]), name="B")
    sch = Schedule(IRModule({"main": te.create_prim_func([A, B])}))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, inner])
    sch.parallel(i0)
    sch.vectorize(i1)
    return sch.mod


def numpy_softmax(x: np.ndarray) -> np.ndarray:
    """numpy's row softmax, ``exp(x - max) / sum``."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)



def tiled_matmul(n: int, tile: int = 32, kf: int = 4) -> IRModule:
    """32x32 tiles, k split by 4, reorder, vectorized inner j, parallel outer i."""
    sch = Schedule(schedules.matmul(n))
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(k, [None, kf])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.vectorize(j1)
    sch.parallel(i0)
    return sch.mod




def conv2d_reference(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The convolution of ``schedules.conv2d_nchw`` in numpy: nine matrix
    products of the weights by shifted windows of the padded image."""
    _, c, h, w = image.shape
    padded = np.pad(image[0], ((0, 0), (1, 1), (1, 1)))
    out = np.zeros((weights.shape[0], h * w), image.dtype)
    for ry in range(3):
        for rx in range(3):
            window = np.ascontiguousarray(padded[:, ry:ry + h, rx:rx + w]).reshape(c, h * w)
            out += weights[:, :, ry, rx] @ window
    return out.reshape(1, -1, h, w)


def peak_fma(threads: int, lanes: int, chains: int = 12) -> IRModule:
    """Per thread, ``chains`` independent vectors of ``lanes`` floats, each
    updated ``acc = acc * a + b`` ``iters`` times: one fused multiply-add
    per lane per update once contraction is allowed."""
    width = chains * lanes
    src = f"""
@T.prim_func
def main(out: T.Buffer(({threads}, {width}), "float32"), a: T.float32, b: T.float32, iters: T.int32):
    for t in T.parallel({threads}):
        with T.block("fma"):
            vt = T.axis.spatial({threads}, t)
            T.reads()
            T.writes(out[vt, 0:{width}])
            acc = T.alloc_buffer(({width},), "float32")
            for u in T.unroll({chains}):
                for l in T.vectorized({lanes}):
                    acc[u * {lanes} + l] = T.Cast("float32", u * {lanes} + l)
            for it in range(iters):
                for u in T.unroll({chains}):
                    for l in T.vectorized({lanes}):
                        acc[u * {lanes} + l] = acc[u * {lanes} + l] * a + b
            for u in T.unroll({chains}):
                for l in T.vectorized({lanes}):
                    out[vt, u * {lanes} + l] = acc[u * {lanes} + l]
"""
    return IRModule({"main": from_source(src)})


def peak_vnni(threads: int, chains: int = 12) -> IRModule:
    """Per thread, ``chains`` independent vectors of 16 int32 sums, each
    updated by one ``vpdpbusd`` (64 byte products, 128 integer operations)
    ``iters`` times."""
    width = chains * 16
    src = f"""
@T.prim_func
def main(out: T.Buffer(({threads}, {width}), "int32"), a: T.int32, b: T.int32, iters: T.int32):
    for t in T.parallel({threads}):
        with T.block("dot"):
            vt = T.axis.spatial({threads}, t)
            T.reads()
            T.writes(out[vt, 0:{width}])
            acc = T.alloc_buffer(({width},), "int32")
            for u in T.unroll({chains}):
                acc[u * 16:u * 16 + 16] = T.Broadcast(u, 16)
            for it in range(iters):
                for u in T.unroll({chains}):
                    acc[u * 16:u * 16 + 16] = T.call_llvm_pure_intrin(
                        "int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), acc[u * 16:u * 16 + 16],
                        T.Broadcast(a, 16), T.Broadcast(b, 16))
            for u in T.unroll({chains}):
                out[vt, u * 16:u * 16 + 16] = acc[u * 16:u * 16 + 16]
"""
    return IRModule({"main": from_source(src)})


def vector_lanes() -> int:
    """float32 lanes of the widest vector registers of this CPU."""
    features = host_description()[2].split(",")
    if "+avx512f" in features:
        return 16
    if "+avx" in features:
        return 8
    return 4


# -- numpy candidates --------------------------------------------------------------

def numpy_times(sizes: dict, repeat: int) -> dict:
    """Median seconds of numpy on each workload (arrays made here)."""
    rng = np.random.default_rng(0)
    n = sizes["elementwise"]
    a = rng.random(n, dtype=np.float32)
    b = np.empty_like(a)
    out = {}
    out["copy"] = median_seconds(np.copyto, b, a, repeat=repeat, spins=True)
    out["elementwise"] = median_seconds(np.add, a, np.float32(1), b, repeat=repeat, spins=True)
    rows, cols = sizes["row_sum"]
    m = rng.random((rows, cols), dtype=np.float32)
    r = np.empty(rows, np.float32)
    out["row_sum"] = median_seconds(lambda x, y: np.sum(x, axis=1, out=y), m, r, repeat=repeat,
                                    spins=True)
    e = sizes["exp"]
    xe = rng.standard_normal(e, dtype=np.float32)
    out["exp"] = median_seconds(np.exp, xe, np.empty_like(xe), repeat=repeat, spins=True)
    srows, scols = sizes["softmax"]
    xs = rng.standard_normal((srows, scols), dtype=np.float32)
    out["softmax"] = median_seconds(numpy_softmax, xs, repeat=repeat, spins=True)
    k = sizes["matmul"]
    x, y = rng.random((k, k), dtype=np.float32), rng.random((k, k), dtype=np.float32)
    z = np.empty((k, k), np.float32)
    out["matmul"] = median_seconds(np.matmul, x, y, z, repeat=repeat, spins=True)
    c, f, hw = sizes["conv2d"]
    image = rng.random((1, c, hw, hw), dtype=np.float32)
    weights = rng.random((f, c, 3, 3), dtype=np.float32)
    out["conv2d"] = median_seconds(conv2d_reference, image, weights, repeat=repeat, spins=True)
    return out


def numpy_times_without_openblas_vars(sizes: dict, repeat: int) -> dict | None:
    """:func:`numpy_times` in a subprocess whose environment lacks the
    OpenBLAS variables; None when the subprocess fails."""
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARS}
    cmd = [sys.executable, __file__, "--numpy-only", json.dumps({"sizes": sizes, "repeat": repeat})]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=True)
    except (subprocess.SubprocessError, OSError) as err:
        print(f"(numpy subprocess failed: {err})", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- build time ----------------------------------------------------------------------

def cold_build_seconds() -> tuple[float, float]:
    """(import tirfun, first build of the tutorial module) in a fresh process."""
    code = textwrap.dedent(f"""
        import time
        t0 = time.perf_counter()
        import tirfun
        from tirfun.script import from_source
        t1 = time.perf_counter()
        mod = from_source({TUTORIAL!r})
        t2 = time.perf_counter()
        tirfun.build(mod)
        t3 = time.perf_counter()
        print(t1 - t0, t3 - t2)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, built = (float(x) for x in done.stdout.split())
    return imported, built


def warm_build_seconds(repeat: int) -> tuple[float, float]:
    """(cache hit, full rebuild after clearing the cache), medians."""
    mod = from_source(TUTORIAL)
    tirfun.build(mod)
    hit = median_seconds(tirfun.build, mod, repeat=repeat * 4)

    def rebuild(m):
        clear_cache()
        tirfun.build(m)

    miss = median_seconds(rebuild, mod, repeat=repeat)
    return hit, miss


# -- the table -------------------------------------------------------------------------

def timed(rt, *args, repeat: int) -> float:
    """Median seconds of one call of a built function."""
    return median_seconds(rt, *args, repeat=repeat)


def run(quick: bool) -> int:
    """Measure everything and print the table."""
    repeat = 3 if quick else 7
    sizes = {"elementwise": 1 << 24, "row_sum": (4096, 4096), "matmul": 512 if quick else 1024,
             "exp": 1 << 22, "softmax": (4096, 1024), "conv2d": (64, 64, 56)}
    threads = num_threads()
    saved_threads = os.environ.get("TIRFUN_NUM_THREADS")
    lanes = vector_lanes()
    triple, cpu, _ = host_description()
    print(f"tirfun CPU benchmarks: {platform.machine()} {cpu} ({triple}), {threads} thread(s) for "
          f"parallel loops{'' if gomp_available() else ' (libgomp missing: serial)'}, "
          f"numpy {np.__version__}")
    env_vars = {k: os.environ[k] for k in OPENBLAS_VARS if k in os.environ}
    print(f"OpenBLAS variables in this environment: {env_vars or 'none'}")

    rng = np.random.default_rng(0)
    rows = []

    # references: peak FMA rate and copy bandwidth, both built by tirfun
    peak_rt = tirfun.build(peak_fma(threads, lanes), target="llvm -fast-math-contract")
    out = tirfun.nd.empty((threads, 12 * lanes), "float32")
    iters = 200_000 if quick else 1_000_000

    def fma_peak() -> tuple[float, float]:
        seconds = timed(peak_rt, out, np.float32(0.999), np.float32(0.001), iters, repeat=repeat)
        return seconds, gflops(2.0 * threads * iters * 12 * lanes, seconds)

    # measured here and again right before the rows that are judged against
    # it, the higher of the two counting: on a shared machine one median of
    # a few runs can land in a disturbed moment, and a peak measured low
    # inflates every percentage of it
    first_peak_s, first_peak = fma_peak()
    peak_row = len(rows)
    rows.append(None)

    n = sizes["elementwise"]
    a = tirfun.nd.array(rng.random(n, dtype=np.float32))
    b = tirfun.nd.empty((n,), "float32")
    copy_rt = tirfun.build(copy(n))
    copy_s = timed(copy_rt, a, b, repeat=repeat)
    bandwidth = gbytes_per_second(8.0 * n, copy_s)
    rows.append(("bandwidth: copy", f"2^{n.bit_length() - 1} f32", copy_s, f"{bandwidth:.1f} GB/s",
                 "100% of bw", "copy", None, ""))

    ew_rt = tirfun.build(elementwise(n))
    ew_s = timed(ew_rt, a, b, repeat=repeat)
    assert np.array_equal(b.numpy(), a.numpy() + np.float32(1)), "elementwise result is wrong"
    ew_bw = gbytes_per_second(8.0 * n, ew_s)
    rows.append(("B = A + 1 (split, parallel, vectorize)", f"2^{n.bit_length() - 1} f32", ew_s,
                 f"{ew_bw:.1f} GB/s", f"{100 * ew_bw / bandwidth:.0f}% of bw", "elementwise", None,
                 ">= 1.0x numpy"))

    r, c = sizes["row_sum"]
    m = tirfun.nd.array(rng.random((r, c), dtype=np.float32))
    s = tirfun.nd.empty((r,), "float32")
    rs_rt = tirfun.build(row_sum(r, c))
    rs_s = timed(rs_rt, m, s, repeat=repeat)
    assert np.allclose(s.numpy(), m.numpy().sum(axis=1, dtype=np.float64), rtol=1e-3), \
        "row sum result is wrong"
    rs_bw = gbytes_per_second(4.0 * r * c, rs_s)
    rows.append(("row sum (parallel rows)", f"{r}x{c} f32", rs_s, f"{rs_bw:.1f} GB/s",
                 f"{100 * rs_bw / bandwidth:.0f}% of bw", "row_sum", None, ">= 0.7x numpy"))

    # the streaming read reference: the row sum's schedule over one long row
    # per thread, so each thread streams one contiguous part of the matrix
    # through the same vector loop, with no row ends
    # (whole rows each when the rows do not split evenly between the threads)
    parts = threads if r % threads == 0 else r
    halves = tirfun.nd.array(m.numpy().reshape(parts, -1))
    partial = tirfun.nd.empty((parts,), "float32")
    read_rt = tirfun.build(schedules.row_sum_rfactor(parts, r * c // parts, lanes=ROW_SUM_LANES).mod)
    rf_mod = schedules.row_sum_rfactor(r, c, lanes=ROW_SUM_LANES).mod
    rf_rt = tirfun.build(rf_mod)
    # one core's rate, against numpy's (which sums on one core)
    rf1_rt = tirfun.build(rf_mod, target="llvm -num-cores=1")
    # alternate the three, so that all see the machine in the same state
    read_times, rf_times, rf1_times = [], [], []
    for _ in range(repeat):
        read_times.append(timed(read_rt, halves, partial, repeat=3))
        rf_times.append(timed(rf_rt, m, s, repeat=3))
        rf1_times.append(timed(rf1_rt, m, s, repeat=3))
    read_s, rf_s, rf1_s = (float(np.median(t)) for t in (read_times, rf_times, rf1_times))
    assert np.allclose(s.numpy(), m.numpy().sum(axis=1, dtype=np.float64), rtol=1e-4), \
        "rfactor row sum result is wrong"
    read_bw = gbytes_per_second(4.0 * r * c, read_s)
    rows.append(("bandwidth: streaming read", f"{parts}x{r * c // parts} f32", read_s,
                 f"{read_bw:.1f} GB/s", f"{100 * read_bw / bandwidth:.0f}% of bw", None, None, ""))
    rf_bw = gbytes_per_second(4.0 * r * c, rf_s)
    rows.append((f"row sum (rfactor {ROW_SUM_LANES} lanes, 16-lane tree, vectorize, parallel)", f"{r}x{c} f32", rf_s,
                 f"{rf_bw:.1f} GB/s", f"{100 * rf_bw / read_bw:.0f}% of read bw", "row_sum", None,
                 ">= 2.0x numpy"))
    rf1_bw = gbytes_per_second(4.0 * r * c, rf1_s)
    rows.append(("the same, 1 thread (-num-cores=1)", f"{r}x{c} f32", rf1_s, f"{rf1_bw:.1f} GB/s",
                 f"{threads} threads: {rf1_s / rf_s:.2f}x faster", "row_sum", None, ""))

    ne = sizes["exp"]
    xe = tirfun.nd.array(rng.standard_normal(ne, dtype=np.float32))
    ye = tirfun.nd.empty((ne,), "float32")
    for label, target in (("B = exp(A), -math=exact", "llvm"), ("B = exp(A), -math=fast", "llvm -math=fast")):
        exp_rt = tirfun.build(exp_elementwise(ne), target=target)
        exp_s = timed(exp_rt, xe, ye, repeat=repeat)
        assert np.allclose(ye.numpy(), np.exp(xe.numpy()), rtol=1e-6), "exp result is wrong"
        exp_bw = gbytes_per_second(8.0 * ne, exp_s)
        rows.append((label, f"2^{ne.bit_length() - 1} f32", exp_s, f"{exp_bw:.1f} GB/s",
                     f"{100 * exp_bw / bandwidth:.0f}% of bw", "exp", None, ""))

    sr, sc = sizes["softmax"]
    xs = tirfun.nd.array(rng.standard_normal((sr, sc), dtype=np.float32))
    ys = tirfun.nd.empty((sr, sc), "float32")
    for label, target, floor in (("softmax (fused rows), -math=exact", "llvm", ""),
                                 ("softmax (fused rows), -math=fast", "llvm -math=fast",
                                  ">= 1.5x numpy")):
        sm_rt = tirfun.build(schedules.softmax(sr, sc).mod, target=target)
        sm_s = timed(sm_rt, xs, ys, repeat=repeat)
        assert np.allclose(ys.numpy(), numpy_softmax(xs.numpy()), rtol=1e-5, atol=1e-12), \
            "softmax result is wrong"
        sm_bw = gbytes_per_second(8.0 * sr * sc, sm_s)
        rows.append((label, f"{sr}x{sc} f32", sm_s, f"{sm_bw:.1f} GB/s",
                     f"{100 * sm_bw / bandwidth:.0f}% of bw", "softmax", None, floor))

    again_s, again = fma_peak()
    peak_s, peak = (first_peak_s, first_peak) if first_peak >= again else (again_s, again)
    rows[peak_row] = ("peak: independent FMAs", f"{threads}x{12 * lanes} lanes", peak_s, f"{peak:.1f} GFLOP/s",
                      f"100% (of {first_peak:.0f}, {again:.0f})", None, None, "")

    k = sizes["matmul"]
    x = tirfun.nd.array(rng.random((k, k), dtype=np.float32))
    y = tirfun.nd.array(rng.random((k, k), dtype=np.float32))
    z = tirfun.nd.empty((k, k), "float32")
    flops = 2.0 * k ** 3
    for label, target in (("matmul, tiled (exact IEEE)", "llvm"),
                          ("matmul, tiled (-fast-math-contract)", "llvm -fast-math-contract")):
        mm_rt = tirfun.build(tiled_matmul(k), target=target)
        mm_s = timed(mm_rt, x, y, z, repeat=repeat)
        if target == "llvm":
            exact_s = mm_s
        assert np.allclose(z.numpy(), x.numpy() @ y.numpy(), rtol=1e-4), "matmul result is wrong"
        rate = gflops(flops, mm_s)
        rows.append((label, f"{k}^3 f32", mm_s, f"{rate:.1f} GFLOP/s",
                     f"{100 * rate / peak:.0f}% of peak", "matmul", None, ">= 40 GFLOP/s"))

    expected = x.numpy().astype(np.float64) @ y.numpy().astype(np.float64)
    for label, target in (("matmul, packed, register tile (exact IEEE)", "llvm"),
                          ("matmul, packed, register tile (-fast-math-contract)",
                           "llvm -fast-math-contract")):
        pm_rt = tirfun.build(schedules.packed_matmul(k).mod, target=target)
        pm_s = timed(pm_rt, x, y, z, repeat=repeat)
        assert np.allclose(z.numpy(), expected, rtol=1e-4), "packed matmul result is wrong"
        rate = gflops(flops, pm_s)
        rows.append((label, f"{k}^3 f32", pm_s, f"{rate:.1f} GFLOP/s", f"{100 * rate / peak:.0f}% of peak",
                     "matmul", None, ">= 90% of peak, >= 1.0x numpy" if target != "llvm" else ""))

    c, f, hw = sizes["conv2d"]
    image = tirfun.nd.array(rng.random((1, c, hw, hw), dtype=np.float32))
    weights = tirfun.nd.array(rng.random((f, c, 3, 3), dtype=np.float32))
    conv_out = tirfun.nd.empty((1, f, hw, hw), "float32")
    conv_flops = 2.0 * f * c * 9 * hw * hw
    conv_expected = conv2d_reference(image.numpy().astype(np.float64), weights.numpy().astype(np.float64))
    for label, target in (("conv2d 3x3 NCHW (exact IEEE)", "llvm"),
                          ("conv2d 3x3 NCHW (-fast-math-contract)", "llvm -fast-math-contract")):
        conv_rt = tirfun.build(schedules.conv2d_nchw(c, f, hw).mod, target=target)
        conv_s = timed(conv_rt, image, weights, conv_out, repeat=repeat)
        assert np.allclose(conv_out.numpy(), conv_expected, rtol=1e-4), "conv2d result is wrong"
        rate = gflops(conv_flops, conv_s)
        rows.append((label, f"{c}->{f}, {hw}x{hw}", conv_s, f"{rate:.1f} GFLOP/s",
                     f"{100 * rate / peak:.0f}% of peak", "conv2d", None,
                     ">= 50% of peak" if target != "llvm" else ""))

    if "+avx512vnni" in host_description()[2].split(","):
        # bytes: the 16x4 dot products of AVX512-VNNI through tensorize
        vnni_rt = tirfun.build(peak_vnni(threads))
        vnni_out = tirfun.nd.empty((threads, 12 * 16), "int32")
        vnni_iters = 100_000 if quick else 500_000
        vnni_s = timed(vnni_rt, vnni_out, np.int32(0x01010101), np.int32(0x01010101), vnni_iters,
                       repeat=repeat)
        vnni_peak = 128.0 * threads * vnni_iters * 12 / vnni_s / 1e9
        rows.append(("peak: independent vpdpbusd", f"{threads}x12x16 lanes", vnni_s,
                     f"{vnni_peak:.1f} GOP/s", "100% of byte peak", None, None, ""))
        xa = rng.integers(0, 256, (k, k), dtype=np.uint8)
        wa = rng.integers(-128, 128, (k, k), dtype=np.int8)
        xb = tirfun.nd.array(xa)
        wb = tirfun.nd.array(wa.reshape(k // 16, 16, k // 4, 4).transpose(0, 2, 1, 3).copy())
        zb = tirfun.nd.empty((k, k), "int32")
        bm_rt = tirfun.build(schedules.byte_matmul_vnni(k).mod)
        bm_s = timed(bm_rt, xb, wb, zb, repeat=repeat)
        check = min(k, 256)  # numpy's integer matmul is slow: a corner suffices
        assert np.array_equal(zb.numpy()[:check, :check],
                              xa[:check].astype(np.int64) @ wa[:check].astype(np.int64).T), \
            "byte matmul result is wrong"
        rate = 2.0 * k ** 3 / bm_s / 1e9
        rows.append(("byte matmul u8 x s8 -> s32, tensorize VNNI_DOT_16x4", f"{k}^3 u8", bm_s,
                     f"{rate:.1f} GOP/s", f"{100 * rate / vnni_peak:.0f}% of byte peak", None, None, ""))

    # the thread pool's speedup: the exact-IEEE matmul again, every loop serial
    os.environ["TIRFUN_NUM_THREADS"] = "1"
    try:
        serial_rt = tirfun.build(tiled_matmul(k))
    finally:
        if saved_threads is None:
            del os.environ["TIRFUN_NUM_THREADS"]
        else:
            os.environ["TIRFUN_NUM_THREADS"] = saved_threads
    serial_s = timed(serial_rt, x, y, z, repeat=repeat)
    rows.append(("matmul, tiled, 1 thread", f"{k}^3 f32", serial_s, f"{gflops(flops, serial_s):.1f} GFLOP/s",
                 f"{threads} threads: {serial_s / exact_s:.2f}x faster", None, None, ""))

    mine = numpy_times(sizes, repeat)
    other = numpy_times_without_openblas_vars(sizes, repeat)

    hit, miss = warm_build_seconds(repeat)
    imported, cold = cold_build_seconds()

    header = ("workload", "size", "tirfun ms", "rate", "of reference", "numpy ms",
              "ratio", "numpy* ms", "ratio*", "floor")
    table = []
    for name, size, secs, rate, frac, key, _, floor in rows:
        np_s = mine.get(key) if key else None
        np2 = other.get(key) if (key and other) else None
        table.append((name, size, f"{secs * 1e3:.2f}", rate, frac,
                      f"{np_s * 1e3:.2f}" if np_s else "-", f"{np_s / secs:.2f}x" if np_s else "-",
                      f"{np2 * 1e3:.2f}" if np2 else "-", f"{np2 / secs:.2f}x" if np2 else "-",
                      floor))
    table.append(("build tutorial module, cold", "fresh process", f"{cold * 1e3:.1f}", "-",
                  f"(import tirfun {imported * 1e3:.0f} ms)", "-", "-", "-", "-", ""))
    table.append(("build tutorial module, warm", "cache hit", f"{hit * 1e3:.2f}", "-", "-", "-", "-",
                  "-", "-", "< 25 ms"))
    table.append(("build tutorial module, warm", "cache cleared", f"{miss * 1e3:.1f}", "-", "-", "-",
                  "-", "-", "-", ""))
    widths = [max(len(str(row[i])) for row in [header] + table) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print()
    print(line)
    print("-" * len(line))
    for row in table:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    print()
    print("ratio: numpy time / tirfun time, numpy as this environment sets it; ratio*: numpy in a "
          f"subprocess without {' and '.join(OPENBLAS_VARS)}.")
    return 0


def main(argv=None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 512^3 matmul")
    parser.add_argument("--numpy-only", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.numpy_only:
        spec = json.loads(args.numpy_only)
        sizes = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["sizes"].items()}
        print(json.dumps(numpy_times(sizes, spec["repeat"])))
        return 0
    return run(args.quick)


if __name__ == "__main__":
    sys.exit(main())
