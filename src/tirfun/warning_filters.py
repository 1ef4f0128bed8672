"""Changing Python's warning filters for a moment, from any thread.

``warnings.catch_warnings`` saves the process-wide filter list on entry and
puts it back on exit. Two threads inside it at once undo each other: the
one that leaves last restores the list it saw on entry, which holds the
other's temporary filter, so (for example) an ``ignore`` meant for one
parse stays in force for the whole process. Every temporary change tirfun
makes goes through :func:`catch_warnings`, which lets one thread at a time
in (reentrant, so a nested change does not wait for itself).
"""

from __future__ import annotations

import contextlib
import threading
import warnings

_LOCK = threading.RLock()


@contextlib.contextmanager
def catch_warnings():
    """``warnings.catch_warnings()``, entered by one thread at a time."""
    with _LOCK, warnings.catch_warnings():
        yield


__all__ = ["catch_warnings"]
