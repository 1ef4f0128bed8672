"""Random ``tensorize`` steps for the block schedules, and tensor
intrinsics made from a program's own blocks.

A random program has no hardware intrinsic to match, so the intrinsic is
made from the block itself: :func:`intrin_of_block` writes what a block
computes as a description over windows of its buffers (each access less
the window's start), and an implementation that computes the same with
its loops unrolled and its names the function's own (which ``tensorize``
must rename apart). Tensorizing with it keeps the program's meaning bit
for bit, and exercises the comparison, the windows, the views and the
renaming on every shape of block the programs have.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.arith.iter_map import simplify_index
from ..analysis.traversal import stmt_nodes, transform, walk
from ..nodes import (
    Block, BlockRealize, Buffer, BufferLoad, BufferRegion, BufferStore, For, ForKind, IntImm, IRModule, PrimFunc,
    Range, Var,
)
from ..nodes.base import with_fields
from ..rewrites.exprs import cast as _cast
from ..tir.tensor_intrin import TensorIntrin, TensorIntrinError
from ._choices import Chooser


def _main(mod: IRModule) -> PrimFunc:
    return mod.functions["main"] if "main" in mod.functions else next(iter(mod.functions.values()))


def _find_realize(func: PrimFunc, name: str) -> BlockRealize | None:
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, BlockRealize) and s.block.name_hint == name:
            return s
    return None


def intrin_of_block(func: PrimFunc, block_name: str) -> TensorIntrin | None:
    """A tensor intrinsic computing what block ``block_name`` of ``func``
    computes, over windows of the buffers its regions name (None when a
    window is not of constant extent, or the body reads the block's own
    iteration variables other than through the windows)."""
    realize = _find_realize(func, block_name)
    if realize is None:
        return None
    block = realize.block
    reads = list(block.reads)
    if block.init is not None:
        read = {r.buffer for r in reads}
        reads = [w for w in block.writes if w.buffer not in read] + reads
    windows: dict[Buffer, tuple[Buffer, tuple]] = {}
    params, buffer_map = [], {}
    for region in list(block.writes) + reads:
        buf = region.buffer
        if buf in windows:
            continue
        if not all(isinstance(r.extent, IntImm) for r in region.region):
            return None
        k = len(windows)
        window = Buffer(f"W{k}", [r.extent.value for r in region.region], buf.dtype,
                        storage_scope=buf.storage_scope, offset_factor=1)
        windows[buf] = (window, tuple(r.min for r in region.region))
        handle = Var(f"w{k}", "handle")
        params.append(handle)
        buffer_map[handle] = window
    # every window must be the same region wherever the block names it
    for region in list(block.writes) + reads:
        if tuple(r.min for r in region.region) != windows[region.buffer][1]:
            return None

    def shifted(buf, indices):
        window, starts = windows[buf]
        return window, [simplify_index(i - _cast(s, i.dtype)) for i, s in zip(indices, starts)]

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer in windows:
            window, idx = shifted(n.buffer, n.indices)
            return with_fields(n, buffer=window, indices=idx)
        if isinstance(n, BufferStore) and n.buffer in windows:
            window, idx = shifted(n.buffer, n.indices)
            return with_fields(n, buffer=window, indices=idx)
        if isinstance(n, BufferRegion) and n.buffer in windows:
            window, starts = windows[n.buffer]
            ranges = [Range(simplify_index(r.min - _cast(s, r.min.dtype)), r.extent)
                      for r, s in zip(n.region, starts)]
            return BufferRegion(window, ranges)
        return n

    try:
        body = transform(block.body, post)
    except Exception:  # an access the windows cannot express: no intrinsic
        return None
    own = {iv.var for iv in block.iter_vars}
    if any(isinstance(n, Var) and n in own for n in walk(body)):
        return None  # the body reads the block's variables beyond the windows
    if any(isinstance(n, Buffer) and n not in {w for w, _ in windows.values()} and n in _outer_buffers(func)
           for n in walk(body)):
        return None  # it reads a buffer the block declares no region of
    full = [BufferRegion(w, [Range(IntImm("int32", 0), IntImm("int32", e.value)) for e in w.shape])
            for w, _ in windows.values()]
    by_buffer = {w.name: r for (w, _), r in zip(windows.values(), full)}
    desc_reads = [by_buffer[windows[r.buffer][0].name] for r in reads]
    desc_writes = [by_buffer[windows[w.buffer][0].name] for w in block.writes]

    def func_of(stmt, name):
        root = Block([], desc_reads, desc_writes, "root", stmt)
        return PrimFunc(params, BlockRealize([], IntImm("bool", 1), root), None, buffer_map,
                        {"global_symbol": name})

    unrolled = transform(body, lambda n: with_fields(n, kind=ForKind.UNROLLED)
                         if isinstance(n, For) and n.kind is ForKind.SERIAL and isinstance(n.extent, IntImm) else n)
    try:
        return TensorIntrin(func_of(body, f"{block_name}_desc"), func_of(unrolled, f"{block_name}_impl"))
    except TensorIntrinError:
        return None


def _outer_buffers(func: PrimFunc) -> set:
    """The buffers the function declares: parameters and allocations."""
    out = set(func.buffer_map.values())
    for s in stmt_nodes(func, skip_init=True):
        if isinstance(s, Block):
            out.update(s.alloc_buffers)
    return out


def draw_tensorize(ch: Chooser, mod: IRModule):
    """A ``tensorize`` of a loop with one block under it, with the intrinsic
    :func:`intrin_of_block` makes of the block blockize makes there; None
    where no loop allows it."""
    from .. import rewrites as R

    func = _main(mod)
    loops = [s.loop_var.name for s in stmt_nodes(func, skip_init=True) if isinstance(s, For)]
    for name in ch.shuffled(loops)[:6]:
        blockize = R.blockize(name, True)
        if blockize.violations(mod):
            continue
        made = blockize.run(mod)
        intrin = intrin_of_block(_main(made.mod), made.result.name)
        if intrin is None:
            continue
        record = R.tensorize(R.LoopRef(name), intrin)
        if not record.violations(mod):
            return record
    return None


DRAWERS: dict[str, Callable[[Chooser, IRModule], object]] = {
    "tensorize": draw_tensorize,
}

__all__ = ["DRAWERS", "draw_tensorize", "intrin_of_block"]
