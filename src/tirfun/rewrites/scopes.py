"""Storage scopes as TVM's ``StorageScope::Create`` reads them: one check
for every primitive that takes a ``storage_scope`` (set_scope, cache_read,
cache_write, cache_inplace, reindex_cache_read, reindex_cache_write)."""

from __future__ import annotations

from .base import Checks
from .errors import InvalidStorageScopeError

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


__all__ = ["STORAGE_RANKS", "valid_scope", "check_storage_scope"]
