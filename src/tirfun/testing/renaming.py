"""Consistent renaming of the names a PrimFunc binds.

Structural equality compares functions modulo such a renaming, so
``rename_bound`` is the other half of its property test::

    >>> from tirfun.testing.renaming import rename_bound
    >>> g = rename_bound(f, {"i": "row", "A": "X"})        # doctest: +SKIP
    >>> h = rename_bound(f, 7)   # a random permutation, fixed by the seed  # doctest: +SKIP
    >>> structural_equal(f, h)                             # doctest: +SKIP
    True

Bound names are those of parameters, buffers (parameter buffers, allocated
and matched buffers, declared buffers), variables a parameter buffer's shape
introduces, loop variables, block iteration variables and let variables.
Block names are not bound names: they stay as they are.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


from ..analysis.traversal import rename, walk
from ..errors import NodeError
from ..nodes import (
    Allocate, Block, Buffer, DeclBuffer, For, IterVar, Let, LetStmt, PrimFunc, Var,
)


def bound_names(func: PrimFunc) -> tuple[str, ...]:
    """Every name ``func`` binds, sorted."""
    names: set[str] = set()

    def add_buffer(buffer: Buffer) -> None:
        names.add(buffer.name)
        if buffer.data is not None:
            names.add(buffer.data.name)

    for param in func.params:
        names.add(param.name)
    for buffer in func.buffer_map.values():
        add_buffer(buffer)
        for dim in list(buffer.shape) + list(buffer.strides):
            for node in walk(dim):
                if isinstance(node, Var):  # match_buffer defines the variables of a shape
                    names.add(node.name)
    for node in walk(func.body):
        if isinstance(node, For):
            names.add(node.loop_var.name)
        elif isinstance(node, IterVar):
            names.add(node.var.name)
        elif isinstance(node, (LetStmt, Let)):
            names.add(node.var.name)
        elif isinstance(node, Block):
            for buffer in node.alloc_buffers:
                add_buffer(buffer)
            for match in node.match_buffers:
                add_buffer(match.buffer)
        elif isinstance(node, DeclBuffer):
            add_buffer(node.buffer)
        elif isinstance(node, Allocate):
            names.add(node.buffer_var.name)
    return tuple(sorted(names))


#: valid identifiers that a printer or parser may already use for something
#: else: the script namespaces, Python builtins the printer writes, dtype
#: names, and names of the form deduplication produces
TRICKY_NAMES = ("T", "I", "range", "tir", "ir", "min", "max", "float32", "int32", "bool",
                "handle", "Buffer", "print", "main", "root", "i_1", "v_1", "A_1", "self")


def random_renaming(func: PrimFunc, seed: int, extra_names=()) -> dict[str, str]:
    """A random injective renaming of ``func``'s bound names, fixed by ``seed``.

    The new names are drawn from the old ones, as many fresh ones (``r0``,
    ``r1``...) and ``extra_names`` (say :data:`TRICKY_NAMES`), so names are
    often swapped between two bindings, the case a comparison by name gets
    wrong.
    """
    names = list(bound_names(func))
    taken = set(names)
    fresh, k = [], 0
    while len(fresh) < len(names):
        candidate = f"r{k}"
        k += 1
        if candidate not in taken:
            fresh.append(candidate)
    extra = [n for n in dict.fromkeys(extra_names) if n not in taken and n not in fresh]
    targets = random.Random(seed).sample(names + fresh + extra, len(names))
    return dict(zip(names, targets))


def rename_bound(func: PrimFunc, mapping_or_seed: "Mapping[str, str] | int") -> PrimFunc:
    """``func`` with its bound names renamed consistently.

    ``mapping_or_seed`` is a mapping from old to new names (names it leaves
    out stay) or an integer seed for :func:`random_renaming`. Raises
    :class:`NodeError` when the mapping names something that is not bound,
    gives an invalid identifier, or would give two bindings one name.
    """
    if isinstance(mapping_or_seed, bool) or not isinstance(mapping_or_seed, (int, Mapping)):
        raise NodeError(f"rename_bound takes a mapping of names or an integer seed, "
                        f"got {mapping_or_seed!r}")
    bound = bound_names(func)
    if isinstance(mapping_or_seed, int):
        mapping = random_renaming(func, mapping_or_seed)
    else:
        mapping = dict(mapping_or_seed)
        unknown = sorted(set(mapping) - set(bound))
        if unknown:
            raise NodeError(f"rename_bound: {', '.join(unknown)} "
                            f"{'is not a name' if len(unknown) == 1 else 'are not names'} "
                            f"the function binds")
    final = [mapping.get(name, name) for name in bound]
    if len(set(final)) != len(final):
        clashes = sorted({n for n in final if final.count(n) > 1})
        raise NodeError(f"rename_bound: the renaming gives two bindings the name "
                        f"{', '.join(clashes)}")

    return rename(func, mapping)


__all__ = ["TRICKY_NAMES", "bound_names", "random_renaming", "rename_bound"]
