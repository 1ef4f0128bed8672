"""The GPU soak's sorting of outcomes, with the interpreter as the GPU."""

import numpy as np

from tirfun.testing import gpu_soak
from tirfun.testing.cuda import run_split


def _interpreted(rt, args):
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    run_split(rt, *copies)
    return copies


def test_seeds_run_through_the_split_build_are_ok_or_skipped():
    outcomes = {gpu_soak.check_seed(seed, _interpreted)[0] for seed in range(12)}
    assert outcomes <= {"ok", "skipped"} and "ok" in outcomes


def _seed_where(test, limit=400):
    for seed in range(limit):
        mod, why = gpu_soak.program(seed)
        if why is None and test(mod["main"]):
            return seed
    raise AssertionError("no such seed")


def _last_buffer_changed(change):
    def execute(rt, args):
        out = _interpreted(rt, args)
        k = max(i for i, a in enumerate(out) if isinstance(a, np.ndarray) and a.size)
        out[k] = change(out[k])
        return out
    return execute


def test_an_integer_that_differs_fails():
    def int_output(func):
        last = [p for p in func.params if p in func.buffer_map][-1]
        return func.buffer_map[last].dtype.is_int
    seed = _seed_where(int_output)
    outcome, detail = gpu_soak.check_seed(seed, _last_buffer_changed(lambda a: a ^ np.ones_like(a)))
    assert outcome == "failed" and "differs at index" in detail


def test_a_float64_within_ulps_is_libdevices_only_where_float64_math_is_called():
    def float64_output(func):
        last = [p for p in func.params if p in func.buffer_map][-1]
        return func.buffer_map[last].dtype == "float64"

    def one_ulp(a):
        finite = np.isfinite(a)
        return np.where(finite, np.nextafter(a, np.inf), a)

    with_math = _seed_where(lambda f: float64_output(f) and gpu_soak._float64_math(f))
    outcome, detail = gpu_soak.check_seed(with_math, _last_buffer_changed(one_ulp))
    assert outcome == "libdevice" and detail.startswith("1 ulps, calls "), detail
    without = _seed_where(lambda f: float64_output(f) and not gpu_soak._float64_math(f))
    outcome, detail = gpu_soak.check_seed(without, _last_buffer_changed(one_ulp))
    assert outcome == "failed" and "differs at index" in detail


def test_without_a_gpu_the_soak_says_so(capsys):
    import tirfun

    try:
        tirfun.cuda(0)
    except tirfun.TirfunError:
        assert gpu_soak.main(["--seconds", "1"]) == 0
        assert "needs a GPU, and there is none here" in capsys.readouterr().out
    else:
        assert gpu_soak.main(["--seconds", "5", "--workers", "2"]) == 0
