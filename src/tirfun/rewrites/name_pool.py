"""The names a rewrite must avoid, without copying the function's.

A primitive that makes several fresh names needs the names in use plus
those it has chosen so far. Copying the index's names into a set costs one
step per name of the function; a :class:`NamePool` looks names up in the
index itself and keeps only the names chosen since, so choosing a name
costs the same in a function of one block and of a thousand.
"""

from __future__ import annotations

from collections.abc import Collection

from .names import fresh_name


class NamePool:
    """``name in pool``: a name of ``taken`` (any container, usually the
    index's ``names`` or ``blocks``) or one added since; :meth:`fresh`
    chooses a free name and adds it."""

    __slots__ = ("_taken", "_added")

    def __init__(self, taken: Collection[str]):
        self._taken = taken
        self._added: set[str] = set()

    def __contains__(self, name) -> bool:
        return name in self._added or name in self._taken

    def add(self, name: str) -> None:
        """Count ``name`` as taken from now on."""
        self._added.add(name)

    def fresh(self, base: str) -> str:
        """The first free name for ``base`` (:func:`fresh_name`), now taken."""
        name = fresh_name(base, self)
        self._added.add(name)
        return name


__all__ = ["NamePool"]
