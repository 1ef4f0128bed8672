"""Fresh names: the first spelling of a base name that a set of used names
leaves free, and every name a tree uses. The lowering passes, which copy
subtrees and must keep the names of a function unique, and the
virtual-thread injection (:mod:`.virtual_threads`) both draw on them."""

from __future__ import annotations

import re

from ..nodes import Block, Buffer, Node, Var
from .traversal import walk

_SUFFIX = re.compile(r"^(.*?)(?:_(\d+))?$")


def fresh_name(base: str, used: set[str]) -> str:
    """The first of ``base``, ``base_1``, ``base_2``... not in ``used``.

    A pure function of its arguments, so the same tree always gets the same
    names. A trailing ``_N`` of ``base`` is kept as part of the stem only when
    that spelling is free.
    """
    if base not in used:
        return base
    stem = _SUFFIX.match(base).group(1) or base
    k = 1
    while f"{stem}_{k}" in used:
        k += 1
    return f"{stem}_{k}"


def bound_names(root: Node) -> set[str]:
    """Every variable and buffer name that appears anywhere under ``root``."""
    names: set[str] = set()
    for n in walk(root):
        if isinstance(n, (Var, Buffer)):
            names.add(n.name)
        elif isinstance(n, Block):
            names.add(n.name_hint)
    return names


__all__ = ["fresh_name", "bound_names"]
