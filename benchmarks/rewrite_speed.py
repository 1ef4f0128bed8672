"""How long a schedule primitive takes, on tutorial-sized and on large modules.

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

A second table times every primitive (loop and block:
``tirfun.testing.schedules.ALL_PRIMITIVES``), each record applied to the
same module again and again: the tutorial's matmul and relu
(:data:`MATMUL_RELU`), or a three-stage program of a padding, a stencil and
a relu (:data:`STAGES`) for compute location, caching and padding; then the
same on those modules grown to 100 and to 1,000 blocks by independent
elementwise blocks around the program, which the primitive must not pay
for (:func:`with_filler`).

The cases are timed in interleaved rounds, so that load from other processes
falls on all of them alike. Run: ``python benchmarks/rewrite_speed.py``
(``--quick`` or ``--repeats N`` for fewer rounds, ``--only split,fuse`` for
some primitives only; ``--alone`` adds each tutorial case timed on its own,
back to back, where the processor's caches keep its code and data warm).
``--apply NAME --times N [--blocks B]`` applies one
primitive N times and prints nothing, for counting instructions: under
``valgrind --tool=callgrind``, the difference between two counts with
different N is the cost of the extra applications, free of the noise of a
shared machine.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from tirfun.analysis.traversal import stmt_children
from tirfun.nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, For, IRModule, IterVar,
    PrimFunc, Range, SeqStmt, Var,
)
from tirfun import rewrites as R
from tirfun.rewrites import split
from tirfun.rewrites.index import index_of
from tirfun.rewrites.memos import clear_analysis_memos
from tirfun.script import from_source

MATMUL_RELU = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128), "float32")
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""

# three stages: a padding, a stencil reading two points of it, a relu
STAGES = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    P = T.alloc_buffer((130, 130), "float32")
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(130, 130):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = T.if_then_else(1 <= vi and vi < 129 and 1 <= vj and vj < 129, A[vi - 1, vj - 1],
                                       T.float32(0))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = P[vi, vj] + P[vi + 2, vj + 2]
    for i, j in T.grid(128, 128):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(B[vi, vj], T.float32(0))
"""

# a 16x16x16 tile of the matmul, for tensorize: the description and an
# implementation with the tile's columns vectorized
_MMA = """
@T.prim_func
def mma_{kind}(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), offset_factor=1)
    B = T.match_buffer(b, (16, 16), offset_factor=1)
    C = T.match_buffer(c, (16, 16), offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, {loops} in T.grid(16, 16, 16):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def mma_intrin():
    """The tile's TensorIntrin (its implementation runs k outside j)."""
    return R.TensorIntrin(from_source(_MMA.format(kind="desc", loops="j, k")),
                          from_source(_MMA.format(kind="impl", loops="k, j")))


# the last stage accumulating into its output, for cache_inplace
STAGES_INPLACE = STAGES.replace("D[vi, vj] = T.max(", "D[vi, vj] = D[vi, vj] + T.max(")


def _elementwise(k: int, A: Buffer, B: Buffer, loop: str, extent: int = 8, block: str | None = None):
    """``for loop in range(extent): B[k, v] = A[k, v] + 1`` as block ``B{k}``
    (or ``block``)."""
    i, v = Var(loop), Var(f"v{k}")
    store = BufferStore(B, BufferLoad(A, [k, v]) + 1.0, [k, v])
    block = Block([IterVar(Range(0, extent), v, "DataPar")], [BufferRegion(A, [Range(k, 1), Range(v, 1)])],
                  [BufferRegion(B, [Range(k, 1), Range(v, 1)])], block or f"B{k}", store)
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
        # the analyses memoised on a map and a domain would answer from
        # their table from the second application on: a schedule step meets
        # them cold
        clear_analysis_memos()
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


def with_filler(mod: IRModule, blocks: int) -> IRModule:
    """``mod`` with independent elementwise blocks added to its root block
    until it has ``blocks`` blocks (half before its statements, half after),
    on two buffers of their own: what a primitive does to the program must
    not cost more for them."""
    func = mod["main"]
    root = func.body.block
    stmts = list(root.body.seq) if isinstance(root.body, SeqStmt) else [root.body]
    have = sum(1 for _ in _blocks_in(root.body))
    extra = max(0, blocks - have)
    src, dst = Buffer("Fsrc", [max(extra, 1), 8], "float32"), Buffer("Fdst", [max(extra, 1), 8], "float32")
    filler = [_elementwise(k, src, dst, f"l{k}", block=f"F{k}") for k in range(extra)]
    half = extra // 2
    body = SeqStmt(filler[:half] + stmts + filler[half:])
    new_root = Block(root.iter_vars, root.reads, root.writes, root.name_hint, body, root.init,
                     list(root.alloc_buffers) + ([src, dst] if extra else []), root.match_buffers,
                     root.annotations)
    realize = BlockRealize(func.body.iter_values, func.body.predicate, new_root)
    new = PrimFunc(func.params, realize, func.ret_type, func.buffer_map, func.attrs)
    return IRModule({"main": new})


def _blocks_in(stmt):
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, Block):
            yield node
        for _, child in stmt_children(node):
            stack.append(child)


def primitive_records() -> list[tuple[str, str, object]]:
    """Every primitive (``tirfun.testing.schedules.ALL_PRIMITIVES``) as
    ``(name, module, record)``: the module is ``"matmul"`` (the tutorial's
    matmul and relu), ``"stages"`` (padding, stencil, relu), or a module
    derived from one of them, named in :func:`_modules`."""
    at_loop = R.LoopRef("i", "main")
    return [
        ("split", "matmul", R.split("i", [None, 4])),
        ("fuse", "matmul", R.fuse("i", "j")),
        ("reorder", "matmul", R.reorder("k", "j")),
        ("merge", "matmul", R.merge("i", "i_1")),
        ("add_unit_loop", "matmul", R.add_unit_loop("Y")),
        ("reorder_block_iter_var", "matmul", R.reorder_block_iter_var("Y", [1, 0, 2])),
        ("parallel", "matmul", R.parallel("i")),
        ("vectorize", "matmul", R.vectorize("j_1")),
        ("unroll", "matmul", R.unroll("k")),
        ("bind", "matmul", R.bind("i", "threadIdx.x")),
        ("annotate", "matmul", R.annotate(at_loop, "pragma_unroll", 1)),
        ("unannotate", "annotated", R.unannotate(at_loop, "pragma_unroll")),
        ("compute_at", "stages", R.compute_at("B", "j_2")),
        ("reverse_compute_at", "matmul", R.reverse_compute_at("C", "j")),
        ("compute_inline", "stages", R.compute_inline("B")),
        ("reverse_compute_inline", "stages", R.reverse_compute_inline("D")),
        ("cache_read", "stages", R.cache_read("B", 0, "local")),
        ("cache_write", "stages", R.cache_write("B", 0, "local")),
        ("cache_inplace", "inplace", R.cache_inplace("D", 0, "local")),
        ("reindex", "matmul", R.reindex("Y", ("read", 1))),
        ("reindex_cache_read", "matmul", R.reindex_cache_read("C", 0, "local", lambda vi, vj: (vi, vj))),
        ("reindex_cache_write", "matmul", R.reindex_cache_write("C", 0, "local", lambda vi, vj: (vi, vj))),
        ("set_scope", "matmul", R.set_scope("Y", 0, "shared")),
        ("storage_align", "matmul", R.storage_align("Y", 0, 0, 16, 1)),
        ("unsafe_set_dtype", "matmul", R.unsafe_set_dtype("Y", 0, "float16")),
        ("set_axis_separator", "matmul", R.set_axis_separator("Y", 0, "write", [1])),
        ("transform_layout", "matmul", R.transform_layout("Y", ("write", 0),
                                                          lambda i, j: (i // 16, j // 16, i % 16, j % 16))),
        ("transform_block_layout", "matmul", R.transform_block_layout("C", lambda i, j: (i // 16, j, i % 16))),
        ("blockize", "matmul", R.blockize("j")),
        ("rolling_buffer", "rolling", R.rolling_buffer("P", 0)),
        ("decompose_reduction", "matmul", R.decompose_reduction("Y", "j")),
        ("rfactor", "matmul", R.rfactor("k", 0)),
        ("decompose_padding", "stages", R.decompose_padding("P", "i")),
        ("pad_einsum", "matmul", R.pad_einsum("Y", [32, 32, 48])),
        ("loop_partition", "matmul", R.loop_partition("i", [None, 32])),
        ("tensorize", "tiled", R.tensorize(R.LoopRef("i_1_1"), mma_intrin())),
        ("annotate_buffer_access", "matmul", R.annotate_buffer_access("C", 0, "read", [(0, 128), (0, 128)])),
        ("unsafe_hide_buffer_access", "matmul", R.unsafe_hide_buffer_access("Y", "read", [1])),
        ("read_at", "matmul", R.read_at("j", "Y", 1, "local")),
        ("write_at", "matmul", R.write_at("i_1", "C", 0, "local")),
    ]


def _modules(blocks: int | None) -> dict[str, IRModule]:
    """The modules the primitives apply to, with filler blocks up to
    ``blocks`` (None: none)."""
    matmul = IRModule({"main": from_source(MATMUL_RELU)})
    stages = IRModule({"main": from_source(STAGES)})
    base = {
        "matmul": matmul,
        "annotated": R.annotate(R.LoopRef("i", "main"), "pragma_unroll", 1)(matmul),
        "stages": stages,
        "inplace": IRModule({"main": from_source(STAGES_INPLACE)}),
        # the padding computed per row of the stencil: a window that slides
        "rolling": R.compute_at("P", "i_1")(stages),
        # the matmul in 16x16x16 tiles, its init apart (the relu nest holds i_1, j_1)
        "tiled": (R.split("i", [None, 16]) >> R.split("j", [None, 16]) >> R.split("k", [None, 16])
                  >> R.reorder("i_0", "j_0", "k_0", "i_1_1", "j_1_1", "k_1")
                  >> R.decompose_reduction("Y", "k_0"))(matmul),
    }
    if blocks is None:
        return base
    return {name: with_filler(mod, blocks) for name, mod in base.items()}


SIZES = (None, 100, 1000)


def primitive_cases(only: set[str] | None = None, sizes=SIZES) -> list[tuple[str, int | None, RepeatCase]]:
    """One case per primitive and module size (of ``sizes``): ``(primitive,
    blocks, case)``."""
    out = []
    for blocks in sizes:
        modules = _modules(blocks)
        for name, module, record in primitive_records():
            if only and name not in only:
                continue
            out.append((name, blocks, RepeatCase(modules[module], "i", record)))
    return out


def split_cases():
    """The split cases: module size, chains of splits, depth of the path."""
    big = wide_module(1000)
    cases = [("tutorial module, split i", 1, 3, RepeatCase(tutorial_module(), "i"))]
    for n in (10, 100, 1000):
        mod = big if n == 1000 else wide_module(n)
        cases.append((f"{n}-block module, chained splits", n, 4, ChainCase(mod, [f"l{k}" for k in range(n)])))
    cases.append(("1000-block module, split l500", 1000, 4, RepeatCase(big, "l500")))
    for depth in (8, 32, 128):
        cases.append((f"one block under {depth} more loops", 1, depth + 3, RepeatCase(deep_module(depth), "l0")))
    return cases


def apply_repeatedly(name: str, blocks: int | None, times: int) -> None:
    """Apply primitive ``name`` ``times`` times (for an instruction count
    under ``valgrind --tool=callgrind``: the difference between two counts
    is the cost of the extra applications)."""
    (case,) = [c for _n, _b, c in primitive_cases({name}, (blocks,))]
    for _ in range(times):
        case.sample()


def _option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def main(argv: list[str]) -> int:
    """Time every case and print the tables."""
    if "--apply" in argv:
        name, times = _option(argv, "--apply"), int(_option(argv, "--times") or 1)
        blocks = _option(argv, "--blocks")
        apply_repeatedly(name, int(blocks) if blocks else None, times)
        return 0
    repeats = int(_option(argv, "--repeats") or (30 if "--quick" in argv else 200))
    only = set(_option(argv, "--only").split(",")) if "--only" in argv else None
    cases = [] if only else split_cases()
    per_primitive = primitive_cases(only)
    # Python's cyclic collector scans every live object now and then, so its
    # pauses grow with the heap, not with the work of a rewrite: park what
    # exists now in the permanent generation (the rewrites' own garbage is
    # still collected as usual)
    gc.collect()
    gc.freeze()
    # rounds over all cases, so that load from elsewhere falls on every case alike
    samples: dict = {name: [] for name, *_ in cases}
    for name, blocks, _case in per_primitive:
        samples[name, blocks] = []
    for _ in range(repeats):
        for name, _blocks, _path, case in cases:
            samples[name].append(case.sample())
        for name, blocks, case in per_primitive:
            samples[name, blocks].append(case.sample())
    if cases:
        base = _median_us(samples[cases[0][0]])
        print(f"{'case':<40} {'blocks':>7} {'path':>5} {'median us':>10} {'vs tutorial':>12}")
        for name, blocks, path, _case in cases:
            us = _median_us(samples[name])
            print(f"{name:<40} {blocks:>7} {path:>5} {us:>10.1f} {us / base:>11.2f}x")
        print()
    print(f"{'primitive (median us)':<28} {'tutorial':>9} {'100 blocks':>11} {'1000 blocks':>12} {'1000/tut':>9}")
    for name, *_ in primitive_records():
        if only and name not in only:
            continue
        us = [_median_us(samples[name, blocks]) for blocks in SIZES]
        print(f"{name:<28} {us[0]:>9.1f} {us[1]:>11.1f} {us[2]:>12.1f} {us[2] / us[0]:>8.2f}x")
    if "--alone" in argv:
        _print_alone(per_primitive, samples, repeats)
    return 0


def _print_alone(per_primitive, samples: dict, repeats: int) -> None:
    """Each tutorial case timed again on its own, sample after sample, next
    to its interleaved median: the difference is what the processor's
    caches cost a primitive whose code and data other cases have evicted
    (the interleaved figure is the one a schedule of different steps meets)."""
    print()
    print(f"{'primitive (median us)':<28} {'interleaved':>11} {'alone':>9} {'ratio':>7}")
    for name, blocks, case in per_primitive:
        if blocks is not None:
            continue
        for _ in range(10):
            case.sample()
        alone = _median_us([case.sample() for _ in range(repeats)])
        mixed = _median_us(samples[name, blocks])
        print(f"{name:<28} {mixed:>11.1f} {alone:>9.1f} {mixed / alone:>6.2f}x")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
