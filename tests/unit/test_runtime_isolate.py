"""A call into LLVM in a forked child: results, errors and deaths."""

import os

import pytest

from tirfun.errors import BuildError, ScheduleError
from tirfun.runtime.isolate import in_child

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


def test_the_result_comes_from_another_process():
    pid, total = in_child("adding", _pid_and_sum, [1, 2, 3])
    assert total == 6
    assert pid != os.getpid()


def test_a_child_killed_by_a_signal_is_a_build_error_quoting_what_it_printed():
    with pytest.raises(BuildError, match=r"giving up failed inside LLVM \(LLVM ended with "
                                         r"SIGABRT\).*about to give up"):
        in_child("giving up", _abort)
    assert in_child("adding", _pid_and_sum, [4])[1] == 4  # and this process lives on


def test_a_child_that_exits_without_an_answer_is_a_build_error():
    with pytest.raises(BuildError, match=r"leaving failed inside LLVM \(LLVM exited with status 3\)"):
        in_child("leaving", _exit_quietly)


def test_an_error_of_tirfun_raised_in_the_child_is_raised_again_with_its_class():
    with pytest.raises(ScheduleError, match="the loop is not a loop"):
        in_child("scheduling", _schedule_error)


def test_any_other_exception_is_an_internal_build_error_naming_the_step():
    with pytest.raises(BuildError, match=r"internal error in looking up: KeyError: 'missing'"):
        in_child("looking up", _bug)
