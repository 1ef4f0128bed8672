"""The tour: the TensorIR tutorial, end to end, as ``make tour`` runs it.

1. an IRModule written in TVMScript, printed, parsed back;
2. the same program from a tensor expression;
3. built for the CPU and run;
4. transformed with split, reorder and bind, printed at each step;
5. TVM's TensorIR transformation tutorial, call for call: a matmul and a
   relu, split, reorder, reverse_compute_at, decompose_reduction,
   ``time_evaluator``, ``sch.trace.show()`` and ``sch.show()``;
6. a matmul from naive loops to a tiled, vectorized, parallel schedule and
   on to B packed into panels with a register-tiled accumulator (the
   schedule of :mod:`tirfun.examples.schedules`), each step's GFLOP/s
   beside numpy's;
7. the GPU step: PTX, checked by ptxas, run on a GPU when one is present
   and otherwise with the interpreter's GPU semantics; then the
   shared-memory tiled matmul built by schedule primitives.
"""

from __future__ import annotations

import textwrap
import time

import tirfun

from .script import tir as T


def _section(title: str) -> None:
    print()
    print(title)
    print("=" * len(title))


def _say(text: str) -> None:
    print(textwrap.fill(" ".join(text.split()), width=78))


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise tirfun.TirfunError(f"tour: {what}")


@tirfun.script.ir_module
class MyModule:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        # handles are pointers; match_buffer views them as typed arrays
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A = T.match_buffer(a, (8,), dtype="float32")
        B = T.match_buffer(b, (8,), dtype="float32")
        for i in range(8):
            # a block is the unit of computation; vi is a spatial axis bound to i
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + 1.0


def tour_script() -> tirfun.IRModule:
    """Step 1: the module written in TVMScript, printed and parsed back."""
    _section("1. An IRModule written in TVMScript")
    _say("""The decorated class in tirfun/tour.py becomes an immutable IRModule.
    Printing it gives canonical TVMScript: reads and writes are inferred and
    shown, literals are typed, and global_symbol is left out where it equals
    the function's name.""")
    print()
    text = MyModule.script()
    print(text)
    again = tirfun.script.from_source(text)
    same = tirfun.structural_equal(MyModule, again)
    identical = again.script() == text
    print(f"parse(print(module)) is structurally equal to the module: {same}")
    print(f"and prints to the identical text: {identical}")
    _check(same and identical, "the printed module did not parse back to itself")
    return MyModule


def tour_te() -> tirfun.IRModule:
    """Step 2: the same program from a tensor expression."""
    from . import te

    _section("2. The same program from a tensor expression")
    _say("""te.compute describes the result element by element; create_prim_func
    turns it into a PrimFunc with one block per compute.""")
    A = te.placeholder((8,), dtype="float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
    mod_from_te = tirfun.IRModule({"main": te.create_prim_func([A, B])})
    print()
    print(mod_from_te.script())
    same = tirfun.structural_equal(mod_from_te, MyModule)
    print(f"structurally equal to the TVMScript module (names aside): {same}")
    _check(same, "the te module differs from the TVMScript module")
    return mod_from_te


def tour_build() -> None:
    """Step 3: build for the CPU and run."""
    import numpy as np

    _section("3. Build for the CPU and run")
    _say("""tirfun.build lowers the module, generates LLVM IR for the host CPU and
    compiles it; the result is called with NDArrays or numpy arrays, whose
    count, shapes and dtypes are checked first.""")
    start = time.perf_counter()
    rt = tirfun.build(MyModule, target="llvm")
    elapsed = (time.perf_counter() - start) * 1e3
    a = tirfun.nd.array(np.arange(8, dtype="float32"))
    b = tirfun.nd.array(np.zeros(8, dtype="float32"))
    rt(a, b)
    print()
    print(f"built in {elapsed:.0f} ms for {rt.target}")
    print(f"a = {a.numpy()}")
    print(f"b = {b.numpy()}")
    _check(bool(np.array_equal(b.numpy(), a.numpy() + 1)), "b is not a + 1")
    print("b == a + 1: True")


def tour_schedule() -> tirfun.Schedule:
    """Step 4: split, reorder and bind, printed at each step."""
    _section("4. Transform the module with a Schedule")
    _say("""Each primitive is a pure function from one IRModule to another; the
    Schedule holds the current module and the trace of what was applied.""")
    before = MyModule.script()
    sch = tirfun.Schedule(MyModule)
    block_b = sch.get_block("B")
    (i,) = sch.get_loops(block_b)
    i0, i1, i2 = sch.split(i, factors=[2, 2, 2])
    print("\nsch.split(i, factors=[2, 2, 2]):\n")
    print(sch.mod.script())
    sch.reorder(i0, i2, i1)
    print("\nsch.reorder(i0, i2, i1):\n")
    print(sch.mod.script())
    sch.bind(i0, "blockIdx.x")
    sch.bind(i2, "threadIdx.x")
    print('\nsch.bind(i0, "blockIdx.x"); sch.bind(i2, "threadIdx.x"):\n')
    print(sch.mod.script())
    print("The trace, as code that replays it:\n")
    print(sch.trace.as_python())
    _check(sch.trace(MyModule) == sch.mod, "replaying the trace gave another module")
    untouched = MyModule.script() == before
    print(f"the original module is untouched: {untouched}")
    _check(untouched, "scheduling changed the original module")
    return sch


# -- TVM's TensorIR transformation tutorial ---------------------------------

@tirfun.script.ir_module
class MatmulRelu:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        Y = T.alloc_buffer((128, 128))
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


def tour_transformation() -> tirfun.Schedule:
    """Step 5: TVM's TensorIR transformation tutorial, call for call."""
    import numpy as np

    _section("5. The TensorIR transformation tutorial")
    _say("""TVM's tutorial on transformations, with tirfun in place of tvm: a
    matmul followed by a relu, built and timed with time_evaluator; then
    split, reorder, reverse_compute_at and decompose_reduction, the module
    shown after each; then the trace and the schedule.""")
    rng = np.random.default_rng(1)
    a_np = rng.uniform(size=(128, 128)).astype("float32")
    b_np = rng.uniform(size=(128, 128)).astype("float32")
    c_np = np.maximum(a_np @ b_np, 0)
    a_nd = tirfun.nd.array(a_np)
    b_nd = tirfun.nd.array(b_np)
    c_nd = tirfun.nd.array(np.zeros((128, 128), dtype="float32"))

    def evaluate(mod: tirfun.IRModule) -> None:
        lib = tirfun.build(mod, target="llvm")
        lib(a_nd, b_nd, c_nd)
        _check(bool(np.allclose(c_nd.numpy(), c_np, rtol=1e-5)), "the tutorial's module computed a wrong result")
        f_timer = lib.time_evaluator("main", tirfun.cpu())
        print(f"evaluate: {f_timer(a_nd, b_nd, c_nd)}")

    print()
    evaluate(MatmulRelu)
    sch = tirfun.Schedule(MatmulRelu)
    block_Y = sch.get_block("Y")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 8])
    print("\nj0, j1 = sch.split(j, factors=[None, 8]); sch.mod.show():\n")
    sch.mod.show()
    sch.reorder(j0, k, j1)
    print("\nsch.reorder(j0, k, j1); sch.mod.show():\n")
    sch.mod.show()
    evaluate(sch.mod)
    block_C = sch.get_block("C")
    sch.reverse_compute_at(block_C, j0)
    print("\nsch.reverse_compute_at(block_C, j0); sch.mod.show():\n")
    sch.mod.show()
    sch.decompose_reduction(block_Y, k)
    print("\nsch.decompose_reduction(block_Y, k); sch.mod.show():\n")
    sch.mod.show()
    evaluate(sch.mod)
    print("\nsch.trace.show():\n")
    sch.trace.show()
    print("\nsch.show():\n")
    sch.show()
    return sch


# -- the matmul story ------------------------------------------------------

N = 512


def matmul_program(n: int) -> tirfun.PrimFunc:
    """The naive ``n x n x n`` float32 matmul of step 6, as TVMScript."""

    @T.prim_func
    def matmul(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
               C: T.Buffer((n, n), "float32")):
        T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return matmul


def _matmul_steps(n: int):
    """(description, schedule, target) triples: the loop schedules, each
    building on the one before, then the packed, register-tiled one."""
    from .examples.schedules import schedule_packed_matmul

    sch = tirfun.Schedule(matmul_program(n))
    yield "naive loops i, j, k", sch.copy(), "llvm"
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 32])
    j0, j1 = sch.split(j, factors=[None, 32])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    yield "32x32 tiles, k split by 4, j innermost", sch.copy(), "llvm"
    sch.vectorize(j1)
    yield "+ vectorize the inner j", sch.copy(), "llvm"
    sch.parallel(i0)
    yield "+ parallel over the outer i", sch.copy(), "llvm"
    packed = tirfun.Schedule(matmul_program(n))
    schedule_packed_matmul(packed, "C", rows=6, cols=64)
    yield "B in panels, 6x64 register tile", packed, "llvm"
    yield "the same, -fast-math-contract", packed, "llvm -fast-math-contract"


def tour_matmul(n: int | None = None) -> tirfun.Schedule:
    """Step 6: an ``n``^3 matmul (``N`` by default) from naive loops to the
    packed, register-tiled schedule; returns that schedule."""
    import numpy as np

    from .runtime.measure import median_seconds

    n = N if n is None else n
    _section(f"6. A {n}x{n}x{n} matmul, step by step")
    _say("""Each loop step adds primitives to the one before; the table gives the
    median of 5 runs after a warm-up. The lowering hoists the reduction's
    init out of the hot loop, so the vectorized inner loop carries no test.
    The last two rows start again from the naive loops with the packed,
    register-tiled schedule that benchmarks/cpu.py measures
    (schedule_packed_matmul, from
    tirfun.examples.schedules): each parallel task copies a panel of 64
    columns of B into a contiguous buffer (cache_read + compute_at) and
    accumulates 6x64 tiles of C in a local buffer (cache_write +
    reverse_compute_at) that LLVM keeps in vector registers; the tile rows
    are unrolled, the columns vectorized, decompose_reduction zeroes
    the tile before the k loop, and the k loop is split by 4 and its
    inner steps unrolled. 6 does not divide the size, so
    loop_partition gives the last tile its own loop. (For a tile of more
    than 8 rows, from 1024 up, the schedule also packs A into panels of
    its rows, cache_read + transform_layout to (i // rows, k, i % rows):
    A's rows 4 KiB apart share a set of the L1 cache, which holds 8 of
    them.) -fast-math-contract
    lets each multiply and add fuse into one FMA, as TVM's LLVM target does
    by default.""")
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype("float32")
    b = rng.uniform(-1, 1, (n, n)).astype("float32")
    expected = a @ b
    flops = 2.0 * n**3
    # numpy's BLAS threads keep spinning after a call: spins=True waits them out
    np_time = median_seconds(np.matmul, a, b, spins=True)
    print()
    print(f"{'schedule':<42}{'ms':>9}{'GFLOP/s':>10}{'vs numpy':>10}")
    print(f"{'numpy (a @ b)':<42}{np_time * 1e3:>9.2f}{flops / np_time / 1e9:>10.1f}{1.0:>10.2f}")
    first = True
    last = None
    for title, sch, target in _matmul_steps(n):
        rt = tirfun.build(sch.mod, target=target)
        c = np.zeros((n, n), dtype="float32")
        rt(a, b, c)
        _check(bool(np.allclose(c, expected, rtol=1e-3, atol=1e-3)), f"{title}: wrong result")
        t = median_seconds(rt, a, b, c, repeat=3 if first else 5, warmup=0 if first else 1)
        print(f"{title:<42}{t * 1e3:>9.2f}{flops / t / 1e9:>10.1f}{np_time / t:>10.2f}")
        first = False
        last = sch
    print("\nThe packed schedule, sch.trace.show():\n")
    last.trace.show()
    print("\nand the loops it lowers to (tirfun.lower(sch.mod)): B's panel and the")
    print("tile are allocated inside the parallel loop, compacted to what one task uses:\n")
    print(tirfun.lower(last.mod).script())
    return last


def tour_gpu(sch: tirfun.Schedule) -> None:
    """Step 7: the bound schedule of step 4 on an NVIDIA GPU, or as far as
    this machine allows: the PTX, ptxas's check, and the bound program run
    with the interpreter's GPU semantics."""
    import numpy as np

    from .testing.cuda import ptxas_check, ptxas_path, run_split

    _section("7. The GPU step")
    _say("""The tutorial's last step builds the bound schedule of step 4 for an
    NVIDIA GPU: tirfun.build(sch.mod, target="cuda") lowers it, splits the
    host code from the kernel at the thread-bound loops and compiles the
    kernel to PTX with LLVM's NVPTX backend; no GPU is needed for that.""")
    rt = tirfun.build(sch.mod, target="cuda")
    print(f"\nbuilt for {rt.target}; the kernel and its launch:\n")
    print(rt.get_source("tir"))
    print("rt.get_source('ptx'):\n")
    print(rt.get_source("ptx"))
    a = np.arange(8, dtype="float32")
    try:
        dev = tirfun.cuda(0)
    except tirfun.TirfunError as err:
        dev, why = None, str(err)
    if dev is not None:
        x = tirfun.nd.array(a, dev)
        y = tirfun.nd.array(np.zeros(8, dtype="float32"), dev)
        rt(x, y)
        print(f"on {dev}: b = {y.numpy()}")
        _check(bool(np.array_equal(y.numpy(), a + 1)), "the GPU gave a wrong result")
        tour_gpu_matmul(dev)
        return
    if ptxas_path() is not None:
        ptxas_check(rt.get_source("ptx"), rt.target.arch)
        print(f"ptxas -arch={rt.target.arch} accepts the PTX.")
    else:
        print("ptxas is not installed: the PTX is not checked here.")
    b = np.zeros(8, dtype="float32")
    launches = run_split(rt, a, b)
    print(f"host code and kernel with the interpreter as the GPU: launches {launches}, b = {b}")
    _check(bool(np.array_equal(b, a + 1)), "the bound schedule gave a wrong result")
    tour_gpu_matmul(None)
    print()
    _say("""The tour stops here, before running on a GPU; with cuda-python, a driver
    and a device, this step runs the kernels on tirfun.cuda(0). What is
    missing on this machine:""")
    print(f"  {why}")


def tour_gpu_matmul(dev) -> None:
    """Step 6, continued: the shared-memory tiled matmul a TVM user schedules
    (tirfun.examples.gpu_schedules), its trace, and its product on the GPU
    ``dev``, or under the interpreter's GPU semantics when ``dev`` is None."""
    import numpy as np

    from .examples import gpu_schedules
    from .testing.cuda import ptxas_check, ptxas_path

    n = 32
    print()
    _say(f"""A matmul as GPU schedules write it: each thread block stages tiles of
    A and B in shared memory, copied by all its threads together (cache_read,
    compute_at, then fuse, split and bind the copy), and each thread keeps its
    tile of C in registers (cache_write, reverse_compute_at). Here {n}^3, with
    16 x 16 tiles per block and 2 x 2 per thread; benchmarks/gpu.py times
    the same schedule at 4096^3. The trace:""")
    print()
    sch = gpu_schedules.tiled_matmul(n, bm=16, bn=16, bk=8, tm=2, tn=2, vec=2)
    sch.trace.show()
    rt = tirfun.build(sch.mod, target="cuda")
    syncs = rt.lowered.script().count('T.tvm_storage_sync("shared")')
    print(f"\nlowered with {syncs} barriers per step of k (before the copies and after them)")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    expected = np.zeros((n, n), "float32")
    tirfun.interp.run(gpu_schedules.matmul(n)["main"], a, b, expected)
    if dev is not None:
        c = tirfun.nd.array(np.zeros((n, n), "float32"), dev)
        rt(tirfun.nd.array(a, dev), tirfun.nd.array(b, dev), c)
        got, where = c.numpy(), f"on {dev}"
    else:
        if ptxas_path() is not None:
            ptxas_check(rt.get_source("ptx"), rt.target.arch)
            print(f"ptxas -arch={rt.target.arch} accepts the PTX.")
        got = np.zeros((n, n), "float32")
        tirfun.interp.run(rt.lowered["main"], a, b, got)
        where = "with the interpreter as the GPU (every thread, barriers, no race)"
    same = got.tobytes() == expected.tobytes()
    print(f"the product {where}: {'bit for bit' if same else 'NOT'} the plain program's")
    _check(same, "the tiled matmul gave a wrong result")


def run_tour() -> None:
    """Run every step of the tour in order."""
    start = time.perf_counter()
    tour_script()
    tour_te()
    tour_build()
    bound = tour_schedule()
    tour_transformation()
    tour_matmul()
    tour_gpu(bound)
    print(f"\nThe tour took {time.perf_counter() - start:.1f} s.")
