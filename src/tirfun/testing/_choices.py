"""Sources of choices for the random program builders.

A builder asks a :class:`Chooser` for bounded integers and derives every other
decision from them, so one builder serves two masters:

* :class:`BytesChooser` reads them from a byte string that hypothesis draws
  in one go, and :class:`DrawChooser` draws each from hypothesis; either way
  hypothesis can shrink a failing program (every helper here shrinks toward
  the first option and toward "no", that is toward smaller programs);
* :class:`RandomChooser` takes them from a seeded ``random.Random``, for
  users without hypothesis and for reproducible fuzzing.

:class:`RecordingChooser` and :class:`ReplayChooser` record a sequence of
choices and play it back, which is how the tests show that the same choices
always build the same program.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from ..errors import TirfunError

T = TypeVar("T")


class Chooser:
    """Base class: subclasses provide :meth:`integer`, the rest derives from it."""

    def integer(self, lo: int, hi: int) -> int:  # pragma: no cover - abstract
        """An integer in ``[lo, hi]``; the smallest is the simplest choice."""
        raise NotImplementedError

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``; the first is the simplest."""
        if not options:
            raise TirfunError("a random program builder asked to choose from nothing")
        return options[self.integer(0, len(options) - 1)]

    def chance(self, percent: int) -> bool:
        """True with probability ``percent``/100 under random choices; shrinks to False."""
        if percent <= 0:
            return False
        if percent >= 100:
            return True
        return self.integer(0, 99) >= 100 - percent

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        """One of the ``(value, weight)`` pairs' values, by weight; the first is simplest."""
        live = [(value, weight) for value, weight in options if weight > 0]
        if not live:
            raise TirfunError("a random program builder asked to choose from nothing")
        total = sum(weight for _, weight in live)
        point = self.integer(0, total - 1)
        for value, weight in live:
            if point < weight:
                return value
            point -= weight
        raise AssertionError("unreachable: the point lies below the total weight")

    def subset(self, options: Sequence[T], percent: int) -> list[T]:
        """Each of ``options`` kept with probability ``percent``/100, in order."""
        return [o for o in options if self.chance(percent)]

    def shuffled(self, options: Sequence[T]) -> list[T]:
        """A permutation of ``options`` (the identity is the simplest)."""
        rest = list(options)
        out = []
        while rest:
            out.append(rest.pop(self.integer(0, len(rest) - 1)))
        return out


class DrawChooser(Chooser):
    """Choices drawn through hypothesis, so failing programs shrink."""

    def __init__(self, draw: Callable):
        from hypothesis import strategies as st  # hypothesis is a test dependency only

        self._draw = draw
        self._integers = st.integers

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        return self._draw(self._integers(lo, hi))


class BytesChooser(Chooser):
    """Choices read from a byte string, most significant byte first.

    Drawing one byte string per program is much cheaper than one hypothesis
    draw per choice, and hypothesis still shrinks it well: zero bytes give
    the simplest choices, and a stream that runs out gives only those.
    """

    def __init__(self, data: bytes):
        self._data = data
        self._position = 0

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        span = hi - lo + 1
        width = (span.bit_length() + 7) // 8
        chunk = self._data[self._position:self._position + width]
        self._position += width
        if len(chunk) < width:
            return lo
        return lo + int.from_bytes(chunk, "big") % span


class RandomChooser(Chooser):
    """Choices from ``random.Random(seed)``: the same seed, the same program."""

    def __init__(self, seed: int):
        self._rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        return self._rng.randint(lo, hi)


class RecordingChooser(Chooser):
    """Wraps another chooser and records every integer it returned."""

    def __init__(self, inner: Chooser):
        self._inner = inner
        self.record: list[tuple[int, int, int]] = []

    def integer(self, lo: int, hi: int) -> int:
        value = self._inner.integer(lo, hi)
        if lo != hi:  # a forced choice is no choice; replay skips it too
            self.record.append((lo, hi, value))
        return value


class ReplayChooser(Chooser):
    """Plays back a record made by :class:`RecordingChooser`.

    Raises :class:`TirfunError` when the builder asks a different question
    than the one recorded, which would mean the builder is not a function of
    its choices.
    """

    def __init__(self, record: Sequence[tuple[int, int, int]]):
        self._record = list(record)
        self._position = 0

    def integer(self, lo: int, hi: int) -> int:
        if lo == hi:
            return lo
        if self._position >= len(self._record):
            raise TirfunError("replay ran past the recorded choices")
        rlo, rhi, value = self._record[self._position]
        if (rlo, rhi) != (lo, hi):
            raise TirfunError(f"replay diverged at choice {self._position}: recorded a choice in "
                              f"[{rlo}, {rhi}], asked for one in [{lo}, {hi}]")
        self._position += 1
        return value

    @property
    def exhausted(self) -> bool:
        """True when every recorded choice was used."""
        return self._position == len(self._record)


__all__ = ["Chooser", "BytesChooser", "DrawChooser", "RandomChooser", "RecordingChooser",
           "ReplayChooser"]
