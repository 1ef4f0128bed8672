"""``tirfun.build``: lower, generate LLVM IR, optimise, JIT, wrap.

Built modules are cached by the structural hash of the module, the target
and the thread count; a hit is confirmed with exact equality of the module
(names included, since error messages name parameters). The cache holds a
bounded number of entries, keyed by immutable values only.
"""

from __future__ import annotations

import collections
import os
import threading
import time

from ..analysis.nesting import guard_depth
from ..analysis.traversal import walk
from ..errors import BuildError, TirfunError
from ..lower import as_module, lower
from ..lower.signature import Signature
from ..nodes import BufferStore, Call, GlobalVar, IRModule
from .module import Function, Module
from .target import Target

#: how many built modules the cache keeps (least recently used go first)
CACHE_SIZE = 64

_cache: "collections.OrderedDict[tuple, tuple[IRModule, Module]]" = collections.OrderedDict()
_cache_lock = threading.Lock()


def _after_fork_in_child() -> None:
    # a child forked while another thread held the lock would inherit it
    # held by a thread that does not exist there, and every build would wait
    # forever; the child's only thread is between look-ups, so the cache
    # itself is whole
    global _cache_lock
    _cache_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _hash(mod: IRModule) -> int:
    from ..analysis.equality import structural_hash

    return structural_hash(mod)


@guard_depth(BuildError)
def build(mod, target="llvm", *, name: str | None = None) -> Module:
    """Compile ``mod`` (an IRModule or a PrimFunc) for ``target``.

    ``target`` is ``"llvm"`` (this machine, by default with every feature of
    its CPU), a target string such as ``"llvm -mcpu=skylake"`` or
    ``"cuda -arch=sm_90"``, or a :class:`Target`. Returns a
    :class:`~tirfun.runtime.module.Module`, for CUDA a
    :class:`~tirfun.runtime.cuda_module.CUDAModule` (its PTX readable
    without a GPU).
    """
    from . import jit

    mod = as_module(mod)
    if name is not None:
        if len(mod) != 1:
            raise BuildError("build(name=...) renames the only function of a one-function module")
        mod = IRModule({name: next(iter(mod.values()))})
    target = Target.of(target)
    if target.kind == "cuda":
        return _build_cuda(mod, target)
    if not target.is_host:
        raise BuildError(f"cannot run code for {target.triple} on this machine "
                         f"({jit.llvm().get_process_triple()})")
    threads = target.num_cores or jit.num_threads()
    use_gomp = threads > 1 and jit.gomp_available()
    key = (_hash(mod), target, threads, use_gomp)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == mod:
            _cache.move_to_end(key)
            return hit[1]
    built = _build(mod, target, threads, use_gomp)
    evicted = []
    with _cache_lock:
        _cache[key] = (mod, built)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            evicted.append(_cache.popitem(last=False))
    # the last reference to an evicted module may go here, and freeing its
    # code waits for the LLVM lock: never while holding the cache's lock
    del evicted
    return built


def _build_cuda(mod: IRModule, target: Target):
    """A CUDA build, cached as CPU builds are (the arch resolved first, so a
    device change is a different key)."""
    from .cuda_build import build_cuda, resolve_arch

    target = resolve_arch(target)
    key = (_hash(mod), target)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == mod:
            _cache.move_to_end(key)
            return hit[1]
    built = build_cuda(mod, target)
    evicted = []
    with _cache_lock:
        _cache[key] = (mod, built)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            evicted.append(_cache.popitem(last=False))
    del evicted
    return built


def _subroutines(mod: IRModule) -> set[str]:
    """The private functions (no ``global_symbol``) that another function
    of the module calls: internal to the built code, as in TVM, and no entry
    point. Every other function is one, as before."""
    called = {n.op.name_hint for f in mod.values() for n in walk(f.body)
              if isinstance(n, Call) and isinstance(n.op, GlobalVar)}
    return {name for name in called if name in mod and "global_symbol" not in mod[name].attrs}


def _verify(mod: IRModule) -> None:
    from ..analysis.verify import verify

    # bindings outside their domains too: TVM compiles them into accesses
    # past the ends of buffers
    verify(mod, domains=True)


def _build(mod: IRModule, target: Target, threads: int, use_gomp: bool) -> Module:
    from ..lower.llvm_cpu import SERIAL_FLAG, CPUCodegen
    from . import jit

    if len(mod) == 0:
        raise BuildError("the module has no function to build")
    started = time.perf_counter()
    _verify(mod)
    lowered = lower(mod, target)
    lowered_at = time.perf_counter()
    codegen = CPUCodegen("tirfun", target.triple, jit.data_layout(target),
                         num_threads=threads, use_gomp=use_gomp, contract=target.contract,
                         fast_math=target.math == "fast")
    codegen.cpu_features = target.features
    subroutines = _subroutines(lowered)
    codegen.signatures = {fname: Signature.of(fname, func, _written(func))
                          for fname, func in lowered.items()}
    sigs = {}
    for fname, func in lowered.items():
        sig = codegen.signatures[fname]
        try:
            symbol = codegen.add_function(sig, func)
            if fname in subroutines:
                codegen.module.globals[symbol].linkage = "internal"
            else:
                sigs[fname] = (sig, symbol)
        except TirfunError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, AssertionError) as err:
            # llvmlite checks operand types as IR is built: a mistake here is
            # tirfun's, reported as a build error naming the function
            raise BuildError(f"internal error while generating LLVM code for function {fname}: "
                             f"{type(err).__name__}: {err}") from err
    ir_text = str(codegen.module)
    generated_at = time.perf_counter()
    messages = tuple(codegen.assert_messages)
    functions = {}
    compiled = jit.compile_module(ir_text, target)
    final_ir = compiled.ir_text
    loading_at = time.perf_counter()
    with jit.LOCK:  # LLVM is used by one thread at a time
        engine = jit.load(compiled, target)
        serial_flag = (engine.global_address(SERIAL_FLAG)
                       if codegen.module.globals.get(SERIAL_FLAG) is not None else None)
        for fname, (sig, symbol) in sigs.items():
            address = engine.address(symbol)
            if not address:
                raise BuildError(f"internal error: the JIT lost function {fname}")
            functions[fname] = Function(sig, address, messages, engine, serial_flag=serial_flag)
    # the worker's own figures for LLVM's two steps (the rest of the round
    # trip, sending the IR and the object, is the JIT's: it is what loading costs)
    seconds = {"lower": lowered_at - started, "codegen": generated_at - lowered_at,
               "optimise": compiled.optimise_seconds,
               "jit": loading_at - generated_at - compiled.optimise_seconds
               + time.perf_counter() - loading_at,
               "llvm_cpu": compiled.cpu_seconds}
    return Module(functions, target, final_ir, engine, lowered, build_seconds=seconds)


def _written(func) -> frozenset:
    """The parameters (handle variables) and buffers ``func`` stores into."""
    by_data = {}
    for var, buf in func.buffer_map.items():
        by_data[var] = var
        if buf.data is not None:
            by_data[buf.data] = var
    out = set()
    for n in walk(func.body):
        if isinstance(n, BufferStore):
            buf = n.buffer
            out.add(buf)
            if buf.data is not None and buf.data in by_data:
                out.add(by_data[buf.data])
    for var, buf in func.buffer_map.items():
        if buf in out:
            out.add(var)
    return frozenset(out)


def clear_cache() -> None:
    """Forget every built module (the next build compiles again)."""
    with _cache_lock:
        forgotten = list(_cache.values())
        _cache.clear()
    del forgotten  # freed outside the lock, as evicted modules are


__all__ = ["build", "clear_cache", "CACHE_SIZE"]
