"""float8_e4m3fn, float8_e5m2 and float4_e2m1fn in LLVM IR.

No CPU computes in these formats, so the build does what TVM's
FP8 compute and storage legalization does, with one rounding rule: a value
lives in a ``double`` register, every operation computes in double and
rounds its result to the format (exactly what the interpreter does), and
memory holds one byte per element (the format's bits; float4 in the low
four bits, as ml_dtypes stores it). Computing in double and rounding once
gives the correctly rounded result of ``+ - * /`` and ``sqrt`` on values of
these formats, so compiled code and the interpreter agree bit for bit.

:func:`encode` rounds a double to the format's bits, to nearest with ties
to even, as ml_dtypes does: float8_e5m2 as an IEEE format (overflow to
infinity, NaN quiet with its sign); float8_e4m3fn has no infinity and
makes NaN (``0x7f`` with the sign) of whatever rounds past 448;
float4_e2m1fn has neither: it saturates at 6, and ml_dtypes turns a NaN
into a zero of the opposite sign. :func:`decode` reads the value of a byte
from a table of the format's 256 values.
"""

from __future__ import annotations

from llvmlite import ir

from .llvm_libcalls import narrow_bits

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F64 = ir.DoubleType()

#: (exponent bits, mantissa bits) of each format
FORMATS = {"float8_e4m3fn": (4, 3), "float8_e5m2": (5, 2), "float4_e2m1fn": (2, 1)}


def _c(t, v):
    return ir.Constant(t, v)


def encode(b: ir.IRBuilder, x: ir.Value, name: str) -> ir.Value:
    """The bits (i8) of the ``name`` value nearest to the double ``x``."""
    ebits, mbits = FORMATS[name]
    if name == "float8_e5m2":
        return b.trunc(narrow_bits(b, x, (ebits, mbits)), I8)
    bias = (1 << (ebits - 1)) - 1
    shift = 52 - mbits
    bits = b.bitcast(x, I64)
    sign = b.lshr(bits, _c(I64, 63))
    a = b.and_(bits, _c(I64, (1 << 63) - 1))
    exp = b.lshr(a, _c(I64, 52))
    mant = b.and_(a, _c(I64, (1 << 52) - 1))
    # normal in the format: rebase the exponent and drop `shift` bits,
    # rounding to nearest, ties to even (no clamp yet: these formats have
    # no infinity to stop at); past the top the code only grows
    huge = b.icmp_unsigned(">=", exp, _c(I64, 1023 + (1 << ebits)))
    rebased = b.sub(a, _c(I64, (1023 - bias) << 52))
    odd = b.and_(b.lshr(rebased, _c(I64, shift)), _c(I64, 1))
    normal = b.lshr(b.add(b.add(rebased, _c(I64, (1 << (shift - 1)) - 1)), odd), _c(I64, shift))
    # subnormal or zero: units of the smallest subnormal, ties to even
    is_norm_src = b.icmp_unsigned("!=", exp, _c(I64, 0))
    sig = b.or_(mant, b.select(is_norm_src, _c(I64, 1 << 52), _c(I64, 0)))
    exp1 = b.select(is_norm_src, exp, _c(I64, 1))
    s = b.sub(_c(I64, 1076 - bias - mbits), exp1)
    s = b.select(b.icmp_unsigned(">", s, _c(I64, 63)), _c(I64, 63), s)
    s = b.select(b.icmp_unsigned("<", s, _c(I64, 1)), _c(I64, 1), s)
    q = b.lshr(sig, s)
    rem = b.and_(sig, b.sub(b.shl(_c(I64, 1), s), _c(I64, 1)))
    half = b.shl(_c(I64, 1), b.sub(s, _c(I64, 1)))
    q_odd = b.trunc(b.and_(q, _c(I64, 1)), I1)
    up = b.or_(b.icmp_unsigned(">", rem, half), b.and_(b.icmp_unsigned("==", rem, half), q_odd))
    sub = b.add(q, b.zext(up, I64))
    in_normal = b.icmp_unsigned(">=", exp, _c(I64, 1024 - bias))
    finite = b.select(in_normal, normal, sub)
    is_nan = b.icmp_unsigned(">", a, _c(I64, 0x7FF << 52))
    top = (1 << (ebits + mbits)) - 1  # all bits of the magnitude set
    if name == "float8_e4m3fn":
        # the all-ones code is NaN: whatever rounds past 448 (infinity too) lands there
        too_big = b.or_(huge, b.icmp_unsigned(">", finite, _c(I64, top)))
        magnitude = b.select(b.or_(is_nan, too_big), _c(I64, top), finite)
        out = b.or_(magnitude, b.shl(sign, _c(I64, ebits + mbits)))
        return b.trunc(out, I8)
    # float4_e2m1fn: saturate; a NaN becomes a zero of the opposite sign
    too_big = b.or_(huge, b.icmp_unsigned(">", finite, _c(I64, top)))
    magnitude = b.select(too_big, _c(I64, top), finite)
    out = b.or_(magnitude, b.shl(sign, _c(I64, ebits + mbits)))
    nan_code = b.shl(b.xor(sign, _c(I64, 1)), _c(I64, ebits + mbits))
    return b.trunc(b.select(is_nan, nan_code, out), I8)


def _table(module: ir.Module, name: str) -> ir.GlobalVariable:
    """The module's constant table of the 256 values a byte holds."""
    symbol = f"__tirfun_{name}_values"
    if symbol in module.globals:
        return module.globals[symbol]
    import numpy as np

    from ..numpy_dtypes import mini_float

    codes = np.arange(256, dtype=np.uint8)
    if name == "float4_e2m1fn":
        codes = codes & np.uint8(0x0F)  # ml_dtypes reads the low four bits
    with np.errstate(invalid="ignore"):
        values = codes.view(mini_float(name)).astype(np.float64)
    t = ir.ArrayType(F64, 256)
    g = ir.GlobalVariable(module, t, symbol)
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ir.Constant(t, [ir.Constant(F64, float(v)) for v in values])
    return g


def decode(b: ir.IRBuilder, bits: ir.Value, name: str) -> ir.Value:
    """The double value of the ``name`` bits ``bits`` (i8)."""
    table = _table(b.module, name)
    ptr = b.gep(table, [_c(I32, 0), b.zext(bits, I32)], inbounds=True)
    return b.load(ptr, typ=F64)


def lanes(b: ir.IRBuilder, value: ir.Value, out_type: ir.Type, one) -> ir.Value:
    """``one`` applied to each lane of ``value`` (or to ``value`` itself)."""
    if not isinstance(value.type, ir.VectorType):
        return one(value)
    n = value.type.count
    out = ir.Constant(ir.VectorType(out_type, n), ir.Undefined)
    for k in range(n):
        idx = _c(I32, k)
        out = b.insert_element(out, one(b.extract_element(value, idx)), idx)
    return out


def round_to(b: ir.IRBuilder, value: ir.Value, name: str) -> ir.Value:
    """The double (or vector of doubles) ``value`` rounded to ``name``."""
    return lanes(b, value, F64, lambda x: decode(b, encode(b, x, name), name))


__all__ = ["FORMATS", "encode", "decode", "lanes", "round_to"]
