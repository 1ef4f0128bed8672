"""float16 and bfloat16 in compiled code: conversions bit for bit as numpy
and ml_dtypes round, arithmetic, math intrinsics and scalar parameters as
the interpreter computes them, and no call into a missing helper."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tirfun
from tirfun.errors import BuildError
from tirfun.interp import run as interp_run
from tirfun.script import from_source

BF16 = np.dtype(ml_dtypes.bfloat16)
NARROW = {"float16": np.dtype("float16"), "bfloat16": BF16}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(UINT[a.dtype.itemsize])


def assert_same_bits(expected: np.ndarray, actual: np.ndarray, what: str) -> None:
    """Equal bit patterns everywhere."""
    diff = np.flatnonzero(_bits(expected) != _bits(actual))
    if diff.size:
        k = diff[0]
        raise AssertionError(f"{what}: {diff.size} of {expected.size} differ; first at {k}: "
                             f"expected {expected[k]!r} ({int(_bits(expected)[k]):#x}), "
                             f"got {actual[k]!r} ({int(_bits(actual)[k]):#x})")


def assert_same_values(expected: np.ndarray, actual: np.ndarray, what: str) -> None:
    """Equal bit patterns, except that a NaN may be any NaN (the payload a
    math function gives a NaN is not specified by IEEE or TIR)."""
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(expected.astype(np.float32)) & np.isnan(actual.astype(np.float32))
    e, a = expected.copy(), actual.copy()
    e[both_nan] = 0
    a[both_nan] = 0
    assert_same_bits(e, a, what)


def _unary(src_dtype: str, dst_dtype: str, n: int, body: str):
    return from_source(f'''@T.prim_func
def main(A: T.Buffer(({n},), "{src_dtype}"), B: T.Buffer(({n},), "{dst_dtype}")):
    for i in range({n}):
        B[i] = {body}
''')


def _run_both(func, *args):
    """(interpreter's outputs, compiled outputs) on copies of ``args``."""
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    actual = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp_run(func, *expected)
    tirfun.build(func)(*actual)
    return expected, actual


def _all_patterns(dtype: np.dtype) -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)


def _rounding_cases(dtype: np.dtype) -> np.ndarray:
    """Doubles that test rounding to ``dtype``: every finite value, each
    midpoint between neighbours (ties) and the doubles just either side of
    each midpoint, the overflow thresholds, NaNs and infinities."""
    with np.errstate(invalid="ignore"):
        finite = np.sort(np.unique(_all_patterns(dtype).astype(np.float64)))
    finite = finite[np.isfinite(finite)]
    mids = (finite[:-1] + finite[1:]) / 2
    top = float(finite[-1])
    ulp = top - float(finite[-2])
    edges = np.array([top + ulp / 2, top + ulp / 2 * 0.999, -(top + ulp / 2), 1e300, -1e300,
                      2.0 ** -1074, -(2.0 ** -1074), 0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan])
    return np.concatenate([finite, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
                           edges])


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
@pytest.mark.parametrize("src", ["float64", "float32"])
def test_narrowing_rounds_as_numpy_and_ml_dtypes_bit_for_bit(src, dst):
    values = _rounding_cases(NARROW[dst])
    if src == "float32":
        with np.errstate(over="ignore"):
            wide = values.astype(np.float32)
        # the float32 cases: the ones float32 holds exactly, and their neighbours
        values = np.concatenate([wide, np.nextafter(wide, np.float32(np.inf)),
                                 np.nextafter(wide, np.float32(-np.inf))])
    a = values.astype(src)
    func = _unary(src, dst, a.size, f'T.Cast("{dst}", A[i])')
    (_, expected), (_, actual) = _run_both(func, a, np.zeros(a.size, NARROW[dst]))
    with np.errstate(over="ignore", invalid="ignore"):
        reference = a.astype(NARROW[dst])
    assert_same_bits(reference, actual, f"{src} -> {dst} compiled against numpy")
    assert_same_bits(reference, expected, f"{src} -> {dst} interpreted against numpy")


@pytest.mark.parametrize("src, dst", [(s, d) for s in ("float16", "bfloat16")
                                      for d in ("float32", "float64", "float16", "bfloat16") if s != d])
def test_widening_and_crossing_convert_every_bit_pattern(src, dst):
    a = _all_patterns(NARROW[src])
    dt = NARROW.get(dst, np.dtype(dst))
    func = _unary(src, dst, a.size, f'T.Cast("{dst}", A[i])')
    (_, expected), (_, actual) = _run_both(func, a, np.zeros(a.size, dt))
    with np.errstate(over="ignore", invalid="ignore"):
        reference = a.astype(dt)
    finite = np.isfinite(a.astype(np.float32))
    # NaNs stay NaNs with their sign; their payload is the hardware's
    assert_same_values(reference, actual, f"{src} -> {dst} compiled")
    assert_same_values(reference, expected, f"{src} -> {dst} interpreted")
    assert_same_bits(reference[finite], actual[finite], f"{src} -> {dst} compiled, finite")
    nan = ~finite & np.isnan(a.astype(np.float32))
    assert np.array_equal(np.signbit(actual[nan].astype(np.float32)),
                          np.signbit(a[nan].astype(np.float32)))


INTEGERS = [0, 1, -1, 7, 2048, 2049, 4097, 65504, 65519, 65520, 65536, (1 << 24) + (1 << 16) + 1,
            (1 << 24) + 1, (1 << 31) - 1, -(1 << 31), 123456789, -987654321]


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
@pytest.mark.parametrize("src", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                 "uint64", "bool"])
def test_integers_convert_with_one_rounding(src, dst):
    info = np.iinfo(src) if src != "bool" else None
    if info is None:
        a = np.array([False, True, True, False])
    else:
        ints = [v for v in INTEGERS if info.min <= v <= info.max] + [int(info.min), int(info.max)]
        if src == "int64":
            ints += [(1 << 40) + (1 << 32) + 1, -(1 << 40) - (1 << 32) - 1]
        a = np.array(ints, dtype=src)
    func = _unary(src, dst, a.size, f'T.Cast("{dst}", A[i])')
    (_, expected), (_, actual) = _run_both(func, a, np.zeros(a.size, NARROW[dst]))
    with np.errstate(over="ignore"):
        reference = a.astype(np.float64).astype(NARROW[dst])
    assert_same_bits(reference, actual, f"{src} -> {dst} compiled")
    assert_same_bits(reference, expected, f"{src} -> {dst} interpreted")


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "int32", "uint32", "int64", "bool"])
@pytest.mark.parametrize("src", ["float16", "bfloat16"])
def test_conversions_to_integers_agree_with_the_interpreter(src, dst):
    values = np.array([0.0, -0.0, 0.5, -0.5, 1.0, 1.75, -1.75, 100.5, -100.5, 127.0, 255.0, 2048.0,
                       -2048.0, 1e-3, 6e-8])
    if dst.startswith("uint"):
        values = np.abs(values)
    if dst in ("int8", "uint8"):
        values = values[np.abs(values) < 128]
    a = values.astype(NARROW[src])
    out = np.zeros(a.size, dst)
    func = _unary(src, dst, a.size, f'T.Cast("{dst}", A[i])')
    (_, expected), (_, actual) = _run_both(func, a, out)
    np.testing.assert_array_equal(actual, expected)
    np.testing.assert_array_equal(actual, a.astype(np.float64).astype(dst))


def _edge_values(dtype: np.dtype, rng) -> np.ndarray:
    info = ml_dtypes.finfo(dtype)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0, 10.0, -10.0, 0.1, 1e-3, np.inf, -np.inf,
             np.nan, float(info.max), -float(info.max), float(info.smallest_subnormal),
             -float(info.smallest_subnormal), float(info.smallest_normal), 88.0, 11.5, -11.5]
    spread = rng.uniform(-4, 4, 40).tolist() + (10.0 ** rng.uniform(-6, 4, 40)).tolist()
    return np.array(edges + spread).astype(dtype)


UNARY = ["exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf",
         "sigmoid", "fabs", "floor", "ceil", "round", "nearbyint", "trunc"]
BINARY = ["pow", "atan2", "hypot", "fmod", "copysign", "nextafter"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_unary_math_intrinsic_runs_and_matches_the_interpreter(dtype):
    rng = np.random.default_rng(0)
    a = _edge_values(NARROW[dtype], rng)
    body = "\n".join(f'        B{k}[i] = T.{name}(A[i])' for k, name in enumerate(UNARY))
    outs = ", ".join(f'B{k}: T.Buffer(({a.size},), "{dtype}")' for k in range(len(UNARY)))
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({a.size},), "{dtype}"), {outs}):
    for i in range({a.size}):
{body}
''')
    outputs = [np.zeros(a.size, NARROW[dtype]) for _ in UNARY]
    with np.errstate(all="ignore"):
        (_, *expected), (_, *actual) = _run_both(func, a, *outputs)
    for name, x, y in zip(UNARY, expected, actual):
        assert_same_values(x, y, f"T.{name} on {dtype}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_binary_math_intrinsic_runs_and_matches_the_interpreter(dtype):
    rng = np.random.default_rng(1)
    x = _edge_values(NARROW[dtype], rng)
    a, c = np.repeat(x, x.size), np.tile(x, x.size)
    body = "\n".join(f'        B{k}[i] = T.{name}(A[i], C[i])' for k, name in enumerate(BINARY))
    outs = ", ".join(f'B{k}: T.Buffer(({a.size},), "{dtype}")' for k in range(len(BINARY)))
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({a.size},), "{dtype}"), C: T.Buffer(({a.size},), "{dtype}"), {outs}):
    for i in range({a.size}):
{body}
''')
    outputs = [np.zeros(a.size, NARROW[dtype]) for _ in BINARY]
    with np.errstate(all="ignore"):
        (_, _, *expected), (_, _, *actual) = _run_both(func, a, c, *outputs)
    for name, e, g in zip(BINARY, expected, actual):
        assert_same_values(e, g, f"T.{name} on {dtype}")
    k = BINARY.index("nextafter")
    # C's nextafter returns y when x == y (numpy's float16 one returns x)
    with np.errstate(all="ignore"):
        reference = np.where(a == c, c, np.nextafter(a, c))
    assert_same_values(reference, actual[k], f"nextafter on {dtype} against numpy")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_arithmetic_matches_the_interpreter_bit_for_bit(dtype):
    rng = np.random.default_rng(2)
    x = _edge_values(NARROW[dtype], rng)
    a, c = np.repeat(x, x.size), np.tile(x, x.size)
    ops = ["A[i] + C[i]", "A[i] - C[i]", "A[i] * C[i]", "A[i] / C[i]", "T.min(A[i], C[i])",
           "T.max(A[i], C[i])", "A[i] * C[i] + A[i]", "T.truncmod(A[i], C[i])",
           "T.floordiv(A[i], C[i])", "T.floormod(A[i], C[i])", f"A[i] * T.{dtype}(0.1)",
           "T.Select(A[i] < C[i], A[i], C[i])"]
    body = "\n".join(f'        B{k}[i] = {op}' for k, op in enumerate(ops))
    outs = ", ".join(f'B{k}: T.Buffer(({a.size},), "{dtype}")' for k in range(len(ops)))
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({a.size},), "{dtype}"), C: T.Buffer(({a.size},), "{dtype}"), {outs}):
    for i in range({a.size}):
{body}
''')
    outputs = [np.zeros(a.size, NARROW[dtype]) for _ in ops]
    with np.errstate(all="ignore"):
        (_, _, *expected), (_, _, *actual) = _run_both(func, a, c, *outputs)
    for op, e, g in zip(ops, expected, actual):
        assert_same_values(e, g, f"{op} on {dtype}")
    # + - * / round once from the exact result, as ml_dtypes and numpy do
    with np.errstate(all="ignore"):
        wide_a, wide_c = a.astype(np.float64), c.astype(np.float64)
        for k, op in enumerate([np.add, np.subtract, np.multiply, np.divide]):
            assert_same_values(op(wide_a, wide_c).astype(NARROW[dtype]), actual[k], f"{op.__name__}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_scalar_parameters_of_16_bit_floats_build_and_run(dtype):
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer((4,), "{dtype}"), B: T.Buffer((4,), "{dtype}"), s: T.{dtype}, h: T.float16,
         g: T.bfloat16):
    for i in range(4):
        B[i] = A[i] * s + T.Cast("{dtype}", h) - T.Cast("{dtype}", g)
''')
    rt = tirfun.build(func)
    a = np.array([1.0, -2.5, 0.125, 3.0], NARROW[dtype])
    info = ml_dtypes.finfo(NARROW[dtype])
    cases = [(1.5, 0.25, -0.5), (0.1, 1e-7, 1e-40), (float(info.max), 65504.0, 3e38),
             (np.inf, -np.inf, np.nan), (-0.0, 0.0, -0.0), (1 / 3, 70000.0, 1e39),
             (ml_dtypes.bfloat16(0.3), np.float16(0.7), 2)]
    for s, h, g in cases:
        expected, actual = np.zeros(4, NARROW[dtype]), np.zeros(4, NARROW[dtype])
        with np.errstate(all="ignore"):
            interp_run(func, a, expected, s, h, g)
        rt(a, actual, s, h, g)
        assert_same_values(expected, actual, f"scalars {s}, {h}, {g}")


def test_bfloat16_arrays_pass_through_nd_array_and_back():
    func = _unary("bfloat16", "bfloat16", 3, "A[i] + A[i]")
    a = tirfun.nd.array([1.5, -3.0, 0.3], dtype="bfloat16")
    b = tirfun.nd.empty((3,), "bfloat16")
    tirfun.build(func)(a, b)
    assert b.numpy().dtype == BF16
    assert_same_bits(np.array([3.0, -6.0, 0.6], np.float64).astype(BF16) * 0 + a.numpy() * 2,
                     b.numpy(), "doubling")
    with pytest.raises(tirfun.ArgumentError, match="bfloat16"):
        tirfun.build(func)(np.zeros(3, np.uint16), np.zeros(3, BF16))


def test_a_call_to_a_missing_function_fails_the_build_not_the_call():
    func = from_source('''@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = T.call_extern("float32", "tirfun_test_no_such_function", A[i])
''')
    with pytest.raises(BuildError, match="tirfun_test_no_such_function"):
        tirfun.build(func)


VECTOR_OPS = ["A[k] + C[k]", "A[k] * C[k]", "A[k] / C[k]", "T.exp(A[k])", "T.tanh(A[k])",
              "T.sqrt(A[k])", "T.floordiv(A[k], C[k])", "T.nextafter(A[k], C[k])",
              "T.max(A[k], C[k])", "T.ldexp(A[k], N[k])", "T.Cast('{dt}', N[k] * 4097)",
              "T.Cast('{dt}', T.Cast('float32', A[k]) * T.float32(1.001))"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_vectorized_16_bit_float_code_matches_the_interpreter(dtype):
    rng = np.random.default_rng(3)
    x = _edge_values(NARROW[dtype], rng)
    n = (x.size * 3 // 16) * 16
    a, c = rng.choice(x, n), rng.choice(x, n)
    exps = rng.integers(-30, 30, n).astype(np.int32)
    ops = [op.format(dt=dtype) for op in VECTOR_OPS]
    body = "\n".join(f'            B{k}[j * 16 + i] = {op}'.replace("[k]", "[j * 16 + i]")
                     for k, op in enumerate(ops))
    outs = ", ".join(f'B{k}: T.Buffer(({n},), "{dtype}")' for k in range(len(ops)))
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({n},), "{dtype}"), C: T.Buffer(({n},), "{dtype}"), N: T.Buffer(({n},), "int32"),
         {outs}):
    for j in range({n // 16}):
        for i in T.vectorized(16):
{body}
''')
    outputs = [np.zeros(n, NARROW[dtype]) for _ in ops]
    with np.errstate(all="ignore"):
        (_, _, _, *expected), (_, _, _, *actual) = _run_both(func, a, c, exps, *outputs)
    for op, e, g in zip(ops, expected, actual):
        assert_same_values(e, g, f"vectorized {op} on {dtype}")


def test_the_16_bit_float_helpers_are_exact_where_the_cpu_has_no_conversions():
    """On a baseline x86-64 (no F16C) LLVM calls __extendhfsf2 and
    __truncsfhf2 for every half conversion; tirfun's helpers must give
    exactly what numpy does, NaN payloads included."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the baseline CPU named here is x86-64's")
    func = from_source('''@T.prim_func
def main(A: T.Buffer((65536,), "float16"), B: T.Buffer((65536,), "float32"),
         C: T.Buffer((65536,), "float16"), D: T.Buffer((65536,), "bfloat16")):
    for i in range(65536):
        B[i] = T.Cast("float32", A[i])
        C[i] = T.Cast("float16", B[i] * T.float32(1.0001))
        D[i] = T.Cast("bfloat16", B[i] * T.float32(1.0001))
''')
    rt = tirfun.build(func, target="llvm -mcpu=x86-64")
    assert "__extendhfsf2" in rt.get_source("asm") and "__truncsfhf2" in rt.get_source("asm")
    a = _all_patterns(np.dtype("float16"))
    b, c, d = np.zeros(a.size, np.float32), np.zeros(a.size, np.float16), np.zeros(a.size, BF16)
    rt(a, b, c, d)
    assert_same_bits(a.astype(np.float32), b, "half -> float")
    with np.errstate(all="ignore"):
        scaled = a.astype(np.float32) * np.float32(1.0001)
        assert_same_bits(scaled.astype(np.float16), c, "float -> half")
        # ml_dtypes makes every NaN its canonical one; the hardware keeps payloads
        assert_same_values(scaled.astype(BF16), d, "float -> bfloat16")


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
@pytest.mark.parametrize("src", ["float64", "float32"])
def test_vectorized_narrowing_rounds_bit_for_bit(src, dst):
    values = _rounding_cases(NARROW[dst])
    with np.errstate(over="ignore"):
        values = values.astype(src)
    if src == "float32":
        values = np.concatenate([values, np.nextafter(values, np.float32(np.inf))])
    n = (values.size // 16) * 16
    a = values[:n]
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({n},), "{src}"), B: T.Buffer(({n},), "{dst}")):
    for j in range({n // 16}):
        for i in T.vectorized(16):
            B[j * 16 + i] = T.Cast("{dst}", A[j * 16 + i])
''')
    out = np.zeros(n, NARROW[dst])
    tirfun.build(func)(a, out)
    with np.errstate(over="ignore", invalid="ignore"):
        assert_same_bits(a.astype(NARROW[dst]), out, f"vectorized {src} -> {dst}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nextafter_of_computed_16_bit_floats_builds_and_matches_the_interpreter(dtype):
    # found by the soak: the sign of a computed bfloat taken from its bits
    # (nextafter from zero goes toward y's sign) made LLVM 22's x86
    # instruction selection assert; the bits go through a one-lane vector
    rng = np.random.default_rng(3)
    x = _edge_values(NARROW[dtype], rng)
    a, c = np.repeat(x, x.size), np.tile(x, x.size)
    func = from_source(f'''@T.prim_func
def main(A: T.Buffer(({a.size},), "{dtype}"), C: T.Buffer(({a.size},), "{dtype}"),
         B: T.Buffer(({a.size},), "{dtype}"), D: T.Buffer(({a.size},), "{dtype}")):
    for i in range({a.size}):
        B[i] = T.nextafter(T.min(A[i], T.{dtype}(1.0)), T.min(C[i], A[i]))
        D[i] = T.nextafter(T.Cast("{dtype}", A[i] < C[i]), A[i] + C[i])
''')
    outputs = [np.zeros(a.size, NARROW[dtype]) for _ in range(2)]
    with np.errstate(all="ignore"):
        (_, _, *expected), (_, _, *actual) = _run_both(func, a, c, *outputs)
    for e, g in zip(expected, actual):
        assert_same_values(e, g, f"nextafter of computed {dtype} values")
