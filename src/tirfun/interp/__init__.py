"""The reference interpreter: what every TensorIR program means.

``run(func, *arrays, **scalars)`` evaluates a PrimFunc (or a module's
``main``, or its only function) on numpy arrays, in place, following TIR's
semantics:

* block iteration variables are bound from their values, and must lie in
  their domains; a reduction block's ``init`` runs when every reduction
  iteration variable is at the start of its domain; ``T.where`` predicates
  guard the whole block; ``alloc_buffer`` gives fresh scratch storage
  (floats start as NaN, integers as 0);
* parallel, vectorized and unrolled loops run as serial loops; a function
  with thread-bound loops (or launched threads) runs with the GPU's meaning,
  every thread of every block phase by phase between barriers, and a data
  race between threads is an InterpError (see :mod:`.gpu`);
  ``Ramp`` and ``Broadcast`` are vectors, evaluated lane by lane;
* integer arithmetic wraps around as the dtype does; ``//`` and ``%``
  (floordiv, floormod) round toward minus infinity, truncdiv and truncmod
  toward zero; casts behave as in C (float to int truncates, narrowing wraps);
  float32/float16/bfloat16 operations round to their type after each step;
* math intrinsics are computed in double precision and rounded to the
  result type; ``T.call_extern`` runs a few C library functions
  (``expf``, ``sqrtf``, ...) and rejects the rest;
* a call of another function of the module (``Module.f(x)``) runs that
  function on the arguments' values when the module is run (``run(mod,
  ...)``); its ``T.ret`` value is the call's value;
* lowered code runs too: Allocate, DeclBuffer, flattened buffers, LetStmt,
  AttrStmt (launched threads run one after another), AssertStmt, Evaluate,
  While (its condition is tested before every iteration), AllocateConst,
  and BufferRealize (fresh storage of the realized buffer).

An out-of-bounds access raises :class:`~tirfun.errors.InterpError` naming
the buffer, the index, the block, the statement and the loop variables. Bad
arguments (count, shape, dtype) raise :class:`~tirfun.errors.ArgumentError`
naming the parameter.

Scalars are passed by position (parameters in order) or by name
(``run(f, A, B, n=16)``); symbolic sizes are bound from the arrays' shapes.

A function is translated once into Python source (``compile_func(f).source``)
and cached, so repeated runs are cheap.
"""

from __future__ import annotations

from ..analysis.nesting import guard_depth
from ..errors import ArgumentError, InterpError
from ..nodes import IRModule
from . import gpu
from .compile import CompiledFunc, compile_func, compile_in_module, evaluate, select_function


@guard_depth(InterpError)
def run(func_or_mod, *args, **kwargs):
    """Run a PrimFunc (or a module's main function) on numpy arrays, in place.

    Returns None, or the value of ``T.ret`` for functions that return one.
    Given a module, calls of its other functions run them.
    """
    func = select_function(func_or_mod)
    if gpu.is_thread_bound(func):
        return gpu.run(func, *args, **kwargs)
    if isinstance(func_or_mod, IRModule):
        # calls of the module's other functions run them
        name = next(n for n in func_or_mod if func_or_mod[n] is func)
        return compile_in_module(func_or_mod, name)(*args, **kwargs)
    return compile_func(func)(*args, **kwargs)


__all__ = ["run", "compile_func", "compile_in_module", "evaluate", "select_function", "CompiledFunc", "InterpError",
           "ArgumentError"]
