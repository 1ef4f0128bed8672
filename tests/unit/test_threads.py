"""Process-wide state under threads: parsing, building, interpreting and
running from several threads at once leaves the process as it found it
and gives every thread its own right answer."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import traceback
import warnings

import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError
from tirfun.interp import run as interp_run
from tirfun.script import from_source
from test_build_llvm import _check_scaled, _scaled


@pytest.fixture
def fast_switching():
    """Threads switch as often as the interpreter allows, so a window
    between two steps of a shared change is hit within a few iterations."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_threads(work, n: int = 8) -> None:
    """Run ``work(t)`` in ``n`` threads; fail with every thread's traceback."""
    errors = []

    def guarded(t):
        try:
            work(t)
        except BaseException as err:  # reported below, with the thread and the traceback
            errors.append(f"thread {t}: " + "".join(traceback.format_exception(err)))

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a thread never finished"
    assert not errors, "\n".join(errors)


def test_parsing_from_several_threads_leaves_the_warning_filters_as_they_were(monkeypatch):
    # the parser silences Python's syntax warnings around ast.parse; with
    # warnings.catch_warnings alone, a second thread entering while the
    # first is inside saves the filters with the first one's "ignore", and
    # leaving last it restores them: every warning of the process is then
    # ignored. Here the second parse starts while the first is inside
    # (unless the first keeps it out) and ends after the first has left.
    import ast
    import types

    from tirfun.script import parser_source

    first_inside, second_inside, first_done = (threading.Event() for _ in range(3))
    order = []

    def parse(*args, **kwargs):
        order.append(threading.current_thread().name)
        if len(order) == 1:
            first_inside.set()
            second_inside.wait(0.5)  # times out when the second is kept out
        else:
            second_inside.set()
            first_done.wait(10)
        return ast.parse(*args, **kwargs)

    monkeypatch.setattr(parser_source, "ast", types.SimpleNamespace(**{**vars(ast), "parse": parse}))
    before = list(warnings.filters)

    def work(t):
        if t == 0:
            assert from_source(_scaled(1)).params
            first_done.set()
        else:
            assert first_inside.wait(10)
            assert from_source(_scaled(2)).params

    _run_threads(work, 2)
    assert len(order) == 2
    assert warnings.filters == before


def test_the_parser_still_keeps_python_syntax_warnings_to_itself():
    source = _scaled(1).replace('"b"', '"\\d"')  # an invalid escape: Python warns
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        from_source(source)
    assert [w for w in seen if issubclass(w.category, SyntaxWarning)] == []


@pytest.fixture
def frees_outside_the_lock(monkeypatch):
    """The LLVM objects llvmlite frees while this thread does not hold
    tirfun's LLVM lock (llvmlite frees an object when it is closed or its
    Python object dies)."""
    from llvmlite.binding import context, ffi

    from tirfun.runtime import jit

    found = []
    close = ffi.ObjectRef.close

    def watched(self):
        if (not self._closed and not self._owned and not isinstance(self, context.GlobalContextRef)
                and not jit.LOCK._is_owned()):
            found.append(type(self).__name__)
        return close(self)

    monkeypatch.setattr(ffi.ObjectRef, "close", watched)
    return found


def test_llvm_objects_are_freed_under_the_llvm_lock(frees_outside_the_lock):
    # LLVM's state is shared by every thread, so freeing a module or a
    # target machine is a use of LLVM that must hold the lock: a local
    # variable is freed after its function returns (past the end of a
    # ``with LOCK`` block), and one in the frame of a raised exception only
    # when the caller drops the exception
    rt = tirfun.build(from_source(_scaled(901)))
    assert "tirfun_main" in rt.get_source("asm")
    _check_scaled(rt, 901)
    with pytest.raises(BuildError, match="no-such-cpu"):
        tirfun.build(from_source(_scaled(902)), target="llvm -mcpu=no-such-cpu")
    missing = from_source('''@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.call_extern("float32", "tirfun_test_no_such_function_903", A[i])
''')
    with pytest.raises(BuildError, match="tirfun_test_no_such_function_903"):
        tirfun.build(missing)
    del rt
    gc.collect()
    assert frees_outside_the_lock == []


def test_every_call_into_llvm_holds_the_llvm_lock():
    # llvmlite takes a lock of its own around each call into LLVM, which
    # does not make a sequence of calls safe, and which a child forked while
    # another thread holds it inherits held: every call from tirfun is made
    # under tirfun's lock, which a fork waits for
    from llvmlite.binding import ffi

    from tirfun.runtime import jit
    from tirfun.runtime.target import Target, host_description

    outside = []

    def entered():
        if not jit.LOCK._is_owned():
            outside.append("".join(traceback.format_stack(limit=8)))

    def released():
        pass

    ffi.register_lock_callback(entered, released)
    try:
        host_description.cache_clear()
        assert Target("llvm").is_host
        rt = tirfun.build(from_source(_scaled(904)))
        assert "tirfun_main" in rt.get_source("asm")
        _check_scaled(rt, 904)
        with pytest.raises(BuildError, match="no-such-cpu"):
            tirfun.build(from_source(_scaled(904)), target="llvm -mcpu=no-such-cpu")
        del rt
        gc.collect()
    finally:
        ffi.unregister_lock_callback(entered, released)
    assert outside == [], outside[0]


def test_builds_and_interpreter_runs_in_several_threads_agree(fast_switching):
    # builds (parse, lower, LLVM, assembly, native calls) and interpreter
    # runs in threads at once: each thread gets its own program's answer
    def work(t):
        for r in range(2):
            k = 1000 + 10 * t + r
            mod = from_source(_scaled(k))
            a = np.arange(64, dtype="float32")
            expected = np.zeros(64, "float32")
            interp_run(mod, a, expected)
            np.testing.assert_array_equal(expected, a * np.float32(k) + np.float32(3 * k))
            rt = tirfun.build(mod)
            assert "tirfun_main" in rt.get_source("asm")
            out = np.zeros(64, "float32")
            rt(a, out)
            assert out.tobytes() == expected.tobytes()

    _run_threads(work)


def test_one_function_run_by_the_interpreter_and_natively_from_several_threads(fast_switching):
    # one compiled kernel of each kind shared by every thread, each with its
    # own arrays: nothing of a run is kept where another run can see it
    mod = from_source(_scaled(7))
    rt = tirfun.build(mod)

    def work(t):
        rng = np.random.default_rng(t)
        for _ in range(3):
            a = rng.uniform(-8, 8, 64).astype("float32")
            expected = np.zeros(64, "float32")
            interp_run(mod, a, expected)
            out = np.zeros(64, "float32")
            rt(a, out)
            assert out.tobytes() == expected.tobytes()
            np.testing.assert_array_equal(out, a * np.float32(7) + np.float32(21))

    _run_threads(work)


def test_modules_dropped_from_the_build_cache_are_freed_outside_its_lock(monkeypatch):
    # freeing a module's code waits for the LLVM lock, which a build in
    # another thread may hold for long: the cache's lock, which every
    # build's look-up takes, is not held meanwhile
    from tirfun.runtime import builder, jit

    builder.clear_cache()
    gc.collect()
    held_at_free = []
    free = jit.Code.__del__

    def watched(self, *args):
        held_at_free.append(builder._cache_lock.locked())
        free(self, *args)

    monkeypatch.setattr(jit.Code, "__del__", watched)
    monkeypatch.setattr(builder, "CACHE_SIZE", 1)
    tirfun.build(from_source(_scaled(906)))
    tirfun.build(from_source(_scaled(907)))  # the module of 906 goes, and its code with it
    assert held_at_free == [False]
    builder.clear_cache()
    assert held_at_free == [False, False]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_while_another_thread_holds_the_cache_lock_can_build():
    from tirfun.runtime import builder

    held, release = threading.Event(), threading.Event()

    def hold():
        with builder._cache_lock:  # as a look-up in progress
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        pid = os.fork()
        if pid == 0:  # the child: build and run, or be killed by the alarm
            status = 1
            try:
                signal.alarm(30)
                _check_scaled(tirfun.build(from_source(_scaled(908))), 908)
                status = 0
            finally:
                os._exit(status)
    finally:
        release.set()
        holder.join()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the child ended with status {status}"


def test_the_host_target_is_made_without_taking_the_process_stderr(monkeypatch):
    # checking an explicit -mcpu/-mattr reads LLVM's complaints from file
    # descriptor 2, which swallows what other threads write meanwhile; the
    # host's own CPU and features need no check, so the common build never
    # does that
    from tirfun.runtime import jit
    from tirfun.runtime.target import Target

    with jit.LOCK:  # the cached target machines are freed under the lock
        jit._checked_target_machine.cache_clear()
    taken = []
    stderr_of = jit._stderr_of
    monkeypatch.setattr(jit, "_stderr_of", lambda make: (taken.append(1), stderr_of(make))[1])
    jit.target_machine(Target("llvm"))
    assert taken == []
    jit.target_machine(Target("llvm -mcpu=x86-64 -mattr=+sse2"))
    assert taken == [1]
    with pytest.raises(BuildError, match="no-such-cpu"):
        jit.target_machine(Target("llvm -mcpu=no-such-cpu"))
