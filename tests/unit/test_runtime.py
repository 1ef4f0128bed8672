"""The runtime: devices, arrays, argument checks, timing."""

import numpy as np
import pytest

import tirfun
from tirfun import te
from tirfun.errors import ArgumentError, TirfunError, UnknownNameError
from tirfun.runtime import Device, NDArray
from tirfun.runtime.ndarray import ALIGNMENT
from tirfun.script import from_source

FIXED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
"""


@pytest.fixture(scope="module")
def fixed():
    return tirfun.build(from_source(FIXED))


@pytest.fixture(scope="module")
def symbolic():
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    B = te.placeholder((n,), "float32", name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return tirfun.build(te.create_prim_func([A, B, C]))


def arrays(n=16):
    return np.arange(n, dtype=np.float32), np.zeros(n, np.float32)


# -- argument checks -----------------------------------------------------------

def test_wrong_count(fixed):
    a, b = arrays()
    with pytest.raises(ArgumentError, match=r"function main takes 2 argument\(s\) \(A, B\), got 3"):
        fixed(a, b, b)
    with pytest.raises(ArgumentError, match="got 1"):
        fixed(a)


def test_wrong_shape(fixed):
    a, b = arrays(8)
    with pytest.raises(ArgumentError, match=r"parameter A: dimension 0 must be 16, got 8"):
        fixed(a, b)
    with pytest.raises(ArgumentError, match=r"parameter A: expected 1 dimension\(s\) \(16,\), got 2"):
        fixed(np.zeros((4, 4), np.float32), np.zeros(16, np.float32))


def test_wrong_dtype(fixed):
    a, b = arrays()
    with pytest.raises(ArgumentError, match="parameter B: expected dtype float32, got float64"):
        fixed(a, b.astype(np.float64))


def test_non_contiguous(fixed):
    a = np.arange(32, dtype=np.float32)[::2]
    b = np.zeros(16, np.float32)
    with pytest.raises(ArgumentError, match="parameter A: the array is not C-contiguous"):
        fixed(a, b)


def test_wrong_device(fixed):
    a, b = arrays()
    on_gpu = NDArray(a, Device("cuda", 0))
    with pytest.raises(ArgumentError, match=r"parameter A: the array is on cuda\(0\), the function runs on cpu\(0\)"):
        fixed(on_gpu, b)


def test_not_an_array(fixed):
    with pytest.raises(ArgumentError, match="parameter A: expected an array .* got list"):
        fixed([0.0] * 16, np.zeros(16, np.float32))


def test_read_only_output(fixed):
    a, b = arrays()
    b.flags.writeable = False
    with pytest.raises(ArgumentError, match="parameter B: the function writes this array, but it is read-only"):
        fixed(a, b)
    a.flags.writeable = False  # inputs may be read-only
    fixed(a, np.zeros(16, np.float32))


def test_unaligned_data(fixed):
    raw = np.zeros(16 * 4 + 1, np.uint8)
    a = raw[1:].view(np.float32)
    assert not a.flags.aligned
    with pytest.raises(ArgumentError, match="parameter A: the array's data is not aligned"):
        fixed(a, np.zeros(16, np.float32))


def test_overlapping_arguments_of_a_noalias_function(fixed):
    a = np.arange(16, dtype=np.float32)
    with pytest.raises(ArgumentError, match="parameters A and B share memory"):
        fixed(a, a)


def test_numpy_arrays_are_written_in_place(fixed):
    a, b = arrays()
    fixed(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_scalar_parameters():
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "int32"), x: T.int32, y: T.float32, flag: T.bool):
    for i in range(4):
        A[i] = T.if_then_else(flag, x + T.Cast("int32", y), x)
"""
    rt = tirfun.build(from_source(src))
    a = np.zeros(4, np.int32)
    rt(a, 5, 2.0, True)
    np.testing.assert_array_equal(a, [7] * 4)
    rt(a, np.int64(5), 2, False)
    np.testing.assert_array_equal(a, [5] * 4)
    with pytest.raises(ArgumentError, match=r"parameter x: expected an integer \(int32\), got float"):
        rt(a, 5.0, 2.0, True)
    with pytest.raises(ArgumentError, match="parameter x: 4294967296 does not fit in int32"):
        rt(a, 2**32, 2.0, True)
    with pytest.raises(ArgumentError, match=r"parameter y: expected a number \(float32\), got str"):
        rt(a, 1, "2", True)
    with pytest.raises(ArgumentError, match="parameter flag: expected a bool, got 3"):
        rt(a, 1, 2.0, 3)
    with pytest.raises(ArgumentError, match="parameter x: expected a int32 scalar, got an array"):
        rt(a, a, 2.0, True)


# -- symbolic shapes -------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 7, 64, 1000])
def test_symbolic_shape_function_runs_at_several_sizes(symbolic, n):
    rng = np.random.default_rng(n)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    symbolic(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_sizes_must_agree_between_arguments(symbolic):
    a, b, c = np.zeros(8, np.float32), np.zeros(9, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ArgumentError, match=r"parameter B: dimension 0 is 9, but n = 8 \(set by parameter A;"):
        symbolic(a, b, c)


def test_explicit_sizes_bind_before_arrays():
    src = """
@T.prim_func
def main(c: T.handle, n: T.int32):
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        C[i] = T.float32(1)
"""
    rt = tirfun.build(from_source(src))
    c = np.zeros(5, np.float32)
    with pytest.raises(ArgumentError, match=r"parameter C: dimension 0 is 5, but n = 6 \(set by parameter n;"):
        rt(c, 6)
    assert not c.any()
    rt(c, 5)
    np.testing.assert_array_equal(c, np.ones(5, np.float32))


def test_sizes_must_fit_the_size_variable(symbolic):
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2**31,), strides=(0,))
    with pytest.raises(ArgumentError, match="too large for the int32 size variable n"):
        symbolic(huge, huge, huge)


def test_out_of_range_loops_cannot_be_reached_through_shapes(fixed, symbolic):
    """Every way of passing too little memory is refused before native code
    runs, and the arrays stay as they were."""
    short = np.zeros(15, np.float32)
    full = np.zeros(16, np.float32)
    for args in ([short, full], [full, short], [short.reshape(3, 5), full],
                 [np.zeros((16, 1), np.float32), full]):
        before = [x.copy() for x in args]
        with pytest.raises(ArgumentError):
            fixed(*args)
        for x, y in zip(args, before):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(ArgumentError):
        symbolic(np.zeros(10, np.float32), np.zeros(10, np.float32), np.zeros(9, np.float32))


def test_composite_sizes_are_checked():
    n = te.var("n")
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n * 2,), lambda i: A[i // 2], name="B")
    rt = tirfun.build(te.create_prim_func([A, B]))
    a = np.arange(5, dtype=np.float32)
    b = np.zeros(10, np.float32)
    rt(a, b)
    np.testing.assert_array_equal(b, np.repeat(a, 2))
    with pytest.raises(ArgumentError, match=r"parameter B: dimension 0 must be \(n \* 2\) = 10, got 9"):
        rt(a, np.zeros(9, np.float32))


# -- NDArray and devices ---------------------------------------------------------

def test_nd_array_copies_and_aligns():
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    arr = tirfun.nd.array(src)
    src[0, 0] = 100
    assert arr.shape == (3, 4) and arr.dtype == "float32" and arr.device == tirfun.cpu(0)
    assert arr.numpy()[0, 0] == 0
    assert arr.host_array().ctypes.data % ALIGNMENT == 0
    out = arr.numpy()
    out[0, 0] = 7
    assert arr.numpy()[0, 0] == 0  # numpy() is a copy


def test_nd_empty_and_copyfrom():
    arr = tirfun.nd.empty((2, 3), "int32", tirfun.cpu(0))
    assert arr.shape == (2, 3) and arr.dtype == "int32"
    arr.copyfrom(np.ones((2, 3)))
    np.testing.assert_array_equal(arr.numpy(), np.ones((2, 3), np.int32))
    with pytest.raises(ArgumentError, match=r"copyfrom: shape \(3,\) does not match"):
        arr.copyfrom(np.ones(3))
    with pytest.raises(ArgumentError, match="empty: negative dimension"):
        tirfun.nd.empty((2, -1))


def test_nd_arrays_feed_built_functions(fixed):
    a = tirfun.nd.array(np.arange(16, dtype=np.float32))
    b = tirfun.nd.empty((16,), "float32")
    fixed(a, b)
    np.testing.assert_array_equal(b.numpy(), a.numpy() * 2)


def test_devices():
    assert str(tirfun.cpu(0)) == "cpu(0)" and tirfun.cpu().exist
    with pytest.raises(TirfunError, match=r"there is one CPU device, cpu\(0\)"):
        tirfun.cpu(1)
    with pytest.raises(TirfunError, match="unknown device type 'tpu'"):
        Device("tpu", 0)


def test_cuda_without_a_gpu_is_a_clear_error():
    try:
        dev = tirfun.cuda(0)
    except TirfunError as err:
        assert any(word in str(err) for word in ("cuda-python", "driver", "GPU"))
    else:
        pytest.skip(f"a GPU is present ({dev}); the error path cannot be exercised here")


# -- modules ---------------------------------------------------------------------

def test_time_evaluator(fixed):
    a, b = arrays()
    timer = fixed.time_evaluator("main", tirfun.cpu(0), number=5, repeat=3)
    result = timer(a, b)
    assert len(result.results) == 3
    assert 0 < result.min <= result.median <= result.max
    np.testing.assert_array_equal(b, a * 2)
    with pytest.raises(ArgumentError, match="number and repeat must be at least 1"):
        fixed.time_evaluator("main", tirfun.cpu(0), number=0)
    with pytest.raises(UnknownNameError):
        fixed.time_evaluator("other", tirfun.cpu(0))


def test_module_calls_main(fixed):
    assert fixed.entry_name == "main" and "main" in fixed
    assert "main(A, B)" in repr(fixed["main"])


def test_thread_count_comes_from_the_environment(monkeypatch):
    from tirfun.errors import BuildError
    from tirfun.runtime.jit import num_threads

    monkeypatch.setenv("TIRFUN_NUM_THREADS", "3")
    assert num_threads() == 3
    monkeypatch.delenv("TIRFUN_NUM_THREADS")
    import os

    assert num_threads() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("TIRFUN_NUM_THREADS", "zero")
    with pytest.raises(BuildError, match="TIRFUN_NUM_THREADS must be a positive integer, got 'zero'"):
        tirfun.build(from_source(FIXED))


def test_median_seconds_times_any_callable():
    from tirfun.runtime.measure import gflops, median_seconds

    calls = []
    seconds = median_seconds(calls.append, 1, number=2, repeat=3, warmup=1)
    assert seconds > 0 and len(calls) == 1 + 2 * 3
    assert gflops(2e9, 0.5) == 4.0
    with pytest.raises(ArgumentError, match="number and repeat must be at least 1"):
        median_seconds(calls.append, 1, repeat=0)
