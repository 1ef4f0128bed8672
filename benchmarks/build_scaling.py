"""Build time against program size: one function of N small loop nests.

    python benchmarks/build_scaling.py              # N = 125 ... 2000
    python benchmarks/build_scaling.py --max 500    # stop at N = 500
    python benchmarks/build_scaling.py --rows       # every nest writes a row of its own

Each nest is ``for i in range(64): with T.block(...): B[v] = B[v] + A[v] * c``
(by default all on the same two buffers, as a long unrolled program would
be; with ``--rows`` nest n writes ``B[n, v]``). The build cache is cleared
before every build. The table shows the phases of ``tirfun.build`` as
``Module.build_seconds`` reports them: tirfun's verification and lowering,
LLVM IR generation, LLVM's optimiser and machine code generation; then the
whole build in wall-clock and in process CPU seconds (CPU time is the
steadier figure on a busy machine; LLVM's share is spent in the LLVM worker
process, which reports it), and CPU milliseconds per nest, which
stay flat when the build grows linearly. Small N are medians of three
builds, large N one build.
"""

from __future__ import annotations

import argparse
import statistics
import time

import tirfun
from tirfun.runtime import clear_cache
from tirfun.script import from_source

SIZES = (125, 250, 500, 1000, 2000)
#: sizes up to this are built three times (the median is shown)
REPEAT_UP_TO = 250


def nests(n: int, rows: bool) -> str:
    """TVMScript of one function of ``n`` loop nests."""
    shape = f"({n}, 64)" if rows else "(64,)"
    lines = ["@T.prim_func",
             f"def main(A: T.Buffer((64,), 'float32'), B: T.Buffer({shape}, 'float32')):",
             "    T.func_attr({'tir.noalias': True})"]
    for k in range(n):
        out = f"B[{k}, v]" if rows else "B[v]"
        lines += ["    for i in range(64):",
                  f"        with T.block('b{k}'):",
                  "            v = T.axis.spatial(64, i)",
                  f"            {out} = {out} + A[v] * T.float32({k % 7 + 1})"]
    return "\n".join(lines)


def measure(n: int, rows: bool) -> dict:
    """Phase seconds, wall and CPU seconds of building ``n`` nests."""
    mod = from_source(nests(n, rows))
    runs = []
    for _ in range(3 if n <= REPEAT_UP_TO else 1):
        clear_cache()
        wall, cpu = time.perf_counter(), time.process_time()
        rt = tirfun.build(mod)
        record = dict(rt.build_seconds)
        record["wall"] = time.perf_counter() - wall
        # LLVM runs in the worker process: its processor time counts too
        record["cpu"] = time.process_time() - cpu + record["llvm_cpu"]
        runs.append(record)
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=SIZES[-1], help="largest N to build")
    parser.add_argument("--rows", action="store_true", help="every nest writes its own row of B")
    args = parser.parse_args(argv)
    header = ("N", "lower s", "codegen s", "LLVM opt s", "LLVM jit s", "total s", "CPU s",
              "CPU ms/nest")
    print(f"one function of N loop nests ({'a row of B each' if args.rows else 'same buffers'})")
    print("  ".join(f"{h:>11}" for h in header))
    for n in (s for s in SIZES if s <= args.max):
        r = measure(n, args.rows)
        cells = (n, r["lower"], r["codegen"], r["optimise"], r["jit"], r["wall"], r["cpu"],
                 1e3 * r["cpu"] / n)
        print("  ".join(f"{c:>11}" if isinstance(c, int) else f"{c:>11.2f}" for c in cells),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
