"""Read-only queries over nodes: traversal, structural equality, the verifier,
and integer arithmetic (:mod:`tirfun.analysis.arith`).

Submodules are loaded on first use so that importing one does not load all.
"""

from __future__ import annotations

import importlib

from .traversal import (
    Path, Step, ancestors, blocks, find_block, find_loop, get_at, iter_children, loops,
    map_children, replace_at, stmt_children, transform, walk, walk_stmts,
)

_LAZY = {
    "structural_equal": "tirfun.analysis.equality",
    "assert_structural_equal": "tirfun.analysis.equality",
    "structural_hash": "tirfun.analysis.equality",
    "verify": "tirfun.analysis.verify",
    "estimate_flops": "tirfun.analysis.flops",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tirfun.analysis' has no attribute {name!r}")


__all__ = [
    "Path", "Step", "ancestors", "blocks", "find_block", "find_loop", "get_at", "iter_children",
    "loops", "map_children", "replace_at", "stmt_children", "transform", "walk", "walk_stmts",
    *_LAZY,
]
