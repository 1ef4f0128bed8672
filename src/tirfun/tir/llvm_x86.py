"""The x86 vector intrinsics ``T.call_llvm_pure_intrin`` may call, and
TVM's way of naming an LLVM intrinsic's arguments.

TVM writes ``T.call_llvm_pure_intrin(dtype, "llvm.name", T.uint32(n),
*args)``, the ``n`` counting the arguments LLVM overloads on; tirfun
writes the arguments alone. :func:`intrinsic_args` reads both. The
x86 intrinsics are the ones TVM's x86 tensor intrinsics (``VNNI_DOT_16x4``,
``AVX512_DOT_16x4``) call: their types, and the CPU feature without which
LLVM cannot select them (it would abort the process, so the build refuses
first). Their meaning, lane by lane, is in the interpreter.
"""

from __future__ import annotations

from ..nodes import Call, IntImm, StringImm

#: name -> (result dtype, argument dtypes, the CPU feature it needs)
X86 = {
    "llvm.x86.avx512.vpdpbusd.512": ("int32x16", ("int32x16", "int32x16", "int32x16"), "avx512vnni"),
    "llvm.x86.avx512.vpdpbusd.256": ("int32x8", ("int32x8", "int32x8", "int32x8"), "avx512vnni"),
    "llvm.x86.avx512.pmaddubs.w.512": ("int16x32", ("uint8x64", "int8x64"), "avx512bw"),
    "llvm.x86.avx512.pmaddw.d.512": ("int32x16", ("int16x32", "int16x32"), "avx512bw"),
}


def signature_problem(callee: str, args: list, dtype) -> str | None:
    """Why a call of the x86 intrinsic ``callee`` returning ``dtype`` on
    ``args`` does not fit its types (None when it does): the interpreter
    and the build refuse the same calls with the same words."""
    ret, types, _feature = X86[callee]
    got = [str(a.dtype) for a in args]
    if str(dtype) != ret or got != list(types):
        return f"{callee} returns {ret} and takes {', '.join(types)}; called as {dtype} of {', '.join(got)}"
    return None


def intrinsic_args(e: Call) -> tuple[str | None, list]:
    """The intrinsic's name and its arguments, without TVM's count of
    signature arguments (``T.uint32(n)`` right after the name, where ``n``
    is the number of arguments that follow)."""
    if not e.args or not isinstance(e.args[0], StringImm):
        return None, list(e.args[1:])
    args = list(e.args[1:])
    if (args and isinstance(args[0], IntImm) and str(args[0].dtype) == "uint32"
            and args[0].value == len(args) - 1):
        args = args[1:]
    return e.args[0].value, args


__all__ = ["X86", "intrinsic_args", "signature_problem"]
