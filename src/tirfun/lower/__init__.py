"""Lowering: from TensorIR with blocks to loops ready for code generation.

:func:`lower` runs :data:`PASSES` in order. Each pass is a pure function
``IRModule -> IRModule`` that keeps the meaning of every program on its own
(the property tests run the interpreter before and after each), so any
prefix of the list, or any single pass, may be used alone:

1. ``lower_allocations``  ``alloc_buffer`` to ``T.allocate`` + ``T.decl_buffer``
2. ``lower_blocks``       blocks to loops: iteration variables substituted,
                          ``init`` under the reduction-start test, predicates
3. ``compact_allocations`` each allocation moved into the innermost loop
                          holding its uses, shrunk to the region used there
4. ``flatten_buffers``    every access one-dimensional
5. ``simplify``           folding, affine index arithmetic, proven tests
6. ``partition_loops``    tests on a loop variable hoisted by cutting the
                          loop, so the hot loop carries no ``if k == 0``
7. ``unroll_loops``       ``T.unroll`` loops copied out
8. ``simplify``           fold what unrolling exposed
9. ``interleave_parallel`` parallel iterations that each run one chain of
                          dependent updates (a row sum) interleaved, so
                          several chains overlap on one core
10. ``vectorize_loops``   ``T.vectorized`` loops to Ramp/Broadcast vectors
11. ``prepare_parallel``  nested parallel loops made serial

For the GPU, :mod:`.cuda` checks and lowers a thread-bound module (first
reductions bound across threads to all-reduces, :mod:`.allreduce`; then the
same passes up to vectorization, then ``shared``/``local`` allocations
moved into the kernels, barriers placed by :mod:`.thread_sync`, and
virtual-thread loops split at them by
:mod:`tirfun.analysis.virtual_threads`), and :mod:`.device_split` cuts
each function into host code and kernels.

Code generation (``llvm_codegen``, ``llvm_cpu``, ``nvptx_codegen``) imports
llvmlite and is loaded only by :mod:`tirfun.runtime`.
"""

from __future__ import annotations

import sys
import types

from ..analysis.nesting import guard_depth
from ..errors import BuildError
from ..nodes import IRModule, PrimFunc
from .allocations import lower_allocations
from .blocks import lower_blocks
from .compact import compact_allocations
from .flatten import flatten_buffers
from .interleave import interleave_parallel
from .parallel import prepare_parallel
from .param_offsets import bind_param_offsets
from .partition import partition_loops
from .simplify import simplify
from .unroll import unroll_loops
from .unsupported import drop_prefetch, refuse_unbuildable
from .vectorize import vectorize_loops

#: the lowering pipeline, in order: (name, pass)
PASSES = (
    ("lower_allocations", lower_allocations),
    ("lower_blocks", lower_blocks),
    ("compact_allocations", compact_allocations),
    ("flatten_buffers", flatten_buffers),
    ("simplify", simplify),
    ("partition_loops", partition_loops),
    ("unroll_loops", unroll_loops),
    ("simplify", simplify),
    ("interleave_parallel", interleave_parallel),
    ("vectorize_loops", vectorize_loops),
    ("prepare_parallel", prepare_parallel),
)


def as_module(mod) -> IRModule:
    """An IRModule from an IRModule or a PrimFunc (named ``main``)."""
    if isinstance(mod, IRModule):
        return mod
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    raise BuildError(f"expected an IRModule or a PrimFunc, got {type(mod).__name__}")


@guard_depth(BuildError)
def lower(mod, target=None) -> IRModule:
    """``mod`` (an IRModule or a PrimFunc) after every pass of :data:`PASSES`.

    The result prints as TVMScript (``tirfun.lower(mod).script()``).
    The CPU passes do not depend on ``target``; for a CUDA target
    (``"cuda"``, ``Target("cuda -arch=sm_90")``) the module is checked and
    lowered by :func:`tirfun.lower.cuda.lower_cuda` instead: kernels in
    place, ``shared``/``local`` buffers inside them, barriers added.
    """
    if _is_cuda(target):
        from ..target import Target
        from .cuda import lower_cuda

        return lower_cuda(as_module(mod), Target.of(target))
    out = bind_param_offsets(drop_prefetch(refuse_unbuildable(as_module(mod))))
    for _name, run in PASSES:
        out = run(out)
    return out


def _is_cuda(target) -> bool:
    """Whether ``target`` (a string, a Target or None) names the GPU; read
    without parsing, so that lowering for the CPU never asks LLVM about
    the host."""
    if isinstance(target, str):
        words = target.split()
        return bool(words) and (words[0] == "cuda" or words[0].startswith("nvidia/"))
    return getattr(target, "kind", None) == "cuda"


class _CallableModule(types.ModuleType):
    """``tirfun.lower`` is both this package and the function :func:`lower`:
    importing a submodule makes Python bind the package over the function's
    name on ``tirfun``, so the package itself is made callable."""

    def __call__(self, mod, target=None) -> IRModule:
        return lower(mod, target)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "lower", "PASSES", "as_module", "lower_allocations", "lower_blocks", "compact_allocations",
    "flatten_buffers",
    "simplify", "partition_loops", "unroll_loops", "interleave_parallel", "vectorize_loops",
    "prepare_parallel",
]
