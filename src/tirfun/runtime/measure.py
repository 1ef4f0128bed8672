"""Timing helpers shared by the benchmarks and the tour.

``median_seconds(fn, *args)`` times any callable (a built function, a numpy
operation) the same way: one untimed warm-up call, then ``repeat``
measurements of ``number`` calls each, and the median per call.

numpy's OpenBLAS worker threads keep spinning for a while after each call
and take the cores from whatever runs next; :func:`settle` waits them out,
and :func:`median_seconds` does so itself after timing a candidate marked
``spins=True``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from ..errors import ArgumentError

#: how long OpenBLAS threads keep a core busy after a call
SETTLE_SECONDS = 0.3


def settle(seconds: float = SETTLE_SECONDS) -> None:
    """Sleep until spinning worker threads of the last candidate gave the
    cores back."""
    time.sleep(seconds)


def median_seconds(fn: Callable, *args, number: int = 1, repeat: int = 5, warmup: int = 1,
                   spins: bool = False) -> float:
    """The median time of one call of ``fn(*args)``, in seconds."""
    if number < 1 or repeat < 1 or warmup < 0:
        raise ArgumentError("median_seconds: number and repeat must be at least 1, warmup at least 0")
    for _ in range(warmup):
        fn(*args)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        samples.append((time.perf_counter() - start) / number)
    if spins:
        settle()
    return statistics.median(samples)


def gflops(flops: float, seconds: float) -> float:
    """Billions of floating-point operations per second."""
    return flops / seconds / 1e9


def gbytes_per_second(nbytes: float, seconds: float) -> float:
    """Billions of bytes moved per second."""
    return nbytes / seconds / 1e9


__all__ = ["median_seconds", "settle", "gflops", "gbytes_per_second", "SETTLE_SECONDS"]
