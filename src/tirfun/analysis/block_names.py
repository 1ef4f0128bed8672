"""Unique block names, made as TVMScript is read.

Block names are identities inside a function, but TVM accepts two blocks
with one name (and any number of anonymous ``T.block()``, whose name is
TVM's default, the empty string). The parser and ``te`` keep both views
by renaming a repeat deterministically, in TVM's style: the first ``B``
stays ``B``, the next becomes ``B_1``, then ``B_2``, skipping any name the
function already uses. The function records the renaming
(``PrimFunc.renamed_blocks``), so that ``get_block("B")`` is as ambiguous
as in TVM and raises NotSingleBlockError naming ``B, B_1``, while
``get_block("B_1")`` finds the second block.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from ..nodes import PrimFunc
from .traversal import blocks, get_at, replace_at


def unique_block_name(name: str, taken: Collection[str]) -> str:
    """``name`` if it is not in ``taken``, else ``name_1``, ``name_2``, ...:
    the first that is free. Unlike variable names, a block name is any
    string, so nothing is sanitised (an anonymous block's repeat is ``_1``)."""
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def uniquify_block_names(func: PrimFunc) -> PrimFunc:
    """``func`` with every repeated block name replaced by a fresh one.

    Blocks are taken in pre-order; the first block of a name keeps it, and a
    fresh name avoids every name written in the function, and the renaming
    is recorded in ``renamed_blocks``. Returns ``func`` itself when the
    names are already unique.
    """
    found = list(blocks(func.body))
    written = {b.name_hint for _, b in found}
    if len(written) == len(found):
        return func
    seen: set[str] = set()
    taken = set(written)
    renames = []
    for path, block in found:
        name = block.name_hint
        if name in seen:
            fresh = unique_block_name(name, taken)
            taken.add(fresh)
            renames.append((path, fresh))
        seen.add(name)
    body = func.body
    recorded = {k: list(v) for k, v in func.renamed_blocks.items()}
    for path, fresh in renames:
        name = get_at(body, path).name_hint
        recorded.setdefault(name, [name]).append(fresh)
    # deepest first: a later path in pre-order is never an ancestor of an earlier one
    for path, fresh in reversed(renames):
        body = replace_at(body, path, attrs.evolve(get_at(body, path), name_hint=fresh))
    return attrs.evolve(func, body=body, renamed_blocks=recorded)


__all__ = ["unique_block_name", "uniquify_block_names"]
