"""Fresh names: one pure function of the names in use.

The rules are TVM's: a split of loop ``i`` makes ``i_0, i_1, ...``; a fuse
of ``i`` and ``j`` makes ``i_j_fused``; a merge makes ``i_m``; a new unit
loop is ``u``; other families suffix a name (``A_shared``, ``B_rf``,
``B_init``, ``B_o``). When the preferred name is taken, ``_1``, ``_2``, ... is
appended, as TVM's printer does when two variables share a name. No
counter, no ``id()`` and no set order takes part, so the same module and
schedule always give the same names.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable


def _sanitize(base: str) -> str:
    if base.isascii() and base.isidentifier():
        return base  # letters, digits and underscores, not led by a digit: nothing to replace
    out = "".join(c if (c == "_" or c.isalnum()) else "_" for c in base)
    if not out or out[0].isdigit():
        out = "v_" + out
    return out


def fresh_name(base: str, taken: Collection[str]) -> str:
    """``base`` if it is free, otherwise ``base_1``, ``base_2``, ...: the
    first that is not in ``taken``."""
    base = _sanitize(base)
    name = base
    k = 1
    while name in taken:
        name = f"{base}_{k}"
        k += 1
    return name


def fresh_names(bases: Iterable[str], taken: Collection[str]) -> list[str]:
    """A fresh name for each base, in order; each name chosen also counts as
    taken for the ones after it."""
    chosen: list[str] = []
    both = _Union(taken, set())
    for base in bases:
        name = fresh_name(base, both)
        chosen.append(name)
        both.extra.add(name)
    return chosen


class _Union:
    """``name in`` either collection."""

    __slots__ = ("taken", "extra")

    def __init__(self, taken, extra: set):
        self.taken = taken
        self.extra = extra

    def __contains__(self, name) -> bool:
        return name in self.taken or name in self.extra


def split_bases(loop_name: str, n: int) -> list[str]:
    """TVM's names for the loops a split makes: ``i_0, i_1, ...``."""
    return [f"{loop_name}_{k}" for k in range(n)]


def fuse_base(loop_names: Iterable[str]) -> str:
    """TVM's name for a fused loop: the names joined by ``_`` then ``_fused``."""
    return "_".join(loop_names) + "_fused"


def merge_base(loop_name: str) -> str:
    """TVM's name for a merged loop: ``i_m``."""
    return f"{loop_name}_m"


UNIT_LOOP_BASE = "u"


def suffixed(name: str, suffix: str) -> str:
    """TVM's derived names for the other primitive families: a cache buffer
    ``A_shared`` (suffix the scope), an rfactor block ``B_rf``, an init block
    ``B_init``, an outer block ``B_o``."""
    return f"{name}_{suffix}"


__all__ = ["fresh_name", "fresh_names", "split_bases", "fuse_base", "merge_base", "UNIT_LOOP_BASE",
           "suffixed"]
