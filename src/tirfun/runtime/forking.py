"""Parallel loops in a forked child.

libgomp's thread pool does not survive ``fork``: the child inherits the
pool's bookkeeping but none of its threads, and the first parallel region
it starts waits for them forever. A child forked (``multiprocessing``'s
default start method on Linux) from a process that has run a parallel loop
therefore runs every parallel loop serially on its calling thread, through
the same chunked loop the pool's threads would have run: same results, no
pool. A child of a process that never started the pool uses libgomp as
usual (its pool is new).

Every built module with parallel loops has an int32 flag that makes them
serial (``tirfun.lower.llvm_cpu.SERIAL_FLAG``); a compiled function of
such a module calls :func:`before_parallel_call` with the flag's address
before it runs.
"""

from __future__ import annotations

import ctypes
import os

class _Process:
    """What this process knows about libgomp's pool: whether it may have
    been started (here or in a parent before a fork), and whether this
    process is a child forked after that."""

    pool_started = False
    serial = False


def _after_fork_in_child() -> None:
    _Process.serial = _Process.pool_started


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def before_parallel_call(flag_address: int) -> None:
    """Called before a function with parallel loops runs: in a child forked
    after the pool started, set the module's flag so its loops run
    serially; otherwise note that the pool is (about to be) in use."""
    if _Process.serial:
        ctypes.c_int32.from_address(flag_address).value = 1
    else:
        _Process.pool_started = True


def runs_parallel_loops_serially() -> bool:
    """Whether parallel loops in this process run on the calling thread
    because it was forked after libgomp's pool started."""
    return _Process.serial


__all__ = ["before_parallel_call", "runs_parallel_loops_serially"]
