"""Math intrinsics: ``tir.exp`` and friends to LLVM intrinsics or libm.

Where LLVM has an intrinsic it is used (it works on vectors and the
backend picks the instruction); the rest call the C library, one lane at a
time for vectors.

Results are rounded once, as the reference interpreter rounds them:
operations that IEEE defines exactly (sqrt, fabs, floor, ceil, round,
trunc, copysign, fmod, nextafter, ldexp and the tests) run in the
argument's precision; the others (exp, log, sin, pow, sigmoid, rsqrt...)
are computed in double precision for ``float32`` and ``float16`` and
rounded to the result type.

With ``fast=True`` (the target's ``-math=fast``), the functions of
:data:`tirfun.lower.llvm_vecmath.FAST` on float32, float16 and bfloat16
are computed inline in double by :mod:`tirfun.lower.llvm_vecmath` instead
of calling the C library, and rounded the same way.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..errors import BuildError
from . import llvm_vecmath
from .llvm_types import BFloatType

#: float types narrower than double, whose results are computed in double
_NARROW = (ir.FloatType, ir.HalfType, BFloatType)

# tir name -> LLVM intrinsic (overloaded on the float type)
LLVM_UNARY = {
    "exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
    "log10": "llvm.log10", "sqrt": "llvm.sqrt", "sin": "llvm.sin", "cos": "llvm.cos",
    "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil", "round": "llvm.roundeven",
    "nearbyint": "llvm.nearbyint", "trunc": "llvm.trunc",
}
LLVM_BINARY = {"copysign": "llvm.copysign"}
# tir name -> C library name for double (float adds an "f")
LIBM_UNARY = {
    "tan": "tan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asin": "asin",
    "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "erf": "erf", "exp10": "exp10", "log1p": "log1p",
}
LIBM_BINARY = {"atan2": "atan2", "hypot": "hypot", "nextafter": "nextafter", "pow": "pow"}
#: C library functions LLVM must call as they are: LLVM rewrites
#: ``pow(x, 0.5)`` as ``sqrt(x)``, correctly rounded where the C library's
#: pow (which the interpreter calls) may be 1 ulp away, and the difference
#: grows through what the result feeds (``sin(1000 * pow(x, 0.5))``)
NO_BUILTIN = {"pow", "powf"}
#: computed in the argument's own precision (exact, or needing its precision)
NATIVE_PRECISION = {"sqrt", "fabs", "floor", "ceil", "round", "nearbyint", "trunc", "copysign",
                    "fmod", "nextafter", "ldexp", "isnan", "isinf", "isfinite", "popcount",
                    "clz", "abs"}
SUPPORTED = (set(LLVM_UNARY) | set(LLVM_BINARY) | set(LIBM_UNARY) | set(LIBM_BINARY)
             | {"sigmoid", "rsqrt", "fmod", "ldexp", "isnan", "isinf", "isfinite", "popcount",
                "clz", "abs"})


def overload_suffix(t: ir.Type) -> str:
    """LLVM's name suffix for an intrinsic overloaded on ``t`` (``f32``, ``v4f32``)."""
    return _suffix(t)


def _suffix(t: ir.Type) -> str:
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_suffix(t.element)}"
    if isinstance(t, ir.FloatType):
        return "f32"
    if isinstance(t, ir.DoubleType):
        return "f64"
    if isinstance(t, ir.HalfType):
        return "f16"
    if isinstance(t, BFloatType):
        return "bf16"
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    raise BuildError(f"no intrinsic suffix for {t}")


def _elem(t: ir.Type) -> ir.Type:
    return t.element if isinstance(t, ir.VectorType) else t


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The function ``name`` in ``module``, declared once."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name=name)


#: the LLVM intrinsics ``T.call_llvm_(pure_)intrin`` may call, by arity; each
#: is overloaded on its result type. LLVM aborts the process on a call of an
#: intrinsic it does not know, so no other name reaches it.
CALLABLE = {
    **{f"llvm.{n}": 1 for n in (
        "fabs", "sqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "floor", "ceil",
        "trunc", "rint", "nearbyint", "round", "roundeven", "ctpop", "bswap", "bitreverse")},
    **{f"llvm.{n}": 2 for n in (
        "pow", "copysign", "minnum", "maxnum", "minimum", "maximum", "smax", "smin", "umax",
        "umin", "ctlz", "cttz", "abs", "sadd.sat", "ssub.sat", "uadd.sat", "usub.sat")},
    **{f"llvm.{n}": 3 for n in ("fma", "fmuladd", "fshl", "fshr")},
}


def overloaded_name(name: str, ret: ir.Type) -> str:
    """The declared name of the LLVM intrinsic ``name`` returning ``ret``:
    ``llvm.fabs`` returning float is ``llvm.fabs.f32``."""
    return f"{name}.{_suffix(ret)}"


def _llvm_call(b: ir.IRBuilder, base: str, args: list[ir.Value]) -> ir.Value:
    t = args[0].type
    fn = declare(b.module, f"{base}.{_suffix(t)}", t, [a.type for a in args])
    return b.call(fn, args)


def fence(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """``x`` through ``llvm.arithmetic.fence``: the same value, which
    LLVM's optimiser does not look through (it emits no instruction)."""
    return _llvm_call(b, "llvm.arithmetic.fence", [x])


def float_bits(b: ir.IRBuilder, x: ir.Value, int_type: ir.Type) -> ir.Value:
    """The bits of the float ``x`` as ``int_type`` (its width). A scalar
    bfloat goes through a vector of one lane: LLVM 22's x86 instruction
    selection asserts ("Shift operators return type must be the same as
    their first arg") on the bits of a computed scalar bfloat of which only
    the sign bit is used (``bitcast bfloat to i16`` then ``and 0x8000`` or
    ``icmp slt 0``), and the vector form, which it selects without that
    combine, is the same bits."""
    if not isinstance(x.type, BFloatType):
        return b.bitcast(x, int_type)
    zero = ir.Constant(ir.IntType(32), 0)
    one = b.insert_element(ir.Constant(ir.VectorType(x.type, 1), ir.Undefined), x, zero)
    return b.extract_element(b.bitcast(one, ir.VectorType(int_type, 1)), zero)


def per_lane(b: ir.IRBuilder, args: list[ir.Value], scalar_fn) -> ir.Value:
    """``scalar_fn(parts)`` of scalar arguments, applied lane by lane where
    the first argument is a vector (every argument of the same lanes)."""
    t = args[0].type
    if not isinstance(t, ir.VectorType):
        return scalar_fn(args)
    out = ir.Constant(t, ir.Undefined)
    for lane in range(t.count):
        idx = ir.Constant(ir.IntType(32), lane)
        parts = [b.extract_element(a, idx) for a in args]
        out = b.insert_element(out, scalar_fn(parts), idx)
    return out


def _libm(b: ir.IRBuilder, name: str, args: list[ir.Value]) -> ir.Value:
    def scalar(parts):
        t = parts[0].type
        if name == "nextafter" and isinstance(t, (ir.HalfType, BFloatType)):
            return _nextafter16(b, *parts)
        if isinstance(t, (ir.HalfType, BFloatType)):
            wide = [b.fpext(p, ir.FloatType()) for p in parts]
            r = _libm_scalar(b, name, wide)
            return b.fptrunc(r, t)
        return _libm_scalar(b, name, parts)
    return per_lane(b, args, scalar)


def _nextafter16(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """nextafter on a 16-bit float, on its bits (the C library has none,
    and one in float would round back to ``x``). Selects stay on integers:
    LLVM 22 fails to select a ``select`` of bfloat values here."""
    i16 = ir.IntType(16)
    xi, yi = float_bits(b, x, i16), float_bits(b, y, i16)
    zero = ir.Constant(x.type, 0.0)
    # away from zero when moving up from a positive or down from a negative
    up = b.icmp_unsigned("==", b.fcmp_ordered("<", x, y), b.fcmp_ordered(">", x, zero))
    out = b.add(xi, b.select(up, ir.Constant(i16, 1), ir.Constant(i16, -1)))
    tiny = b.or_(b.and_(yi, ir.Constant(i16, 0x8000)), ir.Constant(i16, 1))
    out = b.select(b.fcmp_ordered("==", x, zero), tiny, out)
    out = b.select(b.fcmp_ordered("==", x, y), yi, out)
    nan = b.select(b.fcmp_unordered("uno", x, x), xi, yi)
    out = b.select(b.fcmp_unordered("uno", x, y), nan, out)
    return b.bitcast(out, x.type)


def _libm_scalar(b, name, parts):
    t = parts[0].type
    cname = name + ("f" if isinstance(t, ir.FloatType) else "")
    fn = declare(b.module, cname, t, [p.type for p in parts])
    if cname in NO_BUILTIN and "nobuiltin" not in fn.attributes:
        fn.attributes.add("nobuiltin")
        fn.attributes.add("nounwind")
    return b.call(fn, parts)


def _splat(t: ir.Type, value) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [ir.Constant(t.element, value)] * t.count)
    return ir.Constant(t, value)


def _widen(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    t = v.type
    if isinstance(t, ir.VectorType):
        return b.fpext(v, ir.VectorType(ir.DoubleType(), t.count))
    return b.fpext(v, ir.DoubleType())


def emit(b: ir.IRBuilder, name: str, args: list[ir.Value], ret_type: ir.Type, *,
         fast: bool = False) -> ir.Value:
    """The value of ``tir.<name>(*args)``; ``fast``: the inline polynomial
    where :mod:`~tirfun.lower.llvm_vecmath` has one for the argument's type."""
    if name not in NATIVE_PRECISION and args and isinstance(_elem(args[0].type), _NARROW):
        narrow = args[0].type
        if fast and name in llvm_vecmath.FAST:
            wide = llvm_vecmath.emit(b, name, _widen(b, args[0]),
                                     lambda x: _emit(b, name, [x], x.type))
            return b.fptrunc(wide, narrow)
        wide = _emit(b, name, [_widen(b, a) if isinstance(_elem(a.type), _NARROW)
                               else a for a in args], ret_type)
        return b.fptrunc(wide, narrow)
    return _emit(b, name, args, ret_type)


def _emit(b: ir.IRBuilder, name: str, args: list[ir.Value], ret_type: ir.Type) -> ir.Value:
    if name in LLVM_UNARY:
        return _llvm_call(b, LLVM_UNARY[name], args)
    if name in LLVM_BINARY:
        return _llvm_call(b, LLVM_BINARY[name], args)
    if name in LIBM_UNARY or name in LIBM_BINARY:
        return _libm(b, LIBM_UNARY.get(name) or LIBM_BINARY[name], args)
    t = args[0].type if args else ret_type
    if name == "sigmoid":
        x = args[0]
        e = _llvm_call(b, "llvm.exp", [b.fneg(x)])
        return b.fdiv(_splat(t, 1.0), b.fadd(_splat(t, 1.0), e))
    if name == "rsqrt":
        return b.fdiv(_splat(t, 1.0), _llvm_call(b, "llvm.sqrt", args))
    if name == "fmod":
        return b.frem(args[0], args[1])
    if name == "ldexp":
        x, e = args
        ti = ir.IntType(32)
        if isinstance(e.type, ir.VectorType):
            ti = ir.VectorType(ti, e.type.count)
        if _elem(e.type).width > 32:
            e = b.trunc(e, ti)
        elif _elem(e.type).width < 32:
            e = b.sext(e, ti)
        if isinstance(_elem(x.type), ir.HalfType):
            # LLVM 22 miscompiles ldexp on half vectors (x86); in float the
            # scaled value is exact and rounds to half once
            wide = ir.FloatType()
            if isinstance(x.type, ir.VectorType):
                wide = ir.VectorType(wide, x.type.count)
            fn = declare(b.module, f"llvm.ldexp.{_suffix(wide)}.{_suffix(ti)}", wide, [wide, ti])
            return b.fptrunc(b.call(fn, [b.fpext(x, wide), e]), x.type)
        fn = declare(b.module, f"llvm.ldexp.{_suffix(x.type)}.{_suffix(ti)}", x.type, [x.type, ti])
        return b.call(fn, [x, e])
    if name == "isnan":
        return b.fcmp_unordered("uno", args[0], args[0])
    if name in ("isinf", "isfinite"):
        a = _llvm_call(b, "llvm.fabs", args)
        inf = _splat(a.type, math.inf)
        return b.fcmp_ordered("==", a, inf) if name == "isinf" else b.fcmp_ordered("!=", a, inf)
    if name == "popcount":
        return _llvm_call(b, "llvm.ctpop", args)
    if name == "clz":
        x = args[0]
        fn = declare(b.module, f"llvm.ctlz.{_suffix(x.type)}", x.type, [x.type, ir.IntType(1)])
        return b.call(fn, [x, ir.Constant(ir.IntType(1), 0)])
    if name == "abs":
        x = args[0]
        neg = b.sub(_splat(x.type, 0), x)
        return b.select(b.icmp_signed("<", x, _splat(x.type, 0)), neg, x)
    raise BuildError(f"the LLVM build does not support the intrinsic tir.{name}")


__all__ = ["emit", "declare", "overloaded_name", "SUPPORTED"]
