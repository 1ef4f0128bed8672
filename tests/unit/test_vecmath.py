"""Math functions under ``-math=fast`` (tirfun.lower.llvm_vecmath) against
the interpreter: within ``FAST_MATH_ULPS`` everywhere, special values and
the overflow and underflow thresholds exactly; ``-math=exact`` bit for bit.

The float16 and bfloat16 tests take every bit pattern. For float32, every
97th bit pattern (44 million arguments) for ``exp`` and ``log``, every
997th for the rest, and the neighbourhood of every place where the result
changes class (infinite, zero, subnormal, normal) are compared with the
``-math=exact`` build, which calls the same C library functions as the
interpreter and rounds the same way (a sample of 65536 patterns checks
that against the interpreter itself, scalar and vector code alike).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError
from tirfun.interp import run as interp_run
from tirfun.lower import llvm_vecmath, vecmath_fit
from tirfun.runtime.target import Target
from tirfun.script import from_source
from tirfun.testing.equivalence import FAST_MATH_ULPS, compare_arrays, ulps_for

FUNCTIONS = sorted(llvm_vecmath.FAST)
FAST = "llvm -math=fast"
CHUNK = 1 << 22
#: the float32 sample's stride over the bit patterns, per function
STRIDE = {"exp": 97, "log": 97}
OTHER_STRIDE = 997


def _kernel(name: str, n: int, dtype: str, lanes: int):
    """``B[i] = name(A[i])`` over ``n`` elements, ``lanes`` at a time (1:
    a scalar loop)."""
    if lanes == 1:
        loops = f'''    for i in range({n}):
        with T.block("B"):
            v = T.axis.spatial({n}, i)
            B[v] = T.{name}(A[v])'''
    else:
        loops = f'''    for io in range({n // lanes}):
        for ii in T.vectorized({lanes}):
            with T.block("B"):
                v = T.axis.spatial({n}, io * {lanes} + ii)
                B[v] = T.{name}(A[v])'''
    return from_source(f'''@T.prim_func
def main(A: T.Buffer(({n},), "{dtype}"), B: T.Buffer(({n},), "{dtype}")):
    T.func_attr({{"tir.noalias": True}})
{loops}''')


def _held(dtype: str):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)


def _bits_dtype(dtype: str) -> str:
    return {"float16": "uint16", "bfloat16": "uint16", "float32": "uint32",
            "float64": "uint64"}[dtype]


def _mismatch(name, expected, actual, dtype, ulps) -> str | None:
    """compare_arrays, and also: zeros and infinities exactly (1 ulp
    apart would allow -0.0 for 0.0, and compare_arrays allows only
    finite values to differ)."""
    problem = compare_arrays(name, expected, actual, dtype, ulps)
    if problem:
        return problem
    e = expected.astype(np.float32) if dtype == "bfloat16" else expected
    a = actual.astype(np.float32) if dtype == "bfloat16" else actual
    special = (e == 0) | np.isinf(e) | (a == 0) | np.isinf(a)
    ub = _bits_dtype(dtype)
    bad = special & (expected.view(ub) != actual.view(ub))
    if bad.any():
        i = int(np.argmax(bad))
        return f"{name}: special value at {i}: {expected[i]!r} against {actual[i]!r}"
    return None


# -- the polynomials -----------------------------------------------------------------------

def test_the_polynomials_reach_their_stated_error():
    exp_err = vecmath_fit.relative_error(vecmath_fit.exp_tail, llvm_vecmath.EXP_POLY,
                                         *vecmath_fit.EXP_INTERVAL)
    log_err = vecmath_fit.relative_error(vecmath_fit.atanh_tail, llvm_vecmath.LOG_POLY,
                                         *vecmath_fit.LOG_INTERVAL)
    assert exp_err <= llvm_vecmath.EXP_POLY_ERROR and log_err <= llvm_vecmath.LOG_POLY_ERROR
    sin_err = vecmath_fit.relative_error(vecmath_fit.sin_tail, llvm_vecmath.SIN_POLY,
                                         *vecmath_fit.TRIG_INTERVAL)
    cos_err = vecmath_fit.relative_error(vecmath_fit.cos_tail, llvm_vecmath.COS_POLY,
                                         *vecmath_fit.TRIG_INTERVAL)
    assert sin_err <= llvm_vecmath.SIN_POLY_ERROR and cos_err <= llvm_vecmath.COS_POLY_ERROR
    # the bound of llvm_vecmath's docstring: the tails are under 1/16 of
    # the value, so the polynomials contribute at most 2**-48
    assert max(exp_err, log_err, sin_err, cos_err) / 16 < 2.0 ** -47
    # erf's polynomials give the value itself: 2**-44 at most
    assert llvm_vecmath.ERF_EDGES == vecmath_fit.ERF_EDGES
    erf_errs = [vecmath_fit.relative_error(vecmath_fit.erf_over_x, llvm_vecmath.ERF_SMALL_POLY,
                                           0.0, 1.0)]
    for (lo, hi), poly in zip(zip(vecmath_fit.ERF_EDGES, vecmath_fit.ERF_EDGES[1:]),
                              llvm_vecmath.ERF_PIECE_POLYS):
        erf_errs.append(vecmath_fit.relative_error(vecmath_fit.erf_piece(lo, hi), poly, -1.0, 1.0,
                                                   points=2001))
    assert max(erf_errs) <= llvm_vecmath.ERF_POLY_ERROR < 2.0 ** -44


def test_the_fit_derives_the_stored_coefficients():
    derived = vecmath_fit.derive()
    stored = {"exp": llvm_vecmath.EXP_POLY, "log": llvm_vecmath.LOG_POLY,
              "sin": llvm_vecmath.SIN_POLY, "cos": llvm_vecmath.COS_POLY,
              "erf_small": llvm_vecmath.ERF_SMALL_POLY,
              **{f"erf_{k}": p for k, p in enumerate(llvm_vecmath.ERF_PIECE_POLYS)}}
    assert set(derived) == set(stored)
    for name, (coefficients, error) in derived.items():
        assert len(coefficients) == len(stored[name])
        # the fit reproduces the polynomial (its last bits may differ between
        # platforms' long doubles) and reaches the stated error
        values = np.polynomial.polynomial.polyval(np.linspace(-1, 1, 101), coefficients)
        again = np.polynomial.polynomial.polyval(np.linspace(-1, 1, 101), stored[name])
        assert np.allclose(values, again, rtol=1e-12, atol=0), name
        bound = {"exp": llvm_vecmath.EXP_POLY_ERROR, "log": llvm_vecmath.LOG_POLY_ERROR,
                 "sin": llvm_vecmath.SIN_POLY_ERROR, "cos": llvm_vecmath.COS_POLY_ERROR}
        assert error <= 1.01 * bound.get(name, llvm_vecmath.ERF_POLY_ERROR), name


# -- the target option -----------------------------------------------------------------------

def test_math_option_parses_and_prints():
    assert Target("llvm").math == "exact"
    assert Target("llvm -math=fast").math == "fast"
    assert Target("llvm -math=exact").math == "exact"
    assert "-math=fast" in str(Target("llvm -math=fast"))
    assert "-math" not in str(Target("llvm"))
    assert Target(str(Target("llvm -math=fast"))) == Target("llvm -math=fast")
    assert Target("llvm", math="fast") == Target("llvm -math=fast")


@pytest.mark.parametrize("text", ["llvm -math=quick", "llvm -math", "llvm -math="])
def test_math_option_refuses_other_values(text):
    with pytest.raises(BuildError, match="math"):
        Target(text)


def test_ulps_for_fast_math_counts_narrow_calls_only():
    assert ulps_for(_kernel("exp", 16, "float32", 1)) == 0
    assert ulps_for(_kernel("exp", 16, "float32", 1), math="fast") == FAST_MATH_ULPS["exp"] == 1
    assert ulps_for(_kernel("exp", 16, "float64", 1), math="fast") == 0


def test_exact_calls_the_c_library_and_fast_does_not():
    mod = _kernel("exp", 64, "float32", 16)
    exact_asm = tirfun.build(mod).get_source("asm")
    fast_asm = tirfun.build(mod, target=FAST).get_source("asm")

    def calls(asm):
        return [line.split()[-1] for line in asm.splitlines() if line.split()[:1] == ["callq"]
                or line.split()[:1] == ["call"]]

    # the JIT calls the C library through its address: one call per lane
    assert len(calls(exact_asm)) >= 16
    assert calls(fast_asm) == []


# -- every 16-bit float ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_16_bit_argument(name, dtype):
    x = np.arange(1 << 16, dtype=np.uint16).view(_held(dtype))
    expected = np.zeros_like(x)
    interp_run(_kernel(name, x.size, dtype, 1), x.copy(), expected)
    for lanes in (1, 16):
        mod = _kernel(name, x.size, dtype, lanes)
        exact, fast = np.zeros_like(x), np.zeros_like(x)
        tirfun.build(mod)(x.copy(), exact)
        tirfun.build(mod, target=FAST)(x.copy(), fast)
        assert _mismatch(name, expected, exact, dtype, 0) is None
        assert _mismatch(name, expected, fast, dtype, FAST_MATH_ULPS[name]) is None


# -- float32 against the interpreter -----------------------------------------------------------

def _special_float32() -> np.ndarray:
    f = np.float32
    tiny, big = np.finfo(f).tiny, np.finfo(f).max
    sub_min = f(np.float32(1.4e-45))
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, 0.5, sub_min, -sub_min,
              tiny, -tiny, np.nextafter(tiny, f(0)), -np.nextafter(tiny, f(0)), big, -big,
              88.72283935546875, 88.7228317260742, -103.97207641601562, -87.33654022216797,
              128.0, np.nextafter(f(128), f(0)), -149.0, -150.0, -126.0, 1e-30, -1e-30,
              -0.9999999403953552, 0.6931471824645996, 3.4028234663852886e38, 9.010913848876953,
              -9.010913848876953, 1e-8, -1e-8, 16.635532379150391, -16.635532379150391]
    return np.array(values, dtype=np.float32)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_sample_and_special_values_against_the_interpreter(name):
    n = 1 << 16
    x = (np.arange(n, dtype=np.uint64) * ((1 << 32) // n) + 12345).astype(np.uint32).view(np.float32)
    specials = _special_float32()
    x[:specials.size] = specials
    expected = np.zeros_like(x)
    interp_run(_kernel(name, n, "float32", 1), x.copy(), expected)
    for lanes in (1, 16):
        mod = _kernel(name, n, "float32", lanes)
        exact, fast = np.zeros_like(x), np.zeros_like(x)
        tirfun.build(mod)(x.copy(), exact)
        tirfun.build(mod, target=FAST)(x.copy(), fast)
        assert _mismatch(name, expected, exact, "float32", 0) is None
        assert _mismatch(name, expected, fast, "float32", FAST_MATH_ULPS[name]) is None
        assert _mismatch(name, expected[:specials.size], fast[:specials.size], "float32", 0) is None


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float64_keeps_the_c_library_under_fast(name):
    n = 4096
    x = np.random.default_rng(3).standard_normal(n) * 30
    if name.startswith("log"):
        x = np.abs(x)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310]
    expected = np.zeros_like(x)
    interp_run(_kernel(name, n, "float64", 1), x.copy(), expected)
    for lanes in (1, 8):
        fast = np.zeros_like(x)
        tirfun.build(_kernel(name, n, "float64", lanes), target=FAST)(x.copy(), fast)
        assert _mismatch(name, expected, fast, "float64", 0) is None


# -- float32, strided over every bit pattern ---------------------------------------------------

def _class_of(y: np.ndarray) -> np.ndarray:
    """0 NaN, 1 infinite, 2 zero, 3 subnormal, 4 normal (float32)."""
    a = np.abs(y)
    return np.select([np.isnan(y), np.isinf(y), a == 0, a < np.finfo(np.float32).tiny],
                     [0, 1, 2, 3], 4)


def _class_boundaries(exact_rt) -> np.ndarray:
    """Every float32 bit pattern of each stretch of 65536 patterns in
    which the exact result changes class (a scan of every 65536th pattern
    finds them)."""
    step = 1 << 16
    coarse = np.arange(0, 1 << 32, step, dtype=np.uint64).astype(np.uint32)
    ys = np.zeros(coarse.size, np.float32)
    _run_padded(exact_rt, coarse.view(np.float32), ys)
    cls = _class_of(ys)
    starts = [int(coarse[i]) for i in np.nonzero(cls[1:] != cls[:-1])[0]]
    return np.concatenate([np.arange(lo, lo + step, dtype=np.uint64) for lo in starts]
                          ).astype(np.uint32)


def _run_padded(rt, x: np.ndarray, y: np.ndarray) -> None:
    """Run a CHUNK-sized kernel on up to CHUNK arguments."""
    a = np.zeros(CHUNK, np.float32)
    b = np.zeros(CHUNK, np.float32)
    a[:x.size] = x
    rt(a, b)
    y[:] = b[:x.size]


def _float32_distance(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """How many float32s apart two results are, on the bits: 0 for two
    NaNs, more than any tolerance for a NaN against a number and for
    differing zeros or infinities (an exact match is required there)."""
    def ordered(y):
        bits = y.view(np.uint32).astype(np.int64)
        return np.where(bits >= 1 << 31, (1 << 31) - bits, bits)

    distance = np.abs(ordered(expected) - ordered(actual))
    nan_e, nan_a = np.isnan(expected), np.isnan(actual)
    special = (expected == 0) | np.isinf(expected) | (actual == 0) | np.isinf(actual)
    distance[special & (expected.view(np.uint32) != actual.view(np.uint32))] = 1 << 40
    distance[nan_e != nan_a] = 1 << 40
    distance[nan_e & nan_a] = 0
    return distance


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_strided_over_all_bit_patterns(name):
    stride = STRIDE.get(name, OTHER_STRIDE)
    mod = _kernel(name, CHUNK, "float32", 16)
    exact_rt, fast_rt = tirfun.build(mod), tirfun.build(mod, target=FAST)
    ulps = FAST_MATH_ULPS[name]
    patterns = np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32)
    patterns = np.concatenate([patterns, _class_boundaries(exact_rt),
                               _special_float32().view(np.uint32)])
    apart = 0
    for start in range(0, patterns.size, CHUNK):
        x = patterns[start:start + CHUNK].view(np.float32)
        exact, fast = np.zeros_like(x), np.zeros_like(x)
        _run_padded(exact_rt, x, exact)
        _run_padded(fast_rt, x, fast)
        distance = _float32_distance(exact, fast)
        bad = distance > ulps
        assert not bad.any(), (f"{name}({x[bad][0]!r}) is {fast[bad][0]!r} against "
                               f"{exact[bad][0]!r} ({np.count_nonzero(bad)} arguments)")
        apart += int(np.count_nonzero(distance))
    # within 1 ulp, and nearly always the same float (see llvm_vecmath)
    assert apart <= patterns.size // 100_000


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_near_every_multiple_of_half_pi(name):
    # where the reduced argument cancels most: the float32s nearest to each
    # k pi / 2 up to the C library's threshold, and their neighbours
    k = np.arange(1, int(llvm_vecmath.TRIG_LIMIT / (np.pi / 2)) + 1, dtype=np.float64)
    near = (k * (np.pi / 2)).astype(np.float32).view(np.uint32).astype(np.int64)
    patterns = (near[:, None] + np.arange(-2, 3)[None, :]).ravel().astype(np.uint32)
    patterns = np.concatenate([patterns, patterns | np.uint32(1 << 31)])
    mod = _kernel(name, CHUNK, "float32", 16)
    exact_rt, fast_rt = tirfun.build(mod), tirfun.build(mod, target=FAST)
    for start in range(0, patterns.size, CHUNK):
        x = patterns[start:start + CHUNK].view(np.float32)
        exact, fast = np.zeros_like(x), np.zeros_like(x)
        _run_padded(exact_rt, x, exact)
        _run_padded(fast_rt, x, fast)
        distance = _float32_distance(exact, fast)
        assert distance.max() <= FAST_MATH_ULPS[name], x[np.argmax(distance)]
