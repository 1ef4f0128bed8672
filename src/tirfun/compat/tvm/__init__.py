"""TVM v0.20's top-level names, served by tirfun.

Import it as ``tvm`` with ``tirfun.compat.install()``, or directly
(``import tirfun.compat.tvm as tvm``). The names a TensorIR user meets::

    tvm.IRModule, tvm.ir.structural_equal, tvm.script (ir as I, tir as T),
    tvm.te, tvm.tir.build, tvm.build, tvm.compile, tvm.nd.array, tvm.cpu(),
    tvm.cuda(), tvm.runtime.Module, tvm.target.Target, tvm.testing.assert_allclose,
    tvm.tir.schedule (Schedule, BlockRV, LoopRV, Trace, and its testing module:
    verify_trace_roundtrip), tvm.testing.CompareBeforeAfter and parameter,
    tvm.error.DiagnosticError (what the parser raises: tirfun's ParseError),
    tvm.TVMError (tirfun's base error class: every error tirfun raises on
    purpose is one, as every error TVM raises is a TVMError)

Each is tirfun's own (``tvm.compile(mod, target="llvm")`` is
``tirfun.build``), so what tirfun documents holds for it.
"""

from __future__ import annotations

from ... import te
from ...errors import TirfunError as TVMError
from ...nodes import DataType, IRModule, PrimFunc
from ...runtime import build, cpu, cuda
from ...runtime import ndarray as nd
from ...schedule import Schedule
from . import arith, error, ir, runtime, script, target, testing, tir

__version__ = "0.20.0"


def compile(mod, target="llvm", **_options):  # noqa: A001 - TVM's name
    """TVM's ``tvm.compile``: build ``mod`` (an IRModule or PrimFunc) for
    ``target``; the same as :func:`tirfun.build`."""
    return build(mod, target)


def device(kind: str = "cpu", index: int = 0):
    """TVM's ``tvm.device("cpu", 0)``."""
    if kind in ("cpu", "llvm"):
        return cpu(index)
    if kind in ("cuda", "gpu"):
        return cuda(index)
    from ...errors import ArgumentError

    raise ArgumentError(f"tvm.device: tirfun has no device kind {kind!r} (it has cpu and cuda)")


__all__ = ["TVMError", "IRModule", "PrimFunc", "DataType", "Schedule", "build", "compile", "cpu", "cuda",
           "device", "nd", "te", "tir", "ir", "runtime", "script", "target", "testing", "error", "arith"]
