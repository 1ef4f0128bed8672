"""LLVM through llvmlite.binding: optimise, generate code, load it.

Optimisation and code generation run in the LLVM worker process
(:func:`compile_module`), so that an LLVM assertion is a BuildError; the
object code then comes back and is loaded here (:func:`load`). Loaded on
the first build only. The host's libgomp (the thread pool behind
parallel loops) and the C math library are made visible to the JIT so the
generated code can call ``GOMP_parallel`` and ``tanhf``.

LLVM's state is not safe to use from several threads at once: llvmlite
parses every module into one global LLVM context, and a target machine is
shared by the optimiser and the assembly printer. Every use of LLVM here
(and the builder's) holds :data:`LOCK`; builds in several threads overlap
in tirfun's own passes and wait for each other only inside LLVM. Freeing
an LLVM object is a use too: llvmlite frees one when its Python object
dies, which for a local variable is after the function returns (past the
end of a ``with LOCK`` block in it) and, when an exception is raised, only
once the caller drops the exception. So every object made here is either
handed on (to an engine, or to the caller, who holds the lock) or closed
explicitly before the lock is released.
"""

from __future__ import annotations

import ctypes.util
import functools
import os
import re
import sys
import tempfile
import time

import attrs

from ..errors import BuildError
from ..lower.llvm_workspace import RELEASE as _RELEASE_WORKSPACE
from ..target import LLVM_LOCK, Target, create_target_machine, host_description, initialise_llvm


#: held around every call into LLVM (reentrant: the builder holds it across
#: several of the functions below); the lock of :mod:`tirfun.target`
LOCK = LLVM_LOCK


def llvm():
    """llvmlite.binding, with the native target initialised once."""
    with LOCK:
        return _initialised()


@functools.cache
def _initialised():
    binding = initialise_llvm()
    for lib in ("m",):
        path = ctypes.util.find_library(lib)
        if path:
            binding.load_library_permanently(path)
    return binding


def gomp_available() -> bool:
    """Whether libgomp could be loaded (then parallel loops use it)."""
    with LOCK:
        return _load_gomp()


@functools.cache
def _load_gomp() -> bool:
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


def target_machine(target: Target):
    """The llvmlite TargetMachine of ``target``, shared by the optimiser
    and the assembly printer (never handed to an engine). The first one
    made for a target checks its CPU and features."""
    with LOCK:
        return _checked_target_machine(target)


@functools.lru_cache(maxsize=16)
def _checked_target_machine(target: Target):
    if (target.cpu, target.features) == host_description()[1:]:
        # the host's own CPU and features, as LLVM reported them: nothing to
        # check, and no reason to take the process's stderr from every
        # other thread for a moment
        return new_target_machine(target)
    tm, complaints = _stderr_of(lambda: new_target_machine(target))
    # LLVM warns on stderr and carries on without an unknown CPU or feature
    unknown = []
    for line in complaints.splitlines():
        match = re.search(r"'([^']*)' is not a recognized (processor|feature)", line)
        if match:
            option = "-mcpu" if match.group(2) == "processor" else "-mattr"
            what = f"{match.group(2)} {match.group(1)!r} ({option})"
            if what not in unknown:
                unknown.append(what)
    if unknown:
        tm.close()  # now, under the lock, not when the exception is dropped
        raise BuildError(f"target {target}: LLVM does not know the {', '.join(unknown)}")
    return tm


def _stderr_of(make):
    """``(make(), what it wrote to the process's stderr)``. While ``make``
    runs, whatever any other thread writes to file descriptor 2 goes to
    the same place: keep it short and rare."""
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            result = make()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return result, sink.read().decode(errors="replace")


def new_target_machine(target: Target):
    """A fresh TargetMachine of ``target`` at its optimisation level (an
    execution engine takes ownership of the one it is given)."""
    return create_target_machine(target)


def optimise(ir_text: str, target: Target):
    """Parse, verify and optimise an LLVM IR module at the target's
    optimisation level; returns the llvmlite ModuleRef."""
    with LOCK:
        return _optimise(ir_text, target)


def _optimise(ir_text: str, target: Target):
    binding = llvm()
    tm = target_machine(target)
    try:
        mod = binding.parse_assembly(ir_text)  # closes what it made when it fails
    except RuntimeError as err:
        raise BuildError(f"internal error: LLVM rejected the generated IR: {err}") from None
    try:
        _run_passes(binding, mod, tm, target)
    except BaseException as err:
        mod.close()  # now, under the lock, not when the exception is dropped
        if isinstance(err, RuntimeError):
            raise BuildError(f"internal error: LLVM rejected the generated IR: {err}") from None
        raise
    return mod


def _run_passes(binding, mod, tm, target: Target) -> None:
    mod.verify()
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    level = target.opt_level
    pto = binding.create_pipeline_tuning_options(speed_level=level)
    # LLVM's loop vectorizer stays off: tirfun vectorizes where the schedule
    # says so (T.vectorized), and LLVM 22's loop vectorizer widens a load and
    # store of O[4*i + (f & 3)] in a loop over f as if the index were
    # consecutive in f, computing wrong sums and writing past O (a reduction
    # fused with a spatial loop, ``f // 4`` and ``f % 4``, becomes such a
    # loop once LLVM peels the iterations that run the init)
    pto.loop_vectorization = False
    # the SLP vectorizer stays off too: LLVM 22's SLP narrows the integer
    # operand of a conversion to float by its sign bits, which is right for
    # sitofp and wrong for uitofp, so ``float32(uint64(x))`` of eight int8
    # values became ``uitofp (sext <8 x i8> to <8 x i32>)``: 4294967295.0
    # where 18446744073709551615.0 is right. The kernels tirfun's schedules
    # vectorize are vector IR before LLVM sees them; what SLP added on top
    # (gathers in an unrolled row sum) measured slower, not faster.
    pto.slp_vectorization = False
    pto.loop_unrolling = level > 1
    pb = binding.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        mpm.run(mod, pb)
    finally:
        for obj in (mpm, pb, pto):
            obj.close()


def data_layout(target: Target) -> str:
    """The LLVM data layout string of ``target``."""
    with LOCK:
        return str(target_machine(target).target_data)


class Code:
    """Machine code in this process: an MCJIT engine holding a compiled
    module. The code lives as long as this object; it is released under
    :data:`LOCK` (the engine's module belongs to the shared LLVM context)."""

    def __init__(self, engine):
        self._engine = engine

    def address(self, symbol: str) -> int:
        """The address of the compiled function ``symbol`` (0 if absent)."""
        with LOCK:
            return self._engine.get_function_address(symbol)

    def global_address(self, symbol: str) -> int:
        """The address of the global variable ``symbol`` (0 if absent)."""
        with LOCK:
            return self._engine.get_global_value_address(symbol)

    def __del__(self, _lock=LOCK, _finalizing=sys.is_finalizing):
        # at interpreter exit llvmlite releases what is left by itself
        engine = getattr(self, "_engine", None)
        if engine is not None and not _finalizing():
            with _lock:
                # the scratch blocks the module kept for its next call
                # (tirfun.lower.llvm_workspace) go back to malloc first
                release = engine.get_function_address(_RELEASE_WORKSPACE)
                if release:
                    ctypes.CFUNCTYPE(None)(release)()
                engine.close()


@attrs.frozen
class Compiled:
    """What LLVM made of a module: the optimised IR, the object code, the
    seconds the optimiser and the code generator took, and the processor
    seconds of both (spent in the worker process, so not in this one's)."""

    ir_text: str
    obj: bytes
    optimise_seconds: float
    codegen_seconds: float
    cpu_seconds: float


def compile_module(ir_text: str, target: Target) -> Compiled:
    """Optimise ``ir_text`` and generate its object code, in the LLVM
    worker process (:mod:`tirfun.runtime.isolate`): LLVM ends the process
    it runs in on some IR it cannot handle (an assertion, or a fatal error
    in instruction selection), and there that is a BuildError."""
    from .isolate import in_worker

    return in_worker("compiling with LLVM", _compile_here, ir_text, target)


def _compile_here(ir_text: str, target: Target) -> Compiled:
    """:func:`compile_module`'s work, in the calling process."""
    with LOCK:
        started, cpu = time.perf_counter(), time.process_time()
        mod = _optimise(ir_text, target)
        try:
            optimised = str(mod)
            optimised_at = time.perf_counter()
            tm = new_target_machine(target)
            try:
                obj = bytes(tm.emit_object(mod))
            finally:
                tm.close()
        finally:
            mod.close()
        return Compiled(optimised, obj, optimised_at - started, time.perf_counter() - optimised_at,
                        time.process_time() - cpu)


def load(compiled: Compiled, target: Target) -> Code:
    """Load compiled object code into this process (keep the result alive
    while its functions may be called). Raises BuildError, before any
    code is loaded, if the code calls a function nothing defines."""
    from .linking import check_linkable, install_libcalls

    with LOCK:
        binding = llvm()
        install_libcalls(binding, new_target_machine(Target.of("llvm")))
        check_linkable(binding, compiled.ir_text, compiled.obj)
        # the engine is given the object through its cache, so it never
        # generates code itself: its module only names the object, and an
        # empty one does
        mod = binding.parse_assembly("")
        tm = new_target_machine(target)
        try:
            mod.triple = target.triple
            mod.data_layout = str(tm.target_data)
            engine = binding.create_mcjit_compiler(mod, tm)
        except BaseException:
            # closed now, under the lock, not when the exception is dropped
            mod.close()
            tm.close()
            raise
        # from here the engine owns the module and the target machine, and
        # the Code closes the engine under the lock whatever happens next
        code = Code(engine)
        obj = compiled.obj
        engine.set_object_cache(getbuffer_func=lambda _module: obj)
        engine.finalize_object()
        return code


def assembly(ir_text: str, target: Target) -> str:
    """The target assembly of an (already optimised) IR module, printed in
    the LLVM worker process (the code generator runs for it)."""
    from .isolate import in_worker

    return in_worker("printing assembly with LLVM", _assembly_here, ir_text, target)


def _assembly_here(ir_text: str, target: Target) -> str:
    with LOCK:
        binding = llvm()
        # closed on leaving the block, under the lock (a local variable would
        # live until the function returned, after the lock is released)
        with binding.parse_assembly(ir_text) as mod:
            mod.triple = target.triple
            return target_machine(target).emit_assembly(mod)


__all__ = ["llvm", "gomp_available", "num_threads", "target_machine", "optimise", "Compiled",
           "compile_module", "load", "assembly", "data_layout", "Code", "LOCK"]
