"""The helper functions LLVM's backend calls for 16-bit floats.

x86 has no instruction that rounds a double to ``half`` or ``bfloat``
(nor, without F16C or AVX512-BF16, a float), so LLVM turns such an
``fptrunc`` (and every ``bfloat`` operation, which it does in float and
rounds back) into a call to a compiler-rt function such as
``__truncdfhf2``. A JIT has no compiler-rt to link against; this module
defines those functions in LLVM IR, once, with integer operations only (so
compiling them never needs the functions themselves), and
:mod:`tirfun.runtime.linking` compiles them and hands their addresses to
the JIT.

Every narrowing goes from the exact double (a float widens to double
exactly), rounding to nearest with ties to even, into the subnormal range
and to infinity on overflow; a NaN keeps its sign and its leading payload
bits and becomes quiet. That is how numpy rounds to float16 and ml_dtypes
to bfloat16, so compiled code agrees with the interpreter bit for bit.
"""

from __future__ import annotations

import functools

from llvmlite import ir

from .llvm_types import BFLOAT, HALF

I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()

#: (exponent bits, mantissa bits) of the 16-bit formats
HALF_FORMAT = (5, 10)
BFLOAT_FORMAT = (8, 7)


def _c(t, v):
    return ir.Constant(t, v)


def narrow_bits(b: ir.IRBuilder, x: ir.Value, fmt: tuple[int, int]) -> ir.Value:
    """The bits (i16) of the ``fmt`` float nearest to the double ``x``."""
    ebits, mbits = fmt
    bias = (1 << (ebits - 1)) - 1
    shift = 52 - mbits
    bits = b.bitcast(x, I64)
    sign = b.lshr(bits, _c(I64, 63))
    a = b.and_(bits, _c(I64, (1 << 63) - 1))
    exp = b.lshr(a, _c(I64, 52))
    mant = b.and_(a, _c(I64, (1 << 52) - 1))
    inf_bits = ((1 << ebits) - 1) << mbits
    # normal in the target: move the exponent to the target's bias, then
    # drop `shift` bits rounding to nearest, ties to even (a carry out of
    # the mantissa steps the exponent up, to infinity at the top)
    rebased = b.sub(a, _c(I64, (1023 - bias) << 52))
    odd = b.and_(b.lshr(rebased, _c(I64, shift)), _c(I64, 1))
    normal = b.lshr(b.add(b.add(rebased, _c(I64, (1 << (shift - 1)) - 1)), odd), _c(I64, shift))
    normal = b.select(b.icmp_unsigned(">=", normal, _c(I64, inf_bits)), _c(I64, inf_bits), normal)
    # subnormal (or zero) in the target: count units of its smallest
    # subnormal, 2**(1 - bias - mbits), rounding to nearest, ties to even
    is_norm_src = b.icmp_unsigned("!=", exp, _c(I64, 0))
    sig = b.or_(mant, b.select(is_norm_src, _c(I64, 1 << 52), _c(I64, 0)))
    exp1 = b.select(is_norm_src, exp, _c(I64, 1))
    s = b.sub(_c(I64, 1076 - bias - mbits), exp1)
    s = b.select(b.icmp_unsigned(">", s, _c(I64, 63)), _c(I64, 63), s)
    s = b.select(b.icmp_unsigned("<", s, _c(I64, 1)), _c(I64, 1), s)  # only when normal
    q = b.lshr(sig, s)
    rem = b.and_(sig, b.sub(b.shl(_c(I64, 1), s), _c(I64, 1)))
    half = b.shl(_c(I64, 1), b.sub(s, _c(I64, 1)))
    q_odd = b.trunc(b.and_(q, _c(I64, 1)), ir.IntType(1))
    up = b.or_(b.icmp_unsigned(">", rem, half), b.and_(b.icmp_unsigned("==", rem, half), q_odd))
    sub = b.add(q, b.zext(up, I64))
    in_normal = b.icmp_unsigned(">=", exp, _c(I64, 1024 - bias))
    finite = b.select(in_normal, normal, sub)
    # NaN: quiet, with the sign and the leading payload bits
    nan = b.or_(_c(I64, inf_bits | (1 << (mbits - 1))),
                b.and_(b.lshr(mant, _c(I64, shift)), _c(I64, (1 << mbits) - 1)))
    is_nan = b.icmp_unsigned(">", a, _c(I64, 0x7FF << 52))
    magnitude = b.select(is_nan, nan, finite)
    out = b.or_(magnitude, b.shl(sign, _c(I64, ebits + mbits)))
    return b.trunc(out, I16)


def half_to_float_bits(b: ir.IRBuilder, h: ir.Value) -> ir.Value:
    """The float (as a value) equal to the half whose bits (i16) are ``h``."""
    h32 = b.zext(h, I32)
    sign = b.shl(b.lshr(h32, _c(I32, 15)), _c(I32, 31))
    exp = b.and_(b.lshr(h32, _c(I32, 10)), _c(I32, 0x1F))
    mant = b.and_(h32, _c(I32, 0x3FF))
    normal = b.or_(b.shl(b.add(exp, _c(I32, 127 - 15)), _c(I32, 23)), b.shl(mant, _c(I32, 13)))
    special = b.or_(_c(I32, 0xFF << 23), b.shl(mant, _c(I32, 13)))  # inf, NaN (payload kept)
    # zero and subnormals: mant * 2**-24 is exact in float (integer ops
    # would need a count of leading zeros; these float ops need no helper)
    tiny = b.bitcast(b.fmul(b.uitofp(mant, F32), _c(F32, 2.0 ** -24)), I32)
    mag = b.select(b.icmp_unsigned("==", exp, _c(I32, 0)), tiny,
                   b.select(b.icmp_unsigned("==", exp, _c(I32, 0x1F)), special, normal))
    return b.bitcast(b.or_(mag, sign), F32)


def _define(module: ir.Module, name: str, ret, args, body) -> None:
    fn = ir.Function(module, ir.FunctionType(ret, args), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(b, *fn.args))


@functools.cache
def support_ir() -> str:
    """The LLVM IR text defining every helper, by its compiler-rt name."""
    m = ir.Module(name="tirfun_libcalls")

    def to_half(b, x):
        return b.bitcast(narrow_bits(b, x, HALF_FORMAT), HALF)

    def to_bfloat(b, x):
        return b.bitcast(narrow_bits(b, x, BFLOAT_FORMAT), BFLOAT)

    _define(m, "__truncdfhf2", HALF, [F64], to_half)
    _define(m, "__truncsfhf2", HALF, [F32], lambda b, x: to_half(b, b.fpext(x, F64)))
    _define(m, "__gnu_f2h_ieee", I16, [F32],
            lambda b, x: narrow_bits(b, b.fpext(x, F64), HALF_FORMAT))
    _define(m, "__extendhfsf2", F32, [HALF], lambda b, h: half_to_float_bits(b, b.bitcast(h, I16)))
    _define(m, "__gnu_h2f_ieee", F32, [I16], half_to_float_bits)
    _define(m, "__extendhfdf2", F64, [HALF],
            lambda b, h: b.fpext(half_to_float_bits(b, b.bitcast(h, I16)), F64))
    _define(m, "__truncdfbf2", BFLOAT, [F64], to_bfloat)
    _define(m, "__truncsfbf2", BFLOAT, [F32], lambda b, x: to_bfloat(b, b.fpext(x, F64)))
    _define(m, "__extendbfsf2", F32, [BFLOAT],
            lambda b, h: b.bitcast(b.shl(b.zext(b.bitcast(h, I16), I32), _c(I32, 16)), F32))
    return str(m)


#: the names :func:`support_ir` defines
NAMES = ("__truncdfhf2", "__truncsfhf2", "__gnu_f2h_ieee", "__extendhfsf2", "__gnu_h2f_ieee",
         "__extendhfdf2", "__truncdfbf2", "__truncsfbf2", "__extendbfsf2")

__all__ = ["support_ir", "narrow_bits", "half_to_float_bits", "NAMES", "HALF_FORMAT",
           "BFLOAT_FORMAT"]
