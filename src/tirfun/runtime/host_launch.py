"""Run the host half of a CUDA build: loops, lets, tests and kernel launches.

The host code of a :class:`~tirfun.lower.device_split.HostDevice` is small
(the launches, the loops around them, the integer arithmetic of launch
dimensions), so it is interpreted here rather than compiled. What a launch
does is the business of a *launcher*: :class:`CudaLauncher` (in
:mod:`.cuda_module`) launches on a GPU; :class:`InterpLauncher` runs each
kernel with the reference interpreter's GPU semantics, which is how the
split is tested on a machine without a GPU.
"""

from __future__ import annotations

import operator

from ..errors import ArgumentError, TirfunError
from ..nodes import (
    EQ, GE, GT, LE, LT, NE, Add, Allocate, And, AssertStmt, AttrStmt, BufferStore, Call, Cast,
    DeclBuffer, Div, Evaluate, FloatImm, FloorDiv, FloorMod, For, IfThenElse, IntImm, LetStmt, Max,
    Min, Mod, Mul, Not, Or, Select, SeqStmt, StringImm, Sub, Var,
)
from ..lower.device_split import HostDevice, launch_args

_BINARY = {Add: operator.add, Sub: operator.sub, Mul: operator.mul, Min: min, Max: max,
           EQ: operator.eq, NE: operator.ne, LT: operator.lt, LE: operator.le, GT: operator.gt,
           GE: operator.ge}


def host_value(e, env: dict):
    """The value of a host expression (integers, floats, booleans)."""
    if isinstance(e, (IntImm, FloatImm)):
        return e.value
    if isinstance(e, StringImm):
        return e.value
    if isinstance(e, Var):
        try:
            return env[e]
        except KeyError:
            raise TirfunError(f"host code reads {e.name}, which has no value") from None
    op = _BINARY.get(type(e))
    if op is not None:
        return _wrap(op(host_value(e.a, env), host_value(e.b, env)), e.dtype)
    if isinstance(e, (FloorDiv, FloorMod, Div, Mod)):
        a, b = host_value(e.a, env), host_value(e.b, env)
        if e.dtype.is_float:
            return a / b if isinstance(e, Div) else a % b
        if b == 0:
            return 0  # as compiled code has it: no trap
        if isinstance(e, FloorDiv):
            return a // b
        if isinstance(e, FloorMod):
            return a % b
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if isinstance(e, Div) else a - q * b
    if isinstance(e, And):
        return bool(host_value(e.a, env)) and bool(host_value(e.b, env))
    if isinstance(e, Or):
        return bool(host_value(e.a, env)) or bool(host_value(e.b, env))
    if isinstance(e, Not):
        return not host_value(e.a, env)
    if isinstance(e, Select):
        return host_value(e.true_value if host_value(e.condition, env) else e.false_value, env)
    if isinstance(e, Cast):
        v = host_value(e.value, env)
        if e.dtype.is_bool:
            return bool(v)
        if e.dtype.is_float:
            return float(v)
        return _wrap(int(v), e.dtype)
    if isinstance(e, Call) and e.op in ("tir.likely", "tir.tvm_thread_invariant") and e.args:
        return host_value(e.args[0], env)
    raise TirfunError(f"the CUDA host code cannot compute {type(e).__name__} "
                      f"({e.script() if hasattr(e, 'script') else e}); compute it inside a kernel")


def _wrap(value, dtype):
    if isinstance(value, bool) or not dtype.is_integer or dtype.is_bool:
        return value
    bits = dtype.bits
    value &= (1 << bits) - 1
    if dtype.is_int and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


class InterpLauncher:
    """Launches kernels in the reference interpreter: buffers are flat numpy
    arrays, and each launch runs the kernel's PrimFunc with the GPU's
    meaning (every thread of every block, races reported)."""

    def __init__(self):
        self.launches: list[tuple[str, tuple, tuple]] = []

    def alloc(self, dtype, count: int):
        """Scratch global memory for the host's ``T.allocate``."""
        from ..numpy_dtypes import numpy_dtype
        import numpy as np

        return np.zeros(max(count, 1), dtype=numpy_dtype(dtype))

    def free(self, pointer) -> None:
        """Release what :meth:`alloc` gave."""

    def launch(self, kernel, args: list, grid: tuple, block: tuple) -> None:
        """Run ``kernel`` on ``args`` over ``grid`` x ``block``."""
        from ..interp import run

        self.launches.append((kernel.name, grid, block))
        run(kernel.func, *args)


def run_host(hd: HostDevice, env: dict, launcher) -> None:
    """Run the host code of ``hd`` with the parameters bound in ``env``
    (data variables to what the launcher calls pointers, size and scalar
    variables to numbers)."""
    kernels = {k.name: k for k in hd.kernels}
    _Host(kernels, launcher).stmt(hd.host.body, dict(env))


class _Host:
    def __init__(self, kernels: dict, launcher):
        self.kernels = kernels
        self.launcher = launcher

    def stmt(self, s, env: dict) -> None:
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.stmt(x, env)
        elif isinstance(s, For):
            lo = host_value(s.min, env)
            for i in range(lo, lo + host_value(s.extent, env)):
                env[s.loop_var] = i
                self.stmt(s.body, env)
        elif isinstance(s, LetStmt):
            env[s.var] = host_value(s.value, env)
            self.stmt(s.body, env)
        elif isinstance(s, IfThenElse):
            if host_value(s.condition, env):
                self.stmt(s.then_case, env)
            elif s.else_case is not None:
                self.stmt(s.else_case, env)
        elif isinstance(s, AssertStmt):
            if not host_value(s.condition, env):
                message = s.message.value if isinstance(s.message, StringImm) else str(s.message)
                raise ArgumentError(f"assertion failed: {message}")
            self.stmt(s.body, env)
        elif isinstance(s, Allocate):
            count = 1
            for e in s.extents:
                count *= host_value(e, env)
            pointer = self.launcher.alloc(s.dtype, count)
            env[s.buffer_var] = pointer
            try:
                self.stmt(s.body, env)
            finally:
                self.launcher.free(pointer)
        elif isinstance(s, (DeclBuffer, AttrStmt)):
            self.stmt(s.body, env)
        elif isinstance(s, Evaluate):
            call = s.value
            if isinstance(call, Call) and call.op == "tir.tvm_call_packed":
                name, args, grid, block = launch_args(call)
                kernel = self.kernels[name]
                values = [host_value(a, env) for a in args]
                dims = [tuple(host_value(d, env) for d in grid),
                        tuple(host_value(d, env) for d in block)]
                if any(d <= 0 for d in dims[0] + dims[1]):
                    return  # a loop of no iterations: nothing to launch
                self.launcher.launch(kernel, values, *dims)
        elif isinstance(s, BufferStore):
            raise TirfunError(f"host code stores to {s.buffer.name}")
        else:
            raise TirfunError(f"the CUDA host code cannot run a {type(s).__name__}")


__all__ = ["run_host", "host_value", "InterpLauncher"]
