"""How fast the reference interpreter runs, in scalar operations per second.

The headline case is a 64x64x64 float32 matmul built with ``te`` (the
PrimFunc ``te.create_prim_func`` gives: one reduction block under three
loops). Its innermost iteration does six scalar operations, counted as

    loads (C[i, j], A[i, k], B[k, j]) + stores (C[i, j]) + arithmetic (*, +)
    = 3 + 1 + 2 = 6

so a run does 6 * 64**3 = 1,572,864 operations (the init store, once per
(i, j), and the index arithmetic are not counted). Other rows show an
elementwise function, a row softmax (four blocks) and a small convolution,
each counted the same way, next to numpy doing the same computation.

Each row is the median of several runs after one warm-up run, so the
one-time translation into Python is not included (its time is shown
separately for the matmul).

Run: ``python benchmarks/interp_speed.py`` (``--quick`` for fewer repeats).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from tirfun import te
from tirfun.interp import compile_func, run


def matmul(n: int):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2)] + [np.zeros((n, n), "float32")]
    return te.create_prim_func([A, B, C]), args, 6 * n ** 3, lambda a, b, c: np.matmul(a, b, out=c)


def elementwise(n: int):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    C = te.compute((n, n), lambda i, j: A[i, j] * B[i, j] + 1.0, name="C")
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2)] + [np.zeros((n, n), "float32")]
    # two loads, one store, two arithmetic operations per element
    return te.create_prim_func([A, B, C]), args, 5 * n * n, lambda a, b, c: np.add(a * b, 1, out=c)


def softmax(m: int, n: int):
    A = te.placeholder((m, n), name="A")
    k1 = te.reduce_axis((0, n), "k")
    mx = te.compute((m,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    ex = te.compute((m, n), lambda i, j: te.exp(A[i, j] - mx[i]), name="ex")
    k2 = te.reduce_axis((0, n), "k")
    sm = te.compute((m,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    out = te.compute((m, n), lambda i, j: ex[i, j] / sm[i], name="out")
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, (m, n)).astype("float32"), np.zeros((m, n), "float32")]
    # max: 2 loads, store, max; exp: 2 loads, store, sub, exp; sum: 2 loads, store, add;
    # divide: 2 loads, store, div
    ops = m * n * (4 + 5 + 4 + 4)

    def reference(a, o):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        np.divide(e, e.sum(axis=1, keepdims=True), out=o)

    return te.create_prim_func([A, out]), args, ops, reference


def conv2d(c: int, h: int, f: int, r: int):
    X = te.placeholder((c, h, h), name="X")
    W = te.placeholder((f, c, r, r), name="W")
    rc, ry, rx = te.reduce_axis((0, c), "rc"), te.reduce_axis((0, r), "ry"), te.reduce_axis((0, r), "rx")
    o = h - r + 1
    Y = te.compute((f, o, o), lambda ff, y, x: te.sum(X[rc, y + ry, x + rx] * W[ff, rc, ry, rx],
                                                      axis=[rc, ry, rx]), name="Y")
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, (c, h, h)).astype("float32"),
            rng.uniform(-1, 1, (f, c, r, r)).astype("float32"), np.zeros((f, o, o), "float32")]
    ops = 6 * f * o * o * c * r * r

    def reference(x, w, y):
        for yy in range(o):
            for xx in range(o):
                y[:, yy, xx] = np.tensordot(w, x[:, yy:yy + r, xx:xx + r], axes=3)

    return te.create_prim_func([X, W, Y]), args, ops, reference


def median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up: translation and caches
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(argv: list[str]) -> int:
    repeats = 3 if "--quick" in argv else 7
    cases = [
        ("matmul 64x64x64 (float32)", matmul(64)),
        ("elementwise 256x256", elementwise(256)),
        ("softmax 64x256 (4 blocks)", softmax(64, 256)),
        ("conv2d 4x32x32, 8 filters 3x3", conv2d(4, 32, 8, 3)),
    ]
    func0 = cases[0][1][0]
    t0 = time.perf_counter()
    compile_func.__wrapped__(func0)  # translation alone, bypassing the cache
    translate_ms = (time.perf_counter() - t0) * 1e3
    print(f"{'case':<32} {'ops':>10} {'interp s':>9} {'Mops/s':>8} {'numpy s':>10} {'interp/numpy':>13}")
    for name, (func, args, ops, reference) in cases:
        seconds = median_seconds(lambda: run(func, *args), repeats)
        ref_seconds = median_seconds(lambda: reference(*args), repeats)
        print(f"{name:<32} {ops:>10,} {seconds:>9.3f} {ops / seconds / 1e6:>8.2f} "
              f"{ref_seconds:>10.6f} {seconds / ref_seconds:>12.0f}x")
    print(f"\ntranslating the matmul into Python once: {translate_ms:.1f} ms")
    print("ops per innermost iteration = loads + stores + arithmetic (matmul: 3 + 1 + 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
