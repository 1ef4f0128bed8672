"""Calls into LLVM made in a worker process, so that LLVM's own failures
become errors instead of ending the process.

LLVM answers some inputs it cannot handle with an assertion or
``report_fatal_error``, which end the whole process: a Python program that
builds a kernel would die with the build. :func:`in_worker` makes such a
call in a child process forked for the purpose, which lives on and answers
one call after another (so a build pays for a round trip through a pipe,
not for a fork). A result comes back through a pipe; a worker that dies by
a signal, or exits without a result, becomes a
:class:`~tirfun.errors.BuildError` that quotes what LLVM printed, and the
next call forks a new worker. Only calls that need no state to survive
can be made this way: compiling text to text or to object code, as the
CPU and CUDA builds do.

The worker belongs to the process that forked it: a process forked later
(``multiprocessing`` forks by default on Linux) starts its own worker on
its first call. Where the platform has no ``fork`` the call runs in this
process.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import struct
import sys
import tempfile
import warnings
from typing import Callable, TypeVar

from ..errors import BuildError, TirfunError
from ..target import LLVM_LOCK

R = TypeVar("R")

#: how much of what the worker printed the error quotes
_QUOTED = 2000
#: a message's length, in front of it
_HEADER = struct.Struct("<Q")


class _WorkerDied(Exception):
    """The worker ended before it answered: ``status`` as ``waitpid`` gives
    it, ``printed`` what it wrote to its standard error meanwhile."""

    def __init__(self, status: int, printed: str):
        super().__init__(status, printed)
        self.status = status
        self.printed = printed


class _Worker:
    """A forked child computing calls one after another: requests go down
    one pipe, answers come up another, and everything it writes to its
    standard error goes to a file this process reads when it dies."""

    def __init__(self):
        self._err = tempfile.TemporaryFile()
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        sys.stderr.flush()
        with warnings.catch_warnings():
            # Python 3.12 warns about fork in a process with threads; the
            # worker only ever runs the calls sent to it, and leaves through
            # os._exit
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the worker: never returns
            _serve(request_read, answer_write, self._err.fileno(), (request_write, answer_read))
        os.close(request_read)
        os.close(answer_write)
        self.pid = pid
        self._requests = request_write
        self._answers = answer_read
        self._reaped: int | None = None

    def alive(self) -> bool:
        """Whether the worker is still there to take a call."""
        if self._reaped is not None:
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else: gone
            pid, status = self.pid, 0
        if pid:
            self._reaped = status
        return not pid

    def call(self, fn: Callable, args: tuple) -> bytes:
        """The pickled answer to ``fn(*args)``; raises :class:`_WorkerDied`."""
        printed_from = os.fstat(self._err.fileno()).st_size
        try:
            _send(self._requests, pickle.dumps((fn, args)))
            answer = _receive(self._answers)
        except BrokenPipeError:
            answer = None
        if answer is not None:
            return answer
        status = self._reap()
        self._err.seek(printed_from)
        printed = self._err.read().decode("utf-8", "replace").strip()
        raise _WorkerDied(status, printed)

    def _reap(self) -> int:
        if self._reaped is None:
            try:
                _, self._reaped = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped by someone else: how it ended is lost
                self._reaped = 0
        return self._reaped

    def close(self, kill: bool = False) -> None:
        """End the worker: it leaves when its request pipe closes (``kill``:
        at once, for a worker that may be in the middle of a call)."""
        for fd in (self._requests, self._answers):
            _close_quietly(fd)
        if kill and self._reaped is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._reap()
        self._err.close()

    def forget(self) -> None:
        """In a child forked from the worker's owner: let go of the pipes
        (the worker is not this process's child)."""
        for fd in (self._requests, self._answers):
            _close_quietly(fd)
        self._err.close()


class _Process:
    """This process's worker: None until the first call, and after one
    died. Calls are made under :data:`tirfun.target.LLVM_LOCK`, which a
    fork waits for: a worker is forked with it held, and a caller never
    holds it while waiting for another lock of this module."""

    worker: _Worker | None = None


def _after_fork_in_child() -> None:
    if _Process.worker is not None:
        _Process.worker.forget()
    _Process.worker = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def in_worker(what: str, fn: Callable[..., R], *args) -> R:
    """``fn(*args)``, computed in this process's worker.

    ``fn`` must be a function at the top level of a module and ``args``
    picklable. ``what`` names the step in the error. A
    :class:`TirfunError` the call raises is raised here again with its
    message; anything else it raises, or a worker that dies, is a
    :class:`BuildError` that names ``what`` and quotes the worker's
    standard error."""
    if not hasattr(os, "fork"):
        return fn(*args)
    with LLVM_LOCK:
        worker = _Process.worker
        if worker is None or not worker.alive():
            # forgotten before the fork: the new worker must not close, as
            # the old one's, descriptors that its own pipes may now reuse
            _Process.worker = None
            if worker is not None:
                worker.close()
            worker = _Process.worker = _Worker()
        try:
            payload = worker.call(fn, args)
        except _WorkerDied as died:
            _Process.worker = None
            worker.close()
            raise _death(what, died.status, died.printed) from None
        except BaseException:
            # interrupted between a request and its answer: the pipes are
            # out of step, so this worker takes no more calls
            _Process.worker = None
            worker.close(kill=True)
            raise
    return _answer(what, payload)


def _answer(what: str, payload: bytes):
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


def _death(what: str, status: int, printed: str) -> BuildError:
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
    return BuildError(f"{what} failed inside LLVM ({how}), which cannot compile this program"
                      f"{detail}")


def _serve(requests: int, answers: int, err_fd: int, others: tuple[int, ...]) -> None:
    """The worker's whole life: answer calls until the request pipe closes,
    then leave without running any of the parent's exit handlers."""
    code = 1
    try:
        for fd in others:
            os.close(fd)
        # what LLVM prints goes to the file the parent reads when the worker
        # dies; the parent's own output (perhaps a pipe someone reads to its
        # end) is not held open by the worker
        os.dup2(err_fd, 1)
        os.dup2(err_fd, 2)
        # a handler the parent enabled would print a Python traceback of the
        # worker's death to the parent's terminal; the error says it instead
        faulthandler.disable()
        # Ctrl-C reaches the whole process group: it is for the parent,
        # which then ends the worker
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            request = _receive(requests)
            if request is None:
                break
            fn, args = pickle.loads(request)
            _send(answers, _compute(fn, args))
        code = 0
    finally:
        os._exit(code)


def _compute(fn: Callable, args: tuple) -> bytes:
    try:
        answer = ("ok", fn(*args))
    except TirfunError as err:
        answer = ("tirfun", (type(err), str(err)))
    except Exception as err:  # reported to the parent, which raises it as a BuildError
        answer = ("internal", f"{type(err).__name__}: {err}")
    try:
        return pickle.dumps(answer)
    except Exception as err:  # an answer that cannot travel is an internal error too
        return pickle.dumps(("internal", f"the answer cannot be sent: {type(err).__name__}: {err}"))


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int) -> bytes | None:
    """The next message on ``fd``; None when the other end closed first."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    return _read_exactly(fd, _HEADER.unpack(header)[0])


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


__all__ = ["in_worker"]
