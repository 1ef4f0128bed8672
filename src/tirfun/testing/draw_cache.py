"""Random applications of the caching primitives, for property tests.

:data:`DRAWERS` maps a primitive's name to a function ``(chooser, module) ->
record or None``: a record of that primitive with arguments drawn from the
module (a block of the main function, one of its read or write buffers, a
storage scope, sometimes consumer blocks), or None when the module has no
block to draw from. The record may not apply (its ``violations()`` say why);
callers that need a valid one draw again or skip it.

:func:`draw_cache_chain` draws up to three of them, each on the module the
ones before made. :func:`draw_partitioned_tiles` draws a matmul whose tile
loop is partitioned and each part given a register tile
(:class:`PartitionedTiles`), a sequence TVM schedules and tirfun must too.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .. import rewrites as R
from ..analysis.traversal import stmt_nodes, walk_stmts
from ..nodes import Block, BlockRealize, IRModule, PrimFunc
from ._choices import Chooser

#: the scopes drawn: the three TVM's GPU schedules use, and the dynamic shared one
SCOPES = ("global", "shared", "local", "shared.dyn")


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _blocks(func: PrimFunc) -> list[Block]:
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    return [s for s in stmt_nodes(func, skip_init=True) if isinstance(s, Block) and s is not root]


def _buffer_arg(ch: Chooser, block: Block, regions):
    """A position in ``regions``, or (less often) the buffer itself or its name."""
    k = ch.integer(0, len(regions) - 1)
    form = ch.weighted([("index", 6), ("buffer", 1), ("name", 1)])
    if form == "buffer":
        return regions[k].buffer
    if form == "name":
        return regions[k].buffer.name
    return k


def _consumers(ch: Chooser, blocks: list[Block], buffer, exclude: str) -> list[str] | None:
    """None (TVM's default) or a few of the blocks reading ``buffer``."""
    if not ch.chance(35):
        return None
    readers = [b.name_hint for b in blocks if b.name_hint != exclude and any(r.buffer == buffer for r in b.reads)]
    picked = ch.subset(readers, 60)
    return picked or None


def draw_cache_read(ch: Chooser, mod: IRModule):
    """A ``cache_read`` of one read buffer of a random block."""
    blocks = [b for b in _blocks(_main(mod)) if b.reads]
    if not blocks:
        return None
    block = ch.choice(blocks)
    arg = _buffer_arg(ch, block, block.reads)
    buffer = block.reads[arg].buffer if isinstance(arg, int) else None
    consumers = _consumers(ch, blocks, buffer, "") if buffer is not None else None
    return R.cache_read(block.name_hint, arg, ch.choice(SCOPES), consumers)


def draw_cache_write(ch: Chooser, mod: IRModule):
    """A ``cache_write`` of one write buffer of a random block."""
    blocks = [b for b in _blocks(_main(mod)) if b.writes]
    if not blocks:
        return None
    # a block whose output another block reads gives consumer_blocks something to do
    feeding = [b for b in blocks if any(r.buffer == w.buffer for o in blocks if o is not b
                                        for r in o.reads for w in b.writes)]
    block = ch.choice(feeding) if feeding and ch.chance(60) else ch.choice(blocks)
    arg = _buffer_arg(ch, block, block.writes)
    buffer = block.writes[arg].buffer if isinstance(arg, int) else None
    readers = [b for b in _blocks(_main(mod)) if b.reads]
    # now and then the block itself among its consumers, which cache_write
    # refuses (a consumer must run after the block): since it fills the
    # cache where the block would read it unwritten, few draws fail otherwise
    exclude = "" if ch.chance(15) else block.name_hint
    consumers = _consumers(ch, readers, buffer, exclude) if buffer is not None else None
    return R.cache_write(block.name_hint, arg, ch.choice(SCOPES), consumers)


def draw_reindex(ch: Chooser, mod: IRModule):
    """A ``reindex`` of one read or write buffer of a random block."""
    blocks = [b for b in _blocks(_main(mod)) if b.reads or b.writes]
    if not blocks:
        return None
    block = ch.choice(blocks)
    kinds = [k for k, regions in (("read", block.reads), ("write", block.writes)) if regions]
    kind = ch.choice(kinds)
    regions = block.reads if kind == "read" else block.writes
    k = ch.integer(0, len(regions) - 1)
    form = ch.weighted([("index", 6), ("buffer", 1), ("name", 1)])
    if form == "buffer":
        return R.reindex(block.name_hint, regions[k].buffer)
    if form == "name":
        return R.reindex(block.name_hint, regions[k].buffer.name)
    return R.reindex(block.name_hint, (kind, k))


def draw_cache_inplace(ch: Chooser, mod: IRModule):
    """A ``cache_inplace`` of a buffer a random block reads (and, more often
    than not, also writes)."""
    blocks = [b for b in _blocks(_main(mod)) if b.reads]
    if not blocks:
        return None
    both = [b for b in blocks if any(r.buffer == w.buffer for r in b.reads for w in b.writes)]
    block = ch.choice(both) if both and ch.chance(80) else ch.choice(blocks)
    inplace = [k for k, r in enumerate(block.reads) if any(w.buffer == r.buffer for w in block.writes)]
    k = ch.choice(inplace) if inplace and ch.chance(80) else ch.integer(0, len(block.reads) - 1)
    return R.cache_inplace(block.name_hint, k, ch.choice(SCOPES))


def _reindex_cache(ch: Chooser, mod: IRModule, kind: str):
    """A reindex_cache_read or _write whose index map permutes the block's
    iteration variables that the buffer's indices use."""
    from ..rewrites.exprs import var_names

    blocks = [b for b in _blocks(_main(mod)) if (b.reads if kind == "read" else b.writes) and b.iter_vars]
    if not blocks:
        return None
    block = ch.choice(blocks)
    regions = block.reads if kind == "read" else block.writes
    k = ch.integer(0, len(regions) - 1)
    used = set()
    for r in regions[k].region:
        used |= var_names(r.min)
    touched = [iv.var for iv in block.iter_vars if iv.var.name in used]
    if not touched:
        return None
    params = tuple(iv.var for iv in block.iter_vars)
    index_map = (params, tuple(ch.shuffled(touched)))
    make = R.reindex_cache_read if kind == "read" else R.reindex_cache_write
    return make(block.name_hint, k, ch.choice(SCOPES), index_map)


def draw_reindex_cache_read(ch: Chooser, mod: IRModule):
    """A ``reindex_cache_read`` permuting the iteration variables of a read."""
    return _reindex_cache(ch, mod, "read")


def draw_reindex_cache_write(ch: Chooser, mod: IRModule):
    """A ``reindex_cache_write`` permuting the iteration variables of a write."""
    return _reindex_cache(ch, mod, "write")


def draw_cache_index(ch: Chooser, mod: IRModule):
    """A ``cache_index`` of a random block that stores something (now and
    then the root block, which has no scope to hold the buffers), with a
    threshold of 0 (TVM's default) more often than not; ``global`` in a
    thread-bound program, whose kernels would not see a ``shared`` or
    ``local`` buffer filled outside them."""
    from ..nodes import BufferStore, For, ForKind

    func = _main(mod)
    blocks = [b for b in _blocks(func) if any(isinstance(s, BufferStore) for s in stmt_nodes(b.body))]
    if not blocks:
        return None
    threaded = any(isinstance(s, For) and s.kind is ForKind.THREAD_BINDING for s in stmt_nodes(func, skip_init=True))
    scope = "global" if threaded else ch.choice(SCOPES)
    thresh = ch.weighted([(0, 6), (1, 1), (2, 2), (3, 1), (4, 1)])
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    # a block whose indices compute something gives cache_index something to do
    busy = [b for b in blocks if _computes_indices(b)]
    if root is not None and ch.chance(5):
        block = root
    else:
        block = ch.choice(busy) if busy and ch.chance(80) else ch.choice(blocks)
    return R.cache_index(block.name_hint, scope, thresh)


def _computes_indices(block: Block) -> bool:
    """Whether an index of a load or store in the block is more than a
    variable or a constant."""
    from ..analysis.traversal import walk
    from ..nodes import BufferLoad, BufferStore, IntImm, Var

    return any(isinstance(n, (BufferLoad, BufferStore)) and any(not isinstance(i, (Var, IntImm)) for i in n.indices)
               for n in walk(block.body))


def _draw_at(ch: Chooser, mod: IRModule, kind: str):
    """A ``read_at`` or ``write_at`` (``kind``) of one read or write buffer
    of a random block, at a loop above it (now and then any loop of the
    function, which the primitive refuses unless the block is under it).

    In a thread-bound program write_at takes a scope its threads do not
    share (``global``, ``local``): a ``shared`` copy back spans the
    threads, each copying back what the others wrote, which needs the
    barrier lowering places (the un-lowered GPU meaning takes barriers as
    written, and reports the race)."""
    from ..analysis.traversal import ancestors
    from ..nodes import For, ForKind

    func = _main(mod)
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    candidates = []
    every_loop = []
    for path, s in walk_stmts(func, skip_init=True):
        if isinstance(s, For):
            every_loop.append(s.loop_var.name)
        if isinstance(s, Block) and s is not root and (s.reads if kind == "read" else s.writes):
            loops = [n.loop_var.name for _, n in ancestors(func, path) if isinstance(n, For)]
            if loops:
                candidates.append((s, loops))
    if not candidates:
        return None
    block, loops = ch.choice(candidates)
    loop = ch.choice(every_loop) if ch.chance(10) else ch.choice(loops)
    arg = _buffer_arg(ch, block, block.reads if kind == "read" else block.writes)
    threaded = any(isinstance(s, For) and s.kind is ForKind.THREAD_BINDING for s in stmt_nodes(func))
    scopes = ("global", "local") if threaded and kind == "write" else SCOPES
    make = R.read_at if kind == "read" else R.write_at
    return make(loop, block.name_hint, arg, ch.choice(scopes))


def draw_read_at(ch: Chooser, mod: IRModule):
    """A ``read_at`` of one read buffer of a random block, at a loop above it."""
    return _draw_at(ch, mod, "read")


def draw_write_at(ch: Chooser, mod: IRModule):
    """A ``write_at`` of one write buffer of a random block, at a loop above it."""
    return _draw_at(ch, mod, "write")


DRAWERS: dict[str, Callable[[Chooser, IRModule], R.Rewrite | None]] = {
    "cache_read": draw_cache_read,
    "cache_write": draw_cache_write,
    "reindex": draw_reindex,
    "cache_inplace": draw_cache_inplace,
    "reindex_cache_read": draw_reindex_cache_read,
    "reindex_cache_write": draw_reindex_cache_write,
    "cache_index": draw_cache_index,
    "read_at": draw_read_at,
    "write_at": draw_write_at,
}

def draw_cache_chain(ch: Chooser, mod: IRModule, steps: int = 3, scopes: tuple | None = None) -> R.Pipeline:
    """Up to ``steps`` caching primitives that apply, each drawn on the
    module the ones before made (a cache of a cache; a cache of a buffer
    that a block and the fill of its cache both write), sometimes after a
    ``blockize`` of a block's innermost loop, so that a cache of the outer
    block may name the inner one as its consumer. A draw that does not
    apply is passed over. With ``scopes``, a cache drawn in another scope
    is made in the first of them (``("global",)`` for a program with
    threads, whose caches outside a kernel a kernel would not see)."""
    records: list = []
    cur = mod
    if ch.chance(30):
        record = _draw_blockize(ch, cur)
        if record is not None and not record.violations(cur):
            records.append(record)
            cur = record(cur)
    for _ in range(steps):
        for primitive in ch.shuffled(["cache_read", "cache_write", "cache_read", "cache_write", "cache_inplace",
                                      "reindex"]):
            record = DRAWERS[primitive](ch, cur)
            if record is not None and scopes and getattr(record, "storage_scope", scopes[0]) not in scopes:
                record = attrs.evolve(record, storage_scope=scopes[0])
            if record is not None and not record.violations(cur):
                records.append(record)
                cur = record(cur)
                break
    return R.Pipeline(records)


#: the dtypes :func:`draw_partitioned_tiles` draws its matmul in
TILE_DTYPES = ("float32", "int32", "float64", "int8", "float16")


@attrs.frozen
class PartitionedTiles:
    """A matmul ``C[m, n] = sum_k A[m, k] * B[k, n]`` of ``dtype`` whose rows
    are split into tiles of ``rows`` that need not divide them (a guard
    then cuts the last tile), the tile loop partitioned at ``cut``, and each
    part given a ``local`` register tile: ``cache_write`` of the part's
    block, its copy back moved by ``reverse_compute_at`` under the part's
    tile loop. With ``block_rows``, the rows are first split into blocks of
    that many under the panels of ``cols`` columns (``ib, j0, i0, k, i1,
    j1``), and the tiles are those of a block; without, the tile loop is
    outermost and each part runs over the panels (``i0, j0, k, i1, j1``),
    its tile taken under the panel loop. TVM schedules all of these."""

    m: int
    n: int
    k: int
    dtype: str
    rows: int
    cols: int
    block_rows: int | None
    cut: int

    def program(self) -> IRModule:
        """The plain matmul."""
        from ..script import from_source

        source = f"""
@T.prim_func
def main(A: T.Buffer(({self.m}, {self.k}), "{self.dtype}"), B: T.Buffer(({self.k}, {self.n}), "{self.dtype}"),
         C: T.Buffer(({self.m}, {self.n}), "{self.dtype}")):
    for i, j, k in T.grid({self.m}, {self.n}, {self.k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.{self.dtype}(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
        return IRModule({"main": from_source(source)})

    def schedule(self):
        """The schedule on :meth:`program` (a ScheduleError where a step is refused)."""
        from ..schedule import Schedule

        sch = Schedule(self.program())
        i, j, k = sch.get_loops("C")
        j0, j1 = sch.split(j, [None, self.cols])
        if self.block_rows:
            ib, ii = sch.split(i, [None, self.block_rows])
            i0, i1 = sch.split(ii, [None, self.rows])
            sch.reorder(ib, j0, i0, k, i1, j1)
        else:
            i0, i1 = sch.split(i, [None, self.rows])
            sch.reorder(i0, j0, k, i1, j1)
        for part in sch.loop_partition(i0, [self.cut]):
            block = sch.get_child_blocks(part)[0]
            tile = sch.get_loops(block)[-4]
            sch.reverse_compute_at(sch.cache_write(block, 0, "local"), tile)
        return sch


def draw_partitioned_tiles(ch: Chooser) -> PartitionedTiles:
    """A :class:`PartitionedTiles` of small sizes: tiles of 2 to 5 rows,
    blocks of rows or none (dividing the rows or not), the cut anywhere
    between the first and the last tile of a block (so the guard's tile is
    in the last part, alone or not)."""
    rows = ch.integer(2, 5)
    block_rows = ch.choice([None, ch.integer(rows + 1, 3 * rows + 2)])
    inner = block_rows or ch.integer(rows + 1, 4 * rows)
    tiles = -(-inner // rows)
    # blocks of rows that need not divide the rows either: the last block's
    # tiles are then cut by the rows' guard as well as the block's
    m = inner * ch.integer(1, 3) - ch.integer(0, inner - 1) if block_rows else inner
    cols = ch.integer(1, 4)
    return PartitionedTiles(m=m, n=cols * ch.integer(1, 3), k=ch.integer(1, 5), dtype=ch.choice(TILE_DTYPES),
                            rows=rows, cols=cols, block_rows=block_rows, cut=ch.integer(1, tiles - 1))


def _draw_blockize(ch: Chooser, mod: IRModule):
    """A ``blockize`` of the innermost loop of a random block, or None."""
    from ..analysis.traversal import walk
    from ..nodes import For

    func = _main(mod)
    names = []
    for node in walk(func.body):
        if isinstance(node, For) and isinstance(node.body, BlockRealize):
            names.append(node.loop_var.name)
    return R.blockize(ch.choice(names)) if names else None


__all__ = ["DRAWERS", "SCOPES", "TILE_DTYPES", "PartitionedTiles", "draw_partitioned_tiles", "draw_cache_chain", "draw_cache_read", "draw_cache_write", "draw_reindex", "draw_cache_inplace",
           "draw_reindex_cache_read", "draw_reindex_cache_write", "draw_cache_index", "draw_read_at",
           "draw_write_at"]
