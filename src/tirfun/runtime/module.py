"""Built modules: call compiled functions, read their code, time them.

``rt = tirfun.build(mod)`` returns a :class:`Module`. ``rt(a, b)`` calls
``main`` (or the only function); ``rt["name"](...)`` any other.
``rt.get_source("ll")`` is the optimised LLVM IR, ``rt.get_source("asm")``
the machine code. ``rt.time_evaluator("main", dev, number=10, repeat=3)``
returns a function that times calls as TVM's does.
"""

from __future__ import annotations

import ctypes
import statistics
import time
import types

import attrs

from ..errors import ArgumentError, TirfunError, UnknownNameError
from ..lower.signature import STATUS_OUT_OF_MEMORY, Signature
from .argcheck import ArgChecker
from .device import Device
from .forking import before_parallel_call
from .target import Target

_CTYPES_INT = {
    ("int", 8): ctypes.c_int8, ("int", 16): ctypes.c_int16, ("int", 32): ctypes.c_int32,
    ("int", 64): ctypes.c_int64, ("uint", 8): ctypes.c_uint8, ("uint", 16): ctypes.c_uint16,
    ("uint", 32): ctypes.c_uint32, ("uint", 64): ctypes.c_uint64,
}


def ctype_of(dtype) -> type:
    """The ctypes type a scalar of ``dtype`` is passed as."""
    if dtype.is_bool:
        return ctypes.c_int8
    if dtype.is_handle:
        return ctypes.c_void_p
    if dtype.is_integer:
        return _CTYPES_INT[(dtype.code, dtype.bits)]
    if dtype.code == "float" and dtype.bits == 32:
        return ctypes.c_float
    if dtype.code == "float" and dtype.bits == 64:
        return ctypes.c_double
    if dtype.is_float and dtype.bits == 16:
        return ctypes.c_uint16  # float16 and bfloat16 travel as their bits
    if dtype.is_mini_float:
        # float8/float4 compute in double (tirfun.lower.llvm_minifloat): the
        # value travels as the double it rounds to
        return ctypes.c_double
    from ..errors import BuildError

    raise BuildError(f"scalar parameters of dtype {dtype} cannot be passed from Python")


def _returned(value, dtype):
    """A returned scalar as the interpreter gives it (a Python number)."""
    if dtype.is_bool:
        return bool(value)
    if dtype.is_float and dtype.bits == 16:
        import numpy as np

        bits = np.array([value], dtype="uint16")
        return float(bits.view("float16" if dtype.code == "float" else _bfloat16())[0])
    return value


def _bfloat16():
    from ..numpy_dtypes import numpy_dtype

    return numpy_dtype("bfloat16")


class Function:
    """One compiled function: checks its arguments, then runs native code."""

    def __init__(self, sig: Signature, address: int, assert_messages: tuple[str, ...], owner,
                 serial_flag: int | None = None):
        self.sig = sig
        self.name = sig.name
        argtypes = []
        for p in sig.params:
            argtypes.append(ctypes.c_void_p if p.buffer is not None else ctype_of(p.var.dtype))
        for v in sig.size_vars:
            argtypes.append(ctype_of(v.dtype))
        self._ret_ctype = None
        if sig.ret is not None:
            self._ret_ctype = ctype_of(sig.ret)
            argtypes.append(ctypes.c_void_p)
        # CFUNCTYPE releases the GIL for the duration of the call
        self._cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)
        self._check = ArgChecker(sig)
        self._messages = assert_messages
        self._owner = owner  # keeps the JIT engine (and so the code) alive
        # the address of the module's flag that runs parallel loops serially
        # (None when the module has none); see tirfun.runtime.forking
        self._serial_flag = serial_flag

    def __call__(self, *args):
        """Run on the arguments; returns the function's value (``T.ret``),
        or None for a function without a return type."""
        values = self._check(args)
        if self._serial_flag is not None:
            before_parallel_call(self._serial_flag)
        if self._ret_ctype is None:
            status = self._cfunc(*values)
            if status != 0:
                self._raise(status)
            return None
        slot = self._ret_ctype()
        status = self._cfunc(*values, ctypes.addressof(slot))
        if status != 0:
            self._raise(status)
        return _returned(slot.value, self.sig.ret)

    def _raise(self, status: int):
        if status == STATUS_OUT_OF_MEMORY:
            raise TirfunError(f"function {self.name}: out of memory for a scratch buffer")
        if 0 < status <= len(self._messages):
            raise TirfunError(f"function {self.name}: assertion failed: {self._messages[status - 1]}")
        raise TirfunError(f"function {self.name}: failed with status {status}")

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.sig.params)
        return f"<tirfun compiled function {self.name}({names})>"


@attrs.frozen
class ProfileResult:
    """Timings in seconds: ``results`` holds one mean per repeat."""

    mean: float
    median: float
    min: float
    max: float
    std: float
    results: tuple

    def __str__(self) -> str:
        return (f"mean {self.mean * 1e3:.4f} ms, median {self.median * 1e3:.4f} ms, "
                f"min {self.min * 1e3:.4f} ms, max {self.max * 1e3:.4f} ms over {len(self.results)} repeats")


class Module:
    """A built module: its compiled functions, target and code."""

    def __init__(self, functions: dict, target: Target, ir_text: str, engine, lowered,
                 build_seconds=None):
        self._functions = functions
        self.target = target
        self._ir_text = ir_text
        self._engine = engine
        self._asm: str | None = None
        self.lowered = lowered  # the IRModule after tirfun.lower
        # seconds spent in each phase of the build: tirfun's verification
        # and lowering ("lower"), LLVM IR generation ("codegen"), LLVM's
        # optimiser ("optimise") and machine code generation and loading
        # ("jit"), and the processor seconds LLVM spent in the LLVM worker
        # process ("llvm_cpu")
        self.build_seconds = types.MappingProxyType(dict(build_seconds or {}))

    @property
    def entry_name(self) -> str:
        """The function ``rt(...)`` calls: ``main``, or the only one."""
        if "main" in self._functions:
            return "main"
        if len(self._functions) == 1:
            return next(iter(self._functions))
        raise UnknownNameError(f"the module has no main function and {len(self._functions)} "
                               f"functions ({', '.join(sorted(self._functions))}); call rt['name'](...)")

    def __call__(self, *args):
        """Call the entry function; returns its value (``T.ret``) or None."""
        return self[self.entry_name](*args)

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise UnknownNameError(f"the built module has no function {name!r} "
                                   f"(it has: {', '.join(sorted(self._functions))})") from None

    def get_function(self, name: str) -> Function:
        """TVM's spelling of ``rt[name]``."""
        return self[name]

    def __contains__(self, name) -> bool:
        return name in self._functions

    @property
    def function_names(self) -> list[str]:
        """The names of the compiled functions, sorted."""
        return sorted(self._functions)

    def get_source(self, fmt: str = "ll") -> str:
        """The optimised LLVM IR (``"ll"``) or the assembly (``"asm"``)."""
        if fmt in ("ll", "llvm", ""):
            return self._ir_text
        if fmt in ("asm", "s"):
            if self._asm is None:
                from .jit import assembly

                self._asm = assembly(self._ir_text, self.target)
            return self._asm
        raise ArgumentError(f"get_source: unknown format {fmt!r} for a CPU module; "
                            "expected 'll' or 'asm'")

    def time_evaluator(self, func_name: str, dev: Device, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, cooldown_interval_ms: int = 0):
        """A function that takes the arguments of ``func_name`` and returns a
        :class:`ProfileResult`: ``repeat`` measurements, each the mean of
        ``number`` calls (more when a measurement is shorter than
        ``min_repeat_ms``), after one untimed warm-up call."""
        fn = self[func_name]
        if not isinstance(dev, Device):
            raise ArgumentError(f"time_evaluator: expected a device, got {dev!r}")
        if number < 1 or repeat < 1:
            raise ArgumentError("time_evaluator: number and repeat must be at least 1")

        def evaluate(*args) -> ProfileResult:
            """Time the function on ``args``."""
            values = fn._check(args)
            if fn._serial_flag is not None:
                before_parallel_call(fn._serial_flag)
            cfunc = fn._cfunc
            status = cfunc(*values)
            if status != 0:
                fn._raise(status)
            results = []
            n = number
            for _ in range(repeat):
                while True:
                    start = time.perf_counter()
                    for _ in range(n):
                        cfunc(*values)
                    elapsed = time.perf_counter() - start
                    if elapsed * 1e3 >= min_repeat_ms or min_repeat_ms <= 0:
                        break
                    n = max(n * 2, int(n * min_repeat_ms / max(elapsed * 1e3, 1e-3)))
                results.append(elapsed / n)
                if cooldown_interval_ms:
                    time.sleep(cooldown_interval_ms / 1e3)
            return ProfileResult(
                mean=statistics.fmean(results), median=statistics.median(results),
                min=min(results), max=max(results),
                std=statistics.pstdev(results) if len(results) > 1 else 0.0,
                results=tuple(results))

        return evaluate

    def __repr__(self) -> str:
        return f"<tirfun.runtime.Module target={self.target} functions={self.function_names}>"


__all__ = ["Module", "Function", "ProfileResult", "ctype_of"]
