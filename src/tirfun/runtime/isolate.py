"""Run a call into LLVM in a forked child, so that LLVM's own failures
become errors instead of ending the process.

LLVM answers some inputs it cannot handle with an assertion or
``report_fatal_error``, which end the whole process: a Python program that
builds for the GPU would die with the build. :func:`in_child` runs such a
call in a child forked for it: a result comes back through a pipe; a child
that dies by a signal, or exits without a result, becomes a
:class:`~tirfun.errors.BuildError` that quotes what LLVM printed. Only
code that needs no state to survive (compiling text to text, as the PTX
step does) can run this way; the CPU build's JIT keeps its machine code in
this process, so it cannot.

Where the platform has no ``fork`` the call runs in this process.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import tempfile
import warnings
from typing import Callable, TypeVar

from ..errors import BuildError, TirfunError

R = TypeVar("R")

#: how much of what the child printed the error quotes
_QUOTED = 2000


def in_child(what: str, fn: Callable[..., R], *args) -> R:
    """``fn(*args)``, computed in a forked child.

    ``what`` names the step in the error. A :class:`TirfunError` the call
    raises is raised here again with its message; anything else the child
    raises, or a child that dies, is a :class:`BuildError` that names
    ``what`` and quotes the child's standard error."""
    if not hasattr(os, "fork"):
        return fn(*args)
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err_file:
        sys.stderr.flush()
        with warnings.catch_warnings():
            # Python 3.12 warns about fork in a process with threads; the
            # child here only runs ``fn`` and leaves through os._exit
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never returns
            _run_child(fn, args, write_fd, read_fd, err_file.fileno())
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(pid, 0)
        err_file.seek(0)
        printed = err_file.read().decode("utf-8", "replace").strip()
    if payload:
        kind, value = pickle.loads(payload)
        if kind == "ok":
            return value
        if kind == "tirfun":
            cls, message = value
            try:
                err = cls(message)
            except TypeError:  # a class whose constructor wants more than the message
                err = BuildError(message)
            raise err
        raise BuildError(f"internal error in {what}: {value}")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        how = f"LLVM ended with {name}"
    else:
        how = f"LLVM exited with status {os.WEXITSTATUS(status)}"
    detail = f": {printed[-_QUOTED:]}" if printed else ""
    raise BuildError(f"{what} failed inside LLVM ({how}), which cannot compile this program"
                     f"{detail}")


def _run_child(fn, args, write_fd: int, read_fd: int, err_fd: int) -> None:
    """The child's whole life: compute, send the answer, leave without
    running any of the parent's exit handlers."""
    code = 1
    try:
        os.close(read_fd)
        os.dup2(err_fd, 2)
        # a handler the parent enabled would print a Python traceback of the
        # child's death to the parent's terminal; the error says it instead
        faulthandler.disable()
        try:
            answer = ("ok", fn(*args))
        except TirfunError as err:
            answer = ("tirfun", (type(err), str(err)))
        except Exception as err:  # reported to the parent, which raises it as a BuildError
            answer = ("internal", f"{type(err).__name__}: {err}")
        data = pickle.dumps(answer)
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        code = 0
    finally:
        os._exit(code)


__all__ = ["in_child"]
