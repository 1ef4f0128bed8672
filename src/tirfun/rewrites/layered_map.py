"""A persistent mapping for the name index: a shared base and a small layer
of changes.

Every primitive reads a function's name index (a loop or block name to its
path, a name to its use count) and derives the next function's index by a
handful of changes. A ``pyrsistent.PMap`` makes each read and each change a
chain of Python calls; here a read is at most two dictionary look-ups and a
change copies only the layer of changes. The layer is folded into a new base
once it holds more than about the square root of the base's size, so a
change costs O(sqrt n) copies amortised, and a read O(1), whatever the
number of names.

Both the mapping and its evolver have the parts of ``PMap``'s interface the
rewrites use (``set``, ``remove``, ``discard``, ``update``, ``evolver``,
``persistent``), so code written against a ``PMap`` keeps working.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

#: a name deleted in the layer, present in the base
_GONE = object()
_ABSENT = object()
#: the smallest layer worth folding into the base
_MIN_LAYER = 32


class LayeredMap(Mapping):
    """An immutable mapping: ``base`` (never changed once shared) overlaid
    with ``layer`` (name -> value, or a mark that the name is deleted)."""

    __slots__ = ("_base", "_layer", "_size", "_hash")

    def __init__(self, items: Mapping | Iterable = ()):
        self._base = dict(items)
        self._layer: dict = {}
        self._size = len(self._base)
        self._hash = None

    @classmethod
    def _make(cls, base: dict, layer: dict, size: int) -> "LayeredMap":
        out = object.__new__(cls)
        if len(layer) > _MIN_LAYER and len(layer) > int(len(base) ** 0.5):
            base = dict(base)
            for k, v in layer.items():
                if v is _GONE:
                    del base[k]
                else:
                    base[k] = v
            layer = {}
        out._base, out._layer, out._size, out._hash = base, layer, size, None
        return out

    # -- reading ---------------------------------------------------------------------
    def __getitem__(self, key):
        value = self._layer.get(key, _ABSENT)
        if value is _ABSENT:
            return self._base[key]
        if value is _GONE:
            raise KeyError(key)
        return value

    def get(self, key, default=None):
        value = self._layer.get(key, _ABSENT)
        if value is _ABSENT:
            return self._base.get(key, default)
        return default if value is _GONE else value

    def __contains__(self, key) -> bool:
        value = self._layer.get(key, _ABSENT)
        if value is _ABSENT:
            return key in self._base
        return value is not _GONE

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        layer = self._layer
        for key in self._base:
            if layer.get(key, _ABSENT) is not _GONE:
                yield key
        for key, value in layer.items():
            if value is not _GONE and key not in self._base:
                yield key

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"LayeredMap({dict(self.items())!r})"

    # -- deriving ----------------------------------------------------------------------
    def set(self, key, value) -> "LayeredMap":
        """A copy with ``key`` mapped to ``value``."""
        return self.evolver().set(key, value).persistent()

    def remove(self, key) -> "LayeredMap":
        """A copy without ``key`` (KeyError when it is absent)."""
        return self.evolver().remove(key).persistent()

    def discard(self, key) -> "LayeredMap":
        """A copy without ``key``, or this map when it is absent."""
        return self.remove(key) if key in self else self

    def update(self, *maps: Mapping) -> "LayeredMap":
        """A copy with every entry of ``maps`` set, later ones winning."""
        e = self.evolver()
        for m in maps:
            for k, v in m.items():
                e.set(k, v)
        return e.persistent()

    def recounted(self, delta: Mapping) -> "LayeredMap":
        """This map of counts with ``delta`` (key -> change, each key once)
        added: a count that drops to zero or below is removed. What setting
        and removing each key through an evolver gives, in one loop of
        dictionary look-ups (the name index recounts its names on every
        primitive); this map itself when nothing changes."""
        layer, base = self._layer, self._base
        size = self._size
        new = None  # the new layer, copied on the first change
        for key, d in delta.items():
            if not d:
                continue
            held = layer.get(key, _ABSENT)
            if held is _ABSENT:
                held = base.get(key, _ABSENT)
            if held is _ABSENT or held is _GONE:
                if d > 0:  # a new key
                    size += 1
                    if new is None:
                        new = dict(layer)
                    new[key] = d
            elif held + d > 0:
                if new is None:
                    new = dict(layer)
                new[key] = held + d
            elif held:
                size -= 1
                if new is None:
                    new = dict(layer)
                if key in base:
                    new[key] = _GONE
                else:
                    del new[key]  # added in the layer, deleted again: no trace left
        if new is None:
            return self
        return LayeredMap._make(base, new, size)

    def changed(self, sets: Mapping, removes: Iterable = ()) -> "LayeredMap":
        """This map with the keys of ``removes`` deleted (KeyError when one
        is absent) and then the entries of ``sets`` set: what an evolver's
        ``remove`` and ``set`` calls, in that order, give, in one loop of
        dictionary look-ups (the name index derives its tables so on every
        primitive); this map itself when there is nothing to change."""
        if not sets and not removes:
            return self
        layer, base = self._layer, self._base
        size = self._size
        new = dict(layer)
        for key in removes:
            value = new.get(key, _ABSENT)
            if value is _GONE or (value is _ABSENT and key not in base):
                raise KeyError(key)
            size -= 1
            if key in base:
                new[key] = _GONE
            else:
                del new[key]  # added in the layer, deleted again: no trace left
        for key, value in sets.items():
            held = new.get(key, _ABSENT)
            if held is _GONE or (held is _ABSENT and key not in base):
                size += 1
            new[key] = value
        return LayeredMap._make(base, new, size)

    def evolver(self) -> "LayeredMapEvolver":
        """A mutable view collecting changes; ``persistent()`` makes the new map."""
        return LayeredMapEvolver(self)


class LayeredMapEvolver:
    """Changes to a :class:`LayeredMap`, applied by :meth:`persistent`."""

    __slots__ = ("_origin", "_changes", "_size")

    def __init__(self, origin: LayeredMap):
        self._origin = origin
        self._changes: dict = {}
        self._size = origin._size

    def _lookup(self, key):
        # the look-ups of LayeredMap.get written out: the index's derivation
        # asks an evolver a dozen times per primitive
        value = self._changes.get(key, _ABSENT)
        if value is _ABSENT:
            origin = self._origin
            value = origin._layer.get(key, _ABSENT)
            if value is _ABSENT:
                return origin._base.get(key, _ABSENT)
        return _ABSENT if value is _GONE else value

    def __getitem__(self, key):
        value = self._lookup(key)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __contains__(self, key) -> bool:
        return self._lookup(key) is not _ABSENT

    def __len__(self) -> int:
        return self._size

    def set(self, key, value) -> "LayeredMapEvolver":
        """Map ``key`` to ``value``."""
        if self._lookup(key) is _ABSENT:
            self._size += 1
        self._changes[key] = value
        return self

    def remove(self, key) -> "LayeredMapEvolver":
        """Delete ``key`` (KeyError when it is absent)."""
        if self._lookup(key) is _ABSENT:
            raise KeyError(key)
        self._size -= 1
        self._changes[key] = _GONE
        return self

    __setitem__ = set

    def __delitem__(self, key) -> None:
        self.remove(key)

    def is_dirty(self) -> bool:
        """Whether anything was changed."""
        return bool(self._changes)

    def persistent(self) -> LayeredMap:
        """The map with every change applied."""
        origin = self._origin
        if not self._changes:
            return origin
        base = origin._base
        layer = dict(origin._layer)
        for key, value in self._changes.items():
            if value is _GONE and key not in base:
                layer.pop(key, None)  # added in the layer, deleted again: no trace left
            else:
                layer[key] = value
        self._changes = {}
        self._origin = LayeredMap._make(base, layer, self._size)
        return self._origin


__all__ = ["LayeredMap", "LayeredMapEvolver"]
