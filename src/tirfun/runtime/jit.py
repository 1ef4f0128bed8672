"""LLVM through llvmlite.binding: optimise at O3 and JIT-compile.

Loaded on the first build only. The host's libgomp (the thread pool behind
parallel loops) and the C math library are made visible to the JIT so the
generated code can call ``GOMP_parallel`` and ``tanhf``.
"""

from __future__ import annotations

import ctypes.util
import functools
import os

from ..errors import BuildError
from .target import Target


@functools.cache
def llvm():
    """llvmlite.binding, with the native target initialised once."""
    import llvmlite.binding as binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    binding.initialize_native_asmparser()
    for lib in ("m",):
        path = ctypes.util.find_library(lib)
        if path:
            binding.load_library_permanently(path)
    return binding


@functools.cache
def gomp_available() -> bool:
    """Whether libgomp could be loaded (then parallel loops use it)."""
    binding = llvm()
    path = ctypes.util.find_library("gomp")
    candidates = [p for p in (path, "libgomp.so.1") if p]
    for candidate in candidates:
        try:
            binding.load_library_permanently(candidate)
        except RuntimeError:
            continue
        return bool(binding.address_of_symbol("GOMP_parallel"))
    return False


def num_threads() -> int:
    """Threads a parallel loop uses: ``TIRFUN_NUM_THREADS`` when set, else
    every core this process may run on."""
    text = os.environ.get("TIRFUN_NUM_THREADS", "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise BuildError(f"TIRFUN_NUM_THREADS must be a positive integer, got {text!r}")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity masks
        return max(1, os.cpu_count() or 1)


@functools.lru_cache(maxsize=16)
def target_machine(target: Target):
    """The llvmlite TargetMachine of ``target`` at O3, shared by the
    optimiser and the assembly printer (never handed to an engine)."""
    return new_target_machine(target)


def new_target_machine(target: Target):
    """A fresh TargetMachine of ``target`` at O3 (an execution engine takes
    ownership of the one it is given)."""
    binding = llvm()
    try:
        tgt = binding.Target.from_triple(target.triple)
    except RuntimeError as err:
        raise BuildError(f"LLVM does not know the triple {target.triple!r}: {err}") from None
    return tgt.create_target_machine(cpu=target.cpu, features=_exact_bfloat16(target),
                                     opt=3, reloc="default", codemodel="jitdefault")


#: x86 instructions that round float to bfloat16 but flush subnormal inputs
#: and results to zero, unlike the interpreter (and ml_dtypes)
_FLUSHING_BF16 = ("avx512bf16", "avxneconvert")


def _exact_bfloat16(target: Target) -> str:
    """``target``'s features without the bfloat16 conversions that flush
    subnormals (LLVM then rounds with an exact helper)."""
    if not target.triple.startswith(("x86_64", "i386", "i686")):
        return target.features
    off = ",".join(f"-{name}" for name in _FLUSHING_BF16)
    return f"{target.features},{off}" if target.features else off


def optimise(ir_text: str, target: Target):
    """Parse, verify and optimise (O3) an LLVM IR module; returns the
    llvmlite ModuleRef."""
    binding = llvm()
    tm = target_machine(target)
    try:
        mod = binding.parse_assembly(ir_text)
        mod.verify()
    except RuntimeError as err:
        raise BuildError(f"internal error: LLVM rejected the generated IR: {err}") from None
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    pto = binding.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = binding.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)
    return mod


def data_layout(target: Target) -> str:
    """The LLVM data layout string of ``target``."""
    return str(target_machine(target).target_data)


def jit(mod, target: Target):
    """An MCJIT engine holding the compiled module (keep it alive while
    its functions may be called). Raises BuildError, before any code is
    loaded, if the code calls a function nothing defines."""
    from .linking import check_linkable, install_libcalls

    binding = llvm()
    install_libcalls(binding, new_target_machine(Target.of("llvm")))
    tm = new_target_machine(target)
    # compile once here to read the object's undefined symbols; the engine
    # then loads this object instead of compiling the module again
    obj = tm.emit_object(mod)
    check_linkable(binding, mod, obj)
    engine = binding.create_mcjit_compiler(mod, tm)
    engine.set_object_cache(getbuffer_func=lambda _module: obj)
    engine.finalize_object()
    return engine


def assembly(ir_text: str, target: Target) -> str:
    """The target assembly of an (already optimised) IR module."""
    binding = llvm()
    mod = binding.parse_assembly(ir_text)
    mod.triple = target.triple
    return target_machine(target).emit_assembly(mod)


__all__ = ["llvm", "gomp_available", "num_threads", "target_machine", "optimise", "jit",
           "assembly", "data_layout"]
