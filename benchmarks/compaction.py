"""Compacted allocations: a register-tiled matmul with a ``local``
accumulator, built with and without the ``compact_allocations`` pass, and
the pass's own cost on a chain of intermediates.

    python benchmarks/compaction.py            # N = 256
    python benchmarks/compaction.py --n 512

For the matmul the table shows, per build, the accumulator's allocation in
the optimised LLVM IR (a stack slot, or none when LLVM promoted it to
registers; without compaction a large accumulator is heap memory), the
loads and stores in the function holding the loop nest, and the median
time of five runs on one thread. For the chain it shows the process CPU
seconds of the pass alone on lowered functions of 25 to 100 stages.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

import numpy as np

import tirfun
import tirfun.lower as lowering
from tirfun.lower import compact_allocations, lower_blocks
from tirfun.runtime import clear_cache
from tirfun.script import from_source

TILE_I, TILE_J = 4, 16


def matmul(n: int) -> str:
    """TVMScript of the register-tiled matmul (a 4x16 tile of C accumulated
    in a ``local`` buffer over k, then written back)."""
    return f'''@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"), C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"tir.noalias": True}})
    C_local = T.alloc_buffer(({n}, {n}), "float32", scope="local")
    for i0 in T.parallel({n // TILE_I}):
        for j0 in range({n // TILE_J}):
            for k in range({n}):
                for i1 in T.unroll({TILE_I}):
                    for j1 in T.vectorized({TILE_J}):
                        with T.block("C"):
                            vi = T.axis.spatial({n}, i0 * {TILE_I} + i1)
                            vj = T.axis.spatial({n}, j0 * {TILE_J} + j1)
                            vk = T.axis.reduce({n}, k)
                            with T.init():
                                C_local[vi, vj] = T.float32(0)
                            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
            for i1 in range({TILE_I}):
                for j1 in T.vectorized({TILE_J}):
                    with T.block("W"):
                        vi = T.axis.spatial({n}, i0 * {TILE_I} + i1)
                        vj = T.axis.spatial({n}, j0 * {TILE_J} + j1)
                        C[vi, vj] = C_local[vi, vj]
'''


def chain(stages: int) -> str:
    """TVMScript of ``stages`` elementwise stages, each into its own intermediate."""
    lines = ["@T.prim_func", "def main(A: T.Buffer((64,), 'float32'), B: T.Buffer((64,), 'float32')):"]
    lines += [f"    S{k} = T.alloc_buffer((64,), 'float32')" for k in range(stages)]
    prev = "A"
    for k in range(stages):
        lines += ["    for i in range(64):", f"        with T.block('b{k}'):", "            v = T.axis.spatial(64, i)",
                  f"            S{k}[v] = {prev}[v] * T.float32(2)"]
        prev = f"S{k}"
    lines += ["    for i in range(64):", "        with T.block('out'):", "            v = T.axis.spatial(64, i)",
              f"            B[v] = {prev}[v]"]
    return "\n".join(lines)


def build_row(func, passes, a, b) -> dict:
    old = lowering.PASSES
    lowering.PASSES = passes
    try:
        clear_cache()  # built modules are cached by the program, not by the passes
        rt = tirfun.build(tirfun.IRModule({"main": func}))
    finally:
        lowering.PASSES = old
    ll = rt.get_source("ll")
    start = ll.index("define internal i32") if "define internal i32" in ll else ll.index("define ")
    body = ll[start:]
    body = body[:body.index("\n}\n")]
    slots = re.findall(r"%C_local\S* = alloca ([^,\n]*)", ll)
    c = np.zeros_like(a)
    rt(a, b, c)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        rt(a, b, c)
        times.append(time.perf_counter() - t0)
    return {"slot": slots[0] if slots else ("none (registers)" if "malloc" not in ll else "heap"),
            "loads": len(re.findall(r"= load ", body)), "stores": len(re.findall(r"\bstore ", body)),
            "ms": statistics.median(times) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=256)
    args = parser.parse_args()
    import os

    os.environ["TIRFUN_NUM_THREADS"] = "1"
    n = args.n
    func = from_source(matmul(n))
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    without = tuple(p for p in lowering.PASSES if p[0] != "compact_allocations")
    print(f"register-tiled matmul {n}^3, one thread")
    print(f"{'build':<16}{'accumulator':<22}{'loads':>7}{'stores':>8}{'median ms':>11}{'GFLOP/s':>9}")
    for label, passes in (("compacted", lowering.PASSES), ("not compacted", without)):
        row = build_row(func, passes, a, b)
        print(f"{label:<16}{row['slot']:<22}{row['loads']:>7}{row['stores']:>8}{row['ms']:>11.2f}"
              f"{2 * n ** 3 / row['ms'] / 1e6:>9.1f}")
    print("\ncompact_allocations on a chain of intermediates (CPU seconds)")
    for stages in (25, 50, 100):
        lowered = lower_blocks(tirfun.IRModule({"main": from_source(chain(stages))}))
        t0 = time.process_time()
        compact_allocations(lowered)
        print(f"{stages:>4} stages {time.process_time() - t0:8.3f}")


if __name__ == "__main__":
    main()
