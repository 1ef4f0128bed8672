"""Storage scopes as TVM's ``StorageScope::Create`` reads them: one check
for every primitive that takes a ``storage_scope`` (set_scope, cache_read,
cache_write, cache_inplace, reindex_cache_read, reindex_cache_write)."""

from __future__ import annotations

from ..analysis.arith.terms import int_value
from ..analysis.threads import launch_of
from ..analysis.traversal import ancestors, get_at
from ..analysis.arith.simplify import simplify_expr
from ..nodes import Block, BlockRealize, For
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


def check_shared_allocation(chk: Checks, subject: str, func, block_path, scope: str, what: str,
                            places, node) -> None:
    """A buffer of a ``shared`` scope allocated by the block at
    ``block_path`` (of ``func``) is one buffer for a whole thread block.
    Under a loop bound to ``threadIdx`` every thread runs that block; where
    the element of the original buffer that a cache element stands for
    (``places``: index expressions read at the block) varies with the
    thread, threads would put different values in the one element, or read
    one another's: a data race, which TVM builds as it is. Stops with
    SharedScopeUnderThreadError naming ``what`` and the binding. A place
    that does not vary with the thread (every thread copies the same
    elements, with the same values) is allowed."""
    if not scope.startswith("shared"):
        return
    chain = ancestors(func, block_path)
    own = get_at(func, block_path)
    if isinstance(own, BlockRealize):
        chain.append((block_path, own))
    threads, env = {}, {}
    for _, stmt in chain:
        if isinstance(stmt, For):
            lo, ext = int_value(stmt.min), int_value(stmt.extent)
            if lo is not None and ext is not None and ext > 0:
                env[stmt.loop_var] = (lo, lo + ext - 1)
        launch = launch_of(stmt)
        if launch is not None and launch[0].startswith("threadIdx") and int_value(launch[2]) != 1:
            threads[stmt.loop_var.name if isinstance(stmt, For) else stmt.node.var.name] = (stmt, launch[0])
    if not threads:
        return
    exprs = list(places)
    # read the places at the thread loops: each enclosing block's variables
    # are their bindings, from the innermost block out
    for _, stmt in reversed(chain):
        if isinstance(stmt, BlockRealize) and stmt.block.iter_vars:
            mapping = {iv.var: v for iv, v in zip(stmt.block.iter_vars, stmt.iter_values)}
            exprs = [substitute_expr(e, mapping) for e in exprs]
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


__all__ = ["STORAGE_RANKS", "valid_scope", "check_storage_scope", "check_shared_allocation"]
