"""How long one ``split`` takes, on the tutorial module and on large modules.

A primitive resolves its loop through the function's name index (built once
per function, then derived along each rewritten path) and rebuilds only the
path to the loop, so its cost should follow the path length and the size of
the rewritten loop, not the number of blocks in the module. The table shows
the median time of one split:

* on the tutorial module (one block);
* on modules of 10, 100 and 1,000 independent blocks, each split applied
  to a loop of a module produced by the previous split (the schedule case:
  every step uses the index derived by the step before);
* on the 1,000-block module, splitting the same loop again and again;
* on single-block modules whose loop sits under deeper and deeper nests,
  where the path, and so the time, grows.

A second table times every primitive once on a tutorial-sized module of
two 8x8 nests (the same record applied to the same module, again and
again).

The cases are timed in interleaved rounds, so that load from other processes
falls on all of them alike. Run: ``python benchmarks/rewrite_speed.py``
(``--quick`` for fewer rounds).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from tirfun.nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, For, IRModule, IterVar,
    PrimFunc, Range, SeqStmt, Var,
)
from tirfun import rewrites as R
from tirfun.rewrites import split
from tirfun.rewrites.index import index_of
from tirfun.script import from_source

TWO_NESTS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for k, l in T.grid(8, 8):
        with T.block("C"):
            vk, vl = T.axis.remap("SS", [k, l])
            C[vk, vl] = B[vk, vl] * T.float32(2)
"""


def _elementwise(k: int, A: Buffer, B: Buffer, loop: str, extent: int = 8):
    """``for loop in range(extent): B[k, v] = A[k, v] + 1`` as block ``B{k}``."""
    i, v = Var(loop), Var(f"v{k}")
    store = BufferStore(B, BufferLoad(A, [k, v]) + 1.0, [k, v])
    block = Block([IterVar(Range(0, extent), v, "DataPar")], [BufferRegion(A, [Range(k, 1), Range(v, 1)])],
                  [BufferRegion(B, [Range(k, 1), Range(v, 1)])], f"B{k}", store)
    return For(i, 0, extent, "serial", BlockRealize([i], True, block))


def _module(body, A: Buffer, B: Buffer) -> IRModule:
    a, b = Var("a", "handle"), Var("b", "handle")
    root = Block([], [], [], "root", body)
    func = PrimFunc([a, b], BlockRealize([], True, root), None, {a: A, b: B}, {"tir.noalias": True})
    return IRModule({"main": func})


def tutorial_module() -> IRModule:
    """The tutorial's module: ``B[i] = A[i] + 1`` over 8 elements."""
    A, B = Buffer("A", [8], "float32"), Buffer("B", [8], "float32")
    i, vi = Var("i"), Var("vi")
    store = BufferStore(B, BufferLoad(A, [vi]) + 1.0, [vi])
    block = Block([IterVar(Range(0, 8), vi, "DataPar")], [BufferRegion(A, [Range(vi, 1)])],
                  [BufferRegion(B, [Range(vi, 1)])], "B", store)
    return _module(For(i, 0, 8, "serial", BlockRealize([i], True, block)), A, B)


def wide_module(n: int) -> IRModule:
    """``n`` independent blocks, each under its own loop ``l{k}``."""
    A, B = Buffer("A", [n, 8], "float32"), Buffer("B", [n, 8], "float32")
    return _module(SeqStmt([_elementwise(k, A, B, f"l{k}") for k in range(n)]), A, B)


def deep_module(depth: int) -> IRModule:
    """One block under ``depth`` unit loops ``o0..`` and then its loop ``l0``."""
    A, B = Buffer("A", [1, 8], "float32"), Buffer("B", [1, 8], "float32")
    body = _elementwise(0, A, B, "l0")
    for d in reversed(range(depth)):
        body = For(Var(f"o{d}"), 0, 1, "serial", body)
    return _module(body, A, B)


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


class RepeatCase:
    """Split the same loop of the same module (or apply ``rewrite`` to it),
    again and again."""

    def __init__(self, mod: IRModule, loop: str, rewrite=None):
        self.mod = mod
        self.rewrite = rewrite if rewrite is not None else split(loop, [None, 4])
        self.rewrite(mod)  # the function's index is built on first use, then cached

    def sample(self) -> float:
        t0 = time.perf_counter()
        self.rewrite(self.mod)
        return time.perf_counter() - t0


class ChainCase:
    """Split one loop after another, each on the module the previous split
    produced (the schedule case: every split uses the index derived by the
    one before); after the last loop, start again from the first module."""

    def __init__(self, mod: IRModule, loops: list[str]):
        index_of(mod["main"])
        self.first = mod
        self.loops = loops
        self.mod = mod
        self.next = 0

    def sample(self) -> float:
        if self.next == len(self.loops):
            self.mod, self.next = self.first, 0
        rewrite = split(self.loops[self.next], [None, 4])
        self.next += 1
        t0 = time.perf_counter()
        self.mod = rewrite(self.mod)
        return time.perf_counter() - t0


def primitive_cases() -> list[tuple[str, RepeatCase]]:
    """One case per primitive, each on the two-nest tutorial-sized module."""
    mod = IRModule({"main": from_source(TWO_NESTS)})
    annotated = R.annotate(R.LoopRef("i", "main"), "pragma_unroll", 1)(mod)
    records = [
        ("split", mod, R.split("i", [None, 4])),
        ("fuse", mod, R.fuse("i", "j")),
        ("reorder", mod, R.reorder("j", "i")),
        ("merge", mod, R.merge("i", "k")),
        ("add_unit_loop", mod, R.add_unit_loop("B")),
        ("reorder_block_iter_var", mod, R.reorder_block_iter_var("B", [1, 0])),
        ("parallel", mod, R.parallel("i")),
        ("vectorize", mod, R.vectorize("j")),
        ("unroll", mod, R.unroll("j")),
        ("bind", mod, R.bind("i", "threadIdx.x")),
        ("annotate", mod, R.annotate(R.LoopRef("i", "main"), "pragma_unroll", 1)),
        ("unannotate", annotated, R.unannotate(R.LoopRef("i", "main"), "pragma_unroll")),
    ]
    return [(name, RepeatCase(module, "i", record)) for name, module, record in records]


def main(argv: list[str]) -> int:
    """Time every case and print the table."""
    repeats = 60 if "--quick" in argv else 600
    big = wide_module(1000)
    cases = [("tutorial module, split i", 1, 3, RepeatCase(tutorial_module(), "i"))]
    for n in (10, 100, 1000):
        mod = big if n == 1000 else wide_module(n)
        cases.append((f"{n}-block module, chained splits", n, 4, ChainCase(mod, [f"l{k}" for k in range(n)])))
    cases.append(("1000-block module, split l500", 1000, 4, RepeatCase(big, "l500")))
    for depth in (8, 32, 128):
        cases.append((f"one block under {depth} more loops", 1, depth + 3, RepeatCase(deep_module(depth), "l0")))
    per_primitive = primitive_cases()
    # Python's cyclic collector scans every live object now and then, so its
    # pauses grow with the heap, not with the work of a split: park what
    # exists now in the permanent generation (the rewrites' own garbage is
    # still collected as usual)
    gc.collect()
    gc.freeze()
    # rounds over all cases, so that load from elsewhere falls on every case alike
    samples: dict[str, list[float]] = {name: [] for name, *_ in cases}
    for _ in range(repeats):
        for name, _blocks, _path, case in cases:
            samples[name].append(case.sample())
        for name, case in per_primitive:
            samples.setdefault(f"primitive {name}", []).append(case.sample())
    base = _median_us(samples[cases[0][0]])
    print(f"{'case':<40} {'blocks':>7} {'path':>5} {'median us':>10} {'vs tutorial':>12}")
    for name, blocks, path, _case in cases:
        us = _median_us(samples[name])
        print(f"{name:<40} {blocks:>7} {path:>5} {us:>10.1f} {us / base:>11.2f}x")
    print()
    print(f"{'primitive on the two-nest module':<40} {'median us':>10}")
    for name, _case in per_primitive:
        print(f"{name:<40} {_median_us(samples[f'primitive {name}']):>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
