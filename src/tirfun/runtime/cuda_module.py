"""A CUDA build: PTX, host code, and calls that launch kernels on a GPU.

``rt = tirfun.build(mod, target="cuda")`` returns a :class:`CUDAModule` on
any machine: ``rt.get_source("ptx")`` is the PTX, ``rt.get_source("ll")``
the optimised LLVM IR, ``rt.kernels`` the kernels as TIR. Calling it
(``rt(a, b)``) needs a GPU: the arguments are checked as a CPU build checks
them, but must live on a GPU (``tirfun.nd.array(x, tirfun.cuda(0))`` or any
DLPack GPU array such as a torch CUDA tensor); the PTX is loaded on that GPU
at the first call, and the host code runs, launching the kernels. A call
returns when its kernels are done, so a kernel's failure is reported by the
call that launched it. ``rt.time_evaluator(...)`` times calls with CUDA
events.
"""

from __future__ import annotations

import statistics
import threading
import types

from ..errors import ArgumentError, UnknownNameError
from ..lower.signature import Signature
from .argcheck import ArgChecker
from .device import Device
from .host_launch import run_host
from .module import ProfileResult, ctype_of


class CudaLauncher:
    """Launches kernels of one loaded module on its GPU (see
    :mod:`.host_launch` for the launcher protocol)."""

    def __init__(self, loaded, index: int):
        self.loaded = loaded
        self.index = index
        self.scratch: list = []

    def alloc(self, dtype, count: int):
        """Scratch global memory for the host's ``T.allocate``."""
        from .cuda_driver import mem_alloc

        return mem_alloc(self.index, count * max(dtype.bits * dtype.lanes // 8, 1))

    def free(self, pointer) -> None:
        """Release scratch memory once the kernels using it are done."""
        from .cuda_driver import mem_free, synchronize

        synchronize(self.index)
        mem_free(self.index, pointer)

    def launch(self, kernel, args: list, grid: tuple, block: tuple) -> None:
        """Queue ``kernel`` on the GPU."""
        import ctypes

        values = []
        for var, value in zip(kernel.args, args):
            if var.dtype.is_handle:
                values.append(ctypes.c_void_p(int(value)))
            else:
                values.append(ctype_of(var.dtype)(value))
        for name, dims in (("grid", grid), ("block", block)):
            if any(d > (2**31 - 1 if name == "grid" and k == 0 else 65535) for k, d in enumerate(dims)):
                raise ArgumentError(f"kernel {kernel.name}: the {name} {dims} is larger than "
                                    "CUDA allows")
        self.loaded.launch(kernel.name, grid, block, values)


class CUDAFunction:
    """One function of a CUDA build: checks its arguments, runs its host
    code and launches its kernels."""

    def __init__(self, module: "CUDAModule", name: str, split, sig: Signature):
        self.module = module
        self.name = name
        self.split = split
        self.sig = sig
        self._check = ArgChecker(sig, "cuda")

    def _env(self, args) -> tuple[dict, int]:
        values = self._check(args)
        env, index = {}, None
        for p, value, arg in zip(self.sig.params, values, args):
            env[p.var] = value
            if p.buffer is not None:
                if p.buffer.data is not None:
                    env[p.buffer.data] = value
                dev_index = (arg.device.device_id if isinstance(getattr(arg, "device", None), Device)
                             else self._dlpack_index(arg))
                if index is None:
                    index = dev_index
                elif index != dev_index:
                    raise ArgumentError(f"function {self.name}: the arrays are on different GPUs "
                                        f"(cuda({index}) and cuda({dev_index}))")
        for v, value in zip(self.sig.size_vars, values[len(self.sig.params):]):
            env[v] = value
        return env, 0 if index is None else index

    @staticmethod
    def _dlpack_index(arg) -> int:
        from .dlpack import device_of

        return device_of(arg).device_id

    def __call__(self, *args) -> None:
        """Run on GPU arrays; returns when the kernels are done."""
        from .cuda_driver import synchronize

        env, index = self._env(args)
        run_host(self.split, env, CudaLauncher(self.module.loaded(index), index))
        synchronize(index)

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.sig.params)
        return f"<tirfun CUDA function {self.name}({names}), {len(self.split.kernels)} kernel(s)>"


class CUDAModule:
    """A CUDA build (see the module)."""

    def __init__(self, splits: dict, target, ir_text: str, ptx: str, lowered, build_seconds=None,
                 dynamic_shared=None):
        from .builder import _written

        self.target = target
        self.lowered = lowered  # the IRModule after lowering, kernels in place
        self.splits = types.MappingProxyType(dict(splits))
        self._ir_text = ir_text
        self._ptx = ptx
        self._loaded: dict = {}
        # kernel -> bytes of dynamic shared memory it is launched with
        self.dynamic_shared = types.MappingProxyType(dict(dynamic_shared or {}))
        self._lock = threading.Lock()
        self.build_seconds = types.MappingProxyType(dict(build_seconds or {}))
        self._functions = {name: CUDAFunction(self, name, hd,
                                              Signature.of(name, lowered[name], _written(lowered[name])))
                           for name, hd in splits.items()}

    @property
    def kernels(self) -> list:
        """Every kernel of the build (:class:`~tirfun.lower.device_split.Kernel`)."""
        return [k for hd in self.splits.values() for k in hd.kernels]

    def loaded(self, index: int):
        """The PTX loaded on ``cuda(index)`` (loaded at the first use)."""
        from .cuda_driver import LoadedModule

        with self._lock:
            mod = self._loaded.get(index)
            if mod is None:
                mod = LoadedModule(index, self._ptx, [k.name for k in self.kernels],
                                   dict(self.dynamic_shared))
                self._loaded[index] = mod
            return mod

    @property
    def entry_name(self) -> str:
        """The function ``rt(...)`` calls: ``main``, or the only one."""
        if "main" in self._functions:
            return "main"
        if len(self._functions) == 1:
            return next(iter(self._functions))
        raise UnknownNameError(f"the module has no main function and {len(self._functions)} "
                               f"functions ({', '.join(sorted(self._functions))}); call rt['name'](...)")

    def __call__(self, *args) -> None:
        self[self.entry_name](*args)

    def __getitem__(self, name: str) -> CUDAFunction:
        try:
            return self._functions[name]
        except KeyError:
            raise UnknownNameError(f"the built module has no function {name!r} "
                                   f"(it has: {', '.join(sorted(self._functions))})") from None

    def get_function(self, name: str) -> CUDAFunction:
        """TVM's spelling of ``rt[name]``."""
        return self[name]

    def __contains__(self, name) -> bool:
        return name in self._functions

    @property
    def function_names(self) -> list[str]:
        """The names of the compiled functions, sorted."""
        return sorted(self._functions)

    def get_source(self, fmt: str = "ptx") -> str:
        """The PTX (``"ptx"``, also ``"asm"``), the optimised LLVM IR
        (``"ll"``) or the kernels and host code as TVMScript (``"tir"``)."""
        if fmt in ("ptx", "asm", "s", ""):
            return self._ptx
        if fmt in ("ll", "llvm"):
            return self._ir_text
        if fmt == "tir":
            parts = []
            for hd in self.splits.values():
                parts.append(hd.host.script())
                parts.extend(k.func.script() for k in hd.kernels)
            return "\n".join(parts)
        raise ArgumentError(f"get_source: unknown format {fmt!r} for a CUDA module; "
                            "expected 'ptx', 'll' or 'tir'")

    def time_evaluator(self, func_name: str, dev: Device, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, cooldown_interval_ms: int = 0):
        """A function that takes the arguments of ``func_name`` and returns a
        :class:`~tirfun.runtime.module.ProfileResult`: ``repeat``
        measurements with CUDA events, each the mean of ``number`` calls
        (more when shorter than ``min_repeat_ms``), after one untimed call."""
        fn = self[func_name]
        if not isinstance(dev, Device) or dev.device_type != "cuda":
            raise ArgumentError(f"time_evaluator: a CUDA module is timed on a GPU, got {dev!r}")
        if number < 1 or repeat < 1:
            raise ArgumentError("time_evaluator: number and repeat must be at least 1")

        def evaluate(*args) -> ProfileResult:
            """Time the function on ``args``."""
            import time

            from .cuda_driver import Timer

            env, index = fn._env(args)
            launcher = CudaLauncher(self.loaded(index), index)
            run_host(fn.split, env, launcher)
            timer = Timer(index)
            try:
                results = []
                n = number
                for _ in range(repeat):
                    while True:
                        timer.begin()
                        for _ in range(n):
                            run_host(fn.split, env, launcher)
                        elapsed = timer.end()
                        if min_repeat_ms <= 0 or elapsed * 1e3 >= min_repeat_ms:
                            break
                        n = max(n * 2, int(n * min_repeat_ms / max(elapsed * 1e3, 1e-3)))
                    results.append(elapsed / n)
                    if cooldown_interval_ms:
                        time.sleep(cooldown_interval_ms / 1e3)
            finally:
                timer.close()
            return ProfileResult(
                mean=statistics.fmean(results), median=statistics.median(results),
                min=min(results), max=max(results),
                std=statistics.pstdev(results) if len(results) > 1 else 0.0,
                results=tuple(results))

        return evaluate

    def __repr__(self) -> str:
        return (f"<tirfun CUDA module target={self.target} functions={self.function_names} "
                f"kernels={[k.name for k in self.kernels]}>")


__all__ = ["CUDAModule", "CUDAFunction", "CudaLauncher"]
