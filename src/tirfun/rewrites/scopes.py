"""Storage scopes as TVM's ``StorageScope::Create`` reads them: one check
for every primitive that takes a ``storage_scope`` (set_scope, cache_read,
cache_write, cache_inplace, reindex_cache_read, reindex_cache_write)."""

from __future__ import annotations

from ..analysis.arith.terms import int_value
from ..analysis.threads import launch_of
from ..analysis.traversal import ancestors, get_at, walk
from ..analysis.arith.simplify import simplify_expr
from ..nodes import Block, BlockRealize, BufferLoad, For, IterVarType
from .base import Checks
from .errors import InvalidStorageScopeError, SharedScopeUnderThreadError
from .exprs import substitute_expr, var_names

#: a scope is one of these ranks followed by any tag ("shared.dyn",
#: "global.texture"); the empty string means "global"
STORAGE_RANKS = ("global", "shared", "warp", "local", "wmma.matrix_a", "wmma.matrix_b",
                 "wmma.accumulator", "texture", "amx.tmm", "m16n8k8.matrixA", "m16n8k8.matrixB",
                 "m16n8k8.matrixC", "metal.simdgroup")


def valid_scope(scope) -> bool:
    """Whether ``scope`` is a storage scope TVM accepts."""
    return isinstance(scope, str) and (not scope or scope.startswith(STORAGE_RANKS))


def check_storage_scope(chk: Checks, scope, subject: str = "argument storage_scope") -> str:
    """The storage scope if TVM accepts it (``""`` is ``"global"``); stops
    with InvalidStorageScopeError naming ``subject`` otherwise."""
    if not valid_scope(scope):
        chk.stop(InvalidStorageScopeError, subject,
                 f"the storage scope {scope!r} is invalid; expected one of {', '.join(STORAGE_RANKS)}, "
                 "optionally followed by a tag (\"shared.dyn\")")
    return scope or "global"


def _through_views(blocks, buffer, indices: list) -> list:
    """``indices`` into ``buffer`` as indices into the buffer it views,
    through the match buffers of ``blocks`` (innermost first), as far as
    they go: a view's index ``k`` is its region's start plus ``k``, the
    view's dimensions aligned with the region's last ones."""
    for block in blocks:
        for m in block.match_buffers:
            if m.buffer != buffer:
                continue
            region = m.source.region
            lead = len(region) - len(indices)
            if lead < 0:
                return indices
            indices = [r.min for r in region[:lead]] + [r.min + i for r, i in zip(region[lead:], indices)]
            buffer = m.source.buffer
    return indices


def _threads_around(chain, tags) -> tuple[dict, dict]:
    """The statements of ``chain`` (``(path, statement)``, outermost first)
    that bind a thread axis whose tag starts with one of ``tags``, to more
    than one thread: name -> (statement, tag); and the constant ranges of
    its loops, Var -> (first, last), for the simplifier."""
    threads, env = {}, {}
    for _, stmt in chain:
        if isinstance(stmt, For):
            lo, ext = int_value(stmt.min), int_value(stmt.extent)
            if lo is not None and ext is not None and ext > 0:
                env[stmt.loop_var] = (lo, lo + ext - 1)
        launch = launch_of(stmt)
        if launch is not None and launch[0].startswith(tags) and int_value(launch[2]) != 1:
            threads[stmt.loop_var.name if isinstance(stmt, For) else stmt.node.var.name] = (stmt, launch[0])
    return threads, env


def _at_thread_loops(chain, exprs) -> list:
    """``exprs`` read at the loops of ``chain``: the variables of each block
    in it replaced by their bindings, from the innermost block out."""
    exprs = list(exprs)
    for _, stmt in reversed(chain):
        if isinstance(stmt, BlockRealize) and stmt.block.iter_vars:
            mapping = {iv.var: v for iv, v in zip(stmt.block.iter_vars, stmt.iter_values)}
            exprs = [substitute_expr(e, mapping) for e in exprs]
    return exprs


def check_shared_allocation(chk: Checks, subject: str, func, block_path, scope: str, what: str,
                            places, node, viewed=None) -> None:
    """A buffer of a ``shared`` scope allocated by the block at
    ``block_path`` (of ``func``) is one buffer for a whole thread block.
    Under a loop bound to ``threadIdx`` every thread runs that block; where
    the element of the original buffer that a cache element stands for
    (``places``: index expressions read at the block) varies with the
    thread, threads would put different values in the one element, or read
    one another's: a data race, which TVM builds as it is. Stops with
    SharedScopeUnderThreadError naming ``what`` and the binding. A place
    that does not vary with the thread (every thread copies the same
    elements, with the same values) is allowed. ``viewed``: the buffer
    the places index, where it may be a match buffer of the blocks around
    (a view whose region moves with the thread); a value the places load
    through such a view is read through it the same way."""
    if not scope.startswith("shared"):
        return
    chain = ancestors(func, block_path)
    own = get_at(func, block_path)
    if isinstance(own, BlockRealize):
        chain.append((block_path, own))
    blocks = [own if isinstance(own, Block) else own.block] + \
        [stmt.block for _, stmt in reversed(chain) if isinstance(stmt, BlockRealize)]
    places = list(places)
    if viewed is not None:
        places = _through_views(blocks, viewed, places)
    # a value loaded through a view moves with the view's region too
    views = {m.buffer for b in blocks for m in b.match_buffers}
    if views:
        loads = [n for e in places for n in walk(e) if isinstance(n, BufferLoad) and n.buffer in views]
        places += [i for n in loads for i in _through_views(blocks, n.buffer, list(n.indices))]
    threads, env = _threads_around(chain, ("threadIdx",))
    if not threads:
        return
    exprs = _at_thread_loops(chain, places)
    for e in exprs:
        varying = sorted(var_names(simplify_expr(e, env)) & threads.keys())
        if varying:
            stmt, tag = threads[varying[0]]
            owner = (own if isinstance(own, Block) else own.block).name_hint
            where = f"loop {stmt.loop_var.name!r}" if isinstance(stmt, For) else "a launched thread"
            chk.stop(SharedScopeUnderThreadError, subject,
                     f"{what} would be a {scope!r} buffer allocated in block {owner!r}, which every thread of "
                     f"{where} (bound to {tag}) runs; each thread would store its own values in the same "
                     "elements of that one buffer (a data race); allocate it above the thread loops, or use "
                     "the scope \"local\"", node)


def newly_shared_tags(old: str, new: str) -> tuple[str, ...]:
    """The thread axes whose threads held their own copies of a buffer in
    scope ``old`` and share one in scope ``new``: threads of a block share
    ``shared`` storage, and every thread ``global`` storage."""
    old, new = old or "global", new or "global"
    if old.startswith("local"):
        return ("threadIdx", "blockIdx") if new.startswith("global") else \
            ("threadIdx",) if new.startswith("shared") else ()
    if old.startswith("shared") and new.startswith("global"):
        return ("blockIdx",)
    return ()


def check_per_thread_writes(chk: Checks, subject: str, func, writers, buffer, old: str, new: str,
                            what: str, indices=None) -> None:
    """A buffer each thread held as its own copy in scope ``old`` (a
    ``local`` buffer, or ``shared`` for the threads of different blocks),
    written in scope ``new`` by the blocks at ``writers`` (paths of their
    BlockRealizes in ``func``) that threads share: where a block runs in
    several threads that write the same elements of it (no index it writes
    varies with their thread), each would store into the one copy they now
    share, a data race. A threadIdx axis that feeds a reduction variable of
    the block is a reduction across those threads, combined as TVM's
    all-reduce does, and allowed into ``shared`` storage (lowering places
    the barrier between the write-back and the other threads' reads), not
    into ``global``. ``indices`` (expressions of the blocks'
    iteration variables) are where the blocks write, where not the regions
    of ``buffer`` they declare. Stops with SharedScopeUnderThreadError
    naming ``what``."""
    tags = newly_shared_tags(old, new)
    if not tags:
        return
    for path in writers:
        realize = get_at(func, path)
        chain = ancestors(func, path)
        threads, env = _threads_around(chain, tags)
        if not threads:
            continue
        block = realize.block
        reducing = set()
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type is IterVarType.CommReduce:
                reducing |= var_names(value)
        exprs = list(indices) if indices is not None else \
            [e for r in block.writes if r.buffer == buffer for rng in r.region for e in (rng.min, rng.extent)]
        exprs = _at_thread_loops(chain + [(path, realize)], exprs)
        names = set().union(set(), *[var_names(simplify_expr(e, env)) for e in exprs])
        same = sorted(n for n in threads if n not in names)
        if not same:
            continue
        stmt, tag = threads[same[0]]
        where = f"loop {stmt.loop_var.name!r}" if isinstance(stmt, For) else "a launched thread"
        if same[0] not in reducing:
            chk.stop(SharedScopeUnderThreadError, subject,
                     f"block {block.name_hint!r} writes the same elements of {what} in every thread of {where} "
                     f"(bound to {tag}); in scope {old!r} each thread had its own copy, in scope {new!r} they "
                     "would share one and store into it at once (a data race)", realize)
        if tag.startswith("threadIdx") and not (new or "global").startswith("shared"):
            chk.stop(SharedScopeUnderThreadError, subject,
                     f"block {block.name_hint!r} reduces across the threads of {where} (bound to {tag}) into "
                     f"{what}; in scope {old!r} the all-reduce left the result in each thread's copy, in scope "
                     f"{new!r} the first thread would write it back and the others read it with no barrier "
                     "between (barriers are placed for shared memory only)", realize)


def check_copy_per_thread(chk: Checks, subject: str, func, user_path, stage_path, old: str, new: str,
                          what: str) -> None:
    """A copy between a ``local`` buffer and a ``global`` cache of it,
    placed at ``stage_path`` (the block or loop whose body gets the copy
    stage), for the block at ``user_path`` that writes or reads it: where
    the block runs in several threads of a threadIdx loop that the stage is
    not under, every thread copies every thread's elements, with no barrier
    between one thread's access and another's (lowering places barriers
    for shared memory only): a data race. Stops with
    SharedScopeUnderThreadError naming ``what``."""
    if not ((old or "global").startswith("local") and (new or "global").startswith("global")):
        return
    above = {p for p, _ in ancestors(func, stage_path)} | {stage_path}
    for p, stmt in ancestors(func, user_path):
        launch = launch_of(stmt)
        if launch is None or not launch[0].startswith("threadIdx") or int_value(launch[2]) == 1 or p in above:
            continue
        name = stmt.loop_var.name if isinstance(stmt, For) else stmt.node.var.name
        chk.stop(SharedScopeUnderThreadError, subject,
                 f"{what} would be a 'global' buffer copied to or from the thread's 'local' one outside the "
                 f"threads of {name!r} (bound to {launch[0]}): every thread would copy every thread's "
                 "elements with no barrier between them (a data race)", get_at(func, user_path))


__all__ = ["STORAGE_RANKS", "check_copy_per_thread", "valid_scope", "check_storage_scope", "check_shared_allocation",
           "check_per_thread_writes", "newly_shared_tags"]
