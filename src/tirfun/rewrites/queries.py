"""Queries: find blocks and loops and ask how blocks relate.

Plain functions of a module (not records: they change nothing). A block
or loop argument may be a reference or a name; every failure raises a
ScheduleError subclass naming the query.
"""

from __future__ import annotations

import attrs

from ..analysis.traversal import ancestors
from ..nodes import Block, BlockRealize, For, IRModule
from .base import Checks, _Stop, as_module
from .checks import (
    child_blocks, describe, loops_above, resolve_block, resolve_block_or_loop, resolve_site, scope_path,
)
from .errors import NotSingleBlockError, UnknownFunctionError
from .refs import BlockRef, LoopRef, as_block_or_loop_ref, as_block_ref


def _run(primitive: str, mod, fn):
    mod = as_module(mod, primitive)
    chk = Checks(primitive)
    try:
        return fn(mod, chk)
    except _Stop:
        raise chk.errors[0] from None


def get_block(mod: IRModule, name: str, func_name: str | None = None) -> BlockRef:
    """The block named ``name`` in function ``func_name`` (default: ``main``
    or the only function)."""

    def q(mod, chk):
        if func_name is not None and not isinstance(func_name, str):
            chk.stop(UnknownFunctionError, f"function {func_name!r}", "a function is named by a string")
        ref = BlockRef(name, func_name)
        site = resolve_site(chk, mod, [ref])
        _refuse_repeated_name(chk, site, ref)
        resolve_block(chk, site, ref)
        return BlockRef(name, site.func_name)

    return _run("get_block", mod, q)


def _refuse_repeated_name(chk, site, ref: BlockRef) -> None:
    """A name the source gave several blocks is ambiguous, as in TVM, even
    though the first of them kept it: stop while two of its blocks remain."""
    renamed = site.func.renamed_blocks.get(ref.name) if isinstance(ref.name, str) else None
    if renamed is None:
        return
    left = [n for n in renamed if n in site.index.blocks]
    if len(left) > 1:
        chk.stop(NotSingleBlockError, describe(ref),
                 f"block name {ref.name!r} was repeated in the source of function "
                 f"{site.func_name!r} and renamed {', '.join(left)}; use one of those "
                 f"(the first kept {ref.name!r}: pass BlockRef({ref.name!r}) to a primitive)")


def get_loops(mod: IRModule, block) -> list[LoopRef]:
    """The loops above ``block`` up to its enclosing block, outermost first."""

    def q(mod, chk):
        ref = as_block_ref(block)
        site = resolve_site(chk, mod, [ref])
        path = resolve_block(chk, site, ref)
        # the loops above the block's BlockRealize
        return [LoopRef(loop.loop_var.name, site.func_name) for _, loop in loops_above(site, path[:-1])]

    return _run("get_loops", mod, q)


def get_child_blocks(mod: IRModule, block_or_loop) -> list[BlockRef]:
    """The blocks directly inside a block or loop (not those nested in them),
    in program order."""

    def q(mod, chk):
        ref = as_block_or_loop_ref(block_or_loop)
        site = resolve_site(chk, mod, [ref])
        path = resolve_block_or_loop(chk, site, ref)
        return [BlockRef(r.block.name_hint, site.func_name) for _, r in child_blocks(site.at(path), path)]

    return _run("get_child_blocks", mod, q)


def _scope_blocks(site, path) -> list[Block]:
    """The blocks of the scope the block at ``path`` is in, in program order."""
    scope = scope_path(site, path[:-1])
    if scope is not None:
        return [r.block for _, r in child_blocks(site.at(scope), scope)]
    body = site.func.body  # a function without a root block is its own scope
    if isinstance(body, BlockRealize):
        return [body.block]
    return [r.block for _, r in child_blocks(body, (("body", None),))]


def _dependences(blocks: list[Block]) -> list[tuple[Block, Block]]:
    """TVM's read-after-write and write-after-write edges, in creation order."""
    writers: dict = {}
    edges = []
    for block in blocks:
        for w in block.writes:
            writers.setdefault(w.buffer, []).append(block)
        for r in block.reads:
            edges.extend((src, block) for src in writers.get(r.buffer, []) if src is not block)
        for w in block.writes:
            edges.extend((src, block) for src in writers.get(w.buffer, []) if src is not block)
    return edges


def _dedup(blocks) -> list:
    out: list = []
    for b in blocks:
        if all(b is not o for o in out):
            out.append(b)
    return out


def get_producers(mod: IRModule, block) -> list[BlockRef]:
    """The blocks of the same scope that write what ``block`` reads or writes
    before it (TVM's RAW and WAW dependences)."""

    def q(mod, chk):
        ref = as_block_ref(block)
        site = resolve_site(chk, mod, [ref])
        path = resolve_block(chk, site, ref)
        target = site.at(path)
        srcs = [src for src, dst in _dependences(_scope_blocks(site, path)) if dst is target]
        return [BlockRef(b.name_hint, site.func_name) for b in _dedup(srcs)]

    return _run("get_producers", mod, q)


def get_consumers(mod: IRModule, block) -> list[BlockRef]:
    """The blocks of the same scope that read or overwrite what ``block``
    writes, after it (TVM's RAW and WAW dependences)."""

    def q(mod, chk):
        ref = as_block_ref(block)
        site = resolve_site(chk, mod, [ref])
        path = resolve_block(chk, site, ref)
        target = site.at(path)
        dsts = [dst for src, dst in _dependences(_scope_blocks(site, path)) if src is target]
        return [BlockRef(b.name_hint, site.func_name) for b in _dedup(dsts)]

    return _run("get_consumers", mod, q)


def get_output_blocks(mod: IRModule, scope_block) -> list[BlockRef]:
    """The blocks under ``scope_block`` (at any depth, in program order) that
    write a buffer their own enclosing block does not allocate: the blocks
    that produce what leaves their scope."""

    def q(mod, chk):
        ref = as_block_ref(scope_block)
        site = resolve_site(chk, mod, [ref])
        path = resolve_block(chk, site, ref)
        return [BlockRef(b.name_hint, site.func_name) for b in _outputs(site.at(path))]

    return _run("get_output_blocks", mod, q)


def _outputs(scope: Block):
    allocated = set(scope.alloc_buffers)
    for _, realize in child_blocks(scope, ()):
        block = realize.block
        if any(w.buffer not in allocated for w in block.writes):
            yield block
        yield from _outputs(block)


def get(mod: IRModule, ref) -> Block | For:
    """The Block or For a reference points at."""

    def q(mod, chk):
        r = as_block_or_loop_ref(ref)
        site = resolve_site(chk, mod, [r])
        return site.at(resolve_block_or_loop(chk, site, r))

    return _run("get", mod, q)


@attrs.frozen
class StmtSRef:
    """TVM's ``StmtSRef``: where a block or loop sits. ``stmt`` is the Block
    or For; ``parent`` the StmtSRef of the nearest enclosing block or loop
    (None for the root block, or for the outermost statement of a function
    without one); ``ref`` the reference that names it; ``func`` and ``path``
    the function and the path from the function.

    Unlike TVM's, a StmtSRef is a value taken from one module: after a
    rewrite, ask the schedule again.
    """

    stmt: Block | For
    parent: "StmtSRef | None"
    ref: BlockRef | LoopRef
    func: str
    path: tuple


def _ref_of(node, func: str):
    return BlockRef(node.name_hint, func) if isinstance(node, Block) else LoopRef(node.loop_var.name, func)


def get_sref(mod: IRModule, ref) -> StmtSRef:
    """The :class:`StmtSRef` of the block or loop ``ref`` points at."""

    def q(mod, chk):
        r = as_block_or_loop_ref(ref)
        site = resolve_site(chk, mod, [r])
        path = resolve_block_or_loop(chk, site, r)
        sref = None
        for p, node in [*ancestors(site.func, path), (path, site.at(path))]:
            if isinstance(node, (Block, For)):
                sref = StmtSRef(node, sref, _ref_of(node, site.func_name), site.func_name, p)
        return sref

    return _run("get_sref", mod, q)


__all__ = ["get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers",
           "get_output_blocks", "get", "get_sref", "StmtSRef"]
