"""CPU schedules of classic kernels, built from their plain programs.

Each kernel comes as a plain program (``matmul``, ``conv2d_nchw``,
``softmax``, ``row_sum``: te computations, one block per stage, no
schedule) and as a function that schedules it with :class:`tirfun.Schedule`
primitives, in the order a TVM user would apply them
(``schedule_packed_matmul(sch)`` and the others change ``sch`` in place;
``packed_matmul(n)`` and the others return a new Schedule of the plain
program). The schedule's trace (``sch.trace.show()``) replays it and
``sch.mod`` is what ``tirfun.build`` compiles::

    from tirfun.examples import schedules
    sch = schedules.packed_matmul(1024)
    sch.trace.show()
    rt = tirfun.build(sch.mod, target="llvm -fast-math-contract")

``benchmarks/cpu.py`` measures these schedules and the tour ends its matmul
story with the first one.

Two rules of TVM shape the order of the primitives: ``parallel``,
``vectorize`` and ``unroll`` need every block below the loop to be complete
or a reduction with its ``init``, so they come before
``decompose_reduction``; and ``rfactor`` needs the reduction to be the
first block under its outermost loop, so it comes before ``compute_at``.
The sizes must be multiples of the tile sizes: every split divides, so no
block carries a predicate (a :class:`~tirfun.errors.ScheduleError` says
which size does not).
"""

from __future__ import annotations

from .. import te
from ..errors import ScheduleError
from ..nodes import IRModule, const
from ..schedule import Schedule

__all__ = [
    "PACK_A_ABOVE_ROWS", "PACK_A_FROM", "byte_matmul", "byte_matmul_vnni", "conv2d_nchw", "conv2d_nchw_program",
    "matmul", "packed_matmul",
    "row_sum", "row_sum_rfactor", "schedule_byte_matmul_vnni",
    "schedule_conv2d_nchw", "schedule_packed_matmul", "schedule_register_tile", "schedule_row_sum_rfactor",
    "schedule_softmax", "softmax", "softmax_program",
]


def _divides(what: str, extent: int, factor: int, name: str) -> None:
    if extent % factor:
        raise ScheduleError(f"{what}: the extent {extent} of loop '{name}' is not a multiple of "
                            f"the tile size {factor}")


def _extent(sch: Schedule, loop) -> int:
    return int(sch.get(loop).extent)


def _module(*tensors) -> IRModule:
    return IRModule({"main": te.create_prim_func(list(tensors))})


# -- matmul ------------------------------------------------------------------

def matmul(n: int) -> IRModule:
    """``C = A @ B`` over ``n x n`` float32 matrices as te writes it: one
    block ``C``, loops ``i, j, k``."""
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return _module(A, B, C)


#: the smallest extent of k for which :func:`schedule_packed_matmul` packs A
#: into panels of ``rows`` rows, when the tile has more than
#: :data:`PACK_A_ABOVE_ROWS` of them: from 1024 floats (4 KiB) on, the rows
#: one step of the product reads fall into one set of the L1 cache
PACK_A_FROM = 1024

#: the most rows of A a tile reads unpacked, at any extent of k: the ways of
#: an 8-way L1 cache hold the 8 rows one step of the product reads, even
#: when they share a set (2-core AVX-512 machine, 1024^3: a 6 x 64 tile at
#: 215-221 GFLOP/s unpacked, 8 x 32 at 212-217 unpacked against 207-209
#: packed; 14 x 32 at 143-170 unpacked against 195-208 packed)
PACK_A_ABOVE_ROWS = 8


def schedule_packed_matmul(sch: Schedule, block="C", rows: int = 6, cols: int = 64,
                           pack: str | None = None, pack_a: bool | None = None, k_unroll: int = 4) -> None:
    """Schedule a matmul block (loops ``i, j, k``) for the CPU's vector
    units:

    - ``split`` i by ``rows`` and j by ``cols``, ``reorder`` to ``j0, i0,
      k, i1, j1``: a ``rows x cols`` tile of C per step of ``i0``, a column
      panel of B per step of ``j0``;
    - ``cache_read`` B into panels of ``cols`` columns, each ``n x cols``
      panel contiguous (B packed into panels), one of two ways (``pack``):
      ``"whole"``, ``transform_layout`` the copy to ``(j // cols, k, j %
      cols)`` and copy B once before the product, its loops split and
      reordered the same way, parallel over the panels and vectorized along
      a panel's row; or ``"panel"``, ``compute_at`` the copy under ``j0``,
      so that each panel task copies its panel first and lowering compacts
      the copy to it. ``"panel"`` by default: the panel is in the cache
      when the product reads it, and its scratch block is the module's own
      from the second call on (:mod:`tirfun.lower.llvm_workspace`); it
      measured faster than ``"whole"`` at 512, 1024 and 2048 on the 2-core
      AVX-512 machine (1024^3 with A packed: 198 against 192 GFLOP/s);
    - with ``pack_a`` (by default for a tile of more than
      :data:`PACK_A_ABOVE_ROWS` rows and an extent of k from
      :data:`PACK_A_FROM` up), ``cache_read`` A too and
      ``transform_layout`` the copy to ``(i // rows, k, i % rows)``, padded
      with zeros where ``rows`` does not divide the extent of i: the
      ``rows`` values one step of the product broadcasts are adjacent,
      where A's own rows, 4 KiB apart or more, would compete for one set of
      the L1 cache, more of them than it has ways. The copy runs once
      before the product, parallel over the panels, reading A's rows along
      k;
    - ``cache_write`` C in ``local`` scope and ``reverse_compute_at`` the
      copy back under ``i0``: the tile accumulates in a ``rows x cols``
      buffer that LLVM keeps in vector registers across the k loop;
    - ``unroll`` the tile rows, ``vectorize`` the tile columns (and the
      copies), ``parallel`` over the panels;
    - ``decompose_reduction`` at ``k``: the tile is zeroed once before the
      k loop rather than tested for ``k == 0`` inside it; then ``split`` k
      by ``k_unroll`` and ``unroll`` the inner part, where it divides the
      extent: a step of the loop issues ``k_unroll`` steps' loads and
      multiply-adds, which the processor overlaps (at 1024^3 on the 2-core
      AVX-512 machine, medians of six alternating rounds: 297 GFLOP/s
      without, 316 with 2, 319 with 4; 8 and 16 measured below 4);
    - where ``rows`` does not divide the extent of i, ``loop_partition``
      ``i0`` before its last step, before the tile is cached: each part
      gets a tile of its own, the full tiles' without the split's predicate,
      the last one's as many rows as are left.

    ``cols`` a multiple of the vector width ``w`` gives ``cols / w``
    vector loads of B and ``rows`` broadcasts of A per ``rows * cols / w``
    fused multiply-adds (with ``-fast-math-contract``). The defaults fit
    AVX-512: 24 of its 32 vector registers hold the 6 x 64 tile, and a
    panel of B (64 columns, 256 KiB at k = 1024) stays in the L2 cache
    while the tiles of a task stream it. A tile this small reads A as it
    is: on the 2-core AVX-512 machine, 6 x 64 runs at 215-221 GFLOP/s at
    1024^3 and 211-216 at 2048^3, where 14 x 32 with A packed ran at
    195-208 and 166-176. k is summed in the program's order, so without
    contraction the result is the interpreter's, bit for bit.
    """
    block = sch.get_block(block) if isinstance(block, str) else block
    i, j, k = sch.get_loops(block)
    n_i, n_j = _extent(sch, i), _extent(sch, j)
    _divides("schedule_packed_matmul", n_j, cols, "j")
    if pack is None:
        pack = "panel"
    if pack not in ("whole", "panel"):
        raise ScheduleError(f"schedule_packed_matmul: pack must be 'whole' or 'panel', got {pack!r}")
    if pack_a is None:
        pack_a = rows > PACK_A_ABOVE_ROWS and _extent(sch, k) >= PACK_A_FROM
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, cols])
    sch.reorder(j0, i0, k, i1, j1)
    packed = sch.cache_read(block, 1, "global")
    if pack == "whole":
        sch.transform_layout(packed, ("write", 0), lambda kk, jj: [jj // cols, kk, jj % cols])
        rows_of_b, cols_of_b = sch.get_loops(packed)
        panel, lane = sch.split(cols_of_b, [None, cols])
        sch.reorder(panel, rows_of_b, lane)
        sch.parallel(panel)
        sch.vectorize(lane)
    else:
        sch.compute_at(packed, j0)
        sch.vectorize(sch.get_loops(packed)[-1])
    if pack_a:
        a_packed = sch.cache_read(block, 0, "global")
        zero = const(0, sch.get(a_packed).writes[0].buffer.dtype)
        sch.transform_layout(a_packed, ("write", 0), lambda ii, kk: [ii // rows, kk, ii % rows],
                             pad_value=zero if n_i % rows else None)
        copy_loops = sch.get_loops(a_packed)
        if len(copy_loops) == 3:
            # padded: the copy runs over the new layout's (panel, k, row)
            panels, steps, lanes = copy_loops
            sch.reorder(panels, lanes, steps)
        else:
            # the copy keeps A's loops (i, k): split i into panels of rows
            panels, _lanes = sch.split(copy_loops[0], [None, rows])
        sch.parallel(panels)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.parallel(j0)
    parts = [block]
    if n_i % rows:
        parts = [sch.get_child_blocks(loop)[0] for loop in sch.loop_partition(i0, [n_i // rows])]
    for part in parts:
        schedule_register_tile(sch, part, k_unroll)


def schedule_register_tile(sch: Schedule, block, k_unroll: int = 1) -> None:
    """Keep the tile of C that a reduction block's innermost two loops
    cover in registers, the step of :func:`schedule_packed_matmul` after
    its splits: the block's last four loops are ``tiles, steps, rows,
    cols`` (``i0, k, i1, j1``). ``cache_write`` C in ``local`` scope,
    ``reverse_compute_at`` the copy back under ``tiles``, ``unroll`` its
    rows and ``vectorize`` its columns, and ``decompose_reduction`` at
    ``steps``, so the tile is zeroed once before the k loop. With
    ``k_unroll`` above 1 dividing the extent of ``steps``, ``split`` it by
    ``k_unroll`` and ``unroll`` the inner part (the sum keeps its order)."""
    block = sch.get_block(block) if isinstance(block, str) else block
    tiles, steps = sch.get_loops(block)[-4:-2]
    tile = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(tile, tiles)
    tile_rows, tile_cols = sch.get_loops(tile)[-2:]
    sch.unroll(tile_rows)
    sch.vectorize(tile_cols)
    sch.decompose_reduction(block, steps)
    if k_unroll > 1 and _extent(sch, steps) % k_unroll == 0 and _extent(sch, steps) > k_unroll:
        sch.unroll(sch.split(steps, [None, k_unroll])[1])


def packed_matmul(n: int, rows: int = 6, cols: int = 64, pack: str | None = None,
                  pack_a: bool | None = None, k_unroll: int = 4) -> Schedule:
    """:func:`matmul` scheduled by :func:`schedule_packed_matmul`."""
    sch = Schedule(matmul(n))
    schedule_packed_matmul(sch, "C", rows, cols, pack, pack_a, k_unroll)
    return sch


# -- byte matmul ---------------------------------------------------------------

def byte_matmul(n: int) -> IRModule:
    """``C[i, j] = sum_k A[i, k] * B[j, k]`` over ``n x n`` matrices of
    unsigned (A) and signed (B) bytes, summed in int32, as te writes it: one
    block ``C``, loops ``i, j, k`` (B holds a row per output column, as a
    quantized layer keeps its weights)."""
    A = te.placeholder((n, n), "uint8", name="A")
    B = te.placeholder((n, n), "int8", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k].astype("int32") * B[j, k].astype("int32"), axis=k),
                   name="C")
    return _module(A, B, C)


def schedule_byte_matmul_vnni(sch: Schedule, block="C", rows: int = 8) -> None:
    """Schedule a byte matmul block (loops ``i, j, k``) for AVX512-VNNI, as
    TVM's x86 dense schedule does:

    - ``transform_layout`` B to ``[j // 16, k // 4, j % 16, k % 4]``: the
      16 x 4 bytes one ``vpdpbusd`` multiplies are 64 consecutive bytes
      (the caller passes B packed so: ``B.reshape(n // 16, 16, n // 4,
      4).transpose(0, 2, 1, 3)``);
    - ``split`` i by ``rows``, j by 16 and k by 4, ``reorder`` to ``i0, j0,
      k0, i1, j1, k1``: ``rows`` tiles of 16 int32 sums per step of k0,
      sharing one load of B;
    - ``parallel`` over i0, ``decompose_reduction`` at k0;
    - ``tensorize`` j1 with ``VNNI_DOT_16x4_INTRIN`` (one ``vpdpbusd`` per
      row and step of k0) and ``unroll`` the rows.

    The result is exact: every product and sum is an integer, and vpdpbusd
    wraps as int32 addition does.
    """
    from ..tir.tensor_intrin.x86 import VNNI_DOT_16x4_INTRIN

    block = sch.get_block(block) if isinstance(block, str) else block
    i, j, k = sch.get_loops(block)
    _divides("schedule_byte_matmul_vnni", _extent(sch, i), rows, "i")
    _divides("schedule_byte_matmul_vnni", _extent(sch, j), 16, "j")
    _divides("schedule_byte_matmul_vnni", _extent(sch, k), 4, "k")
    sch.transform_layout(block, ("read", 1), lambda jj, kk: [jj // 16, kk // 4, jj % 16, kk % 4])
    i0, i1 = sch.split(i, [None, rows])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.parallel(i0)
    sch.decompose_reduction(block, k0)
    sch.tensorize(j1, VNNI_DOT_16x4_INTRIN)
    sch.unroll(i1)


def byte_matmul_vnni(n: int, rows: int = 8) -> Schedule:
    """:func:`byte_matmul` scheduled by :func:`schedule_byte_matmul_vnni`."""
    sch = Schedule(byte_matmul(n))
    schedule_byte_matmul_vnni(sch, "C", rows)
    return sch


# -- conv2d ------------------------------------------------------------------

def conv2d_nchw_program(channels: int = 64, filters: int = 64, size: int = 56) -> IRModule:
    """3x3 convolution, stride 1, padding 1, batch 1, NCHW, float32, as te
    writes it: a padding stage ``pad`` and the convolution ``conv``
    reducing over input channels and the window (``data``, ``weight`` and
    ``conv`` are the parameters)."""
    c, h = channels, size
    data = te.placeholder((1, c, h, h), "float32", name="data")
    weight = te.placeholder((filters, c, 3, 3), "float32", name="weight")
    pad = te.compute(
        (1, c, h + 2, h + 2),
        lambda n, ci, y, x: te.if_then_else(te.all(1 <= y, y < h + 1, 1 <= x, x < h + 1),
                                            data[n, ci, y - 1, x - 1], te.const(0.0, "float32")),
        name="pad")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute(
        (1, filters, h, h),
        lambda n, f, y, x: te.sum(pad[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv")
    return _module(data, weight, conv)


def schedule_conv2d_nchw(sch: Schedule, block="conv", cols: int = 14, lanes: int = 16,
                         vectors: int = 1) -> None:
    """Schedule the convolution of :func:`conv2d_nchw_program` (loops ``n,
    f, y, x, rc, ry, rx``) and its padding stage as a matrix product whose
    rows are output pixels and whose columns are filters:

    - ``cache_read`` the weights and ``transform_layout`` the copy to
      ``(rc, ry, rx, f)``: for each input channel and window position, the
      weights of consecutive filters are contiguous, one vector load;
    - ``cache_write`` the output in ``local`` scope and ``transform_layout``
      it to ``(n, y, x, f)``, so the accumulators of one pixel's filters
      are contiguous too;
    - ``split`` the filters into groups of ``vectors`` vectors of ``lanes``
      and the columns into tiles of ``cols``, ``reorder`` to ``f0, y, x0,
      rc, ry, rx, x1, fv, f1`` and ``fuse`` ``n, f0, y, x0``: one parallel
      task per tile of ``cols`` pixels and ``vectors * lanes`` filters;
    - ``reverse_compute_at`` the copy back under the fused loop: the task
      accumulates its ``cols x vectors`` vectors in registers;
    - ``unroll`` the tile's pixels and vectors, ``vectorize`` the filter
      lanes: each step of the window is one load of weights per vector and
      one broadcast input element per pixel, ``cols * vectors`` fused
      multiply-adds (with ``-fast-math-contract``);
    - the padding stage parallel over channels (the weight copy, 36K
      elements, stays serial: parallel over filters, its threads would
      write the same cache lines); ``decompose_reduction`` at the channel
      loop.

    The defaults fit AVX-512: 14 accumulators of 16 lanes, and the 36 KiB of
    weights of one filter group stay in the first-level cache for the whole
    task. The window is summed in the program's order (channels, then rows,
    then columns), so without contraction the result is the interpreter's,
    bit for bit.
    """
    block = sch.get_block(block) if isinstance(block, str) else block
    n, f, y, x, rc, ry, rx = sch.get_loops(block)
    _divides("schedule_conv2d_nchw", _extent(sch, f), vectors * lanes, "f")
    _divides("schedule_conv2d_nchw", _extent(sch, x), cols, "x")
    weights = sch.cache_read(block, 1, "global")
    sch.transform_layout(weights, ("write", 0), lambda wf, wc, wy, wx: (wc, wy, wx, wf))
    out = sch.cache_write(block, 0, "local")
    sch.transform_layout(out, ("read", 0), lambda on, of, oy, ox: (on, oy, ox, of))
    f0, fv, f1 = sch.split(f, [None, vectors, lanes])
    x0, x1 = sch.split(x, [None, cols])
    sch.reorder(f0, y, x0, rc, ry, rx, x1, fv, f1)
    tiles = sch.fuse(n, f0, y, x0)
    sch.reverse_compute_at(out, tiles)
    sch.unroll(x1)
    sch.unroll(fv)
    sch.vectorize(f1)
    sch.parallel(tiles)
    pad = sch.get_producers(block)[0]
    pad_n, pad_c = sch.get_loops(pad)[:2]
    sch.parallel(sch.fuse(pad_n, pad_c))
    sch.decompose_reduction(block, rc)


def conv2d_nchw(channels: int = 64, filters: int = 64, size: int = 56, cols: int = 14,
                lanes: int = 16, vectors: int = 1) -> Schedule:
    """:func:`conv2d_nchw_program` scheduled by :func:`schedule_conv2d_nchw`."""
    sch = Schedule(conv2d_nchw_program(channels, filters, size))
    schedule_conv2d_nchw(sch, "conv", cols, lanes, vectors)
    return sch


# -- softmax -----------------------------------------------------------------

def softmax_program(n: int, m: int) -> IRModule:
    """Row softmax of an ``n x m`` float32 matrix as TVM's topi writes it:
    the row maximum ``maxelem``, ``T_softmax_exp = exp(A - max)``, the row
    sum ``expsum`` and ``T_softmax_norm = exp / sum``, four stages."""
    A = te.placeholder((n, m), "float32", name="A")
    k = te.reduce_axis((0, m), name="k")
    maxelem = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="maxelem")
    exp = te.compute((n, m), lambda i, j: te.exp(A[i, j] - maxelem[i]), name="T_softmax_exp")
    k2 = te.reduce_axis((0, m), name="k")
    expsum = te.compute((n,), lambda i: te.sum(exp[i, k2], axis=k2), name="expsum")
    norm = te.compute((n, m), lambda i, j: exp[i, j] / expsum[i], name="T_softmax_norm")
    return _module(A, norm)


def schedule_softmax(sch: Schedule, lanes: int = 16) -> None:
    """Schedule :func:`softmax_program`: each row computed whole by one
    parallel task, every stage vectorized.

    - ``split`` each reduction by ``lanes`` and ``rfactor`` the inner loop:
      a ``lanes``-wide vector of partial maxima (sums), then one
      reduction over its lanes;
    - ``compute_at`` every stage under the row loop of the normalisation
      (``exp`` stays a stage of its own: inlining it into both consumers
      computes it twice), each stage's row shrinks to a buffer of one row;
    - ``reorder`` each partial reduction so its lanes are innermost and
      ``vectorize`` them, the exp and the normalisation; ``parallel`` rows;
    - ``decompose_reduction`` of all four reductions.

    Build with ``-math=fast`` for vector ``exp``; ``-math=exact`` calls
    the C library per element.
    """
    factors = {}
    for name in ("maxelem", "expsum"):
        block = sch.get_block(name)
        i, k = sch.get_loops(block)
        _divides("schedule_softmax", _extent(sch, k), lanes, "k")
        _, k1 = sch.split(k, [None, lanes])
        factors[name] = sch.rfactor(k1, 1)
    norm = sch.get_block("T_softmax_norm")
    row, col = sch.get_loops(norm)
    _, col1 = sch.split(col, [None, lanes])
    sch.vectorize(col1)
    for name in ("expsum", "expsum_rf", "T_softmax_exp", "maxelem", "maxelem_rf"):
        sch.compute_at(sch.get_block(name), row)
    for rf in factors.values():
        _, k1, k0 = sch.get_loops(rf)
        sch.reorder(k0, k1)
        sch.vectorize(k1)
    exp = sch.get_block("T_softmax_exp")
    _, exp1 = sch.split(sch.get_loops(exp)[-1], [None, lanes])
    sch.vectorize(exp1)
    sch.parallel(row)
    for name, rf in factors.items():
        sch.decompose_reduction(rf, sch.get_loops(rf)[1])
        block = sch.get_block(name)
        sch.decompose_reduction(block, sch.get_loops(block)[1])


def softmax(n: int, m: int, lanes: int = 16) -> Schedule:
    """:func:`softmax_program` scheduled by :func:`schedule_softmax`."""
    sch = Schedule(softmax_program(n, m))
    schedule_softmax(sch, lanes)
    return sch


# -- row sum -----------------------------------------------------------------

def row_sum(n: int, m: int) -> IRModule:
    """``B[i] = sum_k A[i, k]`` over an ``n x m`` float32 matrix as te
    writes it: one block ``B``, loops ``i, k``."""
    A = te.placeholder((n, m), "float32", name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return _module(A, B)


def schedule_row_sum_rfactor(sch: Schedule, block="B", lanes: int = 64, tail: int | None = 16) -> None:
    """Schedule a row reduction (loops ``i, k``) to stream its rows:

    - ``split`` k by ``lanes`` and ``rfactor`` the inner loop: per row a
      ``lanes``-wide vector of partial sums (``B_rf``), then the sum of its
      lanes; ``lanes`` a multiple of the vector width makes
      ``lanes / width`` independent vector accumulators, so the adds of
      one row overlap instead of waiting on each other;
    - with ``tail`` (16 by default; None or ``lanes``: no tree), the lanes
      are summed in two steps: ``split`` the lanes by ``tail`` and
      ``rfactor`` twice, the inner loop first, so that the partial sums
      ``B_rf_rf[i, lanes // tail, tail]`` are added ``tail`` lanes at a
      time into ``B_rf[i, tail]`` (vector adds) and only ``tail`` scalar
      adds remain per row, where the plain sum of lanes chains ``lanes``
      dependent adds at the end of each row. The row sum is bound by the
      memory: on the 2-core machine, 4096^2 with the matrix out of the
      caches, 30.0 GB/s plain against 30.6 with the tree (the medians of
      100 runs each, in shuffled order);
    - ``compute_at`` the partial sums under the row loop, ``reorder`` their
      lanes innermost and ``vectorize`` them; ``parallel`` over rows;
    - ``decompose_reduction`` of every block: the partials are zeroed
      before the k loop, the row sum before the lanes' loop.

    The sum is reassociated (by ``lanes`` interleaved partial sums, then
    by the tree), as every vectorized reduction is.
    """
    block = sch.get_block(block) if isinstance(block, str) else block
    i, k = sch.get_loops(block)
    n_k = _extent(sch, k)
    _divides("schedule_row_sum_rfactor", n_k, lanes, "k")
    tree = tail is not None and tail != lanes
    if tree:
        _divides("schedule_row_sum_rfactor", lanes, tail, "k_1")
    _, k1 = sch.split(k, [None, lanes])
    if tree:
        # the sum of each of the tail lanes (B_rf[i, tail]), then below it
        # the sum of each of all the lanes (B_rf_rf[i, lanes // tail,
        # tail]): rfactor needs its block first under its loops, so the
        # tail's first
        _, lane = sch.split(k1, [None, tail])
        tail_rf = sch.rfactor(lane, 1)
        rf = sch.rfactor(sch.get_loops(tail_rf)[2], 1)
        sch.compute_at(tail_rf, i)
        sch.compute_at(rf, i)
        shape = ((lanes // tail, "lane"), (tail, "lane"))
    else:
        rf = sch.rfactor(k1, 1)
        sch.compute_at(rf, i)
        shape = ((lanes, "lane"),)
    # compute_at makes the loops of the partial sums' lanes, then of the
    # steps of k, dropping those of one iteration
    loops = _named_loops(sch, rf, shape + ((n_k // lanes, "step"),))
    steps, lane_loops = loops["step"], loops["lane"]
    sch.reorder(*steps, *lane_loops)
    if len(lane_loops) > 1:
        lane_loops = [sch.fuse(*lane_loops)]
    for loop in lane_loops:
        sch.vectorize(loop)
    if tree:
        tail_loops = _named_loops(sch, tail_rf, ((lanes // tail, "group"), (tail, "lane")))
        for loop in tail_loops["lane"]:
            sch.vectorize(loop)
    sch.parallel(i)
    sch.decompose_reduction(rf, (steps + lane_loops)[0])
    if tree:
        sch.decompose_reduction(tail_rf, (tail_loops["group"] + tail_loops["lane"])[0])
    sch.decompose_reduction(block, sch.get_loops(block)[-1])


def _named_loops(sch: Schedule, block, extents) -> dict[str, list]:
    """The loops of ``block`` below its first, named by ``extents``
    (``(extent, name)`` pairs in loop order) where compute_at drops those of
    one iteration: the name's loops, in order."""
    below = sch.get_loops(block)[1:]
    kept = [name for extent, name in extents if extent > 1]
    assert len(kept) == len(below), (kept, below)
    out: dict[str, list] = {name: [] for _, name in extents}
    for name, loop in zip(kept, below):
        out[name].append(loop)
    return out


def row_sum_rfactor(n: int, m: int, lanes: int = 64, tail: int | None = 16) -> Schedule:
    """:func:`row_sum` scheduled by :func:`schedule_row_sum_rfactor`."""
    sch = Schedule(row_sum(n, m))
    schedule_row_sum_rfactor(sch, "B", lanes, tail)
    return sch
