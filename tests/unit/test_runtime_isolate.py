"""Calls into LLVM in the worker process: results, errors and deaths."""

import os

import pytest

from tirfun.errors import BuildError, ScheduleError
from tirfun.runtime.isolate import in_worker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform has no fork")


def _pid_and_sum(values):
    return os.getpid(), sum(values)


def _abort():
    os.write(2, b"about to give up\n")  # as LLVM prints: to the descriptor
    os.abort()


def _exit_quietly():
    os._exit(3)


def _schedule_error():
    raise ScheduleError("the loop is not a loop")


def _bug():
    return {}["missing"]


def _big(n):
    return b"x" * n


def test_the_result_comes_from_another_process_which_answers_call_after_call():
    pid, total = in_worker("adding", _pid_and_sum, [1, 2, 3])
    assert total == 6
    assert pid != os.getpid()
    again, total = in_worker("adding", _pid_and_sum, [4, 5])
    assert (again, total) == (pid, 9)  # the same worker, not a fork per call


def test_answers_larger_than_a_pipe_come_back_whole():
    assert in_worker("copying", _big, 5_000_000) == b"x" * 5_000_000


def test_a_worker_killed_by_a_signal_is_a_build_error_quoting_what_it_printed():
    in_worker("printing", os.write, 2, b"said before\n")
    with pytest.raises(BuildError, match=r"giving up failed inside LLVM \(LLVM ended with "
                                         r"SIGABRT\).*about to give up") as info:
        in_worker("giving up", _abort)
    assert "said before" not in str(info.value)  # only what the failed call printed
    # and this process lives on, with a new worker
    assert in_worker("adding", _pid_and_sum, [4])[1] == 4


def test_a_worker_that_exits_without_an_answer_is_a_build_error():
    with pytest.raises(BuildError, match=r"leaving failed inside LLVM \(LLVM exited with status 3\)"):
        in_worker("leaving", _exit_quietly)
    assert in_worker("adding", _pid_and_sum, [1])[1] == 1


def test_a_worker_that_died_between_calls_is_replaced_without_an_error():
    pid, _ = in_worker("adding", _pid_and_sum, [])
    os.kill(pid, 9)
    os.waitpid(pid, 0)  # gone, and reaped by someone else than its owner
    new, total = in_worker("adding", _pid_and_sum, [2])
    assert total == 2 and new != pid


def test_an_error_of_tirfun_raised_in_the_worker_is_raised_again_with_its_class():
    with pytest.raises(ScheduleError, match="the loop is not a loop"):
        in_worker("scheduling", _schedule_error)


def test_any_other_exception_is_an_internal_build_error_naming_the_step():
    with pytest.raises(BuildError, match=r"internal error in looking up: KeyError: 'missing'"):
        in_worker("looking up", _bug)


def test_a_forked_child_starts_a_worker_of_its_own():
    parent_worker, _ = in_worker("adding", _pid_and_sum, [])
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            worker, total = in_worker("adding", _pid_and_sum, [7])
            code = 0 if total == 7 and worker not in (parent_worker, os.getpid()) else 2
        finally:
            os.write(write_fd, bytes([code]))
            os._exit(0)
    os.close(write_fd)
    answer = os.read(read_fd, 1)
    os.close(read_fd)
    os.waitpid(pid, 0)
    assert answer == b"\0"
    assert in_worker("adding", _pid_and_sum, [])[0] == parent_worker


def _unpicklable():
    return lambda: None


def test_an_answer_that_cannot_be_sent_back_is_an_internal_build_error():
    with pytest.raises(BuildError, match=r"internal error in answering: the answer cannot be sent"):
        in_worker("answering", _unpicklable)
    assert in_worker("adding", _pid_and_sum, [3])[1] == 3  # the worker lives on


def test_the_worker_does_not_hold_this_process_s_output_open():
    # a reader of this process's output (a CI runner reading a pipe to its
    # end) must not wait for a worker still busy after this process ended:
    # the worker's standard output and error are its own file
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc to look at descriptors")
    worker = in_worker("asking", os.getpid)
    mine = {os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)}
    theirs = {os.readlink(f"/proc/{worker}/fd/{fd}") for fd in (1, 2)}
    assert len(theirs) == 1 and not theirs & mine, (mine, theirs)
