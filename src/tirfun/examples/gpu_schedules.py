"""The classic shared-memory tiled matmul for NVIDIA GPUs, built by schedule
primitives from the plain program as a TVM user writes it.

``matmul(n)`` is the plain program (one block ``C``, loops ``i, j, k``);
``schedule_tiled_matmul(sch)`` schedules it in place and
``tiled_matmul(n)`` returns a new Schedule of it. ``sch.trace.show()``
replays the steps and ``sch.mod`` is what ``tirfun.build`` compiles::

    from tirfun.examples import gpu_schedules
    sch = gpu_schedules.tiled_matmul(4096)
    rt = tirfun.build(sch.mod, target="cuda -fast-math-contract")

Each thread block computes a ``bm x bn`` tile of C, each of its
``(bm / tm) x (bn / tn)`` threads a ``tm x tn`` tile held in registers;
the k loop runs in steps of ``bk``, each staging a ``bm x bk`` tile of A and
a ``bk x bn`` tile of B in shared memory, copied by all the threads of the
block together. Lowering for CUDA compacts the shared tiles and the
register tile to their sizes and puts the barriers in: one before each
step's copies (the previous step's products are done with the tiles) and
one after them (the copies are complete before any thread reads them).

The sizes must be multiples of the tiles and the copies must share out
evenly among the threads; a :class:`~tirfun.errors.ScheduleError` says
which does not.
"""

from __future__ import annotations

from .. import te
from ..errors import ScheduleError
from ..nodes import IRModule
from ..schedule import Schedule

__all__ = ["matmul", "schedule_tiled_matmul", "tiled_matmul"]


def matmul(n: int, dtype: str = "float32") -> IRModule:
    """``C = A @ B`` over ``n x n`` matrices as te writes it: one block
    ``C``, loops ``i, j, k``."""
    A = te.placeholder((n, n), dtype, name="A")
    B = te.placeholder((n, n), dtype, name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def _check(what: str, ok: bool) -> None:
    if not ok:
        raise ScheduleError(f"schedule_tiled_matmul: {what}")


def _cooperative_fetch(sch: Schedule, copy, ty: int, tx: int, vec: int) -> None:
    """Share the copy of a tile out among the threads of the block: its two
    loops fused, split into ``[rest, ty, tx, vec]``, the middle parts bound
    to threadIdx.y and threadIdx.x (the loops compute_at left above it are
    bound to the same tags, so each thread takes its own share), the last
    one a vector of ``vec`` elements."""
    fused = sch.fuse(*sch.get_loops(copy)[-2:])
    _, y, x, v = sch.split(fused, [None, ty, tx, vec])
    sch.bind(y, "threadIdx.y")
    sch.bind(x, "threadIdx.x")
    sch.vectorize(v)


def schedule_tiled_matmul(sch: Schedule, block="C", bm: int = 128, bn: int = 128, bk: int = 8,
                          tm: int = 8, tn: int = 8, vec: int = 4) -> None:
    """Schedule a matmul block (loops ``i, j, k``) for a GPU:

    - ``split`` i into ``[blocks, bm / tm, tm]``, j into ``[blocks, bn /
      tn, tn]`` and k into ``[steps, bk]``, ``reorder`` to ``by, bx, ty,
      tx, ko, ki, yi, xi``, ``bind`` by, bx to blockIdx.y, .x and ty, tx to
      threadIdx.y, .x;
    - ``cache_write`` C to ``local`` and ``reverse_compute_at`` the copy
      under tx: each thread accumulates its ``tm x tn`` tile in registers
      and writes it back once;
    - ``cache_read`` B and ``reindex_cache_read`` A (transposed, k first)
      to ``shared`` and ``compute_at`` the copies under ko: compute_at
      takes the region that all the threads of the block read in one step
      (a shared buffer is relaxed over threadIdx), then each copy is shared
      out among the threads (fuse, split, bind to threadIdx, vectorize by
      ``vec``);
    - ``cache_read`` the column of the A tile and the row of the B tile
      that a step of ki reads to ``local`` and ``compute_at`` them under
      ki, vectorized: A transposed makes both rows of shared memory, read
      in whole vectors;
    - ``unroll`` ki, yi, xi and the write-back, and ``decompose_reduction``
      at ko: the tile is zeroed before the k loop, not tested in it.
    """
    block = sch.get_block(block) if isinstance(block, str) else block
    i, j, k = sch.get_loops(block)
    n_i, n_j, n_k = (int(sch.get(lp).extent) for lp in (i, j, k))
    ty, tx = bm // tm, bn // tn
    threads = ty * tx
    _check(f"the tile {bm} x {bn} must be a multiple of the thread tile {tm} x {tn}",
           bm % tm == 0 and bn % tn == 0)
    _check(f"the matrix ({n_i} x {n_k} times {n_k} x {n_j}) must be a multiple of the tiles "
           f"({bm} x {bk} and {bk} x {bn})", n_i % bm == 0 and n_j % bn == 0 and n_k % bk == 0)
    _check(f"the copies of the tiles ({bm * bk} and {bk * bn} elements) must share out evenly among "
           f"{threads} threads in vectors of {vec}",
           bm * bk % (threads * vec) == 0 and bk * bn % (threads * vec) == 0)
    by, ty_loop, yi = sch.split(i, [None, ty, tm])
    bx, tx_loop, xi = sch.split(j, [None, tx, tn])
    ko, ki = sch.split(k, [None, bk])
    sch.reorder(by, bx, ty_loop, tx_loop, ko, ki, yi, xi)
    sch.bind(by, "blockIdx.y")
    sch.bind(bx, "blockIdx.x")
    sch.bind(ty_loop, "threadIdx.y")
    sch.bind(tx_loop, "threadIdx.x")
    tile = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(tile, tx_loop, preserve_unit_loops=True)
    # unit loops kept: each copy gets its two loops whatever the tile; A is
    # kept transposed so that a thread's column of it is a row
    a_shared = sch.reindex_cache_read(block, 0, "shared", lambda i, j, k: (k, i))
    sch.compute_at(a_shared, ko, preserve_unit_loops=True)
    b_shared = sch.cache_read(block, 1, "shared")
    sch.compute_at(b_shared, ko, preserve_unit_loops=True)
    for copy in (a_shared, b_shared):
        _cooperative_fetch(sch, copy, ty, tx, vec)
    # each step of ki reads a column of the A tile and a row of the B tile
    # into registers, tm + tn elements for tm * tn multiply-adds
    reads = [r.buffer.name for r in sch.get(block).reads]
    a_local = sch.cache_read(block, reads.index("A_shared"), "local")
    sch.compute_at(a_local, ki, preserve_unit_loops=True)
    b_local = sch.cache_read(block, reads.index("B_shared"), "local")
    sch.compute_at(b_local, ki, preserve_unit_loops=True)
    sch.vectorize(sch.get_loops(a_local)[-1])
    sch.vectorize(sch.get_loops(b_local)[-1])
    rows, cols = sch.get_loops(tile)[-2:]
    for loop in (ki, yi, xi, rows):
        sch.unroll(loop)
    sch.vectorize(cols)
    sch.decompose_reduction(block, ko)


def tiled_matmul(n: int, bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 vec: int = 4) -> Schedule:
    """:func:`matmul` of ``n x n`` float32 scheduled by :func:`schedule_tiled_matmul`."""
    sch = Schedule(matmul(n))
    schedule_tiled_matmul(sch, "C", bm, bn, bk, tm, tn, vec)
    return sch
