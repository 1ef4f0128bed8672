"""Math functions as inline polynomials in LLVM IR: the ``-math=fast`` target.

With ``-math=exact`` (the default) a math intrinsic calls the C library,
one lane at a time on vectors, and compiled code agrees with the
interpreter bit for bit. With ``-math=fast`` these functions of
``float32``, ``float16`` and ``bfloat16`` are computed inline instead, as
IR on the call's own type (vector or scalar alike, so a result never
depends on whether its loop was vectorized), which LLVM keeps in vector
registers:

===========  ==========================================================
``exp``      ``2**k * (1 + q)``, ``q = exp(r) - 1`` by a polynomial
``exp2``     the same with ``k`` the nearest integer to ``x``
``log``      ``e ln 2 + 2 atanh(s)``, ``s = (m - 1) / (m + 1)``
``log2``     ``e + 2 atanh(s) / ln 2``
``log1p``    ``log(u) * x / (u - 1)``, ``u = 1 + x`` (``x`` when ``u == 1``)
``tanh``     ``u / (u + 2)``, ``u = expm1(2|x|)``, with the sign of ``x``
``sigmoid``  ``1 / (1 + exp(-x))``, TVM's definition, as the interpreter
``sin``      ``+-sin(r)`` or ``+-cos(r)``, ``x = k pi / 2 + r``, by ``k mod 4``
``cos``      the same, one quadrant on
``erf``      ``a E(a**2)`` below 1, a polynomial per piece up to 4, then 1
===========  ==========================================================

How. The argument is widened to double (exact) and everything is computed
in double, then rounded once to the call's type, as the exact path rounds
its double result. ``exp`` reduces ``x`` to ``r = x - k ln 2`` with
``|r| <= ln 2 / 2``, ``ln 2`` split in two so that ``k * LN2_HI`` is exact;
``exp(r) - 1 = r + r**2 P(r)``. ``log`` splits ``x = 2**e * m`` with ``m``
in [sqrt(1/2), sqrt(2)) on the bits and uses
``log(m) = 2s + 2s * s**2 Q(s**2)``. ``sin`` and ``cos`` reduce ``x`` by
``k pi / 2`` with ``pi / 2`` in three parts (Cody and Waite) to ``|r| <=
pi / 4`` and use ``sin(r) = r + r**3 S(r**2)``, ``cos(r) = 1 - r**2 / 2 +
r**4 C(r**2)``; a vector with a lane beyond ``2**19`` (or infinite, or
NaN) calls the C library for the whole vector instead, since reducing such
arguments exactly needs many more digits of pi. ``P`` (degree 8), ``Q``
(5), ``S`` (5), ``C`` (4) and ``erf``'s ``E`` (10) and four pieces (12
each, on [1, 1.75, 2.5, 3.25, 4]) are minimax polynomials computed by
:mod:`tirfun.lower.vecmath_fit`; their relative errors are 2**-46.0,
2**-43.7, 2**-48.5, 2**-44.2 and at most 2**-44.9 for ``erf``'s.

Error bound: at most 1 ulp from the interpreter, for every argument and
each of the three types. The double result carries a relative error below
2**-44 (for the reduced functions the polynomial's share is at most
2**-48, since ``r**2 P(r)`` is under 1/16 of the value; ``erf``'s
polynomials give the value itself, to 2**-44.9; each of the few roundings
in double adds about 2**-53). The true value lies between two neighbouring
floats ``a`` and ``b`` of the result type; a value that close to it (any
error below half their spacing, 2**-25 of the value for float32, would
do) rounds to ``a`` or to ``b``, and so does the interpreter's (the C
library's double result, rounded), so the two are equal or one ulp apart.
They differ only where the true value lies within 2**-44 of the midpoint
of ``a`` and ``b``, which is rare: on every 97th float32 bit
pattern for ``exp`` and ``log`` (44.7 million arguments), every 997th for
the others, every pattern near the thresholds where results turn
infinite, zero or subnormal, and for ``sin`` and ``cos`` the floats
nearest every multiple of ``pi / 2`` up to ``2**19``, no result differed
from the exact path's at all (``tests/unit/test_vecmath.py``), nor on any
float16 or bfloat16; of the 18.7 million float32s in [0.9, 4.1), where
``erf``'s pieces meet, one ``erf`` is 1 ulp apart.

Special values are exact, as the C library gives them: NaN in, NaN out;
``exp(+inf) = +inf``, ``exp(-inf) = +0``; ``log(+0) = log(-0) = -inf``,
``log`` of a negative number is NaN, ``log(+inf) = +inf``;
``tanh(-0.0) = -0.0``, ``tanh(+-inf) = +-1``; ``log1p(-1) = -inf``,
``log1p(-0.0) = -0.0``; ``sin(-0.0) = erf(-0.0) = -0.0``. Overflow
and underflow happen in the final rounding from double, where the exact
path's happen too (checked on every bit pattern around each threshold;
arguments of ``exp`` and ``exp2`` are clamped to [-200, 200] first, which
changes no rounded result: ``exp(200)`` is beyond float32's range and
``exp(-200)`` below its smallest subnormal). Subnormal float32 arguments
and results are ordinary doubles here and need no care.

Only arguments representable in float32 are computed this way; ``float64``
calls keep the C library (a double result within 1 ulp would need
extra-precise reductions and longer polynomials: not cheap).
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

I64 = ir.IntType(64)

#: the functions computed inline under ``-math=fast``
FAST = frozenset({"exp", "exp2", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos",
                  "erf"})

#: ``exp(r) - 1 - r = r**2 * P(r)`` on [-ln 2 / 2, ln 2 / 2], lowest first
EXP_POLY = tuple(float.fromhex(c) for c in (
    "0x1.ffffffffffff4p-2", "0x1.5555555553b88p-3", "0x1.555555555abd8p-5",
    "0x1.1111111c42ee3p-7", "0x1.6c16c1551a8c3p-10", "0x1.a019adb6732c3p-13",
    "0x1.a01a2dea2e21ep-16", "0x1.72c716647d698p-19", "0x1.2818cd6f4935dp-22"))
#: ``atanh(s) = s + s**3 * Q(s**2)`` for ``s**2`` in [0, 17 - 12 sqrt 2], lowest first
LOG_POLY = tuple(float.fromhex(c) for c in (
    "0x1.55555555553b6p-2", "0x1.9999999b882a0p-3", "0x1.2492462922bd8p-3",
    "0x1.c71fce3efd065p-4", "0x1.7382a4585b496p-4", "0x1.546d385692adbp-4"))
#: ``sin(r) = r + r**3 * S(r**2)`` for |r| <= pi / 4, lowest first
SIN_POLY = tuple(float.fromhex(c) for c in (
    "-0x1.5555555555546p-3", "0x1.111111110f84ap-7", "-0x1.a01a019c45760p-13",
    "0x1.71de35c734a58p-19", "-0x1.ae5eba1ee55f3p-26", "0x1.5db1238c803e3p-33"))
#: ``cos(r) = 1 - r**2 / 2 + r**4 * C(r**2)`` for |r| <= pi / 4, lowest first
COS_POLY = tuple(float.fromhex(c) for c in (
    "0x1.5555555555435p-5", "-0x1.6c16c16b603a6p-10", "0x1.a019ff516845fp-16",
    "-0x1.27e25dd0dfd21p-22", "0x1.1c812797982e4p-29"))
#: the relative errors of the polynomials (from vecmath_fit)
EXP_POLY_ERROR = 1.43e-14
LOG_POLY_ERROR = 6.93e-14
SIN_POLY_ERROR = 2.56e-15
COS_POLY_ERROR = 4.84e-14
#: ``erf(a) = a * E(a**2)`` for ``a`` in [0, 1], lowest first
ERF_SMALL_POLY = tuple(float.fromhex(c) for c in (
    "0x1.20dd750429b6dp+0", "-0x1.812746b0376fep-2", "0x1.ce2f21a025bedp-4",
    "-0x1.b82ce30ae9e45p-6", "0x1.565bcbff64ea6p-8", "-0x1.c02d879e4cd31p-11",
    "0x1.f99e9ca95a20fp-14", "-0x1.f486022567c70p-17", "0x1.b6ac7141907b9p-20",
    "-0x1.498ef31280a0fp-23", "0x1.4f7ad9f8e82e5p-27"))
#: ``erf(c + u h)`` on each piece of ERF_EDGES, in ``u`` in [-1, 1], lowest first
ERF_EDGES = (1.0, 1.75, 2.5, 3.25, 4.0)
ERF_PIECE_POLYS = (
    tuple(float.fromhex(c) for c in (
        "0x1.e5768c3b4a3cep-1", "0x1.05ac305339b1fp-4", "-0x1.0dd991d5cc216p-5",
        "0x1.10ea966c92f28p-7", "-0x1.3c3af7157aa17p-11", "-0x1.dbfbfc480aa7ap-13",
        "0x1.027d1f6890a6fp-14", "-0x1.8d2b6cd7ce09ep-20", "-0x1.bf52d9d281f02p-20",
        "0x1.efe625fa8dbc5p-23", "0x1.331deba89856fp-26", "-0x1.c60d38a14ea68p-28",
        "0x1.77d23f800a036p-33")),
    tuple(float.fromhex(c) for c in (
        "0x1.fea4218d65954p-1", "0x1.2f49badabed71p-8", "-0x1.e35d81ccb498bp-9",
        "0x1.c8b586d697cfbp-10", "-0x1.114f1f1821982p-11", "0x1.84a8d936759d3p-14",
        "-0x1.53eb787a02835p-18", "-0x1.05a4f15b9c4e2p-19", "0x1.227258808b619p-21",
        "-0x1.6c2caea91b52bp-25", "-0x1.d1c988dbe3686p-28", "0x1.01cbfa5cb8f33p-29",
        "-0x1.aecef094e23b5p-34")),
    tuple(float.fromhex(c) for c in (
        "0x1.fff9ba420e832p-1", "0x1.c87d57986af9fp-14", "-0x1.ec27226ff3d18p-14",
        "0x1.4c5640bc3d1cbp-14", "-0x1.3829529a9784ep-15", "0x1.aa508c7bf294ap-17",
        "-0x1.a987c8370900cp-19", "0x1.27efad3bc0845p-21", "-0x1.c79157b269761p-25",
        "-0x1.47481ab4864fdp-29", "0x1.f9f57071967a0p-30", "-0x1.43303622e00f6p-32",
        "0x1.bf2c54ec4358bp-37")),
    tuple(float.fromhex(c) for c in (
        "0x1.fffff618c3da7p-1", "0x1.be1fa9778a3e8p-21", "-0x1.2f3985337cf4fp-20",
        "0x1.0857621260b43p-20", "-0x1.4ae96482c3c0cp-21", "0x1.3b425ba2e4c43p-22",
        "-0x1.d82248c3ece70p-24", "0x1.1a4ae6df6a5dep-25", "-0x1.0dec3c0ac56f7p-27",
        "0x1.95d7d25185849p-30", "-0x1.c2c8d8d8cb3ccp-33", "0x1.09e64c5ae7bbap-36",
        "0x1.fbf6258b2a03fp-41")),
)
ERF_POLY_ERROR = 3.13e-14

# ln 2 to 60 digits, split into a double with 24 trailing zero bits (so
# that k * LN2_HI is exact for |k| < 2**24) and the double nearest the rest
_LN2 = Fraction("0.693147180559945309417232121458176568075500134360255254120680")
LN2_HI = float.fromhex(float(_LN2).hex()[:11] + "p-1")
LN2_LO = float(_LN2 - Fraction(LN2_HI))
LN2 = float(_LN2)
LOG2E = float(1 / _LN2)
#: adding it to a double of magnitude below 2**51 rounds that to an
#: integer (ties to even) held in the low bits of the sum
ROUNDER = float.fromhex("0x1.8p52")
# pi / 2 to 60 digits in three parts of 33 significant bits (so that k
# times each is exact for |k| < 2**20) and a rest
_PIO2 = Fraction("3.14159265358979323846264338327950288419716939937510582097494459") / 2


def _head(x: Fraction, bits: int) -> float:
    """``x`` truncated to ``bits`` significant bits (as a double)."""
    shift = bits - 1 - math.floor(math.log2(abs(x)))
    return float(Fraction(math.floor(x * 2 ** shift), 2 ** shift))


PIO2_1 = _head(_PIO2, 33)
PIO2_2 = _head(_PIO2 - Fraction(PIO2_1), 33)
PIO2_3 = float(_PIO2 - Fraction(PIO2_1) - Fraction(PIO2_2))
TWO_OVER_PI = float(1 / _PIO2)
#: sin and cos of arguments beyond this (and of inf and NaN) call the C
#: library: k = rint(x * 2 / pi) stays below 2**20 up to it
TRIG_LIMIT = 2.0 ** 19
#: the bits of sqrt(1/2): ``m`` is taken in [sqrt(1/2), sqrt(2))
SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
#: float32 arguments of exp beyond this give inf or 0 once rounded
EXP_CLAMP = 200.0


class _Ops:
    """Arithmetic on doubles (scalar or vector of one lane count) and on
    their 64-bit patterns, with constants splat to the right type."""

    def __init__(self, b: ir.IRBuilder, t: ir.Type):
        self.b = b
        self.t = t
        lanes = t.count if isinstance(t, ir.VectorType) else 0
        self.it = ir.VectorType(I64, lanes) if lanes else I64

    def c(self, value: float) -> ir.Constant:
        return _splat(self.t, value)

    def ci(self, value: int) -> ir.Constant:
        return _splat(self.it, value)

    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def muladd(self, x, y, z):
        """``x * y + z``, fused where the CPU has it (either is within the
        error bound: only polynomial steps use it)."""
        fn = _declare(self.b.module, f"llvm.fmuladd.{_suffix(self.t)}", self.t, [self.t] * 3)
        return self.b.call(fn, [x, y, z])

    def horner(self, x, coefficients):
        acc = self.c(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.muladd(acc, x, self.c(c))
        return acc

    def select(self, cond, x, y):
        return self.b.select(cond, x, y)

    def lt(self, x, y):
        return self.b.fcmp_ordered("<", x, y)

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", x, y)

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", x, y)

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def fabs(self, x):
        return self.double(self.b.and_(self.bits(x), self.ci((1 << 63) - 1)))

    @property
    def bool_type(self) -> ir.Type:
        return ir.VectorType(ir.IntType(1), self.t.count) if isinstance(self.t, ir.VectorType) \
            else ir.IntType(1)

    def bits(self, x):
        return self.b.bitcast(x, self.it)

    def double(self, bits):
        return self.b.bitcast(bits, self.t)

    def clamp(self, x, lo: float, hi: float):
        """``x`` limited to [lo, hi]; NaN stays NaN."""
        x = self.select(self.gt(x, self.c(hi)), self.c(hi), x)
        return self.select(self.lt(x, self.c(lo)), self.c(lo), x)

    def round_int(self, x):
        """(the nearest integer to ``x`` as a double, its bits' low word):
        ``|x| < 2**51``."""
        shifted = self.add(x, self.c(ROUNDER))
        return self.sub(shifted, self.c(ROUNDER)), self.bits(shifted)

    def pow2(self, k_bits):
        """``2**k`` from :meth:`round_int`'s bits of ``k``, |k| <= 1022: the
        shift keeps ``k``'s two's complement low bits as the exponent."""
        return self.double(self.b.add(self.b.shl(k_bits, self.ci(52)), self.ci(1023 << 52)))


def _splat(t: ir.Type, value) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [ir.Constant(t.element, value)] * t.count)
    return ir.Constant(t, value)


def _suffix(t: ir.Type) -> str:
    return f"v{t.count}f64" if isinstance(t, ir.VectorType) else "f64"


def _declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name=name)


def _exp_parts(o: _Ops, x):
    """``(2**k, q)`` with ``exp(x) = 2**k * (1 + q)``, for |x| <= 700."""
    k, k_bits = o.round_int(o.mul(x, o.c(LOG2E)))
    # k * LN2_HI is exact and cancels against x exactly; k * LN2_LO is tiny
    r = o.sub(o.sub(x, o.mul(k, o.c(LN2_HI))), o.mul(k, o.c(LN2_LO)))
    return o.pow2(k_bits), _expm1_reduced(o, r)


def _expm1_reduced(o: _Ops, r):
    """``exp(r) - 1 = r + r**2 P(r)`` for |r| <= ln 2 / 2 (relative error
    of the tail, not of ``exp``: accurate for tiny ``r`` too)."""
    return o.muladd(o.mul(r, r), o.horner(r, EXP_POLY), r)


def _without_nan(o: _Ops, x):
    """``x`` with NaN lanes replaced by 0, so that no integer conversion
    ever sees a NaN; the caller puts the NaN back."""
    return o.select(o.isnan(x), o.c(0.0), x)


def _exp(o: _Ops, x):
    xs = o.clamp(_without_nan(o, x), -EXP_CLAMP, EXP_CLAMP)
    scale, q = _exp_parts(o, xs)
    return o.select(o.isnan(x), x, o.mul(o.add(q, o.c(1.0)), scale))


def _exp2(o: _Ops, x):
    xs = o.clamp(_without_nan(o, x), -EXP_CLAMP, EXP_CLAMP)
    k, k_bits = o.round_int(xs)
    r = o.sub(xs, k)  # exact: x has at most 24 significant bits
    q = _expm1_reduced(o, o.mul(r, o.c(LN2)))
    return o.select(o.isnan(x), x, o.mul(o.add(q, o.c(1.0)), o.pow2(k_bits)))


def _log_parts(o: _Ops, x):
    """``(e, log(m))`` with ``x = 2**e * m``, ``m`` in [sqrt(1/2), sqrt(2)),
    for positive finite normal doubles ``x``."""
    b = o.b
    bits = o.bits(x)
    e_bits = b.ashr(b.sub(bits, o.ci(SQRT_HALF_BITS)), o.ci(52))
    m = o.double(b.sub(bits, b.shl(e_bits, o.ci(52))))
    # e as a double without an int-to-float conversion (AVX2 has none for i64)
    e = o.sub(o.double(b.add(e_bits, o.bits(o.c(ROUNDER)))), o.c(ROUNDER))
    f = o.sub(m, o.c(1.0))  # exact
    s = o.div(f, o.add(m, o.c(1.0)))
    z = o.mul(s, s)
    two_s = o.add(s, s)
    log_m = o.muladd(o.mul(two_s, z), o.horner(z, LOG_POLY), two_s)
    return e, log_m


def _log_special(o: _Ops, x, finite):
    """The C library's log at the edges: NaN for NaN and negative
    arguments, -inf at zero (either sign), +inf at +inf."""
    out = o.select(o.eq(x, o.c(math.inf)), x, finite)
    out = o.select(o.eq(x, o.c(0.0)), o.c(-math.inf), out)
    return o.select(o.b.fcmp_unordered("<", x, o.c(0.0)), o.c(math.nan), out)


def _safe_positive(o: _Ops, x):
    """``x`` where it is a positive finite double, else 1 (the result for
    those lanes is chosen by :func:`_log_special`)."""
    ok = o.b.and_(o.gt(x, o.c(0.0)), o.lt(x, o.c(math.inf)))
    return o.select(ok, x, o.c(1.0))


def _log(o: _Ops, x):
    e, log_m = _log_parts(o, _safe_positive(o, x))
    return _log_special(o, x, o.muladd(e, o.c(LN2), log_m))


def _log2(o: _Ops, x):
    e, log_m = _log_parts(o, _safe_positive(o, x))
    return _log_special(o, x, o.muladd(log_m, o.c(LOG2E), e))


def _log1p(o: _Ops, x):
    u = o.add(x, o.c(1.0))
    e, log_m = _log_parts(o, _safe_positive(o, u))
    log_u = o.muladd(e, o.c(LN2), log_m)
    # u rounds 1 + x; x / (u - 1) corrects log(u) for that rounding
    corrected = o.mul(log_u, o.div(x, o.sub(u, o.c(1.0))))
    out = o.select(o.eq(u, o.c(1.0)), x, corrected)
    return _log1p_special(o, x, u, out)


def _log1p_special(o: _Ops, x, u, finite):
    """The C library's log1p at the edges: NaN below -1 (and for NaN),
    -inf at -1, +inf at +inf."""
    out = o.select(o.eq(x, o.c(math.inf)), x, finite)
    out = o.select(o.eq(u, o.c(0.0)), o.c(-math.inf), out)
    return o.select(o.b.fcmp_unordered("<", u, o.c(0.0)), o.c(math.nan), out)


#: tanh(x) rounds to +-1 in double beyond this
TANH_CLAMP = 20.0


def _tanh(o: _Ops, x):
    b = o.b
    sign = b.and_(o.bits(x), o.ci(-(1 << 63)))
    a = o.double(b.and_(o.bits(_without_nan(o, x)), o.ci((1 << 63) - 1)))
    a = o.select(o.gt(a, o.c(TANH_CLAMP)), o.c(TANH_CLAMP), a)
    scale, q = _exp_parts(o, o.add(a, a))
    # expm1(2a) = 2**k q + (2**k - 1): exact steps for small k, accurate near 0
    u = o.add(o.mul(scale, q), o.sub(scale, o.c(1.0)))
    t = o.div(u, o.add(u, o.c(2.0)))
    return o.select(o.isnan(x), x, o.double(b.or_(o.bits(t), sign)))


def _sigmoid(o: _Ops, x):
    e = _exp(o, o.b.fneg(x))
    return o.div(o.c(1.0), o.add(o.c(1.0), e))


def _sin_cos(o: _Ops, x, quadrant_shift: int):
    """``sin(x)`` (``quadrant_shift`` 0) or ``cos(x)`` (1) for |x| <=
    TRIG_LIMIT: ``x = k pi / 2 + r`` with ``|r| <= pi / 4``, and the
    quadrant ``k mod 4`` picks +-sin(r) or +-cos(r)."""
    b = o.b
    k, k_bits = o.round_int(o.mul(x, o.c(TWO_OVER_PI)))
    # Cody and Waite: each k * PIO2_i is exact, so r loses nothing to cancellation
    r = o.sub(o.sub(o.sub(x, o.mul(k, o.c(PIO2_1))), o.mul(k, o.c(PIO2_2))),
              o.mul(k, o.c(PIO2_3)))
    z = o.mul(r, r)
    sin_r = o.muladd(o.mul(z, r), o.horner(z, SIN_POLY), r)
    cos_r = o.muladd(o.mul(z, z), o.horner(z, COS_POLY), o.sub(o.c(1.0), o.mul(z, o.c(0.5))))
    q = b.add(k_bits, o.ci(quadrant_shift))
    odd = b.trunc(b.and_(q, o.ci(1)), o.bool_type)
    negative = b.trunc(b.lshr(b.and_(q, o.ci(2)), o.ci(1)), o.bool_type)
    v = o.select(odd, cos_r, sin_r)
    v = o.select(negative, b.fneg(v), v)
    # sin(-0.0) is -0.0, which r + (-0.0 * S) would make +0.0
    return o.select(o.eq(x, o.c(0.0)), x, v) if quadrant_shift == 0 else v


def _erf(o: _Ops, x):
    """``a E(a**2)`` for ``a = |x| < 1``, one of four polynomials up to 4,
    1 beyond (erf rounds to 1 in float32 from 3.92 on); the sign of ``x``."""
    b = o.b
    sign = b.and_(o.bits(x), o.ci(-(1 << 63)))
    a = o.fabs(_without_nan(o, x))
    small = o.mul(a, o.horner(o.mul(a, a), ERF_SMALL_POLY))
    # the piece holding a: its centre and half width, and its coefficients
    inner = ERF_EDGES[1:-1]
    beyond = [o.b.fcmp_ordered(">=", a, o.c(edge)) for edge in inner]

    def pick(values):
        out = o.c(values[0])
        for cond, v in zip(beyond, values[1:]):
            out = o.select(cond, o.c(v), out)
        return out

    edges = list(zip(ERF_EDGES, ERF_EDGES[1:]))
    centre = pick([(lo + hi) / 2 for lo, hi in edges])
    inverse_half = pick([2 / (hi - lo) for lo, hi in edges])
    u = o.mul(o.sub(a, centre), inverse_half)
    degree = len(ERF_PIECE_POLYS[0]) - 1
    acc = pick([p[degree] for p in ERF_PIECE_POLYS])
    for k in range(degree - 1, -1, -1):
        acc = o.muladd(acc, u, pick([p[k] for p in ERF_PIECE_POLYS]))
    out = o.select(o.lt(a, o.c(ERF_EDGES[0])), small, acc)
    out = o.select(o.b.fcmp_ordered(">=", a, o.c(ERF_EDGES[-1])), o.c(1.0), out)
    return o.select(o.isnan(x), x, o.double(b.or_(o.bits(out), sign)))


def _trig(o: _Ops, x, quadrant_shift: int, exact):
    """:func:`_sin_cos` where every lane is within TRIG_LIMIT; the C
    library (``exact``) for the whole vector otherwise."""
    b = o.b
    small = b.fcmp_ordered("<=", o.fabs(x), o.c(TRIG_LIMIT))
    all_small = small
    if isinstance(o.t, ir.VectorType):
        all_small = b.icmp_unsigned("==", b.bitcast(small, ir.IntType(o.t.count)),
                                    ir.Constant(ir.IntType(o.t.count), (1 << o.t.count) - 1))
    with b.if_else(all_small) as (fast_branch, slow_branch):
        with fast_branch:
            fast = _sin_cos(o, x, quadrant_shift)
            fast_end = b.block
        with slow_branch:
            slow = exact(x)
            slow_end = b.block
    out = b.phi(o.t)
    out.add_incoming(fast, fast_end)
    out.add_incoming(slow, slow_end)
    return out


_KERNELS = {"exp": _exp, "exp2": _exp2, "log": _log, "log2": _log2, "log1p": _log1p,
            "tanh": _tanh, "sigmoid": _sigmoid, "erf": _erf}


def emit(b: ir.IRBuilder, name: str, x: ir.Value, exact) -> ir.Value:
    """``name(x)`` for a double (or vector of doubles) ``x`` widened from a
    float32, float16 or bfloat16 value, to within 2**-44 relative error;
    the caller rounds the result back to the narrow type. ``exact(x)``
    emits the C library's value, for the arguments a kernel leaves to it."""
    o = _Ops(b, x.type)
    if name in ("sin", "cos"):
        return _trig(o, x, 0 if name == "sin" else 1, exact)
    return _KERNELS[name](o, x)


__all__ = ["FAST", "emit", "EXP_POLY", "LOG_POLY", "SIN_POLY", "COS_POLY", "ERF_SMALL_POLY",
           "ERF_PIECE_POLYS", "ERF_EDGES", "EXP_POLY_ERROR", "LOG_POLY_ERROR", "SIN_POLY_ERROR",
           "COS_POLY_ERROR", "ERF_POLY_ERROR"]
