"""Copies of what a predicated block accesses, where the block's loops and
the buffer's dimensions differ in width.

A loop split into more iterations than it has (``split(i, [4, 1, 16])``
of 16) leaves a block under a predicate that skips the iterations past
the end; a copy made per iteration of a loop under the split (read_at,
write_at, and cache_read / cache_write placed with compute_at) must not
copy past the buffer in the skipped ones. Its region is clamped to the
buffer, and with int64 loops over a buffer of int32 dimensions (TVM's
narrow-datatype programs) the clamp compared an int64 end with an int32
dimension, gave up, and the copy stored past the buffer's end.

Each example: a 1-D elementwise stage (loops and buffer dimensions in
int32 or int64 each), its loop over-split and perhaps fused, then one copy
at a drawn loop. The interpreter, which refuses an access out of bounds,
must give the original's results, and so must the build.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tirfun
import tirfun.rewrites as R
from tirfun import IRModule
from tirfun.errors import ScheduleError
from tirfun.interp import run
from tirfun.script import from_source

_SOURCE = """
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({size},), "float32"), B: T.Buffer(({size},), "float32")):
    for i in T.serial(0, {n}):
        for j in T.serial(0, {m}):
            with T.block("blk"):
                vi = T.axis.spatial({extent}, i * {m} + j)
                B[vi] = A[vi] + T.float32(1)
"""


def _lit(value: int, dtype: str) -> str:
    return str(value) if dtype == "int32" else f"T.{dtype}({value})"


@st.composite
def predicated_copies(draw):
    """(module, pipeline): the stage, an over-split of ``i``, perhaps a
    fuse of the split's inner loop with ``j``, then a copy at a loop under
    the split."""
    loops = draw(st.sampled_from(["int32", "int64"]), label="loop dtype")
    dims = draw(st.sampled_from(["int32", "int64"]), label="dimension dtype")
    n, m = draw(st.integers(2, 6), label="n"), draw(st.integers(1, 4), label="m")
    outer = draw(st.integers(2, 4), label="outer factor")
    inner = n  # outer * inner iterations of n: every outer iteration but the first is skipped
    src = _SOURCE.format(size=_lit(n * m, dims), extent=_lit(n * m, loops), n=_lit(n, loops), m=_lit(m, loops))
    mod = IRModule({"main": from_source(src)})
    steps = R.split("i", [outer, inner])
    fused = draw(st.booleans(), label="fused")
    if fused:
        steps = steps >> R.fuse("i_1", "j")
    at = draw(st.sampled_from(["i_1_j_fused"] if fused else ["i_1", "j"]), label="copy loop")
    scope = draw(st.sampled_from(["shared", "local", "global"]), label="scope")
    kind = draw(st.sampled_from(["read_at", "write_at", "cache_read", "cache_write"]), label="copy")
    if kind == "read_at":
        steps = steps >> R.read_at(at, "blk", 0, scope)
    elif kind == "write_at":
        steps = steps >> R.write_at(at, "blk", 0, scope)
    elif kind == "cache_read":
        steps = steps >> R.cache_read("blk", 0, scope) >> R.compute_at("A_" + scope, at)
    else:
        steps = steps >> R.cache_write("blk", 0, scope) >> R.reverse_compute_at("B_" + scope, at)
    event(f"{kind}, loops {loops}, dimensions {dims}")
    return mod, steps


@settings(max_examples=max(10, settings().max_examples // 3))
@given(predicated_copies())
def test_a_copy_of_a_predicated_block_stays_inside_the_buffer(case):
    mod, steps = case
    try:
        out = steps(mod)
    except ScheduleError as err:
        event(f"refused: {type(err).__name__}")
        return
    rng = np.random.default_rng(0)
    a = rng.standard_normal(mod["main"].buffer_map[mod["main"].params[0]].shape[0].value).astype("float32")
    expected, got, built = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
    run(mod["main"], a, expected)
    run(out["main"], a, got)  # refuses a store or load past the buffer
    np.testing.assert_array_equal(got, expected)
    tirfun.build(out)(a, built)
    np.testing.assert_array_equal(built, expected)
    event("applied")


_FUSED_SOURCE = """
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("blk"):
            vi, vj = T.axis.remap("SS", [i, j])
            {where}
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


@st.composite
def fused_writers(draw):
    """(module, pipeline, cut, per_element): a 2-D elementwise stage whose
    loops are fused and perhaps split again by a factor that may not
    divide them, its writes perhaps cut short by a predicate (``i * m + j
    < k``: then ``cut``), then a cache_write of its output, perhaps moved
    with reverse_compute_at under the fused loop or one of its parts
    (``per_element``: under a loop of one element per iteration, where the
    writes cover the buffer, also the inner loop of an over-split; it must
    then apply)."""
    n, m = draw(st.integers(1, 5), label="n"), draw(st.integers(1, 5), label="m")
    # TVM's GPU schedule: fuse, split by a factor of the fused extent
    # (perhaps across rows: m does not divide it, and the remainder's
    # weights exceed m, which a simplifier reducing them modulo m, writing
    # ``(i_0 * 4 + i_1) % 3`` as ``(i_0 + i_1) % 3``, parts from the
    # quotient's sum), bind, cache_write, reverse_compute_at to the threads
    across = [d for d in range(m + 1, n * m + 1) if (n * m) % d == 0 and d % m]
    gpu = bool(across) and draw(st.booleans(), label="split across rows, copied back per element")
    cut = not gpu and draw(st.booleans(), label="cut")
    k = draw(st.integers(0, n * m - 1), label="k") if cut and n * m > 1 else None
    where = f"T.where(i * {m} + j < {k})" if k is not None else "T.evaluate(0)"
    mod = IRModule({"main": from_source(_FUSED_SOURCE.format(n=n, m=m, where=where))})
    steps = R.fuse("i", "j")
    loop = "i_j_fused"
    factor = draw(st.sampled_from(across), label="factor") if gpu else draw(st.integers(1, 8), label="factor")
    split = gpu or draw(st.booleans(), label="split")
    if split:
        steps = steps >> R.split(loop, [None, factor])
        loop = "i_j_fused_1" if gpu else draw(st.sampled_from(["i_j_fused_0", "i_j_fused_1"]), label="under")
    scope = draw(st.sampled_from(["local", "global"]), label="scope")
    steps = steps >> R.cache_write("blk", 0, scope)
    moved = gpu or draw(st.booleans(), label="moved")
    if moved:
        steps = steps >> R.reverse_compute_at(f"B_{scope}", loop)
    event(f"split {'dividing' if split and (n * m) % factor == 0 else 'over' if split else 'none'}, "
          f"{'cut' if k is not None else 'whole'}, {'moved' if moved else 'at the root'}")
    # an over-split's inner loop too: the copy back then runs where the
    # writer did (the over-split's condition), as TVM places it
    per_element = moved and k is None and (not split or loop == "i_j_fused_1")
    return mod, steps, k is not None, per_element


@settings(max_examples=max(10, settings().max_examples // 3))
@given(fused_writers())
def test_a_cache_write_of_a_fused_writer_fills_only_what_it_may_skip(case):
    """cache_write of a writer over a fused (and split again) loop keeps
    the meaning, also where a predicate cuts the writes short (the copy is
    then filled from the buffer first, or the elements it never wrote
    would be copied back); where the writes cover the buffer there is no
    fill, as in TVM, so that the copy back can move under the fused loop
    (the GPU schedule's pattern)."""
    mod, steps, cut, per_element = case
    try:
        out = steps(mod)
    except ScheduleError as err:
        assert steps.rewrites[-1].primitive == "reverse_compute_at", f"a cache_write alone was refused: {err}"
        assert not per_element, f"the copy back of a whole write was refused under its fused loop: {err}"
        event(f"refused ({'cut' if cut else 'whole'}): {type(err).__name__}")
        return
    if per_element:
        event("moved under the fused loop, element by element")
    fills = [name for name in ("B_local_fill", "B_global_fill") if f'"{name}"' in out.script()]
    if not cut:
        assert not fills, f"a fill where the writer writes the whole buffer:\n{out.script()}"
    else:
        event("filled" if fills else "no fill")
    rng = np.random.default_rng(1)
    func = mod["main"]
    shape = tuple(d.value for d in func.buffer_map[func.params[0]].shape)
    a = rng.standard_normal(shape).astype("float32")
    b0 = rng.standard_normal(shape).astype("float32")  # what the writer leaves must stay
    expected, got, built = b0.copy(), b0.copy(), b0.copy()
    run(func, a, expected)
    run(out["main"], a, got)
    np.testing.assert_array_equal(got, expected)
    tirfun.build(out)(a, built)
    np.testing.assert_array_equal(built, expected)


_OVERWRITE_SOURCE = """
from tirfun.script import tir as T

@T.prim_func
def main(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n},), "float32")):
    for i, j in T.grid({n}, {m}):
        with T.block("blk"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = A[vi, vj] + T.float32(1)
"""


@settings(max_examples=max(10, settings().max_examples // 3))
@given(st.integers(1, 5), st.integers(1, 5), st.booleans(), st.integers(0, 8), st.sampled_from(["local", "global"]))
def test_a_cache_write_of_a_writer_that_overwrites_needs_no_fill(n, m, fused, factor, scope):
    # each row is written m times, the last write staying (TVM's
    # expected programs have such blocks); fused, the written index is the
    # fused loop's upper part, f // m, which still reaches every row
    mod = IRModule({"main": from_source(_OVERWRITE_SOURCE.format(n=n, m=m))})
    steps = R.fuse("i", "j") if fused else R.Pipeline([])
    if fused and factor:
        steps = steps >> R.split("i_j_fused", [None, factor])
    out = (steps >> R.cache_write("blk", 0, scope))(mod)
    # a split that does not divide leaves a condition, under which a fill
    # stays unless the prefix is shown; without one there is no fill
    if not (fused and factor and (n * m) % factor):
        assert f'"B_{scope}_fill"' not in out.script(), out.script()
    a = np.random.default_rng(n * 8 + m).standard_normal((n, m)).astype("float32")
    b = np.full(n, 3, "float32")
    expected, got, built = b.copy(), b.copy(), b.copy()
    run(mod["main"], a, expected)
    run(out["main"], a, got)
    np.testing.assert_array_equal(got, expected)
    tirfun.build(out)(a, built)
    np.testing.assert_array_equal(built, expected)
