"""The intrinsics the interpreter knows, as Python functions on scalars.

Float intrinsics take and return Python floats (double precision); the
code generator rounds the result to the call's dtype. The fast path is the
``math`` module; inputs where ``math`` raises (``log(0)``, ``exp(1000)``,
``sqrt(-1)``...) fall back to numpy, which returns the IEEE result
(an infinity or NaN) as compiled code would.
"""

from __future__ import annotations

import math

import numpy as np

from ..numpy_dtypes import bfloat16
from .semantics import INF, NAN, fdiv, round_f32


def _ieee(fast, slow):
    """A function computing ``fast(*args)``, or ``slow`` (numpy) where
    ``fast`` raises because the IEEE result is an infinity or NaN."""
    def f(*args):
        try:
            return fast(*args)
        except (ValueError, OverflowError, ZeroDivisionError):
            with np.errstate(all="ignore"):
                return float(slow(*(np.float64(a) for a in args)))
    f.__name__ = getattr(fast, "__name__", "intrinsic")
    return f


def _finite_only(fn):
    """Rounding functions return their argument unchanged when it is not
    finite, and a result with the argument's sign (``floor(-0.0)`` and
    ``ceil(-0.5)`` are ``-0.0``, as in IEEE 754; Python's give ints)."""
    def f(x):
        if x != x or x in (INF, -INF):
            return x
        return math.copysign(float(fn(x)), x)
    return f


def _sigmoid(x: float) -> float:
    # TVM's definition, 1 / (1 + exp(-x)), which the compiled code computes
    # too: the same formula rounds the same way. exp(-x) overflowing to
    # infinity gives the limit 0.
    try:
        e = math.exp(-x)
    except OverflowError:
        return 0.0
    return 1.0 / (1.0 + e)


def _rsqrt(x: float) -> float:
    return fdiv(1.0, math.sqrt(x))


def _c_function(name: str, arity: int):
    """The C library's double function ``name`` (what compiled code calls),
    or None where the C library has none."""
    import ctypes
    import ctypes.util

    path = ctypes.util.find_library("m")
    try:
        fn = getattr(ctypes.CDLL(path), name) if path else None
    except (OSError, AttributeError):
        return None
    if fn is not None:
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_double] * arity
    return fn


#: the C library's exp10 and hypot: compiled code calls them, and Python
#: has no exp10 (pow(10, x) is up to 2 ulps away) and its own hypot (more
#: accurate than the C library's), so the interpreter calls the same ones
#: and the two agree bit for bit
C_EXP10 = _c_function("exp10", 1)
C_HYPOT = _c_function("hypot", 2)


def _exp10(x: float) -> float:
    if C_EXP10 is not None:
        return C_EXP10(x)
    return math.pow(10.0, x)


def _hypot(x: float, y: float) -> float:
    if C_HYPOT is not None:
        return C_HYPOT(x, y)
    return math.hypot(x, y)


def _round_half_even(x: float) -> float:
    return float(round(x))


#: float -> float intrinsics, by TIR name (``tir.<name>``)
FLOAT_UNARY = {
    "exp": _ieee(math.exp, np.exp),
    "exp2": _ieee(math.exp2, np.exp2),  # the C library's exp2, as compiled code calls
    "exp10": _ieee(_exp10, lambda x: np.power(10.0, x)),
    "log": _ieee(math.log, np.log),
    "log2": _ieee(math.log2, np.log2),
    "log10": _ieee(math.log10, np.log10),
    "log1p": _ieee(math.log1p, np.log1p),
    "sqrt": _ieee(math.sqrt, np.sqrt),
    "rsqrt": _ieee(_rsqrt, lambda x: 1.0 / np.sqrt(x)),
    "sin": _ieee(math.sin, np.sin),
    "cos": _ieee(math.cos, np.cos),
    "tan": _ieee(math.tan, np.tan),
    "sinh": _ieee(math.sinh, np.sinh),
    "cosh": _ieee(math.cosh, np.cosh),
    "tanh": _ieee(math.tanh, np.tanh),
    "asin": _ieee(math.asin, np.arcsin),
    "acos": _ieee(math.acos, np.arccos),
    "atan": _ieee(math.atan, np.arctan),
    "asinh": _ieee(math.asinh, np.arcsinh),
    "acosh": _ieee(math.acosh, np.arccosh),
    "atanh": _ieee(math.atanh, np.arctanh),
    "erf": math.erf,
    "sigmoid": _ieee(_sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x))),
    "fabs": abs,
    "floor": _finite_only(math.floor),
    "ceil": _finite_only(math.ceil),
    # TIR rounds halfway cases to even, as nearbyint does in the default mode
    "round": _finite_only(_round_half_even),
    "nearbyint": _finite_only(_round_half_even),
    "trunc": _finite_only(math.trunc),
}

#: (float, float) -> float intrinsics
FLOAT_BINARY = {
    "atan2": _ieee(math.atan2, np.arctan2),
    "pow": _ieee(math.pow, np.power),
    "fmod": _ieee(math.fmod, np.fmod),
    "hypot": _ieee(_hypot, np.hypot),
    "copysign": math.copysign,
    "nextafter": math.nextafter,
}

#: float -> bool
FLOAT_PREDICATES = {
    "isnan": math.isnan,
    "isinf": math.isinf,
    "isfinite": math.isfinite,
}


def nextafter_f32(x: float, y: float) -> float:
    """The float32 next to ``x`` in the direction of ``y`` (``y`` when they
    are equal, as C's nextafter: ``nextafter(0.0, -0.0)`` is ``-0.0``)."""
    if x == y:
        return y
    return float(np.nextafter(np.float32(x), np.float32(y)))


def nextafter_f16(x: float, y: float) -> float:
    """The float16 next to ``x`` in the direction of ``y`` (``y`` if equal)."""
    if x == y:
        return y
    return float(np.nextafter(np.float16(x), np.float16(y)))


def nextafter_bf16(x: float, y: float) -> float:
    """The bfloat16 next to ``x`` in the direction of ``y`` (``y`` if equal)."""
    if x == y:
        return y
    t = bfloat16().type
    return float(np.nextafter(t(x), t(y)))


def ldexp(x: float, e: int) -> float:
    try:
        return math.ldexp(x, e)
    except OverflowError:
        return math.copysign(INF, x)


def popcount(x: int, bits: int) -> int:
    """Set bits of ``x`` in a ``bits``-wide two's complement word."""
    return bin(x & ((1 << bits) - 1)).count("1")


def reinterpret(x, src: str, dst: str):
    """The bits of ``x``, a value of ``src``, read as a value of ``dst`` of
    the same size (``T.reinterpret``): an int for integer types, a float
    for float types."""
    from ..numpy_dtypes import numpy_dtype

    d = numpy_dtype(dst)
    return _scalar(_raw([x], src).view(d)[0], d)


def _raw(values: list, src: str):
    """``values`` of ``src`` as a numpy array of their bits' type."""
    import numpy as np

    from ..numpy_dtypes import numpy_dtype

    s = numpy_dtype(src)
    if s.kind in "iu":
        mask = (1 << (s.itemsize * 8)) - 1
        return np.array([v & mask for v in values], dtype=f"u{s.itemsize}")
    return np.array(values, dtype=s)


def _scalar(x, d):
    return int(x) if d.kind in "iub" else float(x)


def reinterpret_pack(values: list, src: str, dst: str):
    """The bits of several consecutive lanes of ``src`` read as one lane of
    ``dst`` (``T.reinterpret`` of ``uint8x4`` as ``int32``), little-endian
    as the CPU lays a vector out."""
    from ..numpy_dtypes import numpy_dtype

    d = numpy_dtype(dst)
    return _scalar(_raw(values, src).view(d)[0], d)


def reinterpret_part(x, src: str, dst: str, part: int):
    """Lane ``part`` of the lanes of ``dst`` that one lane ``x`` of ``src``
    holds (``T.reinterpret`` of ``int32x16`` as ``uint8x64``)."""
    from ..numpy_dtypes import numpy_dtype

    d = numpy_dtype(dst)
    return _scalar(_raw([x], src).view(d)[part], d)


def _signed(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def vpdpbusd(acc: int, a: int, b: int) -> int:
    """One lane of x86's ``vpdpbusd``: ``acc`` plus the products of the four
    unsigned bytes of ``a`` with the four signed bytes of ``b``, wrapping
    to 32 bits."""
    total = acc
    for k in range(4):
        total += ((a >> (8 * k)) & 0xFF) * _signed(b >> (8 * k), 8)
    return _signed(total, 32)


def pmaddubsw(a0: int, a1: int, b0: int, b1: int) -> int:
    """One lane of x86's ``pmaddubsw``: two unsigned bytes times two signed
    bytes, summed and saturated to 16 bits."""
    total = (a0 & 0xFF) * _signed(b0, 8) + (a1 & 0xFF) * _signed(b1, 8)
    return max(-32768, min(32767, total))


def pmaddwd(a0: int, a1: int, b0: int, b1: int) -> int:
    """One lane of x86's ``pmaddwd``: two pairs of 16-bit products summed,
    wrapping to 32 bits."""
    return _signed(_signed(a0, 16) * _signed(b0, 16) + _signed(a1, 16) * _signed(b1, 16), 32)


def clz(x: int, bits: int) -> int:
    """Leading zero bits of ``x`` in a ``bits``-wide word."""
    return bits - (x & ((1 << bits) - 1)).bit_length()


# C library functions accepted through ``T.call_extern``: name -> (intrinsic, arity)
EXTERN_FLOAT = {}
for _name in FLOAT_UNARY:
    if _name in ("sigmoid", "rsqrt", "exp10"):
        continue
    EXTERN_FLOAT[_name] = (_name, 1)
    EXTERN_FLOAT[_name + "f"] = (_name, 1)
for _name in FLOAT_BINARY:
    EXTERN_FLOAT[_name] = (_name, 2)
    EXTERN_FLOAT[_name + "f"] = (_name, 2)
EXTERN_FLOAT.update({"fmaxf": ("fmax", 2), "fmax": ("fmax", 2), "fminf": ("fmin", 2),
                     "fmin": ("fmin", 2)})


# LLVM intrinsics accepted through ``T.call_llvm_(pure_)intrin``: name ->
# (the TIR intrinsic with the same meaning, arity)
LLVM_NAMES = {f"llvm.{n}": (n, 1) for n in ("fabs", "sqrt", "exp", "exp2", "log", "log2", "log10",
                                              "sin", "cos", "floor", "ceil", "trunc",
                                              "nearbyint")}
LLVM_NAMES.update({"llvm.roundeven": ("round", 1), "llvm.rint": ("nearbyint", 1),
                   "llvm.pow": ("pow", 2), "llvm.copysign": ("copysign", 2),
                   "llvm.minnum": ("fmin", 2), "llvm.maxnum": ("fmax", 2),
                   "llvm.ctpop": ("popcount", 1), "llvm.ctlz": ("clz", 2)})


def fmax(a: float, b: float) -> float:
    """C's fmax: a NaN operand is ignored."""
    if a != a:
        return b
    if b != b:
        return a
    return a if a >= b else b


def fmin(a: float, b: float) -> float:
    """C's fmin: a NaN operand is ignored."""
    if a != a:
        return b
    if b != b:
        return a
    return a if a <= b else b


def helper_namespace() -> dict:
    """The intrinsics as the names compiled code refers to."""
    ns = {}
    for name, fn in FLOAT_UNARY.items():
        ns[f"h_{name}"] = fn
    for name, fn in FLOAT_BINARY.items():
        ns[f"h_{name}"] = fn
    for name, fn in FLOAT_PREDICATES.items():
        ns[f"h_{name}"] = fn
    ns.update(h_nextafter_f32=nextafter_f32, h_nextafter_f16=nextafter_f16,
              h_nextafter_bf16=nextafter_bf16, h_ldexp=ldexp,
              h_popcount=popcount, h_clz=clz, h_reinterpret=reinterpret, h_reinterpret_pack=reinterpret_pack,
              h_reinterpret_part=reinterpret_part, h_vpdpbusd=vpdpbusd,
              h_pmaddubsw=pmaddubsw, h_pmaddwd=pmaddwd, h_fmax=fmax, h_fmin=fmin, h_nan=NAN, h_inf=INF,
              h_round_f32=round_f32)
    return ns


__all__ = ["FLOAT_UNARY", "FLOAT_BINARY", "FLOAT_PREDICATES", "EXTERN_FLOAT", "LLVM_NAMES",
           "helper_namespace"]
