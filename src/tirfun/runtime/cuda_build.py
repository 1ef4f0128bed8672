"""``tirfun.build(mod, target="cuda")``: lower, split, generate PTX.

No GPU is needed to build: the PTX comes from LLVM's NVPTX backend through
llvmlite, for the compute capability the target names, else the device's
(when cuda-python finds one), else :data:`~tirfun.target.DEFAULT_CUDA_ARCH`.
The returned :class:`~tirfun.runtime.cuda_module.CUDAModule` shows its PTX
(``rt.get_source("ptx")``) on any machine, and loads it on a GPU at the
first call.
"""

from __future__ import annotations

import time

from ..errors import BuildError, TirfunError
from ..lower import as_module
from ..lower.cuda import lower_cuda
from ..lower.device_split import split_host_device
from ..nodes import IRModule
from ..target import DEFAULT_CUDA_ARCH, Target, create_target_machine


def resolve_arch(target: Target) -> Target:
    """``target`` with its compute capability: as given, else the first
    device's, else the default."""
    if target.arch:
        return target
    from .cuda_driver import device_arch

    return target.with_arch(device_arch() or DEFAULT_CUDA_ARCH)


def build_cuda(mod: IRModule, target: Target):
    """Compile ``mod`` for a CUDA ``target`` (see the module)."""
    from ..analysis.verify import verify
    from ..lower.nvptx_codegen import NVPTXCodegen
    from .cuda_module import CUDAModule
    from .jit import LOCK

    mod = as_module(mod)
    if len(mod) == 0:
        raise BuildError("the module has no function to build")
    target = resolve_arch(target)
    started = time.perf_counter()
    verify(mod, domains=True)  # as the CPU build checks it
    lowered = lower_cuda(mod, target)
    splits = {name: split_host_device(name, func) for name, func in lowered.items()}
    lowered_at = time.perf_counter()
    with LOCK:
        tm = create_target_machine(target)
        try:
            layout = str(tm.target_data)
        finally:
            tm.close()
    codegen = NVPTXCodegen("tirfun_cuda", layout, contract=target.contract)
    for name, hd in splits.items():
        noalias = bool(lowered[name].attrs.get("tir.noalias", False))
        for kernel in hd.kernels:
            try:
                codegen.add_kernel(kernel, noalias=noalias)
            except TirfunError:
                raise
            except (TypeError, ValueError, AttributeError, KeyError, IndexError, AssertionError) as err:
                raise BuildError(f"internal error while generating NVPTX code for kernel "
                                 f"{kernel.name}: {type(err).__name__}: {err}") from err
    ir_text, libdevice = codegen.ir_text()
    generated_at = time.perf_counter()
    final_ir, ptx = ptx_of(ir_text, target, codegen.kernel_names, libdevice)
    seconds = {"lower": lowered_at - started, "codegen": generated_at - lowered_at,
               "ptx": time.perf_counter() - generated_at}
    return CUDAModule(splits, target, final_ir, ptx, lowered, build_seconds=seconds,
                      dynamic_shared=codegen.dynamic_shared)


def ptx_of(ir_text: str, target: Target, kernels: list[str], libdevice: list[str]) -> tuple[str, str]:
    """``(optimised LLVM IR, PTX)`` of a module of kernels, linked with
    libdevice when it calls any of its functions."""
    from ..lower.nvptx_codegen import find_libdevice
    from .isolate import in_worker

    path = None
    if libdevice:
        # found here, not in the worker: the worker was forked earlier and
        # does not see a later change to this process's environment
        path = find_libdevice()
        if path is None:
            raise BuildError(
                f"the kernel calls {', '.join(sorted(set(libdevice)))}, which the CUDA "
                "build takes from CUDA's libdevice, and no libdevice.10.bc was found: "
                "set CUDA_HOME or TIRFUN_LIBDEVICE to its location")
    # LLVM's NVPTX backend ends the process on some IR it cannot select (an
    # assertion, or a fatal "cannot select"): compile in the LLVM worker, so
    # that such a failure is a BuildError and this process lives on
    return in_worker("generating PTX with LLVM's NVPTX backend", _compile_ptx, ir_text,
                     target, kernels, path)


def _compile_ptx(ir_text: str, target: Target, kernels: list[str],
                 libdevice: str | None) -> tuple[str, str]:
    """:func:`ptx_of`'s work, in the calling process: ``libdevice`` is the
    path of the libdevice to link in, None for none."""
    from .jit import LOCK

    with LOCK:
        return _compile_ptx_locked(ir_text, target, kernels, libdevice)


def _compile_ptx_locked(ir_text: str, target: Target, kernels: list[str],
                        libdevice: str | None) -> tuple[str, str]:
    from .jit import llvm

    binding = llvm()
    try:
        mod = binding.parse_assembly(ir_text)
        mod.verify()
    except RuntimeError as err:
        raise BuildError(f"internal error: LLVM rejected the generated NVPTX IR: {err}") from None
    tm = create_target_machine(target)
    try:
        if libdevice is not None:
            with open(libdevice, "rb") as fh:
                lib = binding.parse_bitcode(fh.read())
            lib.triple = target.triple
            lib.data_layout = str(tm.target_data)
            mod.link_in(lib)
            for fn in mod.functions:
                # only the kernels are entry points; the rest of libdevice goes
                if not fn.is_declaration and fn.name not in kernels:
                    fn.linkage = "internal"
        mod.triple = target.triple
        mod.data_layout = str(tm.target_data)
        pto = binding.create_pipeline_tuning_options(speed_level=target.opt_level)
        pto.loop_vectorization = False
        pto.slp_vectorization = False
        pb = binding.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        try:
            mpm.run(mod, pb)
        finally:
            for obj in (mpm, pb, pto):
                obj.close()
        final_ir = str(mod)
        try:
            ptx = tm.emit_assembly(mod)
        except RuntimeError as err:
            raise BuildError(f"LLVM's NVPTX backend cannot compile the kernels: {err}") from None
        return final_ir, ptx
    finally:
        mod.close()
        tm.close()


__all__ = ["build_cuda", "ptx_of", "resolve_arch"]
